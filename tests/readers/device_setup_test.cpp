// Device set-up (readers/k8s/device_setup.h): device-plugin and mig-parted configs applied to nodes by their
// labels, MIG layouts derived from advertised counts, GPU counts from GFD labels, the unknown-model
// error, and the examples end to end (pools + configs + workloads placed by the scheduler).
#include "support/expect_input_error.h"
#include "readers/k8s/device_setup.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/pool_file.h"
#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// Reads `text`, applies the device set-up and returns the objects.
K8sObjects setup(const std::string& text, DeviceSetupReport* report = nullptr) {
  K8sObjects k = parse_k8s_text(text, "in.yaml");
  DeviceSetupReport r = apply_device_setup(k);
  if (report != nullptr) *report = std::move(r);
  return k;
}

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { setup(text); }, "in.yaml", line, column, field, fragment);
}

const Node& node(const K8sObjects& k, const std::string& name) {
  for (const Node& n : k.nodes)
    if (n.name == name) return n;
  throw std::out_of_range(name);
}

// A Node document: name, labels (one "key: value" per entry) and status.allocatable entries.
std::string node_doc(const std::string& name, const std::vector<std::string>& labels, const std::string& allocatable) {
  std::string out = "---\nkind: Node\nmetadata:\n  name: " + name + "\n";
  if (!labels.empty()) {
    out += "  labels:\n";
    for (const auto& l : labels) out += "    " + l + "\n";
  }
  return out + "status:\n  allocatable: {cpu: \"64\", memory: 512Gi" + (allocatable.empty() ? "" : ", " + allocatable) + "}\n";
}

const std::string kMigParted = R"(---
apiVersion: v1
kind: ConfigMap
metadata: {name: mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
        - devices: all
          mig-enabled: false
      all-1g.10gb:
        - devices: all
          mig-enabled: true
          mig-devices: {"1g.10gb": 7}
      h100-3g-4g:
        - devices: all
          mig-enabled: true
          mig-devices: {"3g.40gb": 1, "4g.40gb": 1}
      half:
        - devices: [1]
          mig-enabled: true
          mig-devices: {"2g.20gb": 3, "1g.10gb": 1}
      by-model:
        - device-filter: ["0x20B010DE", "0x20B110DE"]
          devices: all
          mig-enabled: true
          mig-devices: {"1g.5gb": 7}
        - device-filter: "0x233010de"
          devices: all
          mig-enabled: true
          mig-devices: {"3g.40gb": 2}
)";

const std::string kH100 = "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3";

// ---------------------------------------------------------------------------------------- MIG

