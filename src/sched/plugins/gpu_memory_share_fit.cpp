#include "sched/plugins/gpu_memory_share_fit.h"

#include <algorithm>
#include <array>

namespace gpufleet::sched {
namespace {

constexpr size_t kRefusals = static_cast<size_t>(CardRefusal::kComputeUnitsExhausted) + 1;

FilterCode hami_code(CardRefusal why) {
  switch (why) {
    case CardRefusal::kTimeSlicingExhausted: return GpuMemoryShareFit::kCardTimeSlicingExhausted;
    case CardRefusal::kInsufficientMemory: return GpuMemoryShareFit::kCardInsufficientMemory;
    case CardRefusal::kInsufficientCore: return GpuMemoryShareFit::kCardInsufficientCore;
    case CardRefusal::kExclusiveConflict: return GpuMemoryShareFit::kExclusiveDeviceAllocateConflict;
    case CardRefusal::kComputeUnitsExhausted: return GpuMemoryShareFit::kCardComputeUnitsExhausted;
    default: return GpuMemoryShareFit::kNoShareableCard;
  }
}

}  // namespace

FilterCode gpu_memory_share_fits(const Pod& pod, const ClusterState& state, NodeId n) {
  if (!pod.gpu_memory_share) return FilterCode::kFits;
  const GpuMemoryShare& request = *pod.gpu_memory_share;
  const bool hami = request.scheduler == GpuMemoryScheduler::kHami;
  const Node& node = state.node(n);
  if (!state.memory_share_node_fits(n, request))
    return hami ? GpuMemoryShareFit::kNoHamiDevices : GpuMemoryShareFit::kKaiInsufficientGpus;
  if (request.cards > node.gpu_count)
    return hami ? GpuMemoryShareFit::kNodeInsufficientDevice : GpuMemoryShareFit::kKaiInsufficientGpus;
  std::array<int32_t, kRefusals> counts{};
  int32_t fit = 0;
  for (int32_t g = 0; g < node.gpu_count; ++g) {
    const CardRefusal why = state.memory_share_refusal(n, g, request);
    if (why == CardRefusal::kFits && ++fit >= request.cards) return FilterCode::kFits;
    ++counts[static_cast<size_t>(why)];
  }
  if (!hami) return GpuMemoryShareFit::kKaiInsufficientGpuMemory;
  if (fit > 0) return GpuMemoryShareFit::kAllocatedCardsInsufficientRequest;
  size_t most = 1;
  for (size_t i = 2; i < kRefusals; ++i)
    if (counts[i] > counts[most]) most = i;
  return hami_code(static_cast<CardRefusal>(most));
}

FilterCode GpuMemoryShareFit::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return gpu_memory_share_fits(pod, state, n);
}

}  // namespace gpufleet::sched
