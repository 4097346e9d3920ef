// Rolling driver upgrades (sim/controllers/driver_upgrade.h): exact finish times, capacity lost and
// jobs interrupted on a small pool, budgets and the drain timeout, and the 32-node figures of
// docs/checkpoints-and-upgrades.md.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/sim_output.h"
#include "report/sim_report.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

// `nodes` static on-demand nodes with 8 H100 GPUs each (192 vCPU, 2 TiB), 98 USD/h, autoscaler off.
ClusterConfig h100_pool(int32_t nodes) {
  return testing::one_pool_cluster(testing::gpu_pool({.name = "train", .gpu_model = "H100-80GB", .gpus_per_node = 8, .cpu_milli = 192000,
                                                      .memory_mib = 2048LL * 1024, .node_count = nodes, .min_nodes = nodes,
                                                      .max_nodes = nodes, .on_demand_usd_per_hour = 98}));
}

// `count` jobs of one 8-GPU pod, checkpointing every `interval_s`, long enough to outlast the run.
Workload jobs(int32_t count, double interval_s, double horizon_s) {
  Workload w;
  w.horizon_s = horizon_s;
  for (int32_t i = 0; i < count; ++i) {
    WorkloadSpec s;
    s.name = fmt::format("job-{:02}", i);
    s.num_gpu = 8;
    s.gpu_milli = 1000;
    s.duration_s = 1e6;
    s.checkpoint_interval_s = interval_s;
    w.items.push_back(s);
  }
  return w;
}

DriverUpgrade upgrade(IntOrPercent max_unavailable, int32_t max_parallel) {
  DriverUpgrade u;
  u.pool = "train";
  u.at_s = 1000;
  u.max_unavailable = max_unavailable;
  u.max_parallel_upgrades = max_parallel;
  u.upgrade_s = 600;
  u.drain_timeout_s = 300;
  return u;
}

SimResult run(const ClusterConfig& c, const Workload& w, const std::vector<Simulation::ControllerFactory>& controllers = {}) {
  return testing::run_least_allocated(c, w, controllers);
}

TEST(DriverUpgrade, OneNodeAtATimeOnAFullPool) {
  // 4 nodes, job-i on node i, checkpoints every 300 s. maxUnavailable 1: node 0 is cordoned at 1000
  // (job-00 stops: 1000 s run, 900 s kept, 100 s lost) and upgraded until 1600; then node 1 (job-01
  // 100 s lost; job-00 restarts on node 0), node 2 at 2200, node 3 at 2800, done at 3400. Capacity
  // lost: 4 nodes x 8 GPUs x 600 s; work lost: 4 jobs x 8 GPUs x 100 s.
  ClusterConfig c = h100_pool(4);
  c.faults.upgrades = {upgrade({1, false}, 0)};
  const SimResult r = run(c, jobs(4, 300, 5000));
  ASSERT_EQ(r.driver_upgrades.size(), 1u);
  const DriverUpgradeResult& u = r.driver_upgrades[0];
  EXPECT_DOUBLE_EQ(u.finish_s, 3400);
  EXPECT_EQ(u.max_unavailable, 1);
  EXPECT_EQ(u.nodes_upgraded, 4);
  EXPECT_EQ(u.nodes_skipped, 0);
  EXPECT_NEAR(u.capacity_lost_gpu_hours, 4 * 8 * 600 / 3600.0, 1e-9);
  EXPECT_EQ(u.jobs_interrupted, 4);
  EXPECT_EQ(u.pods_evicted, 4);
  EXPECT_EQ(u.pods_deleted, 0);
  EXPECT_NEAR(u.lost_gpu_hours, 4 * 8 * 100 / 3600.0, 1e-9);
  EXPECT_NEAR(r.lost_gpu_hours, u.lost_gpu_hours, 1e-12);
  for (const UnitOutcome& o : r.units) EXPECT_EQ(o.interruptions, 1) << o.name;
  const std::string json = io::sim_result_json(r);
  EXPECT_NE(json.find("\"driver_upgrades\""), std::string::npos);
  EXPECT_NE(io::sim_summary_text(r).find("driver upgrade train: from 1000 s to 3400 s, 4 nodes upgraded"), std::string::npos);
  const std::string html = io::sim_report_html("w", {io::CompareEntry{"c", "p", r}});
  EXPECT_NE(html.find("<tr><td>c</td><td class=\"text\">train</td><td>1000</td><td>3400</td><td>4</td><td>5.33</td><td>4</td><td>4</td><td>0.89</td></tr>"),
            std::string::npos);
}

