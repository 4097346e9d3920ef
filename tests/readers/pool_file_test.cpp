// Node pools: expand_pool (model), the pool-file reader (readers/k8s/pool_file.h) and the runnable examples/.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/expect_input_error.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/pool_file.h"
#include "model/node_pool.h"
#include "support/test_support.h"
#include "util/input_error.h"

namespace gpufleet {
namespace {

using io::parse_pool_text;

// A valid one-pool file; lines are 1-based as in error positions.
//  1 apiVersion: gpufleet.io/v1
//  2 kind: NodePoolSet
//  3 pools:
//  4 - name: a
//  5   gpu: {model: L4, count: 1}
//  6   cpu: "4"
//  7   memory: 16Gi
//  8   nodes: 2
//  9   prices: {onDemand: 0.8}
const std::vector<std::string> kBase = {
    "apiVersion: gpufleet.io/v1", "kind: NodePoolSet", "pools:", "- name: a", "  gpu: {model: L4, count: 1}",
    "  cpu: \"4\"", "  memory: 16Gi", "  nodes: 2", "  prices: {onDemand: 0.8}"};

// kBase with line `line` (1-based) replaced by `text` (which may span several lines); line 10 appends.
std::string edit(int line, const std::string& text) {
  std::string out;
  for (int i = 1; i <= static_cast<int>(kBase.size()) + 1; ++i) {
    if (i == line) {
      out += text + "\n";
    } else if (i <= static_cast<int>(kBase.size())) {
      out += kBase[i - 1] + "\n";
    }
  }
  return out;
}

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { parse_pool_text(text, "pools.yaml"); }, "pools.yaml", line, column, field, fragment);
}

const std::string* label(const Node& n, const std::string& key) { return find_label(n.labels, key); }

// ----------------------------------------------------------------------------------------- expand

NodePool l4_pool(int32_t nodes) {
  NodePool p;
  p.name = "inf";
  p.instance_type = "g6.xlarge";
  p.gpu_model = "NVIDIA-L4";  // a product label resolves to the canonical name
  p.gpus_per_node = 1;
  p.cpu_milli = 4000;
  p.memory_bytes = 16384;
  p.node_count = nodes;
  p.min_nodes = 0;
  p.max_nodes = 20;
  p.labels = {{"workload-type", "inference"}};
  p.taints = {{"workload-type", "inference", "NoSchedule"}};
  p.on_demand_usd_per_hour = 0.8048;
  return p;
}

TEST(NodePoolExpand, NamesLabelsAndTaints) {
  const std::vector<Node> nodes = expand_pool(l4_pool(3));
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "inf-0");
  EXPECT_EQ(nodes[2].name, "inf-2");
  const Node& n = nodes[1];
  EXPECT_EQ(n.gpu_model, "L4");
  EXPECT_EQ(n.gpu_count, 1);
  EXPECT_EQ(n.cpu_milli, 4000);
  EXPECT_EQ(n.memory_bytes, 16384);
  EXPECT_EQ(n.max_pods, 110);
  ASSERT_NE(label(n, "workload-type"), nullptr);
  EXPECT_EQ(*label(n, "workload-type"), "inference");
  EXPECT_EQ(*label(n, "nvidia.com/gpu.product"), "NVIDIA-L4");
  EXPECT_EQ(*label(n, "nvidia.com/gpu.count"), "1");
  EXPECT_EQ(*label(n, "node.kubernetes.io/instance-type"), "g6.xlarge");
  EXPECT_EQ(*label(n, "gpufleet.io/pool"), "inf");
  EXPECT_EQ(label(n, "nvidia.com/gpu.replicas"), nullptr);
  ASSERT_EQ(n.taints.size(), 1u);
  EXPECT_EQ(n.taints[0].key, "workload-type");
  EXPECT_EQ(n.taints[0].value, "inference");
  EXPECT_EQ(n.taints[0].effect, "NoSchedule");
}

TEST(NodePoolExpand, ZeroPaddingFollowsTheLastIndex) {
  EXPECT_TRUE(expand_pool(l4_pool(0)).empty());
  EXPECT_EQ(expand_pool(l4_pool(1))[0].name, "inf-0");
  EXPECT_EQ(expand_pool(l4_pool(10)).back().name, "inf-9");  // indices 0..9: one digit
  const auto eleven = expand_pool(l4_pool(11));
  EXPECT_EQ(eleven.front().name, "inf-00");
  EXPECT_EQ(eleven.back().name, "inf-10");
}

