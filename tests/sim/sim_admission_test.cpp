// Dedicated GPU nodes in the simulator: a GPU pool tainted nvidia.com/gpu:NoSchedule takes only the
// pods the ExtendedResourceToleration admission plugin gave a toleration (those that request GPUs);
// the others run on the CPU pool. Every expected time is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "model/resources.h"
#include "sim/simulator.h"

namespace gpufleet::sim {
namespace {

SimPool pool(std::string name, int32_t gpus, bool tainted) {
  SimPool p;
  p.pool.name = std::move(name);
  if (gpus > 0) p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 4000;
  p.pool.memory_bytes = 16LL * 1024 * kBytesPerMib;
  p.pool.node_count = 1;
  p.pool.min_nodes = 1;
  p.pool.max_nodes = 1;
  p.pool.on_demand_usd_per_hour = 1;
  if (tainted) p.pool.taints.push_back({std::string(kGpuResource), "", "NoSchedule"});
  return p;
}

WorkloadSpec job(std::string name, double arrival_s, int64_t cpu_milli, int32_t gpus) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.arrival_s = arrival_s;
  s.duration_s = 100;
  s.cpu_milli = cpu_milli;
  s.memory_bytes = 1024 * kBytesPerMib;
  s.num_gpu = gpus;
  s.gpu_milli = gpus > 0 ? kGpuMilliPerGpu : 0;
  return s;
}

// One L4 node (4 cores) and one CPU node (4 cores), static. `etl` (3 cores, no GPU) arrives at 0,
// `train` (2 cores, 1 GPU) at 1.
SimResult run(bool tainted, bool plugin) {
  ClusterConfig c;
  c.pools = {pool("gpu", 1, tainted), pool("cpu", 0, false)};
  c.autoscaler.enabled = false;
  c.extended_resource_toleration = plugin;
  Workload w;
  w.horizon_s = 400;
  w.items = {job("etl", 0, 3000, 0), job("train", 1, 2000, 1)};
  SimOptions o;
  o.policy = "gpufleet";
  o.seed = 42;
  return simulate(c, w, o);
}

TEST(SimAdmission, TaintedGpuNodesTakeOnlyGpuPods) {
  // Taint and plugin: etl cannot go to the tainted GPU node, so it runs on the CPU node (0 -> 100);
  // train tolerates the taint and starts on the GPU node at 1 (-> 101).
  const SimResult r = run(true, true);
  ASSERT_EQ(r.units.size(), 2u);
  EXPECT_DOUBLE_EQ(r.units[0].completion_s, 100);
  EXPECT_DOUBLE_EQ(r.units[1].completion_s, 101);
  EXPECT_EQ(r.pods_completed, 2);
}

TEST(SimAdmission, WithoutThePluginGpuPodsDoNotTolerateTheTaint) {
  // Taint, no plugin: train tolerates nothing, and the CPU node has no GPU: it never runs.
  const SimResult r = run(true, false);
  ASSERT_EQ(r.units.size(), 2u);
  EXPECT_DOUBLE_EQ(r.units[0].completion_s, 100);
  EXPECT_LT(r.units[1].completion_s, 0);
  EXPECT_EQ(r.pods_completed, 1);
}

}  // namespace
}  // namespace gpufleet::sim
