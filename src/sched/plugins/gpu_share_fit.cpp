#include "sched/plugins/gpu_share_fit.h"

#include "model/gpu_spec.h"

namespace gpufleet::sched {
namespace {

// GpuShareFit on a node with MIG or time-sliced GPUs, or for a pod with MIG / gpu.shared requests
// (the rules in gpu_share_fit.h).
FilterCode sharing_filter(const Pod& pod, const ClusterState& state, NodeId n) {
  const bool wants_gpu = pod.is_gpu_pod();
  if (!wants_gpu && !pod.has_device_requests()) return FilterCode::kFits;
  const Node& node = state.node(n);
  if (node.gpu_count > 0 && !gpu_spec_allows(pod.gpu_spec, node.gpu_model)) return GpuShareFit::kGpuModelMismatch;
  const TimeSlicing* ts = node.time_slicing ? &*node.time_slicing : nullptr;
  const bool fail_above_one = ts != nullptr && ts->fail_requests_greater_than_one;
  if (wants_gpu) {
    if (ts != nullptr && !ts->renamed) {
      if (pod.gpu_milli < kGpuMilliPerGpu) return GpuShareFit::kInsufficientGpu;
      if (fail_above_one && pod.num_gpu > 1) return GpuShareFit::kSharedRequestAboveOne;
      if (state.replicas_free(n) < pod.num_gpu) return GpuShareFit::kInsufficientGpu;
    } else {
      // Plain GPUs only (a renamed time-sliced node has none besides its MIG GPUs).
      int32_t fit = 0;
      const auto free = state.gpu_free_milli(n);
      for (int32_t g = 0; g < node.gpu_count; ++g)
        fit += state.gpu_kind(n, g) == GpuKind::kPlain && free[static_cast<size_t>(g)] >= pod.gpu_milli;
      if (fit < pod.num_gpu) return GpuShareFit::kInsufficientGpu;
    }
  }
  if (pod.shared_replicas > 0) {
    if (ts == nullptr || !ts->renamed) return GpuShareFit::kInsufficientGpuShared;
    if (fail_above_one && pod.shared_replicas > 1) return GpuShareFit::kSharedRequestAboveOne;
    if (state.replicas_free(n) < pod.shared_replicas) return GpuShareFit::kInsufficientGpuShared;
  }
  for (const MigRequest& r : pod.mig_requests)
    if (state.mig_free_count(n, r.profile) < r.count) return GpuShareFit::kInsufficientMig;
  return FilterCode::kFits;
}

}  // namespace

int32_t gpus_with_free(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli) {
  int32_t count = 0;
  for (int32_t left : gpu_free_milli) count += left >= gpu_milli;
  return count;
}

FilterCode gpu_share_fits(const Pod& pod, const ClusterState& state, NodeId n) {
  if (state.has_gpu_sharing(n) || pod.has_device_requests()) return sharing_filter(pod, state, n);
  if (!pod.is_gpu_pod()) return FilterCode::kFits;
  const Node& node = state.node(n);
  if (node.gpu_count == 0) return GpuShareFit::kInsufficientGpu;
  if (!gpu_spec_allows(pod.gpu_spec, node.gpu_model)) return GpuShareFit::kGpuModelMismatch;
  if (gpus_with_free(state.gpu_free_milli(n), pod.gpu_milli) < pod.num_gpu) return GpuShareFit::kInsufficientGpu;
  return FilterCode::kFits;
}

FilterCode GpuShareFit::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return gpu_share_fits(pod, state, n);
}

std::vector<std::string> GpuShareFit::node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const {
  if (code == kInsufficientMig) {
    std::vector<std::string> out;
    for (const MigRequest& r : pod.mig_requests)
      if (state.mig_free_count(n, r.profile) < r.count) out.push_back("Insufficient nvidia.com/mig-" + r.profile);
    if (!out.empty()) return out;
  }
  return FilterPlugin::node_reasons(code, pod, state, n);
}

}  // namespace gpufleet::sched
