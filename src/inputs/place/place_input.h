// What `gpufleet place` works on (place/place_workload.h): the nodes and the pods in creation order,
// with what decides admission and preemption around them. Plain data that the readers build
// (readers/k8s/place_inputs.h) and the live server's cache fills from the API server; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admit/resource_quota.h"
#include "model/dra.h"
#include "model/daemon_set.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_disruption_budget.h"
#include "model/pod_group.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"

namespace gpufleet::place {

/// What to place and where.
struct PlaceInput {
  std::vector<Node> nodes;
  std::vector<Pod> pods;                      ///< in creation order
  /// DaemonSets: one pod per node each admits, created before `pods` (place/place_workload.h step 1a).
  std::vector<DaemonSet> daemon_sets;
  std::vector<admit::ResourceQuota> quotas;   ///< in input order (the order quota errors are checked)
  std::vector<PodDisruptionBudget> pdbs;      ///< honoured by preemption when it can (kube: best effort)
  /// Kueue's objects and the jobs queued in its LocalQueues (place/queued_placement.h); empty = none.
  queue::KueueObjects kueue;
  std::vector<queue::Workload> queued_workloads;
  /// Gangs: pods labelled scheduling.x-k8s.io/pod-group with a group's name (same namespace) are
  /// its members, placed all or nothing.
  std::vector<PodGroup> pod_groups;
  /// Dynamic Resource Allocation objects (model/dra.h); empty = none (device-plugin clusters).
  DraCatalog dra;
};

/// How to place it: the policy (a name from sched::policy_names()) and the seed of its generator.
struct PlaceOptions {
  std::string policy = "gpufleet";  ///< a name from sched::policy_names()
  uint64_t seed = 42;
  /// Fill Placement::top_nodes for the pods the scheduling queue places (one more Filter and Score
  /// pass per pod; for comparing with another scheduler that breaks ties its own way).
  bool record_top_nodes = false;
  /// The profile's percentageOfNodesToScore (sched::ProfileConfig::percentage_of_nodes_to_score,
  /// kube's semantics in sched/framework/node_sampling.h): 0..100, 0 = kube's adaptive default;
  /// nullopt (default): every node is checked, as before the setting existed.
  std::optional<int32_t> percentage_of_nodes_to_score = std::nullopt;
  /// The scheduler's best-node index (sched::Scheduler::set_best_node_index): on by default; off
  /// gives the same placements by a pass over every node per pod (for tests and benchmarks).
  bool best_node_index = true;
};

}  // namespace gpufleet::place
