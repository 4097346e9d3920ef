// The simulator (src/sim): event order, job timing, Cluster Autoscaler scale-up and scale-down,
// spot interruptions with checkpoints, reserved capacity, cost invariants, determinism. Every
// expected value is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "report/sim_output.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "model/cluster_state.h"
#include "sim/rules/cluster_autoscaler.h"
#include "sim/rules/cost.h"
#include "sim/engine/event_queue.h"
#include "sim/simulator.h"
#include "inputs/sim/job_generator.h"
#include "util/go_rand.h"

namespace gpufleet::sim {
namespace {

// A pool of 4-vCPU, 16 GiB nodes with `gpus` L4 GPUs each.
SimPool pool(std::string name, int32_t gpus, int32_t nodes, int32_t min, int32_t max, double on_demand,
             std::optional<double> spot = std::nullopt, std::optional<double> reserved = std::nullopt) {
  SimPool p;
  p.pool.name = std::move(name);
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 4000;
  p.pool.memory_bytes = 16384 * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = min;
  p.pool.max_nodes = max;
  p.pool.on_demand_usd_per_hour = on_demand;
  p.pool.spot_usd_per_hour = spot;
  p.pool.reserved_usd_per_hour = reserved;
  return p;
}

WorkloadSpec job(std::string name, double arrival_s, double duration_s, int32_t gpus = 1) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.kind = WorkloadKind::kJob;
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.num_gpu = gpus;
  s.gpu_milli = gpus > 0 ? 1000 : 0;
  return s;
}

SimOptions options(std::string policy = "leastallocated") {
  SimOptions o;
  o.policy = std::move(policy);
  o.seed = 42;
  o.trace = true;
  return o;
}

const UnitOutcome& unit(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

std::vector<double> trace_times(const SimResult& r, const std::string& event) {
  std::vector<double> out;
  for (const TraceEntry& e : r.trace)
    if (e.event == event) out.push_back(e.time_s);
  return out;
}

// Sum over billing segments of duration x price, plus unused reservations.
double recomputed_cost(const SimResult& r) {
  double total = r.reserved_unused_usd;
  for (const NodeLifetime& n : r.nodes) total += (n.end_s - n.start_s) / 3600.0 * n.price_usd_per_hour;
  return total;
}

void expect_cost_invariants(const SimResult& r) {
  EXPECT_NEAR(r.cost_usd, recomputed_cost(r), 1e-9 * std::max(1.0, r.cost_usd));
  double by_pool = 0, by_type = 0, charged = 0;
  for (const auto& [k, v] : r.cost_by_pool) by_pool += v;
  for (const auto& [k, v] : r.cost_by_capacity_type) by_type += v;
  for (const auto& [k, v] : r.chargeback) charged += v;
  EXPECT_NEAR(by_pool, r.cost_usd, 1e-9 * std::max(1.0, r.cost_usd));
  EXPECT_NEAR(by_type, r.cost_usd, 1e-9 * std::max(1.0, r.cost_usd));
  EXPECT_NEAR(charged + r.idle_cost_usd, r.cost_usd, 1e-9 * std::max(1.0, r.cost_usd));
  EXPECT_GE(r.idle_cost_usd, -1e-9);
}

// ------------------------------------------------------------------------------------ event queue

TEST(SimEventQueue, OrdersByTimeThenInsertion) {
  EventQueue q;
  q.push(5, 0, 1);
  q.push(1, 1, 2);
  q.push(5, 2, 3);
  q.push(1, 0, 4);
  q.push(0.5, 6, 5);
  std::vector<uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().subject);
  EXPECT_EQ(order, (std::vector<uint32_t>{5, 2, 4, 1, 3}));
}

// ------------------------------------------------------------------------------------ jobs

TEST(SimEngine, JobRunsForItsDurationAndTheNextWaits) {
  // One static node with one GPU. a: arrives 100, runs 3600 s -> completes 3700. b arrives 200,
  // waits for a, starts 3700, completes 7300 (pending 3500 s).
  ClusterConfig c;
  c.pools = {pool("p", 1, 1, 1, 1, 1.0)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 10000;
  w.items = {job("a", 100, 3600), job("b", 200, 3600)};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(unit(r, "a").completion_s, 3700);
  EXPECT_DOUBLE_EQ(unit(r, "b").completion_s, 7300);
  EXPECT_EQ(r.pods_completed, 2);
  EXPECT_EQ(r.pending.samples, 2u);
  EXPECT_DOUBLE_EQ(*r.pending.p50, 0);     // nearest rank: ceil(0.5 * 2) = 1st of {0, 3500}
  EXPECT_DOUBLE_EQ(*r.pending.p99, 3500);  // ceil(0.99 * 2) = 2nd
  // GPU allocated 100..7300 of 10000 s on a 1-GPU node billed 10000 s: 72%.
  EXPECT_NEAR(r.gpu_allocation_pct_mean, 72.0, 1e-9);
  // 10000 s x 1 USD/h.
  EXPECT_NEAR(r.cost_usd, 10000.0 / 3600.0, 1e-12);
  expect_cost_invariants(r);
}

// The limits that bound a run's time and memory hold for every caller, not only the file readers.
TEST(SimEngine, RefusesSettingsBeyondTheSimulatorsLimits) {
  const auto message = [](ClusterConfig c, double horizon_s) {
    if (c.pools.empty()) c.pools = {pool("p", 1, 1, 1, 1, 1.0)};
    Workload w;
    w.horizon_s = horizon_s;
    w.items = {job("a", 0, 10)};
    try {
      simulate(c, w, options());
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}, kMaxHorizonSeconds), "no error");
  EXPECT_EQ(message({}, 2e8), "horizon 200000000 s is above the maximum of 1e+08 s");
  ClusterConfig scan;
  scan.autoscaler.scan_interval_s = 0.5;
  EXPECT_EQ(message(scan, 100), "autoscaler scan interval 0.5 s is below the minimum of 1 s");
  ClusterConfig consolidation;
  consolidation.consolidation.interval_s = 1e-6;
  EXPECT_EQ(message(consolidation, 100), "consolidation interval 1e-06 s is below the minimum of 1 s");
  ClusterConfig spot;
  spot.pools = {pool("s", 1, 0, 0, 1, 1.0, 0.5)};
  spot.pools[0].settings.capacity_type = CapacityType::kSpot;
  spot.pools[0].settings.spot_interruptions_per_hour = 61;
  EXPECT_NE(message(spot, 100).find("spot interruption rate 61 is above the maximum of 60 per node-hour"), std::string::npos);
}

TEST(SimEngine, EventsRunInTimeOrder) {
  ClusterConfig c;
  c.pools = {pool("p", 1, 1, 1, 1, 1.0)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 10000;
  w.items = {job("late", 500, 10), job("early", 100, 10), job("same", 100, 10)};
  const SimResult r = simulate(c, w, options());
  // Arrivals: early and same at 100 in input order, late at 500; completions: early at 110,
  // same waits for early's GPU and ends at 120, late ends at 510.
  std::vector<std::string> seen;
  for (const TraceEntry& e : r.trace) seen.push_back(e.event + ":" + e.subject);
  EXPECT_EQ(seen, (std::vector<std::string>{"arrival:early", "arrival:same", "completion:early", "completion:same",
                                            "arrival:late", "completion:late"}));
  for (size_t i = 1; i < r.trace.size(); ++i) EXPECT_LE(r.trace[i - 1].time_s, r.trace[i].time_s);
}

TEST(SimEngine, GangJobStartsAllPodsOrNone) {
  // Two static 2-GPU nodes; "big" needs 3 pods x 2 GPUs: never fits (2 nodes), stays
  // pending with nothing held; "small" (2 pods x 2 GPUs) runs on both nodes.
  ClusterConfig c;
  c.pools = {pool("p", 2, 2, 2, 2, 1.0)};
  c.autoscaler.enabled = false;
  WorkloadSpec big = job("big", 0, 100, 2);
  big.pods = 3;
  WorkloadSpec small = job("small", 10, 100, 2);
  small.pods = 2;
  Workload w;
  w.horizon_s = 1000;
  w.items = {big, small};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(unit(r, "big").state, UnitState::kPending);
  EXPECT_DOUBLE_EQ(unit(r, "small").completion_s, 110);
  EXPECT_EQ(r.pods_pending, 3);
  EXPECT_EQ(r.pods_completed, 2);
}

TEST(SimEngine, PodThatNoPoolAdmitsFailsWithAReason) {
  ClusterConfig c;
  c.pools = {pool("p", 1, 1, 0, 3, 1.0)};
  Workload w;
  w.horizon_s = 1000;
  w.items = {job("wide", 0, 100, 4), job("ok", 0, 100, 1)};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(unit(r, "wide").state, UnitState::kFailed);
  EXPECT_NE(unit(r, "wide").reason.find("pod didn't trigger scale-up"), std::string::npos);
  EXPECT_NE(unit(r, "wide").reason.find("Insufficient nvidia.com/gpu"), std::string::npos);
  EXPECT_EQ(r.pods_failed, 1);
  EXPECT_EQ(r.pods_completed, 1);
}

// ------------------------------------------------------------------------------------ autoscaler

TEST(SimAutoscaler, ScalesUpAfterTheDelayPlusProvisioningThenDownAfterUnneededTime) {
  // Pool from zero (max 2), 3.6 USD/h, provision 180 s, delay 30 s, ticks every 10 s from 0.
  // The job arrives at 5: pending since 5; the first tick with 5 <= t - 30 is t = 40, so a node is
  // requested at 40, ready at 220; the job runs 220..1220. The empty node is unneeded from the
  // tick at 1220 (the completion at 1220 was scheduled before that tick) and removed at 1820.
  ClusterConfig c;
  c.pools = {pool("p", 1, 0, 0, 2, 3.6)};
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("j", 5, 1000)};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(trace_times(r, "node-ready"), (std::vector<double>{220}));
  EXPECT_DOUBLE_EQ(unit(r, "j").completion_s, 1220);
  EXPECT_DOUBLE_EQ(*r.pending.p50, 215);
  EXPECT_EQ(r.nodes_scaled_up, 1);
  EXPECT_EQ(r.nodes_scaled_down, 1);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].start_s, 40);
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 1820);
  // 1780 s at 3.6 USD/h = 1.78 USD.
  EXPECT_NEAR(r.cost_usd, 1.78, 1e-12);
  // Chargeback: the pod takes the node's one GPU and no CPU or memory, so it pays the GPU part of
  // the price: 0.95 / (4 x 0.031611 + 16 x 0.004237 + 0.95) = 0.95 / 1.144236, for 1000 s.
  const double gpu_share = 0.95 / (4 * 0.031611 + 16 * 0.004237 + 0.95);
  EXPECT_NEAR(r.chargeback.at("default"), 3.6 * gpu_share * 1000.0 / 3600.0, 1e-12);
  expect_cost_invariants(r);
  // The time series: one row per minute, 60 rows; at 60 s the node is provisioning (billed), at
  // 1800 s it still exists, at 1860 s it is gone.
  ASSERT_EQ(r.timeseries.size(), 60u);
  EXPECT_EQ(r.timeseries[1].nodes_per_pool, std::vector<int32_t>{1});
  EXPECT_EQ(r.timeseries[1].pending_pods, 1);
  EXPECT_EQ(r.timeseries[30].nodes_per_pool, std::vector<int32_t>{1});
  EXPECT_EQ(r.timeseries[31].nodes_per_pool, std::vector<int32_t>{0});
  EXPECT_DOUBLE_EQ(r.timeseries[31].cost_usd_per_hour, 0);
}

