// Kueue in the simulator (sim/controllers/kueue_admission.h): quota-only admission with
// waitForPodsReady against placement-aware admission on real nodes (the scenario of
// kubernetes-sigs/kueue#4329), reclaim within a cohort tree over time (kubernetes-sigs/kueue#3948),
// per-queue outputs. Expected values by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/kueue_test_support.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "model/resources.h"
#include "inputs/sim/job_generator.h"
#include "util/go_rand.h"
#include "sim/simulator.h"

namespace gpufleet::sim {
namespace {

using queue::testing::add_cq;
using queue::testing::add_flavor;
using queue::testing::quota;

ClusterConfig nodes(int32_t count, int32_t gpus) {
  SimPool p;
  p.pool.name = "n";
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 64000;
  p.pool.memory_bytes = 512 * 1024 * kBytesPerMib;
  p.pool.node_count = p.pool.min_nodes = p.pool.max_nodes = count;
  p.pool.on_demand_usd_per_hour = 1;
  ClusterConfig c;
  c.pools = {p};
  c.autoscaler.enabled = false;
  return c;
}

WorkloadSpec job(std::string name, double arrival_s, int32_t gpus, double duration_s, std::string queue_name) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.arrival_s = arrival_s;
  s.num_gpu = gpus;
  s.gpu_milli = 1000;
  s.duration_s = duration_s;
  s.queue_name = std::move(queue_name);
  return s;
}

const UnitOutcome& unit(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

std::vector<std::string> events_of(const SimResult& r, const std::string& workload) {
  std::vector<std::string> out;
  for (const QueueEvent& e : r.queue_events)
    if (e.workload == "default/" + workload) out.push_back(e.type + (e.reason.empty() ? "" : "/" + e.reason));
  return out;
}

SimOptions opts() {
  SimOptions o;
  o.policy = "leastallocated";  // spreads: the two 4-GPU jobs land on different nodes
  o.seed = 1;
  return o;
}

// Two nodes x 8 GPUs, each running a 4-GPU job of the ClusterQueue (nominal 16 GPUs, 8 in use);
// W1 (8 GPUs) at t=1, W2 and W3 (1 GPU, 100 s) at t=10 and t=20. waitForPodsReady timeout 300 s.
Workload fragmented(bool placement_aware) {
  Workload w;
  w.horizon_s = 1000;
  w.items = {job("a", 0, 4, 5000, "cq"), job("b", 0, 4, 5000, "cq"), job("w1", 1, 8, 100, "cq"), job("w2", 10, 1, 100, "cq"),
             job("w3", 20, 1, 100, "cq")};
  queue::KueueObjects o;
  add_flavor(o, "default");
  add_cq(o, "cq", "", quota("default", queue::kGpu, 16 * 1000));
  o.configuration.wait_for_pods_ready = true;
  o.configuration.wait_for_pods_ready_timeout_s = 300;
  o.configuration.placement_aware = placement_aware;
  w.queues = o;
  return w;
}

TEST(SimQueues, QuotaOnlyAdmitsWhatNoNodeHoldsUntilPodsReadyTimeout) {
  const SimResult r = simulate(nodes(2, 8), fragmented(false), opts());
  // W1 is admitted at 1 (quota 8 + 8 <= 16) but no node has 8 free: its pods stay pending. W2 and W3
  // wait for quota. At 301 W1 is evicted (PodsReadyTimeout) and W2, W3 are admitted and start; they
  // finish at 401.
  const std::vector<std::string> w1 = events_of(r, "w1");
  ASSERT_GE(w1.size(), 2u);
  EXPECT_EQ(w1[0], "Admitted/QuotaReserved");
  EXPECT_EQ(w1[1], "Evicted/PodsReadyTimeout");
  EXPECT_DOUBLE_EQ(unit(r, "w2").completion_s, 401);
  EXPECT_DOUBLE_EQ(unit(r, "w3").completion_s, 401);
  EXPECT_EQ(unit(r, "w1").starts, 0);
  ASSERT_EQ(r.queues.size(), 1u);
  EXPECT_EQ(r.admission, "quota");
  EXPECT_GE(r.queues[0].evictions, 1);
}

TEST(SimQueues, PlacementAwareNeverAdmitsWhatNoNodeHolds) {
  const SimResult r = simulate(nodes(2, 8), fragmented(true), opts());
  // W1 is never admitted; W2 and W3 are admitted on arrival and finish at 110 and 120.
  for (const std::string& e : events_of(r, "w1")) EXPECT_EQ(e.rfind("Pending", 0), 0u) << e;
  EXPECT_DOUBLE_EQ(unit(r, "w2").completion_s, 110);
  EXPECT_DOUBLE_EQ(unit(r, "w3").completion_s, 120);
  EXPECT_EQ(unit(r, "w1").state, UnitState::kQueued);
  EXPECT_EQ(r.queues[0].evictions, 0);
  EXPECT_EQ(r.queues[0].pending_at_end, 1);
  EXPECT_EQ(r.admission, "placement");
}

// The pending series counts the jobs Kueue holds, as the pending-time samples do: with placement-aware
// admission W1 waits in its queue from 1 s to the horizon (a sample of 999 s) without ever entering
// the scheduler's queue, and the time series, the peak and the pending list show it, with Kueue's
// reason. With quota-only admission W1's pod pends in the scheduler from 1 s while W2 and W3 wait
// for quota from 10 and 20 s: 3 pods from 20 s until W1's eviction at 301 s.
TEST(SimQueues, ThePendingSeriesCountsTheJobsKueueHolds) {
  {
    const SimResult r = simulate(nodes(2, 8), fragmented(true), opts());
    EXPECT_EQ(r.pending.p99, 999);
    ASSERT_EQ(r.timeseries.size(), 17u);  // rows at 0, 60, ..., 960
    for (size_t i = 1; i < r.timeseries.size(); ++i) EXPECT_EQ(r.timeseries[i].pending_pods, 1) << i;
    // W2 and W3 are admitted and start on arrival: they never wait in a settled state.
    EXPECT_EQ(r.pending_peak_pods, 1);
    EXPECT_DOUBLE_EQ(r.pending_peak_s, 1);
    ASSERT_EQ(r.pending_at_horizon.size(), 1u);
    EXPECT_EQ(r.pending_at_horizon[0].unit, "w1");
    EXPECT_DOUBLE_EQ(r.pending_at_horizon[0].pending_since_s, 1);
    EXPECT_EQ(r.pending_at_horizon[0].reason.rfind("Kueue: ", 0), 0u) << r.pending_at_horizon[0].reason;
    ASSERT_EQ(r.pending_at_peak.size(), 1u);
    EXPECT_EQ(r.pending_at_peak[0].reason, r.pending_at_horizon[0].reason);
  }
  {
    const SimResult r = simulate(nodes(2, 8), fragmented(false), opts());
    for (size_t i = 1; i <= 5; ++i) EXPECT_EQ(r.timeseries[i].pending_pods, 3) << i;  // 60 .. 300 s
    EXPECT_EQ(r.pending_peak_pods, 3);
    EXPECT_DOUBLE_EQ(r.pending_peak_s, 20);
    ASSERT_EQ(r.pending_at_peak.size(), 3u);
    EXPECT_EQ(r.pending_at_peak[0].unit, "w1");  // the scheduler's queue first, then the jobs Kueue holds
    EXPECT_EQ(r.pending_at_peak[0].reason.rfind("0/2 nodes are available", 0), 0u) << r.pending_at_peak[0].reason;
    EXPECT_EQ(r.pending_at_peak[1].unit, "w2");
    EXPECT_EQ(r.pending_at_peak[2].unit, "w3");
    EXPECT_EQ(r.pending_at_peak[1].reason.rfind("Kueue: ", 0), 0u) << r.pending_at_peak[1].reason;
  }
}

TEST(SimQueues, ReclaimWithinACohortTreeOverTime) {
  // One node x 8 GPUs. Root cohort -> ClusterQueue be (nominal 0, borrows) and sub-cohort guar
  // (nominal 8) -> ClusterQueue g (nominal 0, reclaimWithinCohort Any). be-1 (8 GPUs, 1000 s) at 0
  // borrows everything; g-1 (8 GPUs, 100 s) at 60 reclaims: be-1 is preempted and suspended (no
  // checkpoints: its 60 s are lost), g-1 runs 60..160; be-1 is admitted again at 160 and runs
  // 1000 s more, to 1160.
  Workload w;
  w.horizon_s = 2000;
  w.items = {job("be-1", 0, 8, 1000, "be"), job("g-1", 60, 8, 100, "g")};
  queue::KueueObjects o;
  add_flavor(o, "default");
  add_cq(o, "be", "root", quota("default", queue::kGpu, 0));
  add_cq(o, "g", "guar", quota("default", queue::kGpu, 0)).preemption.reclaim_within_cohort = queue::ReclaimWithinCohort::kAny;
  o.cohorts.push_back({"root", "", {}, 1000});
  o.cohorts.push_back({"guar", "root", quota("default", queue::kGpu, 8 * 1000), 1000});
  w.queues = o;
  const SimResult r = simulate(nodes(1, 8), w, opts());
  const std::vector<std::string> be = events_of(r, "be-1");
  ASSERT_GE(be.size(), 3u);
  EXPECT_EQ(be[0], "Admitted/QuotaReserved");
  EXPECT_EQ(be[1], "Preempted/InCohortReclamation");
  EXPECT_DOUBLE_EQ(unit(r, "g-1").completion_s, 160);
  EXPECT_DOUBLE_EQ(unit(r, "be-1").completion_s, 1160);
  // be used 8 GPUs for 60 s then 1000 s, all borrowed (nominal 0): 8 x 1060 / 3600 GPU-hours.
  EXPECT_NEAR(r.queues[0].gpu_hours, 8 * 1060 / 3600.0, 1e-9);
  EXPECT_NEAR(r.queues[0].borrowed_pct, 100, 1e-9);
  EXPECT_EQ(r.queues[0].preemptions, 1);
  EXPECT_NEAR(r.lost_gpu_hours, 8 * 60 / 3600.0, 1e-9);
}

}  // namespace
}  // namespace gpufleet::sim

