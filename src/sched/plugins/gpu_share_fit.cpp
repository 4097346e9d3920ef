#include "sched/plugins/gpu_share_fit.h"

#include "model/gpu_spec.h"

namespace gpufleet::sched {

int32_t gpus_with_free(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli) {
  int32_t count = 0;
  for (int32_t left : gpu_free_milli) count += left >= gpu_milli;
  return count;
}

FilterCode GpuShareFit::filter(const Pod& pod, const ClusterState& state, NodeId n) const {
  if (!pod.is_gpu_pod()) return FilterCode::kFits;
  const Node& node = state.node(n);
  if (node.gpu_count == 0) return FilterCode::kInsufficientGpu;
  if (!gpu_spec_allows(pod.gpu_spec, node.gpu_model)) return FilterCode::kGpuModelMismatch;
  if (gpus_with_free(state.gpu_free_milli(n), pod.gpu_milli) < pod.num_gpu) return FilterCode::kInsufficientGpu;
  return FilterCode::kFits;
}

}  // namespace gpufleet::sched
