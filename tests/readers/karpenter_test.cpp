// The Karpenter NodePool reader (readers/karpenter/karpenter_nodepool.h): offerings from NodePool requirements and
// an InstanceTypes document, slots from limits, and the reader's errors with their positions.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "support/expect_input_error.h"
#include "readers/karpenter/karpenter_nodepool.h"
#include "readers/sim/sim_pools.h"
#include "model/resources.h"
#include "inputs/sim/cluster_config.h"
#include "util/input_error.h"

namespace gpufleet {
namespace {

const std::string kTypes = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools: []
---
apiVersion: sim.gpufleet.io/v1
kind: InstanceTypes
instanceTypes:
  - name: g6.xlarge
    gpu: {model: L4, count: 1}
    cpu: "4"
    memory: 16Gi
    offerings:
      - {zone: z1, onDemand: 0.8, spot: 0.3}
      - {zone: z2, onDemand: 0.8}
---
)";

sim::ClusterConfig parse(const std::string& node_pool) { return io::parse_sim_cluster_text(kTypes + node_pool, "pools.yaml"); }

TEST(KarpenterNodePool, ExpandsOneOfferingPerInstanceTypeZoneAndCapacityType) {
  // z1 offers on-demand and spot, z2 on-demand only: 3 offerings. Limits nvidia.com/gpu 4 and cpu 8
  // (2 nodes of 4 vCPU): slots = min(4 / 1, 8000 / 4000) = 2.
  const sim::ClusterConfig c = parse(R"(apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  weight: 10
  limits: {cpu: "8", nvidia.com/gpu: "4"}
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 5m, budgets: [{nodes: "20%"}, {nodes: "1"}]}
)");
  ASSERT_EQ(c.node_pools.size(), 1u);
  EXPECT_EQ(c.node_pools[0].weight, 10);
  EXPECT_TRUE(c.node_pools[0].consolidate_when_empty_only);
  EXPECT_EQ(c.node_pools[0].consolidate_after_s, 300);
  ASSERT_EQ(c.node_pools[0].budgets.size(), 2u);
  EXPECT_EQ(c.node_pools[0].budgets[0].nodes, (IntOrPercent{20, true}));
  ASSERT_EQ(c.node_pools[0].limits.size(), 2u);
  EXPECT_EQ(c.node_pools[0].limits[0], (std::pair<std::string, int64_t>{"cpu", 8000}));
  ASSERT_EQ(c.pools.size(), 3u);
  EXPECT_EQ(c.pools[0].pool.name, "gpu-g6-xlarge-z1-od");
  EXPECT_EQ(c.pools[1].pool.name, "gpu-g6-xlarge-z1-spot");
  EXPECT_EQ(c.pools[2].pool.name, "gpu-g6-xlarge-z2-od");
  EXPECT_EQ(c.pools[1].settings.capacity_type, sim::CapacityType::kSpot);
  EXPECT_EQ(*c.pools[1].pool.spot_usd_per_hour, 0.3);
  EXPECT_EQ(c.pools[0].pool.max_nodes, 2);
  EXPECT_EQ(c.pools[0].pool.cpu_milli, 4000);
  EXPECT_EQ(c.pools[0].pool.memory_bytes, 16 * 1024 * kBytesPerMib);
  EXPECT_EQ(c.pools[0].settings.karpenter_node_pool, "gpu");
  EXPECT_EQ(c.pools[0].settings.provision_s, 60);
  ASSERT_EQ(c.pools[0].pool.taints.size(), 1u);
}

TEST(KarpenterNodePool, WithoutACapacityTypeRequirementOnlyOnDemand) {
  const sim::ClusterConfig c = parse(R"(apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
        - {key: topology.kubernetes.io/zone, operator: NotIn, values: [z2]}
)");
  ASSERT_EQ(c.pools.size(), 1u);
  EXPECT_EQ(c.pools[0].pool.name, "gpu-g6-xlarge-z1-od");
  EXPECT_EQ(c.pools[0].pool.max_nodes, io::kDefaultOfferingSlots);
}

