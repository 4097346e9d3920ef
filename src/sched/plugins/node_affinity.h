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
// PreScore: Skip for a pod without preferred terms (kube: nothing to score); an Error when a term
// with non-zero weight cannot be parsed (preferred_node_affinity_error) and two or more nodes are
// feasible (kube skips PreScore for a single feasible node; gpufleet's Scheduler runs it, see
// scheduler.h), which fails the scheduling attempt.
// Score: the sum of the weights of the preferred terms that match the node (0..100 x terms); terms
// with weight 0, empty terms and invalid terms count 0. NormalizeScore (weighted-sum profiles only):
// kube's DefaultNormalizeScore(100, false), 100 * sum / max_sum over the feasible nodes (all 0 when
// max_sum is 0). A lexicographic profile compares the raw sums, which never merge.
//
// Differences from kube-scheduler, by design of this engine:
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
#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// One node selector term against the node (nodeSelectorTerm.match); empty and invalid terms: false.
bool node_selector_term_matches(const NodeSelectorTerm& term, const Node& node);

/// Terms ORed (LazyErrorNodeSelector.Match); false for no terms.
bool node_selector_terms_match(std::span<const NodeSelectorTerm> terms, const Node& node);

/// spec.nodeSelector AND required node affinity (RequiredNodeAffinity.Match).
bool pod_matches_node_required_affinity(const Pod& pod, const Node& node);

/// Sum of the weights of the preferred terms matching the node (PreferredSchedulingTerms.Score).
int64_t preferred_node_affinity_score(const Pod& pod, const Node& node);

/// Why kube's PreScore refuses a preferred term it cannot parse (NewPreferredSchedulingTerms: a
/// requirement of a term with non-zero weight that node_selector_requirement_error refuses); nullopt
/// when every term parses. The Scheduler reports `running PreScore plugin "NodeAffinity": <why>`.
std::optional<std::string> preferred_node_affinity_error(const Pod& pod);

class NodeAffinity final : public FilterPlugin, public PreScorePlugin, public ScorePlugin, public NamedPlugin<"NodeAffinity"> {
 public:
  /// node_affinity.go ErrReasonPod, UnschedulableAndUnresolvable.
  static constexpr FilterReason kReasons[] = {{"node(s) didn't match Pod's node affinity/selector", false}};
  static constexpr FilterCode kNodeAffinityMismatch{kReasons[0]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// kFits, or kNodeAffinityMismatch.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// Skip, Error or Success (see above).
  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  /// Whether pre_score() skips: the pod has no preferred term.
  bool skips_pre_score(const Pod& pod, const ClusterState& state) const override;
  /// Whether pre_score() succeeds whatever the feasible nodes: preferred terms without an error.
  bool static_pre_score(const Pod& pod, const ClusterState& state) const override;
  /// The score reads only the pod's preferred terms and node n's labels and name.
  ScoreCaching caching() const override { return ScoreCaching::kNodeStatic; }
  /// preferred_node_affinity_score.
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  bool has_normalize_score() const override { return true; }
  /// kube's DefaultNormalizeScore(100, false) (see above).
  void normalize_score(const Pod& pod, std::span<NodeScore> scores, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