TEST(DeviceSetup, MigConfigsByLabel) {
  DeviceSetupReport report;
  const K8sObjects k = setup(kMigParted +
                                 node_doc("a", {kH100, "nvidia.com/gpu.count: \"2\"", "nvidia.com/mig.config: all-1g.10gb"},
                                          "nvidia.com/mig-1g.10gb: 14") +
                                 node_doc("b", {kH100, "nvidia.com/gpu.count: \"2\"", "nvidia.com/mig.config: h100-3g-4g"},
                                          "nvidia.com/mig-3g.40gb: 2, nvidia.com/mig-4g.40gb: 2") +
                                 node_doc("c", {kH100, "nvidia.com/gpu.count: \"2\"", "nvidia.com/mig.config: all-disabled"},
                                          "nvidia.com/gpu: 2") +
                                 node_doc("d", {kH100, "nvidia.com/gpu.count: \"2\"", "nvidia.com/mig.config: half"},
                                          "nvidia.com/gpu: 1, nvidia.com/mig-2g.20gb: 3, nvidia.com/mig-1g.10gb: 1") +
                                 node_doc("e", {kH100, "nvidia.com/gpu.count: \"1\"", "nvidia.com/mig.config: by-model"},
                                          "nvidia.com/mig-3g.40gb: 2"),
                             &report);
  const Node& a = node(k, "a");
  EXPECT_EQ(a.gpu_model, "H100-80GB");  // the catalog's name
  EXPECT_EQ(a.gpu_count, 2);            // nvidia.com/gpu.count, though nvidia.com/gpu is not advertised
  ASSERT_EQ(a.mig.size(), 2u);
  for (const GpuMig& g : a.mig) {
    EXPECT_TRUE(g.enabled);
    ASSERT_EQ(g.instances.size(), 7u);
    EXPECT_EQ(g.instances[3], (MigInstance{"1g.10gb", 3}));
  }
  const Node& b = node(k, "b");
  ASSERT_EQ(b.mig.size(), 2u);
  EXPECT_EQ(b.mig[1].instances, (std::vector<MigInstance>{{"4g.40gb", 0}, {"3g.40gb", 4}}));
  const Node& c = node(k, "c");
  EXPECT_TRUE(c.mig.empty());  // all-disabled
  EXPECT_EQ(c.gpu_count, 2);
  EXPECT_FALSE(c.has_gpu_sharing());
  // devices: [1]: GPU 0 stays without MIG. 2g at 0, 2, 4 and 1g (small) at 6.
  const Node& d = node(k, "d");
  ASSERT_EQ(d.mig.size(), 2u);
  EXPECT_FALSE(d.mig[0].enabled);
  EXPECT_EQ(d.mig[1].instances,
            (std::vector<MigInstance>{{"2g.20gb", 0}, {"2g.20gb", 2}, {"2g.20gb", 4}, {"1g.10gb", 6}}));
  // device-filter: the A100-40GB group does not match an H100 (0x2330 10DE, case-insensitive).
  const Node& e = node(k, "e");
  ASSERT_EQ(e.mig.size(), 1u);
  EXPECT_EQ(e.mig[0].instances, (std::vector<MigInstance>{{"3g.40gb", 0}, {"3g.40gb", 4}}));
  EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();
  // The result is a valid ClusterState.
  const ClusterState state(k.nodes);
  EXPECT_EQ(state.mig_free_count(0, "1g.10gb"), 14);
  EXPECT_EQ(state.mig_free_count(3, "2g.20gb"), 3);
  EXPECT_EQ(state.gpu_kind(3, 0), GpuKind::kPlain);
}

TEST(DeviceSetup, MigConfigErrorsNameTheConfigAndProfiles) {
  const std::string bad = R"(---
version: v1
mig-configs:
  too-big:
    - devices: all
      mig-enabled: true
      mig-devices: {"4g.40gb": 1, "7g.80gb": 1}
  wrong-model:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb": 7}
  beyond:
    - devices: [0, 3]
      mig-enabled: true
      mig-devices: {"1g.10gb": 7}
)";
  auto with = [&](const std::string& config, const std::string& product = kH100) {
    return bad + node_doc("n", {product, "nvidia.com/gpu.count: \"2\"", "nvidia.com/mig.config: " + config}, "");
  };
  expect_error(with("too-big"), 2, 0, "mig-configs.too-big[0].mig-devices",
               "node n: mig-parted config 'too-big': MIG devices 1x 4g.40gb, 1x 7g.80gb do not fit on one H100-80GB GPU");
  expect_error(with("wrong-model"), 2, 0, "mig-configs.wrong-model[0].mig-devices",
               "mig-parted config 'wrong-model': GPU model H100-80GB has no MIG profile '1g.5gb'");
  expect_error(with("beyond"), 2, 0, "mig-configs.beyond[0].devices", "device index 3 is beyond the node's 2 GPUs");
  expect_error(with("too-big", "nvidia.com/gpu.product: Tesla-T4"), 2, 0, "mig-configs.too-big[0].mig-devices",
               "GPU model T4 is not MIG-capable");
  // A label naming a config the inputs lack: an error at the label (line 8 of the node document).
  expect_error(with("all-3g"), 23, 28, "metadata.labels.nvidia.com/mig.config",
               "node n: mig-parted config 'all-3g' is not among the inputs (configs: beyond, too-big, wrong-model)");
  // Inside a ConfigMap, the field path starts at the data key.
  expect_error(kMigParted + node_doc("m", {"nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB", "nvidia.com/mig.config: half"},
                                     "nvidia.com/gpu: 2"),
               6, 0, "data.config.yaml.mig-configs.half[0].mig-devices", "GPU model A100-40GB has no MIG profile '2g.20gb'");
}

