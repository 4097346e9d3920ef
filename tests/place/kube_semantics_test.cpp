// `place` against kube-scheduler's own answers on the cases where they once differed, each with the
// outcome a real kube-scheduler (and API server) gives, through the same reader and engine as
// `gpufleet place`:
//  1. a cordoned node (spec.unschedulable, no taint): NodeUnschedulable refuses it;
//  2. memory compared in bytes, not rounded to MiB (NodeResourcesFit);
//  3. node selector values that are not label values: the term matches nothing (labels.NewRequirement);
//  4. a Gt/Lt value that is not an integer: the pod is accepted and stays pending;
//  5. no per-pod GPU limit in Kubernetes;
//  6. required podAffinity, with the self-match rule for the first pod of a group;
// and the two deliberate differences that are now said at run time (a node's GPUs recounted from its
// MIG devices, a quota rule).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/place_inputs.h"
#include "place/place_workload.h"

namespace gpufleet {
namespace {

struct Outcome {
  place::PlaceResult result;
  std::vector<std::string> warnings;

  // "node" for a placed pod, "pending: <reason>" otherwise.
  std::string of(const std::string& pod) const {
    for (const auto& p : result.placements)
      if (p.pod == pod) return p.node;
    for (const auto& u : result.pending)
      if (u.pod == pod) return "pending: " + u.reason;
    return "absent";
  }
};

Outcome place_yaml(const std::string& yaml) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpufleet_kube_semantics_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "in.yaml").string();
  std::ofstream(file) << yaml;
  const io::PlaceInputs in = io::read_place_inputs({file}, {});
  std::filesystem::remove_all(dir);
  return {place::place_workload(in.input, {}), in.warnings};
}

// A Node as kubelet reports it: `allocatable` gets kubelet's default pods: "110" unless it names pods.
std::string node(const std::string& name, const std::string& extra_spec, const std::string& allocatable,
                 const std::string& labels = "") {
  const std::string counted = allocatable.find("pods:") != std::string::npos ? allocatable
                              : allocatable.empty()                          ? "pods: \"110\""
                                                                             : allocatable + ", pods: \"110\"";
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: {kubernetes.io/hostname: " + name +
         (labels.empty() ? "" : ", " + labels) + "}\nspec: {" + extra_spec + "}\nstatus:\n  allocatable: {" + counted +
         "}\n";
}

std::string pod(const std::string& name, const std::string& requests, const std::string& spec_extra = "",
                const std::string& labels = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {" + labels + "}}\nspec:\n" + spec_extra +
         "  containers: [{name: c, resources: {requests: {" + requests + "}, limits: {" + requests + "}}}]\n";
}

TEST(KubeSemantics, CordonedNodeWithoutTheTaintTakesNoPod) {
  const Outcome o = place_yaml(node("n1", "unschedulable: true", "cpu: 4, memory: 8Gi") + pod("p", "cpu: 1") +
                               pod("tolerant", "cpu: 1",
                                   "  tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: "
                                   "NoSchedule}]\n"));
  EXPECT_EQ(o.of("default/p"),
            "pending: 0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 "
            "Preemption is not helpful for scheduling.");
  EXPECT_EQ(o.of("default/tolerant"), "n1");
}

TEST(KubeSemantics, MemoryIsComparedInBytes) {
  // 1000000Ki = 976.5625 MiB: a 977Mi pod does not fit (it did when memory was rounded up to MiB).
  Outcome o = place_yaml(node("n1", "", "cpu: 4, memory: 1000000Ki") + pod("big", "memory: 977Mi") + pod("fits", "memory: 976Mi"));
  EXPECT_EQ(o.of("default/big").substr(0, 55), "pending: 0/1 nodes are available: 1 Insufficient memory");
  EXPECT_EQ(o.of("default/fits"), "n1");
  // 191Mi = 200278016 bytes holds two 100M pods (200000000 bytes); rounding each up to 96Mi did not.
  o = place_yaml(node("n1", "", "cpu: 4, memory: 191Mi") + pod("a", "memory: 100M") + pod("b", "memory: 100M"));
  EXPECT_EQ(o.of("default/a"), "n1");
  EXPECT_EQ(o.of("default/b"), "n1");
}

