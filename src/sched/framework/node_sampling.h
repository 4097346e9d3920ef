// Node sampling: kube-scheduler's percentageOfNodesToScore. The Filter step stops once it has found
// a number of feasible nodes, and the next cycle starts where this one stopped, so successive pods
// see different parts of a large cluster (kube-scheduler pkg/scheduler/schedule_one.go
// numFeasibleNodesToFind and findNodesThatPassFilters; the setting is documented at
// https://kubernetes.io/docs/concepts/scheduling-eviction/scheduler-perf-tuning/ and in
// KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1, percentageOfNodesToScore, global and
// per profile). The Scheduler (sched/scheduler.h) applies it in its Filter pass, for every caller.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/cluster_state.h"

namespace gpufleet::sched {

/// kube minFeasibleNodesToFind: below this many nodes every node is checked, and at least this
/// many feasible nodes are looked for.
inline constexpr int32_t kMinFeasibleNodesToFind = 100;
/// kube minFeasibleNodesPercentageToFind: the adaptive percentage's floor.
inline constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

/// kube numFeasibleNodesToFind: how many feasible nodes the Filter step looks for among
/// `num_all_nodes` (>= 0) with percentageOfNodesToScore `percentage` (0..100; 0 = kube's adaptive
/// default, max(5, 50 - num_all_nodes / 125) percent, integer division). Fewer than 100 nodes: all
/// of them; otherwise num_all_nodes * percentage / 100 (integer division), but at least 100.
/// E.g. 1,000 nodes, 0 -> 420; 5,000 -> 500 (10 %); 100,000 -> 5,000 (5 %); 1,000 at 30 -> 300.
int32_t num_feasible_nodes_to_find(int32_t percentage, int32_t num_all_nodes);

/// The order kube's snapshot lists the nodes in (pkg/scheduler/backend/cache/node_tree.go list()):
/// the nodes grouped by zone (kube GetZoneKey, k8s.io/component-helpers/node/topology: the labels
/// topology.kubernetes.io/region and topology.kubernetes.io/zone, else their
/// failure-domain.beta.kubernetes.io/ forms; no zone is a zone of its own), zones in the order their
/// first node arrives, then one node of each zone in turn until every zone is exhausted. Nodes arrive
/// in `rank` order (lower first; the API server's list order: see Scheduler's node ranks), NodeId on
/// ties; an empty `rank` means NodeId order. Empty slots are left out. rank, when not empty, has an
/// entry per slot.
std::vector<NodeId> node_tree_order(const ClusterState& state, std::span<const uint32_t> rank);

}  // namespace gpufleet::sched
