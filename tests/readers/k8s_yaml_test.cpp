// Kubernetes YAML/JSON reader: every kind it models, List and directory inputs, and one precise
// InputError (file, line, column, field) per bad input.
#include "support/expect_input_error.h"
#include "readers/k8s/k8s_yaml.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/input_error.h"
#include "support/test_support.h"

namespace gpufleet::io {
namespace {

// Expects parse_k8s_text(text) to throw an InputError at file:line:column, naming `field`, whose
// message contains `fragment`.
void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { parse_k8s_text(text, "in.yaml"); }, "in.yaml", line, column, field, fragment);
}

// A Pod "p" with one container "c" whose `resources:` block is `resources` (lines 7 on, indented
// six spaces), so that line numbers in the expectations count from the top of this text.
std::string pod_with_resources(const std::string& resources) {
  return "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n" + resources;
}

const std::string* label(const Labels& labels, const std::string& key) { return find_label(labels, key); }

// ------------------------------------------------------------------------------------------ Node

TEST(K8sYaml, NodeAllocatableLabelsTaintsAndExtras) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: v1
kind: Node
metadata:
  name: gpu-a100-1
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    topology.kubernetes.io/zone: eu-west-1a
spec:
  taints:
  - key: nvidia.com/gpu
    value: present
    effect: NoSchedule
  - key: spot
    effect: PreferNoSchedule
status:
  capacity:
    cpu: "96"
    memory: 1056Gi
    pods: "250"
    nvidia.com/gpu: "8"
    ephemeral-storage: 1Ti
  allocatable:
    cpu: 95500m
    memory: 1000Gi
    nvidia.com/gpu: "6"
    nvidia.com/mig-1g.10gb: "14"
    nvidia.com/gpu.shared: "20"
    hugepages-2Mi: "0"
)",
                                      "node.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  const Node& n = k.nodes[0];
  EXPECT_EQ(n.name, "gpu-a100-1");
  EXPECT_EQ(n.cpu_milli, 95500);           // allocatable wins over capacity
  EXPECT_EQ(n.memory_bytes, (1000 * 1024) * kBytesPerMib);
  EXPECT_EQ(n.max_pods, 0);                // absent from allocatable: capacity's 250 does not count
  EXPECT_EQ(n.gpu_count, 6);
  EXPECT_EQ(n.gpu_model, "NVIDIA-A100-SXM4-80GB");
  ASSERT_EQ(n.labels.size(), 2u);
  EXPECT_EQ(n.labels[1].first, "topology.kubernetes.io/zone");
  EXPECT_EQ(n.labels[1].second, "eu-west-1a");
  ASSERT_EQ(n.taints.size(), 2u);
  EXPECT_EQ(n.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(n.taints[0].value, "present");
  EXPECT_EQ(n.taints[0].effect, "NoSchedule");
  EXPECT_EQ(n.taints[1].value, "");
  EXPECT_EQ(n.taints[1].effect, "PreferNoSchedule");
  ASSERT_EQ(k.node_extras.size(), 1u);
  EXPECT_EQ(k.node_extras[0].node, "gpu-a100-1");
  EXPECT_EQ(k.node_extras[0].extended,
            (std::map<std::string, int64_t>{{"nvidia.com/gpu.shared", 20}, {"nvidia.com/mig-1g.10gb", 14}}));
  ASSERT_EQ(k.warnings.size(), 1u);
  EXPECT_NE(k.warnings[0].find("node 'gpu-a100-1': status.allocatable has no pods: kube-scheduler allows 0 pods there"),
            std::string::npos)
      << k.warnings[0];
}

// More GPUs than a node can hold names the GPU entry of the map it was counted from. (The reader once
// kept a pointer to a field that lived for one callback only; the fuzzer found it.)
TEST(K8sYaml, TooManyGpusNamesTheGpuEntry) {
  expect_error("kind: Node\nmetadata: {name: n}\nstatus:\n  allocatable:\n    cpu: '8'\n    nvidia.com/gpu: '17'\n    memory: 64Gi\n", 6, 21,
               "status.allocatable.nvidia.com/gpu", "17 GPUs is more than 16 per node");
}

TEST(K8sYaml, NodeCapacityOnlyDefaultsAndCpuNode) {
  const K8sObjects k = parse_k8s_text(R"(kind: Node
metadata: {name: cpu-1}
status:
  capacity: {cpu: "16", memory: 64Gi}
)",
                                      "n.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].cpu_milli, 16000);
  EXPECT_EQ(k.nodes[0].memory_bytes, 65536 * kBytesPerMib);
  EXPECT_EQ(k.nodes[0].max_pods, 0);  // capacity is copied whole, and it has no pods
  EXPECT_EQ(k.nodes[0].gpu_count, 0);
  EXPECT_EQ(k.nodes[0].gpu_model, "");
  EXPECT_TRUE(k.node_extras.empty());
  ASSERT_EQ(k.warnings.size(), 1u);
  EXPECT_EQ(k.warnings[0], "n.yaml:4:13: node 'cpu-1': status.capacity has no pods: kube-scheduler allows 0 pods there (\"Too many pods\")");
}

// A present allocatable is all kube counts: what it lacks is 0 (no error), and capacity is still
// checked as input. Without allocatable, capacity is copied whole (the API server's defaulting).
TEST(K8sYaml, NodeCountsAllocatableAloneWhenPresent) {
  K8sObjects k = parse_k8s_text(R"(kind: Node
metadata: {name: n}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "4"}
  allocatable: {memory: 30Gi, pods: "100"}
)",
                                "n.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].cpu_milli, 0);
  EXPECT_EQ(k.nodes[0].memory_bytes, 30 * 1024 * kBytesPerMib);
  EXPECT_EQ(k.nodes[0].max_pods, 100);
  EXPECT_EQ(k.nodes[0].gpu_count, 0);
  ASSERT_EQ(k.warnings.size(), 1u);
  EXPECT_EQ(k.warnings[0], "n.yaml:5:16: node 'n': status.allocatable has no cpu: only pods that request no cpu fit there");
  k = parse_k8s_text("kind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {cpu: \"0\", memory: 1Gi, pods: \"1\"}\n", "n.yaml");
  EXPECT_EQ(k.nodes[0].cpu_milli, 0);
  EXPECT_TRUE(k.warnings.empty());
  k = parse_k8s_text("kind: Node\nmetadata: {name: n}\n", "n.yaml");
  EXPECT_EQ(k.nodes[0].max_pods, 0);
  EXPECT_EQ(k.warnings.size(), 3u);  // no pods, cpu or memory anywhere
}

TEST(K8sYaml, NodeTimeSlicedWithoutRenameCountsPhysicalGpus) {
  // GPU feature discovery labels: 4 GPUs x 10 replicas advertised as nvidia.com/gpu: 40.
  const K8sObjects k = parse_k8s_text(R"(kind: Node
metadata:
  name: t4-shared
  labels:
    nvidia.com/gpu.product: Tesla-T4-SHARED
    nvidia.com/gpu.count: "4"
    nvidia.com/gpu.replicas: "10"
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "40"}
)",
                                      "n.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].gpu_count, 4);
  EXPECT_EQ(k.nodes[0].gpu_model, "Tesla-T4-SHARED");  // raw label
  ASSERT_EQ(k.node_extras.size(), 1u);
  EXPECT_EQ(k.node_extras[0].extended.at("nvidia.com/gpu"), 40);
}

// ------------------------------------------------------------------------------------------ Pod

TEST(K8sYaml, PodEffectiveRequests) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
  labels: {app: train, tier: gpu}
