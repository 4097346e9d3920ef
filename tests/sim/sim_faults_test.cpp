// Fault schedules carried out (sim/controllers/fault_injector.h) and the alerts they raise
// (sim/controllers/alerting.h): S28 (an application-level XID keeps the GPU; its XID 79 control takes
// it away), device-plugin failures (running pods keep their GPUs, new ones get none; pool-wide
// failures do not change the pool's template: S10's plugin half), node failure and recovery, spot
// interruption storms, seeded rate faults. Each timeline is computed by hand in the comment above it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/sim_output.h"
#include "model/resources.h"
#include "model/xid.h"
#include "sim/controllers/controller.h"
#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

using testing::actions_at;
using testing::least_allocated_options;
using testing::outcome;

// One static pool "name" of `nodes` nodes (max `max_nodes`) with `gpus` GPUs of `model` each.
ClusterConfig pool_of(const std::string& name, int32_t nodes, int32_t gpus, const std::string& model = "L4", int32_t max_nodes = 2) {
  return testing::one_pool_cluster(testing::gpu_pool({.name = name, .gpu_model = model, .gpus_per_node = gpus, .cpu_milli = 192000,
                                                      .memory_mib = int64_t{2048} * 1024, .node_count = nodes, .max_nodes = max_nodes}));
}

// gpu_job with 1 vCPU and 1 GiB per pod and a checkpoint every `checkpoint_s` of work (0: none).
WorkloadSpec job(std::string name, double arrival_s, double duration_s, int32_t gpus = 1, double checkpoint_s = 0) {
  WorkloadSpec s = testing::gpu_job(std::move(name), arrival_s, duration_s, gpus);
  s.cpu_milli = 1000;
  s.memory_bytes = 1024 * kBytesPerMib;
  s.checkpoint_interval_s = checkpoint_s;
  return s;
}

Fault at_node(FaultKind kind, const std::string& node, double at_s, double recover_after_s = -1) {
  Fault f;
  f.kind = kind;
  f.target.node = node;
  f.at_s = at_s;
  f.recover_after_s = recover_after_s;
  return f;
}

Fault xid_on(const std::string& node, double at_s, int32_t code, int32_t gpu, double recover_after_s = -1) {
  Fault f = at_node(FaultKind::kXid, node, at_s, recover_after_s);
  f.xid = code;
  f.gpu = gpu;
  return f;
}

void expect_alert(const Alert& a, double time_s, const std::string& alert, const std::string& severity, const std::string& subject,
                  const std::string& message) {
  EXPECT_DOUBLE_EQ(a.time_s, time_s);
  EXPECT_EQ(a.alert, alert);
  EXPECT_EQ(a.severity, severity);
  EXPECT_EQ(a.subject, subject);
  EXPECT_EQ(a.message, message);
}

TEST(XidCatalog, EffectsFollowNvidiasCatalog) {
  EXPECT_EQ(find_xid(94)->effect, XidEffect::kRestartApplication);  // contained ECC error
  EXPECT_EQ(find_xid(13)->effect, XidEffect::kRestartApplication);
  for (int32_t code : {48, 63, 64, 74, 79, 95, 119, 120}) EXPECT_EQ(find_xid(code)->effect, XidEffect::kResetGpu) << code;
  // The device plugin's default skip list (internal/rm/health.go): 13, 31, 43, 45, 68, 109; not 94.
  std::vector<int32_t> skipped;
  for (const XidInfo& x : xid_catalog())
    if (x.device_plugin_skips) skipped.push_back(x.code);
  EXPECT_EQ(skipped, (std::vector<int32_t>{13, 31, 43, 45, 68, 109}));
  EXPECT_FALSE(find_xid(12));
  EXPECT_EQ(known_xid_codes(), "8, 13, 31, 43, 45, 48, 63, 64, 68, 74, 79, 92, 94, 95, 109, 119, 120");
  EXPECT_STREQ(xid_action(XidEffect::kResetGpu), "drain and reset the GPU");
}

