// GpuPacking policy (FGD paper baseline; simulator pkg/simulator/plugin/gpu_packing_score.go
// getPackingScore). Prefer, in order: partly used GPUs, then free GPUs on a used node, then free nodes.
//   all GPUs of the node free:          max(33 - n_gpus, n_gpus)
//   otherwise take the num_gpu GPUs with the least free gpu_milli that fit (stable by index);
//     k > 0 of them fully free:         max(50 - k, 33)
//     none fully free:                  max(100 - (sum over them of free*100/1000) / 10, 50)  (integers)
//   a CPU-only pod scores 0.
#pragma once

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class GpuPackingScore final : public ScorePlugin, public NamedPlugin<"GpuPackingScore"> {
 public:
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