TEST(NodePoolExpand, CpuOnlyAndTimeSlicedPools) {
  NodePool cpu;
  cpu.name = "system";
  cpu.cpu_milli = 2000;
  cpu.memory_bytes = 8192;
  cpu.node_count = cpu.min_nodes = cpu.max_nodes = 2;
  const auto nodes = expand_pool(cpu);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].gpu_count, 0);
  EXPECT_EQ(nodes[0].gpu_model, "");
  EXPECT_EQ(label(nodes[0], "nvidia.com/gpu.product"), nullptr);
  EXPECT_EQ(label(nodes[0], "node.kubernetes.io/instance-type"), nullptr);
  EXPECT_EQ(*label(nodes[0], "gpufleet.io/pool"), "system");

  NodePool ts = l4_pool(1);
  ts.time_slicing_replicas = 4;
  const Node sliced = expand_pool(ts)[0];
  EXPECT_EQ(*label(sliced, "nvidia.com/gpu.replicas"), "4");
  // The device plugin's defaults: replicas advertised as nvidia.com/gpu, no failRequestsGreaterThanOne.
  ASSERT_TRUE(sliced.time_slicing);
  EXPECT_EQ(*sliced.time_slicing, (TimeSlicing{4, false, false}));
  EXPECT_TRUE(sliced.mig.empty());
  EXPECT_TRUE(sliced.has_gpu_sharing());
  EXPECT_FALSE(expand_pool(l4_pool(1))[0].has_gpu_sharing());
  EXPECT_FALSE(expand_pool(l4_pool(1))[0].time_slicing);
}

TEST(NodePoolExpand, MigPoolsGetTheLayoutOnEveryGpu) {
  NodePool p = l4_pool(2);
  p.gpu_model = "H100-80GB";
  p.gpus_per_node = 2;
  p.mig_devices = std::map<std::string, int>{{"3g.40gb", 1}, {"4g.40gb", 1}};
  const auto nodes = expand_pool(p);
  ASSERT_EQ(nodes.size(), 2u);
  for (const Node& n : nodes) {
    ASSERT_EQ(n.mig.size(), 2u);
    for (const GpuMig& g : n.mig) {
      EXPECT_TRUE(g.enabled);
      // 4g only starts at 0, so the 3g goes to 4.
      EXPECT_EQ(g.instances, (std::vector<MigInstance>{{"4g.40gb", 0}, {"3g.40gb", 4}}));
    }
    EXPECT_FALSE(n.time_slicing);
  }
  p.mig_devices = std::map<std::string, int>{{"1g.10gb", 7}};
  EXPECT_EQ(expand_pool(p)[0].mig[1].instances.size(), 7u);
  EXPECT_EQ(expand_pool(p)[0].mig[1].instances[6], (MigInstance{"1g.10gb", 6}));
  // An empty mig entry: MIG mode on, no instances (nothing advertised).
  p.mig_devices = std::map<std::string, int>{};
  EXPECT_EQ(expand_pool(p)[0].mig, (std::vector<GpuMig>{GpuMig{true, {}}, GpuMig{true, {}}}));
}

