// The node-preference tier: kube-scheduler's soft node constraints, PreferNoSchedule taints
// (TaintToleration Score) and preferred node affinity (NodeAffinity Score), ranked before a policy's
// own score.
//
// kube sums weighted, normalized plugin scores (TaintToleration weight 3, NodeAffinity weight 2,
// each rescaled to 0..100 over the feasible nodes; pkg/scheduler/apis/config/v1/default_plugins.go).
// A policy score here is not on that scale (FGD scores fragmentation in gpu_milli), so a weighted
// sum would let one plugin drown the other depending on units. gpufleet's policy profiles
// (policy_registry.h) instead list the Score plugins TaintToleration, NodeAffinity, then the
// policy's own, and compare them lexicographically (ScoreCombination::kLexicographic, profile.h):
// fewer untolerated PreferNoSchedule taints first (TaintToleration's raw score, 100 - count), then a
// higher sum of matching preferred-term weights (NodeAffinity's raw score), then the policy's score,
// then the node rank. This keeps kube's ranking of the two soft constraints (with both normalized,
// avoiding a taint outweighs a full affinity match: 3 x 100 > 2 x 100) and makes a preference always
// win over packing, which is what a user who writes "prefer H100" expects. Documented divergence:
// kube may trade a weak preference for a much better resource score; gpufleet never does.
//
// preference() folds the two into one number whose order is the tier's: -(count) x 2^32 + sum. For
// two nodes with counts c1, c2 and sums a1, a2 in [0, 2^32): if c1 < c2 then the first is at least
// 2^32 - a1 + a2 > 0 above the second, so the count decides; if c1 == c2 the sums decide. So the
// lexicographic order (100 - c, a) equals the order of preference() whenever every sum is below 2^32
// (a pod would need more than 42 million matching terms of weight 100 to reach it).
// Both depend only on the pod's constraints and the node's labels and taints (never on usage), so
// the Scheduler computes them once per (pod shape and constraints, node) (ScoreCaching::kNodeStatic).
#pragma once

#include <cstdint>
#include <span>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::sched {

class NodePreference {
 public:
  /// Whether some node has a PreferNoSchedule taint (then every pod may prefer some nodes;
  /// TaintToleration's PreScore skips otherwise).
  static bool any_prefer_no_schedule(std::span<const Node> nodes);
  /// Whether nodes can differ in preference for this pod: it has preferred node affinity terms
  /// (NodeAffinity's PreScore skips otherwise), or `prefer_no_schedule_taints`
  /// (any_prefer_no_schedule of the cluster).
  static bool applies(const Pod& pod, bool prefer_no_schedule_taints) {
    return prefer_no_schedule_taints || !pod.constraints.preferred_node_affinity.empty();
  }
  /// The tier as one key, higher is better: -(untolerated PreferNoSchedule taints) x 2^32 + (sum of
  /// the weights of the preferred node affinity terms the node matches). See above.
  static int64_t preference(const Pod& pod, const Node& node);
};

}  // namespace gpufleet::sched
