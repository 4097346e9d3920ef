// KueueScheduler: Kueue's admission over time, the state / decision half of Kueue (its cache,
// queue manager and scheduler; kubernetes-sigs/kueue pkg/cache, pkg/queue, pkg/scheduler). No I/O and
// no nodes: placement is the caller's (quota-only admission, Kueue's default), or the caller answers
// a PlacementCheck before each admission (gpufleet's placement-aware admission).
//
// Semantics, each from kueue site/content/en/docs/concepts/ (cluster_queue.md, preemption.md,
// fair_sharing.md, admission.md) and pkg/scheduler/{scheduler.go,flavorassigner,preemption}:
//  - Quota tree: ClusterQueues are leaves of cohort trees (hierarchical cohorts); each node has
//    per (flavor, resource) nominalQuota, borrowingLimit, lendingLimit. A ClusterQueue fits a
//    request in a flavor without borrowing when usage + request <= nominalQuota; with borrowing when
//    it stays within nominalQuota + borrowingLimit and the cohort tree above it has the capacity
//    unused (what each node may lend is capped by its lendingLimit; Kueue pkg/cache/resource_node.go).
//  - Flavor assignment per pod set, resource group by resource group, flavors in order: the first
//    flavor that fits without borrowing or preemption is taken; otherwise flavorFungibility decides
//    (default: borrow rather than preempt, try the next flavor rather than preempt).
//  - Placement-aware admission (gpufleet's; Kueue's counterpart is the TAS step of
//    pkg/scheduler/flavorassigner/flavorassigner.go assignFlavors): the chosen assignment goes to the
//    caller's PlacementCheck (check_preempting when it preempts, with the victims set aside). When
//    the check refuses, the assignment's flavors are capped (kPreempt when it needed no victims,
//    kNoFit when it did) and the flavors are assigned again, until the check accepts or nothing
//    admits. So a flavor whose quota fits but whose nodes cannot hold the pods does not block
//    preemption in an earlier flavor (whenCanPreempt TryNextFlavor).
//    The victims are chosen by quota, as Kueue's classic preemption does; the pending message is
//    the first refusal's reason.
//  - Queues: a heap per ClusterQueue ordered by priority then creation time; BestEffortFIFO skips an
//    inadmissible head, StrictFIFO blocks on it. Each cycle takes every ClusterQueue's head and admits
//    them in order: those that fit without borrowing first, then by priority (and, with fair sharing,
//    by the ClusterQueue's weighted share), then creation time; usage is updated between heads, and a
//    head whose cohort changed in the cycle retries in the next cycle.
//  - Preemption (classic): candidates are the ClusterQueue's own admitted workloads allowed by
//    withinClusterQueue, and, for reclaim, admitted workloads of borrowing ClusterQueues in the cohort
//    tree allowed by reclaimWithinCohort (only when the preemptor fits within its nominal quota) or,
//    when it must borrow, borrowWithinCohort (lower priority, <= maxPriorityThreshold). Order:
//    borrowing ClusterQueues' first, then lowest priority, then most recently admitted; greedy until the
//    preemptor fits, then a reverse pass drops victims not needed. Fair sharing instead preempts from
//    the ClusterQueue with the highest weighted share with the strategies LessThanOrEqualToFinalShare,
//    LessThanInitialShare (no two workloads can preempt each other in a loop).
//  - Weighted share (fair_sharing.md): max over resources of borrowed usage (above nominal quota)
//    divided by what the cohort tree could lend for it, times 1000, divided by fairSharing.weight.
//  - Partial admission: a pod set with min_count is admitted with the largest count in
//    [min_count, count] that fits (Kueue binary-searches the count), preferring no preemption.
//  - Non-preemptible workloads (Workload::preemptible false) never borrow.
//  - waitForPodsReady: admitted workloads whose pods are not all ready (pods_ready()) within the
//    timeout are evicted (reason PodsReadyTimeout) and requeued after an exponential backoff.
// Deterministic: ties are broken by creation time, then submission order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queue/admission.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"

namespace gpufleet::queue {

class KueueScheduler {
 public:
  /// Takes the objects after validate() (throws its std::invalid_argument).
  explicit KueueScheduler(KueueObjects objects);
  ~KueueScheduler();
  KueueScheduler(const KueueScheduler&) = delete;
  KueueScheduler& operator=(const KueueScheduler&) = delete;

  /// Queues a workload created at workload.creation_s. Throws std::invalid_argument when its
  /// LocalQueue is unknown, it has no pod sets, more than 8, a count < 1, or min_count outside
  /// [1, count].
  WorkloadId submit(Workload workload);
  /// Admission at time t: evicts admitted workloads past their waitForPodsReady deadline, requeues
  /// workloads whose backoff ended, then runs Kueue scheduling cycles until one admits nothing.
  /// Returns this call's events in order (the caller stops the pods of kPreempted / kEvicted
  /// workloads and starts those of kAdmitted ones). `check` is consulted only in placement-aware mode.
  std::vector<WorkloadEvent> schedule(double t, PlacementCheck* check = nullptr);
  /// Every pod of an admitted workload runs (PodsReady): its waitForPodsReady deadline is cleared.
  void pods_ready(WorkloadId id, double t);
  /// The workload finished: its quota is released for good.
  WorkloadEvent finish(WorkloadId id, double t);
  /// Evicts an admitted workload for a cause outside admission (e.g. a node lost under a gang):
  /// releases its quota and requeues it after the backoff. Returns the kEvicted event.
  WorkloadEvent evict(WorkloadId id, double t, std::string reason, std::string message);
  /// The earliest future time schedule() has something to do (a pods-ready deadline or a backoff
  /// end) after t; nullopt when none.
  std::optional<double> next_wakeup_s(double t) const;

  size_t workload_count() const;
  const Workload& workload(WorkloadId id) const;
  WorkloadState state(WorkloadId id) const;
  /// The current admission (nullopt unless kAdmitted).
  const std::optional<Admission>& admission(WorkloadId id) const;
  /// Why a pending workload waits (its last kPending message); empty otherwise.
  const std::string& pending_message(WorkloadId id) const;
  /// Times admitted, preempted and evicted so far.
  int32_t admissions(WorkloadId id) const;
  int32_t evictions(WorkloadId id) const;
  /// The ClusterQueue a workload's LocalQueue points at.
  const std::string& cluster_queue_of(WorkloadId id) const;
  std::vector<ClusterQueueStatus> cluster_queue_status() const;
  const KueueObjects& objects() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `event` of `scheduler` recorded under the name `workload`.
EventRecord event_record(const KueueScheduler& scheduler, const WorkloadEvent& event, std::string workload);

}  // namespace gpufleet::queue
