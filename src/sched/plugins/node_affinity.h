// NodeAffinity filter and score (kube-scheduler pkg/scheduler/framework/plugins/nodeaffinity/
// node_affinity.go, matching from k8s.io/component-helpers/scheduling/corev1/nodeaffinity/
// nodeaffinity.go and k8s.io/apimachinery/pkg/labels/selector.go).
//
// Filter (nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)): the node must have every
// spec.nodeSelector label with the same value, AND match the required node affinity: at least one
// term (terms are ORed) whose requirements all hold (ANDed). Per term:
//  - a term with neither matchExpressions nor matchFields matches no node (it is dropped, so
//    affinity made only of empty terms matches nothing);
//  - an invalid term matches no node, its siblings are still tried (kube's LazyErrorNodeSelector):
//    a matchExpressions requirement labels.NewRequirement refuses (node_selector_requirement_error in
//    model/scheduling_constraints.h: operator, value count, Gt/Lt integer, label key and value
//    syntax, so Gt ["-1"] and NotIn ["-x"] match nothing); a matchFields operator other than
//    In/NotIn or with other than one value;
//  - matchExpressions (labels.Requirement.Matches): In = label present and value listed; NotIn =
//    label absent or value not listed; Exists / DoesNotExist; Gt / Lt = label present, its value
//    parses as an int64 and is > / < the requirement's (a non-integer label value does not match);
//  - matchFields: the only node field is metadata.name = node name (any other key reads as ""):
//    In = equal, NotIn = not equal. As upstream, matchFields are not checked for a node with an
//    empty name.
// Score: the sum of the weights of the preferred terms that match the node (0..100 x terms); terms
// with weight 0, empty terms and invalid terms count 0.
//
// Differences from kube-scheduler, by design of this engine:
//  - (Not a difference: an invalid preferred term fails kube's PreScore, and so the scheduling attempt
//    when two or more nodes fit: preferred_node_affinity_error, used by the Scheduler.)
//  - No NormalizeScore: kube rescales to 100 * sum / max_sum over the feasible nodes; the raw sum
//    orders nodes identically.
//  - No PreFilter: kube's PreFilter narrows the nodes to those named by matchFields metadata.name In
//    (and fails the pod with "pod affinity terms conflict" when every term names disjoint nodes);
//    here every node is filtered, with the same placement, but the unschedulable message counts
//    those nodes under "didn't match Pod's node affinity/selector".
//  - Plugin args (addedAffinity, scheduler-enforced affinity) are not supported.
//  - An empty required_node_affinity list means "no required affinity" (kube distinguishes a nil
//    selector from one with zero terms, which matches nothing; PodConstraints cannot express that).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "model/node.h"
#include "sched/framework.h"

namespace gpufleet::sched {

/// One node selector term against the node (nodeSelectorTerm.match); empty and invalid terms: false.
bool node_selector_term_matches(const NodeSelectorTerm& term, const Node& node);

/// Terms ORed (LazyErrorNodeSelector.Match); false for no terms.
bool node_selector_terms_match(std::span<const NodeSelectorTerm> terms, const Node& node);

/// spec.nodeSelector AND required node affinity (RequiredNodeAffinity.Match).
bool pod_matches_node_required_affinity(const Pod& pod, const Node& node);

/// Sum of the weights of the preferred terms matching the node (PreferredSchedulingTerms.Score).
int64_t preferred_node_affinity_score(const Pod& pod, const Node& node);

/// kube's PreScore error for a preferred term it cannot parse (NewPreferredSchedulingTerms: a
/// requirement of a term with non-zero weight that node_selector_requirement_error refuses):
/// `running PreScore plugin "NodeAffinity": <why>`; nullopt when every term parses. kube then fails
/// the scheduling attempt, unless a single node passed the filters (it skips scoring then).
std::optional<std::string> preferred_node_affinity_error(const Pod& pod);

class NodeAffinity final : public FilterPlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return "NodeAffinity"; }
  /// kFits, or kNodeAffinityMismatch.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const override;
  /// The score depends on the pod's preferred affinity, which Scheduler's per-request-shape cache
  /// does not key on, so it must not be cached (see scheduler.h).
  bool cacheable() const override { return false; }
  /// preferred_node_affinity_score, clamped to int32.
  int32_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
