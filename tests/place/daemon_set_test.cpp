// DaemonSets in `gpufleet place`: the daemon controller's nodes (nodeSelector, required affinity,
// taints against its default tolerations), its pods placed before the workload and pinned to their
// node, pending with kube's FitError when they do not fit; and the kubernetes.io/hostname label of
// pool nodes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "model/node_pool.h"
#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "sched/daemon_set.h"
#include "support/expect_input_error.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

const place::Placement* find(const place::PlaceResult& r, const std::string& pod) {
  for (const auto& p : r.placements)
    if (p.pod == pod) return &p;
  return nullptr;
}

const place::Unplaced* find_pending(const place::PlaceResult& r, const std::string& pod) {
  for (const auto& u : r.pending)
    if (u.pod == pod) return &u;
  return nullptr;
}

// Four nodes: gpu-a and gpu-b (4 CPUs, 1 L4, label accelerator=l4; gpu-b cordoned), tainted (4 CPUs,
// dedicated=infra:NoSchedule) and small (1 CPU).
constexpr const char* kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {nvidia.com/gpu.product: NVIDIA-L4, accelerator: l4}}
status: {allocatable: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b, labels: {nvidia.com/gpu.product: NVIDIA-L4, accelerator: l4}}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: tainted}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "1", memory: 16Gi, pods: "110"}}
)";

// "agent": 1.5 CPUs on every node whose taints it tolerates; "gpu-agent": 0.5 CPU on the nodes
// labelled accelerator=l4 (required node affinity); "web": 2 replicas of 2 CPUs.
constexpr const char* kWorkload = R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: agent
        resources: {requests: {cpu: 1500m, memory: 1Gi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: gpu-agent}}
  template:
    metadata: {labels: {app: gpu-agent}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [l4]}]
      containers:
      - name: agent
        resources: {requests: {cpu: 500m, memory: 256Mi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        resources: {requests: {cpu: "2", memory: 1Gi}}
)";

TEST(DaemonSetReader, KeepsTheTemplateWithTheControllersTolerations) {
  const io::K8sObjects o = io::parse_k8s_text(kWorkload, "w.yaml");
  ASSERT_EQ(o.daemon_sets.size(), 2u);
  EXPECT_EQ(o.pods.size(), 2u);  // web-0, web-1: a DaemonSet's pods are made per node later
  EXPECT_TRUE(o.skipped_kinds.empty());
  const DaemonSet& agent = o.daemon_sets[0];
  EXPECT_EQ(agent.name, "agent");
  EXPECT_EQ(agent.namespace_name, "kube-system");
  EXPECT_EQ(agent.pod.cpu_milli, 1500);
  EXPECT_EQ(agent.pod.memory_bytes, int64_t{1} << 30);
  EXPECT_FALSE(agent.host_network);
  // AddOrUpdateDaemonPodTolerations: 2 NoExecute, 4 NoSchedule (no hostNetwork).
  ASSERT_EQ(agent.pod.constraints.tolerations.size(), 6u);
  EXPECT_EQ(agent.pod.constraints.tolerations[0].key, "node.kubernetes.io/not-ready");
  EXPECT_EQ(agent.pod.constraints.tolerations[0].operator_, "Exists");
  EXPECT_EQ(agent.pod.constraints.tolerations[0].effect, "NoExecute");
  EXPECT_FALSE(agent.pod.constraints.tolerations[0].toleration_seconds.has_value());
  EXPECT_EQ(agent.pod.constraints.tolerations[5].key, "node.kubernetes.io/unschedulable");
  EXPECT_EQ(agent.pod.constraints.tolerations[5].effect, "NoSchedule");
  ASSERT_EQ(o.daemon_sets[1].pod.constraints.required_node_affinity.size(), 1u);
}

TEST(DaemonSetReader, HostNetworkAddsNetworkUnavailableAndPriorityClassResolves) {
  const io::K8sObjects o = io::parse_k8s_text(R"(kind: DaemonSet
metadata: {name: cni}
spec:
  selector: {matchLabels: {app: cni}}
  template:
    metadata: {labels: {app: cni}}
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]
      containers: [{name: c, resources: {requests: {cpu: 100m, memory: 50Mi}}}]
)",
                                              "cni.yaml");
  ASSERT_EQ(o.daemon_sets.size(), 1u);
  const DaemonSet& ds = o.daemon_sets[0];
  EXPECT_TRUE(ds.host_network);
  EXPECT_EQ(ds.namespace_name, "default");
  EXPECT_EQ(ds.pod.priority, 2000001000);
  // The pod's own not-ready toleration is replaced in place (no tolerationSeconds), then the other
  // five defaults and network-unavailable follow.
  const auto& t = ds.pod.constraints.tolerations;
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].key, "node.kubernetes.io/not-ready");
  EXPECT_FALSE(t[0].toleration_seconds.has_value());
  EXPECT_EQ(t[6].key, "node.kubernetes.io/network-unavailable");
  EXPECT_EQ(t[6].effect, "NoSchedule");
}

