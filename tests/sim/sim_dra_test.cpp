// Dynamic Resource Allocation in the simulator (docs/dra.md, "simulate"): pods naming a
// ResourceClaimTemplate get a claim each, named as the resourceclaim controller names it, allocated by
// the DynamicResources plugin when placed and deallocated when they end; a pool's ResourceSlice
// template gives every node its devices, the autoscaler's estimate included; chargeback by device.
// Every expected value is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/controllers/controller.h"
#include "sim/rules/cluster_autoscaler.h"
#include "sim/simulation.h"
#include "support/expect_input_error.h"
#include "support/sim_test_support.h"
#include "support/test_support.h"

namespace gpufleet::sim {
namespace {

using Lines = std::vector<std::string>;

// Every pod bound with its claims at time t: "<node> <pod> <claim>: <device>, ...".
Lines claim_lines(const Fleet& fleet) {
  Lines lines;
  for (NodeId n = 0; n < fleet.node_count(); ++n) {
    if (fleet.phase(n) == NodePhase::kAbsent) continue;
    for (const gpufleet::BoundPod& b : fleet.state().pods_on(n))
      for (const DraClaimAllocation& c : b.claims) {
        std::string line = fleet.name(n) + " " + b.pod.name + " " + c.claim + ":";
        for (const DraDeviceResult& d : c.allocation.devices) line += " " + dra_device_id(d.driver, d.pool, d.device);
        lines.push_back(line);
      }
  }
  return lines;
}

using testing::outcome;

struct DraRun {
  SimResult result;
  std::map<double, Lines> seen;
};

DraRun run(const ClusterConfig& c, const Workload& w, std::vector<double> times) {
  DraRun out;
  SimOptions o;
  o.seed = 42;
  Simulation sim(c, w, o);
  testing::At::Actions actions;
  for (double t : times) actions.push_back({t, [&out](Fleet& fleet, double at) { out.seen[at] = claim_lines(fleet); }});
  sim.add_controller(testing::actions_at(std::move(actions)));
  out.result = sim.run();
  return out;
}

std::vector<std::string> pool_names(const ClusterConfig& c) {
  std::vector<std::string> names;
  for (const SimPool& p : c.pools) names.push_back(p.pool.name);
  return names;
}

const std::filesystem::path kExamples = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "dra";

// examples/dra/sim-pools.yaml and sim-workload.yaml, as docs/dra.md works them by hand. One node
// a100-dra-0 (32 CPUs, 256 GiB, one A100-80GB published by DRA, 4.00 USD/h), static, 3 h.
//  - train (pod id 0) takes gpu-0 at 0 (its claim train-0-gpu-bbbbb: the suffix is pod id 0 in the
//    alphabet bcdf...), to 3600. Every MIG placement needs slices gpu-0 holds.
//  - eval (ids 1, 2) arrives at 600 and waits; at 3600 its pods take the 3g.40gb at slices 0 and 4
//    (eval-0-mig-bbbbc, eval-1-mig-bbbbd), to 5400.
//  - train-2 (id 3) arrives at 4000 and waits; at 5400 it takes gpu-0 again, train's device, to 9000.
// Claims: 4 allocated, 4 deallocated, none left. The node's pool is a100-<node> (the template's pool
// name with the node's name as suffix).
TEST(SimDra, ExampleClaimsAllocatedReleasedAndReused) {
  const ClusterConfig c = io::read_sim_cluster_file((kExamples / "sim-pools.yaml").string());
  ASSERT_EQ(c.pools.size(), 1u);
  ASSERT_EQ(c.pools[0].settings.resource_slices.size(), 1u);
  EXPECT_TRUE(c.dra.slices.empty());  // the template is the pool's, not a slice of its own
  const io::SimWorkloadFile f = io::read_sim_workload_file((kExamples / "sim-workload.yaml").string(), pool_names(c));
  const DraRun r = run(c, f.workload, {1000, 4000, 6000, 9500});
  const std::string pool = "gpu.nvidia.com/a100-a100-dra-0/";
  EXPECT_EQ(r.seen.at(1000), (Lines{"a100-dra-0 train-0 research/train-0-gpu-bbbbb: " + pool + "gpu-0"}));
  EXPECT_EQ(r.seen.at(4000), (Lines{"a100-dra-0 eval-0 team-a/eval-0-mig-bbbbc: " + pool + "gpu-0-mig-3g.40gb-0",
                                    "a100-dra-0 eval-1 team-a/eval-1-mig-bbbbd: " + pool + "gpu-0-mig-3g.40gb-4"}));
  EXPECT_EQ(r.seen.at(6000), (Lines{"a100-dra-0 train-2-0 research/train-2-0-gpu-bbbbf: " + pool + "gpu-0"}));
  EXPECT_TRUE(r.seen.at(9500).empty());
  EXPECT_DOUBLE_EQ(outcome(r.result, "train").completion_s, 3600);
  EXPECT_DOUBLE_EQ(outcome(r.result, "eval").completion_s, 5400);
  EXPECT_DOUBLE_EQ(outcome(r.result, "train-2").completion_s, 9000);
  EXPECT_EQ(r.result.pods_completed, 4);
  EXPECT_TRUE(r.result.dra_report);
  EXPECT_EQ(r.result.dra_claims_allocated, 4);
  EXPECT_EQ(r.result.dra_claims_deallocated, 4);
  EXPECT_EQ(r.result.dra_claims_allocated_at_end, 0);
  // Chargeback by device. The node price splits by OpenCost's rates: CPU 32 x 0.031611 = 1.011552,
  // memory 256 x 0.004237 = 1.084672, GPU 1 x 0.95, total 3.046224. A pod pays 4.00 USD/h x
  // (CPU share x its CPUs/32 + memory share x its memory/256Gi + GPU share x its devices' GPU share).
  //  - train, train-2: 8 CPUs, 64 Gi, gpu-0 = 1 GPU: (1.011552 x 0.25 + 1.084672 x 0.25 + 0.95) /
  //    3.046224 = 0.4838961, x 4 USD x 1 h = 1.9355845 each; research 3.8711690.
  //  - eval pods: 4 CPUs, 32 Gi, a 3g.40gb = 40Gi of the GPU's 80Gi memory counter = 0.5 GPU:
  //    (1.011552 x 0.125 + 1.084672 x 0.125 + 0.475) / 3.046224 = 0.2419481, x 4 x 0.5 h = 0.4838961
  //    each; team-a 0.9677923.
  const double train = (1.011552 * 0.25 + 1.084672 * 0.25 + 0.95) / 3.046224 * 4.0;
  const double eval = (1.011552 * 0.125 + 1.084672 * 0.125 + 0.475) / 3.046224 * 4.0 * 0.5;
  EXPECT_NEAR(r.result.chargeback.at("research"), 2 * train, 1e-9);
  EXPECT_NEAR(r.result.chargeback.at("team-a"), 2 * eval, 1e-9);
  EXPECT_NEAR(r.result.chargeback.at("research"), 3.8711690, 1e-6);
  EXPECT_NEAR(r.result.cost_usd, 12.0, 1e-9);  // 3 h x 4.00
}

// The Cluster Autoscaler's estimate allocates the pods' claims on its template node's slices: two
// pods of one whole A100 each need two one-GPU nodes (by CPU and memory alone one node would hold
// both). Pool from 0 nodes, max 3; both arrive at 0; first loop past the 30 s delay at 30 s; Ready
// 180 s later, at 210 s.
TEST(SimDra, AutoscalerEstimateCountsDraDevices) {
  ClusterConfig c = io::read_sim_cluster_file((kExamples / "sim-pools.yaml").string());
  c.autoscaler.enabled = true;
  c.pools[0].pool.node_count = 0;
  c.pools[0].pool.min_nodes = 0;
  c.pools[0].pool.max_nodes = 3;
  const io::SimWorkloadFile f = io::read_sim_workload_file((kExamples / "sim-workload.yaml").string(), pool_names(c));
  Workload w = f.workload;
  w.items.resize(1);  // train: 1 pod; two of them
  w.items[0].pods = 2;
  const DraRun r = run(c, w, {300});
  EXPECT_EQ(r.result.nodes_scaled_up, 2);
  EXPECT_EQ(r.seen.at(300), (Lines{"a100-dra-0 train-0 research/train-0-gpu-bbbbb: gpu.nvidia.com/a100-a100-dra-0/gpu-0",
                                   "a100-dra-1 train-1 research/train-1-gpu-bbbbc: gpu.nvidia.com/a100-a100-dra-1/gpu-0"}));
  EXPECT_DOUBLE_EQ(outcome(r.result, "train").completion_s, 210 + 3600);
}

// A shared ResourceClaim (resourceClaimName) is allocated by its first pod and stays allocated while
// any pod holds it: a (0 to 3600 s) allocates shared-gpu = gpu-0; b (from 600 s, 7200 s) uses it too;
// c's own claim (from 600 s) needs gpu-0 and waits until b, the claim's last pod, ends at 7800 s, then
// runs to 8400 s. Claims: shared-gpu and c's, 2 allocated, 2 deallocated. Chargeback: a shared claim's
// devices are no pod's, so a and b pay CPU and memory only, (1.011552 + 1.084672) x 0.25 / 3.046224 x
// 4.00 = 0.688140 USD/h, for 1 h and 2 h; c pays its whole GPU for 600 s: 0.4838961 x 4.00 / 6.
TEST(SimDra, SharedClaimStaysAllocatedWhileAnyPodHoldsIt) {
  std::ifstream in(kExamples / "sim-pools.yaml");
  std::stringstream pools;
  pools << in.rdbuf() << R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu, namespace: research}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
)Y";
  const ClusterConfig c = io::parse_sim_cluster_text(pools.str(), "pools.yaml");
  const std::string job = "  namespace: research\n  cpu: \"8\"\n  memory: 64Gi\n";
  const std::string workload = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 10800\njobs:\n- name: a\n" + job +
                               "  durationSeconds: 3600\n  resourceClaims: [{name: g, resourceClaimName: shared-gpu}]\n- name: b\n" + job +
                               "  arrivalSeconds: 600\n  durationSeconds: 7200\n  resourceClaims: [{name: g, resourceClaimName: shared-gpu}]\n"
                               "- name: c\n" + job +
                               "  arrivalSeconds: 600\n  durationSeconds: 600\n  resourceClaims: [{name: g, resourceClaimTemplateName: whole-a100}]\n";
  const io::SimWorkloadFile f = io::parse_sim_workload_text(workload, "w.yaml", pool_names(c));
  const DraRun r = run(c, f.workload, {1000, 7000});
  const std::string gpu0 = "gpu.nvidia.com/a100-a100-dra-0/gpu-0";
  EXPECT_EQ(r.seen.at(1000), (Lines{"a100-dra-0 a-0 research/shared-gpu: " + gpu0, "a100-dra-0 b-0 research/shared-gpu: " + gpu0}));
  EXPECT_EQ(r.seen.at(7000), (Lines{"a100-dra-0 b-0 research/shared-gpu: " + gpu0}));
  EXPECT_DOUBLE_EQ(outcome(r.result, "c").completion_s, 8400);
  EXPECT_EQ(r.result.dra_claims_allocated, 2);
  EXPECT_EQ(r.result.dra_claims_deallocated, 2);
  const double cpu_memory = (1.011552 + 1.084672) * 0.25 / 3.046224 * 4.0;
  const double whole = (1.011552 * 0.25 + 1.084672 * 0.25 + 0.95) / 3.046224 * 4.0;
  EXPECT_NEAR(r.result.chargeback.at("research"), cpu_memory * 3 + whole / 6, 1e-9);
}

