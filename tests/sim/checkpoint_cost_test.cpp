// Checkpoints that cost something (sim/rules/checkpointing.h, WorkloadSpec::checkpoint_cost_s and
// checkpoint_on_notice): the arithmetic, exact losses at a fixed interruption, the advice, and the
// interval sweep against Young's and Daly's optimum (docs/checkpoints-and-upgrades.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/expect_input_error.h"
#include "report/sim_output.h"
#include "readers/sim/sim_pools.h"
#include "report/sim_report.h"
#include "readers/sim/workload_file.h"
#include "model/resources.h"
#include "sim/rules/checkpointing.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

TEST(Checkpointing, RunArithmetic) {
  // Cycles of 600 s of work + 60 s writing. After 1500 s: two cycles (1320 s) and 180 s of work:
  // 1380 s done, 1200 s kept, 120 s writing.
  EXPECT_DOUBLE_EQ(checkpoint_work_done_s(600, 60, 1500), 1380);
  EXPECT_DOUBLE_EQ(checkpoint_work_kept_s(600, 60, 1500), 1200);
  EXPECT_DOUBLE_EQ(checkpoint_time_s(600, 60, 1500), 120);
  // After 1300 s: one cycle, 600 s of work, 40 s into the second write (lost if stopped now).
  EXPECT_DOUBLE_EQ(checkpoint_work_done_s(600, 60, 1300), 1200);
  EXPECT_DOUBLE_EQ(checkpoint_work_kept_s(600, 60, 1300), 600);
  EXPECT_DOUBLE_EQ(checkpoint_time_s(600, 60, 1300), 100);
  // 2400 s of work: checkpoints after 600, 1200, 1800, none at the end; 2500 s: four.
  EXPECT_DOUBLE_EQ(checkpoints_before_s(600, 2400), 3);
  EXPECT_DOUBLE_EQ(checkpoint_run_time_s(600, 60, 2400), 2580);
  EXPECT_DOUBLE_EQ(checkpoint_run_time_s(600, 60, 2500), 2740);
  // No cost: the cost-free model exactly; no interval: nothing kept.
  EXPECT_DOUBLE_EQ(checkpoint_work_kept_s(600, 0, 1500), 1200);
  EXPECT_DOUBLE_EQ(checkpoint_work_done_s(600, 0, 1500.1), 1500.1);
  EXPECT_DOUBLE_EQ(checkpoint_run_time_s(600, 0, 2500), 2500);
  EXPECT_DOUBLE_EQ(checkpoint_work_kept_s(0, 60, 1500), 0);
  EXPECT_DOUBLE_EQ(checkpoint_run_time_s(0, 60, 2500), 2500);
}

TEST(Checkpointing, YoungAndDaly) {
  // C = 60 s, M = 7200 s (0.5 interruptions per hour): Young sqrt(2 x 60 x 7200) = 929.516 s; Daly
  // 929.516 x (1 + sqrt(1/240) / 3 + 1/2160) - 60 = 889.9 s.
  EXPECT_NEAR(young_interval_s(60, 7200), 929.516, 1e-3);
  EXPECT_NEAR(daly_interval_s(60, 7200), 929.5160 * (1 + std::sqrt(1.0 / 240) / 3 + 1.0 / 2160) - 60, 1e-3);
  EXPECT_NEAR(daly_interval_s(60, 7200), 889.94, 1e-2);
  EXPECT_DOUBLE_EQ(daly_interval_s(100, 40), 40);  // C >= 2M: M
  EXPECT_DOUBLE_EQ(young_interval_s(0, 7200), 0);
  EXPECT_DOUBLE_EQ(daly_interval_s(60, 0), 0);
}

// ------------------------------------------------------------------ a fixed interruption (S15)