TEST(DriverUpgrade, TwoAtATimeHalvesTheTime) {
  // maxUnavailable 2 (or 50% of 4, rounded up): nodes 0 and 1 at 1000 (100 s lost each), nodes 2 and
  // 3 at 1600 (1600 s run, 1500 s kept: 100 s lost each), done at 2200. Same capacity lost.
  for (IntOrPercent m : {IntOrPercent{2, false}, IntOrPercent{50, true}, IntOrPercent{26, true}}) {
    ClusterConfig c = h100_pool(4);
    c.faults.upgrades = {upgrade(m, 0)};
    const SimResult r = run(c, jobs(4, 300, 5000));
    const DriverUpgradeResult& u = r.driver_upgrades.at(0);
    EXPECT_DOUBLE_EQ(u.finish_s, 2200) << m.value;
    EXPECT_EQ(u.max_unavailable, 2);
    EXPECT_NEAR(u.capacity_lost_gpu_hours, 4 * 8 * 600 / 3600.0, 1e-9);
    EXPECT_EQ(u.jobs_interrupted, 4);
    EXPECT_NEAR(u.lost_gpu_hours, 4 * 8 * 100 / 3600.0, 1e-9);
  }
  // maxParallelUpgrades 1 (the GPU Operator's default) holds it to one node at a time.
  ClusterConfig c = h100_pool(4);
  c.faults.upgrades = {upgrade({2, false}, 1)};
  EXPECT_DOUBLE_EQ(run(c, jobs(4, 300, 5000)).driver_upgrades.at(0).finish_s, 3400);
  // 25% of 4 nodes: 1.
  c.faults.upgrades = {upgrade({25, true}, 0)};
  EXPECT_DOUBLE_EQ(run(c, jobs(4, 300, 5000)).driver_upgrades.at(0).finish_s, 3400);
}

TEST(DriverUpgrade, ABudgetHoldsTheDrainUntilTheTimeout) {
  // One node with a service replica under minAvailable 1: the eviction is refused (retried every
  // 5 s) until the drain timeout at 1300, then the pod is deleted; the node is upgraded until 1900.
  // Capacity lost: 8 GPUs x 900 s.
  ClusterConfig c = h100_pool(1);
  c.faults.upgrades = {upgrade({1, false}, 0)};
  Workload w;
  w.horizon_s = 5000;
  WorkloadSpec s;
  s.name = "web";
  s.kind = WorkloadKind::kService;
  s.num_gpu = 1;
  s.gpu_milli = 1000;
  s.disruption_budget = DisruptionBudget{IntOrPercent{1, false}, std::nullopt};
  w.items = {s};
  const SimResult r = run(c, w);
  const DriverUpgradeResult& u = r.driver_upgrades.at(0);
  EXPECT_DOUBLE_EQ(u.finish_s, 1900);
  EXPECT_EQ(u.pods_evicted, 0);
  EXPECT_EQ(u.pods_deleted, 1);
  EXPECT_EQ(u.jobs_interrupted, 0);
  EXPECT_NEAR(u.capacity_lost_gpu_hours, 8 * 900 / 3600.0, 1e-9);
  EXPECT_EQ(r.units.at(0).interruptions, 1);
  EXPECT_EQ(r.units.at(0).state, UnitState::kRunning);  // back on the upgraded node
}

