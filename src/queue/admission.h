// What admission decides and reports, shared by the KueueScheduler (queue/kueue_scheduler.h) and its
// parts (flavor assignment, preemption, the scheduler state): a workload's id and state, the flavors
// assigned to its pod sets, the events in Kueue's words, what an admitted pod set injects into its
// pods, a ClusterQueue's status, and the placement check a caller may add. Sources: kubernetes-sigs/
// kueue apis/kueue/v1beta1/workload_types.go (Admission, PodSetAssignment), clusterqueue_types.go
// (status), pkg/scheduler/scheduler.go (events and conditions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/scheduling_constraints.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"

namespace gpufleet::queue {

/// A workload's index in submission order.
using WorkloadId = uint32_t;

enum class WorkloadState {
  kPending,    ///< queued (or waiting for its requeue backoff)
  kAdmitted,   ///< quota reserved (QuotaReserved and Admitted: gpufleet models no AdmissionChecks)
  kFinished,   ///< finished() was called: quota released for good
};

/// The flavor chosen for one pod set (Kueue's Admission.podSetAssignments[]).
struct PodSetAssignment {
  std::string name;                                            ///< pod set name
  int32_t count = 0;                                           ///< pods admitted (partial admission: < PodSet::count)
  std::vector<std::pair<std::string, std::string>> flavors;    ///< resource -> flavor, sorted by resource
  std::vector<std::pair<std::string, ResourceAmount>> usage;   ///< resource -> amount for all `count` pods
};

/// Where a workload was admitted.
struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_sets;  ///< in the workload's pod set order
  bool borrowing = false;                  ///< some resource is above the ClusterQueue's nominal quota
};

/// What happened to a workload, in Kueue's words (Workload conditions and events).
struct WorkloadEvent {
  enum class Type {
    kAdmitted,   ///< QuotaReserved + Admitted; message "Quota reserved in ClusterQueue <cq>"
    kPending,    ///< first time (and each time the reason changes) a workload could not be admitted
    kPreempted,  ///< evicted by another's admission; reason InClusterQueue, InCohortReclamation,
                 ///< InCohortFairSharing or InCohortReclaimWhileBorrowing; `by` names the preemptor
    kEvicted,    ///< evicted for another cause: PodsReadyTimeout, or the caller's (evict())
    kRequeued,   ///< back in its queue after the backoff
    kFinished,
  };
  double time_s = 0;
  WorkloadId workload = 0;
  Type type = Type::kPending;
  std::string cluster_queue;
  /// Condition reason (e.g. "Preempted"/"InCohortReclamation", "PodsReadyTimeout", "Pending").
  std::string reason;
  /// Human text as Kueue writes it, e.g. "couldn't assign flavors to pod set main: insufficient unused
  /// quota for nvidia.com/gpu in flavor h100, 4 more needed", "Preempted to accommodate a workload (UID:
  /// ..) due to reclamation within the cohort"; gpufleet adds which cohort member holds the quota.
  std::string message;
  std::string by;  ///< kPreempted: the preemptor's key
};

/// gpufleet's placement-aware admission: before admitting `workload` with `admission`, may the
/// cluster hold the admitted pods now? nullopt = yes (the caller may keep the placement it found and
/// bind it when the kAdmitted event comes), otherwise why not. A refusal makes the admission's
/// flavors count as not fitting and the flavors are assigned again (kueue_scheduler.h); the first
/// refusal's reason is the pending message when nothing else admits the workload.
class PlacementCheck {
 public:
  virtual ~PlacementCheck() = default;
  virtual std::optional<std::string> check(WorkloadId id, const Workload& workload, const Admission& admission) = 0;
  /// The same question when the admitted workloads `victims` are preempted first, as part of this
  /// admission: answer as if their pods were gone (they are preempted only when the answer is yes).
  /// The default asks check(), where the victims' pods still count: callers that cannot set them
  /// aside admit a preempting workload only when its pods fit beside them.
  virtual std::optional<std::string> check_preempting(WorkloadId id, const Workload& workload, const Admission& admission,
                                                      const std::vector<WorkloadId>& /*victims*/) {
    return check(id, workload, admission);
  }
};

/// What Kueue injects into the pods of an admitted pod set (kueue site/content/en/docs/concepts/
/// resource_flavor.md): the nodeLabels of the ResourceFlavors it was assigned, as node selector
/// entries, and their tolerations, each once, in flavor then field order.
struct FlavorInjection {
  Labels node_selector;
  std::vector<Toleration> tolerations;
  bool empty() const { return node_selector.empty() && tolerations.empty(); }
};

/// The injection of `assignment`'s flavors (names `objects` does not define add nothing).
FlavorInjection flavor_injection(const KueueObjects& objects, const PodSetAssignment& assignment);

/// Per ClusterQueue status (ClusterQueue .status and Kueue's metrics).
struct ClusterQueueStatus {
  std::string name;
  std::string cohort;
  int32_t pending_workloads = 0;     ///< status.pendingWorkloads
  int32_t admitted_workloads = 0;    ///< status.admittedWorkloads
  /// status.flavorsUsage: (flavor, resource) -> usage, and the part above nominal quota (borrowed).
  struct FlavorUsage {
    std::string flavor;
    std::string resource;
    ResourceAmount total = 0;
    ResourceAmount borrowed = 0;
    ResourceAmount nominal = 0;
  };
  std::vector<FlavorUsage> flavors_usage;  ///< every (flavor, resource) of the spec, in spec order
  int64_t weighted_share = 0;              ///< status.fairSharing.weightedShare
};

/// The event type's name: "Admitted", "Pending", "Preempted", "Evicted", "Requeued", "Finished".
const char* event_type_name(WorkloadEvent::Type type);

/// A WorkloadEvent as outputs show it: names instead of ids.
struct EventRecord {
  double time_s = 0;
  std::string workload;       ///< the caller's name for it ("namespace/name" in place, the job's name in simulate)
  std::string type;           ///< event_type_name
  std::string cluster_queue;  ///< never empty: the workload's ClusterQueue when the event names none
  std::string reason;
  std::string message;
  std::string by;             ///< kPreempted: the preemptor
};

}  // namespace gpufleet::queue
