#include "sched/plugins/node_resource_topology_match.h"

#include "sched/device_select.h"

namespace gpufleet::sched {

FilterCode NodeResourceTopologyMatch::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const Node& node = state.node(n);
  if (!node.requires_single_numa_node()) return FilterCode::kFits;
  // Whole GPUs only: a fraction sits on one GPU, so on one NUMA node; time-slicing replicas are not aligned.
  if (pod.num_gpu < 1 || pod.gpu_milli != kGpuMilliPerGpu) return FilterCode::kFits;
  if (node.time_slicing && !node.time_slicing->renamed) return FilterCode::kFits;
  if (numa_node_for_whole_gpus(state, n, pod.num_gpu) >= 0) return FilterCode::kFits;
  return FilterCode::kCannotAlign;
}

std::string_view cannot_align_reason(const Node& node) {
  return node.topology_manager_scope == TopologyManagerScope::kContainer ? "cannot align container" : "cannot align pod";
}

}  // namespace gpufleet::sched