TEST(DaemonSetReader, RefusesWhatTheApiServerRefuses) {
  // A missing field is reported at its enclosing mapping (spec's, line 4 column 3).
  const std::string head = "kind: DaemonSet\nmetadata: {name: d}\nspec:\n";
  const std::string tmpl = "  template:\n    metadata: {labels: {app: d}}\n    spec: {containers: [{name: c}]}\n";
  testing::expect_input_error([&] { io::parse_k8s_text(head + tmpl, "d.yaml"); }, "d.yaml", 4, 3, "spec.selector",
                              "a DaemonSet needs a selector");
  testing::expect_input_error([&] { io::parse_k8s_text(head + "  selector: {matchLabels: {app: other}}\n" + tmpl, "d.yaml"); },
                              "d.yaml", 6, 24, "spec.template.metadata.labels", "`selector` does not match template `labels`");
  testing::expect_input_error([&] { io::parse_k8s_text(head + "  selector: {matchLabels: {app: d}}\n", "d.yaml"); }, "d.yaml", 4,
                              3, "spec.template", "missing pod template");
}

TEST(DaemonSetController, ShouldRunOnTheNodesTheTemplateAdmits) {
  const io::K8sObjects o = io::parse_k8s_text(kWorkload, "w.yaml");
  const io::PlaceInputs in = io::place_inputs_from_objects(io::parse_k8s_text(kNodes, "n.yaml"), "n.yaml");
  std::vector<std::string> agent, gpu_agent;
  for (const Node& n : in.input.nodes) {
    if (sched::daemon_set_should_run(o.daemon_sets[0], n)) agent.push_back(n.name);
    if (sched::daemon_set_should_run(o.daemon_sets[1], n)) gpu_agent.push_back(n.name);
  }
  // The cordoned gpu-b runs both (the unschedulable toleration); tainted runs neither.
  EXPECT_EQ(agent, (std::vector<std::string>{"gpu-a", "gpu-b", "small"}));
  EXPECT_EQ(gpu_agent, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  const Pod pod = sched::daemon_set_pod(o.daemon_sets[0], "gpu-b");
  EXPECT_EQ(pod.name, "agent-gpu-b");
  ASSERT_EQ(pod.constraints.required_node_affinity.size(), 1u);
  const NodeSelectorTerm& term = pod.constraints.required_node_affinity[0];
  EXPECT_TRUE(term.match_expressions.empty());
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0].key, "metadata.name");
  EXPECT_EQ(term.match_fields[0].operator_, "In");
  EXPECT_EQ(term.match_fields[0].values, std::vector<std::string>{"gpu-b"});
}

// The DaemonSets' pods go first: gpu-a keeps 4 - 1.5 - 0.5 = 2 CPUs for the workload, so web-0 takes
// them and web-1 (2 CPUs) fits nowhere: gpu-a is full, gpu-b cordoned, tainted not tolerated, small
// has 1 CPU. agent-small (1.5 CPUs) does not fit its 1-CPU node and is pending.
TEST(DaemonSetPlace, PodsComeFirstPinnedToTheirNodes) {
  io::K8sObjects objects = io::parse_k8s_text(std::string(kNodes) + "---\n" + kWorkload, "in.yaml");
  const io::PlaceInputs in = io::place_inputs_from_objects(std::move(objects), "objects");
  const place::PlaceResult r = place::place_workload(in.input, {"gpufleet", 42});
  ASSERT_EQ(r.placements.size(), 5u);
  EXPECT_EQ(r.placements[0].pod, "kube-system/agent-gpu-a");
  EXPECT_EQ(r.placements[0].node, "gpu-a");
  EXPECT_EQ(r.placements[1].pod, "kube-system/agent-gpu-b");
  EXPECT_EQ(r.placements[1].node, "gpu-b");
  EXPECT_EQ(r.placements[2].pod, "kube-system/gpu-agent-gpu-a");
  EXPECT_EQ(r.placements[2].node, "gpu-a");
  EXPECT_EQ(r.placements[3].pod, "kube-system/gpu-agent-gpu-b");
  EXPECT_EQ(r.placements[3].node, "gpu-b");
  EXPECT_EQ(r.placements[4].pod, "default/web-0");
  EXPECT_EQ(r.placements[4].node, "gpu-a");
  EXPECT_EQ(find(r, "kube-system/agent-tainted"), nullptr);
  ASSERT_EQ(r.pending.size(), 2u);
  const place::Unplaced* agent_small = find_pending(r, "kube-system/agent-small");
  ASSERT_NE(agent_small, nullptr);
  // Its own node: Insufficient cpu; the others fail before NodeResourcesFit: tainted at
  // TaintToleration, gpu-a and gpu-b at NodeAffinity (the metadata.name term).
  EXPECT_EQ(agent_small->reason.substr(0, agent_small->reason.find(" preemption:")),
            "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: infra}, "
            "2 node(s) didn't match Pod's node affinity/selector.");
  const place::Unplaced* web1 = find_pending(r, "default/web-1");
  ASSERT_NE(web1, nullptr);
  EXPECT_EQ(web1->reason.substr(0, web1->reason.find(" preemption:")),
            "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 1 node(s) were unschedulable, "
            "2 Insufficient cpu.");
}

