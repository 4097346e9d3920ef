// Placing a Kubernetes workload on a cluster, as kube-scheduler (with the NVIDIA device plugin and the
// ResourceQuota admission plugin in front of it) would: the engine behind `gpufleet place`. No I/O.
//
// Steps:
//  1. Pods already bound (spec.nodeName set) are bound first, in input order, to that node and its
//     lowest free devices, as the kubelet admits them; one that does not fit is pending with the
//     kubelet's reason ("OutOf<resource>", or "node <n> not found"). They exist, so their namespace's
//     quota usage counts them even above the hard limit (QuotaTracker::charge_existing).
//  1a. DaemonSets (PlaceInput::daemon_sets): the daemon controller's pods, one per node each admits
//     (sched/daemon_set.h: nodeSelector, required node affinity, NoSchedule/NoExecute taints against
//     its tolerations and the controller's defaults), named <daemonset>-<node> and pinned to their
//     node by a required matchFields metadata.name term. They exist before the workload: after the
//     pods of step 1, they pass quota admission and the scheduling queue (priority order, preemption
//     included) before any other pod, so they count against their nodes' allocatable first. One that
//     does not fit its node is pending with kube's FitError (its node's reason, the other nodes under
//     "didn't match Pod's node affinity/selector": sched/plugins/node_affinity.h). They are reported
//     like every pod. A workload pod with the name of one of them is a UsageError.
//  2. ResourceQuota admission, in creation (input) order: the API server admits or rejects each pod
//     when it is created (admit/resource_quota.h). Rejected pods never reach the scheduler.
//  3. The scheduling queue: kube's activeQ order, the profile's QueueSort (PrioritySort: higher
//     priority first, then creation order). One cycle per pod (sched/scheduler.h) with the policy's
//     filters in kube's order (TaintToleration, NodeAffinity, NodeResourcesFit, the GPU filters).
//  3a. Before the single pods: the Kueue workloads (admission, then their gangs) and the pod groups,
//     all or nothing (place/queued_placement.h). A pod group's members pass ResourceQuota admission
//     in step 2 like every pod; Kueue workloads' pods are not charged to ResourceQuota. When a single
//     pod's preemption evicts a gang member, the whole gang is released and pending (a gang never
//     stays below its minimum holding GPUs).
//  4. A pod no node admits may preempt (kube DefaultPreemption, added to the policy's profile as its
//     PostFilter: sched/plugins/default_preemption.h) when its
//     preemptionPolicy allows it: the victims on the chosen node are evicted (their quota released)
//     and the pod is bound there (its nominated node). As a controller would recreate them, the
//     victims then go through quota admission again and back into the queue at their priority,
//     behind the pods already waiting there. Otherwise the pod stays pending with kube's FitError
//     message followed by the preemption message ("preemption: 0/N nodes are available: ...").
//     Before preemption, kube's DynamicResources PostFilter (sched/plugins/dynamic_resources.h): when
//     it deallocated one of the pod's claims, the pod goes back into the queue, behind the pods
//     waiting at its priority, for another cycle (kube requeues it on the claim's update).
//
// Deterministic: the same input and seed give the same result (the seed only feeds policies that
// draw random numbers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inputs/place/place_input.h"
#include "queue/kueue_scheduler.h"  // EventRecord

namespace gpufleet::place {

/// A bound pod.
/// The MPS share a pod got (k8s-device-plugin sharing.mps): each replica it holds is one MPS client
/// limited to 1/replicas of its GPU (model/node.h mps_pinned_device_mem_limit_mib,
/// mps_active_thread_percentage). Reported, not enforced: a pod states no GPU memory need.
struct MpsShare {
  int32_t replicas = 1;                          ///< per GPU on the node
  int64_t pinned_device_mem_limit_mib = 0;       ///< per client; 0 = the GPU model's memory is unknown
  int32_t active_thread_percentage = 0;          ///< per client, percent of the GPU's SMs
};

/// The memory-based share a pod got on each of its cards (model/gpu_memory_share.h), enforced as a
/// hard limit per card.
struct GpuMemoryShareInfo {
  std::string scheduler;        ///< "HAMi" or "KAI-Scheduler"
  int64_t memory_mib = 0;       ///< per card (memory_share_request_mib of the node's card memory)
  int32_t cores_percentage = 0; ///< per card (HAMi gpucores, clamped to 100; 0 under KAI)
};

struct Placement {
  std::string pod;                 ///< "namespace/name"
  std::string node;
  std::vector<int32_t> gpus;       ///< GPU indices on the node (empty for a CPU-only pod)
  std::optional<std::string> mig;  ///< MIG profile of the device, e.g. "3g.40gb"; nullopt otherwise
  std::vector<std::string> preempted;  ///< pods evicted to make room, "namespace/name"
  int32_t priority = 0;
  bool prebound = false;           ///< bound by spec.nodeName, not scheduled
  /// Set when the pod holds MPS replicas (its node shares GPUs by MPS); nullopt otherwise, also under
  /// time-slicing.
  std::optional<MpsShare> mps;
  /// Set for a memory-share pod (Pod::gpu_memory_share); its cards are `gpus`.
  std::optional<GpuMemoryShareInfo> gpu_memory;
  /// With PlaceOptions::record_top_nodes: the nodes that shared the best score when the pod was
  /// scheduled (it went to one of them by the policy's tie rule), in node rank order; else empty.
  std::vector<std::string> top_nodes;
  /// Dynamic Resource Allocation: the devices of the pod's ResourceClaims, claim by claim in
  /// spec.resourceClaims order (the ClusterState's allocation); empty for a pod without claims.
  std::vector<DraClaimAllocation> claims;
};

/// A pod that is not running, and why (kube's wording).
struct Unplaced {
  std::string pod;     ///< "namespace/name"
  std::string reason;
  int32_t priority = 0;
  /// In quota_rejected: a preemption victim refused when it was re-created (step 4), not when the
  /// input's pod was first created (step 2).
  bool recreated = false;
};

struct PlaceResult {
  std::string policy;
  size_t node_count = 0;
  std::vector<Placement> placements;    ///< in binding order; a preempted pod's entry is removed
  std::vector<Unplaced> pending;        ///< unschedulable, in queue order
  std::vector<Unplaced> quota_rejected; ///< refused by ResourceQuota admission, in creation order
  /// Device-plugin GPUs plus the GPUs NVIDIA's DRA driver publishes in node-local ResourceSlices
  /// (model/dra_gpu_share.h dra_gpus_by_node), in gpu_milli.
  int64_t gpu_capacity_milli = 0;
  /// At the end: device-plugin allocations plus the allocated claims' devices by their GPU share
  /// (DraGpuShares).
  int64_t gpu_used_milli = 0;
  int32_t preemptions = 0;              ///< victims evicted in all
  std::vector<queue::EventRecord> admissions;  ///< Kueue's decisions, in order
};

/// "namespace/name" of a pod ("default" when the namespace is empty).
std::string pod_key(const Pod& pod);

/// Places the workload (see above). Throws UsageError for an unknown policy, std::invalid_argument
/// for nodes or quotas the model refuses (negative capacity, bad quota quantities).
PlaceResult place_workload(const PlaceInput& input, const PlaceOptions& options);

}  // namespace gpufleet::place
