// MPS as the NVIDIA device plugin offers it (sharing.mps; model/node.h GpuSharingStrategy): the
// device-plugin config and GFD labels applied to Nodes (readers/k8s/device_setup.h), the pool key `mps`
// (readers/k8s/pool_file.h), placement with each pod's MPS share (place/place_workload.h), chargeback of a
// replica (sim/rules/cost.h), and the report of a node whose advertised GPU count disagrees with its labels
// (readers/k8s/device_setup.h rule 5). Values are hand-computed in the comments.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/expect_input_error.h"
#include "readers/k8s/device_setup.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "report/place_output.h"
#include "readers/k8s/pool_file.h"
#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "place/place_workload.h"
#include "sim/rules/cost.h"

namespace gpufleet {
namespace {

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "mps" / name).string();
}

io::K8sObjects setup(const std::string& text, io::DeviceSetupReport* report = nullptr) {
  io::K8sObjects k = io::parse_k8s_text(text, "in.yaml");
  io::DeviceSetupReport r = io::apply_device_setup(k);
  if (report != nullptr) *report = std::move(r);
  return k;
}

const std::string kMpsConfig = R"(kind: ConfigMap
metadata: {name: mps-config}
data:
  mps-4: |-
    version: v1
    sharing:
      mps:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
)";

// An 8-GPU A100-SXM4-80GB node labelled by GFD for MPS 4 ways, advertising `advertised` nvidia.com/gpu.
std::string mps_node(const std::string& name, int advertised, const std::string& extra_label = "") {
  return "---\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-SHARED\n    nvidia.com/gpu.count: \"8\"\n"
         "    nvidia.com/gpu.replicas: \"4\"\n    nvidia.com/gpu.sharing-strategy: mps\n" +
         extra_label + "status:\n  allocatable: {cpu: \"96\", memory: 1000Gi, nvidia.com/gpu: \"" + std::to_string(advertised) + "\"}\n";
}

TEST(Mps, EightGpusFourReplicasAdvertise32) {
  io::DeviceSetupReport report;
  const io::K8sObjects k = setup(kMpsConfig + mps_node("a", 32, "    nvidia.com/device-plugin.config: mps-4\n"), &report);
  ASSERT_EQ(k.time_slicing_configs.size(), 1u);
  EXPECT_EQ(k.time_slicing_configs[0].strategy, GpuSharingStrategy::kMps);
  EXPECT_TRUE(k.time_slicing_configs[0].fail_requests_greater_than_one);  // the device plugin's MPS default
  const Node& n = k.nodes[0];
  EXPECT_EQ(n.gpu_count, 8);  // 32 advertised / 4 replicas
  ASSERT_TRUE(n.time_slicing);
  EXPECT_EQ(*n.time_slicing, (TimeSlicing{4, false, true, GpuSharingStrategy::kMps}));
  EXPECT_TRUE(report.count_mismatches.empty());
  EXPECT_TRUE(report.warnings.empty());
  const ClusterState state(k.nodes);
  EXPECT_EQ(state.replicas_free(0), 32);
  // 81920 MiB / 4 = 20480 MiB and 100 / 4 = 25% per client.
  EXPECT_EQ(mps_pinned_device_mem_limit_mib(81920, 4), 20480);
  EXPECT_EQ(mps_active_thread_percentage(4), 25);
  EXPECT_EQ(mps_pinned_device_mem_limit_mib(23034, 4), 5758);  // L4: floor(23034 / 4)
  EXPECT_EQ(mps_active_thread_percentage(3), 33);
}

