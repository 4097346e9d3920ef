// GpuShareFit filter: the GPU part of a pod's request must fit on the node.
// Source: FGD simulator pkg/simulator/plugin/open_gpu_share.go (GpuSharePlugin.Filter) and
// pkg/type/open-gpu-share/cache/gpunodeinfo.go (AllocateGpuId).
//  - a CPU-only pod passes;
//  - the node needs GPUs and a model allowed by the pod's gpu_spec (gpu_spec_allows);
//  - at least num_gpu of the node's GPUs must each have gpu_milli free (so a sharing pod needs one
//    GPU with its fraction free, a whole-GPU pod needs num_gpu fully free GPUs).
//
// NVIDIA device-plugin sharing (gpu-sharing.md s.2-3; ClusterState's GpuKind). On a node with MIG or
// time-sliced GPUs, or for a pod asking for MIG devices or nvidia.com/gpu.shared, each resource is
// counted as the device plugin advertises it and kube-scheduler's NodeResourcesFit compares requests
// with it (noderesources/fit.go, "Insufficient <resource>"):
//  - nvidia.com/gpu (num_gpu, gpu_milli): plain GPUs only, as above; on a node time-sliced without
//    renaming, the free replicas over its time-sliced GPUs (a fraction of a GPU never fits there);
//    on a renamed time-sliced node only its plain GPUs, i.e. none. Else "Insufficient nvidia.com/gpu".
//  - nvidia.com/gpu.shared (shared_replicas): the free replicas of a renamed time-sliced node, else
//    "Insufficient nvidia.com/gpu.shared".
//  - nvidia.com/mig-<profile> (mig_requests): the free MIG devices of that profile, for each profile
//    requested, else "Insufficient nvidia.com/mig-<profile>" (kInsufficientMig, worded per node with
//    each profile the node lacks, in the pod's order, as kube reports every insufficient resource).
//  - MPS replicas (TimeSlicing::strategy kMps) are counted exactly as time-slicing replicas; the
//    device plugin sets failRequestsGreaterThanOne by default under MPS, so the rule below applies.
//  - failRequestsGreaterThanOne (TimeSlicing::fail_requests_greater_than_one): a pod asking for more
//    than one replica (of nvidia.com/gpu or nvidia.com/gpu.shared, whichever the node time-slices)
//    is refused with kSharedRequestAboveOne. Divergence from kube: kube-scheduler binds
//    the pod (the replicas are there) and the kubelet then fails it at admission with
//    UnexpectedAdmissionError; the device plugin checks each container, gpufleet the pod's total
//    (the reader sums the containers), so a pod of two containers asking for one replica each is
//    refused here but runs on a real cluster.
// The checks run in this order (nvidia.com/gpu, nvidia.com/gpu.shared, MIG profiles in the pod's
// order) and the first failing one is the node's reason; kube reports every insufficient resource.
// A pod's gpu_spec, when set, applies to all of them.
#pragma once

#include <span>
#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// The rules above for node n as it is now: kFits or the first failing check. fits()
/// (node_resources_fit.h) runs it after the pods, CPU and memory checks.
FilterCode gpu_share_fits(const Pod& pod, const ClusterState& state, NodeId n);

class GpuShareFit final : public FilterPlugin, public NamedPlugin<"GpuShareFit"> {
 public:
  /// Resources are Unschedulable (preemption may free them), the GPU model and the device plugin's
  /// rule UnschedulableAndUnresolvable.
  static constexpr FilterReason kReasons[] = {
      {"Insufficient nvidia.com/gpu", true},
      {"node(s) didn't match pod's GPU model constraint", false},
      {"Insufficient nvidia.com/mig-<profile>", true, /*per_node=*/true},
      {"Insufficient nvidia.com/gpu.shared", true},
      // The device plugin's rule, whatever runs on the node.
      {"node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)", false},
  };
  /// nvidia.com/gpu: too few (plain) GPUs with the pod's fraction free, or replicas.
  static constexpr FilterCode kInsufficientGpu{kReasons[0]};
  static constexpr FilterCode kGpuModelMismatch{kReasons[1]};
  static constexpr FilterCode kInsufficientMig{kReasons[2]};
  static constexpr FilterCode kInsufficientGpuShared{kReasons[3]};
  static constexpr FilterCode kSharedRequestAboveOne{kReasons[4]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// gpu_share_fits.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// kInsufficientMig: "Insufficient nvidia.com/mig-<profile>" for each profile the node lacks, in the
  /// pod's order (the generic reason when it lacks none any more); else the code's reason.
  std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const override;
};

/// Number of the node's GPUs with at least gpu_milli free.
int32_t gpus_with_free(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli);

}  // namespace gpufleet::sched
