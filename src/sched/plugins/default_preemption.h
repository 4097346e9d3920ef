// DefaultPreemption: where could an unschedulable pod run if lower-priority pods were evicted, and
// which? kube-scheduler's DefaultPreemption PostFilter plugin (pkg/scheduler/framework/plugins/
// defaultpreemption/default_preemption.go, pkg/scheduler/framework/preemption/preemption.go), run as a
// dry run on the real ClusterState. As a PostFilter, it evicts the victims it chose (kube deletes them
// through the API server) and nominates the node; the pod's next cycle (Scheduler::schedule_cycle
// with that node nominated) goes there.
//
// preempt(pod, state, inputs):
//  0. A pod with preemptionPolicy Never (Pod::preempt_lower_priority false) preempts nothing
//     (PodEligibleToPreemptOthers).
//  1. Potential nodes: those whose rejection in the failed cycle is resolvable (the rejecting
//     plugin's FilterReason::resolvable, kube's Unschedulable vs UnschedulableAndUnresolvable in the
//     node's status, pkg/scheduler/framework/preemption/preemption.go nodesWherePreemptionMightHelp)
//     and whose allocatable CPU, memory and GPU
//     count could hold the pod at all (recent kube's noderesources Fit marks a request above the node's
//     allocatable Unresolvable). Every potential node is dry-run (see the differences below).
//  2. On each (SelectVictimsOnNode): the potential victims are the node's pods with priority strictly
//     below the pod's (never equal or higher; none: "No preemption victims found for incoming pod").
//     Release them all (FilterCycle::remove_pod keeps the anti-affinity counts right) and run every
//     filter of the policy on the node; if the pod still does not fit, the node is no candidate. Else
//     sort them by importance (more_important_pod), split them into PDB-violating and non-violating
//     ones (filterPodsWithPDBViolation: in that order, each victim takes one from the
//     disruptionsAllowed of every PDB selecting it; it violates when one goes below 0), and reprieve
//     them, violating ones first, each group most important first: rebind the pod, keep it if the
//     pod still fits, else release it again and make it a victim. The number of violating victims
//     that could not be reprieved is the candidate's PDB violation count.
//  3. Pick the node (pickOneNodeForPreemption): fewest PDB violations; lowest priority of the most
//     important victim; smallest sum of victim priorities, each plus 2^31 (MaxInt32 + 1, so that
//     negative priorities do not favour more victims); fewest victims; latest start time of the
//     highest-priority victims (the earliest among them is compared); then the first node, i.e. the
//     lowest node rank.
// The pod's start time is its ClusterState binding order (BoundPod::bind_seq). PDB
// disruptionsAllowed is computed once per call (pdb_status, model/pod_disruption_budget.h).
//
// The dry run releases and rebinds pods on the real state in a ClusterState::Fork that it discards,
// leaving the state as it was: the same pods on every node in the same order with the same devices
// and bind_seq, the same usage. Only version() of the dry-run nodes moves on (which merely
// invalidates cached filter and score results there).
// Cost: O(pods on the node x filters) per potential node; nothing is copied but the node's pods.
//
// Differences from kube-scheduler, by design:
//  - Every potential node is dry-run, in node order. kube dry-runs a sample (from a random offset, at
//    least max(10% of the nodes, 100) candidates, minCandidateNodesPercentage/Absolute) and may stop
//    early; the engine is deterministic and may find a better node than kube would.
//  - Rule 6 ("first node") is the lowest node rank; kube takes the first of a Go map iteration, i.e.
//    an arbitrary one. With bind_seq unique, rule 5 already separates any two nodes.
//  - No nominated pods (NominatedNodeName) and no graceful termination: the caller evicts at once.
//    Pods already in status.disruptedPods of a PDB do not exist here.
//  - The pod's own pod affinity to victims is not modelled (kube ignores it too).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "model/pod_disruption_budget.h"
#include "sched/framework/interface.h"
#include "sched/framework/node_to_status.h"