spec:
  initContainers:
  - name: fetch              # ordinary init container: max with the rest
    resources:
      requests: {cpu: "8", memory: 1Gi}
  - name: proxy              # sidecar: added to the app containers
    restartPolicy: Always
    resources:
      requests: {cpu: 100m, memory: 128Mi}
  containers:
  - name: main
    resources:
      requests: {cpu: "2", memory: 8Gi}
      limits: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 2}
  - name: logger
    resources:
      limits: {cpu: 500m, memory: 512Mi}   # limits only: requests default to them
  overhead: {cpu: 250m, memory: 64Mi}
)",
                                      "pod.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  const Pod& p = k.pods[0];
  EXPECT_EQ(p.name, "train");
  EXPECT_EQ(p.namespace_name, "ml");
  // containers 2000 + 500 + sidecar 100 = 2600; init 8000 + earlier sidecars 0 = 8000 -> max 8000, + 250.
  EXPECT_EQ(p.cpu_milli, 8250);
  // containers 8192 + 512 + 128 = 8832 vs init 1024 -> 8832, + 64.
  EXPECT_EQ(p.memory_bytes, 8896 * kBytesPerMib);
  EXPECT_EQ(p.num_gpu, 2);
  EXPECT_EQ(p.gpu_milli, 1000);
  EXPECT_EQ(p.qos, QosClass::kBurstable);
  ASSERT_EQ(p.labels.size(), 2u);
  EXPECT_EQ(*label(p.labels, "tier"), "gpu");
  EXPECT_TRUE(k.pod_extras.empty());
  EXPECT_EQ(p.priority, 0);
  EXPECT_TRUE(p.preempt_lower_priority);
}

TEST(K8sYaml, PodQosClassesAndDefaultNamespace) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: best-effort}
spec: {containers: [{name: c}]}
---
kind: Pod
metadata: {name: guaranteed}
spec:
  containers:
  - name: c
    resources: {limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}}
)",
                                      "q.yaml");
  ASSERT_EQ(k.pods.size(), 2u);
  EXPECT_EQ(k.pods[0].namespace_name, "default");
  EXPECT_EQ(k.pods[0].qos, QosClass::kBE);
  EXPECT_EQ(k.pods[0].cpu_milli, 0);
  EXPECT_FALSE(k.pods[0].is_gpu_pod());
  EXPECT_EQ(k.pods[1].qos, QosClass::kGuaranteed);
  EXPECT_EQ(k.pods[1].cpu_milli, 1000);
  EXPECT_EQ(k.pods[1].num_gpu, 1);
}

TEST(K8sYaml, PodSharedAndMigRequestsBecomePodFields) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: infer, namespace: serve}
spec:
  containers:
  - name: a
    resources:
      limits: {nvidia.com/gpu.shared: "1", nvidia.com/mig-3g.40gb: 1}
  - name: b
    resources:
      requests: {nvidia.com/mig-1g.10gb: "2", nvidia.com/gpu.shared: 2}
      limits: {nvidia.com/mig-1g.10gb: "2", nvidia.com/gpu.shared: 2}
)",
                                      "p.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  const Pod& p = k.pods[0];
  EXPECT_EQ(p.num_gpu, 0);
  EXPECT_EQ(p.gpu_milli, 0);
  EXPECT_EQ(p.shared_replicas, 3);  // 1 + 2, summed over the containers
  EXPECT_EQ(p.mig_requests, (std::vector<MigRequest>{{"1g.10gb", 2}, {"3g.40gb", 1}}));  // sorted by profile
  EXPECT_TRUE(p.has_device_requests());
  EXPECT_TRUE(k.pod_extras.empty());
  EXPECT_TRUE(k.warnings.empty());
}

TEST(K8sYaml, PodUnmodelledNvidiaResourceIsAnError) {
  // A typo: the pod would be placed without GPUs.
  expect_error(pod_with_resources(R"(      requests:
        cpu: "1"
        nvidia.com/gpus: 1
)"),
               9, 26, "spec.containers[0].resources.requests.nvidia.com/gpus",
               "unknown resource 'nvidia.com/gpus': gpufleet models nvidia.com/gpu, nvidia.com/gpu.shared and "
               "nvidia.com/mig-<profile>");
  // A renamed time-sliced MIG device (time-slicing of MIG devices is not modelled), in a template's
  // limits, an init container and the overhead.
  expect_error(R"(kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits: {nvidia.com/mig-1g.10gb.shared: 1}
)",
               9, 51, "spec.template.spec.containers[0].resources.limits.nvidia.com/mig-1g.10gb.shared",
               "unknown resource 'nvidia.com/mig-1g.10gb.shared'");
  expect_error("kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: i, resources: {limits: {nvidia.com/gpu-shared: 1}}}]\n"
               "  containers: [{name: c}]\n",
               4, 74, "spec.initContainers[0].resources.limits.nvidia.com/gpu-shared", "unknown resource");
  expect_error("kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  overhead: {nvidia.com/vgpu: 1}\n", 5,
               31, "spec.overhead.nvidia.com/vgpu", "unknown resource 'nvidia.com/vgpu'");
}

TEST(K8sYamlErrors, MisspeltResourcesKeys) {
  // A container key `resource` would drop the requests: kubectl's strict validation rejects it.
  expect_error(R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resource:
      requests: {nvidia.com/gpu: 1}
)",
               6, 5, "spec.containers[0].resource", "unknown key 'resource': did you mean 'resources'?");
  expect_error(R"(kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      initContainers:
      - {name: i, resource: {limits: {cpu: "1"}}}
      containers: [{name: c}]
)",
               7, 19, "spec.template.spec.initContainers[0].resource", "did you mean 'resources'?");
  // Other near misses of `resources` (case, a dropped or swapped letter) are errors too.
  for (const std::string key : {"resouces", "Resources", "rseources"})
    expect_error("kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    " + key + ": {limits: {nvidia.com/gpu: 1}}\n",
                 6, 5, "spec.containers[0]." + key, "unknown key '" + key + "': did you mean 'resources'?");
  // Inside `resources` only requests, limits and claims.
  expect_error(pod_with_resources(R"(      requests: {cpu: "1"}
      limit: {nvidia.com/gpu: 1}
)"),
               8, 7, "spec.containers[0].resources.limit", "unknown key 'limit' (expected requests, limits, claims)");
  // container claims without the pod's spec.resourceClaims (dynamic resource allocation; the API
  // server refuses them): a warning.
  const K8sObjects k = parse_k8s_text(
      "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, resources: {claims: [{name: gpu}]}}\n", "p.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  EXPECT_EQ(k.warnings,
            (std::vector<std::string>{"p.yaml:5:3: field 'spec.containers': container resources.claims without spec.resourceClaims is not modelled (1 object(s)): the pod is placed without its claims"}));
}

// A key given twice in one mapping: yaml-cpp would keep the first value and drop the second without
// a word (here a GPU request); an error at the repeat, as kubectl's strict decoding gives.
TEST(K8sYaml, DuplicateKeysAreAnError) {
  expect_error(pod_with_resources(R"(      requests: {cpu: "1"}
      requests: {nvidia.com/gpu: 1}
)"),
               8, 7, "spec.containers[0].resources.requests", "duplicate key 'requests' (first at line 7)");
  expect_error("kind: Pod\nmetadata: {name: p, name: q}\nspec: {containers: [{name: c}]}\n", 2, 21, "metadata.name",
               "duplicate key 'name'");
}

TEST(K8sYaml, PodResourcesNotModelledAreWarnedOncePerName) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1", ephemeral-storage: 1Gi, example.com/fpga: 1, hugepages-2Mi: "0"}
      limits: {example.com/fpga: 1}