TEST(KubeSemantics, SelectorValuesThatAreNotLabelValuesMatchNothing) {
  const std::string nodes = node("n1", "", "cpu: 4, memory: 8Gi", "rank: \"5\", zone: a");
  const auto affinity = [](const std::string& expr) {
    return "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [" +
           expr + "]}]}}}\n";
  };
  const Outcome o = place_yaml(nodes + pod("gt-minus", "cpu: 1", affinity("{key: rank, operator: Gt, values: [\"-1\"]}")) +
                               pod("notin-dash", "cpu: 1", affinity("{key: zone, operator: NotIn, values: [\"-x\"]}")) +
                               pod("gt-ok", "cpu: 1", affinity("{key: rank, operator: Gt, values: [\"1\"]}")));
  const std::string mismatch =
      "pending: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are "
      "available: 1 Preemption is not helpful for scheduling.";
  EXPECT_EQ(o.of("default/gt-minus"), mismatch);
  EXPECT_EQ(o.of("default/notin-dash"), mismatch);
  EXPECT_EQ(o.of("default/gt-ok"), "n1");
  ASSERT_EQ(o.warnings.size(), 2u);
  EXPECT_NE(o.warnings[0].find("field 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                               "nodeSelectorTerms[0].matchExpressions[0]': '-1' is not a valid label value"),
            std::string::npos)
      << o.warnings[0];
  EXPECT_NE(o.warnings[1].find("'-x' is not a valid label value"), std::string::npos) << o.warnings[1];
}

TEST(KubeSemantics, NonIntegerGtIsAcceptedAndMatchesNothing) {
  const Outcome o = place_yaml(
      node("n1", "", "cpu: 4, memory: 8Gi", "rank: \"5\"") +
      pod("gt-frac", "cpu: 1",
          "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
          "[{key: rank, operator: Gt, values: [\"4.5\"]}]}]}}}\n"));
  EXPECT_EQ(o.of("default/gt-frac").substr(0, 90),
            "pending: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. pre");
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("for 'Gt', 'Lt' operators, the value must be an integer, not '4.5'; kube-scheduler cannot "
                               "parse this requirement, so its term matches no node"),
            std::string::npos)
      << o.warnings[0];
}

// A preferred term kube cannot parse fails its PreScore: the pod is not scheduled when two or more
// nodes fit (kube scores only then), and is when a single node does. (Found by the differential test.)
TEST(KubeSemantics, UnparsablePreferredTermFailsScoringWithTwoFeasibleNodes) {
  const std::string preferred =
      "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: "
      "{matchExpressions: [{key: rank, operator: Gt, values: [\"4.5\"]}]}}]}}\n";
  Outcome o = place_yaml(node("n1", "", "cpu: 4, memory: 8Gi") + node("n2", "", "cpu: 4, memory: 8Gi") + pod("p", "cpu: 1", preferred));
  EXPECT_EQ(o.of("default/p"),
            "pending: running PreScore plugin \"NodeAffinity\": for 'Gt', 'Lt' operators, the value must be an integer, not '4.5'");
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("the pod's scheduling fails whenever two or more nodes fit it"), std::string::npos) << o.warnings[0];
  o = place_yaml(node("n1", "", "cpu: 4, memory: 8Gi") + pod("p", "cpu: 1", preferred));
  EXPECT_EQ(o.of("default/p"), "n1");
}

