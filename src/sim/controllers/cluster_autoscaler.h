// The Cluster Autoscaler as a controller: every scan_interval_s from 0, scale-up then scale-down.
// The rules are in sim/rules/cluster_autoscaler.h (utilization, the binpacking estimate, the expanders); this file
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
//
// Failed scale-ups (docs/simulate.md "Provisioning failures"). A launch the cloud refuses (a capacity
// outage, inputs/sim/faults.h) is known launch_failure_s later (the AWS provider's early abort on a failed
// scaling activity, kubernetes/autoscaler#4489); a node not Ready with its GPUs advertised
// max_node_provision_s after its launch is given up (removed; CA --max-node-provision-time). Either
// puts its node group in backoff (initial_backoff_s, doubling up to max_backoff_s; CA's
// clusterstate backoff), during which scale-up skips the group.
//
// GPUs advertised late. A Ready node of a GPU pool whose GPUs the device plugin does not advertise
// yet (Fleet::withheld_gpus(n, kNotAdvertised) > 0) counts as upcoming, like a node still being
// provisioned, until its GPUs appear or max_node_provision_s runs out: CA's GPU processor marks such
// a node unready (kubernetes/autoscaler cluster-autoscaler/processors/customresources/
// gpu_processor.go FilterOutNodesWithUnreadyResources, for nodes carrying the GPU label), so a
// scale-up does not add nodes for pods that wait for those GPUs. New nodes' shape comes from the
// pool (Fleet::template_nodes), never from a live node, so a node whose plugin failed does not
// change what a scale-up expects.
//
// Karpenter's pools (PoolSettings::karpenter_node_pool) are left alone: no scale-up, scale-down or
// give-up there. Pending units get a reason (PendingQueue::set_provisioning_reason) when every pool
// that could take them is at max_nodes ("max nodes reached") or in backoff ("node group in backoff").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"
#include "sim/engine/billing.h"
#include "sim/engine/placement.h"

namespace gpufleet::sim {

class ClusterAutoscaler final : public Controller, public NodeListener {
 public:
  /// Registers "autoscaler-tick" on `loop`. `settings` must be valid (validate_autoscaler_settings).
  ClusterAutoscaler(const AutoscalerSettings& settings, const SimulationModules& modules);
  /// The first tick at 0.
  void start() override;
  /// nodes_scaled_up, nodes_scaled_down, failed_scale_ups.
  void report(SimResult& result) const override;
  /// A refused launch of one of its pools: a failed scale-up (backoff).
  void on_launch_failed(NodeId n, double t, const std::string& reason) override;
  /// Whether pool p is in backoff at t.
  bool in_backoff(size_t p, double t) const;

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
  // Whether node n counts as upcoming: provisioning, or Ready with GPUs not advertised yet.
  bool upcoming(NodeId n) const;
  void give_up_late_nodes(double t);
  void scale_up_failed(size_t p, double t);
  bool managed(size_t p) const { return fleet_.pool(p).settings.karpenter_node_pool.empty(); }

  const AutoscalerSettings& settings_;
  EventLoop& loop_;
  Fleet& fleet_;
  Placement& placement_;
  PendingQueue& pending_;
  Units& units_;
  const Billing& billing_;
  EventKind tick_ = 0;
  std::vector<NodeTimers> timers_;
  double last_scale_up_s_ = -1e300;
  int64_t scaled_up_ = 0;
  int64_t scaled_down_ = 0;
  int64_t failed_scale_ups_ = 0;
  struct Backoff {
    double until_s = -1;
    double last_failure_s = -1e300;
    double duration_s = 0;
  };
  std::vector<Backoff> backoff_;  // per pool
};

}  // namespace gpufleet::sim