---
kind: Deployment
metadata: {name: d}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: c
        resources: {limits: {example.com/fpga: 2}}
)",
                                      "p.yaml");
  ASSERT_EQ(k.pods.size(), 4u);
  EXPECT_EQ(k.pods[0].cpu_milli, 1000);
  EXPECT_EQ(k.warnings, (std::vector<std::string>{"p.yaml:5:3: field 'spec.containers': pod resource ephemeral-storage is not modelled (1 object(s)): the pod is placed without it",
                                                  "p.yaml:5:3: field 'spec.containers': pod resource example.com/fpga is not modelled (2 object(s)): the pod is placed without it"}));
}

TEST(K8sYaml, PodUnknownMigProfileIsAnError) {
  // 1g.6gb is an A30 profile; the catalog has no A30.
  expect_error(pod_with_resources(R"(      limits: {cpu: "1", nvidia.com/mig-1g.6gb: 1}
)"),
               7, 49, "spec.containers[0].resources.limits.nvidia.com/mig-1g.6gb", "unknown MIG profile '1g.6gb'");
  expect_error(pod_with_resources(R"(      requests:
        nvidia.com/mig-3g.40GB: 1
)"),
               8, 33, "spec.containers[0].resources.requests.nvidia.com/mig-3g.40GB", "no GPU model in the catalog has it");
  // Profiles of every catalog model are known, e.g. A100-40GB's and B200's.
  const K8sObjects k = parse_k8s_text(pod_with_resources(R"(      limits: {nvidia.com/mig-1g.5gb: 1, nvidia.com/mig-7g.180gb: 1, nvidia.com/mig-1g.10gb+me: 1}
)"),
                                      "p.yaml");
  EXPECT_EQ(k.pods[0].mig_requests,
            (std::vector<MigRequest>{{"1g.10gb+me", 1}, {"1g.5gb", 1}, {"7g.180gb", 1}}));
  expect_error(pod_with_resources(R"(      limits: {nvidia.com/mig-1g.10gb: 113}
)"),
               5, 3, "spec.containers", "more than 112 (16 GPUs x 7 instances)");
}

TEST(K8sYaml, NodeSourcesKeepLabelPositions) {
  const K8sObjects k = parse_k8s_text(R"(kind: List
items:
- kind: Node
  metadata:
    name: a
    labels:
      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      nvidia.com/mig.config: all-1g.10gb
  status:
    allocatable: {cpu: "8", memory: 8Gi}
- kind: Node
  metadata: {name: b}
  status:
    allocatable: {cpu: "8", memory: 8Gi}
)",
                                      "nodes.yaml");
  ASSERT_EQ(k.node_sources.size(), 2u);
  const K8sNodeSource& a = k.node_sources[0];
  EXPECT_EQ(a.node, "a");
  EXPECT_EQ(a.name.file, "nodes.yaml");
  EXPECT_EQ(a.name.line, 5);
  EXPECT_EQ(a.name.column, 11);
  EXPECT_EQ(a.name.field, "items[0].metadata.name");
  const SourcePosition& product = a.labels.at("nvidia.com/gpu.product");
  EXPECT_EQ(product.line, 7);
  EXPECT_EQ(product.column, 31);
  EXPECT_EQ(product.field, "items[0].metadata.labels.nvidia.com/gpu.product");
  EXPECT_EQ(a.labels.at("nvidia.com/mig.config").line, 8);
  EXPECT_EQ(k.node_sources[1].node, "b");
  EXPECT_EQ(k.node_sources[1].name.line, 12);
  EXPECT_TRUE(k.node_sources[1].labels.empty());
}

TEST(K8sYaml, PodSchedulingConstraints) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  priorityClassName: system-node-critical
  preemptionPolicy: Never
  nodeSelector:
    nvidia.com/gpu.product: Tesla-T4
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {key: spot, value: "true", effect: NoExecute, tolerationSeconds: 30}
  - {operator: Exists}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: gpu-mem, operator: Gt, values: ["15"]}
          - {key: zone, operator: In, values: [a, b]}
        - matchFields:
          - {key: metadata.name, operator: In, values: [node-7]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 20
        preference:
          matchExpressions: [{key: spot, operator: DoesNotExist}]
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector:
            matchExpressions: [{key: app, operator: NotIn, values: [db]}]
          namespaces: [prod]
          topologyKey: topology.kubernetes.io/zone
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: cache}}, topologyKey: kubernetes.io/hostname}
  containers: [{name: c, resources: {requests: {cpu: 1}}}]
)",
                                      "c.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  const Pod& p = k.pods[0];
  EXPECT_EQ(p.priority_class_name, "system-node-critical");
  EXPECT_EQ(p.priority, 2000001000);  // built-in class
  EXPECT_FALSE(p.preempt_lower_priority);
  const PodConstraints& c = p.constraints;
  ASSERT_EQ(c.node_selector.size(), 1u);
  EXPECT_EQ(c.node_selector[0].second, "Tesla-T4");
  ASSERT_EQ(c.tolerations.size(), 3u);
  EXPECT_EQ(c.tolerations[0].operator_, "Exists");
  EXPECT_EQ(c.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(c.tolerations[1].operator_, "Equal");
  EXPECT_EQ(c.tolerations[1].value, "true");
  EXPECT_EQ(c.tolerations[1].toleration_seconds, 30);
  EXPECT_EQ(c.tolerations[2].key, "");
  EXPECT_FALSE(c.tolerations[2].toleration_seconds.has_value());
  ASSERT_EQ(c.required_node_affinity.size(), 2u);
  ASSERT_EQ(c.required_node_affinity[0].match_expressions.size(), 2u);
  EXPECT_EQ(c.required_node_affinity[0].match_expressions[0].operator_, "Gt");
  EXPECT_EQ(c.required_node_affinity[0].match_expressions[1].values, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(c.required_node_affinity[1].match_fields.size(), 1u);
  EXPECT_EQ(c.required_node_affinity[1].match_fields[0].values[0], "node-7");
  ASSERT_EQ(c.preferred_node_affinity.size(), 1u);
  EXPECT_EQ(c.preferred_node_affinity[0].weight, 20);
  EXPECT_EQ(c.preferred_node_affinity[0].preference.match_expressions[0].operator_, "DoesNotExist");
  ASSERT_EQ(c.required_anti_affinity.size(), 1u);
  EXPECT_EQ(c.required_anti_affinity[0].topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(c.required_anti_affinity[0].label_selector.match_labels[0], (std::pair<std::string, std::string>{"app", "web"}));
  ASSERT_EQ(c.preferred_anti_affinity.size(), 1u);
  EXPECT_EQ(c.preferred_anti_affinity[0].weight, 50);
  EXPECT_EQ(c.preferred_anti_affinity[0].term.namespaces, (std::vector<std::string>{"prod"}));
  EXPECT_EQ(c.preferred_anti_affinity[0].term.label_selector.match_expressions[0].operator_, "NotIn");
  ASSERT_EQ(c.required_affinity.size(), 1u);
  EXPECT_EQ(c.required_affinity[0].topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(c.required_affinity[0].label_selector.match_labels[0], (std::pair<std::string, std::string>{"app", "cache"}));
  // Preferred terms are kept, scored by default-scheduler only: said once, nothing silently dropped.
  EXPECT_EQ(k.warnings, (std::vector<std::string>{"c.yaml:30:7: field 'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution': preferred podAntiAffinity scoring by gpufleet's own policies is not modelled (1 object(s)): they rank the nodes without it (--policy default-scheduler scores it as kube-scheduler does)"}));
}

// -------------------------------------------------------------------------------- Controllers

TEST(K8sYaml, ControllersExpandToOnePodPerReplicaInOrder) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
---
kind: Pod
metadata: {name: single}
spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 4
  completions: 2
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      containers: [{name: c}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  template:
    spec:
      containers: [{name: c}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: scaled-down}
spec:
  replicas: 0
  template:
    spec:
      containers: [{name: c}]
)",
                                      "w.yaml");
  std::vector<std::string> names;
  for (const Pod& p : k.pods) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"web-0", "web-1", "web-2", "single", "db-0", "db-1", "train-0", "train-1",
                                             "once-0", "rs-0"}));
  EXPECT_EQ(k.pods[1].namespace_name, "prod");
  EXPECT_EQ(k.pods[1].cpu_milli, 500);
  EXPECT_EQ(k.pods[1].memory_bytes, 1024 * kBytesPerMib);
  EXPECT_EQ(*label(k.pods[2].labels, "app"), "web");
  EXPECT_EQ(k.pods[4].namespace_name, "default");
  EXPECT_EQ(k.pods[5].num_gpu, 1);
  EXPECT_EQ(k.pods[6].num_gpu, 8);
  EXPECT_EQ(k.pods[6].gpu_request_milli(), 8000);
  // Each pod's object: the Pod itself or its controller (what `serve --replay` makes the pod from).
  std::vector<std::string> owners;
  for (const PodOwner& o : k.pod_owners) owners.push_back(o.kind + "/" + o.name);
  EXPECT_EQ(owners, (std::vector<std::string>{"Deployment/web", "Deployment/web", "Deployment/web", "Pod/single", "StatefulSet/db",
                                              "StatefulSet/db", "Job/train", "Job/train", "Job/once", "ReplicaSet/rs"}));
}

