// NodeResourcesFit (kube-scheduler pkg/scheduler/framework/plugins/noderesources/fit.go) and the one
// fit check every caller reuses, fits() (kube's exported Fits).
//
// fits(pod, state, n): whether node n of `state`, as it is now, has room for the pod, checked in this
// order, the first shortfall being the answer:
//  1. pods: the node's pod count is below max_pods ("Too many pods");
//  2. cpu, 3. memory: the pod's requests fit the node's allocatable minus what is requested there
//     ("Insufficient cpu", "Insufficient memory"; the actual requests, not the non-zero ones);
//  4. GPUs: GpuShareFit's rules (gpu_share_fit.h): nvidia.com/gpu whole or shared, the GPU model
//     constraint, MIG devices, time-sliced replicas; then, for a memory-share pod, GpuMemoryShareFit's
//     (gpu_memory_share_fit.h).
// It is the NodeResourcesFit Filter followed by the GpuShareFit Filter, so it answers exactly what
// the profiles' filters decide about resources. It needs nothing but the state, so it also serves
// estimates on template nodes: a ClusterState holding one empty node per node pool or node class
// (the autoscaler's estimator, gpufleet's node classes, the allocation bound).
// Difference from kube: kube's Fits lists every insufficient resource; this returns the first.
//
// Score (NodeResourcesFit's scoringStrategy LeastAllocated, the default; fit.go, least_allocated.go,
// resource_allocation.go; v1.20 had it as the plugin NodeResourcesLeastAllocated), over the
// resources of NodeResourcesFitArgs (default cpu and memory, weight 1 each):
//   requested_r = the node's non-zero requested (ClusterState::nonzero_cpu_requested_milli, ...)
//                 + the pod's non-zero request (Pod::nonzero_cpu_request_milli, ...); for
//                 nvidia.com/gpu the actual gpu_milli used + the pod's (a pod asking none skips it)
//   score_r     = (allocatable_r - requested_r) * 100 / allocatable_r, 0 when requested_r >
//                 allocatable_r or allocatable_r == 0
//   score       = sum_r score_r * w_r / sum_r w_r (integer division), where the current release
//                 leaves a resource with allocatable 0 out of both sums and v1.20 counts it (score 0).
// Only in profiles that list it at Score (policy_registry.h: default-scheduler); `leastallocated`
// is gpufleet's own variant (resource_allocation_score.h).
#pragma once

#include <string_view>

#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

/// Steps 1-3 above (NodeResourcesFit's own Filter): kFits, NodeResourcesFit::kTooManyPods,
/// kInsufficientCpu or kInsufficientMemory.
FilterCode fits_pods_cpu_memory(const Pod& pod, const ClusterState& state, NodeId n);

/// Steps 1-4 above: kFits or the first shortfall (NodeResourcesFit's or GpuShareFit's code).
FilterCode fits(const Pod& pod, const ClusterState& state, NodeId n);

class NodeResourcesFit final : public FilterPlugin, public ScorePlugin, public NamedPlugin<"NodeResourcesFit"> {
 public:
  /// Throws ProfileError for arguments validate_plugin_args refuses.
  explicit NodeResourcesFit(const NodeResourcesFitArgs& args = {});
  /// fit.go's reasons: kube's insufficient-resource reasons, all Unschedulable (the resources free
  /// with the pods preemption evicts).
  static constexpr FilterReason kReasons[] = {
      {"Insufficient cpu", true}, {"Insufficient memory", true}, {"Too many pods", true}};
  static constexpr FilterCode kInsufficientCpu{kReasons[0]};
  static constexpr FilterCode kInsufficientMemory{kReasons[1]};
  static constexpr FilterCode kTooManyPods{kReasons[2]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// fits_pods_cpu_memory.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// LeastAllocated (see above), 0..100; a function of the pod and node n's usage.
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;

 private:
  int64_t weight_[3] = {0, 0, 0};  // cpu, memory, nvidia.com/gpu; 0 = not scored
  KubeRelease release_;
};

}  // namespace gpufleet::sched
