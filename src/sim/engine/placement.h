// Where pods go: the scheduler (one sched::Scheduler with the policy's profile from sched::make_policy, seeded
// generator) over the fleet's nodes, and the questions the simulator asks it:
//  - decide: one scheduling cycle for a pod on the current state (the caller binds);
//  - pool_admits: would a new node of a pool admit a pod of this shape (the policy's filters on the
//    pool's template node holding its DaemonSets' pods, sim/engine/fleet.h), cached per shape; a pool
//    with max 0 nodes admits none;
//  - fits_ready_nodes: which of a list of pods the ready nodes could take, one after another (the
//    Cluster Autoscaler's FilterOutSchedulable), as a dry run;
//  - dry_run_moves: could the pods of a node (and, for gangs, their fellows) all go elsewhere.
// Dry runs leave the state as they found it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/gpu/fragmentation.h"
#include "sched/scheduler.h"
#include "sim/engine/fleet.h"
#include "util/go_rand.h"

namespace gpufleet::sim {

/// A bound pod as a dry run moves it: its request, where it is now and the devices it holds there
/// (both pointers owned by the caller, valid during the call).
struct BoundPod {
  const Pod* pod = nullptr;
  NodeId node = sched::kNoNode;
};

/// Where each pod of a dry run would go: (node, devices), in the order given.
using Placements = std::vector<std::pair<NodeId, DeviceAssignment>>;

/// The devices a scheduling cycle chose, moved out of its result.
inline DeviceAssignment take_devices(sched::ScheduleResult&& r) {
  return DeviceAssignment{std::move(r.gpus), std::move(r.shared_replicas), std::move(r.mig), std::move(r.claims)};
}

class Placement {
 public:
  /// The policy named `policy` (sched::policy_names(); UsageError otherwise) for the fleet, with
  /// FGD's typical pods selected from `pod_mix` (shape -> pods, sched::select_typical_pods at 95%
  /// coverage); `seed` seeds the scheduler's generator.
  Placement(Fleet& fleet, const std::string& policy, std::vector<std::pair<sched::PodShapeKey, double>> pod_mix,
            uint64_t seed);
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  /// Registers a shape class: pods that differ only by name, so that one stands for all. Returns its
  /// id (0, 1, ...).
  uint32_t add_shape(const Pod& representative);
  uint32_t shape_count() const { return static_cast<uint32_t>(shape_pods_.size()); }
  /// Whether a new node of pool p would admit pods of the shape (see the top of this file).
  bool pool_admits(uint32_t shape, size_t p);
  /// nullopt if some pool admits the shape; otherwise Cluster Autoscaler's words for it: "pod didn't
  /// trigger scale-up: no pool's node admits it (<why>)".
  std::optional<std::string> unadmitted_reason(uint32_t shape);

  /// The informer: a pod was created (ScorePlugin::observe).
  void observe(const Pod& pod);
  /// One scheduling cycle on the fleet's current state; binds nothing.
  sched::ScheduleResult decide(const Pod& pod);
  /// Which of `pods`, placed one after another, the ready nodes would take (1) or not (0).
  std::vector<uint8_t> fits_ready_nodes(std::span<const Pod* const> pods);
  /// Node n cordoned and the `moving` pods released, each placed again in order. Returns where they
  /// would go, with n left cordoned; nullopt, with n Ready again, if one does not fit.
  std::optional<Placements> dry_run_moves(NodeId n, std::span<const BoundPod> moving);

 private:
  Fleet& fleet_;
  ClusterState templates_;
  sched::Profile base_policy_; // the policy's own filters, for template checks
  std::unique_ptr<sched::Scheduler> scheduler_;
  GoRand rng_;
  std::vector<Pod> shape_pods_;
  std::vector<std::vector<int8_t>> shape_fits_;  // [shape][pool]: -1 unknown, 0/1
};

}  // namespace gpufleet::sim