// ------------------------------------------------------------------- PriorityClass, ResourceQuota

TEST(K8sYaml, PriorityClassesResolvePodPriorities) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: defaulted}
spec: {containers: [{name: c}]}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-low}
value: 100
globalDefault: true
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: prod-high}
value: 100000
description: production
---
kind: Pod
metadata: {name: named}
spec: {priorityClassName: prod-high, containers: [{name: c}]}
---
kind: Pod
metadata: {name: explicit}
spec: {priorityClassName: not-in-inputs, priority: 42, containers: [{name: c}]}
---
kind: Pod
metadata: {name: own-policy}
spec: {priorityClassName: batch-low, preemptionPolicy: PreemptLowerPriority, containers: [{name: c}]}
)",
                                      "pc.yaml");
  ASSERT_EQ(k.priority_classes.size(), 2u);
  EXPECT_EQ(k.priority_classes[0].name, "batch-low");
  EXPECT_EQ(k.priority_classes[0].value, 100);
  EXPECT_TRUE(k.priority_classes[0].global_default);
  EXPECT_EQ(k.priority_classes[0].preemption_policy, "Never");
  EXPECT_EQ(k.priority_classes[1].value, 100000);
  EXPECT_FALSE(k.priority_classes[1].global_default);
  EXPECT_EQ(k.priority_classes[1].preemption_policy, "PreemptLowerPriority");
  ASSERT_EQ(k.pods.size(), 4u);
  // The global default applies even to a pod that came before its class in the input.
  EXPECT_EQ(k.pods[0].priority_class_name, "batch-low");
  EXPECT_EQ(k.pods[0].priority, 100);
  EXPECT_FALSE(k.pods[0].preempt_lower_priority);
  EXPECT_EQ(k.pods[1].priority, 100000);
  EXPECT_TRUE(k.pods[1].preempt_lower_priority);
  EXPECT_EQ(k.pods[2].priority, 42);  // spec.priority wins; the class need not be known
  EXPECT_EQ(k.pods[3].priority, 100);
  EXPECT_TRUE(k.pods[3].preempt_lower_priority);
}

TEST(K8sYaml, ResourceQuota) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: team-a}
spec:
  hard:
    requests.nvidia.com/gpu: "16"
    limits.nvidia.com/gpu: "16"
    requests.cpu: "64"
    requests.memory: 512Gi
    cpu: 500m
    memory: 1G
    pods: "100"
    count/jobs.batch: "5"
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In, values: [prod-high]}
---
kind: ResourceQuota
metadata: {name: empty}
spec: {hard: {}}
)",
                                      "rq.yaml");
  ASSERT_EQ(k.quotas.size(), 2u);
  const admit::ResourceQuotaSpec& q = k.quotas[0];
  EXPECT_EQ(q.namespace_name, "team-a");
  EXPECT_EQ(q.name, "gpu-quota");
  EXPECT_EQ(q.requests_gpu, 16);
  EXPECT_EQ(q.limits_gpu, 16);
  EXPECT_EQ(q.requests_cpu_milli, 64000);
  EXPECT_EQ(q.requests_memory_bytes, (512 * 1024) * kBytesPerMib);
  EXPECT_EQ(q.cpu_milli, 500);
  EXPECT_EQ(q.memory_bytes, 1'000'000'000);  // 1G, exactly
  EXPECT_EQ(q.pods, 100);
  EXPECT_FALSE(q.limits_cpu_milli.has_value());
  EXPECT_EQ(q.other.at("count/jobs.batch"), "5");
  ASSERT_EQ(q.scope_selector.size(), 1u);
  EXPECT_EQ(q.scope_selector[0].key, "PriorityClass");
  EXPECT_EQ(k.quotas[1].namespace_name, "default");
  EXPECT_FALSE(k.quotas[1].requests_gpu.has_value());
  EXPECT_FALSE(k.quotas[1].pods.has_value());
}

TEST(K8sYaml, ResourceQuotaScopesMustBeKubernetesScopes) {
  const K8sObjects k = parse_k8s_text(R"(kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopes: [NotTerminating, BestEffort, VolumeAttributesClass]
)",
                                      "rq.yaml");
  EXPECT_EQ(k.quotas[0].scopes, (std::vector<std::string>{"NotTerminating", "BestEffort", "VolumeAttributesClass"}));
  // An unknown scope would make the quota match nothing: an error at the list item.
  expect_error(R"(kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopes:
  - BestEffort
  - Preemptible
)",
               7, 5, "spec.scopes[1]",
               "unsupported scope 'Preemptible' (supported: Terminating, NotTerminating, BestEffort, NotBestEffort, "
               "PriorityClass, CrossNamespacePodAffinity, VolumeAttributesClass)");
  expect_error(R"(kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopeSelector:
    matchExpressions:
    - {scopeName: priorityClass, operator: In, values: [high]}
)",
               7, 19, "spec.scopeSelector.matchExpressions[0].scopeName", "unsupported scope 'priorityClass'");
}

TEST(K8sYaml, ResourceQuotaHardResourcesNoPodIsChargedForAreWarned) {
  const K8sObjects k = parse_k8s_text(R"(kind: ResourceQuota
metadata: {name: a}
spec:
  hard:
    requests.cpuu: "4"
    requests.nvidia.com/gpu: "4"
    requests.nvidia.com/gpus: "4"
    requests.nvidia.com/mig-1g.10gb: "7"
    requests.nvidia.com/gpu.shared: "8"
    count/pods: "10"
---
kind: ResourceQuota
metadata: {name: b}
spec:
  hard: {requests.cpuu: "8", services: "2", limits.memory: 1Gi}
)",
                                      "rq.yaml");
  ASSERT_EQ(k.quotas.size(), 2u);
  EXPECT_EQ(k.quotas[0].other.at("requests.cpuu"), "4");  // kept, as Kubernetes keeps it
  EXPECT_EQ(k.warnings,
            (std::vector<std::string>{
                "ResourceQuota spec.hard resource 'requests.cpuu' is not enforced by gpufleet: no pod is charged for it "
                "(2 quota(s), first at rq.yaml:5:20)",
                "ResourceQuota spec.hard resource 'requests.nvidia.com/gpus' is not enforced by gpufleet: no pod is "
                "charged for it (1 quota(s), first at rq.yaml:7:31)",
                "ResourceQuota spec.hard resource 'services' is not enforced by gpufleet: no pod is charged for it "
                "(1 quota(s), first at rq.yaml:15:40)"}));
}

