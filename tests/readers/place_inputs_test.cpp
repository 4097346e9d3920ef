// Reading `gpufleet place` inputs (readers/k8s/place_inputs.h): errors found after the readers, across files
// (node names two pools share, device set-up of pool nodes), name the file, line, column and field.
#include "support/expect_input_error.h"
#include "readers/k8s/place_inputs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/device_setup.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/pool_file.h"
#include "util/input_error.h"
#include "support/test_support.h"

namespace gpufleet::io {
namespace {

class PlaceInputsDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufleet_place_inputs_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // read_place_inputs must throw an InputError at file:line:column naming `field`, whose message
  // contains `fragment`.
  void expect_error(const std::vector<std::string>& cluster, const std::vector<std::string>& workload,
                    const std::string& file, int line, int column, const std::string& field, const std::string& fragment) {
    testing::expect_input_error([&] { read_place_inputs(cluster, workload); }, file, line, column, field, fragment);
  }
  std::filesystem::path dir_;
};

// A pool file with one pool `name` of `nodes` A10G nodes and extra pool lines (e.g. labels).
std::string pool_file(const std::string& name, int nodes, const std::string& extra = "") {
  return "apiVersion: gpufleet.io/v1\n"
         "kind: NodePoolSet\n"
         "pools:\n"
         "- name: " + name + "\n"
         "  gpu: {model: A10G, count: 1}\n"
         "  cpu: \"8\"\n"
         "  memory: 32Gi\n"
         "  nodes: " + std::to_string(nodes) + "\n"
         "  prices: {onDemand: 1.0}\n" + extra;
}

TEST(PoolFileSources, PositionsOfEachPoolsNameAndLabels) {
  std::vector<K8sNodeSource> sources;
  const std::vector<NodePool> pools = parse_pool_text(
      pool_file("a", 1) + "- name: b\n  cpu: \"4\"\n  memory: 8Gi\n  nodes: 1\n  prices: {onDemand: 0.1}\n"
                          "  labels:\n    team: x\n    nvidia.com/mig.config: all-1g.10gb\n",
      "p.yaml", &sources);
  ASSERT_EQ(pools.size(), 2u);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].node, "a");
  EXPECT_TRUE(sources[0].pool);
  EXPECT_EQ(sources[0].name.file, "p.yaml");
  EXPECT_EQ(sources[0].name.line, 4);
  EXPECT_EQ(sources[0].name.column, 9);
  EXPECT_EQ(sources[0].name.field, "pools[0].name");
  EXPECT_TRUE(sources[0].labels.empty());
  EXPECT_EQ(sources[1].node, "b");
  EXPECT_EQ(sources[1].name.line, 10);
  ASSERT_EQ(sources[1].labels.count("nvidia.com/mig.config"), 1u);
  const SourcePosition& label = sources[1].labels.at("nvidia.com/mig.config");
  EXPECT_EQ(label.line, 17);
  EXPECT_EQ(label.column, 28);
  EXPECT_EQ(label.field, "pools[1].labels.nvidia.com/mig.config");
}

TEST_F(PlaceInputsDir, NodeNameTwoPoolFilesShareIsAnErrorAtTheSecondPoolsName) {
  const std::string a = write("dupA.yaml", pool_file("dev-a10g", 2));
  const std::string b = write("dupB.yaml", "# the same pool again\n" + pool_file("dev-a10g", 1));
  expect_error({a, b}, {}, b, 5, 9, "pools[0].name",
               "node name 'dev-a10g-0' of pool dev-a10g is already a node of pool dev-a10g in " + a);
}

