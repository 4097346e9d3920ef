// The snapshot converter (src/readers/sim/snapshot_workload.h) on the hand-made
// tests/data/snapshot/tiny.json, a `kubectl get pods -A -o json`-style List with a PriorityClass and a
// Node: a ReplicaSet's two equal pods become one 2-replica service, a Job's pod with 1 nvidia.com/gpu
// a job with the PriorityClass's value, a bare pod a job whose CPU is its init container's (kube's
// max rule), a Succeeded pod and a DaemonSet pod are left out with warnings; and errors at line,
// column and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "readers/sim/snapshot_workload.h"
#include "support/expect_input_error.h"

namespace gpufleet::io {
namespace {

const std::string kTiny = std::string(GPUFLEET_SOURCE_DIR) + "/tests/data/snapshot/tiny.json";

bool has_warning(const SnapshotWorkload& s, const std::string& fragment) {
  return std::any_of(s.warnings.begin(), s.warnings.end(), [&](const std::string& w) { return w.find(fragment) != std::string::npos; });
}

TEST(SnapshotWorkload, ConvertsTheLivePodsOfTinyJson) {
  SnapshotWorkloadOptions options;
  options.job_seconds = 3600;
  const SnapshotWorkload s = read_snapshot_workload(kTiny, options);
  ASSERT_EQ(s.items.size(), 3u);
  EXPECT_EQ(s.live_pods, 4);      // 2 web replicas, train, debug
  EXPECT_EQ(s.finished_pods, 1);  // eval-done (Succeeded)
  EXPECT_EQ(s.left_out_pods, 1);  // node-exporter (DaemonSet)
  EXPECT_EQ(s.live_pod_names, (std::vector<std::string>{"web-6d4f8-abcde", "web-6d4f8-fghij", "train-x7k2p", "debug"}));

  const sim::WorkloadSpec& web = s.items[0];  // one service of the ReplicaSet's 2 equal pods
  EXPECT_EQ(web.name, "web-6d4f8");
  EXPECT_EQ(web.namespace_name, "shop");
  EXPECT_EQ(web.kind, sim::WorkloadKind::kService);
  EXPECT_EQ(web.pods, 2);
  EXPECT_EQ(web.cpu_milli, 500);
  EXPECT_EQ(web.memory_bytes, int64_t{512} << 20);
  EXPECT_EQ(web.num_gpu, 0);
  EXPECT_EQ(web.priority, 0);
  EXPECT_EQ(web.arrival_s, 0);
  EXPECT_EQ(web.capacity, sim::CapacityPreference::kSpotOk);

  const sim::WorkloadSpec& train = s.items[1];  // the Job's pod
  EXPECT_EQ(train.name, "train-x7k2p");
  EXPECT_EQ(train.namespace_name, "ml");
  EXPECT_EQ(train.kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(train.pods, 1);
  EXPECT_EQ(train.cpu_milli, 4000);
  EXPECT_EQ(train.memory_bytes, int64_t{16} << 30);
  EXPECT_EQ(train.num_gpu, 1);
  EXPECT_EQ(train.gpu_milli, 1000);
  EXPECT_EQ(train.priority, 1000);  // PriorityClass training
  EXPECT_EQ(train.duration_s, 3600);
  EXPECT_EQ(train.checkpoint_interval_s, 0);

  const sim::WorkloadSpec& debug = s.items[2];  // a bare pod: a job
  EXPECT_EQ(debug.name, "debug");
  EXPECT_EQ(debug.kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(debug.cpu_milli, 1000);                   // max(250m, init 1)
  EXPECT_EQ(debug.memory_bytes, int64_t{256} << 20);  // max(256Mi, init 128Mi)

  EXPECT_TRUE(has_warning(s, "1 pod Succeeded or Failed: history, not load"));
  EXPECT_TRUE(has_warning(s, "1 DaemonSet pod left out"));
  EXPECT_TRUE(has_warning(s, "spec.nodeName (bound to a node) (2 pods): placed anew"));
  EXPECT_TRUE(has_warning(s, "the file's Nodes (1): not load"));
  for (const sim::WorkloadSpec& item : s.items) EXPECT_NO_THROW(sim::validate_spec(item)) << item.name;
}

TEST(SnapshotWorkload, TheExampleOfTheDocs) {
  // examples/snapshot/pods.json (docs/simulate.md): chat's 3 replicas (2 Running, 1 Pending) one
  // service at priority 1000, the fine-tuning Job's pod a 4-GPU job at 100, the notebook a bare-pod job;
  // the Succeeded eval pod and the DCGM exporter's DaemonSet pod left out.
  const SnapshotWorkload s = read_snapshot_workload(std::string(GPUFLEET_SOURCE_DIR) + "/examples/snapshot/pods.json", {});
  ASSERT_EQ(s.items.size(), 3u);
  EXPECT_EQ(s.items[0].name, "chat-7f9c6");
  EXPECT_EQ(s.items[0].kind, sim::WorkloadKind::kService);
  EXPECT_EQ(s.items[0].pods, 3);
  EXPECT_EQ(s.items[0].priority, 1000);
  EXPECT_EQ(s.items[1].name, "finetune-llama-0-hx2pq");
  EXPECT_EQ(s.items[1].kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(s.items[1].num_gpu, 4);
  EXPECT_EQ(s.items[1].priority, 100);
  EXPECT_EQ(s.items[2].name, "notebook-ana");
  EXPECT_EQ(s.items[2].kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(s.finished_pods, 1);
  EXPECT_EQ(s.left_out_pods, 1);
}

TEST(SnapshotWorkload, JobSecondsAreTheCallersChoice) {
  SnapshotWorkloadOptions options;
  options.job_seconds = 120;
  const SnapshotWorkload s = read_snapshot_workload(kTiny, options);
  EXPECT_EQ(s.items[1].duration_s, 120);
  EXPECT_EQ(s.items[2].duration_s, 120);
  options.job_seconds = 0;
  EXPECT_THROW(read_snapshot_workload(kTiny, options), std::invalid_argument);
}

TEST(SnapshotWorkload, GroupsOnlyEqualPodsOfOneController) {
  // Three pods of one StatefulSet, one with another request: two items, each named after its first pod;
  // two pods of one Job stay two jobs (one item would be a gang).
  const std::string text = R"({"kind": "List", "items": [
{"kind": "Pod", "metadata": {"name": "db-0", "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": true}]},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}, "status": {"phase": "Running"}},
{"kind": "Pod", "metadata": {"name": "db-1", "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": true}]},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}, "status": {"phase": "Running"}},
{"kind": "Pod", "metadata": {"name": "db-2", "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": true}]},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}, "status": {"phase": "Running"}},
{"kind": "Pod", "metadata": {"name": "j-a", "ownerReferences": [{"kind": "Job", "name": "j", "controller": true}]},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
{"kind": "Pod", "metadata": {"name": "j-b", "ownerReferences": [{"kind": "Job", "name": "j", "controller": true}]},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
]})";
  const SnapshotWorkload s = parse_snapshot_workload_text(text, "group.json", SnapshotWorkloadOptions{});
  ASSERT_EQ(s.items.size(), 4u);
  EXPECT_EQ(s.items[0].name, "db-0");
  EXPECT_EQ(s.items[0].pods, 2);
  EXPECT_EQ(s.items[1].name, "db-2");
  EXPECT_EQ(s.items[1].pods, 1);
  EXPECT_EQ(s.items[2].name, "j-a");
  EXPECT_EQ(s.items[2].kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(s.items[3].name, "j-b");
  EXPECT_EQ(s.live_pods, 5);  // no status.phase: Pending, as the API server sets it
}