// -------------------------------------------------------------------------- NVIDIA configs

TEST(K8sYaml, TimeSlicingConfigInConfigMapAndStandalone) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        renameByDefault: true
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
  tesla-t4: |
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 8
          rename: nvidia.com/gpu.t4
          devices: [0, 1]
  README: just text
---
version: v1
sharing:
  timeSlicing:
    resources:
    - {name: nvidia.com/gpu, replicas: 2, devices: all}
)",
                                      "ts.yaml");
  ASSERT_EQ(k.time_slicing_configs.size(), 3u);
  const TimeSlicingConfig& a = k.time_slicing_configs[0];
  EXPECT_EQ(a.origin.configmap_namespace, "gpu-operator");
  EXPECT_EQ(a.origin.configmap_name, "time-slicing-config");
  EXPECT_EQ(a.origin.data_key, "any");
  EXPECT_EQ(a.origin.file, "ts.yaml");
  EXPECT_EQ(a.origin.line, 7);
  EXPECT_EQ(a.mig_strategy, "none");
  EXPECT_TRUE(a.rename_by_default);
  EXPECT_TRUE(a.fail_requests_greater_than_one);
  ASSERT_EQ(a.resources.size(), 1u);
  EXPECT_EQ(a.resources[0].name, "nvidia.com/gpu");
  EXPECT_EQ(a.resources[0].replicas, 4);
  const TimeSlicingConfig& t4 = k.time_slicing_configs[1];
  EXPECT_EQ(t4.origin.data_key, "tesla-t4");
  EXPECT_FALSE(t4.rename_by_default);
  EXPECT_EQ(t4.resources[0].replicas, 8);
  EXPECT_EQ(t4.resources[0].rename, "nvidia.com/gpu.t4");
  EXPECT_EQ(t4.resources[0].devices, (std::vector<std::string>{"0", "1"}));
  const TimeSlicingConfig& s = k.time_slicing_configs[2];
  EXPECT_EQ(s.origin.configmap_name, "");
  EXPECT_EQ(s.origin.line, 29);
  EXPECT_EQ(s.resources[0].replicas, 2);
  EXPECT_TRUE(s.resources[0].devices.empty());
  EXPECT_TRUE(k.skipped_kinds.empty());
}

TEST(K8sYaml, MigPartedConfigInConfigMapAndStandalone) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: default-mig-parted-config, namespace: gpu-operator}
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
          mig-devices:
            "1g.10gb": 7
      custom-config:
        - device-filter: ["0x20B010DE", "0x20B210DE"]
          devices: [0, 1, 2, 3]
          mig-enabled: false
        - devices: [4, 5, 6, 7]
          mig-enabled: true
          mig-devices: {"3g.40gb": 2}
---
version: v1
mig-configs:
  balanced:
  - devices: all
    device-filter: "0x233010DE"
    mig-enabled: true
    mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
)",
                                      "mig.yaml");
  ASSERT_EQ(k.mig_parted_configs.size(), 2u);
  const MigPartedConfig& m = k.mig_parted_configs[0];
  EXPECT_EQ(m.origin.data_key, "config.yaml");
  EXPECT_EQ(m.origin.configmap_name, "default-mig-parted-config");
  ASSERT_EQ(m.configs.size(), 3u);
  EXPECT_EQ(m.configs[0].name, "all-disabled");  // document order
  EXPECT_TRUE(m.configs[0].groups[0].all_devices);
  EXPECT_FALSE(m.configs[0].groups[0].mig_enabled);
  EXPECT_EQ(m.configs[1].name, "all-1g.10gb");
  EXPECT_EQ(m.configs[1].groups[0].mig_devices.at("1g.10gb"), 7);
  const MigConfig& custom = m.configs[2];
  ASSERT_EQ(custom.groups.size(), 2u);
  EXPECT_EQ(custom.groups[0].devices, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(custom.groups[0].device_filter.size(), 2u);
  EXPECT_FALSE(custom.groups[0].all_devices);
  EXPECT_TRUE(custom.groups[1].mig_enabled);
  EXPECT_EQ(custom.groups[1].mig_devices.at("3g.40gb"), 2);
  const MigPartedConfig& s = k.mig_parted_configs[1];
  EXPECT_EQ(s.origin.configmap_name, "");
  ASSERT_EQ(s.configs.size(), 1u);
  EXPECT_EQ(s.configs[0].groups[0].device_filter, (std::vector<std::string>{"0x233010DE"}));
  EXPECT_EQ(s.configs[0].groups[0].mig_devices.size(), 3u);
}

TEST(K8sYaml, UnknownKindsAreCountedAndWarnedOncePerKind) {
  const K8sObjects k = parse_k8s_text(R"(kind: Service
metadata: {name: a}
---
kind: Service
metadata: {name: b}
---
kind: ConfigMap
metadata: {name: settings}
data: {log-level: debug}
---
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
)",
                                      "misc.yaml");
  EXPECT_EQ(k.skipped_kinds, (std::map<std::string, int>{{"ConfigMap", 1}, {"CronJob", 1}, {"Service", 2}}));
  ASSERT_EQ(k.warnings.size(), 3u);
  EXPECT_NE(k.warnings[2].find("skipped 2 Service object(s)"), std::string::npos) << k.warnings[2];
  EXPECT_NE(k.warnings[2].find("misc.yaml:1:1"), std::string::npos) << k.warnings[2];
  EXPECT_NE(k.warnings[1].find("misc.yaml:12:1"), std::string::npos) << k.warnings[1];
  EXPECT_TRUE(k.pods.empty());
}

// ------------------------------------------------------------------------ JSON and List inputs

TEST(K8sYaml, FileWithoutObjectsIsWarned) {
  for (const char* text : {"", "---\n", "# nothing yet\n---\n---\n"}) {
    const K8sObjects k = parse_k8s_text(text, "empty.yaml");
    EXPECT_TRUE(k.pods.empty());
    EXPECT_EQ(k.warnings,
              (std::vector<std::string>{"empty.yaml: no objects (the file is empty or holds only empty documents)"}))
        << text;
  }
  EXPECT_TRUE(parse_k8s_text("---\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n", "a.yaml")
                  .warnings.empty());
}

TEST(K8sYaml, JsonListFromKubectl) {
  const K8sObjects k = parse_k8s_text(R"({
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}},
            "status": {
                "allocatable": {"cpu": "63900m", "memory": "481Gi", "nvidia.com/gpu": "8", "pods": "110"},
                "capacity": {"cpu": "64", "memory": "492Gi", "nvidia.com/gpu": "8", "pods": "110"}
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p1", "namespace": "ml"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": 4, "memory": "16Gi", "nvidia.com/gpu": 1},
                                                             "limits": {"nvidia.com/gpu": 1}}}],
                "priority": 1000,
                "nodeName": "n1"
            },
            "status": {"phase": "Running"}
        },
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    ]
}
)",
                                      "all.json");
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].cpu_milli, 63900);
  EXPECT_EQ(k.nodes[0].gpu_count, 8);
  EXPECT_EQ(k.nodes[0].gpu_model, "Tesla-V100-SXM2-16GB");
  ASSERT_EQ(k.pods.size(), 1u);
  EXPECT_EQ(k.pods[0].cpu_milli, 4000);
  EXPECT_EQ(k.pods[0].memory_bytes, 16384 * kBytesPerMib);
  EXPECT_EQ(k.pods[0].num_gpu, 1);
  EXPECT_EQ(k.pods[0].priority, 1000);
  EXPECT_EQ(k.skipped_kinds.at("Service"), 1);
}

