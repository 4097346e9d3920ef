#include "sched/framework.h"

namespace gpufleet::sched {

std::string_view filter_reason(FilterCode code) {
  switch (code) {
    case FilterCode::kFits: return "fits";
    case FilterCode::kInsufficientCpu: return "Insufficient cpu";
    case FilterCode::kInsufficientMemory: return "Insufficient memory";
    case FilterCode::kTooManyPods: return "Too many pods";
    case FilterCode::kInsufficientGpu: return "Insufficient nvidia.com/gpu";
    case FilterCode::kGpuModelMismatch: return "node(s) didn't match pod's GPU model constraint";
    case FilterCode::kUntoleratedTaint: return "node(s) had untolerated taint(s)";
    case FilterCode::kNodeAffinityMismatch: return "node(s) didn't match Pod's node affinity/selector";
    case FilterCode::kInsufficientMig: return "Insufficient nvidia.com/mig-<profile>";
    case FilterCode::kInsufficientGpuShared: return "Insufficient nvidia.com/gpu.shared";
    case FilterCode::kSharedRequestAboveOne:
      return "node(s) refuse more than one time-sliced GPU replica per pod (failRequestsGreaterThanOne)";
    case FilterCode::kCount: break;
  }
  return "unknown";
}

std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count) {
  std::vector<int32_t> out;
  auto free = state.gpu_free_milli(n);
  const bool sharing = state.has_gpu_sharing(n);
  for (size_t g = 0; g < free.size() && static_cast<int32_t>(out.size()) < count; ++g)
    if (free[g] == kGpuMilliPerGpu && (!sharing || state.gpu_kind(n, static_cast<int32_t>(g)) == GpuKind::kPlain))
      out.push_back(static_cast<int32_t>(g));
  return out;
}

int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli) {
  int32_t best = -1;
  for (size_t g = 0; g < gpu_free_milli.size(); ++g) {
    const int32_t left = gpu_free_milli[g];
    if (left >= gpu_milli && (best < 0 || left < gpu_free_milli[static_cast<size_t>(best)])) best = static_cast<int32_t>(g);
  }
  return best;
}

}  // namespace gpufleet::sched
