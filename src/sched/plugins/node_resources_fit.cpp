#include "sched/plugins/node_resources_fit.h"

namespace gpufleet::sched {

FilterCode NodeResourcesFit::filter(const Pod& pod, const ClusterState& state, NodeId n) const {
  if (state.pod_count(n) >= state.node(n).max_pods) return FilterCode::kTooManyPods;
  if (pod.cpu_milli > state.cpu_free_milli(n)) return FilterCode::kInsufficientCpu;
  if (pod.memory_bytes > state.memory_free_bytes(n)) return FilterCode::kInsufficientMemory;
  return FilterCode::kFits;
}

}  // namespace gpufleet::sched
