// DotProd policy (Tetris, Grandl et al., SIGCOMM'14, as the FGD simulator implements it:
// pkg/simulator/plugin/dot_product_score.go with dimext "merge" and norm "max").
//   node vector v = [cpu_free_milli / 128000, sum of GPU free gpu_milli / 8000]
//   pod vector  r = [cpu_milli / 128000,      num_gpu * gpu_milli / 8000]
//   score = int64(100 * (1 - (v . r) / 2))     (smaller dot product scores higher; truncated)
// 128000 and 8000 are the simulator's MaxSpecCpu and MaxSpecGpu (largest node: 128 vCPU, 8 GPUs).
#pragma once

#include "sched/framework/interface.h"

namespace gpufleet::sched {

inline constexpr double kMaxSpecCpuMilli = 128000.0;  ///< FGD simulator MaxSpecCpu
inline constexpr double kMaxSpecGpuMilli = 8000.0;    ///< FGD simulator MaxSpecGpu

class DotProductScore final : public ScorePlugin, public NamedPlugin<"DotProductScore"> {
 public:
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
