// The Karpenter NodePool reader (io/karpenter_nodepool.h): offerings from NodePool requirements and
// an InstanceTypes document, slots from limits, and the reader's errors with their positions.
#include <gtest/gtest.h>

#include <string>

#include "expect_input_error.h"
#include "io/karpenter_nodepool.h"
#include "io/sim_pools.h"
#include "model/resources.h"

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
  EXPECT_EQ(c.node_pools[0].budgets[0], (IntOrPercent{20, true}));
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

}  // namespace
}  // namespace gpufleet
