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

std::pair<int32_t, int32_t> fgd_score_and_gpu(const FragmentationMeasure& frag, const Pod& pod,
                                              const ClusterState& state, NodeId n, double scale) {
  const auto free = state.gpu_free_milli(n);
  const int64_t cpu_after = state.cpu_free_milli(n) - pod.nonzero_cpu_milli();
  const int32_t model = state.gpu_model_id(n);
  if (pod.is_share_pod()) {
    int32_t best_score = 0;
    int32_t best_gpu = -1;
    std::array<double, kMaxGpusPerNode> frag_after{};
    const double frag_before = frag.node_frag_after_share(state.cpu_free_milli(n), free, model, pod.nonzero_cpu_milli(),
                                                          pod.gpu_milli, std::span<double>(frag_after.data(), free.size()));
    for (size_t i = 0; i < free.size(); ++i) {
      if (free[i] < pod.gpu_milli) continue;
      const int32_t s = sigmoid_score(frag_before, frag_after[i], scale);
      if (best_gpu < 0 || s > best_score) {
        best_score = s;
        best_gpu = static_cast<int32_t>(i);
      }
    }
    return {best_score, best_gpu};
  }
  // Whole GPUs (or none): take num_gpu fully free GPUs, lowest index first (F ignores which).
  const double before = frag.node_frag_milli(state.cpu_free_milli(n), free, model);
  std::array<int32_t, kMaxGpusPerNode> after{};
  std::copy(free.begin(), free.end(), after.begin());
  const std::span<const int32_t> after_span(after.data(), free.size());
  int32_t need = pod.is_gpu_pod() ? pod.num_gpu : 0;
  for (size_t i = 0; i < free.size() && need > 0; ++i) {
    if (free[i] >= pod.gpu_milli && free[i] == kGpuMilliPerGpu) {
      after[i] -= pod.gpu_milli;
      --need;
    }
  }
  return {sigmoid_score(before, frag.node_frag_milli(cpu_after, after_span, model), scale), -1};
}

int32_t FgdScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).first;
}

int32_t FgdGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return fgd_score_and_gpu(*frag_, pod, state, n).second;
}

}  // namespace gpufleet::sched
