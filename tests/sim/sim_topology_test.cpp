// The simulator's topology: pools with NVLink-domain labels, jobs with required / preferred
// topology, the slowdown of jobs split across domains and its GPU-hours. Expected values by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "model/node_pool.h"
#include "model/resources.h"
#include "sim/simulator.h"

namespace gpufleet::sim {
namespace {

// 4 nodes x 8 L4 GPUs, two per NVLink domain: h100-0 = nodes 0, 1; h100-1 = nodes 2, 3. Static.
ClusterConfig four_nodes_two_cliques() {
  SimPool p;
  p.pool.name = "h100";
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = 8;
  p.pool.cpu_milli = 64000;
  p.pool.memory_bytes = 512 * 1024 * kBytesPerMib;
  p.pool.node_count = p.pool.min_nodes = p.pool.max_nodes = 4;
  p.pool.on_demand_usd_per_hour = 1;
  p.pool.topology_domains = {{"nvidia.com/gpu.clique", 2}};
  ClusterConfig c;
  c.pools = {p};
  c.autoscaler.enabled = false;
  return c;
}

WorkloadSpec job(std::string name, int32_t pods, double duration_s) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.pods = pods;
  s.num_gpu = 8;
  s.gpu_milli = 1000;
  s.duration_s = duration_s;
  return s;
}

const UnitOutcome& unit(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

// a (1 pod) takes node 0; b (2 pods) then goes to nodes 1 and 2 under mostallocated (node 1: the
// only other node with b's first pod; node 2: the first of the two empty ones), across both cliques.
Workload split_prone(queue::TopologyRequest::Mode mode) {
  Workload w;
  w.horizon_s = 10000;
  w.items = {job("a", 1, 5000), job("b", 2, 1000)};
  w.items[1].topology.mode = mode;
  w.items[1].topology.level = "nvidia.com/gpu.clique";
  w.topology.levels = {"nvidia.com/gpu.clique", "kubernetes.io/hostname"};
  w.topology.slowdown = {0.5, 0.0};
  return w;
}

SimOptions opts() {
  SimOptions o;
  o.policy = "mostallocated";
  o.seed = 1;
  return o;
}

TEST(SimTopology, SplitJobRunsSlowerAndCountsItsGpuHours) {
  const SimResult r = simulate(four_nodes_two_cliques(), split_prone(queue::TopologyRequest::Mode::kNone), opts());
  // b spans two cliques: 1000 s x 1.5 = 1500 s; the slowdown's GPU time is 16 GPUs x 500 s.
  EXPECT_DOUBLE_EQ(unit(r, "b").completion_s, 1500);
  EXPECT_EQ(r.job_starts, 2);
  EXPECT_EQ(r.split_job_starts, 1);
  EXPECT_NEAR(r.topology_slowdown_gpu_hours, 16 * 500 / 3600.0, 1e-9);
}

TEST(SimTopology, RequiredLevelKeepsTheJobInOneDomain) {
  // Clique h100-0 has 8 GPUs free (node 1), h100-1 has 16: only h100-1 can hold b's 16 GPUs.
  const SimResult r = simulate(four_nodes_two_cliques(), split_prone(queue::TopologyRequest::Mode::kRequired), opts());
  EXPECT_DOUBLE_EQ(unit(r, "b").completion_s, 1000);
  EXPECT_EQ(r.split_job_starts, 0);
  EXPECT_DOUBLE_EQ(r.topology_slowdown_gpu_hours, 0);
}

TEST(SimTopology, IgnoringRequestsIsTheBaseline) {
  Workload w = split_prone(queue::TopologyRequest::Mode::kRequired);
  w.topology.aware = false;
  const SimResult r = simulate(four_nodes_two_cliques(), w, opts());
  EXPECT_DOUBLE_EQ(unit(r, "b").completion_s, 1500);
  EXPECT_EQ(r.split_job_starts, 1);
}

TEST(SimTopology, RequiredLevelWithNoRoomWaits) {
  // c (3 pods, 24 GPUs) needs more than one clique holds (16): it never starts; with preferred it
  // falls back to anywhere and starts at once across both cliques.
  Workload w = split_prone(queue::TopologyRequest::Mode::kNone);
  w.items = {job("c", 3, 1000)};
  w.items[0].topology = {queue::TopologyRequest::Mode::kRequired, "nvidia.com/gpu.clique", "", 0};
  SimResult r = simulate(four_nodes_two_cliques(), w, opts());
  EXPECT_EQ(unit(r, "c").state, UnitState::kPending);
  w.items[0].topology.mode = queue::TopologyRequest::Mode::kPreferred;
  r = simulate(four_nodes_two_cliques(), w, opts());
  EXPECT_DOUBLE_EQ(unit(r, "c").completion_s, 1500);
  EXPECT_EQ(r.split_job_starts, 1);
}

}  // namespace
}  // namespace gpufleet::sim

namespace gpufleet::sim {
namespace {

TEST(SimTopology, ExamplesRead) {
  const auto path = [](const char* name) { return std::string(GPUFLEET_SOURCE_DIR "/examples/topology/") + name; };
  const ClusterConfig cluster = io::read_sim_cluster_file(path("pools.yaml"));
  ASSERT_EQ(cluster.pools.size(), 1u);
  EXPECT_FALSE(cluster.autoscaler.enabled);
  const NodePool& p = cluster.pools[0].pool;
  EXPECT_EQ(p.topology_domains, (std::vector<std::pair<std::string, int32_t>>{{"example.com/rack", 8}, {"nvidia.com/gpu.clique", 4}}));
  // Node 13: rack 13 / 8 = 1, clique 13 / 4 = 3.
  Labels labels;
  set_topology_labels(p, 13, labels);
  EXPECT_EQ(labels, (Labels{{"example.com/rack", "h100-1"}, {"nvidia.com/gpu.clique", "h100-3"}}));
  const io::SimWorkloadFile aware = io::read_sim_workload_file(path("week-aware.yaml"), {"h100"});
  const io::SimWorkloadFile ignore = io::read_sim_workload_file(path("week-ignore.yaml"), {"h100"});
  EXPECT_TRUE(aware.workload.topology.aware);
  EXPECT_FALSE(ignore.workload.topology.aware);
  EXPECT_EQ(aware.workload.topology.slowdown, (std::vector<double>{0.1, 0.4, 0.0}));
  ASSERT_TRUE(aware.generator.has_value());
  EXPECT_EQ(aware.generator->templates[2].spec.topology.level, "nvidia.com/gpu.clique");
  EXPECT_EQ(aware.generator->templates[2].spec.topology.mode, queue::TopologyRequest::Mode::kPreferred);
}

}  // namespace
}  // namespace gpufleet::sim
