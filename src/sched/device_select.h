// GPU-selection strategies for sharing pods (FGD simulator, hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/open_gpu_share.go allocateGpuId). FGD's own selector lives with its score
// (fgd_score.h).
#pragma once

#include "sched/framework.h"

namespace gpufleet::sched {

/// "best": the GPU with the least free gpu_milli that still fits, first index on ties.
class BestFitGpuSelector final : public GpuSelector {
 public:
  std::string_view name() const override { return "best"; }
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

/// "random": uniform over the GPUs that fit, by reservoir sampling (k-th fitting GPU replaces the
/// choice when rng.intn(k) == 0), as the simulator does.
class RandomGpuSelector final : public GpuSelector {
 public:
  std::string_view name() const override { return "random"; }
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

}  // namespace gpufleet::sched
