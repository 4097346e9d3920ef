#include "sched/plugins/fgd_score.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace gpufleet::sched {

int32_t fgd_sigmoid_score(double x_milli, double scale) {
  if (std::isnan(x_milli)) return 0;
  return static_cast<int32_t>(1.0 / (1.0 + std::exp(-x_milli / scale)) * 100.0);
}

double fgd_frag_before_after(const FragmentationMeasure& frag, const Pod& pod, const ClusterState& state, NodeId n,
                             std::span<double> after) {
  const auto free = state.gpu_free_milli(n);
  if (after.size() < std::max<size_t>(1, free.size()))
    throw std::invalid_argument("fgd_frag_before_after: `after` is shorter than the node's GPU count");
  const int32_t model = state.gpu_model_id(n);
  if (pod.is_share_pod())
    return frag.node_frag_after_share(state.cpu_free_milli(n), free, model, pod.nonzero_cpu_milli(), pod.gpu_milli,
                                      after.first(free.size()));
  // Whole GPUs (or none): take num_gpu fully free GPUs, lowest index first (F ignores which).
  const double before = frag.node_frag_milli(state.cpu_free_milli(n), free, model);
  std::array<int32_t, kMaxGpusPerNode> left{};
  std::copy(free.begin(), free.end(), left.begin());
  int32_t need = pod.is_gpu_pod() ? pod.num_gpu : 0;
  for (size_t i = 0; i < free.size() && need > 0; ++i) {
    if (free[i] >= pod.gpu_milli && free[i] == kGpuMilliPerGpu) {
      left[i] -= pod.gpu_milli;
      --need;
    }
  }
  after[0] = frag.node_frag_milli(state.cpu_free_milli(n) - pod.nonzero_cpu_milli(),
                                  std::span<const int32_t>(left.data(), free.size()), model);
  return before;
}

std::pair<int32_t, int32_t> fgd_score_and_gpu(const FragmentationMeasure& frag, const Pod& pod,
                                              const ClusterState& state, NodeId n, double scale) {
  std::array<double, kMaxGpusPerNode> after{};
  const double before = fgd_frag_before_after(frag, pod, state, n, after);
  if (!pod.is_share_pod()) return {fgd_sigmoid_score(before - after[0], scale), -1};
  const auto gpu_score = [&](size_t i) { return fgd_sigmoid_score(before - after[i], scale); };
  const int32_t gpu = first_best_gpu(state.gpu_free_milli(n), pod.gpu_milli, gpu_score);
  return {gpu < 0 ? 0 : gpu_score(static_cast<size_t>(gpu)), gpu};
}

int64_t FgdScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).first;
}

int32_t FgdGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).second;
}

}  // namespace gpufleet::sched