TEST(NodePoolExpand, InvalidPoolsThrow) {
  auto throws_with = [](const NodePool& p, const std::string& fragment) {
    try {
      expand_pool(p);
      ADD_FAILURE() << "no exception; expected " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  NodePool p = l4_pool(2);
  p.min_nodes = 5;
  p.max_nodes = 3;
  throws_with(p, "min 5 is above max 3");
  p = l4_pool(21);
  throws_with(p, "node count 21 is outside [min, max] = [0, 20]");
  p = l4_pool(1);
  p.gpu_model = "V100";
  throws_with(p, "unknown GPU model 'V100'");
  p = l4_pool(1);
  p.mig_devices = std::map<std::string, int>{{"1g.10gb", 7}};
  throws_with(p, "GPU model L4 is not MIG-capable");
  p = l4_pool(1);
  p.gpu_model = "H100-80GB";
  p.mig_devices = std::map<std::string, int>{{"4g.40gb", 1}, {"7g.80gb", 1}};
  throws_with(p, "MIG devices 1x 4g.40gb, 1x 7g.80gb do not fit on one H100-80GB GPU");
  p.mig_devices = std::map<std::string, int>{{"3g.40gb", 1}, {"4g.40gb", 1}};
  EXPECT_EQ(expand_pool(p).size(), 1u);
  p = l4_pool(1);
  p.labels.emplace_back("gpufleet.io/pool", "other");
  throws_with(p, "label gpufleet.io/pool is set by gpufleet");
}

// ----------------------------------------------------------------------------------------- reader

TEST(PoolFile, ParsesTheDocumentedShape) {
  const auto pools = parse_pool_text(R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: inference-l4
  instanceType: g6.xlarge
  gpu: {model: L4, count: 1}
  cpu: "4"          # Kubernetes quantity
  memory: 16Gi
  nodes: 4          # current count
  min: 0
  max: 10
  labels: {workload-type: inference}
  taints: [{key: workload-type, value: inference, effect: NoSchedule}]
  prices: {onDemand: 0.80, spot: 0.35, reserved: 0.50}
  timeSlicing: {replicas: 4}
- name: h100-mig
  gpu: {model: NVIDIA-H100-80GB-HBM3, count: 8}
  cpu: 191450m
  memory: 0.5Ti
  nodes: 1
  prices: {onDemand: "98.32"}
  mig: {"3g.40gb": 1, "4g.40gb": 1}
- name: system
  cpu: 2
  memory: 8G
  nodes: 3
  max: 5
  prices: {onDemand: 0}
)",
                                     "p.yaml");
  ASSERT_EQ(pools.size(), 3u);
  const NodePool& a = pools[0];
  EXPECT_EQ(a.name, "inference-l4");
  EXPECT_EQ(a.instance_type, "g6.xlarge");
  EXPECT_EQ(a.gpu_model, "L4");
  EXPECT_EQ(a.gpus_per_node, 1);
  EXPECT_EQ(a.cpu_milli, 4000);
  EXPECT_EQ(a.memory_bytes, 16384 * kBytesPerMib);
  EXPECT_EQ(a.node_count, 4);
  EXPECT_EQ(a.min_nodes, 0);
  EXPECT_EQ(a.max_nodes, 10);
  EXPECT_EQ(a.labels, (Labels{{"workload-type", "inference"}}));
  ASSERT_EQ(a.taints.size(), 1u);
  EXPECT_EQ(a.taints[0].effect, "NoSchedule");
  EXPECT_DOUBLE_EQ(a.on_demand_usd_per_hour, 0.80);
  EXPECT_DOUBLE_EQ(a.spot_usd_per_hour.value(), 0.35);
  EXPECT_DOUBLE_EQ(a.reserved_usd_per_hour.value(), 0.50);
  EXPECT_FALSE(a.mig_devices);
  EXPECT_EQ(a.time_slicing_replicas, 4);

  const NodePool& b = pools[1];
  EXPECT_EQ(b.gpu_model, "H100-80GB");  // product label -> canonical name
  EXPECT_EQ(b.gpus_per_node, 8);
  EXPECT_EQ(b.cpu_milli, 191450);
  EXPECT_EQ(b.memory_bytes, (512 * 1024) * kBytesPerMib);
  EXPECT_EQ(b.min_nodes, 1);  // min and max default to nodes
  EXPECT_EQ(b.max_nodes, 1);
  EXPECT_DOUBLE_EQ(b.on_demand_usd_per_hour, 98.32);
  EXPECT_FALSE(b.spot_usd_per_hour);
  ASSERT_TRUE(b.mig_devices);
  EXPECT_EQ(*b.mig_devices, (std::map<std::string, int>{{"3g.40gb", 1}, {"4g.40gb", 1}}));

  const NodePool& c = pools[2];
  EXPECT_EQ(c.gpu_model, "");
  EXPECT_EQ(c.gpus_per_node, 0);
  EXPECT_EQ(c.memory_bytes, 8'000'000'000);  // 8G, exactly
  EXPECT_EQ(c.min_nodes, 3);
  EXPECT_EQ(c.max_nodes, 5);

  const auto nodes = expand_pool(a);
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[3].name, "inference-l4-3");
}

TEST(PoolFile, IgnoresOtherKubernetesDocuments) {
  const auto pools = parse_pool_text("kind: ConfigMap\nmetadata: {name: x}\n---\n" + edit(0, ""), "p.yaml");
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].name, "a");
}