TEST(DeviceSetup, MigLayoutFromAdvertisedCounts) {
  DeviceSetupReport report;
  const K8sObjects k = setup(
      // 2 GPUs per the GFD count, both MIG: 14 x 1g.10gb -> 7 + 7.
      node_doc("a", {kH100, "nvidia.com/gpu.count: \"2\""}, "nvidia.com/mig-1g.10gb: 14") +
          // No count label: 1 plain GPU, then the fewest MIG GPUs for 2x 4g + 2x 3g (first-fit
          // decreasing: 4g -> GPU 1, 4g -> GPU 2, 3g -> GPU 1, 3g -> GPU 2).
          node_doc("b", {kH100}, "nvidia.com/gpu: 1, nvidia.com/mig-4g.40gb: 2, nvidia.com/mig-3g.40gb: 2") +
          // Count 3 with one plain GPU: two MIG GPUs, the second left empty.
          node_doc("c", {kH100, "nvidia.com/gpu.count: \"3\""}, "nvidia.com/gpu: 1, nvidia.com/mig-7g.80gb: 1"),
      &report);
  const Node& a = node(k, "a");
  ASSERT_EQ(a.mig.size(), 2u);
  EXPECT_EQ(a.mig[0].instances.size(), 7u);
  EXPECT_EQ(a.mig[1].instances.size(), 7u);
  const Node& b = node(k, "b");
  EXPECT_EQ(b.gpu_count, 3);
  ASSERT_EQ(b.mig.size(), 3u);
  EXPECT_FALSE(b.mig[0].enabled);
  EXPECT_EQ(b.mig[1].instances, (std::vector<MigInstance>{{"4g.40gb", 0}, {"3g.40gb", 4}}));
  EXPECT_EQ(b.mig[2].instances, (std::vector<MigInstance>{{"4g.40gb", 0}, {"3g.40gb", 4}}));
  const Node& c = node(k, "c");
  EXPECT_EQ(c.mig, (std::vector<GpuMig>{GpuMig{}, GpuMig{true, {{"7g.80gb", 0}}}, GpuMig{true, {}}}));
  // Node b's count is a guess, and says so (GPU feature discovery would have labelled it).
  EXPECT_EQ(report.warnings, (std::vector<std::string>{
                                 "no nvidia.com/gpu.count label: the GPUs with MIG are counted as the fewest H100-80GB GPUs "
                                 "that hold the advertised MIG devices (2x 3g.40gb, 2x 4g.40gb); label the node with its "
                                 "physical GPU count to override (node b)"}));

  // Errors: the devices do not fit, a model that is not MIG-capable, no GPU left for them.
  expect_error(node_doc("x", {kH100, "nvidia.com/gpu.count: \"1\""}, "nvidia.com/mig-7g.80gb: 1, nvidia.com/mig-1g.10gb: 1"),
               4, 9, "metadata.name", "node x: the advertised MIG devices (1x 1g.10gb, 1x 7g.80gb) do not fit on its 1 MIG GPU(s)");
  expect_error(node_doc("y", {"nvidia.com/gpu.product: NVIDIA-L4"}, "nvidia.com/mig-1g.10gb: 7"), 6, 29,
               "metadata.labels.nvidia.com/gpu.product", "GPU model L4 is not MIG-capable");
  expect_error(node_doc("z", {kH100, "nvidia.com/gpu.count: \"2\""}, "nvidia.com/gpu: 2, nvidia.com/mig-1g.10gb: 7"), 7, 27,
               "metadata.labels.nvidia.com/gpu.count", "its 2 GPUs are all advertised without MIG");
  expect_error(node_doc("w", {kH100}, "nvidia.com/mig-1g.5gb: 7"), 4, 9, "metadata.name",
               "advertises nvidia.com/mig-1g.5gb, not a MIG profile of GPU model H100-80GB");
}

TEST(DeviceSetup, MissingMigConfigWithoutAnyConfigWarns) {
  DeviceSetupReport report;
  const K8sObjects k = setup(node_doc("a", {kH100, "nvidia.com/mig.config: all-1g.10gb"}, "nvidia.com/mig-1g.10gb: 7") +
                                 node_doc("b", {kH100, "nvidia.com/mig.config: all-1g.10gb"}, "nvidia.com/mig-1g.10gb: 7"),
                             &report);
  EXPECT_EQ(node(k, "a").mig.size(), 1u);  // from the advertised counts
  ASSERT_EQ(report.warnings.size(), 2u);  // and the GPU count guessed from them (no nvidia.com/gpu.count)
  EXPECT_EQ(report.warnings[1].substr(0, 30), "no nvidia.com/gpu.count label:");
  EXPECT_EQ(report.warnings[0],
            "mig-parted config 'all-1g.10gb' (label nvidia.com/mig.config) is not among the inputs; MIG set-up from the "
            "node pool or the advertised MIG devices (nodes a, b)");
}

