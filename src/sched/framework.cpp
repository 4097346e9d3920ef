#include "sched/framework.h"

namespace gpufleet::sched {

std::string_view filter_reason(FilterCode code) {
  switch (code) {
    case FilterCode::kFits: return "fits";
    case FilterCode::kInsufficientCpu: return "Insufficient cpu";
    case FilterCode::kInsufficientMemory: return "Insufficient memory";
    case FilterCode::kTooManyPods: return "Too many pods";
    case FilterCode::kInsufficientGpu: return "Insufficient nvidia.com/gpu";
    case FilterCode::kGpuModelMismatch: return "node(s) didn't match pod's GPU model constraint";
    case FilterCode::kUntoleratedTaint: return "node(s) had untolerated taint(s)";
    case FilterCode::kNodeAffinityMismatch: return "node(s) didn't match Pod's node affinity/selector";
    case FilterCode::kInsufficientMig: return "Insufficient nvidia.com/mig-<profile>";
    case FilterCode::kInsufficientGpuShared: return "Insufficient nvidia.com/gpu.shared";
    case FilterCode::kSharedRequestAboveOne:
      return "node(s) refuse more than one time-sliced GPU replica per pod (failRequestsGreaterThanOne)";
    case FilterCode::kAntiAffinityRulesNotMatch: return "node(s) didn't match pod anti-affinity rules";
    case FilterCode::kExistingAntiAffinityRulesNotMatch: return "node(s) didn't satisfy existing pods anti-affinity rules";
    case FilterCode::kNodeUnschedulable: return "node(s) were unschedulable";
    case FilterCode::kAffinityRulesNotMatch: return "node(s) didn't match pod affinity rules";
    case FilterCode::kCount: break;
  }
  return "unknown";
}

FilterCycle::FilterCycle(std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod,
                         const ClusterState& state)
    : filters_(filters), pod_(&pod), data_(filters.size()) {
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (filters_[i]->filter_cacheable()) continue;
    data_[i] = filters_[i]->pre_filter(pod, state);
    if (data_[i]) ++uncached_;
  }
}

FilterCode FilterCycle::run(const ClusterState& state, NodeId n) const {
  for (size_t i = 0; i < filters_.size(); ++i) {
    FilterCode code = FilterCode::kFits;
    if (filters_[i]->filter_cacheable()) code = filters_[i]->filter(*pod_, state, n);
    else if (data_[i]) code = filters_[i]->filter_in_cycle(*pod_, state, n, *data_[i]);
    if (code != FilterCode::kFits) return code;
  }
  return FilterCode::kFits;
}

FilterCode FilterCycle::run_uncached(const ClusterState& state, NodeId n) const {
  if (uncached_ == 0) return FilterCode::kFits;
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (!data_[i]) continue;
    const FilterCode code = filters_[i]->filter_in_cycle(*pod_, state, n, *data_[i]);
    if (code != FilterCode::kFits) return code;
  }
  return FilterCode::kFits;
}

void FilterCycle::add_pod(const ClusterState& state, NodeId n, const BoundPod& changed) {
  for (size_t i = 0; i < filters_.size(); ++i)
    if (data_[i]) filters_[i]->add_pod(*pod_, state, n, changed, *data_[i]);
}

void FilterCycle::remove_pod(const ClusterState& state, NodeId n, const BoundPod& changed) {
  for (size_t i = 0; i < filters_.size(); ++i)
    if (data_[i]) filters_[i]->remove_pod(*pod_, state, n, changed, *data_[i]);
}

std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count) {
  std::vector<int32_t> out;
  auto free = state.gpu_free_milli(n);
  const bool sharing = state.has_gpu_sharing(n);
  for (size_t g = 0; g < free.size() && static_cast<int32_t>(out.size()) < count; ++g)
    if (free[g] == kGpuMilliPerGpu && (!sharing || state.gpu_kind(n, static_cast<int32_t>(g)) == GpuKind::kPlain))
      out.push_back(static_cast<int32_t>(g));
  return out;
}

int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli) {
  int32_t best = -1;
  for (size_t g = 0; g < gpu_free_milli.size(); ++g) {
    const int32_t left = gpu_free_milli[g];
    if (left >= gpu_milli && (best < 0 || left < gpu_free_milli[static_cast<size_t>(best)])) best = static_cast<int32_t>(g);
  }
  return best;
}

}  // namespace gpufleet::sched