TEST(PoolFile, SkipsTheSimulatorSettingsOnlyUnderTheirApiVersion) {
  // gpufleet place reads the pools file of gpufleet simulate: its Autoscaling document is skipped,
  // but not under another apiVersion, which the simulator would skip too (readers/sim/sim_pools.h).
  EXPECT_EQ(parse_pool_text(edit(0, "") + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n", "p.yaml").size(), 1u);
  expect_error(edit(0, "") + "---\napiVersion: sim.gpufleet.io/v2\nkind: Autoscaling\n", 11, 13, "apiVersion",
               "apiVersion 'sim.gpufleet.io/v2' is not supported for kind Autoscaling (expected sim.gpufleet.io/v1)");
  expect_error(edit(0, "") + "---\nkind: Autoscaling\n", 11, 7, "kind", "needs apiVersion sim.gpufleet.io/v1 (apiVersion is missing)");
}

TEST(PoolFile, BaseIsValid) { EXPECT_EQ(parse_pool_text(edit(0, ""), "p.yaml").size(), 1u); }

TEST(PoolFileErrors, YamlSyntax) {
  expect_error(edit(5, "  gpu: {model: L4, count: 1"), 6, 6, "", "YAML syntax error");
  expect_error(edit(8, "  nodes: 2\n   bad: indent"), 9, 7, "", "YAML syntax error");
}

TEST(PoolFileErrors, UnknownGpuModel) {
  expect_error(edit(5, "  gpu: {model: L5, count: 1}"), 5, 16, "pools[0].gpu.model", "unknown GPU model 'L5'");
  // A blank gpu is an error, not a CPU-only pool (leaving the key out is).
  expect_error(edit(5, "  gpu: ~"), 5, 8, "pools[0].gpu", "has no value");
  EXPECT_EQ(parse_pool_text(edit(5, "  instanceType: c7i.xlarge"), "pools.yaml")[0].gpus_per_node, 0);
}

TEST(PoolFileErrors, BadQuantities) {
  expect_error(edit(7, "  memory: 16GB"), 7, 11, "pools[0].memory", "'16GB' is not a valid quantity");
  expect_error(edit(6, "  cpu: -4"), 6, 8, "pools[0].cpu", "'-4' is negative");
  expect_error(edit(7, "  memory: [16Gi]"), 7, 11, "pools[0].memory", "expected a scalar, got a list");
}

TEST(PoolFileErrors, Counts) {
  expect_error(edit(8, "  nodes: -1"), 8, 10, "pools[0].nodes", "-1 is negative");
  expect_error(edit(8, "  nodes: 2.5"), 8, 10, "pools[0].nodes", "'2.5' is not an integer");
  expect_error(edit(5, "  gpu: {model: L4, count: 0}"), 5, 27, "pools[0].gpu.count", "out of range [1, 16]");
  expect_error(edit(5, "  gpu: {model: L4, count: one}"), 5, 27, "pools[0].gpu.count", "'one' is not an integer");
  expect_error(edit(8, "  nodes: 2\n  min: -1"), 9, 8, "pools[0].min", "-1 is negative");
}

TEST(PoolFileErrors, NodeCountLimits) {
  // At most 100000 nodes a pool and 200000 for the max of all pools of a file: `gpufleet simulate`
  // keeps every node up to max from the start (max: 1000000 ran for minutes).
  expect_error(edit(8, "  nodes: 100001"), 8, 10, "pools[0].nodes", "100001 is out of range [0, 100000]");
  expect_error(edit(8, "  nodes: 2\n  max: 1000000"), 9, 8, "pools[0].max", "1000000 is out of range [0, 100000]");
  const std::string big = edit(8, "  nodes: 2\n  max: 100000");
  const std::string b = "- name: b\n  cpu: 1\n  memory: 1Gi\n  nodes: 0\n  max: 100000\n  prices: {onDemand: 0}\n";
  EXPECT_EQ(parse_pool_text(big + b, "p.yaml").size(), 2u);  // 200000 in all
  expect_error(big + b + "- name: c\n  cpu: 1\n  memory: 1Gi\n  nodes: 1\n  prices: {onDemand: 0}\n", 20, 10, "pools[2].nodes",
               "the pools' max add up to 200001 nodes with this one, above the maximum of 200000 in a file");
  expect_error(big + "- name: b\n  cpu: 1\n  memory: 1Gi\n  nodes: 0\n  max: 100001\n  prices: {onDemand: 0}\n", 15, 8,
               "pools[1].max", "100001 is out of range [0, 100000]");
  expect_error(big + "- name: b\n  cpu: 1\n  memory: 1Gi\n  nodes: 0\n  max: 100000\n  prices: {onDemand: 0}\n"
                     "---\napiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- {name: c, cpu: 1, memory: 1Gi, nodes: 0, max: 1, "
                     "prices: {onDemand: 0}}\n",
               21, 49, "pools[0].max", "above the maximum of 200000 in a file");
}

TEST(PoolFileErrors, MinAboveMaxAndNodesOutOfRange) {
  // min and max default to nodes, so a lone max below nodes is reported as min > max at max.
  expect_error(edit(8, "  nodes: 5\n  max: 4"), 9, 8, "pools[0].max", "min 5 is above max 4");
  expect_error(edit(8, "  nodes: 2\n  min: 3\n  max: 1"), 9, 8, "pools[0].min", "min 3 is above max 1");
  expect_error(edit(8, "  nodes: 5\n  min: 0\n  max: 4"), 8, 10, "pools[0].nodes", "5 nodes is outside [min, max] = [0, 4]");
  expect_error(edit(8, "  nodes: 2\n  min: 3\n  max: 6"), 8, 10, "pools[0].nodes", "2 nodes is outside");
}

TEST(PoolFileErrors, Prices) {
  expect_error(edit(9, "  prices: {onDemand: -0.8}"), 9, 22, "pools[0].prices.onDemand", "price -0.8 is negative");
  expect_error(edit(9, "  prices: {onDemand: 1, spot: cheap}"), 9, 31, "pools[0].prices.spot", "'cheap' is not a number");
  expect_error(edit(9, "  prices: {spot: 0.3}"), 9, 11, "pools[0].prices.onDemand", "required field is missing");
  expect_error(edit(9, "  labels: {}"), 4, 3, "pools[0].prices", "required field is missing");
}

TEST(PoolFileErrors, UnknownKeys) {
  expect_error(edit(4, "- name: a\n  instancetype: g6.xlarge"), 5, 3, "pools[0].instancetype",
               "unknown key 'instancetype'");
  expect_error(edit(3, "pool:"), 3, 1, "pool", "unknown key 'pool'");
  expect_error(edit(5, "  gpu: {model: L4, count: 1, memory: 24Gi}"), 5, 30, "pools[0].gpu.memory",
               "unknown key 'memory'");
  expect_error(edit(9, "  prices: {onDemand: 1, onDmand: 2}"), 9, 25, "pools[0].prices.onDmand", "unknown key");
  expect_error(edit(10, "  timeSlicing: {replica: 4}"), 10, 17, "pools[0].timeSlicing.replica", "unknown key");
}

TEST(PoolFileErrors, DuplicatePoolNames) {
  expect_error(edit(10, "- name: a\n  cpu: 1\n  memory: 1Gi\n  nodes: 0\n  prices: {onDemand: 0}"), 10, 9,
               "pools[1].name", "duplicate pool name 'a'");
}

TEST(PoolFileErrors, Mig) {
  expect_error(edit(10, "  mig: {\"1g.10gb\": 7}"), 10, 8, "pools[0].mig", "GPU model L4 is not MIG-capable");
  const std::string h100 = "  gpu: {model: H100-80GB, count: 8}";
  expect_error(edit(5, h100 + "\n  mig: {\"3g.40gb\": 2, \"2g.20gb\": 1}"), 6, 8, "pools[0].mig",
               "MIG devices 1x 2g.20gb, 2x 3g.40gb do not fit on one H100-80GB GPU");
  expect_error(edit(5, h100 + "\n  mig: {\"3g.20gb\": 1}"), 6, 20, "pools[0].mig.3g.20gb",
               "GPU model H100-80GB has no MIG profile '3g.20gb'");
  expect_error(edit(5, h100 + "\n  mig: {\"1g.10gb\": -1}"), 6, 20, "pools[0].mig.1g.10gb", "-1 is negative");
}

TEST(PoolFileErrors, OtherFields) {
  expect_error(edit(10, "  timeSlicing: {replicas: 0}"), 10, 27, "pools[0].timeSlicing.replicas", "out of range");
  expect_error(edit(10, "  taints: [{key: k, effect: NoScheduled}]"), 10, 29, "pools[0].taints[0].effect",
               "unknown taint effect 'NoScheduled'");
  expect_error(edit(10, "  labels: {gpufleet.io/pool: x}"), 10, 30, "pools[0].labels.gpufleet.io/pool",
               "set by gpufleet");
  expect_error(edit(4, "- name: Inference_L4"), 4, 9, "pools[0].name", "not a DNS label");
  expect_error(edit(4, "- instanceType: x"), 4, 3, "pools[0].name", "required field is missing");
  expect_error(edit(1, "apiVersion: gpufleet.io/v2"), 1, 13, "apiVersion", "not supported");
  expect_error(edit(2, "kind: NodePools"), 2, 7, "kind", "unknown kind 'NodePools'");
  expect_error("kind: ConfigMap\nmetadata: {name: x}\n", 0, 0, "kind", "the file holds a ConfigMap, not a NodePoolSet (gpufleet.io/v1)");
  expect_error("", 0, 0, "kind", "the file is empty: expected a NodePoolSet (gpufleet.io/v1)");
  expect_error("apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 60\n", 0, 0, "kind",
               "the file holds a Workload (sim.gpufleet.io/v1), not a NodePoolSet (gpufleet.io/v1); give it to simulate --workload");
  expect_error("apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools: {a: 1}\n", 3, 8, "pools", "expected a list, got a mapping");
}

TEST(PoolFileErrors, MissingFile) {
  EXPECT_THROW(io::read_pool_file("/nonexistent/pools.yaml"), InputError);
}

// --------------------------------------------------------------------------------------- examples

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / name).string();
}

