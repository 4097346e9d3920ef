// The simulator's pools file with DaemonSets: read as Kubernetes objects too, GPU DaemonSets left out
// with a warning, ignoreDaemonSetsUtilization read, and the Kubernetes reader's errors with positions.
#include <gtest/gtest.h>

#include "readers/sim/sim_pools.h"
#include "support/expect_input_error.h"

namespace gpufleet::io {
namespace {

constexpr const char* kPools = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- {name: g, gpu: {model: L4, count: 1}, cpu: "2", memory: 8Gi, nodes: 1, prices: {onDemand: 1}}
---
apiVersion: sim.gpufleet.io/v1
kind: Autoscaling
autoscaler: {ignoreDaemonSetsUtilization: true}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, resources: {requests: {cpu: 1200m, memory: 100Mi}}}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm}
spec:
  selector: {matchLabels: {app: dcgm}}
  template:
    metadata: {labels: {app: dcgm}}
    spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}
)";

TEST(SimPoolsDaemonSets, ReadsTheDaemonSetsAndLeavesGpuOnesOut) {
  const sim::ClusterConfig c = parse_sim_cluster_text(kPools, "pools.yaml");
  EXPECT_TRUE(c.autoscaler.ignore_daemon_sets_utilization);
  ASSERT_EQ(c.daemon_sets.size(), 1u);
  EXPECT_EQ(c.daemon_sets[0].name, "agent");
  EXPECT_EQ(c.daemon_sets[0].pod.cpu_milli, 1200);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "pools.yaml: DaemonSet default/dcgm requests nvidia.com/* devices, which simulate does not model for DaemonSets: its "
            "pods are left out");
}

TEST(SimPoolsDaemonSets, NoDaemonSetNoKubernetesRead) {
  const sim::ClusterConfig c = parse_sim_cluster_text(
      "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- {name: g, cpu: \"2\", memory: 8Gi, nodes: 1, prices: {onDemand: 1}}\n",
      "pools.yaml");
  EXPECT_TRUE(c.daemon_sets.empty());
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_FALSE(c.autoscaler.ignore_daemon_sets_utilization);  // CA's default
}

TEST(SimPoolsDaemonSets, ABadDaemonSetIsAnErrorAtItsField) {
  std::string text = kPools;
  text.replace(text.find("cpu: 1200m"), 10, "cpu: 12x0m");
  testing::expect_input_error([&] { parse_sim_cluster_text(text, "pools.yaml"); }, "pools.yaml", 17, 63,
                              "spec.template.spec.containers[0].resources.requests.cpu", "not a valid quantity");
}

}  // namespace
}  // namespace gpufleet::io