TEST(SimAutoscaler, KeepsMinNodesAndWaitsAfterAScaleUp) {
  // Two initial empty nodes, min 1: the tick at 0 marks both unneeded; at 600 the first goes; the
  // second stays (min). No scale-up happened, so no delay-after-add.
  ClusterConfig c;
  c.pools = {pool("p", 1, 2, 1, 2, 1.0)};
  Workload w;
  w.horizon_s = 3600;
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(r.nodes_scaled_down, 1);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].node, "p-0");
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 600);
  EXPECT_DOUBLE_EQ(r.nodes[1].end_s, 3600);

  // One node, min 0, two jobs at 0: the second job makes the autoscaler add a node.
  ClusterConfig c2;
  c2.pools = {pool("p", 1, 1, 0, 2, 1.0)};
  Workload w2;
  w2.horizon_s = 3600;
  w2.items = {job("a", 0, 3000), job("b", 0, 10)};
  const SimResult r2 = simulate(c2, w2, options());
  // b waits for the scale-up: requested at 30 (pending since 0, 0 <= 30 - 30), ready at 210,
  // done at 220. The tick at 220 was queued (by the tick at 210) before b's completion (queued when
  // b started, after that tick), so it still sees the node busy; the node is unneeded from the tick
  // at 230 and removed at 830 (after 30 + 600).
  EXPECT_DOUBLE_EQ(unit(r2, "b").completion_s, 220);
  bool found = false;
  for (const NodeLifetime& n : r2.nodes)
    if (n.node == "p-1") {
      found = true;
      EXPECT_DOUBLE_EQ(n.start_s, 30);
      EXPECT_DOUBLE_EQ(n.end_s, 830);
    }
  EXPECT_TRUE(found);
}

