// The work estimate (inputs/sim/work_estimate.h) against the events 100 random valid workloads count
// when they run (SimResult::events_processed): an upper bound within 10x on every one. Seeded, so the
// same 100 workloads every run; the worst ratios are printed.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inputs/sim/work_estimate.h"
#include "model/resources.h"
#include "sim/simulator.h"
#include "util/go_rand.h"

namespace gpufleet::sim {
namespace {

// 1-3 pools of 1-8 one-model GPUs per node, 0-4 nodes at the start and a max of up to 12; 1-40 jobs
// of 1-4 pods and 0-4 GPUs, 30 s to 2 h long, arriving over the horizon; 0-3 services of 1-6
// replicas, with a rollout for some; a horizon of 10 min to 6 h; the Cluster Autoscaler on or off.
std::pair<ClusterConfig, Workload> random_case(GoRand& rng) {
  ClusterConfig c;
  const int32_t pools = 1 + static_cast<int32_t>(rng.intn(3));
  for (int32_t p = 0; p < pools; ++p) {
    SimPool sp;
    sp.pool.name = "p" + std::to_string(p);
    sp.pool.gpu_model = p % 2 == 0 ? "L4" : "H100-80GB";
    sp.pool.gpus_per_node = 1 + static_cast<int32_t>(rng.intn(8));
    sp.pool.cpu_milli = 64000;
    sp.pool.memory_bytes = int64_t{256} * 1024 * kBytesPerMib;
    sp.pool.max_nodes = 1 + static_cast<int32_t>(rng.intn(12));
    sp.pool.node_count = sp.pool.min_nodes = std::min<int32_t>(sp.pool.max_nodes, static_cast<int32_t>(rng.intn(5)));
    sp.pool.on_demand_usd_per_hour = 1 + static_cast<double>(rng.intn(30));
    sp.settings.provision_s = 60 + static_cast<double>(rng.intn(300));
    c.pools.push_back(sp);
  }
  c.autoscaler.enabled = rng.intn(4) != 0;
  Workload w;
  w.horizon_s = 600 + static_cast<double>(rng.intn(6 * 3600 - 600));
  const int32_t jobs = 1 + static_cast<int32_t>(rng.intn(40));
  for (int32_t j = 0; j < jobs; ++j) {
    WorkloadSpec s;
    s.name = "j" + std::to_string(j);
    s.pods = 1 + static_cast<int32_t>(rng.intn(4));
    s.num_gpu = static_cast<int32_t>(rng.intn(5));
    s.gpu_milli = s.num_gpu > 0 ? kGpuMilliPerGpu : 0;
    s.cpu_milli = 1000;
    s.duration_s = 30 + static_cast<double>(rng.intn(7200));
    s.arrival_s = static_cast<double>(rng.intn(static_cast<int64_t>(w.horizon_s)));
    w.items.push_back(s);
  }
  const int32_t services = static_cast<int32_t>(rng.intn(4));
  for (int32_t k = 0; k < services; ++k) {
    WorkloadSpec s;
    s.name = "s" + std::to_string(k);
    s.kind = WorkloadKind::kService;
    s.pods = 1 + static_cast<int32_t>(rng.intn(6));
    s.num_gpu = 1;
    s.gpu_milli = kGpuMilliPerGpu;
    s.cpu_milli = 1000;
    s.min_ready_s = static_cast<double>(rng.intn(120));
    w.items.push_back(s);
    if (rng.intn(2) == 0) w.rollouts.push_back({s.name, static_cast<double>(rng.intn(static_cast<int64_t>(w.horizon_s)))});
  }
  return {c, w};
}

TEST(WorkEstimate, IsAnUpperBoundWithinTenTimesOnRandomWorkloads) {
  GoRand rng(20261205);
  double worst_high = 0, worst_low = 1e300;
  for (int i = 0; i < 100; ++i) {
    SCOPED_TRACE(i);
    const auto [cluster, workload] = random_case(rng);
    SimOptions o;
    o.seed = static_cast<uint64_t>(i);
    const WorkEstimate e = estimate_work(cluster, workload, o);
    const SimResult r = simulate(cluster, workload, o);
    const double measured = static_cast<double>(r.events_processed);
    ASSERT_GT(measured, 0);
    const double ratio = e.events.total / measured;
    worst_high = std::max(worst_high, ratio);
    worst_low = std::min(worst_low, ratio);
    EXPECT_LE(measured, e.events.total);
    EXPECT_LE(e.events.total, 10 * measured);
  }
  std::printf("100 random workloads: estimate / measured events between %.2f and %.2f\n", worst_low, worst_high);
}

}  // namespace
}  // namespace gpufleet::sim
