#include "sched/plugins/node_resources_fit.h"

#include "sched/plugins/gpu_share_fit.h"

namespace gpufleet::sched {

FilterCode fits_pods_cpu_memory(const Pod& pod, const ClusterState& state, NodeId n) {
  if (state.pod_count(n) >= state.node(n).max_pods) return NodeResourcesFit::kTooManyPods;
  if (pod.cpu_milli > state.cpu_free_milli(n)) return NodeResourcesFit::kInsufficientCpu;
  if (pod.memory_bytes > state.memory_free_bytes(n)) return NodeResourcesFit::kInsufficientMemory;
  return FilterCode::kFits;
}

FilterCode fits(const Pod& pod, const ClusterState& state, NodeId n) {
  const FilterCode code = fits_pods_cpu_memory(pod, state, n);
  return code.rejected() ? code : gpu_share_fits(pod, state, n);
}

FilterCode NodeResourcesFit::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fits_pods_cpu_memory(pod, state, n);
}

}  // namespace gpufleet::sched
