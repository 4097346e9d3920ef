// Memory-based GPU sharing: a pod asks for GPU memory (and, under HAMi, a share of the SMs) on each
// of one or more cards, and a card is shared among such pods up to its memory. Two schedulers are
// modelled; docs/place.md ("Memory-based sharing: HAMi and KAI-Scheduler") walks through both.
//
//  - HAMi (github.com/Project-HAMi/HAMi): the resources nvidia.com/gpu (vGPUs, each from a different
//    physical card), nvidia.com/gpumem (MiB per vGPU), nvidia.com/gpumem-percentage (percent of the
//    card's memory) and nvidia.com/gpucores (percent of the card's SMs). A node is HAMi-managed when
//    its device plugin registered its cards in the annotation hami.io/node-nvidia-register
//    (pkg/device/nvidia/device.go RegisterAnnos); each card there has a vGPU count (deviceSplitCount,
//    default 10), its memory (devmem, MiB) and its cores (devcore, 100). Request defaults
//    (device.go GenerateResourceRequests, defaultExclusiveCoreIfNeeded): no gpumem and no percentage
//    means 100% of the card's memory (defaultMemory 0), and such a pod without gpucores gets gpucores
//    100 (the card exclusively); gpucores otherwise defaults to 0 (defaultCores).
//  - KAI-Scheduler (github.com/kai-scheduler/KAI-Scheduler, docs/gpu-sharing): the pod annotation
//    gpu-fraction (a portion of one card's memory, 0 < f < 1) or gpu-memory (MiB), optionally
//    gpu-fraction-num-devices cards, with schedulerName kai-scheduler. A card's memory is the node
//    label nvidia.com/gpu.memory floored to a multiple of 100 MiB, 100 MiB when the label is missing
//    (pkg/scheduler/api/node_info/node_info.go getNodeGpuMemory, DefaultGpuMemory); a fraction asks
//    int64(fraction * card memory) (GetResourceGpuMemory).
//
// Hard limits (both): on every card the memory of the pods holding it never exceeds the card's
// memory, and under HAMi their cores never exceed the card's cores and their count never exceeds its
// vGPU count (device.go Fit: CardInsufficientMemory, CardInsufficientCore, CardTimeSlicingExhausted).
// The rule is ClusterState::memory_share_refusal (model/cluster_state.h); the GpuMemoryShareFit
// filter (sched/plugins/gpu_memory_share_fit.h) applies it per node.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpufleet {

/// Which scheduler's memory-based sharing a pod asks for.
enum class GpuMemoryScheduler : uint8_t { kHami, kKai };

/// "HAMi", "KAI-Scheduler".
std::string_view gpu_memory_scheduler_name(GpuMemoryScheduler scheduler);

/// A pod's memory-based GPU request (Pod::gpu_memory_share). Such a pod has num_gpu == 0: its cards
/// are counted here, not as nvidia.com/gpu device-plugin GPUs.
struct GpuMemoryShare {
  GpuMemoryScheduler scheduler = GpuMemoryScheduler::kHami;
  /// Cards, each a different physical card of one node: HAMi nvidia.com/gpu (>= 1), KAI
  /// gpu-fraction-num-devices (default 1).
  int32_t cards = 1;
  /// Memory per card, MiB (HAMi nvidia.com/gpumem, KAI gpu-memory); 0 = memory_percentage (HAMi) or
  /// fraction (KAI) of the card.
  int64_t memory_mib = 0;
  /// HAMi nvidia.com/gpumem-percentage, 1..100 (default 100), used when memory_mib is 0.
  int32_t memory_percentage = 100;
  /// HAMi nvidia.com/gpucores, percent of the card's SMs, 0..100 (default 0; 100 when the pod asks
  /// for the whole memory without gpucores). Always 0 under KAI (no compute limit).
  int32_t cores_percentage = 0;
  /// KAI gpu-fraction, 0 < f < 1, used when memory_mib is 0 (0 under HAMi).
  double fraction = 0;
  bool operator==(const GpuMemoryShare&) const = default;
};

/// The memory one card of `card_memory_mib` MiB gives the pod, MiB: memory_mib when set; else HAMi
/// card * memory_percentage / 100 (integer division, device.go Fit), KAI int64(fraction * card)
/// (node_info.go GetResourceGpuMemory).
int64_t memory_share_request_mib(const GpuMemoryShare& request, int64_t card_memory_mib);

/// A HAMi-managed node's cards (Node::hami), as the device plugin registered them; every card of the
/// node alike (the memory is Node::gpu_memory_mib).
struct HamiDevices {
  int32_t split_count = 10;  ///< vGPUs per card (deviceSplitCount, HAMi's default 10), >= 1
  int32_t cores = 100;       ///< devcore: the card's cores in gpucores units (100 * deviceCoreScaling)
  bool operator==(const HamiDevices&) const = default;
};

/// KAI-Scheduler's memory of every GPU of a node from the label nvidia.com/gpu.memory (MiB): the
/// value floored to a multiple of 100; 100 (DefaultGpuMemory) when the label is missing (-1 here).
/// Values of a TiB or more are bytes and converted to MiB first (GPU feature discovery's old bug,
/// node_info.go checkGpuMemoryIsInMib).
int64_t kai_gpu_memory_mib(int64_t label_value);

/// Why a card cannot take one more card of a memory-share request (ClusterState::memory_share_refusal),
/// in the order of HAMi's checks (device.go Fit); the names are HAMi's reasons.
enum class CardRefusal : uint8_t {
  kFits,
  /// The card is a MIG or time-sliced GPU, or a device-plugin pod holds it (whole or a gpu_milli
  /// fraction): neither scheduler shares it.
  kNotShareable,
  kTimeSlicingExhausted,      ///< HAMi: as many pods as the card's vGPUs (CardTimeSlicingExhausted)
  kInsufficientMemory,        ///< free memory below the request (CardInsufficientMemory)
  kInsufficientCore,          ///< HAMi: free cores below gpucores (CardInsufficientCore)
  kExclusiveConflict,         ///< HAMi: gpucores 100 on a card in use (ExclusiveDeviceAllocateConflict)
  kComputeUnitsExhausted,     ///< HAMi: gpucores 0 on a card whose cores are all taken (CardComputeUnitsExhausted)
};

/// The gpu_milli that memory-share pods holding `used_mib` of a card of `card_mib` count as used in
/// ClusterState's accounting: 0 for none, else max(1, floor(1000 * used / card)) (at most 1000,
/// since used <= card). A function of the card's total, so binding and releasing in any order agree.
int32_t memory_share_gpu_milli(int64_t used_mib, int64_t card_mib);

}  // namespace gpufleet
