// The work estimate (inputs/sim/work_estimate.h) on tiny hand-computed cases, the budget check's
// errors, and the estimate against the events the example runs count.
#include "inputs/sim/work_estimate.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inputs/sim/job_generator.h"
#include "readers/serving/inference_catalog.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/simulator.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace gpufleet::sim {
namespace {

SimPool pool(const std::string& name, int32_t max_nodes) {
  SimPool p;
  p.pool.name = name;
  p.pool.max_nodes = max_nodes;
  return p;
}

WorkloadSpec job(const std::string& name, int32_t pods) {
  WorkloadSpec s;
  s.name = name;
  s.pods = pods;
  s.duration_s = 60;
  return s;
}

// One pool of max 3, horizon 100 s, scan every 10 s, one job of 2 pods: every figure by hand.
TEST(WorkEstimate, TinyClusterByHand) {
  ClusterConfig c;
  c.pools.push_back(pool("a", 3));
  c.autoscaler.scan_interval_s = 10;
  Workload w;
  w.horizon_s = 100;
  w.items.push_back(job("j", 2));
  const WorkEstimate e = estimate_work(c, w, SimOptions{});
  EXPECT_EQ(e.node_slots.total, 3);
  EXPECT_EQ(e.pods.total, 2);
  EXPECT_EQ(e.units, 1);
  EXPECT_EQ(e.requests.total, 0);
  // Scans at 0, 10, ..., 100: 11, each over 3 slots; placing 2 pods filters 3 slots each.
  EXPECT_EQ(e.node_checks.total, 11 * 3 + 2 * 3);
  // 3 lifecycle events per slot; 1 arrival + 1 completion + 2 retries and 4 node-launch events per
  // pod + 3 per slot; 11 scans.
  EXPECT_EQ(e.events.total, 3 * 3 + (1 + 1 + 2 * 2 + 4 * 2 + 3 * 3) + 11);
  EXPECT_EQ(e.timeseries_rows, 100 / 60 + 1);
  EXPECT_GT(e.memory_bytes, 0);
}

TEST(WorkEstimate, ConsolidationAndNoAutoscaler) {
  ClusterConfig c;
  c.pools.push_back(pool("a", 4));
  c.autoscaler.enabled = false;
  c.consolidation.enabled = true;
  c.consolidation.interval_s = 20;
  Workload w;
  w.horizon_s = 100;
  const WorkEstimate e = estimate_work(c, w, SimOptions{});
  EXPECT_EQ(e.node_checks.total, 6 * 4);  // passes at 0, 20, ..., 100
  // No autoscaler, Karpenter or faults: no node is ever launched, and the pool starts empty, so
  // there are no node lifecycle events; the 6 passes only.
  EXPECT_EQ(e.events.total, 6);
  c.pools[0].pool.node_count = 2;  // 2 nodes at the start: 3 lifecycle events each
  EXPECT_EQ(estimate_work(c, w, SimOptions{}).events.total, 3 * 2 + 6);
}

InferenceServiceSpec service_with(const std::string& name, inference::TrafficSpec traffic) {
  InferenceServiceSpec s;
  s.service = name;
  s.traffic = std::move(traffic);
  s.scrape_interval_s = 10;
  return s;
}

TEST(WorkEstimate, GeneratedRequestsAreRateTimesWindow) {
  Workload w;
  w.horizon_s = 7 * 86400;
  WorkloadSpec svc = job("chat", 2);
  svc.kind = WorkloadKind::kService;
  w.items.push_back(svc);
  inference::GeneratedSourceOptions g;
  g.rate.mean_rate_per_s = 2;
  g.horizon_s = w.horizon_s;
  w.inference.push_back(service_with("chat", g));
  const WorkEstimate e = estimate_work(ClusterConfig{}, w, SimOptions{});
  EXPECT_DOUBLE_EQ(e.requests.total, 2.0 * 7 * 86400);
  ASSERT_EQ(e.requests.terms.size(), 1u);
  EXPECT_NE(e.requests.terms[0].formula.find("meanRatePerSecond 2 x 604800 s"), std::string::npos) << e.requests.terms[0].formula;
  // A flat rate over a shorter window is integrated: the same product.
  w.horizon_s = 3600;
  std::get<inference::GeneratedSourceOptions>(w.inference[0].traffic).horizon_s = 3600;
  EXPECT_NEAR(estimate_work(ClusterConfig{}, w, SimOptions{}).requests.total, 7200, 1e-6);
}

TEST(WorkEstimate, TraceRequestsAreRowsInTheRunTimesMultiplier) {
  auto rows = std::make_shared<std::vector<inference::Request>>();
  for (int i = 0; i < 10; ++i) {
    inference::Request r;
    r.id = static_cast<uint64_t>(i);
    r.arrival_s = i;
    rows->push_back(r);
  }
  inference::TraceTraffic t;
  t.requests = rows;
  t.replay.rate_multiplier = 3;
  Workload w;
  w.horizon_s = 5;  // rows at 0..5 arrive by the horizon
  WorkloadSpec svc = job("chat", 1);
  svc.kind = WorkloadKind::kService;
  w.items.push_back(svc);
  w.inference.push_back(service_with("chat", t));
  WorkEstimate e = estimate_work(ClusterConfig{}, w, SimOptions{});
  EXPECT_EQ(e.requests.total, 6 * 3);
  // Twice as slow: rows 0..2 only.
  std::get<inference::TraceTraffic>(w.inference[0].traffic).replay.time_scale = 2;
  e = estimate_work(ClusterConfig{}, w, SimOptions{});
  EXPECT_EQ(e.requests.total, 3 * 3);
  // Scrapes: 0, 10, ... over 5 s: one.
  bool scrapes = false;
  for (const WorkTerm& term : e.events.terms)
    if (term.formula.find("scrapeIntervalSeconds 10 s") != std::string::npos) {
      EXPECT_EQ(term.amount, 1);
      scrapes = true;
    }
  EXPECT_TRUE(scrapes);
}

TEST(WorkEstimate, ServiceReplicasGoUpToTheAutoscalersMax) {
  Workload w;
  w.horizon_s = 150;
  WorkloadSpec svc = job("chat", 2);
  svc.kind = WorkloadKind::kService;
  w.items.push_back(svc);
  InferenceServiceSpec s = service_with("chat", inference::GeneratedSourceOptions{});
  replica_autoscaling::HpaSpec hpa;
  hpa.max_replicas = 40;
  s.autoscaler.hpa = hpa;
  s.autoscaler.hpa_controller.sync_period_s = 15;
  w.inference.push_back(s);
  const WorkEstimate e = estimate_work(ClusterConfig{}, w, SimOptions{});
  EXPECT_EQ(e.pods.total, 40);
  bool evaluations = false;
  for (const WorkTerm& t : e.events.terms)
    if (t.formula.find("autoscaler evaluations") != std::string::npos) {
      EXPECT_EQ(t.amount, 11);  // syncs at 0, 15, ..., 150
      evaluations = true;
    }
  EXPECT_TRUE(evaluations);
}

TEST(WorkBudget, OverTheBudgetNamesTheFieldAndTheOption) {
  Workload w;
  w.horizon_s = 1800;
  WorkloadSpec svc = job("chat", 1);
  svc.kind = WorkloadKind::kService;
  w.items.push_back(svc);
  inference::GeneratedSourceOptions g;
  g.rate.mean_rate_per_s = 100000;
  g.horizon_s = 1800;
  InferenceServiceSpec s = service_with("chat", g);
  s.traffic_origin = {"w.yaml", 14, 7, "services[0].inference.traffic.generate.meanRatePerSecond"};
  w.inference.push_back(s);
  try {
    check_work_budget(ClusterConfig{}, w, SimOptions{}, WorkBudget{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "w.yaml");
    EXPECT_EQ(e.line(), 14);
    EXPECT_EQ(e.column(), 7);
    EXPECT_EQ(e.field(), "services[0].inference.traffic.generate.meanRatePerSecond");
    const std::string what = e.what();
    EXPECT_NE(what.find("1.8e+08 requests (service chat: meanRatePerSecond 100000 x 1800 s) is over the budget of 2e+07 per run"),
              std::string::npos) << what;
    EXPECT_NE(what.find("raise --max-requests"), std::string::npos) << what;
  }
  // Raised, it passes; built in code (no origin), a plain message.
  WorkBudget raised;
  raised.max_requests = 2e8;
  raised.max_events = 1e9;
  EXPECT_NO_THROW(check_work_budget(ClusterConfig{}, w, SimOptions{}, raised));
  w.inference[0].traffic_origin = {};
  EXPECT_THROW(check_work_budget(ClusterConfig{}, w, SimOptions{}, WorkBudget{}), UsageError);
}

TEST(WorkBudget, NodeChecksOfAHugePoolOverALongHorizon) {
  ClusterConfig c;
  c.pools.push_back(pool("big", 100000));
  c.pools.back().origin = {"p.yaml", 9, 10, "pools[0].max"};
  Workload w;
  w.horizon_s = 1e8;
  w.items.push_back(job("j", 1));
  try {
    check_work_budget(c, w, SimOptions{}, WorkBudget{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "pools[0].max");
    // 1e7 scans are inside the events budget; 1e7 scans x 1e5 slots are not.
    EXPECT_NE(std::string(e.what()).find("1e+12 node checks (100000 node slots x 1e+08 s / scanIntervalSeconds 10 s)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-node-checks"), std::string::npos) << e.what();
  }
}

// The estimate against the events each example run counts (SimResult::events_processed): an upper
// bound, and not absurdly far above. The ratios are printed for docs/input-limits.md.
struct Example {
  std::string pools, workload;
  bool run = true;  ///< false: estimated only (too long a run for a unit test)
};

TEST(WorkEstimate, IsAnUpperBoundOfTheExamplesEvents) {
  const std::filesystem::path ex = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples";
  const std::vector<Example> examples = {
      {"simulate/pools.yaml", "simulate/workload.yaml"},
      {"simulate/baseline-pools.yaml", "simulate/workload.yaml"},
      {"simulate/scaledjob-pools.yaml", "simulate/scaledjob-workload.yaml"},
      {"simulate/sharing-pools.yaml", "simulate/sharing-workload.yaml"},
      {"faults/pools.yaml", "faults/workload.yaml"},
      {"topology/pools.yaml", "topology/week-aware.yaml"},
      {"daemonsets/pools.yaml", "daemonsets/idle.yaml"},
      {"faults/spot-first-karpenter.yaml", "faults/spot-shortage-workload.yaml"},
      {"serving/pools.yaml", "serving/chat.yaml"},
      {"serving/pools.yaml", "serving/chat-day.yaml", false},  // 4.3 million requests: the largest example
      {"serving/pools.yaml", "serving/diurnal/predictive.yaml", false},  // 4.8 million requests
      {"serving/pools.yaml", "serving/from-deployment.yaml"},
  };
  const inference::ServingCatalog catalog = io::builtin_serving_catalog();
  for (const Example& x : examples) {
    SCOPED_TRACE(x.workload);
    const ClusterConfig cluster = io::read_sim_cluster_file((ex / x.pools).string());
    std::vector<std::string> names;
    for (const SimPool& p : cluster.pools) names.push_back(p.pool.name);
    io::SimWorkloadFile f = io::read_sim_workload_file((ex / x.workload).string(), names, &catalog);
    if (f.generator) {
      GoRand rng(42);
      for (WorkloadSpec& j : generate_jobs(*f.generator, rng)) f.workload.items.push_back(std::move(j));
    }
    SimOptions o;
    o.serving_catalog = &catalog;
    const WorkEstimate e = estimate_work(cluster, f.workload, o);
    EXPECT_NO_THROW(check_work_budget(e, WorkBudget{}));
    // A third of every budget at most: the examples pass comfortably.
    EXPECT_LE(e.events.total, WorkBudget{}.max_events / 3);
    EXPECT_LE(e.requests.total, WorkBudget{}.max_requests / 3);
    EXPECT_LE(e.pods.total, WorkBudget{}.max_pods / 3);
    EXPECT_LE(e.node_checks.total, WorkBudget{}.max_node_checks / 3);
    if (!x.run) {
      std::printf("%-40s events estimated %12.0f; requests %g pods %g node checks %g (not run)\n", x.workload.c_str(), e.events.total,
                  e.requests.total, e.pods.total, e.node_checks.total);
      continue;
    }
    const SimResult r = simulate(cluster, f.workload, o);
    const double measured = static_cast<double>(r.events_processed);
    std::printf("%-40s events measured %10.0f estimated %12.0f ratio %6.2f; requests %g pods %g node checks %g\n",
                x.workload.c_str(), measured, e.events.total, e.events.total / measured, e.requests.total, e.pods.total,
                e.node_checks.total);
    EXPECT_GT(measured, 0);
    EXPECT_LE(measured, e.events.total);
    EXPECT_LE(e.events.total, 10 * measured);  // seen: 1.01 to 3.2
  }
}

}  // namespace
}  // namespace gpufleet::sim