TEST(K8sYaml, ApiPodListItemsTakeTheListKind) {
  // The API server's PodList items carry no kind.
  const K8sObjects k = parse_k8s_text(
      R"({"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}},
      {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c"}]}}]})",
      "pods.json");
  ASSERT_EQ(k.pods.size(), 2u);
  EXPECT_EQ(k.pods[1].name, "b");
}

// -------------------------------------------------------------------------------- Directories

class K8sYamlDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufleet_k8s_yaml_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(K8sYamlDir, ReadsYamlYmlAndJsonFilesInNameOrder) {
  write("b.yml", "kind: Pod\nmetadata: {name: from-b}\nspec: {containers: [{name: c}]}\n");
  write("a.yaml", "kind: Pod\nmetadata: {name: from-a1}\nspec: {containers: [{name: c}]}\n---\n"
                  "kind: Pod\nmetadata: {name: from-a2}\nspec: {containers: [{name: c}]}\n");
  write("c.json", R"({"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "8", "memory": "32Gi"}}})");
  write("notes.txt", "not: yaml: at: all: [");
  write("sub/d.yaml", "kind: Pod\nmetadata: {name: nested}\nspec: {containers: [{name: c}]}\n");
  const std::string single = (dir_ / "sub" / "d.yaml").string();
  const K8sObjects k = read_k8s_inputs({dir_.string(), single});
  std::vector<std::string> names;
  for (const Pod& p : k.pods) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"from-a1", "from-a2", "from-b", "nested"}));
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].memory_bytes, 32768 * kBytesPerMib);
}

TEST_F(K8sYamlDir, ErrorsNameTheFileInTheDirectory) {
  write("a.yaml", "kind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}\n");
  write("b.yaml", "kind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c}]}\n");
  try {
    read_k8s_inputs({dir_.string()});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (dir_ / "b.yaml").string());
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 11);
    EXPECT_EQ(e.field(), "metadata.name");
  }
}

TEST_F(K8sYamlDir, MissingPathAndEmptyDirectoryAreErrors) {
  EXPECT_THROW(read_k8s_inputs({(dir_ / "absent.yaml").string()}), InputError);
  EXPECT_THROW(read_k8s_inputs({(dir_ / "sub").string() + "/nothing"}), InputError);
  std::filesystem::create_directories(dir_ / "empty");
  write("empty/readme.md", "# no manifests");
  try {
    read_k8s_inputs({(dir_ / "empty").string()});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("no *.yaml"), std::string::npos);
  }
}

// ------------------------------------------------------------------------------------- Errors

TEST(K8sYamlErrors, YamlSyntaxErrorHasTheParserPosition) {
  expect_error("kind: Pod\nmetadata:\n  name: a\n   bad: indent\n", 4, 7, "", "YAML syntax error");
  expect_error("{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"\n", 2, 1, "", "YAML syntax error");
}

TEST(K8sYamlErrors, MalformedQuantity) {
  expect_error(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: "1"
        memory: 12Gb
)",
               9, 17, "spec.containers[0].resources.requests.memory", "'12Gb' is not a valid quantity");
}

TEST(K8sYamlErrors, NegativeRequest) {
  expect_error(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
  - name: d
    resources: {limits: {cpu: "-1"}}
)",
               7, 31, "spec.containers[1].resources.limits.cpu", "negative");
}

TEST(K8sYamlErrors, NonIntegerGpuCount) {
  expect_error(R"(kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits:
            nvidia.com/gpu: 500m
)",
               10, 29, "spec.template.spec.containers[0].resources.limits.nvidia.com/gpu", "not a whole number");
}

TEST(K8sYamlErrors, GpuRequestDiffersFromLimit) {
  expect_error(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
    resources:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 2}
)",
               7, 34, "spec.containers[0].resources.requests.nvidia.com/gpu",
               "Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 2 (the API server refuses the pod)");
}

// A pod for another scheduler is read and placed as the default scheduler would, said once per field
// with its first place and the count of objects. KAI-Scheduler's GPU-sharing annotations are modelled
// on a kai-scheduler pod (model/gpu_memory_share.h) and a warning on any other.
TEST(K8sYaml, OtherSchedulersAndKaiAnnotationsAreNotModelled) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata:
  name: a
  annotations: {gpu-fraction: "0.5"}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c}]
---
kind: Pod
metadata: {name: b}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c}]
---
kind: Pod
metadata: {name: c, annotations: {gpu-fraction: "0.5"}}
spec:
  schedulerName: default-scheduler
  containers: [{name: c}]
)",
                                      "w.yaml");
  ASSERT_EQ(k.pods.size(), 3u);
  ASSERT_TRUE(k.pods[0].gpu_memory_share);
  EXPECT_EQ(k.pods[0].gpu_memory_share->scheduler, GpuMemoryScheduler::kKai);
  EXPECT_EQ(k.pods[0].gpu_memory_share->fraction, 0.5);
  EXPECT_EQ(k.pods[0].gpu_memory_share->cards, 1);
  EXPECT_FALSE(k.pods[1].gpu_memory_share);
  EXPECT_FALSE(k.pods[2].gpu_memory_share);
  ASSERT_EQ(k.not_modelled.size(), 2u);
  EXPECT_EQ(k.not_modelled[0].what, "scheduler 'kai-scheduler'");
  EXPECT_EQ(k.not_modelled[0].objects, 1);
  EXPECT_EQ(k.not_modelled[0].first.line, 12);
  EXPECT_EQ(k.not_modelled[0].first.column, 18);
  EXPECT_EQ(k.not_modelled[0].first.field, "spec.schedulerName");
  EXPECT_EQ(k.not_modelled[1].what, "KAI-Scheduler's GPU sharing annotation on a pod for scheduler 'default-scheduler'");
  EXPECT_EQ(k.not_modelled[1].objects, 1);
  EXPECT_EQ(k.warnings,
            (std::vector<std::string>{
                "w.yaml:12:18: field 'spec.schedulerName': scheduler 'kai-scheduler' is not modelled (1 object(s)): the pod is placed "
                "as kube's default-scheduler would place it",
                "w.yaml:16:49: field 'metadata.annotations.gpu-fraction': KAI-Scheduler's GPU sharing annotation on a pod for scheduler "
                "'default-scheduler' is not modelled (1 object(s)): only kai-scheduler reads it: the pod is placed without the GPU "
                "share it asks for"}));
}