TEST(DriverUpgrade, ANodeGoneBeforeItsTurnIsSkipped) {
  // 4 empty nodes, one at a time from 1000: train-3 gets a notice at 1200 (cordoned: the pool has two
  // unavailable nodes until its reclaim at 1320) and is gone when its turn comes. train-0, 1, 2 are
  // upgraded 1000-1600, 1600-2200, 2200-2800; done at 2800 with 3 nodes, 1 skipped.
  ClusterConfig c = h100_pool(4);
  c.faults.upgrades = {upgrade({1, false}, 0)};
  Workload w;
  w.horizon_s = 5000;
  const SimResult r = run(c, w, {testing::interrupt_at(1200, 3)});
  const DriverUpgradeResult& u = r.driver_upgrades.at(0);
  EXPECT_DOUBLE_EQ(u.finish_s, 2800);
  EXPECT_EQ(u.nodes_upgraded, 3);
  EXPECT_EQ(u.nodes_skipped, 1);
  EXPECT_NEAR(u.capacity_lost_gpu_hours, 3 * 8 * 600 / 3600.0, 1e-9);
}

TEST(DriverUpgrade, WaitsWhileAnotherNodeIsUnavailable) {
  // 2 empty nodes, maxUnavailable 1: train-1 gets a notice at 900 (cordoned, so not among the nodes
  // to upgrade at 1000, and it holds the one slot); at its reclaim at 1020 the upgrade goes on:
  // train-0 from 1020 to 1620.
  ClusterConfig c = h100_pool(2);
  c.faults.upgrades = {upgrade({1, false}, 0)};
  Workload w;
  w.horizon_s = 5000;
  const SimResult r = run(c, w, {testing::interrupt_at(900, 1)});
  const DriverUpgradeResult& u = r.driver_upgrades.at(0);
  EXPECT_DOUBLE_EQ(u.finish_s, 1620);
  EXPECT_EQ(u.nodes_upgraded, 1);
  EXPECT_EQ(u.nodes_skipped, 0);
  EXPECT_NEAR(u.capacity_lost_gpu_hours, 8 * 600 / 3600.0, 1e-9);
}

TEST(DriverUpgrade, RefusesAnUnknownPool) {
  ClusterConfig c = h100_pool(1);
  DriverUpgrade u = upgrade({1, false}, 0);
  u.pool = "nope";
  c.faults.upgrades = {u};
  EXPECT_THROW(run(c, jobs(1, 300, 100)), std::invalid_argument);
}

// The figures of docs/checkpoints-and-upgrades.md: a 32-node training pool (8 GPUs each) with 32
// (full) or 28 checkpointed jobs (every 1800 s), upgraded from 3600 s with maxUnavailable 1, 4 and
// 25% (maxParallelUpgrades 0: no other limit), upgrade 600 s, drain timeout 300 s.
TEST(DriverUpgradeFigures, ThirtyTwoNodePool) {
  std::string table = fmt::format("{:>5}  {:>14}  {:>9}  {:>10}  {:>16}  {:>11}  {:>12}\n", "jobs", "maxUnavailable", "finish_s",
                                  "duration_s", "capacity_lost_GPUh", "job_stops", "work_lost_GPUh");
  for (int32_t count : {32, 28}) {
    double previous_finish = 1e18;
    for (IntOrPercent m : {IntOrPercent{1, false}, IntOrPercent{4, false}, IntOrPercent{25, true}}) {
      ClusterConfig c = h100_pool(32);
      DriverUpgrade u = upgrade(m, 0);
      u.at_s = 3600;
      c.faults.upgrades = {u};
      const SimResult r = run(c, jobs(count, 1800, 30000));
      const DriverUpgradeResult& d = r.driver_upgrades.at(0);
      EXPECT_EQ(d.nodes_upgraded, 32);
      EXPECT_GT(d.finish_s, 0);
      EXPECT_LT(d.finish_s, previous_finish);
      previous_finish = d.finish_s;
      table += fmt::format("{:>5}  {:>14}  {:>9.0f}  {:>10.0f}  {:>16.2f}  {:>11}  {:>12.2f}\n", count,
                           fmt::format("{}{}", m.value, m.percent ? "%" : ""), d.finish_s, d.finish_s - d.start_s,
                           d.capacity_lost_gpu_hours, d.jobs_interrupted, d.lost_gpu_hours);
    }
  }
  std::cout << table;
}

}  // namespace
}  // namespace gpufleet::sim