TEST(SimAutoscaler, NoScaleDownWithinTheDelayAfterAdd) {
  // As above but with a 30-minute delay after add: the idle node requested at 30 must wait until
  // 30 + 1800 = 1830 (it has been unneeded since 230, well over 600 s, by then).
  ClusterConfig c;
  c.pools = {pool("p", 1, 1, 0, 2, 1.0)};
  c.autoscaler.scale_down_delay_after_add_s = 1800;
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("a", 0, 3000), job("b", 0, 10)};
  const SimResult r = simulate(c, w, options());
  for (const NodeLifetime& n : r.nodes)
    if (n.node == "p-1") {
      EXPECT_DOUBLE_EQ(n.end_s, 1830);
    }
}

TEST(SimAutoscaler, AJobPodKeepsItsNodeFromBeingUnneeded) {
  // One 4-GPU node running one 1-GPU job (25% < 0.5) from 0 to 3000. The job blocks eviction, so CA
  // does not list the node as unneeded while it runs: the unneeded time starts at the tick at 3000
  // (the completion, queued at 0, runs before that tick) and the node goes at 3000 + 600 = 3600,
  // not at 3000 as if the timer had run since 0.
  ClusterConfig c;
  c.pools = {pool("p", 4, 1, 0, 1, 1.0)};
  Workload w;
  w.horizon_s = 7200;
  w.items = {job("a", 0, 3000)};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(unit(r, "a").completion_s, 3000);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 3600);
  EXPECT_EQ(r.nodes_scaled_down, 1);
}

TEST(SimAutoscaler, UtilizationWasteAndExpanders) {
  std::vector<Node> nodes(2);
  nodes[0].name = "g";
  nodes[0].cpu_milli = 4000;
  nodes[0].memory_bytes = 1000;
  nodes[0].gpu_count = 4;
  nodes[0].gpu_model = "L4";
  nodes[1].name = "c";
  nodes[1].cpu_milli = 4000;
  nodes[1].memory_bytes = 1000;
  ClusterState state(nodes);
  Pod p;
  p.name = "x";
  p.cpu_milli = 3000;
  p.memory_bytes = 100;
  p.num_gpu = 1;
  p.gpu_milli = 1000;
  state.allocate(0, p, {.gpus = {0}});
  Pod q = p;
  q.name = "y";
  q.num_gpu = 0;
  q.gpu_milli = 0;
  q.memory_bytes = 800;
  state.allocate(1, q, {});
  EXPECT_DOUBLE_EQ(node_utilization(state, 0), 0.25);  // GPU node: 1 of 4 GPUs, CPU ignored
  EXPECT_DOUBLE_EQ(node_utilization(state, 1), 0.8);   // max(3000/4000, 800/1000)

  ScaleUpOption a;  // half the CPU, a quarter of the memory, all GPUs: 0.5 + 0.75 + 0 = 1.25
  a.pool = 0;
  a.pods_helped = 2;
  a.cpu_requested_milli = 2000;
  a.cpu_capacity_milli = 4000;
  a.memory_requested_bytes = 1000;
  a.memory_capacity_bytes = 4000;
  a.gpu_requested_milli = 2000;
  a.gpu_capacity_milli = 2000;
  a.price_usd_per_hour = 10;  // 5 per pod
  ScaleUpOption b = a;        // all CPU and memory, half the GPUs: 0 + 0 + 0.5 = 0.5
  b.pool = 1;
  b.cpu_requested_milli = 4000;
  b.memory_requested_bytes = 4000;
  b.gpu_capacity_milli = 4000;
  b.price_usd_per_hour = 20;  // 10 per pod
  EXPECT_DOUBLE_EQ(waste_score(a), 1.25);
  EXPECT_DOUBLE_EQ(waste_score(b), 0.5);
  EXPECT_DOUBLE_EQ(price_score(a), 5);
  const std::vector<ScaleUpOption> options{a, b};
  EXPECT_EQ(choose_option(options, Expander::kLeastWaste), 1);
  EXPECT_EQ(choose_option(options, Expander::kPrice), 0);
  ScaleUpOption none = a;
  none.pods_helped = 0;
  EXPECT_EQ(choose_option(std::vector<ScaleUpOption>{none}, Expander::kPrice), -1);
}

TEST(SimAutoscaler, BinpackingEstimateCountsNodes) {
  // Five 1-GPU pods and one 2-GPU pod on 4-GPU nodes, at most 2 nodes: first-fit decreasing puts
  // the 2-GPU pod and two 1-GPU pods on node 1, the other three on node 2: all six, 2 nodes.
  SimPool p = pool("p", 4, 0, 0, 5, 1.0);
  std::vector<Pod> pods(6);
  for (size_t i = 0; i < pods.size(); ++i) {
    pods[i].name = "p" + std::to_string(i);
    pods[i].num_gpu = i == 3 ? 2 : 1;
    pods[i].gpu_milli = 1000;
  }
  std::vector<const Pod*> ptrs;
  for (const Pod& pod : pods) ptrs.push_back(&pod);
  const ScaleUpOption o = estimate_scale_up(0, p.pool, ptrs, 2);
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(o.pods_helped, 6);
  EXPECT_EQ(o.gpu_requested_milli, 7000);
  EXPECT_EQ(o.gpu_capacity_milli, 8000);
  EXPECT_EQ(estimate_scale_up(0, p.pool, ptrs, 1).pods_helped, 3);  // 2 + 1 + 1 GPUs: 3 pods on one node
}