// ---------------------------------------------------------------------------------------- time-slicing

const std::string kDevicePlugin = R"(---
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  shared-4: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
  plain-10: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 10
  explicit-rename: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - {name: nvidia.com/gpu, replicas: 2, rename: nvidia.com/gpu.shared}
        - {name: nvidia.com/mig-1g.10gb, replicas: 2}
)";

const std::string kT4 = "nvidia.com/gpu.product: Tesla-T4";

TEST(DeviceSetup, DevicePluginConfigsByLabel) {
  DeviceSetupReport report;
  const K8sObjects k = setup(
      kDevicePlugin +
          node_doc("s", {kT4, "nvidia.com/device-plugin.config: shared-4", "nvidia.com/gpu.count: \"2\""},
                   "nvidia.com/gpu.shared: 8") +
          // No count label: nvidia.com/gpu 10 = 1 GPU x 10 replicas.
          node_doc("p", {kT4, "nvidia.com/device-plugin.config: plain-10"}, "nvidia.com/gpu: 10") +
          // No count label, renamed: gpu.shared 6 / 2 replicas = 3 GPUs.
          node_doc("r", {"nvidia.com/gpu.product: Tesla-T4-SHARED", "nvidia.com/device-plugin.config: explicit-rename"},
                   "nvidia.com/gpu.shared: 6") +
          // No label and three configs, none named default: no time-slicing.
          node_doc("n", {kT4}, "nvidia.com/gpu: 2"),
      &report);
  const Node& s = node(k, "s");
  EXPECT_EQ(s.gpu_count, 2);
  ASSERT_TRUE(s.time_slicing);
  EXPECT_EQ(*s.time_slicing, (TimeSlicing{4, true, true}));
  const Node& p = node(k, "p");
  EXPECT_EQ(p.gpu_count, 1);
  EXPECT_EQ(*p.time_slicing, (TimeSlicing{10, false, false}));
  const Node& r = node(k, "r");
  EXPECT_EQ(r.gpu_model, "T4");  // -SHARED stripped
  EXPECT_EQ(r.gpu_count, 3);
  EXPECT_EQ(*r.time_slicing, (TimeSlicing{2, true, false}));
  EXPECT_FALSE(node(k, "n").time_slicing);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "time-slicing of nvidia.com/mig-1g.10gb (device-plugin config at in.yaml:22) is not modelled; ignored (node r)");
  const ClusterState state(k.nodes);
  EXPECT_EQ(state.replicas_free(0), 8);
  EXPECT_EQ(state.replicas_free(1), 10);
  EXPECT_EQ(state.replicas_free(2), 6);

  // A key the inputs lack is an error at the label; a rename to another name and a devices list
  // are errors at the config.
  expect_error(kDevicePlugin + node_doc("x", {kT4, "nvidia.com/device-plugin.config: shared-8"}, "nvidia.com/gpu: 1"), 35,
               38, "metadata.labels.nvidia.com/device-plugin.config",
               "device-plugin config 'shared-8' is not among the inputs (data keys: explicit-rename, plain-10, shared-4)");
  expect_error(R"(version: v1
sharing:
  timeSlicing:
    resources:
    - {name: nvidia.com/gpu, replicas: 2, rename: example.com/gpu}
)" + node_doc("x", {kT4}, "nvidia.com/gpu: 1"),
               1, 0, "sharing.timeSlicing.resources[0].rename", "rename to 'example.com/gpu' is not modelled");
  expect_error(R"(version: v1
sharing:
  timeSlicing:
    resources:
    - {name: nvidia.com/gpu, replicas: 2, devices: ["0"]}
)" + node_doc("x", {kT4}, "nvidia.com/gpu: 1"),
               1, 0, "sharing.timeSlicing.resources[0].devices", "time-slicing a subset of the GPUs");
  expect_error(kDevicePlugin + node_doc("x", {kT4, "nvidia.com/device-plugin.config: plain-10"}, "nvidia.com/gpu: 15"), 32, 9,
               "metadata.name", "advertises 15 nvidia.com/gpu, not a multiple of its 10 time-slicing replicas");
}

