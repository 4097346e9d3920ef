#include "sched/gpu/pod_mix_estimator.h"

#include <cmath>

namespace gpufleet::sched {

PodMixEstimator::PodMixEstimator(double half_life_pods)
    : growth_(half_life_pods > 0 ? std::exp2(1.0 / half_life_pods) : 1.0) {}

void PodMixEstimator::add(const Pod& pod) {
  // Decay by growing the weight of new pods instead of shrinking all old ones; rescale before
  // the numbers get large.
  weights_[PodShapeKey::of(pod)] += next_weight_;
  next_weight_ *= growth_;
  if (next_weight_ > 1e100) {
    for (auto& [key, w] : weights_) w /= next_weight_;
    next_weight_ = 1.0;
  }
  ++pods_seen_;
}

std::vector<TypicalPod> PodMixEstimator::mix(double coverage) const {
  std::vector<std::pair<PodShapeKey, double>> weighted(weights_.begin(), weights_.end());
  return select_typical_pods(std::move(weighted), coverage);
}

}  // namespace gpufleet::sched
