// Karpenter-style consolidation (WhenUnderutilized; kubernetes-sigs/karpenter
// pkg/controllers/disruption) as a controller, every interval_s from 0 (ConsolidationSettings; off
// by default). A tick first runs the pending pods' retry if one is due (pods waiting for room get it
// before nodes are taken away).
//
// Candidates: ready nodes of pools that no pending pod could use (its template node admits none of
// them; Karpenter leaves nodes nominated for pending pods alone) and that stay at or above
// min_nodes, with utilization strictly below the threshold, untouched by pod changes for
// consolidate_after_s, and whose removal lowers the bill (Billing::removal_saves_money). Empty
// candidates are removed, any number per tick (Karpenter's emptiness). Then the others, cheapest to
// disrupt first: Karpenter's disruption cost (the sum over the pods that must restart of
// clamp(1 + priority / 2^25, -10, 10), pkg/utils/disruption EvictionCost), then the GPU-seconds of
// job work the restart would lose, then node order. The first whose pods all fit on the other ready
// nodes (a dry run with the scheduler, gangs whole) and whose moves keep every item's disruption
// budget is emptied and removed; one such node per tick (Karpenter's single-node consolidation). A
// service replica restarts on its new node and loses nothing; a job restarts all its pods (also
// those on other nodes) from its last checkpoint. Moved pods add no pending-time samples. A node
// holding a do_not_disrupt pod (karpenter.sh/do-not-disrupt) is never emptied (Units::budgets_allow).
//
// Karpenter NodePools (ClusterConfig::node_pools). The controller runs when consolidation is enabled
// or the cluster has NodePools (Karpenter always consolidates its nodes); without
// ConsolidationSettings::enabled only the NodePools' nodes are candidates. For a node of a NodePool
// the NodePool's spec.disruption applies instead of the settings: consolidateAfter (Never: never a
// candidate), consolidationPolicy WhenEmpty (only empty nodes), an empty node is a candidate whatever
// the threshold, and its budgets: per tick, the NodePool's nodes removed (empty ones for reason Empty,
// the single-node consolidation for Underutilized) stay within allowed_disruptions (inputs/sim/cluster_config.h) of
// its Ready nodes as the tick starts (kubernetes-sigs/karpenter pkg/controllers/disruption
// BuildDisruptionBudgetMapping; removal is instant, so no node is still being disrupted). The
// threshold stays gpufleet's (Karpenter consolidates whenever the pods fit elsewhere for less).
#pragma once

#include <cstdint>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"
#include "sim/engine/billing.h"
#include "sim/engine/placement.h"

namespace gpufleet::sim {

class Consolidation final : public Controller {
 public:
  /// Registers "consolidation-tick" on `loop`. cluster.consolidation must be valid
  /// (validate_consolidation_settings); `cluster` must outlive the controller.
  Consolidation(const ClusterConfig& cluster, const SimulationModules& modules);
  /// The first tick at 0.
  void start() override;
  /// nodes_consolidated, consolidation_restarts, consolidation_moved_pods,
  /// consolidation_lost_gpu_hours.
  void report(SimResult& result) const override;

 private:
  void on_tick(double t);
  void consolidate(double t);
  bool try_consolidate(NodeId n, double t);

  const ConsolidationSettings& settings_;
  const std::vector<KarpenterNodePool>& node_pools_;
  std::vector<int32_t> node_pool_of_;  // per pool: index into node_pools_, -1 = not a NodePool's
  EventLoop& loop_;
  Fleet& fleet_;
  Placement& placement_;
  PendingQueue& pending_;
  Units& units_;
  const Billing& billing_;
  EventKind tick_ = 0;
  int64_t consolidated_ = 0;
  int64_t restarts_ = 0;
  int64_t moved_pods_ = 0;
  double lost_gpu_milli_s_ = 0;
};

}  // namespace gpufleet::sim