TEST(SimAutoscaler, PriceExpanderPrefersTheCheaperPool) {
  // A spot-ok job; two pools from zero: on-demand at 10 USD/h and spot at 3 USD/h. Same shape, same
  // waste, so least-waste ties and falls back to price; price picks spot directly.
  for (Expander e : {Expander::kLeastWaste, Expander::kPrice}) {
    ClusterConfig c;
    c.pools = {pool("od", 1, 0, 0, 2, 10.0), pool("sp", 1, 0, 0, 2, 10.0, 3.0)};
    c.pools[1].settings.capacity_type = CapacityType::kSpot;
    c.autoscaler.expander = e;
    WorkloadSpec s = job("j", 0, 100);
    s.capacity = CapacityPreference::kSpotOk;
    Workload w;
    w.horizon_s = 1000;
    w.items = {s};
    const SimResult r = simulate(c, w, options());
    ASSERT_EQ(r.nodes.size(), 1u);
    EXPECT_EQ(r.nodes[0].pool, "sp");
    EXPECT_EQ(r.nodes[0].capacity_type, "spot");
  }
}

// ------------------------------------------------------------------------------------ spot

TEST(SimSpot, InterruptionLosesWorkSinceTheLastCheckpoint) {
  // A spot node (first, so it wins ties) and an on-demand node, static. The spot-ok job runs 10 h
  // with checkpoints every 600 s; the spot node is interrupted at T (1 per node-hour: T < 10 h for
  // this seed). At T the job is evicted, keeps floor(T / 600) x 600 s of work, restarts at once on
  // the on-demand node and completes at T + 36000 - kept. The spot node is billed 0..T + 120.
  ClusterConfig c;
  c.pools = {pool("sp", 1, 1, 0, 1, 10.0, 2.0), pool("od", 1, 1, 1, 1, 10.0)};
  c.pools[0].settings.capacity_type = CapacityType::kSpot;
  c.pools[0].settings.spot_interruptions_per_hour = 1.0;
  c.autoscaler.enabled = false;
  WorkloadSpec s = job("train", 0, 36000, 1);
  s.capacity = CapacityPreference::kSpotOk;
  s.checkpoint_interval_s = 600;
  Workload w;
  w.horizon_s = 100000;
  w.items = {s};
  const SimResult r = simulate(c, w, options());
  const std::vector<double> notices = trace_times(r, "spot-notice");
  ASSERT_EQ(notices.size(), 1u);
  const double t = notices[0];
  ASSERT_LT(t, 36000);
  const double kept = std::floor(t / 600) * 600;
  EXPECT_EQ(r.spot_interruptions, 1);
  EXPECT_EQ(r.evictions, 1);
  EXPECT_NEAR(r.lost_gpu_hours, (t - kept) / 3600.0, 1e-9);
  EXPECT_NEAR(unit(r, "train").completion_s, t + 36000 - kept, 1e-6);
  EXPECT_EQ(unit(r, "train").interruptions, 1);
  EXPECT_EQ(unit(r, "train").starts, 2);
  EXPECT_EQ(trace_times(r, "spot-reclaim"), (std::vector<double>{t + 120}));
  for (const NodeLifetime& n : r.nodes)
    if (n.pool == "sp") {
      EXPECT_DOUBLE_EQ(n.end_s, t + 120);
      EXPECT_EQ(n.capacity_type, "spot");
      EXPECT_DOUBLE_EQ(n.price_usd_per_hour, 2.0);
    }
  expect_cost_invariants(r);
}

TEST(SimSpot, WithoutCheckpointsEverythingIsLost) {
  ClusterConfig c;
  c.pools = {pool("sp", 1, 1, 0, 1, 10.0, 2.0), pool("od", 1, 1, 1, 1, 10.0)};
  c.pools[0].settings.capacity_type = CapacityType::kSpot;
  c.pools[0].settings.spot_interruptions_per_hour = 1.0;
  c.autoscaler.enabled = false;
  WorkloadSpec s = job("train", 0, 36000, 1);
  s.capacity = CapacityPreference::kSpotOk;
  Workload w;
  w.horizon_s = 100000;
  w.items = {s};
  const SimResult r = simulate(c, w, options());
  const double t = trace_times(r, "spot-notice").at(0);
  EXPECT_NEAR(r.lost_gpu_hours, t / 3600.0, 1e-9);
  EXPECT_NEAR(unit(r, "train").completion_s, t + 36000, 1e-6);
}

TEST(SimSpot, OnDemandJobsStayOffSpot) {
  ClusterConfig c;
  c.pools = {pool("sp", 1, 1, 0, 1, 10.0, 2.0)};
  c.pools[0].settings.capacity_type = CapacityType::kSpot;
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 1000;
  w.items = {job("j", 0, 100)};  // capacity on-demand (default)
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(unit(r, "j").state, UnitState::kFailed);
  EXPECT_NE(unit(r, "j").reason.find("node affinity"), std::string::npos);
}

// ------------------------------------------------------------------------------------ reserved

TEST(SimReserved, ReservationIsPaidWhenIdle) {
  // Two reserved nodes at 2 USD/h, no node running, 2 h: 2 x 2 h x 2 = 8 USD, all idle.
  ClusterConfig c;
  c.pools = {pool("r", 1, 0, 0, 2, 10.0, std::nullopt, 2.0)};
  c.pools[0].settings.reserved_nodes = 2;
  Workload w;
  w.horizon_s = 7200;
  const SimResult r = simulate(c, w, options());
  EXPECT_NEAR(r.cost_usd, 8.0, 1e-12);
  EXPECT_NEAR(r.cost_by_capacity_type.at("reserved"), 8.0, 1e-12);
  EXPECT_NEAR(r.reserved_unused_usd, 8.0, 1e-12);
  EXPECT_NEAR(r.idle_cost_usd, 8.0, 1e-12);
  expect_cost_invariants(r);
}

