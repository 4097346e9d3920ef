// Karpenter's disruption controls in consolidation (sim/controllers/consolidation.h): a NodePool's
// budgets (the most restrictive that applies to the reason, percentages rounded up, the implicit
// 10%), consolidateAfter, consolidationPolicy WhenEmpty, and the do-not-disrupt pod annotation. Each
// timeline is computed by hand in the comment above its test. Consolidation ticks every 10 s from 0;
// removal is instant.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

using R = KarpenterDisruptionReason;
using testing::run_least_allocated;

// An on-demand offering of NodePool "gpu": `nodes` nodes Ready at 0, `gpus` L4 GPUs each, 1 USD/h.
SimPool offering(int32_t nodes, int32_t gpus = 1) {
  SimPool p = testing::gpu_pool({.name = "gpu-l4-z1-od", .gpus_per_node = gpus, .node_count = nodes, .max_nodes = 16, .on_demand_usd_per_hour = 1.0});
  p.pool.labels.emplace_back("topology.kubernetes.io/zone", "z1");
  p.settings.karpenter_node_pool = "gpu";
  p.settings.provision_s = 60;
  return p;
}

KarpenterNodePool node_pool(std::vector<KarpenterDisruptionBudget> budgets = {}, double consolidate_after_s = 0) {
  KarpenterNodePool np;
  np.name = "gpu";
  np.consolidate_after_s = consolidate_after_s;
  np.budgets = std::move(budgets);
  return np;
}

KarpenterDisruptionBudget budget(int32_t value, bool percent, std::vector<R> reasons = {}) {
  return KarpenterDisruptionBudget{IntOrPercent{value, percent}, std::move(reasons), false};
}

// The service "chat": 2 replicas of one GPU and 2 vCPU each, from 0.
WorkloadSpec chat_service() {
  WorkloadSpec s = testing::gpu_job("chat", 0, 0);
  s.kind = WorkloadKind::kService;
  s.pods = 2;
  s.cpu_milli = 2000;
  return s;
}

Workload idle(double horizon_s) {
  Workload w;
  w.horizon_s = horizon_s;
  return w;
}

// 10 empty nodes, no budgets (implicit 10%), ticks at 0, 10, 20, 30, 40 (horizon 45): each tick
// allows ceil(10% x Ready nodes) = 1 (ceil(1.0), then ceil(0.9) .. ceil(0.6)): 5 nodes removed. A
// Cluster Autoscaler pool beside it (1 empty node) is not consolidated (consolidation is off for
// it) and not yet scaled down (its unneeded time is 600 s).
TEST(SimKarpenterDisruption, ImplicitBudgetRemovesTenPercentRoundedUpPerTick) {
  ClusterConfig c;
  SimPool ca = offering(1);
  ca.pool.name = "ca";
  ca.pool.labels.clear();
  ca.settings.karpenter_node_pool.clear();
  c.pools = {offering(10), ca};
  c.node_pools = {node_pool()};
  const SimResult r = run_least_allocated(c, idle(45));
  EXPECT_EQ(r.nodes_consolidated, 5);
  EXPECT_EQ(r.nodes_scaled_down, 0);
}

// Budget "50%": tick 0 removes ceil(5.0) = 5, tick 10 ceil(2.5) = 3 (rounded up, not down to 2):
// 8 by horizon 15. With a second budget "2" the most restrictive wins: 2 per tick, 4 by horizon 15.
TEST(SimKarpenterDisruption, PercentRoundsUpAndTheMostRestrictiveBudgetWins) {
  ClusterConfig c;
  c.pools = {offering(10)};
  c.node_pools = {node_pool({budget(50, true)})};
  EXPECT_EQ(run_least_allocated(c, idle(15)).nodes_consolidated, 8);
  c.node_pools = {node_pool({budget(50, true), budget(2, false)})};
  EXPECT_EQ(run_least_allocated(c, idle(15)).nodes_consolidated, 4);
}

