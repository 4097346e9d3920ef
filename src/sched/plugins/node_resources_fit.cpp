#include "sched/plugins/node_resources_fit.h"

#include "sched/framework/validation.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/resource_allocation_score.h"

namespace gpufleet::sched {

FilterCode fits_pods_cpu_memory(const Pod& pod, const ClusterState& state, NodeId n) {
  if (state.pod_count(n) >= state.node(n).max_pods) return NodeResourcesFit::kTooManyPods;
  if (pod.cpu_milli > state.cpu_free_milli(n)) return NodeResourcesFit::kInsufficientCpu;
  if (pod.memory_bytes > state.memory_free_bytes(n)) return NodeResourcesFit::kInsufficientMemory;
  return FilterCode::kFits;
}

FilterCode fits(const Pod& pod, const ClusterState& state, NodeId n) {
  const FilterCode code = fits_pods_cpu_memory(pod, state, n);
  if (code.rejected()) return code;
  const FilterCode gpu = gpu_share_fits(pod, state, n);
  return gpu.rejected() || !pod.gpu_memory_share ? gpu : gpu_memory_share_fits(pod, state, n);
}

FilterCode NodeResourcesFit::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return fits_pods_cpu_memory(pod, state, n);
}

NodeResourcesFit::NodeResourcesFit(const NodeResourcesFitArgs& args) : release_(args.release) {
  if (FieldErrors errs = validate_plugin_args(args, "args"); !errs.empty()) throw ProfileError(std::move(errs));
  for (const ResourceSpec& r : args.resources) weight_[r.name == "cpu" ? 0 : r.name == "memory" ? 1 : 2] = r.weight;
}

int64_t NodeResourcesFit::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const Node& node = state.node(n);
  struct Resource {
    int64_t allocatable, requested;
  };
  const int64_t gpu_request = pod.gpu_request_milli();
  const int64_t gpu_allocatable = int64_t{node.gpu_count} * kGpuMilliPerGpu;
  const Resource resources[3] = {
      {node.cpu_milli, state.nonzero_cpu_requested_milli(n) + pod.nonzero_cpu_request_milli()},
      {node.memory_bytes, state.nonzero_memory_requested_bytes(n) + pod.nonzero_memory_request_bytes()},
      // resource_allocation.go: an extended resource the pod does not request is left out (0, 0).
      gpu_request == 0 ? Resource{0, 0} : Resource{gpu_allocatable, gpu_allocatable - state.gpu_free_milli_total(n) + gpu_request},
  };
  int64_t total = 0, weights = 0;
  for (size_t i = 0; i < 3; ++i) {
    if (weight_[i] == 0) continue;
    const Resource& r = resources[i];
    if (r.allocatable == 0 && release_ == KubeRelease::kCurrent) continue;  // leastResourceScorer skips it
    total += least_requested_score(r.requested, r.allocatable) * weight_[i];
    weights += weight_[i];
  }
  return weights == 0 ? 0 : total / weights;
}

}  // namespace gpufleet::sched