TEST(SimReserved, CoveredNodeCostsTheReservedPriceAndCoverageMoves) {
  // Reservation of 1 node at 4 USD/h; on-demand 10 USD/h; two empty nodes at 0, min 1, 1 h.
  // p-0 is covered, p-1 on demand. At 600 s p-0 is scaled down and p-1 takes the reservation:
  // p-0: 600 s x 4 = 0.6667; p-1: 600 s x 10 = 1.6667 then 3000 s x 4 = 3.3333; unused 0.
  // Total 5.6667 USD.
  ClusterConfig c;
  c.pools = {pool("p", 1, 2, 1, 2, 10.0, std::nullopt, 4.0)};
  c.pools[0].settings.reserved_nodes = 1;
  Workload w;
  w.horizon_s = 3600;
  const SimResult r = simulate(c, w, options());
  EXPECT_NEAR(r.cost_usd, 600.0 / 3600 * 4 + 600.0 / 3600 * 10 + 3000.0 / 3600 * 4, 1e-12);
  EXPECT_NEAR(r.reserved_unused_usd, 0, 1e-12);
  EXPECT_NEAR(r.cost_by_capacity_type.at("on-demand"), 600.0 / 3600 * 10, 1e-12);
  expect_cost_invariants(r);
}

TEST(SimCost, RoundingResidueIsZeroNotNegativeZero) {
  // Three empty nodes at 0.7, 0.2 and 0.1 USD/h, launched at 0 and removed by scale-down at 600 s in
  // that order: in doubles ((0.7 + 0.2 + 0.1) - 0.7 - 0.2) - 0.1 is -8.3e-17, not 0, which the
  // time series printed as "-0.0000". The running price is exactly 0 once every node is gone.
  ClusterConfig c;
  c.pools = {pool("a", 1, 1, 0, 1, 0.7), pool("b", 1, 1, 0, 1, 0.2), pool("c", 1, 1, 0, 1, 0.1)};
  Workload w;
  w.horizon_s = 3600;
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(r.nodes_scaled_down, 3);
  ASSERT_FALSE(r.timeseries.empty());
  EXPECT_EQ(r.timeseries.back().cost_usd_per_hour, 0.0);
  EXPECT_FALSE(std::signbit(r.timeseries.back().cost_usd_per_hour));
  EXPECT_EQ(io::sim_timeseries_csv(r).find("-0.0"), std::string::npos);
  expect_cost_invariants(r);

  // One pod requesting a whole node for the whole horizon is charged the whole bill: idle is exactly
  // 0, whatever the last bits of cost - chargeback (price split shares, other operation order).
  ClusterConfig full;
  full.pools = {pool("p", 1, 1, 1, 1, 0.3)};
  WorkloadSpec all = job("all", 0, 1e6);
  all.cpu_milli = 4000;
  all.memory_bytes = 16384 * kBytesPerMib;
  Workload w2;
  w2.horizon_s = 5000;
  w2.items = {all};
  const SimResult f = simulate(full, w2, options());
  EXPECT_EQ(f.idle_cost_usd, 0.0);
  EXPECT_FALSE(std::signbit(f.idle_cost_usd));
  EXPECT_EQ(io::sim_result_json(f).find("-0.0"), std::string::npos);
  expect_cost_invariants(f);
}

// ------------------------------------------------------------------------------------ whole runs

struct ExampleRun {
  ClusterConfig cluster;
  Workload workload;
};

ExampleRun example(uint64_t seed) {
  const std::filesystem::path dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "simulate";
  ExampleRun run;
  run.cluster = io::read_sim_cluster_file((dir / "pools.yaml").string());
  std::vector<std::string> names;
  for (const SimPool& p : run.cluster.pools) names.push_back(p.pool.name);
  io::SimWorkloadFile f = io::read_sim_workload_file((dir / "workload.yaml").string(), names);
  GoRand rng(static_cast<int64_t>(seed));
  for (WorkloadSpec& j : generate_jobs(*f.generator, rng)) f.workload.items.push_back(std::move(j));
  run.workload = std::move(f.workload);
  return run;
}

TEST(SimExample, EveryPodEndsInOneStateAndCostsAddUp) {
  for (uint64_t seed : {42u, 43u, 44u}) {
    const ExampleRun e = example(seed);
    SimOptions o = options("gpufleet");
    o.seed = seed;
    const SimResult r = simulate(e.cluster, e.workload, o);
    int64_t pods = 0;
    for (const UnitOutcome& u : r.units) {
      EXPECT_NE(u.state, UnitState::kWaiting) << u.name;  // every arrival is within the horizon
      if (u.state == UnitState::kFailed) {
        EXPECT_FALSE(u.reason.empty());
      }
      if (u.state == UnitState::kCompleted) {
        EXPECT_GT(u.completion_s, 0);
      }
      pods += u.pods;
    }
    EXPECT_EQ(r.pods_completed + r.pods_running + r.pods_pending + r.pods_failed, pods);
    expect_cost_invariants(r);
    // Work: a completed job kept exactly its duration; a job interrupted kept whole checkpoint
    // intervals only.
    for (const WorkloadSpec& spec : e.workload.items) {
      if (spec.kind != WorkloadKind::kJob) continue;
      const UnitOutcome& u = unit(r, spec.name);
      if (u.state == UnitState::kCompleted) {
        EXPECT_DOUBLE_EQ(u.saved_work_s, spec.duration_s);
      } else if (spec.checkpoint_interval_s > 0) {
        EXPECT_DOUBLE_EQ(std::fmod(u.saved_work_s, spec.checkpoint_interval_s), 0.0) << spec.name;
      }
    }
    EXPECT_GT(r.gpu_allocation_pct_mean, 0);
    EXPECT_LE(r.gpu_allocation_pct_mean, 100);
    // Reserved: 1 node x 48 h x 39.33 USD/h is paid whatever happens.
    EXPECT_NEAR(r.cost_by_capacity_type.at("reserved"), 48 * 39.33, 1e-6);
  }
}

