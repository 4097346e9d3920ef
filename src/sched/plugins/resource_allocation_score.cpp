#include "sched/plugins/resource_allocation_score.h"

#include <array>

#include "sched/framework/validation.h"

namespace gpufleet::sched {

ResourceAllocationScore::ResourceAllocationScore(Strategy strategy, const ResourceAllocationArgs& args) : strategy_(strategy) {
  if (FieldErrors errs = validate_resource_allocation_args(args, "args"); !errs.empty()) throw ProfileError(std::move(errs));
  for (const ResourceSpec& r : args.resources) weight_[r.name == "cpu" ? 0 : r.name == "memory" ? 1 : 2] = r.weight;
}

int64_t ResourceAllocationScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const Node& node = state.node(n);
  struct Resource {
    int64_t capacity, requested;
    bool skip;
  };
  const int64_t memory_request = pod.memory_bytes;  // kube's non-zero default applies only to containers with no request
  const std::array<Resource, 3> resources{{
      {node.cpu_milli, state.cpu_used_milli(n) + pod.nonzero_cpu_milli(), false},
      {node.memory_bytes, node.memory_bytes - state.memory_free_bytes(n) + memory_request, false},
      {int64_t{node.gpu_count} * kGpuMilliPerGpu,
       int64_t{node.gpu_count} * kGpuMilliPerGpu - state.gpu_free_milli_total(n) + pod.gpu_request_milli(),
       !pod.is_gpu_pod()},
  }};
  int64_t total = 0;
  int64_t weights = 0;
  for (size_t i = 0; i < resources.size(); ++i) {
    const Resource& r = resources[i];
    if (weight_[i] == 0 || r.skip || r.capacity == 0) continue;
    int64_t s = 0;
    if (r.requested <= r.capacity) {
      s = strategy_ == Strategy::kLeastAllocated ? least_requested_score(r.requested, r.capacity)
                                                 : r.requested * 100 / r.capacity;
    }
    total += s * weight_[i];
    weights += weight_[i];
  }
  return weights == 0 ? 0 : total / weights;
}

}  // namespace gpufleet::sched
