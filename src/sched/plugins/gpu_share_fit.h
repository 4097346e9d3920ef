// GpuShareFit filter: the GPU part of a pod's request must fit on the node.
// Source: FGD simulator pkg/simulator/plugin/open_gpu_share.go (GpuSharePlugin.Filter) and
// pkg/type/open-gpu-share/cache/gpunodeinfo.go (AllocateGpuId); ../shared/reference/fgd-policies.md 2.
//  - a CPU-only pod passes;
//  - the node needs GPUs and a model allowed by the pod's gpu_spec (gpu_spec_allows);
//  - at least num_gpu of the node's GPUs must each have gpu_milli free (so a sharing pod needs one
//    GPU with its fraction free, a whole-GPU pod needs num_gpu fully free GPUs).
#pragma once

#include "sched/framework.h"

namespace gpufleet::sched {

class GpuShareFit final : public FilterPlugin {
 public:
  std::string_view name() const override { return "GpuShareFit"; }
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const override;
};

/// Number of the node's GPUs with at least gpu_milli free.
int32_t gpus_with_free(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli);

}  // namespace gpufleet::sched