// kTypes has 15 lines; the NodePool starts on line 16.
TEST(KarpenterNodePool, Errors) {
  using testing::expect_input_error;
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  limits: {cpu: \"-8\"}\n"); },
                     "pools.yaml", 20, 17, "spec.limits.cpu", "");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  limits: {pods: \"8\"}\n"); },
                     "pools.yaml", 20, 18, "spec.limits.pods", "unknown resource 'pods'");
  expect_input_error(
      [] {
        parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      requirements:\n"
              "        - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}\n");
      },
      "pools.yaml", 23, 74, "spec.template.spec.requirements[0].values[0]", "unknown instance type 'p5.48xlarge'");
  expect_input_error(
      [] {
        parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      requirements:\n"
              "        - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n");
      },
      "pools.yaml", 23, 17, "spec.template.spec.requirements[0].key", "unknown key 'kubernetes.io/arch'");
}


// Template labels and taints reach the offering pools (so nodeSelectors and tolerations act on
// them); the checks of metadata.name, requirements and taints.
TEST(KarpenterNodePool, TemplateLabelsAndTaintsReachThePools) {
  const sim::ClusterConfig c = parse(
      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: ml.gpu}\nspec:\n  template:\n"
      "    metadata: {labels: {team: ml}}\n    spec:\n      taints: [{key: dedicated, value: ml, effect: PreferNoSchedule}]\n");
  ASSERT_EQ(c.pools.size(), 2u);
  EXPECT_EQ(c.pools[0].pool.name, "ml-gpu-g6-xlarge-z1-od");  // '.' of the subdomain as '-'
  const Labels want = {{"topology.kubernetes.io/zone", "z1"}, {"karpenter.sh/nodepool", "ml.gpu"}, {"team", "ml"}};
  EXPECT_EQ(c.pools[0].pool.labels, want);
  ASSERT_EQ(c.pools[1].pool.taints.size(), 1u);
  EXPECT_EQ(c.pools[1].pool.taints[0].key, "dedicated");
  EXPECT_EQ(c.pools[1].pool.taints[0].value, "ml");
  EXPECT_EQ(c.pools[1].pool.taints[0].effect, "PreferNoSchedule");
}

TEST(KarpenterNodePool, NameRequirementTaintAndLabelErrors) {
  using testing::expect_input_error;
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [spot], minValues: 2}\n"); },
                     "pools.yaml", 23, 86, "spec.template.spec.requirements[0].minValues", "minValues is not modelled by gpufleet");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: topology.kubernetes.io/zone, operator: Exists, values: [z1]}\n"); },
                     "pools.yaml", 23, 72, "spec.template.spec.requirements[0].values", "operator Exists takes no values");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      taints: [{key: a, effect: Sometimes}]\n"); },
                     "pools.yaml", 22, 33, "spec.template.spec.taints[0].effect", "unknown taint effect 'Sometimes'");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: GPU_pool}\nspec: {}\n"); },
                     "pools.yaml", 18, 18, "metadata.name", "is not a DNS-1123 subdomain");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\nspec: {}\n"); },
                     "pools.yaml", 18, 18, "metadata.name", "DNS labels of at most 63 characters");
  expect_input_error([] { parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    metadata: {labels: {karpenter.sh/nodepool: x}}\n"); },
                     "pools.yaml", 21, 48, "spec.template.metadata.labels.karpenter.sh/nodepool", "set by Karpenter");
}

