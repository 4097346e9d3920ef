// DaemonSets in the simulator: every node runs their pods from the moment it is Ready, they count
// against its allocatable (and the autoscalers' new-node estimates), and the Cluster Autoscaler's
// scale-down measures a GPU node by its GPUs only and never waits for them (scenario S12, part 1:
// kubernetes/autoscaler#1367).
#include <gtest/gtest.h>

#include "model/daemon_set.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/rules/cluster_autoscaler.h"
#include "support/sim_test_support.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::actions_at;
using testing::gpu_pool;
using testing::outcome;
using testing::run_least_allocated;

// A DaemonSet of one pod requesting `cpu_milli` (and 64 MiB), for every node.
DaemonSet daemon_set(std::string name, int64_t cpu_milli) {
  DaemonSet ds;
  ds.name = std::move(name);
  ds.namespace_name = "kube-system";
  ds.pod.cpu_milli = cpu_milli;
  ds.pod.memory_bytes = 64 * kBytesPerMib;
  ds.pod.labels = {{"app", ds.name}};
  add_daemon_pod_tolerations(ds.pod, false);
  return ds;
}

// S12 part 1: node g-0 (1 L4, 2 vCPU) runs DaemonSets requesting 1.2 vCPU (60% of its CPU) and no
// GPU pod for 15 min; threshold 50%, unneeded time 10 min. Its utilization is GPU only: 0/1000 = 0,
// so it is unneeded from the tick at 0 and removed at the tick at 600 s. The DaemonSet pods hold
// their CPU all along and do not keep the node (the node has no pod the drain would move).
TEST(SimDaemonSet, IdleGpuNodeWithDaemonSetsIsRemovedAfterTheUnneededTime) {
  sim::ClusterConfig c = testing::one_pool_cluster(gpu_pool({.name = "g", .cpu_milli = 2000, .memory_mib = 8192, .node_count = 1,
                                                             .min_nodes = 0, .max_nodes = 1}));
  c.autoscaler.enabled = true;
  c.autoscaler.utilization_threshold = 0.5;
  c.autoscaler.scale_down_unneeded_s = 600;
  // Two DaemonSets as in the report: the device plugin and a monitoring agent, 1.2 vCPU together.
  c.daemon_sets = {daemon_set("nvidia-device-plugin", 200), daemon_set("node-exporter", 1000)};
  sim::Workload w;
  w.horizon_s = 900;
  int64_t cpu_used_at_1 = -1, daemon_cpu_at_1 = -1, pods_at_1 = -1;
  const sim::SimResult r = run_least_allocated(
      c, w, {actions_at({{1, [&](sim::Fleet& f, double) {
                            cpu_used_at_1 = f.state().cpu_used_milli(0);
                            daemon_cpu_at_1 = f.daemon_cpu_milli(0);
                            pods_at_1 = static_cast<int64_t>(f.state().pods_on(0).size());
                            // GPU node: GPU only, 0 of 1000 milli-GPUs requested.
                            EXPECT_DOUBLE_EQ(sim::node_utilization(f.state(), 0), 0.0);
                          }}})});
  EXPECT_EQ(cpu_used_at_1, 1200);
  EXPECT_EQ(daemon_cpu_at_1, 1200);
  EXPECT_EQ(pods_at_1, 2);  // kube-system/nvidia-device-plugin-g-0, kube-system/node-exporter-g-0
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].node, "g-0");
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 600);
  EXPECT_EQ(r.nodes_scaled_down, 1);
}

// The same DaemonSets on a CPU node (no GPU, 2 vCPU): CA measures CPU and memory, and by default
// (--ignore-daemonsets-utilization false) counts the DaemonSet pods: 1200 / 2000 = 0.6, not below
// 0.5, so the node stays to the horizon. With ignoreDaemonSetsUtilization the requests and the
// allocatable both leave them out: (1200 - 1200) / (2000 - 1200) = 0, removed at 600 s.
TEST(SimDaemonSet, CpuNodeCountsDaemonSetsUnlessIgnored) {
  sim::ClusterConfig c = testing::one_pool_cluster(gpu_pool({.name = "c", .gpu_model = "", .gpus_per_node = 0, .cpu_milli = 2000,
                                                             .memory_mib = 8192, .node_count = 1, .min_nodes = 0, .max_nodes = 1}));
  c.autoscaler.enabled = true;
  c.daemon_sets = {daemon_set("agent", 1200)};
  sim::Workload w;
  w.horizon_s = 900;
  sim::SimResult r = run_least_allocated(c, w);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 900);
  EXPECT_EQ(r.nodes_scaled_down, 0);

  c.autoscaler.ignore_daemon_sets_utilization = true;
  r = run_least_allocated(c, w);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 600);
  EXPECT_EQ(r.nodes_scaled_down, 1);
}

