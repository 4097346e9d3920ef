#include "sched/plugins/best_fit_score.h"

#include "sched/plugins/dot_product_score.h"

namespace gpufleet::sched {

int64_t BestFitScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const double free[2] = {static_cast<double>(state.cpu_free_milli(n)), static_cast<double>(state.gpu_free_milli_total(n))};
  const double req[2] = {static_cast<double>(pod.nonzero_cpu_milli()), static_cast<double>(pod.gpu_request_milli())};
  const double max_spec[2] = {kMaxSpecCpuMilli, kMaxSpecGpuMilli};
  double raw = 0.0;
  for (int i = 0; i < 2; ++i) {
    if (free[i] < req[i]) return 0;
    raw += (free[i] - req[i]) / max_spec[i] * 0.5;
  }
  return static_cast<int32_t>((1.0 - raw) * 100.0);
}

}  // namespace gpufleet::sched