// A gang rolled back counts no claim. examples/dra/sim-pools.yaml's node has one A100 published as
// gpu-0 (all 8 memory slices) and two 3g.40gb placements (slices 0-3, 4-7). train (whole GPU) runs
// 0..3600. The gang `trio` (3 pods, a 3g.40gb each, from 600) cannot start before 3600 (no placement
// is free: its first pod fails, nothing is bound); from 3600 its pods 0 and 1 take the two
// placements, pod 2 finds none and the gang is undone, each time it is tried, to the horizon (3 h).
// Claims of pods that bound: train's only, allocated once and deallocated at 3600; none at the end.
// (Counting the undone binds, as before, gave at least 3 allocated and 3 deallocated.)
TEST(SimDra, GangRolledBackAllocatesNoClaim) {
  std::ifstream in(kExamples / "sim-pools.yaml");
  std::stringstream pools;
  pools << in.rdbuf();
  const ClusterConfig c = io::parse_sim_cluster_text(pools.str(), "pools.yaml");
  const std::string workload = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 10800\njobs:\n"
                               "- name: train\n  namespace: research\n  cpu: \"8\"\n  memory: 64Gi\n  durationSeconds: 3600\n"
                               "  resourceClaims: [{name: gpu, resourceClaimTemplateName: whole-a100}]\n"
                               "- name: trio\n  namespace: team-a\n  arrivalSeconds: 600\n  pods: 3\n  cpu: \"4\"\n  memory: 32Gi\n"
                               "  durationSeconds: 1800\n  resourceClaims: [{name: mig, resourceClaimTemplateName: mig-3g}]\n";
  const io::SimWorkloadFile f = io::parse_sim_workload_text(workload, "w.yaml", pool_names(c));
  const DraRun r = run(c, f.workload, {4000});
  EXPECT_EQ(r.seen.at(4000), Lines{});  // the gang holds nothing between its tries
  EXPECT_EQ(r.result.dra_claims_allocated, 1);
  EXPECT_EQ(r.result.dra_claims_deallocated, 1);
  EXPECT_EQ(r.result.dra_claims_allocated_at_end, 0);
}