// `nodes` static spot nodes with 2 L4 GPUs each (4 vCPU, 16 GiB), 3.6 USD/h, no random
// interruptions, notice 120 s.
ClusterConfig spot_pool(int32_t nodes) {
  SimPool p = testing::gpu_pool(
      {.name = "spot", .gpus_per_node = 2, .cpu_milli = 4000, .memory_mib = 16384, .node_count = nodes, .min_nodes = nodes, .max_nodes = nodes});
  p.pool.spot_usd_per_hour = 3.6;
  p.settings.capacity_type = CapacityType::kSpot;
  p.settings.spot_notice_s = 120;
  return testing::one_pool_cluster(p);
}

WorkloadSpec training(int32_t pods, int32_t gpus, double duration_s, double interval_s, double cost_s, bool on_notice) {
  WorkloadSpec s;
  s.name = "train";
  s.pods = pods;
  s.num_gpu = gpus;
  s.gpu_milli = 1000;
  s.duration_s = duration_s;
  s.checkpoint_interval_s = interval_s;
  s.checkpoint_cost_s = cost_s;
  s.checkpoint_on_notice = on_notice;
  s.capacity = CapacityPreference::kSpot;
  return s;
}

SimResult run_interrupted(const WorkloadSpec& job, int32_t nodes, double horizon_s) {
  ClusterConfig c = spot_pool(nodes);
  Workload w;
  w.horizon_s = horizon_s;
  w.items = {job};
  return testing::run_least_allocated(c, w, {testing::interrupt_at(1000, 0)});  // spot-0's notice at 1000 s
}

