// The fleet's health primitives (sim/engine/fleet.h): GPUs withheld and restored, nodes that fail and
// recover, GPUs advertised after Ready, launches that fail. Each case is small enough to compute by
// hand; the comment above each test gives the timeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

using testing::At;
using testing::actions_at;
using testing::gpu_job;
using testing::least_allocated_options;
using testing::outcome;

// One static pool "p" of `nodes` nodes with `gpus` L4 GPUs each (8 vCPU, 32 GiB), at most
// max(nodes, 2), 3.6 USD/h (0.001 USD/s).
ClusterConfig pool_of(int32_t nodes, int32_t gpus) {
  return testing::one_pool_cluster(testing::gpu_pool({.gpus_per_node = gpus, .node_count = nodes, .max_nodes = std::max(nodes, 2)}));
}

TEST(SimFleetHealth, AWithheldGpuStopsItsPodAndTakesNoneUntilRestored) {
  // One node, 1 GPU. Job a (1000 s) starts at 0. At 100 GPU 0 is withheld (unhealthy): a stops, loses
  // 100 s, and waits; at 400 the GPU is restored and a starts again: done at 1400.
  Workload w;
  w.horizon_s = 2000;
  w.items = {gpu_job("a", 0, 1000)};
  ClusterConfig c = pool_of(1, 1);
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  int32_t withheld_seen = -1;
  int64_t allocated_seen = -1;
  sim.add_controller(actions_at({
    {100, [](Fleet& f, double t) { f.withhold_gpu(0, 0, GpuWithheld::kUnhealthy, t); }},
    {200, [&](Fleet& f, double) { withheld_seen = f.withheld_gpus(0); allocated_seen = f.gpu_allocated_milli(); }},
    {400, [](Fleet& f, double t) { f.restore_gpu(0, 0, t); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(withheld_seen, 1);
  EXPECT_EQ(allocated_seen, 0);  // the placeholder is not allocation
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1400);
  EXPECT_EQ(outcome(r, "a").interruptions, 1);
  EXPECT_NEAR(r.lost_gpu_hours, 100.0 / 3600.0, 1e-12);
  // Allocated 0-100 and 400-1400 of 2000 s on 1 GPU: 55%.
  EXPECT_NEAR(r.gpu_allocation_pct_mean, 1100.0 / 2000.0 * 100.0, 1e-9);
}

TEST(SimFleetHealth, OnlyThePodsOnTheLostGpuStop) {
  // One node, 2 GPUs: a on GPU 0, b on GPU 1 (both start at 0, 1000 s). GPU 1 is lost at 100: only b
  // stops; it cannot restart (one GPU left, held by a) until a completes at 1000; b done at 2000.
  Workload w;
  w.horizon_s = 3000;
  w.items = {gpu_job("a", 0, 1000), gpu_job("b", 0, 1000)};
  ClusterConfig c = pool_of(1, 2);
  const SimOptions o = least_allocated_options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  sim.add_controller(actions_at({
    {100, [](Fleet& f, double t) {
       // b was bound second; leastallocated puts it on GPU 1 of the node (a holds GPU 0).
       f.withhold_gpu(0, 1, GpuWithheld::kUnhealthy, t);
     }}}));
  const SimResult r = sim.run();
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1000);
  EXPECT_EQ(outcome(r, "a").interruptions, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "b").completion_s, 2000);
  EXPECT_EQ(outcome(r, "b").interruptions, 1);
}

TEST(SimFleetHealth, GpusAdvertisedAfterReady) {
  // A node launched at 0 by a scale-up is Ready at 60 (provision_s) but advertises its GPU only at
  // 60 + 120 = 180: job a (arrives 0, 100 s) starts at 180, done at 280.
  Workload w;
  w.horizon_s = 1000;
  w.items = {gpu_job("a", 0, 100)};
  ClusterConfig c = pool_of(0, 1);
  c.pools[0].settings.provision_s = 60;
  c.pools[0].settings.gpu_advertise_delay_s = 120;
  const SimOptions o = least_allocated_options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  int32_t not_advertised_at_100 = -1;
  sim.add_controller(actions_at({
    {0, [](Fleet& f, double t) { f.launch(0, 1, t); }},
    {100, [&](Fleet& f, double) { not_advertised_at_100 = f.withheld_gpus(0, GpuWithheld::kNotAdvertised); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(not_advertised_at_100, 1);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 280);
}

TEST(SimFleetHealth, AFailedNodeStopsItsPodsAndComesBack) {
  // One node, 1 GPU: a (1000 s) starts at 0; the node fails at 300 (a loses 300 s) and recovers at
  // 500: a restarts at 500, done at 1500. The node is billed all along: 2000 s x 0.001 = 2 USD.
  Workload w;
  w.horizon_s = 2000;
  w.items = {gpu_job("a", 0, 1000)};
  ClusterConfig c = pool_of(1, 1);
  const SimOptions o = least_allocated_options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  NodePhase at_400 = NodePhase::kAbsent;
  sim.add_controller(actions_at({
    {300, [](Fleet& f, double t) { f.fail_node(0, t); }},
    {400, [&](Fleet& f, double) { at_400 = f.phase(0); }},
    {500, [](Fleet& f, double t) { f.recover_node(0, t); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(at_400, NodePhase::kNotReady);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1500);
  EXPECT_NEAR(r.lost_gpu_hours, 300.0 / 3600.0, 1e-12);
  EXPECT_NEAR(r.cost_usd, 2.0, 1e-9);
}

TEST(SimFleetHealth, ABlockedLaunchFailsAndIsNeverBilled) {
  // Launches are blocked before 100 and fail 20 s after the request. A launch at 0 fails at 20 (the
  // node is absent again); a launch at 150 succeeds: Ready at 210 (provision_s 60), a runs 210-310.
  // Billed 150-1000: 850 s x 0.001 USD/s.
  Workload w;
  w.horizon_s = 1000;
  w.items = {gpu_job("a", 0, 100)};
  ClusterConfig c = pool_of(0, 1);
  c.pools[0].settings.provision_s = 60;
  const SimOptions o = least_allocated_options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  NodePhase at_10 = NodePhase::kAbsent, at_30 = NodePhase::kReady;
  int64_t failures = -1;
  sim.add_controller([&](const ControllerPorts& ports) {
    ports.fleet.set_launch_gate([](size_t, double t) { return t < 100; }, 20);
    return std::make_unique<At>(ports, At::Actions{
        {0, [](Fleet& f, double t) { EXPECT_EQ(f.launch(0, 1, t), 1); }},
        {10, [&](Fleet& f, double) { at_10 = f.phase(0); }},
        {30, [&](Fleet& f, double) { at_30 = f.phase(0); failures = f.launch_failures(); }},
        {150, [](Fleet& f, double t) { f.launch(0, 1, t); }}});
  });
  const SimResult r = sim.run();
  EXPECT_EQ(at_10, NodePhase::kProvisioning);
  EXPECT_EQ(at_30, NodePhase::kAbsent);
  EXPECT_EQ(failures, 1);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 310);
  EXPECT_NEAR(r.cost_usd, 0.85, 1e-9);
}

}  // namespace
}  // namespace gpufleet::sim
