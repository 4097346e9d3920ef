// Karpenter's provisioner as a controller: it launches nodes of the pools that expand Karpenter
// NodePools (PoolSettings::karpenter_node_pool; one pool per offering: an instance type in a zone
// with a capacity type) for the pending pods no ready or in-flight node takes. Built only when the
// cluster has NodePools (ClusterConfig::node_pools). Source: kubernetes-sigs/karpenter
// pkg/controllers/provisioning (batcher, scheduler), aws/karpenter-provider-aws
// pkg/providers/instance (CreateFleet) and pkg/cache (unavailable offerings). Longer account:
// docs/karpenter.md.
//
// Batching. A tick every batch_idle_s. A batch opens when pods that need a new node appear; it
// closes when their number has not grown for batch_idle_s, or batch_max_s after it opened
// (Karpenter's batcher: BATCH_IDLE_DURATION 1s, BATCH_MAX_DURATION 10s). A pod needs a new node
// when some Karpenter pool admits it (the scheduler's filters on the pool's template node), the
// ready nodes cannot take it (Placement::fits_ready_nodes) and no in-flight node of a NodePool will
// (nodes provisioning, or Ready with GPUs not advertised yet: Karpenter initializes a NodeClaim only
// once its extended resources are registered).
//
// Choosing. Pods of the closed batch in queue order, each pod first onto a node already opened in
// this batch that takes it, else onto a new node: NodePools by weight (higher first, then name);
// in the first NodePool with a possible offering, the cheapest spot offering if the pod allows spot
// (Karpenter launches spot when a NodePool allows both and spot is available; a pod that only
// prefers spot gets it first and on-demand when no spot offering is left: preference relaxation),
// else the cheapest on-demand one; ties to the lower pool index. An offering is possible when it
// admits the pod, the pod fits its node, it has a free slot (max_nodes), it is not in the
// unavailable-offerings cache, and one more node keeps the NodePool within spec.limits, counted on
// the capacity of its live nodes (not on pod requests; Karpenter's limits).
//
// Failures. A launch the cloud refuses (a capacity outage, inputs/sim/faults.h) fails launch_failure_s
// later; the offering is then unavailable for unavailable_offerings_ttl_s, and the pods need a node
// again (the next batch). Limit changes (FaultSchedule::limit_changes) apply at their time.
//
// Reasons (PendingQueue::set_provisioning_reason) for pods no NodePool can take: "pool limit
// reached (NodePool <name>: <resource>)", "no offering available (insufficient capacity)", "max
// nodes reached (NodePool <name>)".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"

namespace gpufleet::sim {

class KarpenterProvisioner final : public Controller, public NodeListener {
 public:
  /// Registers "karpenter-tick" (not traced) and "nodepool-limits" on the loop and listens to the
  /// fleet. Every pool's karpenter_node_pool must name one of cluster.node_pools (validated by the
  /// simulation).
  KarpenterProvisioner(const ClusterConfig& cluster, const SimulationModules& modules);
  /// The first tick at 0; the limit changes at their times.
  void start() override;
  /// karpenter_nodes_launched and the NodeClaims (SimResult::node_claims).
  void report(SimResult& result) const override;
  void on_launch_failed(NodeId n, double t, const std::string& reason) override;
  void on_node_ready(NodeId n, double t) override;

  /// NodePool np's limit on `resource` now (-1: none).
  int64_t limit(size_t np, const std::string& resource) const;

 private:
  void on_tick(double t);
  void provision(double t, const std::vector<uint32_t>& units);
  bool in_flight(NodeId n) const;
  // What launching one more node of pool p adds to NodePool usage, and whether limits allow it with
  // `extra` nodes already planned per pool.
  bool within_limits(size_t p, const std::vector<int32_t>& planned, std::string* exceeded) const;
  std::vector<uint32_t> needing_nodes(double t);

  const ClusterConfig& cluster_;
  EventLoop& loop_;
  Fleet& fleet_;
  Placement& placement_;
  PendingQueue& pending_;
  Units& units_;
  EventKind tick_ = 0, limits_ = 0;
  std::vector<int32_t> node_pool_of_;                     // per pool: index into node_pools, -1 = not Karpenter's
  std::vector<std::vector<std::pair<std::string, int64_t>>> limits_now_;  // per NodePool
  std::vector<size_t> node_pool_order_;                   // by weight descending, then name
  std::vector<double> unavailable_until_s_;               // per pool (offering)
  // The batch.
  bool batch_open_ = false;
  double batch_opened_s_ = 0;
  double batch_grew_s_ = 0;
  size_t batch_pods_ = 0;
  int64_t launched_ = 0;
  std::vector<NodeClaimRecord> claims_;
  std::vector<int64_t> claim_of_node_;  // per node: index into claims_ of its latest claim, -1 none
};

}  // namespace gpufleet::sim