TEST(SnapshotWorkload, ExpressesRequiredNodeAffinityOrSaysWhatItDrops) {
  const std::string text = R"({"kind": "List", "items": [
{"kind": "Pod", "metadata": {"name": "p"},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
  "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
  "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]},
    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]},
    {"key": "gpu-class", "operator": "Exists"}]}]}}}}}
]})";
  const SnapshotWorkload s = parse_snapshot_workload_text(text, "aff.json", SnapshotWorkloadOptions{});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].capacity, sim::CapacityPreference::kOnDemand);
  ASSERT_EQ(s.items[0].node_selector.size(), 1u);
  EXPECT_EQ(s.items[0].node_selector[0], (std::pair<std::string, std::string>{"topology.kubernetes.io/zone", "us-east-1a"}));
  ASSERT_EQ(s.items[0].tolerations.size(), 1u);
  EXPECT_TRUE(has_warning(s, "required node affinity 'gpu-class Exists' (1 pod): the pod is placed without this requirement"));
}

TEST(SnapshotWorkload, NamesWhatItDoesNotModel) {
  const std::string text = R"({"kind": "List", "items": [
{"kind": "Pod", "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z", "labels": {"kueue.x-k8s.io/queue-name": "q", "app": "a"}},
 "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
  "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}},
  "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "a"}}}]},
 "status": {"phase": "Running"}}
]})";
  const SnapshotWorkload s = parse_snapshot_workload_text(text, "odd.json", SnapshotWorkloadOptions{});
  ASSERT_EQ(s.items.size(), 1u);
  for (const char* what : {"odd.json:2:38: spec.nodeName (bound to a node) (1 pod): placed anew on the simulated pools",
                           "metadata.deletionTimestamp (terminating) (1 pod): counted as live",
                           "label kueue.x-k8s.io/queue-name (1 pod): the pod is not queued to Kueue",
                           "pod anti-affinity (1 pod): the pod is placed without it",
                           "topologySpreadConstraints (1 pod): the pod is placed without them"})
    EXPECT_TRUE(has_warning(s, what)) << what;
}

