// Online estimate of the typical pod mix from the pods a scheduler has seen so far.
//
// FGD (ATC'23) weights fragmentation by the whole trace's pod distribution, which a live scheduler
// cannot know. This estimator counts the shapes (PodShapeKey) of the pods observed so far, with an
// optional exponential decay (a pod seen `half_life_pods` pods ago weighs half as much), and selects
// the typical mix like FGD (select_typical_pods).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sched/gpu/fragmentation.h"

namespace gpufleet::sched {

class PodMixEstimator {
 public:
  /// half_life_pods <= 0: no decay (every pod seen weighs the same).
  explicit PodMixEstimator(double half_life_pods = 0.0);

  void add(const Pod& pod);
  int64_t pods_seen() const { return pods_seen_; }
  /// The typical mix of the pods seen (empty before any pod).
  std::vector<TypicalPod> mix(double coverage = 0.95) const;

 private:
  double growth_;       // weight multiplier per pod (1 without decay)
  double next_weight_ = 1.0;
  int64_t pods_seen_ = 0;
  std::map<PodShapeKey, double> weights_;
};

}  // namespace gpufleet::sched