TEST(DeviceSetup, DefaultDevicePluginConfig) {
  // The only config of the inputs applies to unlabelled GPU nodes (not to CPU nodes) ...
  const std::string single = R"(---
kind: ConfigMap
metadata: {name: ts}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - {name: nvidia.com/gpu, replicas: 3}
)";
  const K8sObjects k = setup(single + node_doc("g", {kT4}, "nvidia.com/gpu: 3") + node_doc("cpu", {}, ""));
  EXPECT_EQ(*node(k, "g").time_slicing, (TimeSlicing{3, false, false}));
  EXPECT_EQ(node(k, "g").gpu_count, 1);  // 3 advertised / 3 replicas
  EXPECT_FALSE(node(k, "cpu").time_slicing);
  // ... and with several, the `default` key does.
  const std::string with_default = single + R"(  default: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - {name: nvidia.com/gpu, replicas: 5}
)";
  const K8sObjects d = setup(with_default + node_doc("g", {kT4}, "nvidia.com/gpu: 5") +
                             node_doc("h", {kT4, "nvidia.com/device-plugin.config: any"}, "nvidia.com/gpu: 3"));
  EXPECT_EQ(d.nodes[0].time_slicing->replicas, 5);
  EXPECT_EQ(d.nodes[1].time_slicing->replicas, 3);
}

TEST(DeviceSetup, TimeSlicingFromFeatureDiscoveryLabels) {
  const K8sObjects k = setup(
      // The reader already turned nvidia.com/gpu 40 into 4 GPUs (labels replicas 10, count 4).
      node_doc("p", {"nvidia.com/gpu.product: Tesla-T4-SHARED", "nvidia.com/gpu.count: \"4\"", "nvidia.com/gpu.replicas: \"10\""},
               "nvidia.com/gpu: 40") +
      node_doc("r", {"nvidia.com/gpu.product: Tesla-T4-SHARED", "nvidia.com/gpu.count: \"2\"", "nvidia.com/gpu.replicas: \"4\""},
               "nvidia.com/gpu.shared: 8"));
  EXPECT_EQ(node(k, "p").gpu_count, 4);
  EXPECT_EQ(*node(k, "p").time_slicing, (TimeSlicing{10, false, false}));
  EXPECT_EQ(node(k, "r").gpu_count, 2);
  EXPECT_EQ(*node(k, "r").time_slicing, (TimeSlicing{4, true, false}));
}

// ---------------------------------------------------------------------------------------- models

TEST(DeviceSetup, UnknownGpuModelIsAnErrorAtTheLabel) {
  expect_error(R"(kind: Node
metadata:
  name: a30-1
  labels:
    topology.kubernetes.io/zone: z1
    nvidia.com/gpu.product:   NVIDIA-A30
status:
  allocatable: {cpu: "8", memory: 8Gi, nvidia.com/gpu: 1}
)",
               6, 31, "metadata.labels.nvidia.com/gpu.product",
               "node a30-1: unknown GPU model 'NVIDIA-A30': nvidia.com/gpu.product matches no catalog model (T4, L4, L40S, "
               "A10G, A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200-180GB, V100-16GB, V100-32GB, A40, or one of "
               "their product labels)");
  // Inside a List the path has the item prefix.
  expect_error(R"({"kind": "List", "items": [
  {"kind": "Node", "metadata": {"name": "v"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi"}}},
  {"kind": "Node", "metadata": {"name": "w", "labels": {"nvidia.com/gpu.product": "Tesla-P100-SXM2-16GB"}},
   "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "nvidia.com/gpu": "8"}}}]}
)",
               3, 83, "items[1].metadata.labels.nvidia.com/gpu.product", "unknown GPU model 'Tesla-P100-SXM2-16GB'");
  // Without GPUs the label is not checked; a GPU node without a product keeps an empty model.
  const K8sObjects k = setup(node_doc("cpu", {"nvidia.com/gpu.product: NVIDIA-A30"}, "") +
                             node_doc("anon", {}, "nvidia.com/gpu: 2") +
                             node_doc("t4", {"nvidia.com/gpu.product: Tesla-T4"}, "nvidia.com/gpu: 1"));
  EXPECT_EQ(node(k, "cpu").gpu_model, "NVIDIA-A30");
  EXPECT_EQ(node(k, "anon").gpu_model, "");
  EXPECT_EQ(node(k, "t4").gpu_model, "T4");
}

TEST(DeviceSetup, CountLabelOnlyCountsForMig) {
  // Without MIG the allocatable count wins (two GPUs unhealthy, say); a bad label is still an error.
  const K8sObjects k = setup(node_doc("x", {kT4, "nvidia.com/gpu.count: \"8\""}, "nvidia.com/gpu: 6"));
  EXPECT_EQ(k.nodes[0].gpu_count, 6);

  expect_error(node_doc("x", {kT4, "nvidia.com/gpu.count: many"}, "nvidia.com/gpu: 1"), 7, 27,
               "metadata.labels.nvidia.com/gpu.count", "label nvidia.com/gpu.count is 'many', expected an integer in [0, 16]");
}

// ---------------------------------------------------------------------------------------- examples

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / name).string();
}