std::map<std::string, int> pods_by_owner(const io::K8sObjects& k) {
  std::map<std::string, int> out;
  for (const Pod& p : k.pods) out[p.name.substr(0, p.name.rfind('-'))]++;
  return out;
}

TEST(Examples, EveryFileIsCovered) {
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples"))
    files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"pools.yaml", "mig-h100.yaml", "time-slicing.yaml", "priorityclasses.yaml",
                                          "quota-team.yaml", "workloads.yaml", "running-pods.yaml", "simulate",
                                          "openb", "serving", "queues", "topology", "mps", "faults", "live", "daemonsets", "plan", "gpu-memory-sharing",
                                          "snapshot", "inference-routing", "leaderworkerset", "dra"}));
  // dra/: place/dra_test.cpp, docs/dra.md;
  // daemonsets/: place/daemon_set_test.cpp, sim/sim_daemon_set_test.cpp;
  // simulate/: sim_cli_test.sh; openb/: inputs/openb_trace_test.cpp; serving/: readers/k8s_serving_test.cpp;
  // queues/: readers/kueue_yaml_test.cpp; topology/: sim/sim_topology_test.cpp; mps/: place/mps_test.cpp, place_cli_test.sh,
  // simulate_cli_test.sh; faults/checkpoints/: sim/checkpoint_cost_test.cpp; faults/*.yaml: sim/sim_provisioning_test.cpp,
  // faults_cli_test.sh, readers/fault_schedule_test.cpp; live/prometheus-rules.yaml, live/grafana-dashboard.json:
  // live/cluster_metrics_test.cpp, live/promtool_test.sh; live/keda-scaledobject.yaml: live/inference_scaler_test.cpp;
  // plan/: readers/plan_file_test.cpp (catalog, constraints), docs/commands_test.sh (workload.yaml); indexed-job.yaml
  // is a manifest for kubectl that gpufleet does not read; snapshot/: readers/snapshot_workload_test.cpp (pods.json),
  // docs/commands_test.sh (pods.json, history.csv, pools.yaml); inference-routing/: readers/endpoint_picker_config_test.cpp
  // and cli/inference_routing_cli_test.sh (epp.yaml), docs/commands_test.sh (chat-sheddable.yaml);
  // leaderworkerset/: place/leader_worker_set_test.cpp, docs/commands_test.sh
}