// The pools file's checks: a pool's resourceSlices names a slice of the file, node-local.
TEST(SimDra, PoolSlicesAreChecked) {
  const std::string pools = R"Y(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- {name: p, gpu: {model: A100-80GB, count: 1}, cpu: "8", memory: 64Gi, nodes: 1, prices: {onDemand: 1}}
---
apiVersion: sim.gpufleet.io/v1
kind: Autoscaling
pools:
  p: {resourceSlices: [nope]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: everywhere}
spec:
  driver: gpu.nvidia.com
  pool: {name: x, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices: [{name: d}]
)Y";
  testing::expect_input_error([&] { io::parse_sim_cluster_text(pools, "p.yaml"); }, "p.yaml", 9, 24, "pools.p.resourceSlices[0]",
                              "no ResourceSlice 'nope' in this file");
  std::string not_local = pools;
  not_local.replace(not_local.find("[nope]"), 6, "[everywhere]");
  testing::expect_input_error([&] { io::parse_sim_cluster_text(not_local, "p.yaml"); }, "p.yaml", 9, 24, "pools.p.resourceSlices[0]",
                              "ResourceSlice 'everywhere' is not node-local");
}

// The Cluster Autoscaler's scale-down utilization of a DRA node is its pools' (model/dra_utilization.h),
// not CPU and memory. examples/dra/sim-pools.yaml's pool a100-dra (one node, 32 CPUs, the A100 with its
// MIG placements) made autoscaled (min 0) next to a static CPU pool `cpu` (one node, 32 CPUs).
// Workload: `filler` (12 CPUs, pools [cpu], 0..1000 s) and the service `web` (1 replica, 24 CPUs, no
// claim): web only fits a100-dra-0, where it takes 24 of 32 CPUs (75%). Autoscaler ticks every 10 s
// from 0, unneeded time 600 s, recheck 300 s, threshold 0.5.
//  - DRA rule: a100-dra-0's pool has no allocated device: 0 < 0.5, unneeded from 0. At 600 web cannot
//    move (cpu-0 has 20 CPUs free): recheck at 900, unneeded again from 900; filler ends at 1000;
//    at 1500 web moves to cpu-0 and a100-dra-0 is removed: billed 0..1500 s.
//  - With the service `infer` (pools [a100-dra], a 3g.40gb): its placement consumes memorySlice0..3 of
//    the GPU's counter set, 1 of 1 each: the pool is 100% used (half the GPU's memory, 40Gi of 80Gi,
//    would be 50%): the node stays to the horizon (3600 s).
TEST(SimDra, ScaleDownMeasuresDraPools) {
  std::ifstream in(kExamples / "sim-pools.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string pools = text.str();
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = pools.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    pools.replace(at, from.size(), to);
  };
  replace("  min: 1\n  max: 1\n  prices: {onDemand: 4.00}\n",
          "  min: 0\n  max: 1\n  prices: {onDemand: 4.00}\n"
          "- {name: cpu, cpu: \"32\", memory: 64Gi, nodes: 1, min: 1, max: 1, prices: {onDemand: 1.00}}\n");
  replace("autoscaler: {enabled: false}", "autoscaler: {enabled: true}");
  const ClusterConfig c = io::parse_sim_cluster_text(pools, "pools.yaml");
  const std::string base = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\njobs:\n"
                           "- {name: filler, pools: [cpu], cpu: \"12\", memory: 8Gi, durationSeconds: 1000}\nservices:\n"
                           "- {name: web, replicas: 1, cpu: \"24\", memory: 8Gi}\n";
  const auto dra_node_end = [](const SimResult& r) {
    for (const NodeLifetime& l : r.nodes)
      if (l.node == "a100-dra-0") return l.end_s;
    return -1.0;
  };
  {
    const io::SimWorkloadFile f = io::parse_sim_workload_text(base, "w.yaml", pool_names(c));
    const SimResult r = run(c, f.workload, {}).result;
    EXPECT_EQ(r.nodes_scaled_down, 1);
    EXPECT_DOUBLE_EQ(dra_node_end(r), 1500);
  }
  {
    const std::string with_infer = base + "- {name: infer, namespace: team-a, pools: [a100-dra], replicas: 1, cpu: \"1\", memory: 1Gi, "
                                          "resourceClaims: [{name: mig, resourceClaimTemplateName: mig-3g}]}\n";
    const io::SimWorkloadFile f = io::parse_sim_workload_text(with_infer, "w.yaml", pool_names(c));
    const SimResult r = run(c, f.workload, {}).result;
    EXPECT_EQ(r.nodes_scaled_down, 0);
    EXPECT_DOUBLE_EQ(dra_node_end(r), 3600);
  }
}