TEST(SnapshotWorkload, ThePriorityClassInTheFileDecides) {
  // spec.priority 5 (admitted under an older class of that name), class value 700 in the file: 700,
  // with a warning; a class not in the file: spec.priority.
  const std::string text = R"({"kind": "List", "items": [
{"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 700},
{"kind": "Pod", "metadata": {"name": "a"}, "spec": {"priorityClassName": "high", "priority": 5,
 "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
{"kind": "Pod", "metadata": {"name": "b"}, "spec": {"priorityClassName": "elsewhere", "priority": 40,
 "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
]})";
  const SnapshotWorkload s = parse_snapshot_workload_text(text, "prio.json", SnapshotWorkloadOptions{});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].priority, 700);
  EXPECT_EQ(s.items[1].priority, 40);
  EXPECT_TRUE(has_warning(s, "spec.priority other than the value of its PriorityClass 'high' (700) (1 pod): the class's value is used"));
}

TEST(SnapshotWorkload, RefusesAnUnknownPhaseAtItsField) {
  const std::string text = R"({"kind": "List", "items": [
{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
 "status": {"phase": "Done"}}
]})";
  testing::expect_input_error([&] { parse_snapshot_workload_text(text, "bad.json", SnapshotWorkloadOptions{}); }, "bad.json", 3, 22,
                              "items[0].status.phase", "unknown phase 'Done'");
}

TEST(SnapshotWorkload, RefusesMoreGpusThanASimulatedPodTakes) {
  const std::string text = R"({"kind": "List", "items": [
{"kind": "Pod", "metadata": {"name": "p"},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "16"}, "limits": {"nvidia.com/gpu": "16"}}}]}}
]})";
  try {
    parse_snapshot_workload_text(text, "big.json", SnapshotWorkloadOptions{});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "big.json");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "items[0].spec.containers");
    EXPECT_NE(std::string(e.what()).find("16 nvidia.com/gpu, more than the simulator's 8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpufleet::io