TEST(Mps, RenamedAndExplicitlyRelaxed) {
  // renameByDefault: the replicas are nvidia.com/gpu.shared (8 GPUs x 4 = 32); an explicit
  // failRequestsGreaterThanOne: false is honoured (api/config/v1/config.go only defaults it).
  const io::K8sObjects k = setup(R"(version: v1
sharing:
  mps:
    renameByDefault: true
    failRequestsGreaterThanOne: false
    resources:
    - {name: nvidia.com/gpu, replicas: 4}
---
kind: Node
metadata:
  name: r
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-SHARED, nvidia.com/gpu.count: "8"}
status: {allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu.shared: "32"}}
)");
  EXPECT_EQ(k.nodes[0].gpu_count, 8);
  EXPECT_EQ(*k.nodes[0].time_slicing, (TimeSlicing{4, true, false, GpuSharingStrategy::kMps}));
  const ClusterState state(k.nodes);
  EXPECT_EQ(state.replicas_free(0), 32);
}

TEST(Mps, FromFeatureDiscoveryLabelsWithoutAConfig) {
  const io::K8sObjects k = setup(mps_node("a", 32));
  ASSERT_TRUE(k.nodes[0].time_slicing);
  EXPECT_EQ(*k.nodes[0].time_slicing, (TimeSlicing{4, false, true, GpuSharingStrategy::kMps}));
  EXPECT_EQ(k.nodes[0].gpu_count, 8);
}

TEST(Mps, MismatchingNodeIsReportedAndPlacedOnWhatItAdvertises) {
  io::DeviceSetupReport report;
  const io::K8sObjects k = setup(kMpsConfig + mps_node("a", 28, "    nvidia.com/device-plugin.config: mps-4\n"), &report);
  EXPECT_EQ(k.nodes[0].gpu_count, 7);  // 28 / 4: the advertised number, as kube-scheduler counts it
  ASSERT_EQ(report.count_mismatches.size(), 1u);
  const io::NodeCountMismatch& m = report.count_mismatches[0];
  EXPECT_EQ(m.node, "a");
  EXPECT_EQ(m.resource, "nvidia.com/gpu");
  EXPECT_EQ(m.advertised, 28);
  EXPECT_EQ(m.expected, 32);  // 8 GPUs x 4 replicas
  EXPECT_EQ(m.gpus, 8);
  EXPECT_EQ(m.replicas, 4);
  EXPECT_EQ(m.strategy, "mps");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "node a advertises 28 nvidia.com/gpu but its labels imply 32 (8 nvidia.com/gpu.count x "
                                "4 mps replicas); placing on the advertised 28 (7 GPUs)");
  // Without sharing: 6 advertised, 8 labelled.
  io::DeviceSetupReport plain;
  const io::K8sObjects p = setup(R"(kind: Node
metadata: {name: p, labels: {nvidia.com/gpu.product: Tesla-T4, nvidia.com/gpu.count: "8"}}
status: {allocatable: {cpu: "8", memory: 8Gi, nvidia.com/gpu: "6"}}
)",
                                 &plain);
  EXPECT_EQ(p.nodes[0].gpu_count, 6);
  ASSERT_EQ(plain.count_mismatches.size(), 1u);
  EXPECT_EQ(plain.count_mismatches[0].advertised, 6);
  EXPECT_EQ(plain.count_mismatches[0].expected, 8);
  EXPECT_EQ(plain.count_mismatches[0].strategy, "none");
  // A count R does not divide stays an error at the node.
  testing::expect_input_error([&] { setup(kMpsConfig + mps_node("a", 30, "    nvidia.com/device-plugin.config: mps-4\n")); },
                              "in.yaml", 14, 9, "metadata.name", "advertises 30 nvidia.com/gpu, not a multiple of its 4 mps replicas");
}

TEST(Mps, StaleLabelsWarnTheConfigWins) {
  io::DeviceSetupReport report;
  const std::string ts = R"(kind: ConfigMap
metadata: {name: ts}
data:
  ts-4: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - {name: nvidia.com/gpu, replicas: 4}
)";
  const io::K8sObjects k = setup(ts + mps_node("a", 32, "    nvidia.com/device-plugin.config: ts-4\n"), &report);
  EXPECT_EQ(k.nodes[0].time_slicing->strategy, GpuSharingStrategy::kTimeSlicing);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "label nvidia.com/gpu.sharing-strategy=mps disagrees with the device-plugin config's "
                                "sharing strategy time-slicing; the config wins (node a)");
}

