#include "sched/plugins/dot_product_score.h"

namespace gpufleet::sched {

int64_t DotProductScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const double v_cpu = static_cast<double>(state.cpu_free_milli(n)) / kMaxSpecCpuMilli;
  const double v_gpu = static_cast<double>(state.gpu_free_milli_total(n)) / kMaxSpecGpuMilli;
  const double r_cpu = static_cast<double>(pod.nonzero_cpu_milli()) / kMaxSpecCpuMilli;
  const double r_gpu = static_cast<double>(pod.gpu_request_milli()) / kMaxSpecGpuMilli;
  if (v_cpu < r_cpu || v_gpu < r_gpu) return 0;
  double dot = 0.0;
  dot += v_cpu * r_cpu;
  dot += v_gpu * r_gpu;
  return static_cast<int32_t>(100.0 * (1.0 - dot / 2.0));
}

}  // namespace gpufleet::sched
