// NodeResourcesBalancedAllocation (kube-scheduler pkg/scheduler/framework/plugins/noderesources/
// balanced_allocation.go and resource_allocation.go): prefers nodes whose cpu and memory would be
// used in equal shares after the pod is placed. Resources: cpu and memory (kube's default).
//
// Current release (BalancedAllocationArgs::release kCurrent):
//   PreScore  Skip for a pod that requests neither cpu nor memory (a best-effort pod; kube #129138).
//   Score     f_r = min(1, requested_r / allocatable_r), requested_r = the node's actual requests
//             (useRequested: not the non-zero defaults) + the pod's; a resource with allocatable 0 is
//             left out; std = |f_cpu - f_memory| / 2 for two resources, 0 for one;
//             score = int64((1 - std) * 100) (float64 arithmetic, truncated).
// v1.20 (kV1_20):
//   no PreScore; requested_r = the node's non-zero requested + the pod's non-zero request
//   (Pod::nonzero_cpu_request_milli, ...); f_r = requested_r / allocatable_r (1 when allocatable_r
//   is 0); score 0 when either f_r >= 1, else int64((1 - |f_cpu - f_memory|) * 100).
// No NormalizeScore: the score is already in [0, 100]. A function of the pod and node n's usage
// (ScoreCaching::kNodeVersion).
#pragma once

#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

/// The score above for node n (exposed for tests).
int64_t balanced_allocation_score(const Pod& pod, const ClusterState& state, NodeId n, KubeRelease release);

class NodeResourcesBalancedAllocation final : public PreScorePlugin,
                                              public ScorePlugin,
                                              public NamedPlugin<"NodeResourcesBalancedAllocation"> {
 public:
  explicit NodeResourcesBalancedAllocation(const BalancedAllocationArgs& args = {}) : release_(args.release) {}
  /// Skip for a best-effort pod (current release), else Success.
  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;

 private:
  KubeRelease release_;
};

}  // namespace gpufleet::sched
