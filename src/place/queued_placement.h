// Gangs and Kueue workloads in `gpufleet place`: the pod groups (scheduler-plugins or Volcano
// PodGroup, model/pod_group.h) and the jobs queued in Kueue's LocalQueues (queue/workload.h), placed
// all or nothing before the single pods. No I/O.
//
// Steps (at one instant, t = 0):
//  1. Kueue: every queued workload is submitted in input order and KueueScheduler
//     (queue/kueue_scheduler.h) runs until it admits nothing more. With quota-only admission
//     (Kueue's default) an admitted workload's pods are then placed as a gang; when they do not fit,
//     they stay pending ("admitted by Kueue ... but its pods do not fit": upstream
//     kubernetes-sigs/kueue#4329). With placement-aware admission the gang is placed as the last
//     step of admission, so a workload is admitted only when the cluster holds it now.
//     Admitted pods get the ResourceFlavor's nodeLabels as node selectors and its tolerations, as
//     Kueue injects them; a pod set's topology request uses the flavor's Topology levels.
//  2. Pod groups, by priority then input order: place_gang (sched/gang_placement.h) with the
//     group's minMember; a group with fewer members than minMember is pending with coscheduling's
//     PreFilter message.
// A workload or group whose pods join an NVIDIA ComputeDomain (model/compute_domain.h) is confined to
// one NVLink domain, the level nvidia.com/gpu.clique required (sched/gang_placement.h
// confine_to_one_clique); when no clique holds it, it is pending with "no domain of
// nvidia.com/gpu.clique can hold <n> pods (ComputeDomain <ns>/<name> needs one NVLink domain): ...".
// Every workload and group that is not placed is pending with the reason; Kueue's decisions are
// listed as admission records.
#pragma once

#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "queue/kueue_objects.h"
#include "queue/kueue_scheduler.h"
#include "queue/workload.h"

namespace gpufleet::sched {
class Scheduler;
}
namespace gpufleet {
class GoRand;
}

namespace gpufleet::place {

/// A gang member bound by this step.
struct GangPod {
  Pod pod;                    ///< as bound (with the node selectors Kueue injected)
  std::string gang;           ///< "namespace/name" of its workload or pod group
  NodeId node = 0;
  std::vector<int32_t> gpus;  ///< distinct GPU indices
  std::string mig;            ///< MIG profiles, "" without
  std::vector<DraClaimAllocation> claims;  ///< its ResourceClaims' allocations (model/dra.h), empty without
};

/// What this step decided.
struct QueuedOutcome {
  std::vector<GangPod> placed;
  /// (key of the workload or group, reason) of those not placed, in decision order.
  std::vector<std::pair<std::string, std::string>> pending;
  std::vector<int32_t> pending_priority;   ///< parallel to pending
  std::vector<queue::EventRecord> admissions;  ///< Kueue's decisions, in order
};

/// Places the groups and workloads (see the top). `group_members[g]` are the pods of pod_groups[g]
/// (already past ResourceQuota admission), in input order. Throws std::invalid_argument as
/// KueueScheduler does for invalid objects.
QueuedOutcome place_queued(ClusterState& state, sched::Scheduler& scheduler, GoRand& rng, const queue::KueueObjects& kueue,
                           const std::vector<queue::Workload>& workloads, const std::vector<PodGroup>& pod_groups,
                           const std::vector<std::vector<Pod>>& group_members);

}  // namespace gpufleet::place