// Pool nodes carry kubernetes.io/hostname = their name, so a required node affinity on it (or a
// DaemonSet's nodeSelector) selects one of them.
TEST(HostnameLabel, PoolNodesCarryTheirNameAndAffinityOnItPlaces) {
  NodePool pool;
  pool.name = "l4";
  pool.gpu_model = "L4";
  pool.gpus_per_node = 1;
  pool.cpu_milli = 8000;
  pool.memory_bytes = int64_t{32} << 30;
  pool.node_count = pool.min_nodes = pool.max_nodes = 3;
  pool.on_demand_usd_per_hour = 1;
  const std::vector<Node> nodes = expand_pool(pool);
  ASSERT_EQ(nodes.size(), 3u);
  for (const Node& n : nodes) {
    const std::string* h = find_label(n.labels, "kubernetes.io/hostname");
    ASSERT_NE(h, nullptr) << n.name;
    EXPECT_EQ(*h, n.name);
  }
  place::PlaceInput in;
  in.nodes = nodes;
  Pod pod = testing::make_pod("pinned", 1000, 1024, 1, 1000);
  pod.namespace_name = "default";
  NodeSelectorTerm term;
  term.match_expressions.push_back({"kubernetes.io/hostname", "In", {"l4-2"}});
  pod.constraints.required_node_affinity = {term};
  in.pods = {pod};
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].node, "l4-2");
  // A pool may not set the label itself: it differs per node.
  pool.labels = {{"kubernetes.io/hostname", "x"}};
  EXPECT_THROW(expand_pool(pool), std::invalid_argument);
}

// A pool file read by `place` (read_place_inputs) with a DaemonSet beside it: every pool node runs
// its pod, and the workload's pod pinned by hostname lands on l4-1.
TEST(HostnameLabel, PoolFileWithDaemonSetThroughPlaceInputs) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpufleet_ds_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "pools.yaml") << R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: l4
  gpu: {model: L4, count: 1}
  cpu: "4"
  memory: 16Gi
  nodes: 2
  prices: {onDemand: 0.8}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter, namespace: monitoring}
spec:
  selector: {matchLabels: {app: exporter}}
  template:
    metadata: {labels: {app: exporter}}
    spec:
      containers: [{name: e, resources: {requests: {cpu: "3", memory: 1Gi}}}]
)";
  std::ofstream(dir / "pod.yaml") << R"(apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [l4-1]}]
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
)";
  const io::PlaceInputs in = io::read_place_inputs({(dir / "pools.yaml").string()}, {(dir / "pod.yaml").string()});
  std::filesystem::remove_all(dir);
  const place::PlaceResult r = place::place_workload(in.input, {"gpufleet", 42});
  ASSERT_EQ(r.placements.size(), 3u);
  EXPECT_EQ(r.placements[0].pod, "monitoring/exporter-l4-0");
  EXPECT_EQ(r.placements[1].pod, "monitoring/exporter-l4-1");
  EXPECT_EQ(r.placements[2].pod, "default/pinned");
  EXPECT_EQ(r.placements[2].node, "l4-1");  // 4 - 3 = 1 CPU left there, exactly the pod's
  EXPECT_TRUE(r.pending.empty());
}

// examples/daemonsets (docs/node-pools.md): both DaemonSets on g-0 first (1.2 of its 2 CPUs), probe
// (0.5 CPU, pinned by hostname) binds there, inference (1 GPU, 1 CPU) finds 0.8 CPU and is pending.
TEST(DaemonSetPlace, Example) {
  const std::filesystem::path dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "daemonsets";
  const io::PlaceInputs in = io::read_place_inputs({(dir / "pools.yaml").string()}, {(dir / "workload.yaml").string()});
  const place::PlaceResult r = place::place_workload(in.input, {"gpufleet", 42});
  ASSERT_EQ(r.placements.size(), 3u);
  EXPECT_EQ(r.placements[0].pod, "kube-system/nvidia-device-plugin-g-0");
  EXPECT_EQ(r.placements[1].pod, "monitoring/node-exporter-g-0");
  EXPECT_EQ(r.placements[2].pod, "default/probe");
  EXPECT_EQ(r.placements[2].node, "g-0");
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/inference");
  EXPECT_EQ(r.pending[0].reason.substr(0, r.pending[0].reason.find(" preemption:")), "0/1 nodes are available: 1 Insufficient cpu.");
}

}  // namespace
}  // namespace gpufleet
