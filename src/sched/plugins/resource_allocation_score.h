// Kubernetes' own NodeResourcesFit scoring strategies LeastAllocated and MostAllocated
// (k8s.io/kubernetes pkg/scheduler/framework/plugins/noderesources/least_allocated.go,
// most_allocated.go, resource_allocation.go), over the resources of ResourceAllocationArgs
// (plugin_args.h; default cpu, memory and nvidia.com/gpu, weight 1 each):
//   requested_r = what the node already has requested + the pod's request (cpu: non-zero request)
//   LeastAllocated: score_r = (capacity_r - requested_r) * 100 / capacity_r
//   MostAllocated:  score_r = requested_r * 100 / capacity_r
//   (0 when requested_r > capacity_r), score = sum_r score_r * w_r / sum_r w_r, integer arithmetic.
// As upstream, a resource with zero capacity on the node is skipped, and the extended resource
// nvidia.com/gpu is skipped for a pod that does not request it. GPU is counted in gpu_milli.
// kube configures these as NodeResourcesFit's scoringStrategy.type; gpufleet registers each as a
// Score plugin of its own name (LeastAllocated, MostAllocated), with the strategy's resources as
// arguments.
#pragma once

#include <string_view>

#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

/// kube's leastRequestedScore (least_allocated.go): (capacity - requested) * 100 / capacity, integer
/// division; 0 when capacity is 0 or requested exceeds it. Units: any, the same for both.
inline int64_t least_requested_score(int64_t requested, int64_t capacity) {
  return capacity == 0 || requested > capacity ? 0 : (capacity - requested) * kMaxNodeScore / capacity;
}

/// Both strategies' score; LeastAllocated and MostAllocated below are the plugins.
class ResourceAllocationScore : public ScorePlugin {
 public:
  enum class Strategy { kLeastAllocated, kMostAllocated };
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;

 protected:
  /// Throws std::invalid_argument for arguments validate_resource_allocation_args refuses.
  ResourceAllocationScore(Strategy strategy, const ResourceAllocationArgs& args);

 private:
  Strategy strategy_;
  int64_t weight_[3] = {0, 0, 0};  // cpu, memory, nvidia.com/gpu; 0 = not scored
};

class LeastAllocated final : public ResourceAllocationScore, public NamedPlugin<"LeastAllocated"> {
 public:
  explicit LeastAllocated(const ResourceAllocationArgs& args = {}) : ResourceAllocationScore(Strategy::kLeastAllocated, args) {}
};

class MostAllocated final : public ResourceAllocationScore, public NamedPlugin<"MostAllocated"> {
 public:
  explicit MostAllocated(const ResourceAllocationArgs& args = {}) : ResourceAllocationScore(Strategy::kMostAllocated, args) {}
};

}  // namespace gpufleet::sched