TEST(KubeSemantics, NoPerPodGpuLimit) {
  const Outcome o = place_yaml(node("big", "", "cpu: 64, memory: 512Gi, nvidia.com/gpu: 16", "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3") +
                               pod("twelve", "nvidia.com/gpu: 12") + pod("five", "nvidia.com/gpu: 5"));
  EXPECT_EQ(o.of("default/twelve"), "big");
  EXPECT_EQ(o.of("default/five").substr(0, 63), "pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu");
}

TEST(KubeSemantics, RequiredPodAffinityWithTheSelfMatchRule) {
  const std::string nodes = node("a1", "", "cpu: 4, memory: 8Gi", "topology.kubernetes.io/zone: za") +
                            node("a2", "", "cpu: 4, memory: 8Gi", "topology.kubernetes.io/zone: za") +
                            node("b1", "", "cpu: 4, memory: 8Gi", "topology.kubernetes.io/zone: zb") +
                            node("nozone", "", "cpu: 4, memory: 8Gi");
  const std::string with_cache =
      "  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: "
      "cache}}, topologyKey: topology.kubernetes.io/zone}]}}\n";
  // No pod labelled app=cache anywhere, and the pod is not one itself: pending (kube: unresolvable).
  Outcome o = place_yaml(nodes + pod("web", "cpu: 1", with_cache, "app: web"));
  EXPECT_EQ(o.of("default/web"),
            "pending: 0/4 nodes are available: 4 node(s) didn't match pod affinity rules. preemption: 0/4 nodes are "
            "available: 4 Preemption is not helpful for scheduling.");
  // The first pod of a group that matches its own terms starts it on a node with the zone label; the
  // next ones join its zone, and a pod of the group elsewhere cannot follow into another zone.
  const std::string self_cache = with_cache;
  o = place_yaml(nodes + pod("cache-0", "cpu: 3", self_cache, "app: cache") + pod("cache-1", "cpu: 3", self_cache, "app: cache") +
                 pod("cache-2", "cpu: 3", self_cache, "app: cache") + pod("web", "cpu: 1", with_cache, "app: web"));
  const std::string first = o.of("default/cache-0");
  ASSERT_TRUE(first == "a1" || first == "a2" || first == "b1") << first;
  const bool in_a = first != "b1";
  const std::string second = o.of("default/cache-1");
  EXPECT_TRUE(in_a ? (second == "a1" || second == "a2") && second != first : second.rfind("pending", 0) == 0) << second;
  EXPECT_EQ(o.of("default/cache-2").rfind("pending: 0/4 nodes are available:", 0), 0u) << o.of("default/cache-2");
  const std::string web = o.of("default/web");
  EXPECT_TRUE(in_a ? web == "a1" || web == "a2" : web == "b1") << web;
}

TEST(KubeSemantics, RecountedMigNodeAndQuotaRuleAreSaid) {
  const Outcome o = place_yaml(
      node("h100", "", "cpu: 64, memory: 512Gi, nvidia.com/mig-1g.10gb: 14", "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3") +
      "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: default}\nspec: {hard: "
      "{limits.nvidia.com/gpu: \"4\"}}\n" +
      pod("p", "cpu: 1"));
  EXPECT_EQ(o.of("default/p"), "h100");
  ASSERT_EQ(o.warnings.size(), 2u);
  EXPECT_EQ(o.warnings[0],
            "no nvidia.com/gpu.count label: the GPUs with MIG are counted as the fewest H100-80GB GPUs that hold the "
            "advertised MIG devices (14x 1g.10gb); label the node with its physical GPU count to override (node h100)");
  EXPECT_EQ(o.warnings[1],
            "ResourceQuota default/gpus: limits.nvidia.com/gpu is charged each pod's nvidia.com/gpu request; Kubernetes "
            "charges nothing to limits.<extended resource> entries (only requests.nvidia.com/gpu limits GPUs there)");
}

// A Node's status as written, for the edges of what kube counts: `status` is the YAML under status:.
std::string node_with_status(const std::string& name, const std::string& status) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus:\n" + status;
}