TEST(Mps, ConfigErrors) {
  // sharing.mps and sharing.timeSlicing together: mutually exclusive, an error at sharing.mps.
  testing::expect_input_error([] { setup(R"(version: v1
sharing:
  timeSlicing:
    resources:
    - {name: nvidia.com/gpu, replicas: 2}
  mps:
    resources:
    - {name: nvidia.com/gpu, replicas: 4}
)"); },
                              "in.yaml", 7, 5, "sharing.mps", "sharing.timeSlicing and sharing.mps are mutually exclusive");
  // migStrategy mixed with MPS (the device plugin's validateFlags).
  testing::expect_input_error([] { setup(R"(version: v1
flags: {migStrategy: mixed}
sharing:
  mps:
    resources:
    - {name: nvidia.com/gpu, replicas: 4}
)"); },
                              "in.yaml", 2, 22, "flags.migStrategy", "using migStrategy mixed is not supported with MPS");
  // One MPS replica: the device plugin refuses it at config load (NVIDIA/k8s-device-plugin#1548).
  testing::expect_input_error([] { setup(R"(version: v1
sharing:
  mps:
    resources:
    - {name: nvidia.com/gpu, replicas: 1}
)"); },
                              "in.yaml", 5, 40, "sharing.mps.resources[0].replicas", "MPS needs at least 2 replicas");
  // sharing.mps without resources.
  testing::expect_input_error([] { setup("version: v1\nsharing:\n  mps: {}\n"); }, "in.yaml", 3, 8, "sharing.mps",
                              "sharing.mps needs resources");
  // MPS on a node with MIG enabled: an error at the config's sharing.mps.
  const std::string mig = R"(---
kind: ConfigMap
metadata: {name: mig-parted}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-3g:
      - devices: all
        mig-enabled: true
        mig-devices: {"3g.40gb": 2}
)";
  testing::expect_input_error(
      [&] {
        setup(kMpsConfig + mig + mps_node("a", 32, "    nvidia.com/device-plugin.config: mps-4\n    nvidia.com/mig.config: all-3g\n"));
      },
      "in.yaml", 4, 0, "data.mps-4.sharing.mps", "node a: sharing using MPS is not supported for MIG devices");
  // And the engine's own check.
  Node n;
  n.name = "x";
  n.cpu_milli = 1000;
  n.memory_bytes = 1024;
  n.gpu_count = 1;
  n.gpu_model = "A100-80GB";
  n.time_slicing = TimeSlicing{4, false, true, GpuSharingStrategy::kMps};
  n.mig = {GpuMig{true, {}}};
  EXPECT_THROW(ClusterState({n}), std::invalid_argument);
}

TEST(Mps, PoolKey) {
  const auto pools = io::parse_pool_text(R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: l4
  gpu: {model: L4, count: 4}
  cpu: "48"
  memory: 180Gi
  nodes: 1
  prices: {onDemand: 4.6016}
  mps: {replicas: 4}
)",
                                         "p.yaml");
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].time_slicing_replicas, 4);
  EXPECT_EQ(pools[0].gpu_sharing_strategy, GpuSharingStrategy::kMps);
  const std::vector<Node> nodes = expand_pool(pools[0]);
  EXPECT_EQ(*nodes[0].time_slicing, (TimeSlicing{4, false, true, GpuSharingStrategy::kMps}));
  EXPECT_EQ(*find_label(nodes[0].labels, "nvidia.com/gpu.sharing-strategy"), "mps");
  EXPECT_EQ(*find_label(nodes[0].labels, "nvidia.com/gpu.replicas"), "4");
  EXPECT_EQ(ClusterState(nodes).replicas_free(0), 16);

  // Chargeback: one replica is 1/4 of a GPU, two 1/2 (pod_gpus_held, the time-slicing rule).
  Pod one;
  one.num_gpu = 1;
  one.gpu_milli = 1000;
  EXPECT_DOUBLE_EQ(sim::pod_gpus_held(pools[0], one), 0.25);
  Pod two = one;
  two.num_gpu = 2;
  EXPECT_DOUBLE_EQ(sim::pod_gpus_held(pools[0], two), 0.5);

  // One replica is refused, as the device plugin refuses it (NVIDIA/k8s-device-plugin#1548).
  testing::expect_input_error([] {
    io::parse_pool_text("apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- name: l4\n  gpu: {model: L4, count: 4}\n"
                        "  cpu: \"48\"\n  memory: 180Gi\n  nodes: 1\n  prices: {onDemand: 4.6}\n  mps: {replicas: 1}\n", "p.yaml");
  }, "p.yaml", 10, 19, "pools[0].mps.replicas", "");

  const std::string head = "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- name: l4\n  gpu: {model: A100-80GB, count: 4}\n"
                           "  cpu: \"48\"\n  memory: 180Gi\n  nodes: 1\n  prices: {onDemand: 4.6016}\n";
  testing::expect_input_error([&] { io::parse_pool_text(head + "  timeSlicing: {replicas: 2}\n  mps: {replicas: 4}\n", "p.yaml"); },
                              "p.yaml", 11, 8, "pools[0].mps", "MPS and time-slicing are mutually exclusive");
  testing::expect_input_error([&] { io::parse_pool_text(head + "  mig: {\"3g.40gb\": 2}\n  mps: {replicas: 4}\n", "p.yaml"); },
                              "p.yaml", 11, 8, "pools[0].mps", "sharing using MPS is not supported for MIG devices");
  testing::expect_input_error([&] { io::parse_pool_text(head + "  mps: {replicas: 0}\n", "p.yaml"); }, "p.yaml", 10, 19,
                              "pools[0].mps.replicas", "");
}

