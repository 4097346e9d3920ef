// The Cluster Autoscaler as a controller: every scan_interval_s from 0, scale-up then scale-down.
// The rules are in sim/autoscaler.h (utilization, the binpacking estimate, the expanders); this file
// applies them to the simulated cluster. Source: kubernetes/autoscaler cluster-autoscaler.
//
// Scale-up considers the units pending for at least scale_up_delay_s. Pods that fit the free room of
// ready nodes (a dry run with the scheduler: a gang's pods wait for each other, CA's
// FilterOutSchedulable) or a node already being provisioned (CA's upcoming nodes) are not counted
// again. For each pool with room below max_nodes whose template node admits the pods, the
// binpacking estimate gives the nodes needed, priced at their marginal cost (reservation slots free:
// nothing more); the expander picks one pool, whose nodes are launched.
//
// Scale-down: a ready node whose utilization stays below utilization_threshold for
// scale_down_unneeded_s (and that holds no job pod: job pods are safe-to-evict "false") is removed if
// its pool stays at or above min_nodes and its pods fit elsewhere: empty nodes any number per tick;
// at most one node with pods per tick, whose service pods move, if their disruption budgets allow
// (a node whose pods cannot move is not considered again for unremovable_recheck_s). Nothing is
// removed within scale_down_delay_after_add_s of a scale-up.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config.h"
#include "sim/controllers/controller.h"
#include "sim/engine/billing.h"
#include "sim/engine/placement.h"

namespace gpufleet::sim {

class ClusterAutoscaler final : public Controller {
 public:
  /// Registers "autoscaler-tick" on `loop`. `settings` must be valid (validate_autoscaler_settings).
  ClusterAutoscaler(const AutoscalerSettings& settings, const SimulationModules& modules);
  /// The first tick at 0.
  void start() override;
  /// nodes_scaled_up, nodes_scaled_down.
  void report(SimResult& result) const override;

 private:
  // A node's scale-down timers; they start afresh with every incarnation of the node.
  struct NodeTimers {
    uint32_t incarnation = 0;
    double unneeded_since_s = -1;  // < 0: not unneeded
    double recheck_after_s = 0;    // not considered before (after its pods could not move)
  };
  NodeTimers& timers(NodeId n);
  void on_tick(double t);
  void scale_up(double t);
  void scale_down(double t);
  bool try_move_pods(NodeId n, double t);

  const AutoscalerSettings& settings_;
  EventLoop& loop_;
  Fleet& fleet_;
  Placement& placement_;
  const PendingQueue& pending_;
  Workloads& workloads_;
  const Billing& billing_;
  EventKind tick_ = 0;
  std::vector<NodeTimers> timers_;
  double last_scale_up_s_ = -1e300;
  int64_t scaled_up_ = 0;
  int64_t scaled_down_ = 0;
};

}  // namespace gpufleet::sim
