#include "sched/plugins/fgd_online_score.h"

#include "sched/framework/validation.h"

#include <cmath>
#include <map>

#include "sched/plugins/fgd_score.h"

namespace gpufleet::sched {

double mix_distance(const std::vector<TypicalPod>& a, const std::vector<TypicalPod>& b) {
  std::map<PodShapeKey, double> diff;
  for (const auto& t : a) diff[PodShapeKey{t.cpu_milli, t.gpu_milli, t.num_gpu, t.gpu_spec}] += t.popularity;
  for (const auto& t : b) diff[PodShapeKey{t.cpu_milli, t.gpu_milli, t.num_gpu, t.gpu_spec}] -= t.popularity;
  double d = 0;
  for (const auto& [key, v] : diff) d += std::abs(v);
  return d;
}

OnlineFragmentation::OnlineFragmentation(std::vector<std::string> gpu_models, double mix_coverage)
    : gpu_models_(std::move(gpu_models)),
      mix_coverage_(mix_coverage),
      measure_(std::make_shared<const FragmentationMeasure>(std::vector<TypicalPod>{}, gpu_models_)) {}

bool OnlineFragmentation::refresh_point(int64_t pods_seen) {
  if (pods_seen <= 0) return false;
  if (pods_seen <= 1024) return (pods_seen & (pods_seen - 1)) == 0;
  return pods_seen % 1024 == 0;
}

bool OnlineFragmentation::observe(const Pod& pod) {
  estimator_.add(pod);
  if (!refresh_point(estimator_.pods_seen())) return false;
  std::vector<TypicalPod> mix = estimator_.mix(mix_coverage_);
  // Keep the current measure (and the scheduler's cached scores) while the estimate barely moves.
  if (mix_distance(mix, measure_->mix()) < kMinMixChange) return false;
  measure_ = std::make_shared<const FragmentationMeasure>(std::move(mix), gpu_models_);
  return true;
}

OnlineFgdScore::OnlineFgdScore(std::vector<std::string> gpu_models, OnlineFgdParams params)
    : params_(params), online_(std::move(gpu_models), params.mix_coverage) {
  if (FieldErrors errs = validate_online_fgd_args(params, "args"); !errs.empty()) throw ProfileError(std::move(errs));
}

void OnlineFgdScore::observe(const Pod& pod, const ClusterState&) {
  if (online_.observe(pod)) ++generation_;
}

int64_t OnlineFgdScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fgd_score_and_gpu(online_.measure(), pod, state, n, params_.sigmoid_scale_milli).first;
}

int32_t OnlineFgdScore::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return fgd_score_and_gpu(online_.measure(), pod, state, n, params_.sigmoid_scale_milli).second;
}

}  // namespace gpufleet::sched
