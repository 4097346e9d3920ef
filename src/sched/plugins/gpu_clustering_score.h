// GpuClustering policy (FGD paper baseline; simulator pkg/simulator/plugin/gpu_clustering_score.go):
// keep GPU pods of the same kind together. A pod's kind is "share-gpu" (a fraction of one GPU) or
// "<n>-gpu" (n whole GPUs); a node's kinds are those of the GPU pods it holds.
//   base = 25 * (8000 - sum of GPU free gpu_milli) / 8000            (integer arithmetic)
//   score = base + 75 if the node holds only the pod's kind
//           base + 50 if it holds the pod's kind and others
//           base + 25 if it holds no GPU pod
//           base      otherwise;  a CPU-only pod scores 0 everywhere.
#pragma once

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class GpuClusteringScore final : public ScorePlugin, public NamedPlugin<"GpuClusteringScore"> {
 public:
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
