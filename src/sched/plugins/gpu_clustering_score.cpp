#include "sched/plugins/gpu_clustering_score.h"

#include <algorithm>

namespace gpufleet::sched {

int64_t GpuClusteringScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  if (!pod.is_gpu_pod()) return 0;
  const size_t kind = pod.gpu_milli < kGpuMilliPerGpu ? 0 : static_cast<size_t>(std::clamp(pod.num_gpu, 1, kMaxGpusPerPod));
  const auto& kinds = state.gpu_pod_kinds(n);
  int distinct = 0;
  for (int32_t c : kinds) distinct += c > 0;
  const int64_t base = int64_t{25} * (8000 - state.gpu_free_milli_total(n)) / 8000;
  if (kinds[kind] > 0) return static_cast<int32_t>(base + (distinct == 1 ? 75 : 50));
  return static_cast<int32_t>(base + (distinct == 0 ? 25 : 0));
}

}  // namespace gpufleet::sched
