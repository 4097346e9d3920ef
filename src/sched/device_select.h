// GPU choice on the chosen node: the selectGpu plugins for sharing pods (FGD simulator,
// hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/open_gpu_share.go allocateGpuId) and
// the helpers every choice uses. FGD's own selector lives with its score (fgd_score.h). The names are
// the simulator's gpuSelMethod values.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// "best": the GPU with the least free gpu_milli that still fits, first index on ties.
class BestFitGpuSelector final : public GpuSelector {
 public:
  static constexpr std::string_view kName = "best";
  std::string_view name() const override { return kName; }
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

/// "random": uniform over the GPUs that fit, by reservoir sampling (k-th fitting GPU replaces the
/// choice when rng.intn(k) == 0), as the simulator does.
class RandomGpuSelector final : public GpuSelector {
 public:
  static constexpr std::string_view kName = "random";
  std::string_view name() const override { return kName; }
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

/// The lowest-index GPUs with all 1000 gpu_milli free, `count` of them (fewer if the node lacks them).
/// Only plain GPUs (GpuKind::kPlain) count: MIG and time-sliced GPUs are never given whole.
std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count);

/// Index of the GPU with the least free gpu_milli that still fits `gpu_milli`, first index on ties;
/// -1 if none fits. ("best" selection, FGD simulator open_gpu_share.go allocateGpuId.)
int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli);

}  // namespace gpufleet::sched