TEST(Examples, PoolsExpand) {
  const auto pools = io::read_pool_file(example("pools.yaml"));
  std::map<std::string, size_t> nodes;
  size_t total = 0;
  for (const NodePool& p : pools) {
    const auto expanded = expand_pool(p);
    nodes[p.name] = expanded.size();
    total += expanded.size();
    ASSERT_EQ(p.taints.size(), 1u) << p.name;
    EXPECT_EQ(p.taints[0].key, "workload-type");
    EXPECT_EQ(*find_label(p.labels, "workload-type"), p.taints[0].value);
  }
  EXPECT_EQ(nodes, (std::map<std::string, size_t>{{"inference-t4", 2}, {"inference-l4", 4}, {"training-h100", 2},
                                                  {"training-a100", 1}, {"training-h200", 1}, {"dev-a10g", 2}}));
  EXPECT_EQ(total, 12u);
  EXPECT_EQ(pools[0].time_slicing_replicas, 4);
  EXPECT_EQ(expand_pool(pools[2])[0].gpu_model, "H100-80GB");
  EXPECT_EQ(expand_pool(pools[2])[0].gpu_count, 8);
  EXPECT_DOUBLE_EQ(pools[2].on_demand_usd_per_hour, 98.32);
  EXPECT_DOUBLE_EQ(pools[2].spot_usd_per_hour.value(), 19.66);
}