TEST(SimExample, SameSeedSameBytesOtherSeedOtherRun) {
  auto json = [](uint64_t seed) {
    const ExampleRun e = example(seed);
    SimOptions o = options("gpufleet");
    o.seed = seed;
    o.trace = false;
    const SimResult r = simulate(e.cluster, e.workload, o);
    return io::sim_result_json(r) + io::sim_timeseries_csv(r);
  };
  const std::string a = json(42);
  EXPECT_EQ(a, json(42));
  EXPECT_NE(a, json(7));
}

// ------------------------------------------------------------------------------------ consolidation

WorkloadSpec service(std::string name, int32_t gpus, int32_t replicas = 1) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.kind = WorkloadKind::kService;
  s.pods = replicas;
  s.num_gpu = gpus;
  s.gpu_milli = gpus > 0 ? 1000 : 0;
  return s;
}

// Two ready 4-GPU nodes at 3.6 USD/h (1 USD per 1000 s), no Cluster Autoscaler (only
// consolidation acts), consolidation every 60 s, a node a candidate 600 s after its last pod change.
ClusterConfig two_four_gpu_nodes() {
  ClusterConfig c;
  c.pools = {pool("p", 4, 2, 0, 2, 3.6)};
  c.autoscaler.enabled = false;
  c.consolidation.enabled = true;
  c.consolidation.interval_s = 60;
  c.consolidation.consolidate_after_s = 600;
  return c;
}

double node_end_s(const SimResult& r, const std::string& node) {
  for (const NodeLifetime& n : r.nodes)
    if (n.node == node) return n.end_s;
  throw std::runtime_error("no node " + node);
}

TEST(SimConsolidation, DisruptionsAllowedFollowsPolicyV1) {
  DisruptionBudget max0{std::nullopt, IntOrPercent{0, false}};
  EXPECT_EQ(disruptions_allowed(max0, 1, 1), 0);
  DisruptionBudget max1{std::nullopt, IntOrPercent{1, false}};
  EXPECT_EQ(disruptions_allowed(max1, 3, 3), 1);  // desired 3 - 1 = 2
  EXPECT_EQ(disruptions_allowed(max1, 3, 2), 0);  // one already down
  DisruptionBudget max25{std::nullopt, IntOrPercent{25, true}};
  EXPECT_EQ(disruptions_allowed(max25, 4, 4), 1);  // ceil(0.25 x 4) = 1 -> desired 3
  EXPECT_EQ(disruptions_allowed(max25, 5, 5), 2);  // ceil(1.25) = 2 -> desired 3
  DisruptionBudget min50{IntOrPercent{50, true}, std::nullopt};
  EXPECT_EQ(disruptions_allowed(min50, 3, 3), 1);  // desired ceil(1.5) = 2
  DisruptionBudget min2{IntOrPercent{2, false}, std::nullopt};
  EXPECT_EQ(disruptions_allowed(min2, 2, 2), 0);
  EXPECT_EQ(disruptions_allowed(min2, 4, 4), 2);
  EXPECT_EQ(disruptions_allowed(min2, 0, 0), 0);  // nothing expected: nothing allowed
  EXPECT_EQ(disruptions_allowed(DisruptionBudget{}, 3, 3), 0);  // neither field (invalid): as kube, nothing
}

TEST(SimConsolidation, NodeAtAQuarterOfItsGpusIsEmptiedAndRemoved) {
  // LeastAllocated: "big" (2 GPUs) takes p-0 (tie, first node), "small" (1 GPU) the emptier p-1,
  // both at 0 (the consolidation tick at 0 runs the due retry first). p-1 is at 1/4 = 25% < 40%,
  // p-0 at 50%. Both were last changed at 0, so the first tick that may act is 600: small moves to
  // p-0 (2 GPUs free) and p-1 goes at 600. p-0 is then at 75%.
  const ClusterConfig c = two_four_gpu_nodes();
  Workload w;
  w.horizon_s = 3600;
  w.items = {service("big", 2), service("small", 1)};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-1"), 600);
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-0"), 3600);
  // p-0 3600 s + p-1 600 s at 1 USD per 1000 s: 4.2 USD (7.2 without consolidation).
  EXPECT_NEAR(r.cost_usd, 4.2, 1e-12);
  EXPECT_EQ(r.nodes_consolidated, 1);
  EXPECT_EQ(r.consolidation_moved_pods, 1);
  EXPECT_EQ(r.consolidation_restarts, 1);
  EXPECT_EQ(r.evictions, 1);
  EXPECT_EQ(r.nodes_scaled_down, 0);
  EXPECT_EQ(unit(r, "small-0").consolidations, 1);
  EXPECT_EQ(unit(r, "small-0").starts, 2);
  EXPECT_EQ(unit(r, "big-0").consolidations, 0);
  EXPECT_EQ(r.pods_running, 2);
  EXPECT_DOUBLE_EQ(r.lost_gpu_hours, 0);  // a service loses nothing
  EXPECT_EQ(r.pending.samples, 2u);       // the move adds no pending sample
  EXPECT_EQ(r.timeseries[10].nodes_per_pool, std::vector<int32_t>{1});  // 600 s: after the tick
  expect_cost_invariants(r);

  // Without consolidation both nodes stay: 7.2 USD.
  ClusterConfig off = c;
  off.consolidation.enabled = false;
  EXPECT_NEAR(simulate(off, w, options()).cost_usd, 7.2, 1e-12);
}

TEST(SimConsolidation, NodeAtHalfItsGpusIsKept) {
  // Two 2-GPU services, one per node (LeastAllocated spreads): both nodes at 50% >= 40%. Either
  // node's pod would fit on the other, but neither is a candidate.
  ClusterConfig c = two_four_gpu_nodes();
  Workload w;
  w.horizon_s = 3600;
  w.items = {service("a", 2), service("b", 2)};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(r.nodes_consolidated, 0);
  EXPECT_EQ(r.consolidation_restarts, 0);
  EXPECT_NEAR(r.cost_usd, 7.2, 1e-12);

  // With a threshold of 0.6 both are candidates with equal disruption cost (one pod of priority 0:
  // 1.0) and no lost work; node order breaks the tie: p-0's pod moves to p-1 at 600, p-0 goes.
  c.consolidation.threshold = 0.6;
  const SimResult r2 = simulate(c, w, options());
  EXPECT_EQ(r2.nodes_consolidated, 1);
  EXPECT_DOUBLE_EQ(node_end_s(r2, "p-0"), 600);
  EXPECT_NEAR(r2.cost_usd, 4.2, 1e-12);
  EXPECT_EQ(unit(r2, "a-0").consolidations, 1);
}

