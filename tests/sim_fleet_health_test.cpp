// The fleet's health primitives (sim/engine/fleet.h): GPUs withheld and restored, nodes that fail and
// recover, GPUs advertised after Ready, launches that fail. Each case is small enough to compute by
// hand; the comment above each test gives the timeline.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "sim/controllers/controller.h"
#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"

namespace gpufleet::sim {
namespace {

// Runs the given actions on the fleet at their times (a fault injector of the test's own).
class At final : public Controller {
 public:
  using Action = std::function<void(Fleet&, double)>;
  At(const ControllerPorts& ports, std::vector<std::pair<double, Action>> actions) : ports_(ports), actions_(std::move(actions)) {
    kind_ = ports_.events.register_event("test-action", [this](const Event& e) { actions_[e.subject].second(ports_.fleet, e.time_s); });
  }
  void start() override {
    for (uint32_t i = 0; i < actions_.size(); ++i) ports_.events.schedule(actions_[i].first, kind_, i);
  }

 private:
  ControllerPorts ports_;
  std::vector<std::pair<double, At::Action>> actions_;
  EventKind kind_ = 0;
};

// One static pool of `nodes` nodes with `gpus` L4 GPUs each, 3.6 USD/h (0.001 USD/s).
ClusterConfig pool_of(int32_t nodes, int32_t gpus) {
  ClusterConfig c;
  SimPool p;
  p.pool.name = "p";
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 8000;
  p.pool.memory_bytes = 32768 * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = 0;
  p.pool.max_nodes = std::max(nodes, 2);
  p.pool.on_demand_usd_per_hour = 3.6;
  c.pools = {p};
  c.autoscaler.enabled = false;
  return c;
}

WorkloadSpec job(std::string name, double arrival_s, double duration_s, int32_t gpus = 1) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.num_gpu = gpus;
  s.gpu_milli = 1000;
  return s;
}

const UnitOutcome& outcome(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

SimOptions options() {
  SimOptions o;
  o.policy = "leastallocated";
  return o;
}

TEST(SimFleetHealth, AWithheldGpuStopsItsPodAndTakesNoneUntilRestored) {
  // One node, 1 GPU. Job a (1000 s) starts at 0. At 100 GPU 0 is withheld (unhealthy): a stops, loses
  // 100 s, and waits; at 400 the GPU is restored and a starts again: done at 1400.
  Workload w;
  w.horizon_s = 2000;
  w.items = {job("a", 0, 1000)};
  ClusterConfig c = pool_of(1, 1);
  const SimOptions o = options();
  Simulation sim(c, w, o);
  int32_t withheld_seen = -1;
  int64_t allocated_seen = -1;
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<At>(ports, std::vector<std::pair<double, At::Action>>{
        {100, [](Fleet& f, double t) { f.withhold_gpu(0, 0, GpuWithheld::kUnhealthy, t); }},
        {200, [&](Fleet& f, double) { withheld_seen = f.withheld_gpus(0); allocated_seen = f.gpu_allocated_milli(); }},
        {400, [](Fleet& f, double t) { f.restore_gpu(0, 0, t); }}});
  });
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
  w.items = {job("a", 0, 1000), job("b", 0, 1000)};
  ClusterConfig c = pool_of(1, 2);
  const SimOptions o = options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<At>(ports, std::vector<std::pair<double, At::Action>>{
        {100, [](Fleet& f, double t) {
           // b was bound second; leastallocated puts it on GPU 1 of the node (a holds GPU 0).
           f.withhold_gpu(0, 1, GpuWithheld::kUnhealthy, t);
         }}});
  });
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
  w.items = {job("a", 0, 100)};
  ClusterConfig c = pool_of(0, 1);
  c.pools[0].settings.provision_s = 60;
  c.pools[0].settings.gpu_advertise_delay_s = 120;
  const SimOptions o = options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  int32_t not_advertised_at_100 = -1;
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<At>(ports, std::vector<std::pair<double, At::Action>>{
        {0, [](Fleet& f, double t) { f.launch(0, 1, t); }},
        {100, [&](Fleet& f, double) { not_advertised_at_100 = f.withheld_gpus(0, GpuWithheld::kNotAdvertised); }}});
  });
  const SimResult r = sim.run();
  EXPECT_EQ(not_advertised_at_100, 1);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 280);
}

TEST(SimFleetHealth, AFailedNodeStopsItsPodsAndComesBack) {
  // One node, 1 GPU: a (1000 s) starts at 0; the node fails at 300 (a loses 300 s) and recovers at
  // 500: a restarts at 500, done at 1500. The node is billed all along: 2000 s x 0.001 = 2 USD.
  Workload w;
  w.horizon_s = 2000;
  w.items = {job("a", 0, 1000)};
  ClusterConfig c = pool_of(1, 1);
  const SimOptions o = options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  NodePhase at_400 = NodePhase::kAbsent;
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<At>(ports, std::vector<std::pair<double, At::Action>>{
        {300, [](Fleet& f, double t) { f.fail_node(0, t); }},
        {400, [&](Fleet& f, double) { at_400 = f.phase(0); }},
        {500, [](Fleet& f, double t) { f.recover_node(0, t); }}});
  });
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
  w.items = {job("a", 0, 100)};
  ClusterConfig c = pool_of(0, 1);
  c.pools[0].settings.provision_s = 60;
  const SimOptions o = options();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  NodePhase at_10 = NodePhase::kAbsent, at_30 = NodePhase::kReady;
  int64_t failures = -1;
  sim.add_controller([&](const ControllerPorts& ports) {
    ports.fleet.set_launch_gate([](size_t, double t) { return t < 100; }, 20);
    return std::make_unique<At>(ports, std::vector<std::pair<double, At::Action>>{
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