TEST(Examples, MigPoolsMatchTheirMigPartedConfig) {
  const auto pools = io::read_pool_file(example("mig-h100.yaml"));
  ASSERT_EQ(pools.size(), 2u);
  const auto k = io::read_k8s_inputs({example("mig-h100.yaml")});
  ASSERT_EQ(k.mig_parted_configs.size(), 1u);
  EXPECT_EQ(k.mig_parted_configs[0].configs.size(), 3u);
  EXPECT_FALSE(k.skipped_kinds.count("NodePoolSet"));
  EXPECT_EQ(k.pool_files, std::vector<std::string>{example("mig-h100.yaml")});
  for (const NodePool& p : pools) {
    EXPECT_EQ(expand_pool(p).size(), 1u);
    ASSERT_TRUE(p.mig_devices) << p.name;
    const std::string* config_name = find_label(p.labels, "nvidia.com/mig.config");
    ASSERT_NE(config_name, nullptr) << p.name;
    const auto& configs = k.mig_parted_configs[0].configs;
    const auto it = std::find_if(configs.begin(), configs.end(), [&](const io::MigConfig& c) { return c.name == *config_name; });
    ASSERT_NE(it, configs.end()) << *config_name;
    ASSERT_EQ(it->groups.size(), 1u);
    EXPECT_TRUE(it->groups[0].all_devices);
    EXPECT_TRUE(it->groups[0].mig_enabled);
    std::map<std::string, int> from_config(it->groups[0].mig_devices.begin(), it->groups[0].mig_devices.end());
    EXPECT_EQ(from_config, *p.mig_devices) << p.name;
  }
}