namespace gpufleet::sched {

/// kube util.MoreImportantPod: the higher priority, then the earlier start (lower bind_seq).
bool more_important_pod(const BoundPod& a, const BoundPod& b);

/// A node where evicting `victims` lets the pod fit.
struct PreemptionCandidate {
  NodeId node = kNoNode;
  std::vector<BoundPod> victims;  ///< most important first (more_important_pod); never empty
  int32_t pdb_violations = 0;     ///< victims evicted although a PDB had no disruption left
};

/// pickOneNodeForPreemption (rules 1-6 above): the index of the chosen candidate. `candidates` must be
/// non-empty. `node_rank[n]` breaks the last tie (lower wins); empty = node id. Throws
/// std::invalid_argument for no candidates or a candidate without victims.
size_t pick_one_node_for_preemption(std::span<const PreemptionCandidate> candidates, std::span<const uint32_t> node_rank);

/// What preemption needs besides the pod and the state. The spans must outlive the call.
struct PreemptionInputs {
  /// The profile's filters, in order (Handle::filter_plugins()); those that also implement PreFilter
  /// run it first.
  std::span<const std::shared_ptr<const FilterPlugin>> filters;
  /// Which plugin rejected each node in the failed cycle and why (ScheduleResult::node_to_status),
  /// one per node.
  const NodeToStatus& node_to_status;
  std::span<const PodDisruptionBudget> pdbs;
  /// Every pod of the run, pending or bound: the PDBs' expected pod counts.
  std::span<const Pod> workload_pods;
  /// Tie-break ranks (Handle::node_rank()), at least one per slot; empty = node id order.
  std::span<const uint32_t> node_rank;
};

/// The outcome: the nominated node and the pods to evict there.
struct PreemptionResult {
  NodeId node = kNoNode;          ///< kNoNode when preemption cannot help
  std::vector<BoundPod> victims;  ///< on `node`, most important first; their namespace/name and GPUs
  int32_t pdb_violations = 0;     ///< of the chosen node
  int32_t candidates = 0;         ///< nodes where preemption would work
  /// When no node was found, kube's PostFilter message, e.g. "preemption: not eligible due to
  /// preemptionPolicy=Never." or "preemption: 0/3 nodes are available: 1 Insufficient cpu,
  /// 2 Preemption is not helpful for scheduling." (reasons as "count reason", sorted as strings).
  std::string message;
  bool found() const { return node != kNoNode; }
};

/// Dry-runs preemption for `pod` (see the top of this file). `state` is changed during the call and
/// restored before it returns (also on an exception). Empty slots are no candidates and not counted.
/// Throws std::invalid_argument when node_to_status does not have one entry per slot (or a non-empty
/// node_rank fewer).
PreemptionResult preempt(const Pod& pod, ClusterState& state, const PreemptionInputs& inputs);

/// Evicts the chosen victims (ClusterState::release on result.node); the caller then runs the pod's
/// scheduling cycle again. Nothing when !result.found().
void evict_victims(ClusterState& state, const PreemptionResult& result);

/// The PostFilter plugin: preempt() with the profile's filters and node ranks (from the Handle) and
/// the run's PDBs and pods; when a node is found, evict_victims() and Success with the nomination,
/// else Unschedulable with PreemptionResult::message.
class DefaultPreemption final : public PostFilterPlugin, public NamedPlugin<"DefaultPreemption"> {
 public:
  /// The spans (PolicyContext::pdbs, workload_pods) must outlive the plugin.
  DefaultPreemption(std::span<const PodDisruptionBudget> pdbs, std::span<const Pod> workload_pods)
      : pdbs_(pdbs), workload_pods_(workload_pods) {}
  Status post_filter(const Pod& pod, ClusterState& state, const NodeToStatus& statuses, CycleState& cycle, Handle& handle,
                     PostFilterResult& result) const override;

 private:
  std::span<const PodDisruptionBudget> pdbs_;
  std::span<const Pod> workload_pods_;
};

}  // namespace gpufleet::sched
