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
///  - gpus (nvidia.com/gpu): whole GPUs: select_whole_gpus (the lowest-index fully free plain GPUs,
///    from one NUMA node on a node whose kubelet aligns devices);
///    a fraction of a GPU: the plain GPU with the least free gpu_milli that still fits, first index on
///    ties ("best", best_fit_gpu); on a node time-sliced without renaming: num_gpu replicas.
///  - shared_replicas (nvidia.com/gpu.shared): shared_replicas replicas.
///    Replicas are taken one at a time on the time-sliced GPU with the most free replicas, lowest index
///    on ties, and listed ascending.
///  - mig: per MIG request in the pod's order, the free devices of its profile with the lowest
///    (GPU index, start).
///  - a memory-share pod (Pod::gpu_memory_share): gpus = select_memory_share_cards.
/// It takes from what is free and does not check that the pod fits: when the node lacks devices the
/// lists are shorter than the request, or a fraction gets GPU index -1, and
/// ClusterState::can_allocate refuses the result. The scheduler uses it on nodes with MIG or
/// time-sliced GPUs and for pods with MIG or nvidia.com/gpu.shared requests; on other nodes its policy's
/// GpuSelector places a fraction, which may differ from "best".
DeviceAssignment select_devices(const Pod& pod, const ClusterState& state, NodeId n);

/// The cards of node n a memory-share pod takes: among the cards memory_share_refusal accepts, the
/// ones with the least free memory (best fit, packing the shared cards; KAI-Scheduler's default gpu
/// placementStrategy binpack), lowest index on ties, `cards` of them, ascending; fewer when the node
/// lacks them (ClusterState::can_allocate refuses the list). HAMi's default GPU policy (spread) is not
/// modelled.
std::vector<int32_t> select_memory_share_cards(const Pod& pod, const ClusterState& state, NodeId n);

/// "best": the GPU with the least free gpu_milli that still fits, first index on ties.
class BestFitGpuSelector final : public GpuSelector, public NamedPlugin<"best"> {
 public:
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

/// "random": uniform over the GPUs that fit, by reservoir sampling (k-th fitting GPU replaces the
/// choice when rng.intn(k) == 0), as the simulator does.
class RandomGpuSelector final : public GpuSelector, public NamedPlugin<"random"> {
 public:
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;
};

/// The lowest-index GPUs with all 1000 gpu_milli free, `count` of them (fewer if the node lacks them).
/// Only plain GPUs (GpuKind::kPlain) count: MIG and time-sliced GPUs are never given whole.
std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count);

/// Whole GPUs for a pod that asks for `count` of them on node n, ascending:
///  - a node without a NUMA layout (Node::gpu_numa_node empty) or whose Topology Manager policy is
///    none: lowest_free_gpus;
///  - otherwise, when one NUMA node holds `count` fully free plain GPUs: the lowest-index ones of the
///    NUMA node numa_node_for_whole_gpus chooses (best fit, which keeps the other NUMA nodes whole);
///  - otherwise lowest_free_gpus (best-effort admits the spread; under single-numa-node the
///    NodeResourceTopologyMatch filter has refused the node; restricted's "fewest NUMA nodes" for a
///    pod larger than one NUMA node is not modelled).
/// The kubelet's own device manager picks, among the NUMA nodes that hold the request, the lowest
/// NUMA ID (the narrowest hint, kubernetes pkg/kubelet/cm/topologymanager/policy.go, as
/// scheduler-plugins pkg/noderesourcetopology/filter.go notes); gpufleet assigns devices itself and
/// prefers best fit, which packs small pods and keeps sockets whole for larger ones. Fewer than
/// `count` when the node lacks them (can_allocate refuses the list).
std::vector<int32_t> select_whole_gpus(const ClusterState& state, NodeId n, int32_t count);

/// The NUMA node whole GPUs for a `count`-GPU pod come from on node n: among the NUMA nodes with at
/// least `count` fully free plain GPUs, the one with the fewest free, lowest NUMA ID on ties; -1 when
/// none has `count` free or the node has no NUMA layout. The one rule behind select_whole_gpus and
/// the NodeResourceTopologyMatch filter (sched/plugins/node_resource_topology_match.h).
int32_t numa_node_for_whole_gpus(const ClusterState& state, NodeId n, int32_t count);

/// Whether the kubelet's Topology Manager on node n admits the pod's whole GPUs: false only when the
/// node requires_single_numa_node() (model/node.h), the pod asks for whole GPUs (gpu_milli 1000), the
/// node is not time-sliced without renaming (replicas are not aligned here), and
/// numa_node_for_whole_gpus finds no NUMA node that holds them. The NodeResourceTopologyMatch filter
/// and the simulator's scale-up estimate both ask this.
bool single_numa_node_admits(const Pod& pod, const ClusterState& state, NodeId n);

/// Index of the GPU with the least free gpu_milli that still fits `gpu_milli`, first index on ties;
/// -1 if none fits. ("best" selection, FGD simulator open_gpu_share.go allocateGpuId.)
int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli);

}  // namespace gpufleet::sched
