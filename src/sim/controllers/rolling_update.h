// RollingUpdates: the Deployment controller's rolling update of services (Workload::rollouts).
//
// A rollout gives its service a new pod template (Units::new_revision, as a new ReplicaSet); the
// replicas of earlier revisions are the old ReplicaSets. At each sync the controller does what
// kubernetes/kubernetes pkg/controller/deployment/rolling.go rolloutRolling does, with R = the wanted
// count (Units::replicas, spec.replicas) and (surge, unavailable) = resolve_fenceposts(strategy, R):
//   reconcileNewReplicaSet: new replicas above R are removed; otherwise, when fewer than R + surge
//     replicas exist, min(R + surge - existing, R - new) new ones are created (Units::add_replica);
//   reconcileOldReplicaSets: with minAvailable = R - unavailable and
//     maxScaledDown = existing - minAvailable - (new replicas not available), old replicas that are
//     not available are removed first (cleanupUnhealthyReplicas, up to maxScaledDown), then
//     available old ones, up to (available replicas - minAvailable)
//     (scaleDownOldReplicaSetsForRollingUpdate).
// Both are repeated until nothing changes (the controller's next sync, which each ReplicaSet change
// triggers at once). A replica is available minReadySeconds (WorkloadSpec::min_ready_s) after it is
// ready (ReplicaListener::on_replica_ready: at its binding, or, for an inference replica, when its
// engine serves). Among old replicas the not-yet-bound ones go first, then the highest ordinals.
// The rollout is complete when R replicas of the new revision are available and no old one is
// left. A sync runs at the rollout's start, when a replica of the service becomes available and when
// one is unbound (event "rollout-sync", subject the service).
//
// Not modelled: proportional scaling of the ReplicaSets when the wanted count changes mid-rollout
// (Units::scale adds replicas at the new revision and removes old ones first), the pods'
// termination grace period (a removed replica frees its node at once), progressDeadlineSeconds,
// paused rollouts and the Recreate strategy.
//
// Outputs: SimResult::rollouts, one RolloutResult per rollout.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/controllers/controller.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

class RollingUpdates final : public Controller, public ReplicaListener {
 public:
  /// Listens to `modules.units`' replicas. The workload must have passed
  /// validate_rollouts_and_autoscalers (the simulation checks it once, before its controllers).
  RollingUpdates(const Workload& workload, const SimulationModules& modules);
  void start() override;
  void report(SimResult& result) const override;

  void on_replica_bound(uint32_t item, uint32_t unit, uint32_t pod, NodeId n, double t) override;
  void on_replica_unbound(uint32_t item, uint32_t unit, uint32_t pod, double t) override;
  void on_replica_ready(uint32_t item, uint32_t unit, double t) override;

 private:
  struct Counts {
    int32_t existing = 0, fresh = 0, fresh_available = 0, available = 0;
  };
  void begin(uint32_t rollout, double t);
  void sync(uint32_t item, double t);
  bool step(uint32_t item, double t);  // one pass; true when it changed something
  Counts count(uint32_t item, double t) const;
  bool available(uint32_t unit, double t) const;

  const Workload& workload_;
  SimulationModules m_;
  EventKind begin_kind_ = 0, sync_kind_ = 0;
  std::vector<RolloutResult> results_;              // in start order
  std::unordered_map<uint32_t, size_t> active_;     // service item -> its rollout in progress (results_ index)
};

}  // namespace gpufleet::sim
