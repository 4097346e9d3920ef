// Preemption targets for a workload that fits only after evicting others (kubernetes-sigs/kueue
// pkg/scheduler/preemption/preemption.go; site/content/en/docs/concepts/preemption.md). Internal to
// the queue layer.
//
// Classic: candidates are the ClusterQueue's own admitted workloads allowed by withinClusterQueue
// (reason InClusterQueue) and admitted workloads of other ClusterQueues of the cohort tree whose
// branch below the common ancestor borrows: with reclaimWithinCohort when the preemptor's branch
// stays within its subtree quota (InCohortReclamation), else with borrowWithinCohort LowerPriority
// and priority <= maxPriorityThreshold (InCohortReclaimWhileBorrowing). Order: other ClusterQueues
// first, lower priority, most recently admitted; greedy until the preemptor fits (a candidate is
// skipped once its ClusterQueue no longer borrows), then a reverse pass keeps only needed victims.
// Fair sharing: own candidates first, then from the ClusterQueue with the highest weighted share
// while LessThanOrEqualToFinalShare or LessThanInitialShare holds (reason InCohortFairSharing).
// Non-preemptible workloads are never victims, and a non-preemptible preemptor must end within its
// nominal quota.
#pragma once

#include <string>
#include <vector>

#include "queue/flavor_assigner.h"
#include "queue/scheduler_state.h"

namespace gpufleet::queue {

/// A workload to evict and the Preempted condition's reason.
struct Victim {
  WorkloadId id = 0;
  std::string reason;
};

/// The victims that let `preemptor` be admitted with `assignment` (mode kPreempt); empty when none do.
std::vector<Victim> preemption_targets(SchedulerState& state, WorkloadId preemptor, const Assignment& assignment,
                                       bool fair_sharing);

}  // namespace gpufleet::queue