TEST(KarpenterNodePool, DuplicateZoneOrInstanceType) {
  using testing::expect_input_error;
  const std::string types = "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools: []\n---\napiVersion: sim.gpufleet.io/v1\nkind: InstanceTypes\ninstanceTypes:\n"
                            "  - name: g6.xlarge\n    cpu: \"4\"\n    memory: 16Gi\n    offerings:\n"
                            "      - {zone: z1, onDemand: 0.8}\n      - {zone: z1, spot: 0.3}\n";
  expect_input_error([&] { io::parse_sim_cluster_text(types, "pools.yaml"); }, "pools.yaml", 13, 16,
                     "instanceTypes[0].offerings[1].zone", "duplicate zone 'z1' in the offerings of instance type 'g6.xlarge'");
  expect_input_error(
      [] {
        parse("apiVersion: sim.gpufleet.io/v1\nkind: InstanceTypes\ninstanceTypes:\n  - name: g6.xlarge\n    cpu: \"4\"\n"
              "    memory: 16Gi\n");
      },
      "pools.yaml", 19, 11, "instanceTypes[0].name", "duplicate instance type 'g6.xlarge'");
}

// spec.disruption: the policy, consolidateAfter, and budgets with their reasons; allowed_disruptions
// takes the smallest budget that applies, percentages rounded up (kubernetes-sigs/karpenter
// pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason).
TEST(KarpenterNodePool, DisruptionBudgets) {
  const sim::ClusterConfig c = parse(
      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  disruption:\n    consolidationPolicy: WhenEmpty\n"
      "    consolidateAfter: 5m\n    budgets:\n      - {nodes: \"20%\"}\n"
      "      - {nodes: \"0\", reasons: [Underutilized], schedule: \"0 9 * * *\", duration: 8h}\n      - {reasons: [Drifted]}\n");
  ASSERT_EQ(c.node_pools.size(), 1u);
  const sim::KarpenterNodePool& np = c.node_pools[0];
  EXPECT_TRUE(np.consolidate_when_empty_only);
  EXPECT_DOUBLE_EQ(np.consolidate_after_s, 300);
  ASSERT_EQ(np.budgets.size(), 3u);
  EXPECT_EQ(np.budgets[0].nodes, (IntOrPercent{20, true}));
  EXPECT_TRUE(np.budgets[0].reasons.empty());
  EXPECT_EQ(np.budgets[1].nodes, (IntOrPercent{0, false}));
  EXPECT_EQ(np.budgets[1].reasons, std::vector<sim::KarpenterDisruptionReason>{sim::KarpenterDisruptionReason::kUnderutilized});
  EXPECT_TRUE(np.budgets[1].scheduled);
  EXPECT_EQ(np.budgets[2].nodes, (IntOrPercent{10, true}));  // the CRD's default
  using R = sim::KarpenterDisruptionReason;
  EXPECT_EQ(sim::allowed_disruptions(np, 3, R::kEmpty), 1);          // ceil(0.2 x 3) = 1; the Drifted budget does not apply
  EXPECT_EQ(sim::allowed_disruptions(np, 3, R::kUnderutilized), 0);  // the "0" budget (always active here)
  EXPECT_EQ(sim::allowed_disruptions(np, 11, R::kEmpty), 3);         // ceil(2.2)
  EXPECT_EQ(sim::allowed_disruptions(np, 0, R::kEmpty), 0);

  sim::KarpenterNodePool none;  // no budgets: the implicit 10%
  EXPECT_EQ(sim::allowed_disruptions(none, 3, R::kUnderutilized), 1);   // ceil(0.3)
  EXPECT_EQ(sim::allowed_disruptions(none, 10, R::kUnderutilized), 1);
  EXPECT_EQ(sim::allowed_disruptions(none, 25, R::kEmpty), 3);          // ceil(2.5)
  sim::KarpenterNodePool drift_only;
  drift_only.budgets.push_back({IntOrPercent{0, false}, {R::kDrifted}, false});
  EXPECT_EQ(sim::allowed_disruptions(drift_only, 5, R::kEmpty), std::numeric_limits<int32_t>::max());

  const sim::ClusterConfig never =
      parse("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  disruption: {consolidateAfter: Never}\n");
  EXPECT_TRUE(std::isinf(never.node_pools[0].consolidate_after_s));
  EXPECT_FALSE(never.node_pools[0].consolidate_when_empty_only);
  EXPECT_TRUE(never.node_pools[0].budgets.empty());
}