// The device set-up of a pool node names the pool file, the line of the label and the field.
TEST_F(PlaceInputsDir, PoolLabelNamingAMissingConfigIsAnErrorAtTheLabel) {
  const std::string mig = write("mig.yaml",
                                "version: v1\nmig-configs:\n  all-1g.10gb:\n  - devices: all\n    mig-enabled: true\n"
                                "    mig-devices: {1g.10gb: 7}\n");
  const std::string pools = write("pools.yaml", "apiVersion: gpufleet.io/v1\n"
                                                "kind: NodePoolSet\n"
                                                "pools:\n"
                                                "- name: h100\n"
                                                "  gpu: {model: H100-80GB, count: 8}\n"
                                                "  cpu: \"96\"\n"
                                                "  memory: 1Ti\n"
                                                "  nodes: 2\n"
                                                "  prices: {onDemand: 1.0}\n"
                                                "  labels:\n"
                                                "    team: x\n"
                                                "    nvidia.com/mig.config: nosuch\n");
  expect_error({pools, mig}, {}, pools, 12, 28, "pools[0].labels.nvidia.com/mig.config",
               "node h100-0: mig-parted config 'nosuch' is not among the inputs");

  const std::string ts = write("ts.yaml", "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                          "    - {name: nvidia.com/gpu, replicas: 4}\n");
  const std::string l4 = write("l4.yaml", pool_file("inference-l4", 1, "  labels: {nvidia.com/device-plugin.config: nosuch}\n"));
  expect_error({l4, ts}, {}, l4, 10, 45, "pools[0].labels.nvidia.com/device-plugin.config",
               "node inference-l4-0: device-plugin config 'nosuch' is not among the inputs");
}

// Giving pool nodes their pool's positions does not change how they are set up: the examples' pools
// come out as expand_pool and apply_device_setup without positions make them.
TEST(PlaceInputs, PoolNodesWithPositionsAreSetUpAsWithout) {
  const auto example = [](const char* name) {
    return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / name).string();
  };
  const std::vector<std::string> cluster = {example("pools.yaml"), example("mig-h100.yaml"), example("time-slicing.yaml")};
  const PlaceInputs in = read_place_inputs(cluster, {});
  std::vector<Node> expected;
  for (const char* file : {"pools.yaml", "mig-h100.yaml"})
    for (const NodePool& p : read_pool_file(example(file)))
      for (Node& n : expand_pool(p)) expected.push_back(std::move(n));
  const K8sObjects k = read_k8s_inputs(cluster);
  apply_device_setup(expected, k.time_slicing_configs, k.mig_parted_configs);
  ASSERT_EQ(in.input.nodes.size(), expected.size());
  bool shared = false, mig = false;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Node& a = in.input.nodes[i];
    const Node& b = expected[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.gpu_count, b.gpu_count) << a.name;
    EXPECT_EQ(a.gpu_model, b.gpu_model) << a.name;
    EXPECT_EQ(a.time_slicing, b.time_slicing) << a.name;
    EXPECT_EQ(a.mig, b.mig) << a.name;
    shared |= a.time_slicing.has_value();
    mig |= !a.mig.empty();
  }
  EXPECT_TRUE(shared);
  EXPECT_TRUE(mig);
}

}  // namespace
}  // namespace gpufleet::io

namespace gpufleet::io {
namespace {

// A pools file whose simulator settings name ExtendedResourceToleration: `place` gives the GPU pod
// the plugin's toleration (and the pod without GPUs none), as the API server would.
TEST_F(PlaceInputsDir, TheAdmissionPluginOfThePoolsFileHoldsForPlace) {
  const std::string pools_text = "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n"
                                 "- name: gpu\n  gpu: {model: L4, count: 1}\n  cpu: \"4\"\n  memory: 16Gi\n  nodes: 1\n"
                                 "  taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n  prices: {onDemand: 1.0}\n";
  const std::string workload = write("w.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n"
                                               "  - name: c\n    resources: {requests: {cpu: \"1\", nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}\n"
                                               "---\napiVersion: v1\nkind: Pod\nmetadata: {name: etl}\nspec:\n  containers:\n"
                                               "  - name: c\n    resources: {requests: {cpu: \"1\"}}\n");
  const auto tolerations_of = [&](const std::string& settings) {
    const std::string pools = write("pools.yaml", pools_text + settings);
    const PlaceInputs in = read_place_inputs({pools}, {workload});
    std::vector<size_t> counts;
    for (const Pod& p : in.input.pods) counts.push_back(p.constraints.tolerations.size());
    return std::make_pair(in.input.pods, counts);
  };
  const auto [with, counts] = tolerations_of("---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n"
                                             "admissionPlugins: [ExtendedResourceToleration]\n");
  ASSERT_EQ(with.size(), 2u);
  ASSERT_EQ(counts, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(with[0].constraints.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(with[0].constraints.tolerations[0].operator_, "Exists");
  EXPECT_EQ(with[0].constraints.tolerations[0].effect, "NoSchedule");
  // Without the plugin, no toleration.
  EXPECT_EQ(tolerations_of("").second, (std::vector<size_t>{0, 0}));
}

}  // namespace
}  // namespace gpufleet::io