// node_utilization's order (cluster-autoscaler simulator/utilization/info.go Calculate): a node with
// device-plugin GPUs is measured by them even when it also publishes ResourceSlices; a node with
// node-local slices by its pools; otherwise by CPU and memory. dp: 2 nvidia.com/gpu, one held, and a
// DRA channel pool (1 device) whose device the same pod holds: GPU rule, 1/2 (its pool would be 1/1).
// dra: 8 CPUs, a pod of 6 with no claim, a pool of 2 devices none held: 0 (CPU would be 6/8 = 0.75,
// as without the slices index).
TEST(SimDra, NodeUtilizationRuleOrder) {
  auto catalog = std::make_shared<DraCatalog>();
  const auto local = [](const std::string& node, std::vector<std::string> devices) {
    ResourceSlice s;
    s.name = node;
    s.driver = "compute-domain.nvidia.com";
    s.pool = node;
    s.node_name = node;
    for (const std::string& d : devices) {
      s.devices.emplace_back();
      s.devices.back().name = d;
    }
    return s;
  };
  catalog->slices = {local("dp", {"channel-0"}), local("dra", {"d0", "d1"})};
  ClusterState state({gpufleet::testing::make_node("dp", 8000, 8192, 2), gpufleet::testing::make_node("dra", 8000, 8192, 0)});
  state.set_dra_catalog(catalog);
  const DraNodeSlices slices(*catalog);
  DeviceAssignment on_dp;
  on_dp.gpus = {0};
  DraAllocation channel;
  channel.devices = {{"channel", "compute-domain.nvidia.com", "dp", "channel-0"}};
  on_dp.claims = {{"default/a-channel", channel}};
  state.allocate(0, gpufleet::testing::make_pod("a", 1000, 1024, 1, 1000), on_dp);
  state.allocate(1, gpufleet::testing::make_pod("b", 6000, 1024, 0, 0), DeviceAssignment{});
  EXPECT_DOUBLE_EQ(node_utilization(state, 0, 0, 0, &slices), 0.5);
  EXPECT_DOUBLE_EQ(node_utilization(state, 1, 0, 0, &slices), 0.0);
  EXPECT_DOUBLE_EQ(node_utilization(state, 1), 0.75);
}