// kube-scheduler counts status.allocatable; the API server copies status.capacity there only when
// allocatable is absent. A present allocatable without pods allows 0 pods.
TEST(KubeSemantics, NodeWithoutPodsInAllocatableTakesNoPod) {
  Outcome o = place_yaml(node_with_status("n1", "  capacity: {cpu: 4, memory: 8Gi, pods: \"110\"}\n  allocatable: {cpu: 4, memory: 8Gi}\n") +
                         pod("p", "cpu: 1"));
  EXPECT_EQ(o.of("default/p"),
            "pending: 0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod.");
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("in.yaml:7:16: node 'n1': status.allocatable has no pods: kube-scheduler allows 0 pods there "
                               "(\"Too many pods\")"),
            std::string::npos)
      << o.warnings[0];
  // Capacity alone is copied whole: its pods count.
  o = place_yaml(node_with_status("n1", "  capacity: {cpu: 4, memory: 8Gi, pods: \"1\"}\n") + pod("p", "cpu: 1") + pod("q", "cpu: 1"));
  EXPECT_EQ(o.of("default/p"), "n1");
  EXPECT_EQ(o.of("default/q").rfind("pending: 0/1 nodes are available: 1 Too many pods. ", 0), 0u) << o.of("default/q");
  EXPECT_TRUE(o.warnings.empty());
}

TEST(KubeSemantics, GpusInCapacityButNotInAllocatableAreNotThere) {
  const Outcome o = place_yaml(
      node_with_status("n1", "  capacity: {cpu: 8, memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"8\"}\n"
                             "  allocatable: {cpu: 8, memory: 32Gi, pods: \"110\"}\n") +
      pod("gpu", "cpu: 1, nvidia.com/gpu: 1") + pod("cpu", "cpu: 1"));
  EXPECT_EQ(o.of("default/gpu"),
            "pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 "
            "Preemption is not helpful for scheduling.");
  EXPECT_EQ(o.of("default/cpu"), "n1");
}

// A node with no cpu (or cpu "0") still takes pods that request none: 0 <= 0 in NodeResourcesFit.
// A request above the node's allocatable is unresolvable (recent kube's noderesources Fit), so
// preemption is not helpful there; too many pods is resolvable.
TEST(KubeSemantics, NodeWithoutCpuTakesPodsThatRequestNone) {
  for (const char* allocatable : {"  allocatable: {memory: 8Gi, pods: \"110\"}\n", "  allocatable: {cpu: \"0\", memory: 8Gi, pods: \"110\"}\n"}) {
    SCOPED_TRACE(allocatable);
    const Outcome o = place_yaml(node_with_status("n1", allocatable) + pod("none", "") + pod("some", "cpu: 100m"));
    EXPECT_EQ(o.of("default/none"), "n1");
    EXPECT_EQ(o.of("default/some"),
              "pending: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption "
              "is not helpful for scheduling.");
  }
}

}  // namespace
}  // namespace gpufleet

namespace gpufleet {
namespace {

// One tie rule for `place` and `serve`: equal scores go to the node whose name sorts first (byte
// order, the API server's list order), whatever order the files give the nodes in.
TEST(KubeSemantics, ScoreTiesGoToTheNodeNameThatSortsFirst) {
  const std::string nodes_n2_first = node("n2", "", "cpu: 4, memory: 8Gi") + node("n10", "", "cpu: 4, memory: 8Gi");
  const std::string nodes_n10_first = node("n10", "", "cpu: 4, memory: 8Gi") + node("n2", "", "cpu: 4, memory: 8Gi");
  EXPECT_EQ(place_yaml(nodes_n2_first + pod("p", "cpu: 1")).of("default/p"), "n10");  // "n10" < "n2"
  EXPECT_EQ(place_yaml(nodes_n10_first + pod("p", "cpu: 1")).of("default/p"), "n10");
}

}  // namespace
}  // namespace gpufleet