TEST(CheckpointCost, LostWorkAtAFixedInterruption) {
  // One 1-GPU job, 5000 s of work, checkpoints every 600 s of work at 60 s each; node spot-0 gets a
  // notice at 1000 s. Run 1: 600 s work, 60 s writing, 340 s work: 940 s done, 600 s kept, 340 s
  // lost. Run 2 on spot-1 from 1000 s: 4400 s of work with 7 checkpoints (after 600 .. 4200):
  // 4820 s, completion at 5820 s. Writing: 60 + 420 = 480 s.
  const SimResult r = run_interrupted(training(1, 1, 5000, 600, 60, false), 2, 8000);
  ASSERT_EQ(r.units.size(), 1u);
  EXPECT_DOUBLE_EQ(r.units[0].completion_s, 5820);
  EXPECT_EQ(r.units[0].interruptions, 1);
  EXPECT_NEAR(r.lost_gpu_hours, 340.0 / 3600, 1e-12);
  ASSERT_TRUE(r.checkpoint_costs);
  EXPECT_NEAR(r.checkpoint_s, 480, 1e-9);
  EXPECT_NEAR(r.checkpoint_gpu_hours, 480.0 / 3600, 1e-12);
  ASSERT_EQ(r.checkpoint_jobs.size(), 1u);
  EXPECT_NEAR(r.checkpoint_jobs[0].checkpoint_s, 480, 1e-9);
  EXPECT_NE(io::sim_summary_text(r).find("checkpoints: 480 s writing, 0.13 GPU-hours"), std::string::npos);
  EXPECT_NE(io::sim_report_html("w", {io::CompareEntry{"c", "p", r}}).find("<h2>Checkpoints</h2>"), std::string::npos);
  // Lost work <= the work since the last checkpoint (340 s) + the notice window (120 s).
  EXPECT_LE(r.lost_gpu_hours * 3600, 340 + 120 + 1e-9);

  // Checkpoint on notice (60 s <= 120 s): nothing lost; 940 s kept, one more write (60 s). Run 2:
  // 4060 s of work, 6 checkpoints: 4420 s, completion at 5420 s. Writing: 120 + 360 = 480 s.
  const SimResult n = run_interrupted(training(1, 1, 5000, 600, 60, true), 2, 8000);
  EXPECT_DOUBLE_EQ(n.units[0].completion_s, 5420);
  EXPECT_DOUBLE_EQ(n.lost_gpu_hours, 0);
  EXPECT_NEAR(n.checkpoint_s, 480, 1e-9);
  EXPECT_DOUBLE_EQ(n.units[0].saved_work_s, 5000);

  // A checkpoint that does not fit in the notice window (180 s > 120 s): the work since the last
  // checkpoint is lost. Run 1: 1000 s = 600 s work + 180 s writing + 220 s work: 600 s kept, 220 s
  // lost; run 2: 4400 s + 7 x 180 s = 5660 s, completion at 6660 s.
  const SimResult late = run_interrupted(training(1, 1, 5000, 600, 180, true), 2, 8000);
  EXPECT_NEAR(late.lost_gpu_hours, 220.0 / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(late.units[0].completion_s, 6660);

  // Without checkpoint costs nothing new is reported (and the JSON has no "checkpoints").
  WorkloadSpec free = training(1, 1, 5000, 600, 0, false);
  const SimResult f = run_interrupted(free, 2, 8000);
  EXPECT_FALSE(f.checkpoint_costs);
  EXPECT_EQ(io::sim_result_json(f).find("checkpoints"), std::string::npos);
  EXPECT_EQ(io::sim_summary_text(f).find("checkpoints"), std::string::npos);
  EXPECT_EQ(io::sim_report_html("w", {io::CompareEntry{"c", "p", f}}).find("<h2>Checkpoints</h2>"), std::string::npos);
  EXPECT_NEAR(f.lost_gpu_hours, 400.0 / 3600, 1e-12);  // 1000 s run, 600 s kept
  EXPECT_DOUBLE_EQ(f.units[0].completion_s, 5000 - 600 + 1000);
}

TEST(CheckpointCost, AdviceCountsEveryNodeOfAGang) {
  // Three static spot nodes (2 GPUs each); a gang of 2 pods x 2 GPUs starts on spot-0 and spot-1,
  // spot-0 gets a notice at 1000 s and the gang restarts on spot-1 and spot-2. The pool: 1 notice
  // over 1120 s (spot-0, reclaimed 120 s after) + 2 x 8000 s of node time = 17120 s, 0.21028 per
  // node-hour; the gang on two nodes: twice that, MTBI 8560 s. Young sqrt(2 x 60 x 8560).
  const SimResult r = run_interrupted(training(2, 2, 5000, 600, 60, false), 3, 8000);
  ASSERT_EQ(r.checkpoint_jobs.size(), 1u);
  const CheckpointJobResult& c = r.checkpoint_jobs[0];
  EXPECT_NEAR(c.interruptions_per_hour, 2 * 3600.0 / 17120, 1e-9);
  EXPECT_NEAR(c.mtbi_s, 8560, 1e-6);
  EXPECT_NEAR(c.young_interval_s, std::sqrt(2 * 60 * 8560.0), 1e-6);
  EXPECT_NEAR(c.daly_interval_s, daly_interval_s(60, 8560), 1e-9);
  // The lost work: 2 pods x 2 GPUs x 340 s.
  EXPECT_NEAR(r.lost_gpu_hours, 4 * 340.0 / 3600, 1e-12);
}

TEST(CheckpointCost, WorkloadFileFields) {
  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\njobs:\n- name: j\n  durationSeconds: 50\n";
  const io::SimWorkloadFile f =
      io::parse_sim_workload_text(head + "  checkpointIntervalSeconds: 10\n  checkpointCostSeconds: 2.5\n  checkpointOnNotice: true\n", "w.yaml", {});
  ASSERT_EQ(f.workload.items.size(), 1u);
  EXPECT_DOUBLE_EQ(f.workload.items[0].checkpoint_cost_s, 2.5);
  EXPECT_TRUE(f.workload.items[0].checkpoint_on_notice);
  const io::SimWorkloadFile d = io::parse_sim_workload_text(head, "w.yaml", {});
  EXPECT_DOUBLE_EQ(d.workload.items[0].checkpoint_cost_s, 0);
  EXPECT_FALSE(d.workload.items[0].checkpoint_on_notice);
  testing::expect_input_error([&] { io::parse_sim_workload_text(head + "  checkpointCostSeconds: -1\n", "w.yaml", {}); }, "w.yaml", 7, 26,
                              "jobs[0].checkpointCostSeconds", "-1");
  testing::expect_input_error([&] { io::parse_sim_workload_text(head + "  checkpointOnNotice: maybe\n", "w.yaml", {}); }, "w.yaml", 7, 23,
                              "jobs[0].checkpointOnNotice", "not a boolean");
}

TEST(CheckpointCost, Example) {
  // examples/faults/checkpoints: one 16 h job on spot, every 900 s at 60 s each; it completes, and
  // the writes are the checkpoints of its runs (at least the 63 of an uninterrupted run).
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "faults" / "checkpoints";
  const ClusterConfig c = io::read_sim_cluster_file((dir / "pools.yaml").string());
  const io::SimWorkloadFile w = io::read_sim_workload_file((dir / "workload.yaml").string(), {"train-spot"});
  ASSERT_EQ(w.workload.items.size(), 1u);
  EXPECT_DOUBLE_EQ(w.workload.items[0].checkpoint_cost_s, 60);
  SimOptions o;
  o.seed = 42;
  const SimResult r = simulate(c, w.workload, o);
  EXPECT_EQ(r.units.at(0).state, UnitState::kCompleted);
  ASSERT_EQ(r.checkpoint_jobs.size(), 1u);
  EXPECT_GE(r.checkpoint_jobs[0].checkpoint_s, 63 * 60);
  EXPECT_GT(r.checkpoint_jobs[0].daly_interval_s, 0);
}

// ------------------------------------------------------------------ the interval sweep

// One job of `work_s` seconds (1 pod, 8 GPUs) on a spot pool of 8-GPU nodes interrupted at
// `rate_per_hour` per node-hour, replaced by the Cluster Autoscaler (provisioning, scale-up delay).
// Returns the cost of the node time from 0 to the job's completion, USD at 1 USD per node-hour
// (-1 if the job did not complete).
double job_cost(double work_s, double rate_per_hour, double cost_s, double interval_s, uint64_t seed) {
  ClusterConfig c;
  SimPool p = testing::gpu_pool({.name = "spot", .gpu_model = "H100-80GB", .gpus_per_node = 8, .cpu_milli = 192000,
                                 .memory_mib = 2048LL * 1024, .node_count = 1, .on_demand_usd_per_hour = 1});
  p.pool.spot_usd_per_hour = 1;
  p.settings.capacity_type = CapacityType::kSpot;
  p.settings.spot_interruptions_per_hour = rate_per_hour;
  c.pools = {p};
  Workload w;
  w.horizon_s = 4 * work_s;
  w.items = {training(1, 8, work_s, interval_s, cost_s, false)};
  SimOptions o = testing::least_allocated_options();
  o.seed = seed;
  const SimResult r = simulate(c, w, o);
  const double done = r.units[0].completion_s;
  if (done < 0) return -1;
  double usd = 0;
  for (const NodeLifetime& l : r.nodes) usd += std::max(0.0, std::min(l.end_s, done) - l.start_s) * l.price_usd_per_hour / 3600;
  return usd;
}

struct SweepPoint {
  double interval_s;
  double mean_usd;
};

std::vector<SweepPoint> sweep(double work_s, double rate, double cost_s, const std::vector<double>& intervals, int runs) {
  std::vector<SweepPoint> out;
  for (double tau : intervals) {
    double sum = 0;
    for (int s = 1; s <= runs; ++s) {  // the same seeds for every interval (common random numbers)
      const double usd = job_cost(work_s, rate, cost_s, tau, static_cast<uint64_t>(s));
      EXPECT_GE(usd, 0) << "interval " << tau << " seed " << s;
      sum += usd;
    }
    out.push_back({tau, sum / runs});
  }
  return out;
}

// Least squares of cost = a + b / tau + c x tau (the first-order waste C / tau + tau / 2M); its
// minimum sqrt(b / c).
double fitted_optimum(const std::vector<SweepPoint>& points) {
  double m[3][4] = {};
  for (const SweepPoint& p : points) {
    const double x[3] = {1, 1 / p.interval_s, p.interval_s};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += x[i] * x[j];
      m[i][3] += x[i] * p.mean_usd;
    }
  }
  for (int i = 0; i < 3; ++i)  // Gauss-Jordan on the 3 x 3 normal equations
    for (int k = 0; k < 3; ++k) {
      if (k == i) continue;
      const double f = m[k][i] / m[i][i];
      for (int j = 0; j < 4; ++j) m[k][j] -= f * m[i][j];
    }
  const double b = m[1][3] / m[1][1], c = m[2][3] / m[2][2];
  return b > 0 && c > 0 ? std::sqrt(b / c) : 0;
}