TEST(Mps, ExamplePlacesOneReplicaPerPodAndRefusesTwo) {
  const io::PlaceInputs in = io::read_place_inputs({example("device-plugin-config.yaml"), example("nodes.yaml")},
                                                   {example("workload.yaml")});
  ASSERT_EQ(in.input.nodes.size(), 2u);
  EXPECT_EQ(in.input.nodes[0].gpu_count, 8);
  EXPECT_EQ(in.input.nodes[1].gpu_count, 7);  // advertises 28
  ASSERT_EQ(in.node_warnings.size(), 1u);
  EXPECT_EQ(in.node_warnings[0].node, "a100-mps-1");
  EXPECT_EQ(in.node_warnings[0].advertised, 28);
  EXPECT_EQ(in.node_warnings[0].expected, 32);
  place::PlaceOptions options;
  options.policy = "gpufleet";
  const place::PlaceResult r = place::place_workload(in.input, options);
  ASSERT_EQ(r.placements.size(), 6u);
  for (const place::Placement& p : r.placements) {
    ASSERT_TRUE(p.mps) << p.pod;
    EXPECT_EQ(p.mps->replicas, 4);
    EXPECT_EQ(p.mps->pinned_device_mem_limit_mib, 20480);  // 81920 MiB / 4
    EXPECT_EQ(p.mps->active_thread_percentage, 25);
    EXPECT_EQ(p.gpus.size(), 1u);
  }
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "serving/big");
  EXPECT_NE(r.pending[0].reason.find("2 node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)"),
            std::string::npos)
      << r.pending[0].reason;
  // 15 GPUs (8 + 7); 6 replicas of 1/4 GPU = 1.5 GPUs = 10%.
  EXPECT_EQ(r.gpu_capacity_milli, 15000);
  EXPECT_EQ(r.gpu_used_milli, 1500);
  const std::string json = io::place_result_json(r, in.warnings, in.node_warnings);
  EXPECT_NE(json.find("\"pinned_device_mem_limit_mib\": 20480"), std::string::npos);
  EXPECT_NE(json.find("\"node_warnings\""), std::string::npos);
  EXPECT_NE(json.find("\"advertised\": 28"), std::string::npos);
}

}  // namespace
}  // namespace gpufleet
