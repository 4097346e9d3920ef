#include "sched/plugins/gpu_packing_score.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace gpufleet::sched {

int64_t GpuPackingScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  if (!pod.is_gpu_pod()) return 0;
  auto free = state.gpu_free_milli(n);
  const auto n_gpus = static_cast<int32_t>(free.size());
  const int32_t fully_free = state.gpu_fully_free_count(n);
  if (fully_free == n_gpus) return std::max(33 - n_gpus, n_gpus);

  std::array<int32_t, kMaxGpusPerNode> order{};
  std::iota(order.begin(), order.begin() + n_gpus, 0);
  std::stable_sort(order.begin(), order.begin() + n_gpus, [&](int32_t a, int32_t b) { return free[static_cast<size_t>(a)] < free[static_cast<size_t>(b)]; });
  int32_t need = pod.num_gpu;
  int32_t fully_free_used = 0;
  int64_t free_pct_sum = 0;
  for (int32_t i = 0; i < n_gpus && need > 0; ++i) {
    const int32_t left = free[static_cast<size_t>(order[static_cast<size_t>(i)])];
    if (left < pod.gpu_milli) continue;
    --need;
    fully_free_used += left == kGpuMilliPerGpu;
    free_pct_sum += int64_t{left} * 100 / kGpuMilliPerGpu;
  }
  if (need != 0) return 0;  // filtered out before scoring; the simulator returns MinNodeScore
  if (fully_free_used > 0) return std::max(50 - fully_free_used, 33);
  return static_cast<int32_t>(std::max<int64_t>(100 - free_pct_sum / 10, 50));
}

}  // namespace gpufleet::sched