std::string sweep_table(const std::vector<SweepPoint>& points, int runs) {
  std::string out = fmt::format("{:>10}  {:>16}\n", "interval_s", "USD per job");
  for (const SweepPoint& p : points) out += fmt::format("{:>10.0f}  {:>16.4f}\n", p.interval_s, p.mean_usd);
  const auto best = std::min_element(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.mean_usd < b.mean_usd; });
  out += fmt::format("runs per interval {}; lowest mean at {:.0f} s; fitted a + b/tau + c tau minimum {:.0f} s\n", runs, best->interval_s,
                     fitted_optimum(points));
  return out;
}

TEST(CheckpointSweep, SimulatedOptimumIsWithin15PercentOfYoungAndDaly) {
  // 0.5 interruptions per node-hour (M = 7200 s), C = 60 s: Young 930 s, Daly 890 s. A 16-hour
  // job, 80 seeds per interval (the same seeds for every interval).
  const double work_s = 16 * 3600.0, rate = 0.5, cost_s = 60;
  const std::vector<double> intervals = {300, 450, 600, 900, 1200, 1800, 3000};
  const int runs = 80;
  const std::vector<SweepPoint> points = sweep(work_s, rate, cost_s, intervals, runs);
  const double fitted = fitted_optimum(points);
  std::cout << sweep_table(points, runs);
  EXPECT_NEAR(fitted / young_interval_s(cost_s, 7200), 1.0, 0.15) << fitted;
  EXPECT_NEAR(fitted / daly_interval_s(cost_s, 7200), 1.0, 0.15) << fitted;
  // The ends of the sweep cost more than its middle.
  const double middle = std::min_element(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.mean_usd < b.mean_usd; })->mean_usd;
  EXPECT_GT(points.front().mean_usd, middle);
  EXPECT_GT(points.back().mean_usd, middle);
}

// The longer sweep of docs/checkpoints-and-upgrades.md: GPUFLEET_CHECKPOINT_SWEEP_RUNS runs per
// interval (skipped when unset).
TEST(CheckpointSweep, Figures) {
  const char* env = std::getenv("GPUFLEET_CHECKPOINT_SWEEP_RUNS");
  if (env == nullptr) GTEST_SKIP() << "set GPUFLEET_CHECKPOINT_SWEEP_RUNS (e.g. 300) to print the sweep";
  const int runs = std::max(1, std::atoi(env));
  const std::vector<double> intervals = {300, 450, 600, 750, 900, 1050, 1200, 1500, 1800, 2400, 3000};
  std::cout << "rate 0.5 per node-hour (M 7200 s), checkpoint cost 60 s, 16 h job on one 8-GPU spot node, 1 USD per node-hour\n"
            << "Young " << fmt::format("{:.0f}", young_interval_s(60, 7200)) << " s, Daly " << fmt::format("{:.0f}", daly_interval_s(60, 7200))
            << " s\n"
            << sweep_table(sweep(16 * 3600.0, 0.5, 60, intervals, runs), runs);
}

}  // namespace
}  // namespace gpufleet::sim
