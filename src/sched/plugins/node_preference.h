// NodePreference: kube-scheduler's soft node constraints, preferred node affinity (NodeAffinity
// Score) and PreferNoSchedule taints (TaintToleration Score), applied before the policy's own score.
//
// kube sums weighted, normalized plugin scores (TaintToleration weight 3, NodeAffinity weight 2,
// each rescaled to 0..100 over the feasible nodes; pkg/scheduler/apis/config/v1/default_plugins.go).
// A policy score here is not on that scale (FGD scores fragmentation in gpu_milli), so a weighted
// sum would let one plugin drown the other depending on units. gpufleet instead orders nodes
// lexicographically: fewer untolerated PreferNoSchedule taints first, then a higher sum of matching
// preferred-term weights, then the policy's score, then the node rank. This keeps kube's ranking
// of the two soft constraints (with both normalized, avoiding a taint outweighs a full affinity
// match: 3 x 100 > 2 x 100) and makes a preference always win over packing, which is what a user
// who writes "prefer H100" expects. Documented divergence: kube may trade a weak preference for a
// much better resource score; gpufleet never does.
//
// The preference depends only on the pod's constraints and the node's labels and taints (never on
// usage), so the scheduler computes it once per (pod shape and constraints, node).
#pragma once

#include <cstdint>
#include <span>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::sched {

class NodePreference {
 public:
  /// Whether some node has a PreferNoSchedule taint (then every pod may prefer some nodes).
  static bool any_prefer_no_schedule(std::span<const Node> nodes);
  /// Whether nodes can differ in preference for this pod: it has preferred node affinity terms, or
  /// `prefer_no_schedule_taints` (any_prefer_no_schedule of the cluster).
  static bool applies(const Pod& pod, bool prefer_no_schedule_taints) {
    return prefer_no_schedule_taints || !pod.constraints.preferred_node_affinity.empty();
  }
  /// Higher is better: -(untolerated PreferNoSchedule taints) x 2^32 + (sum of the weights of the
  /// preferred node affinity terms the node matches).
  static int64_t preference(const Pod& pod, const Node& node);
};

}  // namespace gpufleet::sched
