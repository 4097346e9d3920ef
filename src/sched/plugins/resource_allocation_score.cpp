#include "sched/plugins/resource_allocation_score.h"

#include <array>

namespace gpufleet::sched {

std::string_view ResourceAllocationScore::name() const {
  return strategy_ == Strategy::kLeastAllocated ? "LeastAllocated" : "MostAllocated";
}

int32_t ResourceAllocationScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
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
  for (const Resource& r : resources) {
    if (r.skip || r.capacity == 0) continue;
    int64_t s = 0;
    if (r.requested <= r.capacity) {
      s = strategy_ == Strategy::kLeastAllocated ? (r.capacity - r.requested) * 100 / r.capacity
                                                 : r.requested * 100 / r.capacity;
    }
    total += s;
    weights += 1;
  }
  return weights == 0 ? 0 : static_cast<int32_t>(total / weights);
}

}  // namespace gpufleet::sched
