// Device selection: which GPUs, time-slicing replicas and MIG devices of a chosen node a pod takes.
//  - GPU-selection strategies for sharing pods (FGD simulator, hkust-adsl/kubernetes-scheduler-simulator
//    pkg/simulator/plugin/open_gpu_share.go allocateGpuId). FGD's own selector lives with its score
//    (fgd_score.h).
//  - select_devices: the device rules of a scheduling cycle (ScheduleResult in sched/scheduler.h) as
//    one function, for the scheduler and for callers that pack pods without one (the simulator's
//    scale-up estimate).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// The devices a pod takes on node n, by the rules of ScheduleResult (sched/scheduler.h):
///  - gpus (nvidia.com/gpu): whole GPUs: the lowest-index fully free plain GPUs (lowest_free_gpus);
///    a fraction of a GPU: the plain GPU with the least free gpu_milli that still fits, first index on
///    ties ("best", best_fit_gpu); on a node time-sliced without renaming: num_gpu replicas.
///  - shared_replicas (nvidia.com/gpu.shared): shared_replicas replicas.
///    Replicas are taken one at a time on the time-sliced GPU with the most free replicas, lowest index
///    on ties, and listed ascending.
///  - mig: per MIG request in the pod's order, the free devices of its profile with the lowest
///    (GPU index, start).
/// It takes from what is free and does not check that the pod fits: when the node lacks devices the
/// lists are shorter than the request, or a fraction gets GPU index -1, and
/// ClusterState::can_allocate refuses the result. The scheduler uses it on nodes with MIG or
/// time-sliced GPUs and for pods with MIG or nvidia.com/gpu.shared requests; on other nodes its policy's
/// GpuSelector places a fraction, which may differ from "best".
DeviceAssignment select_devices(const Pod& pod, const ClusterState& state, NodeId n);

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
