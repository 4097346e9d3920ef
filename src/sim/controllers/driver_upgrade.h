// Rolling driver upgrades of node pools (inputs/sim/faults.h DriverUpgrade), as the NVIDIA GPU Operator's
// upgrade controller carries out ClusterPolicy driver.upgradePolicy (NVIDIA/k8s-operator-libs
// pkg/upgrade: upgrade-required -> cordon-required -> wait-for-jobs-required -> pod-deletion-required
// -> drain-required -> pod-restart-required -> validation-required -> uncordon-required ->
// upgrade-done). gpufleet folds the states into three: draining (cordoned, pods being evicted),
// upgrading (cordoned, empty, upgrade_s long: driver pod restart and validation), done (uncordoned).
//
// At at_s the nodes of the pool that are Ready then are to be upgraded, in node order. At each step
// the number of upgrades that may start is, as pkg/upgrade/common_manager.go GetUpgradesAvailable:
// min(max_parallel_upgrades - upgrades in progress (no limit when 0), max_unavailable - the pool's
// unavailable nodes (cordoned or NotReady, for any reason)), with max_unavailable scaled against the
// pool's nodes in the cluster state then (ready, cordoned, NotReady), rounded up (0: no node ever
// starts, as upstream).
// A node starting is cordoned (Fleet::cordon) and drained: each unit with a pod there is evicted when
// its disruption budget allows it (Units::budgets_allow; a job's gang stops on every node and
// keeps the work up to its last checkpoint, a service replica is queued again), the others are
// retried every kDrainRetryS seconds until drain_timeout_s after the cordon, then deleted whatever
// their budget. Once empty, the node stays cordoned upgrade_s, then is uncordoned (pending pods are
// retried). A node that is no longer Ready when its turn comes (interrupted, failed, removed) or is
// removed meanwhile is skipped; nodes that join the pool after at_s (the autoscaler's) run the new
// driver already. While other unavailable nodes hold every slot, the upgrade waits (checked every
// kBlockedRecheckS and at the pool's node removals and recoveries).
//
// Capacity lost: the node's GPUs x the seconds from its cordon to its uncordon (or removal).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/controllers/controller.h"
#include "inputs/sim/faults.h"

namespace gpufleet::sim {

/// Seconds between eviction retries of a node being drained (kubectl drain retries refused
/// evictions every 5 s: k8s.io/kubectl pkg/drain).
inline constexpr double kDrainRetryS = 5;
/// Seconds between checks while an upgrade waits with nothing in progress because other nodes of the
/// pool are unavailable (cordoned or NotReady); node removals and recoveries also trigger a check.
inline constexpr double kBlockedRecheckS = 60;

/// Throws std::invalid_argument naming the problem: a pool not in `cluster`, a negative or non-finite
/// time, a negative max_unavailable or one above 100%, a negative max_parallel_upgrades.
void validate_driver_upgrades(const ClusterConfig& cluster);

class DriverUpgradeController final : public Controller, public NodeListener {
 public:
  /// Registers "driver-upgrade-start" and "driver-upgrade-step" on the loop and listens to the
  /// fleet's node removals. The upgrades must be valid (validate_driver_upgrades).
  DriverUpgradeController(const ClusterConfig& cluster, const SimulationModules& modules);
  void start() override;
  /// SimResult::driver_upgrades, one per upgrade in input order.
  void report(SimResult& result) const override;
  void on_node_removed(NodeId n, double t) override;
  void on_capacity_returned(NodeId n, double t) override;

 private:
  enum class Stage : uint8_t { kWaiting, kDraining, kUpgrading, kDone, kSkipped };
  struct NodeUpgrade {
    NodeId node = 0;
    uint32_t incarnation = 0;
    Stage stage = Stage::kWaiting;
    double cordoned_s = 0;
    double until_s = 0;  // draining: the drain timeout; upgrading: its end
  };
  struct Run {
    const DriverUpgrade* spec = nullptr;
    size_t pool = 0;
    std::vector<NodeUpgrade> nodes;
    DriverUpgradeResult result;
    uint32_t step_generation = 0;
    bool started = false;
    bool blocked = false;  // nodes wait, none in progress: other unavailable nodes hold the slots
  };
  void on_start(uint32_t r, double t);
  void step(uint32_t r, double t);
  void drain(Run& run, NodeUpgrade& node, double t);
  void end_capacity_loss(Run& run, const NodeUpgrade& node, double t);
  int32_t unavailable(size_t pool) const;
  int32_t nodes_in_state(size_t pool) const;

  EventLoop& loop_;
  Fleet& fleet_;
  Units& units_;
  PendingQueue& pending_;
  std::vector<Run> runs_;
  EventKind start_ = 0, step_ = 0;
};

}  // namespace gpufleet::sim