// Budgets by reason: "0" for Empty stops the removal of empty nodes; "0" for Underutilized only
// does not (Empty is then unlimited: all 10 at tick 0); "0" for Drifted only leaves Empty unlimited
// too (the implicit 10% applies only when no budget is given).
TEST(SimKarpenterDisruption, BudgetsApplyToTheirReasons) {
  ClusterConfig c;
  c.pools = {offering(10)};
  c.node_pools = {node_pool({budget(0, false, {R::kEmpty})})};
  EXPECT_EQ(run_least_allocated(c, idle(45)).nodes_consolidated, 0);
  c.node_pools = {node_pool({budget(0, false, {R::kUnderutilized})})};
  EXPECT_EQ(run_least_allocated(c, idle(5)).nodes_consolidated, 10);
  c.node_pools = {node_pool({budget(0, false, {R::kDrifted})})};
  EXPECT_EQ(run_least_allocated(c, idle(5)).nodes_consolidated, 10);
}

// consolidateAfter 25 s: the nodes (Ready at 0, no pod change since) are candidates from the tick
// at 30, where a "100%" budget lets all 10 go; by horizon 25, none. Never: none at all.
TEST(SimKarpenterDisruption, ConsolidateAfterAndNever) {
  ClusterConfig c;
  c.pools = {offering(10)};
  c.node_pools = {node_pool({budget(100, true)}, 25)};
  EXPECT_EQ(run_least_allocated(c, idle(25)).nodes_consolidated, 0);
  EXPECT_EQ(run_least_allocated(c, idle(35)).nodes_consolidated, 10);
  c.node_pools = {node_pool({budget(100, true)}, std::numeric_limits<double>::infinity())};
  EXPECT_EQ(run_least_allocated(c, idle(100)).nodes_consolidated, 0);
}

// Two nodes of 4 GPUs, a service of 2 one-GPU replicas at 0 (leastallocated: one per node, each node
// 25% used, below the 0.4 threshold); consolidateAfter 60. At the tick at 60 both nodes are
// candidates at equal cost; the first (node 0) is emptied, its replica moves to node 1 (then 50%
// used: no longer a candidate) and node 0 is removed: 1 node, 1 pod moved. The implicit 10% of 2
// Ready nodes allows ceil(0.2) = 1. Each control below stops it: the pods' do-not-disrupt, the
// policy WhenEmpty, a budget "0" for Underutilized; a budget "0" for Empty does not.
TEST(SimKarpenterDisruption, UnderutilizedNodeAndWhatBlocksIt) {
  ClusterConfig c;
  c.pools = {offering(2, 4)};
  c.node_pools = {node_pool({}, 60)};
  Workload w;
  w.horizon_s = 120;
  w.items = {chat_service()};
  {
    const SimResult r = run_least_allocated(c, w);
    EXPECT_EQ(r.nodes_consolidated, 1);
    EXPECT_EQ(r.consolidation_moved_pods, 1);
  }
  w.items[0].do_not_disrupt = true;
  EXPECT_EQ(run_least_allocated(c, w).nodes_consolidated, 0);
  w.items[0].do_not_disrupt = false;
  c.node_pools[0].consolidate_when_empty_only = true;
  EXPECT_EQ(run_least_allocated(c, w).nodes_consolidated, 0);
  c.node_pools = {node_pool({budget(0, false, {R::kUnderutilized})}, 60)};
  EXPECT_EQ(run_least_allocated(c, w).nodes_consolidated, 0);
  c.node_pools = {node_pool({budget(0, false, {R::kEmpty})}, 60)};
  EXPECT_EQ(run_least_allocated(c, w).nodes_consolidated, 1);
}

// do-not-disrupt also holds the Cluster Autoscaler's scale-down moves: a CA pool of two 4-GPU nodes
// (consolidation off, scale-down unneeded 60 s, no delay after add), the same service: both nodes
// are unneeded (25% < 0.5) from 0; at the scan at 60 the first is removed, its replica moving. With
// do-not-disrupt, neither is.
TEST(SimKarpenterDisruption, DoNotDisruptHoldsClusterAutoscalerScaleDown) {
  ClusterConfig c;
  SimPool ca = offering(2, 4);
  ca.pool.name = "ca";
  ca.settings.karpenter_node_pool.clear();
  c.pools = {ca};
  c.autoscaler.scale_down_unneeded_s = 60;
  c.autoscaler.scale_down_delay_after_add_s = 0;
  Workload w;
  w.horizon_s = 120;
  w.items = {chat_service()};
  EXPECT_EQ(run_least_allocated(c, w).nodes_scaled_down, 1);
  w.items[0].do_not_disrupt = true;
  EXPECT_EQ(run_least_allocated(c, w).nodes_scaled_down, 0);
}

}  // namespace
}  // namespace gpufleet::sim