namespace gpufleet::sim {
namespace {

TEST(SimQueues, ExamplesReadAndCompare) {
  const auto path = [](const char* name) { return std::string(GPUFLEET_SOURCE_DIR "/examples/queues/simulate/") + name; };
  const ClusterConfig cluster = io::read_sim_cluster_file(path("pools.yaml"));
  const io::SimWorkloadFile quota = io::read_sim_workload_file(path("quota-only.yaml"), {"h100", "a100-spot"});
  const io::SimWorkloadFile aware = io::read_sim_workload_file(path("placement-aware.yaml"), {"h100", "a100-spot"});
  ASSERT_TRUE(quota.workload.queues.has_value());
  ASSERT_TRUE(aware.workload.queues.has_value());
  // The Configuration of ../local-queues.yaml switches placement-aware admission on; `admission:`
  // overrides it.
  EXPECT_FALSE(quota.workload.queues->configuration.placement_aware);
  EXPECT_TRUE(aware.workload.queues->configuration.placement_aware);
  EXPECT_TRUE(quota.workload.queues->configuration.wait_for_pods_ready);
  EXPECT_DOUBLE_EQ(quota.workload.queues->configuration.wait_for_pods_ready_timeout_s, 600);
  EXPECT_EQ(quota.workload.queues->cluster_queues.size(), 2u);
  EXPECT_EQ(quota.generator->templates[0].spec.queue_name, "training");
  // Quota-only admission holds quota for jobs no node can start until waitForPodsReady evicts them;
  // placement-aware admission evicts nothing.
  Workload wq = quota.workload, wa = aware.workload;
  GoRand rng(42);
  const std::vector<WorkloadSpec> jobs = generate_jobs(*quota.generator, rng);
  wq.items.insert(wq.items.end(), jobs.begin(), jobs.end());
  wa.items.insert(wa.items.end(), jobs.begin(), jobs.end());
  SimOptions o;
  o.seed = 42;
  const SimResult rq = simulate(cluster, wq, o), ra = simulate(cluster, wa, o);
  int64_t evicted_q = 0, evicted_a = 0;
  for (const QueueResult& q : rq.queues) evicted_q += q.evictions;
  for (const QueueResult& q : ra.queues) evicted_a += q.evictions;
  EXPECT_GT(evicted_q, 0);
  EXPECT_EQ(evicted_a, 0);
}

}  // namespace
}  // namespace gpufleet::sim
