// The kube-scheduler extender verbs' answers (k8s.io/kube-scheduler/extender/v1; kube-scheduler's
// pkg/scheduler/extender.go calls them), decided on a Snapshot of the cluster cache by the same
// profile and scheduler as `gpufleet place` (place/prepared_cluster.h). No I/O: the server
// (server/http_server.h) parses the bodies (readers/kube_api/extender_args.h) and writes the JSON.
//
// Every function takes snapshot.decide_mutex for the time it uses the scheduler or the state.
// Prioritize and bind tell the policy's Score plugins that the pod arrived (Scheduler::observe), once
// per pod and snapshot, as `place` does when it schedules the pod; filter does not (it scores
// nothing), so pods that kube-scheduler only filters (one feasible node) leave the scores alone.
//
// The pod in a request is the request's own object (its spec is what kube-scheduler schedules). When
// the snapshot holds the same pod (namespace/name) bound, the snapshot is stale for it: it is decided
// as if unbound (the bound copy still counts on its node).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "live/cluster_cache.h"
#include "model/device_assignment.h"
#include "model/pod.h"

namespace gpufleet::live {

/// ExtenderFilterResult. Every node kube-scheduler sent is in exactly one of the three.
struct FilterAnswer {
  std::vector<std::string> passed;   ///< in the order sent
  /// Rejected for a reason preemption may resolve (resources): node -> kube's reason, e.g.
  /// "Insufficient nvidia.com/gpu" (the rejecting plugin's words, sched::Rejection::node_reasons,
  /// joined by ", ").
  std::map<std::string, std::string> failed;
  /// Rejected for a reason preemption cannot resolve (taints, affinity, GPU model, a node the cache
  /// does not know): kube-scheduler does not try preemption there.
  std::map<std::string, std::string> failed_unresolvable;
  std::string error;  ///< non-empty: the whole call failed (a PreFilter error), kube's Error
  /// Non-empty when gpufleet did not decide: a pod with spec.resourceClaims (Dynamic Resource
  /// Allocation) passes every node sent, and kube-scheduler's own DynamicResources plugin allocates its
  /// devices (the extender's cache holds no ResourceSlices or claims). Sent as "gpufleetNote".
  std::string note;
};

/// One HostPriority: 0..10 (MinExtenderPriority..MaxExtenderPriority).
struct HostScore {
  std::string host;
  int64_t score = 0;
};

/// Filter: for each node sent, whether the policy's filters admit the pod there (the same filters,
/// in the same order, as `place`). Filter runs on the sent nodes the cache knows only (PreFilter
/// reads the whole cluster): Scheduler::evaluate with them as candidates.
FilterAnswer extender_filter(const Snapshot& snapshot, const Pod& pod, const std::vector<std::string>& node_names);

/// Prioritize: the feasible nodes among those sent are ranked by the policy (Scheduler::evaluate with
/// the sent nodes as candidates: Score normalized over the feasible ones, as kube-scheduler
/// normalizes over the nodes it scores; a lexicographic policy keeps the whole cluster's order);
/// the best gets 10, the one `place` would choose; the k-th of n after it (k = 1..n-1) gets
/// floor(9 (n-1-k) / (n-1)), so every other node scores below 10 and the order is kept. Nodes sent
/// that are infeasible or unknown get 0. kube-scheduler adds score x weight x 10 to its own plugins'
/// sum (at most 100 per enabled Score plugin and weight): with weight >= 100 gpufleet's best node
/// wins over any sum of kube v1.20's default Score plugins (docs/live.md). A pod with
/// spec.resourceClaims gets 0 on every node: kube-scheduler's own plugins rank the nodes for it.
std::vector<HostScore> extender_prioritize(const Snapshot& snapshot, const Pod& pod, const std::vector<std::string>& node_names);

/// MetaVictims of one node: UIDs and the PDB violations kube-scheduler counted.
struct NodeVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;
};

/// Preempt: kube-scheduler proposes, per node, victims that make the pod fit by its own count of
/// nvidia.com/gpu; gpufleet keeps a node only if, with those victims gone, the pod fits gpufleet's
/// device model there (a whole free GPU, MIG device or replica, as in Filter), and then gives back
/// as many victims as it can, highest priority first (kube selectVictimsOnNode's reprieve), keeping
/// the rest. Victims the snapshot does not know (by UID) make that node's answer unknown: the node is
/// dropped. Returns the accepted nodes with their victims. A pod with spec.resourceClaims gets the
/// candidates back unchanged (kube-scheduler's DynamicResources plugin judged them).
std::map<std::string, NodeVictims> extender_preempt(const Snapshot& snapshot, const Pod& pod,
                                                    const std::map<std::string, NodeVictims>& candidates);

/// Bind, the device choice: the devices the pod takes on `node` (the scheduler's choice there, as
/// `place` would make it), or an error message when the pod does not fit there or the node is
/// unknown. A pod with spec.resourceClaims on a known node gets no device-plugin devices ({}):
/// kube-scheduler's DynamicResources plugin allocated its claims before binding.
///
/// Each verb counts the pods with spec.resourceClaims it left to kube-scheduler in
/// extender_dra_pods_passed() (live/request_stats.h), served on /metrics.
struct DeviceChoice {
  std::optional<DeviceAssignment> devices;
  std::string error;
};
DeviceChoice choose_devices(const Snapshot& snapshot, const Pod& pod, const std::string& node);

}  // namespace gpufleet::live