// The rest of the API server's checks of a pod's resources and tolerations, in its words
// (kubernetes pkg/apis/core/validation/validation.go): the pod is refused, not placed.
TEST(K8sYamlErrors, PodsTheApiServerRefuses) {
  const auto pod_with = [](const std::string& container, const std::string& spec = "") {
    return "kind: Pod\nmetadata: {name: a}\nspec:\n" + spec + "  containers:\n  - name: c\n    resources:\n" + container;
  };
  expect_error(pod_with("      requests: {cpu: 1500m, memory: 1Gi}\n      limits: {cpu: \"1\", memory: 1Gi}\n"), 7, 23,
               "spec.containers[0].resources.requests.cpu",
               "Invalid value: \"1500m\": must be less than or equal to cpu limit of 1 (the API server refuses the pod)");
  expect_error(pod_with("      requests: {memory: 2Gi}\n      limits: {memory: 1Gi}\n"), 7, 26,
               "spec.containers[0].resources.requests.memory", "must be less than or equal to memory limit of 1Gi");
  expect_error(pod_with("      requests: {nvidia.com/gpu: 1}\n"), 7, 34, "spec.containers[0].resources.requests.nvidia.com/gpu",
               "resources.limits: Required value: Limit must be set for non overcommitable resources");
  expect_error(pod_with("      limits: {cpu: 1}\n",
                        "  tolerations: [{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}]\n"),
               4, 52, "spec.tolerations[0].effect",
               "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set");
  // Accepted: a request below its limit, a limit alone (the request defaults to it), NoExecute with seconds.
  const K8sObjects k = parse_k8s_text(pod_with("      requests: {cpu: 500m}\n      limits: {cpu: \"1\", nvidia.com/gpu: 1}\n",
                                               "  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]\n"),
                                      "ok.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  EXPECT_EQ(k.pods[0].cpu_milli, 500);
  EXPECT_EQ(k.pods[0].num_gpu, 1);
}

// Kubernetes sets no per-pod GPU limit: 12 GPUs is a request like any other (the openb trace's
// 8-GPU limit does not apply); only a count beyond an int32-safe bound is refused.
TEST(K8sYamlErrors, GpusPerPodHaveNoKubernetesLimit) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - {name: c, resources: {limits: {nvidia.com/gpu: 6}}}
  - {name: d, resources: {limits: {nvidia.com/gpu: 6}}}
)",
                                      "in.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  EXPECT_EQ(k.pods[0].num_gpu, 12);
  expect_error(R"(kind: Pod
metadata: {name: a}
spec:
  containers:
  - {name: c, resources: {limits: {nvidia.com/gpu: 1000001}}}
)",
               5, 3, "spec.containers", "1000001 nvidia.com/gpu");
}

TEST(K8sYamlErrors, MissingMetadataName) {
  expect_error("kind: Pod\nmetadata:\n  namespace: x\n  generateName: p-\nspec: {containers: [{name: c}]}\n", 3, 3,
               "metadata.name", "required field is missing");
  expect_error("---\nkind: Node\n", 2, 1, "metadata.name", "required field is missing");
}

TEST(K8sYamlErrors, ErrorInListItemNamesTheItem) {
  expect_error(R"({"kind": "List", "items": [
  {"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}},
  {"kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "two"}}}]}}
]}
)",
               3, 118, "items[1].spec.containers[0].resources.requests.cpu", "not a valid quantity");
}

TEST(K8sYamlErrors, ErrorInsideConfigMapLiteralBlockPointsIntoTheBlock) {
  expect_error(R"(kind: ConfigMap
metadata: {name: ts}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: many
)",
               10, 21, "data.any.sharing.timeSlicing.resources[0].replicas", "'many' is not an integer");
  expect_error(R"(kind: ConfigMap
metadata: {name: mig}
data:
  config.yaml: |
    version: v1
    mig-configs:
      bad:
        - devices: all
          mig-enabled: maybe
)",
               9, 24, "data.config.yaml.mig-configs.bad[0].mig-enabled", "not a boolean");
}

TEST(K8sYamlErrors, EmbeddedConfigSyntaxErrorAndJsonConfigMap) {
  // A syntax error inside a literal block that is evidently a config: positioned inside the block.
  expect_error(R"(kind: ConfigMap
metadata: {name: ts}
data:
  any: |
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
         bad: indent
)",
               9, 13, "data.any", "YAML syntax error");
  // From `kubectl get cm -o json` the config is a quoted string: it parses the same, and an error
  // points at the string.
  const std::string json =
      R"({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"any": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 3}\n"}})";
  const K8sObjects k = parse_k8s_text(json, "cm.json");
  ASSERT_EQ(k.time_slicing_configs.size(), 1u);
  EXPECT_EQ(k.time_slicing_configs[0].resources[0].replicas, 3);
  std::string bad = json;
  bad.replace(bad.find("replicas: 3"), 11, "replicas: 0");
  expect_error(bad, 1, 66, "data.any.sharing.timeSlicing.resources[0].replicas", "0 is out of range");
}

TEST(K8sYamlErrors, BadNodes) {
  expect_error("kind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {cpu: 1, memory: 1Gi}\n  capacity: {cpu: lots}\n", 5, 19,
               "status.capacity.cpu", "");
  expect_error("kind: Node\nmetadata: {name: n}\nspec:\n  taints: [{key: k, effect: Sometimes}]\n"
               "status: {capacity: {cpu: 1, memory: 1Gi}}\n",
               4, 29, "spec.taints[0].effect", "unknown taint effect");
  expect_error("kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1.5}}\n", 3,
               58, "status.capacity.nvidia.com/gpu", "not a whole number");
  expect_error("kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: 1, memory: 1Gi}}\n---\n"
               "kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: 1, memory: 1Gi}}\n",
               6, 18, "metadata.name", "duplicate node 'n'");
}

TEST(K8sYamlErrors, BadPodFields) {
  expect_error("kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n", 3, 20, "spec.containers",
               "at least one container");
  expect_error("kind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c}]\n  tolerations: [{key: k, operator: Maybe}]\n",
               5, 36, "spec.tolerations[0].operator", "unknown operator 'Maybe'");
  expect_error("kind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c}]\n  nodeSelector: [a, b]\n", 5, 17,
               "spec.nodeSelector", "expected a mapping, got a list");
  expect_error(R"(kind: Pod
metadata: {name: a}
spec:
  containers: [{name: c}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In}]
)",
               9, 30, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                      ".matchExpressions[0].values",
               "needs at least one value");
  expect_error("kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: -2\n  template: {spec: {containers: [{name: c}]}}\n",
               4, 13, "spec.replicas", "negative");
  expect_error("kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
               "kind: Job\nmetadata: {name: a}\nspec: {parallelism: 1, template: {spec: {containers: [{name: c}]}}}\n---\n"
               "kind: Pod\nmetadata: {name: a-0}\nspec: {containers: [{name: c}]}\n",
               10, 18, "metadata.name", "duplicate pod 'a-0'");
}

TEST(K8sYamlErrors, UnknownPriorityClassAndSecondGlobalDefault) {
  expect_error("kind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c}]\n  priorityClassName: gold\n", 5, 22,
               "spec.priorityClassName", "unknown PriorityClass 'gold'");
  expect_error("kind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\n"
               "kind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n",
               9, 16, "globalDefault", "already the global default");
  expect_error("kind: PriorityClass\nmetadata: {name: a}\n", 1, 1, "value", "required field is missing");
}

TEST(K8sYamlErrors, PriorityClassValueAboveTheUserMaximum) {
  expect_error("kind: PriorityClass\nmetadata: {name: urgent}\nvalue: 1000000001\n", 3, 8, "value",
               "value 1000000001 is above 1000000000: a user-defined PriorityClass may not exceed 1000000000; only the "
               "built-in system-cluster-critical (2000000000) and system-node-critical (2000001000) are higher, and "
               "names starting with 'system-' are reserved for them");
  expect_error("kind: PriorityClass\nmetadata: {name: system-urgent}\nvalue: 5\n", 2, 18, "metadata.name",
               "'system-urgent' is a reserved name");
  expect_error("kind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 2000000000\n", 3, 8, "value",
               "system-node-critical must have value 2000001000, got 2000000000");
  // The maximum, and the built-in classes as `kubectl get priorityclass -o yaml` lists them.
  const K8sObjects k = parse_k8s_text(
      "kind: PriorityClass\nmetadata: {name: top}\nvalue: 1000000000\n---\n"
      "kind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 2000001000\n---\n"
      "kind: PriorityClass\nmetadata: {name: system-cluster-critical}\nvalue: 2000000000\n---\n"
      "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], priorityClassName: system-node-critical}\n",
      "pc.yaml");
  ASSERT_EQ(k.priority_classes.size(), 3u);
  EXPECT_EQ(k.priority_classes[0].value, 1000000000);
  EXPECT_EQ(k.pods[0].priority, 2000001000);
}

