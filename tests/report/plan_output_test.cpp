// The plan's pools file and Karpenter NodePools for a plan with a CPU-only pool: the GPU pools'
// taints and the ExtendedResourceToleration plugin survive the round trip through `simulate
// --pools`'s reader, and the NodePools carry the taint and a CPU limit for the CPU pool. GPU sharing:
// a MIG pool's layout and mig.config label survive the round trip, the mig-parted config of a one-pool
// plan (the exact text), the device plugin's ConfigMap of time-sliced and MPS pools, and both files
// for a plan without such pools.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/plan_test_support.h"
#include "plan/candidate.h"
#include "readers/sim/sim_pools.h"
#include "report/plan_output.h"

namespace gpufleet {
namespace {


plan::PlanCandidate candidate_with_cpu_pool() {
  const plan::CostBoundOption t4 = testing::on_demand_option("g4dn.metal", "T4", 8, 95690, 369, 7.824);
  const plan::CostBoundOption c7i = testing::c7i_on_demand();
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

TEST(PlanOutput, KueueListsTheCpuFlavorFirst) {
  const std::string y = io::kueue_objects_yaml(plan::candidate_cluster(candidate_with_cpu_pool()), "plan");
  const size_t flavors = y.find("    flavors:\n");
  ASSERT_NE(flavors, std::string::npos) << y;
  const size_t cpu = y.find("    - name: c7i-24xlarge\n", flavors), gpu = y.find("    - name: g4dn-metal\n", flavors);
  ASSERT_NE(cpu, std::string::npos) << y;
  ASSERT_NE(gpu, std::string::npos) << y;
  EXPECT_LT(cpu, gpu) << y;
  EXPECT_NE(y.find("      - {name: nvidia.com/gpu, nominalQuota: 0}\n", cpu), std::string::npos) << y;
}

TEST(PlanOutput, KarpenterNodePoolsCarryTheTaint) {
  const std::string y = io::karpenter_node_pools_yaml(plan::candidate_cluster(candidate_with_cpu_pool()), "default");
  EXPECT_NE(y.find("      taints:\n      - {key: \"nvidia.com/gpu\", effect: NoSchedule}\n"), std::string::npos) << y;
  EXPECT_NE(y.find("  limits:\n    nvidia.com/gpu: 40\n"), std::string::npos) << y;  // 5 nodes x 8 GPUs
  EXPECT_NE(y.find("  limits:\n    cpu: 287070m\n"), std::string::npos) << y;         // 3 nodes x 95690m
}

plan::CostBoundOption p4d() { return testing::p4d_on_demand(); }

sim::ClusterConfig one_mig_pool() {
  plan::PlanCandidate c;
  c.pools = {plan::PoolChoice{p4d(), 0, false, 3, {{"3g.20gb", 1}, {"1g.5gb", 4}}}};
  return plan::candidate_cluster(c);
}

TEST(PlanOutput, MigPartedConfigOfAOnePoolPlan) {
  EXPECT_EQ(io::mig_parted_config_yaml(one_mig_pool(), "plan X"),
            "# plan X\n"
            "# nvidia/mig-parted config (github.com/NVIDIA/mig-parted). The GPU Operator's MIG manager applies to each node\n"
            "# the config its nvidia.com/mig.config label names: put this file in the ConfigMap that ClusterPolicy\n"
            "# spec.migManager.config.name names (kubectl create configmap ... --from-file=config.yaml=<this file>).\n"
            "version: v1\n"
            "mig-configs:\n"
            "  p4d-24xlarge-mig:\n"
            "  - devices: all\n"
            "    mig-enabled: true\n"
            "    mig-devices:\n"
            "      \"1g.5gb\": 4\n"
            "      \"3g.20gb\": 1\n");
  // Without MIG pools: a comment, no config.
  EXPECT_EQ(io::mig_parted_config_yaml(plan::candidate_cluster(candidate_with_cpu_pool()), "plan Y"),
            "# plan Y\n# The plan has no MIG pool: no mig-parted config to apply.\n");
}

TEST(PlanOutput, MigPoolSurvivesThePoolsFile) {
  const std::string yaml = io::sim_pools_yaml(one_mig_pool(), "test");
  EXPECT_NE(yaml.find("    \"nvidia.com/mig.config\": \"p4d-24xlarge-mig\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  mig: {\"1g.5gb\": 4, \"3g.20gb\": 1}\n"), std::string::npos) << yaml;
  const sim::ClusterConfig back = io::parse_sim_cluster_text(yaml, "pools.yaml");
  ASSERT_EQ(back.pools.size(), 1u);
  ASSERT_TRUE(back.pools[0].pool.mig_devices);
  EXPECT_EQ(*back.pools[0].pool.mig_devices, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  const std::string k = io::karpenter_node_pools_yaml(one_mig_pool(), "default");
  EXPECT_NE(k.find("  template:\n    metadata:\n      labels:\n        nvidia.com/mig.config: \"p4d-24xlarge-mig\"\n    spec:\n"),
            std::string::npos)
      << k;
  // Pools without a config label keep the template as before (no metadata).
  EXPECT_EQ(io::karpenter_node_pools_yaml(plan::candidate_cluster(candidate_with_cpu_pool()), "default").find("metadata:\n      labels"),
            std::string::npos);
}

TEST(PlanOutput, KueueCoversTheMigDevices) {
  sim::ClusterConfig c = plan::candidate_cluster(candidate_with_cpu_pool());
  const std::string plain = io::kueue_objects_yaml(c, "plan");
  EXPECT_NE(plain.find("  - coveredResources: [cpu, memory, nvidia.com/gpu]\n"), std::string::npos) << plain;
  c.pools.push_back(one_mig_pool().pools[0]);
  const std::string y = io::kueue_objects_yaml(c, "plan");
  EXPECT_NE(y.find("  - coveredResources: [cpu, memory, nvidia.com/gpu, nvidia.com/mig-1g.5gb, nvidia.com/mig-3g.20gb]\n"),
            std::string::npos) << y;
  // The T4 pool: 5 nodes x 8 GPUs, no MIG device; the MIG pool: 3 nodes x 8 GPUs x 4 1g.5gb and x 1 3g.20gb, no whole GPU.
  EXPECT_NE(y.find("      - {name: nvidia.com/gpu, nominalQuota: 40}\n      - {name: nvidia.com/mig-1g.5gb, nominalQuota: 0}\n"
                   "      - {name: nvidia.com/mig-3g.20gb, nominalQuota: 0}\n"),
            std::string::npos) << y;
  EXPECT_NE(y.find("      - {name: nvidia.com/gpu, nominalQuota: 0}\n      - {name: nvidia.com/mig-1g.5gb, nominalQuota: 96}\n"
                   "      - {name: nvidia.com/mig-3g.20gb, nominalQuota: 24}\n"),
            std::string::npos) << y;
}

TEST(PlanOutput, DevicePluginConfigMap) {
  sim::ClusterConfig c = plan::candidate_cluster(candidate_with_cpu_pool());
  EXPECT_EQ(io::device_plugin_config_yaml(c, "plan Y"), "# plan Y\n# The plan has no time-sliced or MPS pool: no device-plugin config to apply.\n");
  c.pools[0].pool.time_slicing_replicas = 4;
  c.pools[0].pool.labels.emplace_back(plan::kDevicePluginConfigLabel, "t4-ts4");
  sim::SimPool mps = c.pools[0];
  mps.pool.name = "g4dn-metal-mps";
  mps.pool.labels = {};
  mps.pool.time_slicing_replicas = 2;
  mps.pool.gpu_sharing_strategy = GpuSharingStrategy::kMps;
  c.pools.push_back(mps);
  EXPECT_EQ(io::device_plugin_config_yaml(c, "plan Z"),
            "# plan Z\n"
            "# NVIDIA k8s-device-plugin configs, one per time-sliced or MPS pool; each node takes the config its\n"
            "# nvidia.com/device-plugin.config label names (GPU Operator: ClusterPolicy spec.devicePlugin.config.name).\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpufleet-device-plugin-config\n  namespace: gpu-operator\ndata:\n"
            "  t4-ts4: |-\n    version: v1\n    sharing:\n      timeSlicing:\n        resources:\n        - name: nvidia.com/gpu\n"
            "          replicas: 4\n"
            "  g4dn-metal-mps: |-\n    version: v1\n    sharing:\n      mps:\n        resources:\n        - name: nvidia.com/gpu\n"
            "          replicas: 2\n");
  // The pools file keeps both kinds of sharing.
  const std::string yaml = io::sim_pools_yaml(c, "test");
  EXPECT_NE(yaml.find("  timeSlicing: {replicas: 4}\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  mps: {replicas: 2}\n"), std::string::npos) << yaml;
}

}  // namespace
}  // namespace gpufleet
