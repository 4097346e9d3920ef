// The plan's pools file and Karpenter NodePools for a plan with a CPU-only pool: the GPU pools'
// taints and the ExtendedResourceToleration plugin survive the round trip through `simulate
// --pools`'s reader, and the NodePools carry the taint and a CPU limit for the CPU pool.
#include <gtest/gtest.h>

#include <string>

#include "plan/candidate.h"
#include "readers/sim/sim_pools.h"
#include "report/plan_output.h"

namespace gpufleet {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

plan::PlanCandidate candidate_with_cpu_pool() {
  plan::CostBoundOption t4;
  t4.instance_type = "g4dn.metal";
  t4.zone = "us-east-1a";
  t4.gpu_model = "T4";
  t4.gpus = 8;
  t4.cpu_milli = 95690;
  t4.memory_bytes = 369 * kGiB;
  t4.on_demand_usd_per_hour = 7.824;
  plan::CostBoundOption c7i;
  c7i.instance_type = "c7i.24xlarge";
  c7i.zone = "us-east-1a";
  c7i.cpu_milli = 95690;
  c7i.memory_bytes = 181 * kGiB;
  c7i.on_demand_usd_per_hour = 4.284;
  plan::PlanCandidate c;
  c.pools = {plan::PoolChoice{t4, 0, false, 5, {}}, plan::PoolChoice{c7i, 0, false, 3, {}}};
  return c;
}

TEST(PlanOutput, PoolsFileKeepsTaintsAndAdmission) {
  const sim::ClusterConfig cluster = plan::candidate_cluster(candidate_with_cpu_pool());
  const std::string yaml = io::sim_pools_yaml(cluster, "test");
  EXPECT_NE(yaml.find("admissionPlugins: [ExtendedResourceToleration]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  taints:\n  - {key: \"nvidia.com/gpu\", effect: NoSchedule}\n"), std::string::npos) << yaml;
  const sim::ClusterConfig back = io::parse_sim_cluster_text(yaml, "pools.yaml");
  EXPECT_TRUE(back.extended_resource_toleration);
  ASSERT_EQ(back.pools.size(), 2u);
  ASSERT_EQ(back.pools[0].pool.taints.size(), 1u);
  EXPECT_EQ(back.pools[0].pool.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(back.pools[0].pool.taints[0].effect, "NoSchedule");
  EXPECT_EQ(back.pools[1].pool.gpus_per_node, 0);
  EXPECT_TRUE(back.pools[1].pool.taints.empty());
  EXPECT_EQ(back.pools[1].pool.cpu_milli, 95690);
}

TEST(PlanOutput, KarpenterNodePoolsCarryTheTaint) {
  const std::string y = io::karpenter_node_pools_yaml(plan::candidate_cluster(candidate_with_cpu_pool()), "default");
  EXPECT_NE(y.find("      taints:\n      - {key: \"nvidia.com/gpu\", effect: NoSchedule}\n"), std::string::npos) << y;
  EXPECT_NE(y.find("  limits:\n    nvidia.com/gpu: 40\n"), std::string::npos) << y;  // 5 nodes x 8 GPUs
  EXPECT_NE(y.find("  limits:\n    cpu: 287070m\n"), std::string::npos) << y;         // 3 nodes x 95690m
}

}  // namespace
}  // namespace gpufleet