TEST(DeviceSetup, ExamplePoolsWithTheirConfigs) {
  // Pool nodes: the configs selected by their labels agree with the pools' own set-up.
  std::vector<Node> nodes;
  for (const char* file : {"pools.yaml", "mig-h100.yaml"})
    for (const NodePool& p : read_pool_file(example(file)))
      for (Node& n : expand_pool(p)) nodes.push_back(std::move(n));
  const K8sObjects k = read_k8s_inputs({example("time-slicing.yaml"), example("mig-h100.yaml"),
                                        example("priorityclasses.yaml"), example("workloads.yaml")});
  const DeviceSetupReport report = apply_device_setup(nodes, k.time_slicing_configs, k.mig_parted_configs);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();
  size_t sliced = 0, mig = 0;
  for (const Node& n : nodes) {
    if (n.name.starts_with("inference-t4")) {
      ++sliced;
      EXPECT_EQ(*n.time_slicing, (TimeSlicing{4, true, true})) << n.name;  // the `any` entry renames
    } else {
      EXPECT_FALSE(n.time_slicing) << n.name;  // the `default` entry: no sharing
    }
    if (n.name.starts_with("h100-mig")) {
      ++mig;
      EXPECT_EQ(n.mig.size(), 8u);
    } else {
      EXPECT_TRUE(n.mig.empty()) << n.name;
    }
  }
  EXPECT_EQ(sliced, 2u);
  EXPECT_EQ(mig, 2u);

  // The workloads' device pods land where their devices are; a 2-replica shared request does not fit
  // (failRequestsGreaterThanOne), nor does anything beyond the pools' capacity.
  ClusterState state(nodes);
  std::vector<uint32_t> ranks(state.node_count());
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<uint32_t>(i);
  sched::PolicyContext ctx;
  ctx.gpu_models = state.gpu_models();
  // Resource filters only (make_policy has no taint filter): every device pod competes for every node.
  sched::Scheduler scheduler(sched::make_policy("leastallocated", ctx), ranks);
  GoRand rng(1);
  int mig_pods = 0, shared_pods = 0;
  for (const Pod& p : k.pods) {
    if (!p.has_device_requests()) continue;
    const sched::ScheduleResult r = scheduler.schedule_one(p, state, rng);
    ASSERT_TRUE(r.scheduled()) << p.name << ": " << gpufleet::testing::fit_error_of(r, p, state);
    const Node& n = state.node(r.node);
    if (!p.mig_requests.empty()) {
      ++mig_pods;
      EXPECT_TRUE(n.name.starts_with("h100-mig")) << p.name << " on " << n.name;
      EXPECT_EQ(r.mig_profiles(), p.mig_requests[0].profile);
    } else {
      ++shared_pods;
      EXPECT_TRUE(n.name.starts_with("inference-t4")) << p.name << " on " << n.name;
      EXPECT_EQ(r.shared_replicas.size(), 1u);
    }
  }
  EXPECT_EQ(mig_pods, 9);     // mig-llm-13b x2 (3g.40gb), mig-batch-scoring x7 (1g.10gb)
  EXPECT_EQ(shared_pods, 4);  // embeddings x4 (1 replica each)
}

}  // namespace
}  // namespace gpufleet::io
