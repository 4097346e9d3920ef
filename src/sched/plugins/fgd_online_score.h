// Online FGD: FGD (fgd_score.h) with the typical pod mix estimated from the pods seen so far
// (PodMixEstimator, no decay) instead of the whole trace, which a live scheduler cannot know.
// The fgd-online policy uses FGD's own parameters: the mix covers 95% of the pods seen, sigmoid scale
// 1000. (gpufleet's policy builds on the same OnlineFragmentation with more terms: gpufleet_score.h.)
// The estimate is checked when the number of pods seen reaches a power of two up to 1024, then every
// 1024 pods, and the measure is rebuilt only if the mix moved by at least kMinMixChange (L1 distance
// of the popularities): each rebuild invalidates the scheduler's score cache, and on a stationary
// workload the estimate settles quickly. Score and GPU choice are FGD's on the current measure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/gpu/fragmentation.h"
#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"
#include "sched/gpu/pod_mix_estimator.h"

namespace gpufleet::sched {


/// Smallest change of the estimated mix (L1 distance of popularities) that rebuilds the measure.
/// Chosen so that a settled workload stops emptying the score cache (docs/fgd-reproduction.md,
/// "Online policies").
inline constexpr double kMinMixChange = 0.05;

/// L1 distance between two mixes' popularity vectors (a shape missing from one counts as 0).
double mix_distance(const std::vector<TypicalPod>& a, const std::vector<TypicalPod>& b);

/// fgd-online's parameters (FGD's own).
inline constexpr OnlineFgdParams kFgdOnlineParams{0.95, 1000.0};

/// The online fragmentation measure: counts the pods seen and, at each refresh point, rebuilds the
/// FragmentationMeasure from their mix when it moved by at least kMinMixChange. Starts with an empty
/// mix (F = 0 everywhere).
class OnlineFragmentation {
 public:
  /// `gpu_models`: ClusterState::gpu_models(); `mix_coverage` in (0, 1] (typical_pod_mix).
  OnlineFragmentation(std::vector<std::string> gpu_models, double mix_coverage);
  /// Counts the pod. Returns true when this call rebuilt the measure.
  bool observe(const Pod& pod);
  /// True when the estimate is re-checked after `pods_seen` pods (1, 2, 4, ..., 1024, 2048, 3072, ...).
  static bool refresh_point(int64_t pods_seen);
  int64_t pods_seen() const { return estimator_.pods_seen(); }
  const FragmentationMeasure& measure() const { return *measure_; }

 private:
  std::vector<std::string> gpu_models_;
  double mix_coverage_;
  PodMixEstimator estimator_;
  std::shared_ptr<const FragmentationMeasure> measure_;
};

class OnlineFgdScore final : public ScorePlugin, public GpuSelector, public ObserverPlugin, public NamedPlugin<"OnlineFGDScore"> {
 public:
  /// `gpu_models`: the cluster's GPU models by id (ClusterState::gpu_models()). Throws ProfileError
  /// (validation.h) for parameters validate_online_fgd_args refuses.
  OnlineFgdScore(std::vector<std::string> gpu_models, OnlineFgdParams params);
  /// Counts the pod into the mix (OnlineFragmentation::observe); generation() moves when that
  /// rebuilt the measure.
  void observe(const Pod& pod, const ClusterState& state) override;
  uint64_t generation() const override { return generation_; }
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;

  /// OnlineFragmentation::refresh_point.
  static bool refresh_point(int64_t pods_seen) { return OnlineFragmentation::refresh_point(pods_seen); }
  /// The measure in use (for tests and reports).
  const FragmentationMeasure& measure() const { return online_.measure(); }

 private:
  OnlineFgdParams params_;
  OnlineFragmentation online_;
  uint64_t generation_ = 0;
};

}  // namespace gpufleet::sched