TEST(K8sYamlErrors, DocumentWithoutKindOrNotAMapping) {
  expect_error("apiVersion: v1\nmetadata: {name: a}\n", 1, 1, "kind", "missing kind");
  expect_error("- kind: Pod\n", 1, 1, "", "expected a Kubernetes object");
  expect_error("version: v2\nmig-configs: {}\n", 1, 10, "version", "unsupported version 'v2'");
}


// ------------------------------------------------------------------- uid and device annotations

// metadata.uid is read for every Pod; the device annotations only for a Pod with spec.nodeName.
TEST(K8sYaml, PodUidAndDeviceAnnotations) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata:
  name: bound
  uid: 6a1f-0001
  annotations:
    gpufleet.io/gpu-index: "1,3"
    gpufleet.io/gpu-shared-index: "2,2"
    gpufleet.io/mig-devices: "0:4:3g.40gb"
    gpufleet.io/assume-time: "1764650000000000000"
    other: "x"
spec:
  nodeName: n1
  containers: [{name: c}]
---
kind: Pod
metadata:
  name: pending
  uid: 6a1f-0002
  annotations: {gpufleet.io/gpu-index: "not-an-index"}
spec:
  containers: [{name: c}]
---
kind: Pod
metadata: {name: bare}
spec: {nodeName: n1, containers: [{name: c}]}
)",
                                      "pods.yaml");
  ASSERT_EQ(k.pods.size(), 3u);
  EXPECT_EQ(k.pods[0].uid, "6a1f-0001");
  ASSERT_TRUE(k.pods[0].assigned_devices.has_value());
  EXPECT_EQ(k.pods[0].assigned_devices->gpus, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(k.pods[0].assigned_devices->shared_replicas, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(k.pods[0].assigned_devices->mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}}));
  // Not bound: the malformed annotation is not read at all.
  EXPECT_EQ(k.pods[1].uid, "6a1f-0002");
  EXPECT_FALSE(k.pods[1].assigned_devices.has_value());
  // Bound, no annotations: no uid, no devices recorded.
  EXPECT_EQ(k.pods[2].uid, "");
  EXPECT_FALSE(k.pods[2].assigned_devices.has_value());
}

TEST(K8sYamlErrors, MalformedDeviceAnnotationOfABoundPod) {
  expect_error("kind: Pod\nmetadata:\n  name: p\n  annotations:\n    gpufleet.io/gpu-index: \"0,,1\"\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\n",
               5, 28, "metadata.annotations.gpufleet.io/gpu-index", "'' is not a device index 0..1023");
  expect_error("kind: Pod\nmetadata:\n  name: p\n  annotations: {gpufleet.io/mig-devices: \"0:4\"}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\n",
               4, 42, "metadata.annotations.gpufleet.io/mig-devices", "'0:4' is not gpu:start:profile");
}

}  // namespace
}  // namespace gpufleet::io

namespace gpufleet::io {
namespace {

// kube-scheduler's non-zero requests (schedutil.GetNonzeroRequests): per container, a request not
// named counts 100m / 200 MiB, an explicit 0 stays 0; containers summed, the max with init containers.
TEST(K8sYaml, PodNonZeroRequestsPerContainer) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - {name: i, resources: {requests: {cpu: "3", memory: 64Mi}}}
  containers:
  - {name: a, resources: {requests: {cpu: "1"}}}
  - {name: b, resources: {requests: {cpu: "0", memory: 1Gi}}}
  - {name: c}
)", "p.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  const Pod& p = k.pods[0];
  EXPECT_EQ(p.cpu_milli, 3000);                 // max(1000 + 0, 3000)
  EXPECT_EQ(p.memory_bytes, 1024 * kBytesPerMib);  // max(0 + 1Gi + 0, 64Mi)
  // cpu: 1000 + 0 + 100 = 1100, max with the init container's 3000; memory: 200Mi + 1Gi + 200Mi =
  // 1424Mi, max with 64Mi.
  EXPECT_EQ(p.scoring_cpu_milli, 3000);
  EXPECT_EQ(p.scoring_memory_bytes, 1424 * kBytesPerMib);
}

// A misspelt field of a Pod's spec, its affinity, tolerations or topology spread constraints would
// drop a constraint unseen: each is a warning naming it (kubectl's strict validation refuses it),
// with its position; every field of those types, modelled or not, reads without one.
TEST(K8sYaml, UnknownSchedulingFieldsOfAPodAreNamed) {
  const K8sObjects k = parse_k8s_text(R"(kind: Pod
metadata: {name: a}
spec:
  nodeSelectr: {zone: z2}
  containers: [{name: c}]
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        prefrence:
          matchExpressions: [{key: zone, operator: In, values: [z1]}]
  tolerations: [{key: gpu, operator: Exists, efect: NoSchedule}]
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelectr: {}}]
---
kind: Pod
metadata: {name: b}
spec:
  containers: [{name: c}]
  volumes: []
  securityContext: {}
  hostNetwork: false
  overhead: {}
  schedulingGates: []
  dnsPolicy: ClusterFirst
  tolerations: [{key: gpu, operator: Equal, value: "x", effect: NoExecute, tolerationSeconds: 30}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: b}}, minDomains: 2,
     nodeAffinityPolicy: Honor, nodeTaintsPolicy: Ignore, matchLabelKeys: [pod-template-hash]}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: [z1]}]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        podAffinityTerm: {labelSelector: {matchLabels: {app: b}}, topologyKey: zone, namespaces: [default],
                          matchLabelKeys: [pod-template-hash], mismatchLabelKeys: [tenant]}
)",
                                      "u.yaml");
  ASSERT_EQ(k.pods.size(), 2u);
  EXPECT_TRUE(k.pods[0].constraints.node_selector.empty());  // ignored, as the warning says
  ASSERT_EQ(k.not_modelled.size(), 5u);
  EXPECT_EQ(k.not_modelled[0].what, "unknown field spec.nodeSelectr");
  EXPECT_EQ(k.not_modelled[0].first.line, 4);
  EXPECT_EQ(k.not_modelled[0].first.column, 16);
  EXPECT_EQ(k.not_modelled[0].consequence, "the field is ignored (not a field of v1 PodSpec)");
  EXPECT_EQ(k.not_modelled[1].what,
            "unknown field spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].prefrence");
  EXPECT_EQ(k.not_modelled[1].consequence, "the field is ignored (not a field of v1 PreferredSchedulingTerm)");
  EXPECT_EQ(k.not_modelled[3].what, "unknown field spec.tolerations[0].efect");
  EXPECT_EQ(k.not_modelled[3].consequence, "the field is ignored (not a field of v1 Toleration)");
  EXPECT_EQ(k.not_modelled[2].what, "unknown field spec.topologySpreadConstraints[0].labelSelectr");
  EXPECT_EQ(k.not_modelled[4].what, "preferred podAntiAffinity scoring by gpufleet's own policies");  // modelled by default-scheduler only
  ASSERT_EQ(k.pods[1].constraints.required_node_affinity.size(), 1u);
}

}  // namespace
}  // namespace gpufleet::io
