// Gang placement: all of a pod group's pods or none, as the coscheduling plugin
// (kubernetes-sigs/scheduler-plugins pkg/coscheduling: pods wait at Permit until minMember of the
// group are reserved, then bind together; a rejection releases them all) and Volcano's gang plugin
// (allocations in a session statement, committed only when the job is ready) do; with
// topology-aware domain choice as Kueue's TAS (kueue site/content/en/docs/concepts/
// topology_aware_scheduling.md).
//
// place_gang:
//  1. Order: the pods largest first (GPUs, then MIG devices, then CPU, then memory; then input order),
//     so the result does not depend on the order of roles.
//  2. Topology: with a required level, the pods are confined to one domain of that level (a node
//     selector on the level's label, as Kueue injects); among domains that can hold the gang, the one
//     with the fewest free GPUs wins (best fit: whole domains stay whole, as gpufleet's policy keeps
//     whole GPUs whole), then the domain value. A preferred level tries that level, then each level
//     up, then no constraint. Without a request the gang is placed freely.
//  3. Each pod goes through the scheduler (decide, then assume into the state) one after another; when
//     one does not fit, a bounded backtracking search (depth-first over each pod's feasible nodes in
//     score order, at most `max_backtrack_steps` cycles) looks for another assignment, so a feasible
//     placement the greedy order misses is still found on small gangs.
//  4. All min_member pods placed: they stay bound (commit) or are released (dry run); otherwise every
//     pod is released and the state is exactly as before (ClusterState fork).
// No partial hold: a failed gang never leaves a pod bound, so two gangs cannot deadlock holding half
// each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/compute_domain.h"
#include "model/pod.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::sched {

/// Topology levels: node label keys, outermost first (e.g. topology.kubernetes.io/zone, a rack or block
/// label, nvidia.com/gpu.clique, kubernetes.io/hostname). A node without a level's label is outside
/// every domain of that level (it cannot hold a pod confined to the level).
struct TopologyLevels {
  std::vector<std::string> labels;
};

/// A pod group's topology request (Kueue's podset-required / podset-preferred-topology).
struct GangTopology {
  enum class Mode { kNone, kRequired, kPreferred };
  Mode mode = Mode::kNone;
  int32_t level = -1;  ///< index in TopologyLevels::labels (kRequired, kPreferred)
};

/// A pod group to place.
struct GangRequest {
  std::string name;             ///< the group's name (messages)
  std::vector<Pod> pods;        ///< every member, distinct names; roles in any order
  int32_t min_member = 0;       ///< pods that must be bound together; 0 = all. Pods beyond it are
                                ///< placed when they fit and left out otherwise
  TopologyLevels levels;        ///< may be empty when topology.mode is kNone
  GangTopology topology;
  /// Why the gang is confined (confine_to_one_clique), for the pending message; empty = the request's own.
  std::string topology_reason;
};

struct GangOptions {
  bool commit = true;                 ///< keep the pods bound in the state (false: dry run)
  int32_t max_backtrack_steps = 2000; ///< scheduling cycles the search may spend after the greedy pass
};

/// Where the gang went.
struct GangPlacement {
  bool placed = false;
  /// Per pod of GangRequest::pods, in its order: the node (kNoNode when left out) and devices.
  std::vector<NodeId> nodes;
  std::vector<DeviceAssignment> devices;
  /// The domain value the gang was confined to (required/preferred level used); empty = none.
  std::string domain;
  int32_t domain_level = -1;
  /// Per level of TopologyLevels: how many distinct domains the placed pods span (0 for a level no
  /// placed node has). A gang "crosses" level L when spans[L] > 1.
  std::vector<int32_t> spans;
  /// When not placed: why, in kube's and Kueue's words (the first pod that fits nowhere and its
  /// FitError message, or "no domain of <level> can hold <n> pods: ...").
  std::string reason;
};

/// Places the gang (see the top of this file) through `scheduler` on `state`. The scheduler's profile
/// must have the Coscheduling Permit plugin (sched/plugins/coscheduling.h; every policy profile has
/// it): place_gang registers the group (PodGroup <name>, minMember as above, scheduleTimeoutSeconds
/// 60) and gives each pod the label scheduling.x-k8s.io/pod-group: <name>; the first min_member - 1
/// pods wait at its Permit until the last one is reserved. The search uses decide() only; a domain
/// whose free GPUs are fewer than the smallest min_member pods ask for is not searched. Consumes
/// scheduler.take_permit_outcomes(). Throws std::invalid_argument for min_member outside [0, pods],
/// a topology level out of range, an empty name, a profile without Coscheduling, pods in different
/// namespaces or labelled with another group; std::logic_error when pods already wait at Permit.
GangPlacement place_gang(Scheduler& scheduler, ClusterState& state, GoRand& rng, const GangRequest& request,
                         const GangOptions& options = {});

/// Confines `request` to one NVLink domain (a ComputeDomain's workers: model/compute_domain.h), `why`
/// naming the cause for the pending message (GangRequest::topology_reason): the level
/// kGpuCliqueLabel, added to request.levels when absent (before kubernetes.io/hostname when the levels
/// end with it, else last), becomes the required level, unless the gang already requires it or a
/// finer level (one after it). A coarser required or preferred level is replaced: one clique (an
/// NVL72 rack) lies within one rack, block or zone.
void confine_to_one_clique(GangRequest& request, std::string why);

/// The ComputeDomains (keys, sorted) the gang's pods join, per `catalog` (nullptr: none).
std::vector<std::string> gang_compute_domains(const GangRequest& request, const DraCatalog* catalog);

/// Per level, the distinct domains the nodes span (see GangPlacement::spans). kNoNode entries are
/// skipped.
std::vector<int32_t> topology_spans(const ClusterState& state, const TopologyLevels& levels,
                                    const std::vector<NodeId>& nodes);

}  // namespace gpufleet::sched
