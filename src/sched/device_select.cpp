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