TEST(SimConsolidation, DisruptionBudgetBlocksTheMove) {
  // The quarter-full node of NodeAtAQuarterOfItsGpusIsEmptiedAndRemoved, with a budget on "small".
  const ClusterConfig c = two_four_gpu_nodes();
  Workload w;
  w.horizon_s = 3600;
  WorkloadSpec small = service("small", 1);
  small.disruption_budget = DisruptionBudget{std::nullopt, IntOrPercent{0, false}};  // maxUnavailable 0
  w.items = {service("big", 2), small};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(r.nodes_consolidated, 0);
  EXPECT_EQ(r.consolidation_restarts, 0);
  EXPECT_NEAR(r.cost_usd, 7.2, 1e-12);

  // minAvailable 1 of 1 replica: 0 allowed, blocked too. maxUnavailable 1: allowed, as without.
  w.items[1].disruption_budget = DisruptionBudget{IntOrPercent{1, false}, std::nullopt};
  EXPECT_EQ(simulate(c, w, options()).nodes_consolidated, 0);
  w.items[1].disruption_budget = DisruptionBudget{std::nullopt, IntOrPercent{1, false}};
  EXPECT_NEAR(simulate(c, w, options()).cost_usd, 4.2, 1e-12);
}

TEST(SimConsolidation, MovedJobLosesTheWorkSinceItsLastCheckpoint) {
  // "big" (service, 2 GPUs) on p-0; job j (1 GPU, 3600 s of work, checkpoint every 500 s) on p-1
  // from 0. consolidateAfter 700: the first tick with t - 0 >= 700 is 720. j has run 720 s and
  // kept 500 (one checkpoint): it loses 220 s x 1 GPU = 220/3600 GPU-hours, restarts on p-0 at 720
  // with 3100 s to go and completes at 3820. p-1 is billed 0..720.
  ClusterConfig c = two_four_gpu_nodes();
  c.consolidation.consolidate_after_s = 700;
  Workload w;
  w.horizon_s = 7200;
  WorkloadSpec j = job("j", 0, 3600);
  j.checkpoint_interval_s = 500;
  w.items = {service("big", 2), j};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-1"), 720);
  EXPECT_NEAR(r.lost_gpu_hours, 220.0 / 3600.0, 1e-12);
  EXPECT_NEAR(r.consolidation_lost_gpu_hours, 220.0 / 3600.0, 1e-12);
  EXPECT_DOUBLE_EQ(unit(r, "j").completion_s, 3820);
  EXPECT_DOUBLE_EQ(unit(r, "j").saved_work_s, 3600);
  EXPECT_EQ(unit(r, "j").starts, 2);
  EXPECT_EQ(unit(r, "j").consolidations, 1);
  EXPECT_EQ(r.consolidation_restarts, 1);
  // The first run's completion event (3600) still pops, but is stale and changes nothing.
  EXPECT_EQ(trace_times(r, "completion"), (std::vector<double>{3600, 3820}));
  // p-0 7200 s + p-1 720 s at 1 USD per 1000 s. After 3820 p-0 is at 50%: kept.
  EXPECT_NEAR(r.cost_usd, 7.92, 1e-12);
  EXPECT_EQ(r.nodes_consolidated, 1);
  expect_cost_invariants(r);
}

TEST(SimConsolidation, GangJobRestartsWholeAndEmptyNodesGoAtOnce) {
  // Three 4-GPU nodes, all empty at 0 except what the gang takes. Gang g: 2 pods x 3 GPUs, one per
  // node (p-0, p-1); p-2 is empty. consolidateAfter 0: at the tick at 0 (after the due retry) p-2
  // is empty and goes at once; p-0 and p-1 are at 75%: kept. No restart.
  ClusterConfig c;
  c.pools = {pool("p", 4, 3, 0, 3, 3.6)};
  c.autoscaler.enabled = false;
  c.consolidation.enabled = true;
  c.consolidation.interval_s = 60;
  Workload w;
  w.horizon_s = 1200;
  WorkloadSpec g = job("g", 0, 100000, 3);
  g.pods = 2;
  w.items = {g};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-2"), 0);
  EXPECT_EQ(r.nodes_consolidated, 1);
  EXPECT_EQ(r.consolidation_restarts, 0);

  // Gang h (2 pods x 1 GPU) alone on two 4-GPU nodes, one pod each (LeastAllocated): both at 25%.
  // At the tick at 0 both are candidates with disruption cost 2 (the whole gang restarts) and no
  // work lost yet; node order picks p-0. The dry run places both pods again with p-0 cordoned, so
  // both land on p-1: 2 restarts, 1 moved pod, p-0 removed at 0. p-1 is then at 50%: kept.
  ClusterConfig c2 = two_four_gpu_nodes();
  c2.consolidation.consolidate_after_s = 0;
  Workload w2;
  w2.horizon_s = 1200;
  WorkloadSpec h = job("h", 0, 100000, 1);
  h.pods = 2;
  h.checkpoint_interval_s = 60;
  w2.items = {h};
  const SimResult r2 = simulate(c2, w2, options());
  EXPECT_EQ(r2.nodes_consolidated, 1);
  EXPECT_EQ(r2.consolidation_moved_pods, 1);
  EXPECT_EQ(r2.consolidation_restarts, 2);
  EXPECT_EQ(unit(r2, "h").consolidations, 1);
  EXPECT_EQ(r2.pods_running, 2);
  EXPECT_DOUBLE_EQ(node_end_s(r2, "p-0"), 0);
  EXPECT_DOUBLE_EQ(node_end_s(r2, "p-1"), 1200);
  EXPECT_DOUBLE_EQ(r2.lost_gpu_hours, 0);
  expect_cost_invariants(r2);
}