TEST(KarpenterNodePool, DisruptionErrors) {
  using testing::expect_input_error;
  const std::string head = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n";
  expect_input_error([&] { parse(head + "  disruption: {budgets: [{nodes: \"150%\"}]}\n"); }, "pools.yaml", 20, 34,
                     "spec.disruption.budgets[0].nodes", "'150%' is not a node count or percentage");
  expect_input_error([&] { parse(head + "  disruption: {budgets: [{nodes: \"-1\"}]}\n"); }, "pools.yaml", 20, 34,
                     "spec.disruption.budgets[0].nodes", "'-1' is not a node count");
  expect_input_error([&] { parse(head + "  disruption: {budgets: [{nodes: \"1\", reasons: [Expired]}]}\n"); }, "pools.yaml", 20, 49,
                     "spec.disruption.budgets[0].reasons[0]", "unknown disruption reason 'Expired'");
  expect_input_error([&] { parse(head + "  disruption: {budgets: [{nodes: \"1\", schedule: \"@daily\"}]}\n"); }, "pools.yaml", 20, 26,
                     "spec.disruption.budgets[0]", "schedule and duration go together");
  expect_input_error([&] { parse(head + "  disruption: {consolidateAfter: nans}\n"); }, "pools.yaml", 20, 34,
                     "spec.disruption.consolidateAfter", "'nans' is not a duration");
  expect_input_error([&] { parse(head + "  disruption: {consolidateAfter: 1e300s}\n"); }, "pools.yaml", 20, 34,
                     "spec.disruption.consolidateAfter", "is not a duration of at most");
  std::string many = head + "  disruption:\n    budgets:\n";
  for (int i = 0; i < 51; ++i) many += "      - {nodes: \"1\"}\n";
  expect_input_error([&] { parse(many); }, "pools.yaml", 22, 7, "spec.disruption.budgets", "51 budgets (at most 50)");
}

// Offerings count against the file's total of pool nodes (readers/k8s/pool_file.h kMaxTotalPoolNodes): 800
// zones x 256 slots = 204,800 nodes.
TEST(KarpenterNodePool, OfferingsCountAgainstTheTotalOfPoolNodes) {
  std::string doc = "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools: []\n---\napiVersion: sim.gpufleet.io/v1\nkind: InstanceTypes\n"
                    "instanceTypes:\n  - name: t\n    gpu: {model: L4, count: 1}\n    cpu: \"1\"\n    memory: 1Gi\n    offerings:\n";
  for (int z = 0; z < 800; ++z) doc += "      - {zone: z" + std::to_string(z) + ", onDemand: 1}\n";
  doc += "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: huge}\nspec:\n  limits: {cpu: \"1000000\"}\n";
  testing::expect_input_error([&] { io::parse_sim_cluster_text(doc, "pools.yaml"); }, "pools.yaml", 816, 18, "metadata.name",
                              "above the maximum of 200000");
}

// The fuzz target's seed corpus (fuzz/corpus/karpenter_nodepool_fuzz): valid-* files are read,
// bad-* files are refused with an InputError.
TEST(KarpenterNodePool, FuzzSeeds) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "karpenter_nodepool_fuzz";
  int valid = 0, bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto read = [&] {
      io::detail::Source src;
      src.file = name;
      sim::ClusterConfig config;
      io::read_karpenter_documents(io::detail::load_documents(text, src), src, config);
      return config;
    };
    if (name.rfind("valid-", 0) == 0) {
      const sim::ClusterConfig c = read();
      EXPECT_FALSE(c.node_pools.empty()) << name;
      ++valid;
    } else {
      EXPECT_THROW(read(), InputError) << name;
      ++bad;
    }
  }
  EXPECT_EQ(valid, 2);
  EXPECT_EQ(bad, 5);
}

}  // namespace
}  // namespace gpufleet
