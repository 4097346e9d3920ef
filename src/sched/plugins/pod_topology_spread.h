// PodTopologySpread: topologySpreadConstraints, Filter (DoNotSchedule) and Score (ScheduleAnyway), as
// the current kube-scheduler (kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/
// common.go, filtering.go, scoring.go, plugin.go; the default selector of
// pkg/scheduler/framework/plugins/helper/spread.go DefaultSelector). Every feature gate of the
// plugin is GA: minDomains, nodeAffinityPolicy / nodeTaintsPolicy and matchLabelKeys are honoured.
//
// Constraints. A pod's own spec.topologySpreadConstraints (PodConstraints); with none, the default
// constraints (PodTopologySpreadArgs, plugin_args.h: kube's system defaults unless a list is given),
// only when the pod has a default selector (PodConstraints::default_spread_selector), which then
// becomes their selector. Per constraint (filterTopologySpreadConstraints):
//  - selector: labelSelector (absent: matches no pod; `{}`: every pod, but see counting below), ANDed
//    with {key: the pod's value} for each matchLabelKeys key the pod carries;
//  - minDomains: 1 when unset; nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore when unset.
// A node is eligible for a constraint (matchNodeInclusionPolicies) unless nodeAffinityPolicy is Honor
// and the pod's nodeSelector / required node affinity rejects it, or nodeTaintsPolicy is Honor and it
// has a NoSchedule or NoExecute taint the pod does not tolerate. Pods counted on a node: those in the
// incoming pod's namespace (empty = "default") whose labels the selector matches; none at all for an
// empty selector (countPodsMatchSelector).
//
// PreFilter (DoNotSchedule constraints; Skip when there are none, with no per-node work: pods without
// constraints and without a default selector, e.g. the whole openb trace and `pack`, return at once).
// Over every node that has ALL the constraints' topology keys, for each constraint the node is
// eligible for: count[i][node's value] += pods counted on the node (a domain with 0 pods is still a
// domain). critical path [i]: kube's two smallest counts (criticalPaths, built in topology-value order).
// Filter(n), per constraint in order (filter_cacheable() false: it depends on every node's pods):
//  - n lacks the topology key: kMissingRequiredLabel, "node(s) didn't match pod topology spread
//    constraints (missing required label)", UnschedulableAndUnresolvable;
//  - count[i][n's value] + (1 if the selector matches the pod itself) - min > maxSkew:
//    kConstraintsNotMatch, "node(s) didn't match pod topology spread constraints", Unschedulable
//    (preemption may help). min is the critical path's count, or 0 when fewer domains than minDomains
//    were counted.
// add_pod / remove_pod (updateWithPod, +1 / -1): a pod of the incoming pod's namespace on a node with
// every key, for each constraint whose selector matches it (Matches: `{}` matches every pod here) and
// whose inclusion policies the node passes; the critical path is updated as kube updates it.
//
// PreScore (ScheduleAnyway constraints; Skip when there are none or the cluster has no node).
// requireAllTopologies = the pod has its own constraints, or the defaults are not kube's system ones.
// Over the feasible nodes: with requireAllTopologies, a node lacking a key is ignored (score 0);
// the others add their value of each non-hostname key as a domain (a missing label reads as ""). The
// weight of constraint i is ln(domains + 2), with domains = feasible nodes not ignored for
// kubernetes.io/hostname. Over every node (requireAllTopologies: only nodes with all keys; eligible
// for the constraint): pods counted on it add to its value's domain, if a feasible node has that value.
// Score(n) (caching kPerCycle): 0 for an ignored node; else round(sum over the constraints whose key n
// has of count * weight + (maxSkew - 1)), count being n's domain's, or the pods counted on n itself
// for kubernetes.io/hostname. Units: matching pods, weighted; lower is better (kube's raw score).
// normalize_score (NormalizeScore): ignored nodes 0; others 100 * (max + min - s) / max over the
// non-ignored nodes (integer division), 100 for all when max is 0. The raw score is kube's, so the
// plugin is meant for a weighted-sum profile (ScoreCombination::kWeightedSum); compared
// lexicographically it would prefer the most crowded domain.
//
// Differences from kube-scheduler:
//  - kubernetes.io/hostname: a node without that label counts as labelled with its name (as
//    InterPodAffinity here, topology_value in inter_pod_affinity.h: node pools and the openb trace do
//    not set it; kubelet always does).
//  - the default selector is the owning controller's spec.selector as the YAML reader read it; kube
//    asks the informers for the pod's owner (a Deployment's pods: the ReplicaSet, whose selector adds
//    pod-template-hash) and the Services selecting it (not read by gpufleet).
//  - kube builds the critical paths from a Go map in random order; here in topology-value order, so
//    that the rare case where kube's own answer depends on that order (add/remove in preemption's
//    dry run, ties between three or more domains) is deterministic.
//  - no pod is terminating (kube skips pods with a deletionTimestamp).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

class PodTopologySpread final : public PreFilterPlugin,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public NamedPlugin<"PodTopologySpread"> {
 public:
  /// kube's systemDefaultConstraints (plugin.go).
  static const std::vector<TopologySpreadConstraint>& system_default_constraints();

  /// Throws std::invalid_argument (ProfileError) for arguments validate_pod_topology_spread_args refuses.
  explicit PodTopologySpread(const PodTopologySpreadArgs& args = {});

  /// plugin.go ErrReasonConstraintsNotMatch (Unschedulable) and ErrReasonNodeLabelNotMatch
  /// (UnschedulableAndUnresolvable).
  static constexpr FilterReason kReasons[] = {
      {"node(s) didn't match pod topology spread constraints", true},
      {"node(s) didn't match pod topology spread constraints (missing required label)", false},
  };
  static constexpr FilterCode kConstraintsNotMatch{kReasons[0]};
  static constexpr FilterCode kMissingRequiredLabel{kReasons[1]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  bool filter_cacheable() const override { return false; }

  Status pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const override;
  using FilterPlugin::filter;
  /// kFits, kConstraintsNotMatch or kMissingRequiredLabel from what PreFilter wrote to `cycle`
  /// (without it, the stand-alone check: PreFilter then Filter).
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  void add_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed, CycleState& cycle) const override;
  void remove_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                  CycleState& cycle) const override;

  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  /// kube's raw score (see above); 0 when PreScore did not write its state.
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  bool has_normalize_score() const override { return true; }
  void normalize_score(const Pod& pod, std::span<NodeScore> scores, const CycleState& cycle) const override;
  ScoreCaching caching() const override { return ScoreCaching::kPerCycle; }

 private:
  bool system_defaulted_ = true;
  std::vector<TopologySpreadConstraint> default_constraints_;
};

}  // namespace gpufleet::sched
