#include "sched/plugins/fgd_score.h"

#include <array>
#include <cmath>

namespace gpufleet::sched {
namespace {

int32_t sigmoid_score(double frag_before, double frag_after, double scale) {
  const double x = (frag_before - frag_after) / scale;
  return static_cast<int32_t>(1.0 / (1.0 + std::exp(-x)) * 100.0);
}

}  // namespace

double fgd_frag_before_after(const FragmentationMeasure& frag, const Pod& pod, const ClusterState& state, NodeId n,
                             std::span<double> after) {
  const auto free = state.gpu_free_milli(n);
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
  if (!pod.is_share_pod()) return {sigmoid_score(before, after[0], scale), -1};
  const auto free = state.gpu_free_milli(n);
  int32_t best_score = 0;
  int32_t best_gpu = -1;
  for (size_t i = 0; i < free.size(); ++i) {
    if (free[i] < pod.gpu_milli) continue;
    const int32_t s = sigmoid_score(before, after[i], scale);
    if (best_gpu < 0 || s > best_score) {
      best_score = s;
      best_gpu = static_cast<int32_t>(i);
    }
  }
  return {best_score, best_gpu};
}

int32_t FgdScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).first;
}

int32_t FgdGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).second;
}

}  // namespace gpufleet::sched