// A DeviceTaintRule's pool in simulate: the pool as the pools file writes it (a100) reaches every
// node's copy (a100-<node>), as does the copy's own name; another pool reaches none. gpu-0 tainted
// NoSchedule keeps train and train-2 (whole gpu-0) pending to the horizon; eval's two 3g.40gb
// placements are other devices and run (2 claims allocated, 2 pods completed).
TEST(SimDra, DeviceTaintRulePoolMatchesThePoolAsWrittenAndItsCopies) {
  const io::SimWorkloadFile f = io::read_sim_workload_file((kExamples / "sim-workload.yaml").string(), {"a100-dra"});
  for (const auto& [pool, completed] : std::vector<std::pair<std::string, int>>{{"a100", 2}, {"a100-a100-dra-0", 2}, {"other", 4}}) {
    std::ifstream in(kExamples / "sim-pools.yaml");
    std::stringstream pools;
    pools << in.rdbuf() << "---\napiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: drain}\nspec:\n"
          << "  deviceSelector: {driver: gpu.nvidia.com, pool: " << pool << ", device: gpu-0}\n"
          << "  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}\n";
    const ClusterConfig c = io::parse_sim_cluster_text(pools.str(), "pools.yaml");
    const DraRun r = run(c, f.workload, {1000});
    EXPECT_EQ(r.result.pods_completed, completed) << pool;
    EXPECT_EQ(r.result.dra_claims_allocated, completed) << pool;
  }
}

}  // namespace
}  // namespace gpufleet::sim