// S28. Node h-0: 8x H100. R (1 GPU, 1800 s, no checkpoints) starts at 0 on GPU 0; Q (8 GPUs) arrives
// at 60 and waits for the whole node. XID 94 on GPU 0 at 60: the alert says restart the
// application, R restarts in place (loses 60 s, runs 1800 s again: done at 1860), the GPU stays
// allocatable, and Q binds at 1860 with 8 GPUs (done at 3660). Q pending from 60: 15 min later, at
// the 960 s evaluation, KubePodPendingTooLong.
TEST(SimFaultSchedule, S28ApplicationXidRestartsThePodAndKeepsTheGpu) {
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("r", 0, 1800), job("q", 60, 1800, 8)};
  ClusterConfig c = pool_of("h", 1, 8, "H100-80GB", 1);
  c.faults.faults = {xid_on("h-0", 60, 94, 0)};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  int32_t withheld_at_120 = -1;
  sim.add_controller(actions_at({{120, [&](Fleet& f, double) { withheld_at_120 = f.withheld_gpus(0); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(withheld_at_120, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "r").completion_s, 1860);
  EXPECT_EQ(outcome(r, "r").starts, 2);
  EXPECT_EQ(outcome(r, "r").interruptions, 1);  // restarted in place: the pod stays bound
  EXPECT_DOUBLE_EQ(outcome(r, "q").completion_s, 3660);
  EXPECT_NEAR(r.lost_gpu_hours, 60.0 / 3600.0, 1e-12);
  EXPECT_EQ(r.faults.xid_errors, 1);
  EXPECT_EQ(r.faults.container_restarts, 1);
  EXPECT_EQ(r.faults.gpus_reset, 0);
  ASSERT_EQ(r.alerts.size(), 2u);
  expect_alert(r.alerts[0], 60, "DCGMXidError", "warning", "h-0/gpu0",
               "XID 94 (contained ECC error) on GPU 0 of h-0: restart the application");
  expect_alert(r.alerts[1], 960, "KubePodPendingTooLong", "warning", "q", "q has been pending for longer than 15 min");
}

// S28's control: XID 79 (fallen off the bus) on GPU 0 at 60. GPU 0 leaves allocatable (unhealthy),
// R stops and starts again at 60 on another GPU (done at 1860), the alert asks for a drain and
// reset, and Q (8 GPUs) never binds to the node: 7 are left.
TEST(SimFaultSchedule, S28ControlResetXidTakesTheGpuAway) {
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("r", 0, 1800), job("q", 60, 1800, 8)};
  ClusterConfig c = pool_of("h", 1, 8, "H100-80GB", 1);
  c.faults.faults = {xid_on("h-0", 60, 79, 0)};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  GpuWithheld gpu0 = GpuWithheld::kNone;
  sim.add_controller(actions_at({{7000, [&](Fleet& f, double) { gpu0 = f.gpu_withheld(0, 0); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(gpu0, GpuWithheld::kUnhealthy);
  EXPECT_DOUBLE_EQ(outcome(r, "r").completion_s, 1860);
  EXPECT_EQ(outcome(r, "r").interruptions, 1);
  EXPECT_EQ(outcome(r, "q").state, UnitState::kPending);
  EXPECT_EQ(r.faults.gpus_reset, 1);
  ASSERT_GE(r.alerts.size(), 1u);
  expect_alert(r.alerts[0], 60, "DCGMXidError", "critical", "h-0/gpu0",
               "XID 79 (GPU has fallen off the bus) on GPU 0 of h-0: drain and reset the GPU");
}

// The pending peak of S28's control (docs/faults.md's report): at 60 R is stopped and Q arrives, and R
// binds again at once, so the two are pending together for no time at all. The peak counts settled
// states (after every event at a time): Q alone from 60, with the scheduler's reason, and the
// report's chart (each row's most pending pods) reaches exactly that peak.
TEST(SimFaultSchedule, PendingPeakIsTheChartsTopWithTheReasonItWaitedFor) {
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("r", 0, 1800), job("q", 60, 1800, 8)};
  ClusterConfig c = pool_of("h", 1, 8, "H100-80GB", 1);
  c.faults.faults = {xid_on("h-0", 60, 79, 0)};
  const SimResult r = simulate(c, w, least_allocated_options());
  EXPECT_EQ(r.pending_peak_pods, 1);
  EXPECT_DOUBLE_EQ(r.pending_peak_s, 60);
  ASSERT_EQ(r.pending_at_peak.size(), 1u);
  EXPECT_EQ(r.pending_at_peak[0].unit, "q");
  EXPECT_EQ(r.pending_at_peak[0].reason, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
  int64_t chart_top = 0;
  for (const TimeseriesRow& row : r.timeseries) chart_top = std::max(chart_top, row.pending_pods_peak);
  EXPECT_EQ(chart_top, r.pending_peak_pods);
  EXPECT_EQ(r.timeseries[1].pending_pods, 1);  // 60 s: Q
  EXPECT_EQ(r.timeseries[0].pending_pods_peak, 0);  // [0, 60): nothing waits
}

// A peak shorter than a sample interval: three one-GPU jobs on one 2-GPU node from 10 s to 40 s
// (two run, one waits 30 s until the first ends at 40). No row's state has a pod pending (rows at 0
// and 60), but the first row's peak has it, and so does the JSON's peak.
TEST(SimFaultSchedule, APeakBetweenSamplesIsInTheRowsPeak) {
  Workload w;
  w.horizon_s = 600;
  w.items = {job("a", 10, 30), job("b", 10, 100), job("c", 10, 100)};
  const SimResult r = simulate(pool_of("h", 1, 2, "H100-80GB", 1), w, least_allocated_options());
  ASSERT_GE(r.timeseries.size(), 2u);
  EXPECT_EQ(r.timeseries[0].pending_pods, 0);
  EXPECT_EQ(r.timeseries[1].pending_pods, 0);
  EXPECT_EQ(r.timeseries[0].pending_pods_peak, 1);
  EXPECT_EQ(r.timeseries[1].pending_pods_peak, 0);
  EXPECT_EQ(r.pending_peak_pods, 1);
  EXPECT_DOUBLE_EQ(r.pending_peak_s, 10);
  EXPECT_EQ(r.pending.p99, 30);
}

// The same with recoverAfterSeconds 600: GPU 0 is back at 660; R holds GPU 1 until 1860, so Q binds
// at 1860 (done at 3660).
TEST(SimFaultSchedule, ResetXidGpuComesBackAfterTheReset) {
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("r", 0, 1800), job("q", 60, 1800, 8)};
  ClusterConfig c = pool_of("h", 1, 8, "H100-80GB", 1);
  c.faults.faults = {xid_on("h-0", 60, 79, 0, 600)};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  int32_t withheld_at_600 = -1, withheld_at_700 = -1;
  sim.add_controller(actions_at({
    {600, [&](Fleet& f, double) { withheld_at_600 = f.withheld_gpus(0); }},
    {700, [&](Fleet& f, double) { withheld_at_700 = f.withheld_gpus(0); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(withheld_at_600, 1);
  EXPECT_EQ(withheld_at_700, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "q").completion_s, 3660);
}

// A plugin that fails and is back before the node's GPUs were first advertised leaves them to the
// advertisement: GPU advertised 300 s after Ready (0), plugin down 10-60; job a (100 s) starts at 300.
TEST(SimFaultSchedule, PluginBackBeforeTheGpusAreAdvertised) {
  Workload w;
  w.horizon_s = 1000;
  w.items = {job("a", 0, 100)};
  ClusterConfig c = pool_of("p", 1, 1);
  c.pools[0].settings.gpu_advertise_delay_s = 300;
  c.faults.faults = {at_node(FaultKind::kDevicePluginFailure, "p-0", 10, 50)};
  const SimOptions o = least_allocated_options();
  const SimResult r = simulate(c, w, o);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 400);
}

// A device-plugin failure on node p-0 (2 GPUs) at 60, back 540 s later (600). Job a (GPU 0, 0-300)
// keeps running and completes at 300; GPU 1 is withheld at once (free), GPU 0 when a leaves at 300.
// Job b (1 GPU, 100 s) arrives at 120 and waits for the plugin: starts at 600, done at 700.
TEST(SimFaultSchedule, DevicePluginFailureKeepsRunningPodsAndTakesNoNewOnes) {
  Workload w;
  w.horizon_s = 2000;
  w.items = {job("a", 0, 300), job("b", 120, 100)};
  ClusterConfig c = pool_of("p", 1, 2);
  c.faults.faults = {at_node(FaultKind::kDevicePluginFailure, "p-0", 60, 540)};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  int32_t at_200 = -1, at_400 = -1, at_650 = -1;
  sim.add_controller(actions_at({
    {200, [&](Fleet& f, double) { at_200 = f.withheld_gpus(0, GpuWithheld::kNotAdvertised); }},
    {400, [&](Fleet& f, double) { at_400 = f.withheld_gpus(0, GpuWithheld::kNotAdvertised); }},
    {650, [&](Fleet& f, double) { at_650 = f.withheld_gpus(0); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(at_200, 1);
  EXPECT_EQ(at_400, 2);
  EXPECT_EQ(at_650, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 300);
  EXPECT_EQ(outcome(r, "a").interruptions, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "b").completion_s, 700);
  EXPECT_EQ(r.faults.device_plugin_failures, 1);
  EXPECT_TRUE(r.alerts.empty());  // b waited 480 s, below 15 min
}

// Node failure at 500 on p-0 (1 GPU), back 1200 s later (1700). Job a (1000 s, checkpoint every
// 200 s) stops at 500 keeping 400 s (loses 100 s) and waits; KubeNodeNotReady fires at 500 + 900 =
// 1400, KubePodPendingTooLong at the first 60 s evaluation 15 min after 500: 1440. At 1700 a
// starts again for its last 600 s: done at 2300.
TEST(SimFaultSchedule, NodeFailureAndRecoveryTimeline) {
  Workload w;
  w.horizon_s = 3000;
  w.items = {job("a", 0, 1000, 1, 200)};
  ClusterConfig c = pool_of("p", 1, 1);
  c.faults.faults = {at_node(FaultKind::kNodeFailure, "p-0", 500, 1200)};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  NodePhase at_1000 = NodePhase::kAbsent;
  sim.add_controller(actions_at({{1000, [&](Fleet& f, double) { at_1000 = f.phase(0); }}}));
  const SimResult r = sim.run();
  EXPECT_EQ(at_1000, NodePhase::kNotReady);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 2300);
  EXPECT_NEAR(r.lost_gpu_hours, 100.0 / 3600.0, 1e-12);
  EXPECT_EQ(r.faults.node_failures, 1);
  ASSERT_EQ(r.alerts.size(), 2u);
  expect_alert(r.alerts[0], 1400, "KubeNodeNotReady", "warning", "p-0", "node p-0 has been NotReady for 15 min");
  expect_alert(r.alerts[1], 1440, "KubePodPendingTooLong", "warning", "a", "a has been pending for longer than 15 min");
}

// A node back within 15 min raises no KubeNodeNotReady: failure at 500, back at 800; a (no
// checkpoints) loses its 500 s and runs 1000 s again from 800: done at 1800.
TEST(SimFaultSchedule, ShortNodeFailureRaisesNoAlert) {
  Workload w;
  w.horizon_s = 3000;
  w.items = {job("a", 0, 1000)};
  ClusterConfig c = pool_of("p", 1, 1);
  c.faults.faults = {at_node(FaultKind::kNodeFailure, "p-0", 500, 300)};
  const SimOptions o = least_allocated_options();
  const SimResult r = simulate(c, w, o);
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1800);
  EXPECT_TRUE(r.alerts.empty());
}

// Three spot notices in pool s (4 spot nodes) at 0, 100 and 200: the third completes 3 in 10 min.
TEST(SimFaultSchedule, SpotInterruptionStorm) {
  Workload w;
  w.horizon_s = 3000;
  ClusterConfig c = pool_of("s", 4, 1, "L4", 4);
  c.pools[0].pool.spot_usd_per_hour = 1.0;
  c.pools[0].settings.capacity_type = CapacityType::kSpot;
  for (double t : {0.0, 100.0, 200.0}) {
    Fault f;
    f.kind = FaultKind::kSpotInterruption;
    f.target.pool = "s";
    f.at_s = t;
    c.faults.faults.push_back(f);
  }
  const SimOptions o = least_allocated_options();
  const SimResult r = simulate(c, w, o);
  EXPECT_EQ(r.spot_interruptions, 3);
  EXPECT_EQ(r.faults.spot_interruptions, 3);
  ASSERT_EQ(r.alerts.size(), 1u);
  expect_alert(r.alerts[0], 200, "SpotInterruptionStorm", "critical", "s", "3 spot interruptions in pool s within 10 min");
}

// S10's device-plugin half. Pool g: 0..2 nodes of 1 GPU, the Cluster Autoscaler on. The device
// plugin of the whole pool fails at 0 until 1200: every node that becomes Ready meanwhile
// advertises 0 GPUs (pod a waits), and the pool's template still offers 1 GPU. At 1200 the test
// removes any empty Ready node (the pool is at 0); a then gets a new node from a scale-up from 0:
// what the pool provides comes from its declared shape.
TEST(SimFaultSchedule, PoolWidePluginFailureLeavesTheTemplateAlone) {
  Workload w;
  w.horizon_s = 4000;
  w.items = {job("a", 0, 100)};
  ClusterConfig c = pool_of("g", 0, 1);
  c.autoscaler.enabled = true;
  c.autoscaler.scale_down = false;
  Fault f;
  f.kind = FaultKind::kDevicePluginFailure;
  f.target.pool = "g";
  f.at_s = 0;
  f.recover_after_s = 1200;
  c.faults.faults = {f};
  const SimOptions o = least_allocated_options();
  Simulation sim(c, w, o);
  int32_t ready_at_1100 = 0, unadvertised_at_1100 = 0, template_gpus = -1, live_after_removal = -1;
  sim.add_controller(actions_at({
    {1100,
     [&](Fleet& fl, double) {
       for (NodeId n : fl.pool_nodes(0))
         if (fl.phase(n) == NodePhase::kReady) {
           ++ready_at_1100;
           unadvertised_at_1100 += fl.withheld_gpus(n, GpuWithheld::kNotAdvertised);
         }
       template_gpus = fl.template_nodes()[0].gpu_count;
     }},
    {1200, [&](Fleet& fl, double t) {
       for (NodeId n : fl.pool_nodes(0))
         if (fl.phase(n) == NodePhase::kReady && fl.pods_on(n).empty()) fl.remove(n, t, NodeRemoval::kOther);
       live_after_removal = fl.live(0);
     }}}));
  const SimResult r = sim.run();
  // The autoscaler launches g-0 for a at 30 (after scaleUpDelaySeconds); it is Ready at 210 without its
  // GPU, which counts as upcoming (no second node), until max-node-provision-time (900 s after the
  // launch): at 930 the node is given up and removed, and the group backs off for 5 min. So at 1100
  // no node is Ready, and the removal at 1200 finds none.
  EXPECT_EQ(ready_at_1100, 0);
  EXPECT_EQ(unadvertised_at_1100, 0);
  EXPECT_EQ(template_gpus, 1);
  EXPECT_EQ(live_after_removal, 0);
  EXPECT_EQ(r.faults.device_plugin_failures, 1);
  EXPECT_EQ(r.nodes_scaled_up, 2);  // the second: the scale-up from 0 after the backoff, from the declared shape
  // The backoff ends at 1230: a new node, Ready at 1230 + 180 (provision_s) with its GPU (the plugin is
  // back since 1200), a done 100 s later.
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1510);
}

// A spot node with a GPU out for a reset (XID 79 at 10, never reset) is interrupted at 20 and
// reclaimed 120 s later (spotNoticeSeconds): the removal releases the withheld GPU; billing ends at 140.
TEST(SimFaultSchedule, ANodeWithAWithheldGpuIsRemoved) {
  Workload w;
  w.horizon_s = 1000;
  ClusterConfig c = pool_of("s", 1, 1, "L4", 1);
  c.pools[0].pool.spot_usd_per_hour = 1.0;
  c.pools[0].settings.capacity_type = CapacityType::kSpot;
  c.pools[0].settings.spot_notice_s = 120;
  Fault spot;
  spot.kind = FaultKind::kSpotInterruption;
  spot.target.node = "s-0";
  spot.at_s = 20;
  c.faults.faults = {xid_on("s-0", 10, 79, 0), spot};
  const SimOptions o = least_allocated_options();
  const SimResult r = simulate(c, w, o);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 140);
  EXPECT_EQ(r.faults.gpus_reset, 1);
  EXPECT_EQ(r.faults.spot_interruptions, 1);
}

// Rate faults: node failures at 2 per node-hour on a 2-node pool over 2 h. Same seed, same run;
// another run seed, other faults; a schedule seed makes them independent of the run seed.
TEST(SimFaultSchedule, RateFaultsAreSeeded) {
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("a", 0, 3000), job("b", 0, 3000)};
  ClusterConfig c = pool_of("p", 2, 1);
  Fault f;
  f.kind = FaultKind::kNodeFailure;
  f.target.pool = "p";
  f.rate_per_node_hour = 2;
  f.recover_after_s = 300;
  c.faults.faults = {f};
  SimOptions o = least_allocated_options();
  o.seed = 1;
  const std::string a = io::sim_result_json(simulate(c, w, o));
  const std::string b = io::sim_result_json(simulate(c, w, o));
  EXPECT_EQ(a, b);
  const SimResult one = simulate(c, w, o);
  EXPECT_GT(one.faults.node_failures, 0);
  o.seed = 2;
  EXPECT_NE(io::sim_result_json(simulate(c, w, o)), a);
  c.faults.seed = 99;
  o.seed = 1;
  const SimResult s1 = simulate(c, w, o);
  o.seed = 2;
  const SimResult s2 = simulate(c, w, o);
  EXPECT_EQ(s1.faults.node_failures, s2.faults.node_failures);
  EXPECT_EQ(s1.alerts.size(), s2.alerts.size());
}

// Without faults nothing changes: no alerts, faults_enabled false.
TEST(SimFaultSchedule, InertWithoutASchedule) {
  Workload w;
  w.horizon_s = 3000;
  w.items = {job("a", 0, 1000)};
  const ClusterConfig c = pool_of("p", 1, 1);
  const SimOptions o = least_allocated_options();
  const SimResult r = simulate(c, w, o);
  EXPECT_FALSE(r.faults_enabled);
  EXPECT_TRUE(r.alerts.empty());
  EXPECT_EQ(io::sim_result_json(r).find("alerts"), std::string::npos);
}

// The simulation's backstop: a fault on a node that does not exist.
TEST(SimFaultSchedule, SimulationRejectsAFaultOnAnUnknownNode) {
  Workload w;
  w.horizon_s = 100;
  ClusterConfig c = pool_of("p", 1, 1);
  c.faults.faults = {at_node(FaultKind::kNodeFailure, "p-7", 0)};
  const SimOptions o = least_allocated_options();
  EXPECT_THROW(simulate(c, w, o), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::sim
