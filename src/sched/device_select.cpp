#include "sched/device_select.h"

namespace gpufleet::sched {

int32_t BestFitGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return best_fit_gpu(state.gpu_free_milli(n), pod.gpu_milli);
}

int32_t RandomGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const {
  int32_t chosen = -1;
  int64_t seen = 0;
  const auto free = state.gpu_free_milli(n);
  for (size_t g = 0; g < free.size(); ++g) {
    if (free[g] < pod.gpu_milli) continue;
    ++seen;
    if (rng.intn(seen) == 0) chosen = static_cast<int32_t>(g);
  }
  return chosen;
}

}  // namespace gpufleet::sched

namespace gpufleet::sched {

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