TEST(SimConsolidation, ScaleDownMovesRespectBudgetsToo) {
  // Cluster Autoscaler only (threshold 0.5): "big" (2 GPUs) on p-0 at 50% is needed, "small" on
  // p-1 at 25% is unneeded from the tick at 0 (both nodes empty then) and moved at 600, p-1 removed.
  // With maxUnavailable 0 on small the move is refused and p-1 stays.
  ClusterConfig c;
  c.pools = {pool("p", 4, 2, 0, 2, 3.6)};
  Workload w;
  w.horizon_s = 3600;
  w.items = {service("big", 2), service("small", 1)};
  const SimResult r = simulate(c, w, options());
  EXPECT_EQ(r.nodes_scaled_down, 1);
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-1"), 600);
  w.items[1].disruption_budget = DisruptionBudget{std::nullopt, IntOrPercent{0, false}};
  const SimResult blocked = simulate(c, w, options());
  EXPECT_EQ(blocked.nodes_scaled_down, 0);
  EXPECT_NEAR(blocked.cost_usd, 7.2, 1e-12);
}

TEST(SimConsolidation, NodesAPendingGangWaitsForAreLeftAlone) {
  // One ready 4-GPU node, max 2, Cluster Autoscaler on, consolidation with its defaults (every
  // 10 s, consolidateAfter 0). Gang g (2 pods x 4 GPUs) arrives at 0: one pod fits p-0, so the
  // autoscaler asks for one node at 30 (pending since 0, delay 30), ready at 210; g runs 210..1210.
  // Meanwhile p-0 is empty but g could use it: not a candidate. At 1210 (the completion was queued
  // before that tick) both nodes are empty and no pod is pending: both go at once.
  ClusterConfig c;
  c.pools = {pool("p", 4, 1, 0, 2, 3.6)};
  c.consolidation.enabled = true;
  Workload w;
  w.horizon_s = 3600;
  WorkloadSpec g = job("g", 0, 1000, 4);
  g.pods = 2;
  w.items = {g};
  const SimResult r = simulate(c, w, options());
  EXPECT_DOUBLE_EQ(unit(r, "g").completion_s, 1210);
  EXPECT_EQ(unit(r, "g").starts, 1);
  EXPECT_EQ(r.nodes_scaled_up, 1);
  EXPECT_EQ(r.nodes_consolidated, 2);
  EXPECT_EQ(r.nodes_scaled_down, 0);
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-0"), 1210);
  EXPECT_DOUBLE_EQ(node_end_s(r, "p-1"), 1210);
  // p-0 0..1210 and p-1 30..1210 at 1 USD per 1000 s.
  EXPECT_NEAR(r.cost_usd, 2.39, 1e-12);
  expect_cost_invariants(r);
}

TEST(SimConsolidation, ExampleKeepsInvariantsAndIsDeterministic) {
  auto run = [](uint64_t seed) {
    ExampleRun e = example(seed);
    e.cluster.consolidation.enabled = true;
    SimOptions o = options("gpufleet");
    o.seed = seed;
    o.trace = false;
    return simulate(e.cluster, e.workload, o);
  };
  const SimResult r = run(42);
  int64_t pods = 0;
  for (const UnitOutcome& u : r.units) pods += u.pods;
  EXPECT_EQ(r.pods_completed + r.pods_running + r.pods_pending + r.pods_failed, pods);
  expect_cost_invariants(r);
  EXPECT_GT(r.nodes_consolidated, 0);
  EXPECT_LE(r.consolidation_lost_gpu_hours, r.lost_gpu_hours + 1e-12);
  const ExampleRun e = example(42);
  for (const WorkloadSpec& spec : e.workload.items) {
    if (spec.kind == WorkloadKind::kJob && unit(r, spec.name).state == UnitState::kCompleted) {
      EXPECT_DOUBLE_EQ(unit(r, spec.name).saved_work_s, spec.duration_s) << spec.name;
    }
  }
  const std::string a = io::sim_result_json(r) + io::sim_timeseries_csv(r);
  const SimResult again = run(42);
  EXPECT_EQ(a, io::sim_result_json(again) + io::sim_timeseries_csv(again));
}

TEST(SimGenerator, DiurnalArrivalsAndBoundedDurations) {
  GeneratorParams p;
  p.jobs_per_hour = 100;
  p.diurnal_amplitude = 1.0;
  p.peak_hour = 12;
  p.end_s = 10 * 86400;
  p.duration_min_s = 60;
  p.duration_max_s = 36000;
  p.pareto_shape = 1.1;
  p.templates.push_back({1.0, job("t", 0, 1)});
  GoRand rng(1);
  const std::vector<WorkloadSpec> jobs = generate_jobs(p, rng);
  // Mean 100 per hour over 240 h: about 24000 (Poisson, sd ~155).
  EXPECT_NEAR(static_cast<double>(jobs.size()), 24000, 1000);
  int64_t near_peak = 0, near_trough = 0;
  std::vector<double> d;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(jobs[i].arrival_s, jobs[i - 1].arrival_s);
    }
    const double hour = std::fmod(jobs[i].arrival_s, 86400) / 3600;
    if (hour >= 11 && hour < 13) ++near_peak;
    if (hour < 1 || hour >= 23) ++near_trough;
    EXPECT_GE(jobs[i].duration_s, 60);
    EXPECT_LE(jobs[i].duration_s, 36000);
    d.push_back(jobs[i].duration_s);
  }
  // rate(t) = 100 (1 + cos): about 2 x 199 per day near the peak, about 2 x 0.7 near the trough.
  EXPECT_GT(near_peak, 50 * near_trough);
  // Heavy tail: the median is near 60 x 2^(1/1.1) = 113 s; the bounded Pareto mean,
  // a L^a / (a - 1) x (L^(1-a) - H^(1-a)) = 11 x 90.4 x (0.664 - 0.350), is about 312 s.
  std::sort(d.begin(), d.end());
  const double median = d[d.size() / 2];
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
  EXPECT_NEAR(median, 60 * std::pow(2.0, 1 / 1.1), 10);
  EXPECT_NEAR(mean, 312, 40);
  GoRand again(1);
  EXPECT_EQ(generate_jobs(p, again).size(), jobs.size());
}

}  // namespace
}  // namespace gpufleet::sim