// Nodes the autoscaler adds run the DaemonSets too, and its estimate counts them: 2 vCPU nodes with
// a 1.2 vCPU DaemonSet leave 0.8 vCPU. Job "small" (1 GPU, 0.5 vCPU, at 0) makes the pool grow: node
// p-0 is requested at the tick at 30 s, Ready at 210 s (provisioning 180 s) with the DaemonSet pod
// bound (1200 m) and then the job (500 m): 1700 m in use at 300 s. Job "big" (1 GPU, 1 vCPU) fits no
// node of the pool once its DaemonSet runs (1000 > 800), so no node is added for it and it never
// runs, although a bare node (2 vCPU, 1 GPU) would take it.
TEST(SimDaemonSet, NewNodesRunTheDaemonSetsAndTheEstimateCountsThem) {
  sim::ClusterConfig c = testing::one_pool_cluster(gpu_pool({.cpu_milli = 2000, .memory_mib = 8192, .max_nodes = 2}));
  c.autoscaler.enabled = true;
  c.daemon_sets = {daemon_set("agent", 1200)};
  sim::Workload w;
  w.horizon_s = 600;
  sim::WorkloadSpec small = testing::gpu_job("small", 0, 3600);
  small.cpu_milli = 500;
  sim::WorkloadSpec big = testing::gpu_job("big", 0, 3600);
  big.cpu_milli = 1000;
  w.items = {small, big};
  int64_t cpu_used_at_300 = -1;
  const sim::SimResult r = run_least_allocated(
      c, w, {actions_at({{300, [&](sim::Fleet& f, double) { cpu_used_at_300 = f.state().cpu_used_milli(0); }}})});
  EXPECT_EQ(cpu_used_at_300, 1700);
  EXPECT_EQ(r.nodes_scaled_up, 1);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].start_s, 30);
  EXPECT_EQ(outcome(r, "small").state, sim::UnitState::kRunning);
  EXPECT_NE(outcome(r, "big").state, sim::UnitState::kRunning);
  EXPECT_EQ(outcome(r, "big").starts, 0);
}

// A DaemonSet whose nodeSelector no pool node carries runs nowhere; the pool's nodes carry
// kubernetes.io/hostname = their name, so one pinned by hostname runs on that node only.
TEST(SimDaemonSet, NodeSelectorAndHostnameLabelChooseTheNodes) {
  sim::ClusterConfig c = testing::one_pool_cluster(gpu_pool({.cpu_milli = 2000, .memory_mib = 8192, .node_count = 2}));
  DaemonSet nowhere = daemon_set("nowhere", 100);
  nowhere.pod.constraints.node_selector = {{"role", "storage"}};
  DaemonSet pinned = daemon_set("pinned", 300);
  pinned.pod.constraints.node_selector = {{"kubernetes.io/hostname", "p-1"}};
  c.daemon_sets = {nowhere, pinned};
  sim::Workload w;
  w.horizon_s = 60;
  int64_t used0 = -1, used1 = -1;
  std::string hostname1;
  run_least_allocated(c, w, {actions_at({{1, [&](sim::Fleet& f, double) {
                                            used0 = f.state().cpu_used_milli(0);
                                            used1 = f.state().cpu_used_milli(1);
                                            if (const std::string* h = find_label(f.state().node(1).labels, "kubernetes.io/hostname"))
                                              hostname1 = *h;
                                          }}})});
  EXPECT_EQ(used0, 0);
  EXPECT_EQ(used1, 300);
  EXPECT_EQ(hostname1, "p-1");
}

// examples/daemonsets (docs/simulate.md): the same S12 node read from the pools file; g-0 goes at
// 600 s, billed 600 s x 0.80 USD/h.
TEST(SimDaemonSet, Example) {
  const std::string dir = std::string(GPUFLEET_SOURCE_DIR) + "/examples/daemonsets/";
  const sim::ClusterConfig c = io::read_sim_cluster_file(dir + "pools.yaml");
  ASSERT_EQ(c.daemon_sets.size(), 2u);
  const io::SimWorkloadFile w = io::read_sim_workload_file(dir + "idle.yaml", {"g"});
  const sim::SimResult r = run_least_allocated(c, w.workload);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].node, "g-0");
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 600);
  EXPECT_NEAR(r.cost_usd, 600 * 0.80 / 3600, 1e-12);
}

}  // namespace
}  // namespace gpufleet
