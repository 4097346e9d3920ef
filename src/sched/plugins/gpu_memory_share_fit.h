// GpuMemoryShareFit filter: a memory-share pod (Pod::gpu_memory_share, model/gpu_memory_share.h)
// must find its cards on the node. Inert (kFits) for every other pod.
//  - HAMi pod: the node must be HAMi-managed (Node::hami), else kNoHamiDevices; it must have at least
//    as many cards as the pod asks vGPUs (HAMi pkg/scheduler/score.go fitInDevices,
//    NodeInsufficientDevice: each vGPU of one pod is a different physical card); then each card is
//    checked with ClusterState::memory_share_refusal (HAMi pkg/device/nvidia/device.go Fit).
//  - KAI pod: the node must have GPUs and not be HAMi-managed, else kKaiInsufficientGpus; each card
//    is checked for memory (KAI pkg/scheduler/api/node_info/gpu_sharing_node_info.go
//    enoughResourcesOnGpu: card memory - allocated - request >= 0).
// The node fits when at least GpuMemoryShare::cards cards fit. Otherwise its reason is
// kAllocatedCardsInsufficientRequest when some card fits (HAMi's AllocatedCardsInsufficientRequest),
// else the card refusal most cards have (fewest-index refusal order of CardRefusal on ties); HAMi
// counts every card's reason ("1/1 CardInsufficientMemory"), gpufleet names one. A KAI pod's
// refusals all read kube-style as KAI words them (pkg/scheduler/api/common_info/pod_errors.go):
// "node(s) didn't have enough resources: GPU memory".
// All resource reasons are Unschedulable (preemption may free the card); the node's scheduler is
// UnschedulableAndUnresolvable.
#pragma once

#include <span>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// The rules above for node n as it is now. fits() (node_resources_fit.h) runs it after GpuShareFit.
FilterCode gpu_memory_share_fits(const Pod& pod, const ClusterState& state, NodeId n);

class GpuMemoryShareFit final : public FilterPlugin, public NamedPlugin<"GpuMemoryShareFit"> {
 public:
  static constexpr FilterReason kReasons[] = {
      {"node(s) have no HAMi-registered GPUs (NodeInsufficientDevice)", false},
      {"node(s) have fewer GPUs than the pod asks vGPUs (NodeInsufficientDevice)", false},
      {"node(s) had no free vGPU on a card (CardTimeSlicingExhausted)", true},
      {"node(s) had insufficient GPU memory on a card (CardInsufficientMemory)", true},
      {"node(s) had insufficient GPU cores on a card (CardInsufficientCore)", true},
      {"node(s) had no unused card for gpucores 100 (ExclusiveDeviceAllocateConflict)", true},
      {"node(s) had every card's cores taken (CardComputeUnitsExhausted)", true},
      {"node(s) had fewer fitting cards than the pod asks vGPUs (AllocatedCardsInsufficientRequest)", true},
      {"node(s) had no card free of device-plugin pods", true},
      {"node(s) didn't have enough resources: GPUs", false},
      {"node(s) didn't have enough resources: GPU memory", true},
  };
  static constexpr FilterCode kNoHamiDevices{kReasons[0]};
  static constexpr FilterCode kNodeInsufficientDevice{kReasons[1]};
  static constexpr FilterCode kCardTimeSlicingExhausted{kReasons[2]};
  static constexpr FilterCode kCardInsufficientMemory{kReasons[3]};
  static constexpr FilterCode kCardInsufficientCore{kReasons[4]};
  static constexpr FilterCode kExclusiveDeviceAllocateConflict{kReasons[5]};
  static constexpr FilterCode kCardComputeUnitsExhausted{kReasons[6]};
  static constexpr FilterCode kAllocatedCardsInsufficientRequest{kReasons[7]};
  static constexpr FilterCode kNoShareableCard{kReasons[8]};
  /// KAI pod: a node without GPUs, a HAMi node, or fewer cards than gpu-fraction-num-devices.
  static constexpr FilterCode kKaiInsufficientGpus{kReasons[9]};
  /// KAI pod: fewer cards with the memory free than it asks.
  static constexpr FilterCode kKaiInsufficientGpuMemory{kReasons[10]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// gpu_memory_share_fits.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
