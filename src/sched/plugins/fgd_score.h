// FGD policy: Fragmentation Gradient Descent (Weng et al., USENIX ATC'23, Algorithm 1; simulator
// pkg/simulator/plugin/fgd_score.go calculateGpuShareFragExtendScore).
// With F the node fragmentation of sched/gpu/fragmentation.h and sigmoid(x) = 1 / (1 + e^-x):
//   sharing pod: for each GPU i with free >= gpu_milli, n'_i = node minus the pod's CPU and minus
//                gpu_milli on GPU i;  S_i = int64(100 * sigmoid((F(n) - F(n'_i)) / 1000));
//                score = max_i S_i, and the GPU is the first index reaching that truncated max.
//   other pods:  n' = node minus the pod's CPU and num_gpu fully free GPUs;
//                score = int64(100 * sigmoid((F(n) - F(n')) / 1000)).
// No normalization. A placement that grows fragmentation least scores highest.
#pragma once

#include <memory>
#include <span>

#include "sched/gpu/fragmentation.h"
#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// FGD's sigmoid scale: x = fragmentation change in gpu_milli / 1000.
inline constexpr double kFgdSigmoidScaleMilli = 1000.0;

/// F(n) of node n before and after placing `pod` there, in gpu_milli. For a sharing pod `after[i]`
/// is F with the pod on GPU i (NaN where GPU i has less than pod.gpu_milli free); for other pods
/// `after[0]` is F with the pod's CPU and num_gpu fully free GPUs (lowest index first) taken.
/// `after` needs max(1, GPUs of node n) entries (kMaxGpusPerNode always suffices); throws
/// std::invalid_argument when it is shorter. Returns F before.
double fgd_frag_before_after(const FragmentationMeasure& frag, const Pod& pod, const ClusterState& state, NodeId n,
                             std::span<double> after);

/// FGD's integer score of a fragmentation decrease x (gpu_milli): int(100 * sigmoid(x / scale)), in
/// 0..99 (100 only when the sigmoid rounds to 1). NaN x gives 0.
int32_t fgd_sigmoid_score(double x_milli, double sigmoid_scale_milli);

/// The GPU of node n a sharing pod of `gpu_milli` goes to under a per-GPU `value(i)` (larger is
/// better): the first index with the largest value among GPUs with at least gpu_milli free, or -1
/// when none has. Used by FGD (value = the GPU's integer score) and gpufleet (value = F decrease).
template <class Value>
int32_t first_best_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli, Value value) {
  int32_t best = -1;
  decltype(value(size_t{0})) best_value{};
  for (size_t i = 0; i < gpu_free_milli.size(); ++i) {
    if (gpu_free_milli[i] < gpu_milli) continue;
    const auto v = value(i);
    if (best < 0 || v > best_value) {
      best = static_cast<int32_t>(i);
      best_value = v;
    }
  }
  return best;
}

/// Score and GPU choice of FGD on one node: {score, gpu index or -1 for non-sharing pods}.
/// `sigmoid_scale_milli` divides the fragmentation change before the sigmoid (FGD: 1000); a larger
/// scale truncates more changes to the same integer score, leaving more ties to the node rank.
std::pair<int32_t, int32_t> fgd_score_and_gpu(const FragmentationMeasure& frag, const Pod& pod,
                                              const ClusterState& state, NodeId n,
                                              double sigmoid_scale_milli = kFgdSigmoidScaleMilli);

class FgdScore final : public ScorePlugin, public NamedPlugin<"FGDScore"> {
 public:
  explicit FgdScore(std::shared_ptr<const FragmentationMeasure> frag) : frag_(std::move(frag)) {}
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;

 private:
  std::shared_ptr<const FragmentationMeasure> frag_;
};

/// FGD's GPU selection ("FGDScore" in the simulator): the GPU fgd_score_and_gpu picks.
class FgdGpuSelector final : public GpuSelector, public NamedPlugin<"fgd"> {
 public:
  explicit FgdGpuSelector(std::shared_ptr<const FragmentationMeasure> frag) : frag_(std::move(frag)) {}
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;

 private:
  std::shared_ptr<const FragmentationMeasure> frag_;
};

}  // namespace gpufleet::sched