TEST(Examples, TimeSlicingPriorityClassesAndQuota) {
  const auto ts = io::read_k8s_inputs({example("time-slicing.yaml")});
  ASSERT_EQ(ts.time_slicing_configs.size(), 2u);  // `any` and `default` (no sharing)
  EXPECT_EQ(ts.time_slicing_configs[0].origin.data_key, "any");
  EXPECT_EQ(ts.time_slicing_configs[1].origin.data_key, "default");
  EXPECT_TRUE(ts.time_slicing_configs[1].resources.empty());
  EXPECT_EQ(ts.time_slicing_configs[1].mig_strategy, "mixed");
  EXPECT_TRUE(ts.time_slicing_configs[0].rename_by_default);
  ASSERT_EQ(ts.time_slicing_configs[0].resources.size(), 1u);
  EXPECT_EQ(ts.time_slicing_configs[0].resources[0].name, "nvidia.com/gpu");
  EXPECT_EQ(ts.time_slicing_configs[0].resources[0].replicas, 4);

  const auto pc = io::read_k8s_inputs({example("priorityclasses.yaml")});
  ASSERT_EQ(pc.priority_classes.size(), 3u);
  EXPECT_EQ(pc.priority_classes[0].name, "production");
  EXPECT_GT(pc.priority_classes[0].value, pc.priority_classes[1].value);
  EXPECT_GT(pc.priority_classes[1].value, pc.priority_classes[2].value);
  EXPECT_EQ(pc.priority_classes[2].preemption_policy, "Never");

  const auto q = io::read_k8s_inputs({example("quota-team.yaml")});
  ASSERT_EQ(q.quotas.size(), 1u);
  EXPECT_EQ(q.quotas[0].namespace_name, "team-a");
  EXPECT_EQ(q.quotas[0].requests_gpu, 4);
}

TEST(Examples, Workloads) {
  const auto k = io::read_k8s_inputs({example("priorityclasses.yaml"), example("workloads.yaml")});
  EXPECT_EQ(pods_by_owner(k), (std::map<std::string, int>{{"llm-pretrain", 2},
                                                          {"finetune-workers", 2},
                                                          {"llm-serving", 3},
                                                          {"reranker", 2},
                                                          {"notebook", 1},  // notebook-alice
                                                          {"hparam-sweep", 4},
                                                          {"mig-llm-13b", 2},
                                                          {"mig-batch-scoring", 7},
                                                          {"embeddings", 4},
                                                          {"llm-eval", 1}}));
  EXPECT_EQ(k.pods.size(), 28u);
  int team_a_gpus = 0;
  for (const Pod& p : k.pods) {
    if (p.name.rfind("llm-pretrain", 0) == 0) {
      EXPECT_EQ(p.num_gpu, 8);
    }
    if (p.name.rfind("llm-serving", 0) == 0) {
      EXPECT_EQ(p.priority, 1000000);
    }
    if (p.name.rfind("hparam-sweep", 0) == 0) {
      EXPECT_FALSE(p.preempt_lower_priority);
    }
    if (p.namespace_name == "team-a") team_a_gpus += p.num_gpu;
  }
  EXPECT_EQ(team_a_gpus, 5);  // one more than quota-team.yaml allows: the last trial is refused
  std::map<std::string, int> devices;
  for (const Pod& p : k.pods) {
    for (const MigRequest& r : p.mig_requests) devices["nvidia.com/mig-" + r.profile] += r.count;
    if (p.shared_replicas > 0) devices["nvidia.com/gpu.shared"] += p.shared_replicas;
  }
  EXPECT_EQ(devices, (std::map<std::string, int>{
                         {"nvidia.com/mig-3g.40gb", 2}, {"nvidia.com/mig-1g.10gb", 7}, {"nvidia.com/gpu.shared", 4}}));
  EXPECT_TRUE(k.pod_extras.empty());
}

TEST(Examples, WholeDirectoryReads) {
  const auto k = io::read_k8s_inputs({(std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples").string()});
  EXPECT_EQ(k.pods.size(), 29u);  // workloads.yaml 28 + running-pods.yaml 1
  EXPECT_EQ(k.priority_classes.size(), 3u);
  EXPECT_EQ(k.quotas.size(), 1u);
  EXPECT_EQ(k.time_slicing_configs.size(), 2u);
  EXPECT_EQ(k.mig_parted_configs.size(), 1u);
  EXPECT_FALSE(k.skipped_kinds.count("NodePoolSet"));
  ASSERT_EQ(k.pool_files.size(), 2u);  // mig-h100.yaml and pools.yaml, in sorted order
  EXPECT_EQ(std::filesystem::path(k.pool_files[0]).filename(), "mig-h100.yaml");
  EXPECT_EQ(std::filesystem::path(k.pool_files[1]).filename(), "pools.yaml");
  EXPECT_TRUE(k.nodes.empty());
}

}  // namespace
}  // namespace gpufleet
