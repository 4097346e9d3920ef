// Kueue objects, jobs queued to Kueue and gang PodGroups read through the Kubernetes reader
// (readers/k8s/kueue_yaml.h): exact fields of good inputs, and one precise InputError (file, line, column,
// field) per bad input.
#include "support/expect_input_error.h"
#include "readers/k8s/kueue_yaml.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "util/input_error.h"
#include "support/test_support.h"

namespace gpufleet::io {
namespace {

// Lines joined with '\n': line i of the text (1-based) is lines[i-1].
std::string text(std::initializer_list<std::string> lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// `s` with its only occurrence of `from` replaced by `to`.
std::string subst(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(s.find(from, at + 1), std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

void expect_error(const std::string& in, int line, int column, const std::string& field, const std::string& fragment,
                  const ObjectLimits& limits = kObjectLimits) {
  testing::expect_input_error([&] { parse_k8s_text(in, "in.yaml", limits); }, "in.yaml", line, column, field, fragment);
}

// ---------------------------------------------------------------------------------------------
// Good inputs

const std::string kQueues = text({
    "apiVersion: kueue.x-k8s.io/v1beta1",  // 1
    "kind: ResourceFlavor",
    "metadata: {name: h100}",
    "spec:",
    "  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}",  // 5
    "  nodeTaints: [{key: gpu, value: h100, effect: NoSchedule}]",
    "  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]",
    "  topologyName: topo",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",  // 10
    "kind: ResourceFlavor",
    "metadata: {name: a100-spot}",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: ResourceFlavor",  // 15
    "metadata: {name: default}",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: Topology",
    "metadata: {name: topo}",  // 20
    "spec:",
    "  levels: [{nodeLabel: example.com/block}, {nodeLabel: kubernetes.io/hostname}]",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: ClusterQueue",  // 25
    "metadata: {name: team-a}",
    "spec:",
    "  namespaceSelector: {matchLabels: {team: a}}",
    "  cohort: research",
    "  queueingStrategy: StrictFIFO",  // 30
    "  resourceGroups:",
    "  - coveredResources: [cpu, memory, nvidia.com/gpu]",
    "    flavors:",
    "    - name: h100",
    "      resources:",  // 35
    "      - {name: cpu, nominalQuota: 1500m}",
    "      - {name: memory, nominalQuota: 2Gi}",
    "      - {name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 8, lendingLimit: 4}",
    "    - name: a100-spot",
    "      resources:",  // 40
    "      - {name: nvidia.com/gpu, nominalQuota: \"2.5\"}",
    "      - {name: cpu, nominalQuota: 0}",
    "      - {name: memory, nominalQuota: 1G}",
    "  - coveredResources: [pods]",
    "    flavors: [{name: default, resources: [{name: pods, nominalQuota: 50}]}]",  // 45
    "  preemption:",
    "    withinClusterQueue: LowerOrNewerEqualPriority",
    "    reclaimWithinCohort: Any",
    "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}",
    "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt}",  // 50
    "  fairSharing: {weight: \"0.5\"}",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta2",
    "kind: ClusterQueue",
    "metadata: {name: team-b}",  // 55
    "spec:",
    "  cohortName: research",
    "---",
    "apiVersion: kueue.x-k8s.io/v1alpha1",
    "kind: Cohort",  // 60
    "metadata: {name: research}",
    "spec:",
    "  parentName: org",
    "  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]}]",
    "  fairSharing: {weight: 2}",  // 65
    "---",
    "apiVersion: kueue.x-k8s.io/v1alpha1",
    "kind: Cohort",
    "metadata: {name: org}",
    "spec: {parent: \"\"}",  // 70
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: LocalQueue",
    "metadata: {name: ml, namespace: team-a}",
    "spec: {clusterQueue: team-a}",  // 75
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: LocalQueue",
    "metadata: {name: ml}",
    "spec: {clusterQueue: team-b}",  // 80
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: WorkloadPriorityClass",
    "metadata: {name: high}",
    "value: 1000",  // 85
    "---",
    "apiVersion: config.kueue.x-k8s.io/v1beta1",
    "kind: Configuration",
    "fairSharing: {enable: true}",
    "waitForPodsReady:",  // 90
    "  enable: true",
    "  timeout: 10m30s",
    "  requeuingStrategy: {backoffBaseSeconds: 30, backoffMaxSeconds: 600}",
    "gpufleet: {placementAwareAdmission: true}",
});

TEST(KueueYaml, ReadsEveryKueueKind) {
  const K8sObjects k = parse_k8s_text(kQueues, "in.yaml");
  const queue::KueueObjects& q = k.kueue;
  EXPECT_TRUE(k.skipped_kinds.empty());
  EXPECT_TRUE(k.pods.empty());

  ASSERT_EQ(q.flavors.size(), 3u);
  const queue::ResourceFlavor& h100 = q.flavors[0];
  EXPECT_EQ(h100.name, "h100");
  EXPECT_EQ(h100.node_labels, (Labels{{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  ASSERT_EQ(h100.node_taints.size(), 1u);
  EXPECT_EQ(h100.node_taints[0].key, "gpu");
  EXPECT_EQ(h100.node_taints[0].value, "h100");
  EXPECT_EQ(h100.node_taints[0].effect, "NoSchedule");
  ASSERT_EQ(h100.tolerations.size(), 1u);
  EXPECT_EQ(h100.tolerations[0].key, "spot");
  EXPECT_EQ(h100.tolerations[0].operator_, "Exists");
  EXPECT_EQ(h100.topology_name, "topo");
  EXPECT_EQ(q.flavors[1].name, "a100-spot");
  EXPECT_TRUE(q.flavors[1].topology_name.empty());

  ASSERT_EQ(q.topologies.size(), 1u);
  EXPECT_EQ(q.topologies[0].name, "topo");
  EXPECT_EQ(q.topologies[0].levels, (std::vector<std::string>{"example.com/block", "kubernetes.io/hostname"}));

  ASSERT_EQ(q.cluster_queues.size(), 2u);
  const queue::ClusterQueue& a = q.cluster_queues[0];
  EXPECT_EQ(a.name, "team-a");
  EXPECT_EQ(a.cohort, "research");
  EXPECT_EQ(a.queueing_strategy, queue::QueueingStrategy::kStrictFifo);
  ASSERT_TRUE(a.namespace_selector.has_value());
  EXPECT_EQ(a.namespace_selector->match_labels, (Labels{{"team", "a"}}));
  ASSERT_EQ(a.resource_groups.size(), 2u);
  const queue::ResourceGroup& g0 = a.resource_groups[0];
  EXPECT_EQ(g0.covered_resources, (std::vector<std::string>{"cpu", "memory", "nvidia.com/gpu"}));
  ASSERT_EQ(g0.flavors.size(), 2u);
  EXPECT_EQ(g0.flavors[0].name, "h100");
  ASSERT_EQ(g0.flavors[0].resources.size(), 3u);
  EXPECT_EQ(g0.flavors[0].resources[0].name, "cpu");
  EXPECT_EQ(g0.flavors[0].resources[0].nominal_quota, 1500);  // milli-cores
  EXPECT_FALSE(g0.flavors[0].resources[0].borrowing_limit.has_value());
  EXPECT_FALSE(g0.flavors[0].resources[0].lending_limit.has_value());
  EXPECT_EQ(g0.flavors[0].resources[1].nominal_quota, int64_t{2} << 30);  // bytes
  EXPECT_EQ(g0.flavors[0].resources[2].name, "nvidia.com/gpu");
  EXPECT_EQ(g0.flavors[0].resources[2].nominal_quota, 16000);  // gpu_milli
  EXPECT_EQ(g0.flavors[0].resources[2].borrowing_limit, 8000);
  EXPECT_EQ(g0.flavors[0].resources[2].lending_limit, 4000);
  // Written gpu, cpu, memory: kept in coveredResources order.
  EXPECT_EQ(g0.flavors[1].name, "a100-spot");
  EXPECT_EQ(g0.flavors[1].resources[0].name, "cpu");
  EXPECT_EQ(g0.flavors[1].resources[0].nominal_quota, 0);
  EXPECT_EQ(g0.flavors[1].resources[1].name, "memory");
  EXPECT_EQ(g0.flavors[1].resources[1].nominal_quota, 1'000'000'000);
  EXPECT_EQ(g0.flavors[1].resources[2].name, "nvidia.com/gpu");
  EXPECT_EQ(g0.flavors[1].resources[2].nominal_quota, 2500);
  EXPECT_EQ(a.resource_groups[1].covered_resources, (std::vector<std::string>{"pods"}));
  EXPECT_EQ(a.resource_groups[1].flavors[0].resources[0].nominal_quota, 50);  // whole pods
  EXPECT_EQ(a.preemption.within_cluster_queue, queue::WithinClusterQueue::kLowerOrNewerEqualPriority);
  EXPECT_EQ(a.preemption.reclaim_within_cohort, queue::ReclaimWithinCohort::kAny);
  EXPECT_EQ(a.preemption.borrow_within_cohort, queue::BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(a.preemption.max_priority_threshold, 100);
  EXPECT_TRUE(a.flavor_fungibility.when_can_borrow_try_next);
  EXPECT_FALSE(a.flavor_fungibility.when_can_preempt_try_next);
  EXPECT_EQ(a.fair_sharing_weight_milli, 500);

  const queue::ClusterQueue& b = q.cluster_queues[1];  // defaults; v1beta2 cohortName
  EXPECT_EQ(b.cohort, "research");
  EXPECT_EQ(b.queueing_strategy, queue::QueueingStrategy::kBestEffortFifo);
  EXPECT_TRUE(b.resource_groups.empty());
  EXPECT_EQ(b.preemption.within_cluster_queue, queue::WithinClusterQueue::kNever);
  EXPECT_EQ(b.preemption.reclaim_within_cohort, queue::ReclaimWithinCohort::kNever);
  EXPECT_EQ(b.preemption.borrow_within_cohort, queue::BorrowWithinCohortPolicy::kNever);
  EXPECT_FALSE(b.preemption.max_priority_threshold.has_value());
  EXPECT_FALSE(b.flavor_fungibility.when_can_borrow_try_next);
  EXPECT_TRUE(b.flavor_fungibility.when_can_preempt_try_next);
  EXPECT_EQ(b.fair_sharing_weight_milli, 1000);
  EXPECT_FALSE(b.namespace_selector.has_value());  // absent: no namespace, as Kueue
  ASSERT_EQ(k.warnings.size(), 1u);
  EXPECT_EQ(k.warnings[0].rfind("in.yaml:53:1: ClusterQueue 'team-b' has no spec.namespaceSelector", 0), 0u) << k.warnings[0];

  ASSERT_EQ(q.cohorts.size(), 2u);
  EXPECT_EQ(q.cohorts[0].name, "research");
  EXPECT_EQ(q.cohorts[0].parent, "org");
  ASSERT_EQ(q.cohorts[0].resource_groups.size(), 1u);
  EXPECT_EQ(q.cohorts[0].resource_groups[0].flavors[0].resources[0].nominal_quota, 4000);
  EXPECT_EQ(q.cohorts[0].fair_sharing_weight_milli, 2000);
  EXPECT_EQ(q.cohorts[1].name, "org");
  EXPECT_EQ(q.cohorts[1].parent, "");

  ASSERT_EQ(q.local_queues.size(), 2u);
  EXPECT_EQ(q.local_queues[0].namespace_name, "team-a");
  EXPECT_EQ(q.local_queues[0].name, "ml");
  EXPECT_EQ(q.local_queues[0].cluster_queue, "team-a");
  EXPECT_EQ(q.local_queues[1].namespace_name, "default");
  EXPECT_EQ(q.local_queues[1].cluster_queue, "team-b");

  ASSERT_EQ(q.priority_classes.size(), 1u);
  EXPECT_EQ(q.priority_classes[0].name, "high");
  EXPECT_EQ(q.priority_classes[0].value, 1000);

  EXPECT_TRUE(q.configuration.fair_sharing);
  EXPECT_TRUE(q.configuration.wait_for_pods_ready);
  EXPECT_DOUBLE_EQ(q.configuration.wait_for_pods_ready_timeout_s, 630);
  EXPECT_DOUBLE_EQ(q.configuration.backoff_base_s, 30);
  EXPECT_DOUBLE_EQ(q.configuration.backoff_max_s, 600);
  EXPECT_TRUE(q.configuration.placement_aware);
}

TEST(KueueYaml, ConfigurationDefaultsWithoutOne) {
  const K8sObjects k = parse_k8s_text("kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 1, memory: 1Gi}}\n", "in.yaml");
  EXPECT_FALSE(k.kueue.configuration.fair_sharing);
  EXPECT_FALSE(k.kueue.configuration.wait_for_pods_ready);
  EXPECT_DOUBLE_EQ(k.kueue.configuration.wait_for_pods_ready_timeout_s, 300);
  EXPECT_FALSE(k.kueue.configuration.placement_aware);
  EXPECT_TRUE(k.queued_workloads.empty());
  EXPECT_TRUE(k.pod_groups.empty());
}

// A LocalQueue "ml" in namespace team-a on ClusterQueue q, a Topology of two levels, a
// WorkloadPriorityClass "high" (1000) and a PriorityClass "training" (50): 25 lines.
const std::string kQueue = text({
    "apiVersion: kueue.x-k8s.io/v1beta1",  // 1
    "kind: LocalQueue",
    "metadata: {name: ml, namespace: team-a}",
    "spec: {clusterQueue: q}",
    "---",  // 5
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: ClusterQueue",
    "metadata: {name: q}",
    "spec: {namespaceSelector: {}}",
    "---",  // 10
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: Topology",
    "metadata: {name: t}",
    "spec: {levels: [{nodeLabel: example.com/block}, {nodeLabel: example.com/rack}]}",
    "---",  // 15
    "apiVersion: kueue.x-k8s.io/v1beta1",
    "kind: WorkloadPriorityClass",
    "metadata: {name: high}",
    "value: 1000",
    "---",  // 20
    "apiVersion: scheduling.k8s.io/v1",
    "kind: PriorityClass",
    "metadata: {name: training}",
    "value: 50",
    "---",  // 25
});

const std::string kJobs = kQueue + text({
    "apiVersion: batch/v1",  // 26
    "kind: Job",
    "metadata:",
    "  name: train",
    "  namespace: team-a",  // 30
    "  labels: {kueue.x-k8s.io/queue-name: ml, kueue.x-k8s.io/priority-class: high}",
    "  annotations: {kueue.x-k8s.io/job-min-parallelism: \"2\"}",
    "  creationTimestamp: \"2024-05-01T10:00:00Z\"",
    "spec:",
    "  parallelism: 6",  // 35
    "  completions: 4",
    "  template:",
    "    metadata:",
    "      annotations: {kueue.x-k8s.io/podset-required-topology: example.com/rack}",
    "    spec:",  // 40
    "      priorityClassName: training",
    "      containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {nvidia.com/gpu: 2}}}]",
    "---",
    "apiVersion: jobset.x-k8s.io/v1alpha2",
    "kind: JobSet",  // 45
    "metadata:",
    "  name: js",
    "  namespace: team-a",
    "  labels: {kueue.x-k8s.io/queue-name: ml}",
    "  creationTimestamp: \"2024-05-01T12:01:30.5+02:00\"",  // 50
    "spec:",
    "  replicatedJobs:",
    "  - name: leader",
    "    template: {spec: {template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}}",
    "  - name: workers",  // 55
    "    replicas: 2",
    "    template:",
    "      spec:",
    "        parallelism: 3",
    "        template:",  // 60
    "          metadata: {annotations: {kueue.x-k8s.io/podset-preferred-topology: example.com/block, "
    "kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, kueue.x-k8s.io/podset-slice-size: \"3\"}}",
    "          spec: {containers: [{name: c, resources: {requests: {cpu: 2}}}]}",
    "---",
    "apiVersion: kubeflow.org/v1",
    "kind: PyTorchJob",  // 65
    "metadata: {name: pt, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: ml}}",
    "spec:",
    "  pytorchReplicaSpecs:",
    "    Worker:",
    "      replicas: 3",  // 70
    "      template: {spec: {priorityClassName: training, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}}",
    "    Master:",
    "      template:",
    "        metadata: {annotations: {kueue.x-k8s.io/podset-unconstrained-topology: \"true\"}}",
    "        spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}",  // 75
    "---",
    "apiVersion: batch/v1",
    "kind: Job",
    "metadata: {name: plain, namespace: team-a}",
    "spec:",  // 80
    "  parallelism: 2",
    "  template: {spec: {containers: [{name: c}]}}",
});

TEST(KueueYaml, QueuedJobsBecomeWorkloadsNotPods) {
  const K8sObjects k = parse_k8s_text(kJobs, "in.yaml");
  // Only the Job without the queue-name label is expanded into pods.
  ASSERT_EQ(k.pods.size(), 2u);
  EXPECT_EQ(k.pods[0].name, "plain-0");
  EXPECT_EQ(k.pods[1].name, "plain-1");
  ASSERT_EQ(k.queued_workloads.size(), 3u);

  const queue::Workload& job = k.queued_workloads[0];
  EXPECT_EQ(job.key(), "team-a/train");
  EXPECT_EQ(job.local_queue, "ml");
  EXPECT_EQ(job.priority, 1000);  // the WorkloadPriorityClass, not the pods' class
  EXPECT_EQ(job.priority_class_name, "high");
  EXPECT_DOUBLE_EQ(job.creation_s, 0);
  ASSERT_EQ(job.pod_sets.size(), 1u);
  const queue::PodSet& main = job.pod_sets[0];
  EXPECT_EQ(main.name, "main");
  EXPECT_EQ(main.count, 4);  // parallelism 6 capped at completions 4
  EXPECT_EQ(main.min_count, 2);
  EXPECT_EQ(main.pod_template.namespace_name, "team-a");
  EXPECT_EQ(main.pod_template.cpu_milli, 500);
  EXPECT_EQ(main.pod_template.memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(main.pod_template.num_gpu, 2);
  EXPECT_EQ(main.pod_template.gpu_milli, 1000);
  EXPECT_EQ(main.pod_template.priority, 50);  // the pods keep their PriorityClass
  EXPECT_EQ(main.pod_template.priority_class_name, "training");
  EXPECT_EQ(main.topology.mode, queue::TopologyRequest::Mode::kRequired);
  EXPECT_EQ(main.topology.level, "example.com/rack");
  EXPECT_TRUE(main.topology.slice_level.empty());
  EXPECT_EQ(job.pod_count(), 4);

  const queue::Workload& js = k.queued_workloads[1];
  EXPECT_EQ(js.key(), "team-a/js");
  EXPECT_EQ(js.priority, 0);
  EXPECT_EQ(js.priority_class_name, "");
  EXPECT_DOUBLE_EQ(js.creation_s, 90.5);  // 12:01:30.5+02:00 = 10:01:30.5Z
  ASSERT_EQ(js.pod_sets.size(), 2u);
  EXPECT_EQ(js.pod_sets[0].name, "leader");
  EXPECT_EQ(js.pod_sets[0].count, 1);
  EXPECT_FALSE(js.pod_sets[0].min_count.has_value());
  EXPECT_EQ(js.pod_sets[0].topology.mode, queue::TopologyRequest::Mode::kNone);
  EXPECT_EQ(js.pod_sets[1].name, "workers");
  EXPECT_EQ(js.pod_sets[1].count, 6);  // 2 replicas x parallelism 3
  EXPECT_EQ(js.pod_sets[1].pod_template.cpu_milli, 2000);
  EXPECT_EQ(js.pod_sets[1].topology.mode, queue::TopologyRequest::Mode::kPreferred);
  EXPECT_EQ(js.pod_sets[1].topology.level, "example.com/block");
  EXPECT_EQ(js.pod_sets[1].topology.slice_level, "example.com/rack");
  EXPECT_EQ(js.pod_sets[1].topology.slice_size, 3);

  const queue::Workload& pt = k.queued_workloads[2];
  EXPECT_EQ(pt.key(), "team-a/pt");
  EXPECT_DOUBLE_EQ(pt.creation_s, 0);  // no creationTimestamp
  ASSERT_EQ(pt.pod_sets.size(), 2u);
  EXPECT_EQ(pt.pod_sets[0].name, "master");  // Master first, whatever the order written
  EXPECT_EQ(pt.pod_sets[0].count, 1);
  EXPECT_EQ(pt.pod_sets[0].topology.mode, queue::TopologyRequest::Mode::kUnconstrained);
  EXPECT_EQ(pt.pod_sets[1].name, "worker");
  EXPECT_EQ(pt.pod_sets[1].count, 3);
  EXPECT_EQ(pt.pod_sets[1].pod_template.num_gpu, 8);
  // No WorkloadPriorityClass: the first pod set's PriorityClass that is named (the worker's).
  EXPECT_EQ(pt.priority, 50);
  EXPECT_EQ(pt.priority_class_name, "training");
  EXPECT_EQ(pt.pod_count(), 4);
}

TEST(KueueYaml, GlobalDefaultPriorityClassForQueuedJobs) {
  const K8sObjects k = parse_k8s_text(kQueue + text({
                                                  "apiVersion: scheduling.k8s.io/v1",
                                                  "kind: PriorityClass",
                                                  "metadata: {name: batch}",
                                                  "value: 7",
                                                  "globalDefault: true",
                                                  "---",
                                                  "apiVersion: batch/v1",
                                                  "kind: Job",
                                                  "metadata: {name: j, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: ml}}",
                                                  "spec: {template: {spec: {containers: [{name: c}]}}}",
                                              }),
                                      "in.yaml");
  ASSERT_EQ(k.queued_workloads.size(), 1u);
  EXPECT_EQ(k.queued_workloads[0].priority, 7);
  EXPECT_EQ(k.queued_workloads[0].priority_class_name, "batch");
  EXPECT_EQ(k.queued_workloads[0].pod_sets[0].count, 1);  // parallelism defaults to 1
}

const std::string kGangs = text({
    "apiVersion: scheduling.x-k8s.io/v1alpha1",  // 1
    "kind: PodGroup",
    "metadata: {name: g1, namespace: ml}",
    "spec: {minMember: 2, scheduleTimeoutSeconds: 120}",
    "---",  // 5
    "apiVersion: scheduling.volcano.sh/v1beta1",
    "kind: PodGroup",
    "metadata: {name: g2}",
    "spec: {minMember: 3, queue: research}",
    "---",  // 10
    "apiVersion: batch/v1",
    "kind: Job",
    "metadata: {name: j1, namespace: ml}",
    "spec:",
    "  parallelism: 2",  // 15
    "  template:",
    "    metadata: {labels: {scheduling.x-k8s.io/pod-group: g1}}",
    "    spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}",
    "---",
    "apiVersion: apps/v1",  // 20
    "kind: Deployment",
    "metadata: {name: d2}",
    "spec:",
    "  replicas: 3",
    "  template:",  // 25
    "    metadata: {annotations: {scheduling.k8s.io/group-name: g2}}",
    "    spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}",
});

TEST(KueueYaml, PodGroupsOfBothKinds) {
  const K8sObjects k = parse_k8s_text(kGangs, "in.yaml");
  ASSERT_EQ(k.pod_groups.size(), 2u);
  EXPECT_EQ(k.pod_groups[0].namespace_name, "ml");
  EXPECT_EQ(k.pod_groups[0].name, "g1");
  EXPECT_EQ(k.pod_groups[0].min_member, 2);
  EXPECT_DOUBLE_EQ(k.pod_groups[0].schedule_timeout_s, 120);
  EXPECT_EQ(k.pod_groups[0].queue, "");
  EXPECT_EQ(k.pod_groups[1].namespace_name, "default");
  EXPECT_EQ(k.pod_groups[1].name, "g2");
  EXPECT_EQ(k.pod_groups[1].min_member, 3);
  EXPECT_DOUBLE_EQ(k.pod_groups[1].schedule_timeout_s, 60);
  EXPECT_EQ(k.pod_groups[1].queue, "research");
  ASSERT_EQ(k.pods.size(), 5u);
  EXPECT_EQ(*find_label(k.pods[0].labels, kPodGroupLabel), "g1");
  // Volcano's annotation becomes the member label.
  for (size_t i = 2; i < 5; ++i) {
    ASSERT_NE(find_label(k.pods[i].labels, kPodGroupLabel), nullptr) << k.pods[i].name;
    EXPECT_EQ(*find_label(k.pods[i].labels, kPodGroupLabel), "g2");
  }
}

TEST(KueueYaml, ExamplesRead) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "queues";
  const K8sObjects k = read_k8s_inputs({dir.string()});
  EXPECT_TRUE(k.skipped_kinds.empty());
  EXPECT_TRUE(k.warnings.empty()) << k.warnings.front();
  EXPECT_EQ(k.kueue.flavors.size(), 2u);
  EXPECT_EQ(k.kueue.topologies.size(), 1u);
  ASSERT_EQ(k.kueue.cluster_queues.size(), 2u);
  EXPECT_EQ(k.kueue.cluster_queues[0].cohort, "research");
  EXPECT_EQ(k.kueue.cluster_queues[1].cohort, "research");
  EXPECT_EQ(k.kueue.cluster_queues[1].resource_groups[0].flavors[0].resources[2].lending_limit, 4000);
  EXPECT_EQ(k.kueue.cohorts.size(), 1u);
  EXPECT_EQ(k.kueue.local_queues.size(), 2u);
  EXPECT_EQ(k.kueue.priority_classes.size(), 2u);
  EXPECT_TRUE(k.kueue.configuration.wait_for_pods_ready);
  EXPECT_DOUBLE_EQ(k.kueue.configuration.wait_for_pods_ready_timeout_s, 600);
  EXPECT_TRUE(k.kueue.configuration.placement_aware);
  ASSERT_EQ(k.queued_workloads.size(), 2u);  // files in name order: jobs.yaml first
  EXPECT_EQ(k.queued_workloads[0].key(), "team-a/llm-finetune");
  EXPECT_EQ(k.queued_workloads[0].priority, 1000);
  EXPECT_EQ(k.queued_workloads[0].pod_count(), 2);
  EXPECT_EQ(k.queued_workloads[1].key(), "team-b/eval-sweep");
  EXPECT_EQ(k.queued_workloads[1].priority, 100);
  EXPECT_EQ(k.queued_workloads[1].pod_sets[0].min_count, 2);
  ASSERT_EQ(k.pod_groups.size(), 1u);
  EXPECT_EQ(k.pod_groups[0].min_member, 3);
  EXPECT_EQ(k.pods.size(), 3u);  // the gang's StatefulSet
}

// ---------------------------------------------------------------------------------------------
// Errors

// A ResourceFlavor h100 and a ClusterQueue q over cpu and nvidia.com/gpu: 16 lines.
const std::string kCq = text({
    "apiVersion: kueue.x-k8s.io/v1beta1",  // 1
    "kind: ResourceFlavor",
    "metadata: {name: h100}",
    "---",
    "apiVersion: kueue.x-k8s.io/v1beta1",  // 5
    "kind: ClusterQueue",
    "metadata: {name: q}",
    "spec:",
    "  namespaceSelector: {}",
    "  resourceGroups:",  // 10
    "  - coveredResources: [cpu, nvidia.com/gpu]",
    "    flavors:",
    "    - name: h100",
    "      resources:",
    "      - {name: cpu, nominalQuota: 1}",  // 15
    "      - {name: nvidia.com/gpu, nominalQuota: 8}",
});

TEST(KueueYamlErrors, BaseIsValid) { EXPECT_EQ(parse_k8s_text(kCq, "in.yaml").kueue.cluster_queues.size(), 1u); }

TEST(KueueYamlErrors, UnknownFlavor) {
  expect_error(subst(kCq, "- name: h100", "- name: h200"), 13, 13, "spec.resourceGroups[0].flavors[0].name",
               "unknown ResourceFlavor 'h200'");
}

TEST(KueueYamlErrors, QuotaForResourceNotCovered) {
  expect_error(subst(kCq, "{name: cpu,", "{name: memory,"), 15, 16, "spec.resourceGroups[0].flavors[0].resources[0].name",
               "resource 'memory' is not in this resource group's coveredResources");
}

TEST(KueueYamlErrors, CoveredResourceWithoutQuota) {
  expect_error(subst(kCq, "      - {name: nvidia.com/gpu, nominalQuota: 8}\n", ""), 15, 7,
               "spec.resourceGroups[0].flavors[0].resources", "flavor 'h100' has no quota for covered resource 'nvidia.com/gpu'");
}

TEST(KueueYamlErrors, NegativeQuota) {
  expect_error(subst(kCq, "nominalQuota: 8}", "nominalQuota: -8}"), 16, 46,
               "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota", "'-8' is negative");
}

TEST(KueueYamlErrors, MalformedQuota) {
  expect_error(subst(kCq, "nominalQuota: 8}", "nominalQuota: 8gpus}"), 16, 46,
               "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota", "'8gpus' is not a valid quantity");
}

TEST(KueueYamlErrors, LendingLimitAboveNominalQuota) {
  expect_error(subst(kCq, "nominalQuota: 8}", "nominalQuota: 8, lendingLimit: 9}"), 16, 63,
               "spec.resourceGroups[0].flavors[0].resources[1].lendingLimit", "lendingLimit 9 is above nominalQuota 8");
}

TEST(KueueYamlErrors, BorrowingLimitWithoutCohort) {
  expect_error(subst(kCq, "nominalQuota: 8}", "nominalQuota: 8, borrowingLimit: 2}"), 16, 65,
               "spec.resourceGroups[0].flavors[0].resources[1].borrowingLimit", "borrowingLimit needs a cohort");
  // With a cohort it is fine.
  const K8sObjects k = parse_k8s_text(subst(subst(kCq, "nominalQuota: 8}", "nominalQuota: 8, borrowingLimit: 2}"),
                                            "  namespaceSelector: {}", "  namespaceSelector: {}\n  cohort: c"),
                                      "in.yaml");
  EXPECT_EQ(k.kueue.cluster_queues[0].resource_groups[0].flavors[0].resources[1].borrowing_limit, 2000);
}

TEST(KueueYamlErrors, CohortLimitsWithoutParent) {
  const std::string cohort = text({
      "apiVersion: kueue.x-k8s.io/v1beta1",  // 1
      "kind: ResourceFlavor",
      "metadata: {name: h100}",
      "---",
      "apiVersion: kueue.x-k8s.io/v1alpha1",  // 5
      "kind: Cohort",
      "metadata: {name: root}",
      "spec:",
      "  resourceGroups: [{coveredResources: [cpu], flavors: [{name: h100, resources: [",
      "    {name: cpu, nominalQuota: 4, lendingLimit: 2}]}]}]",  // 10
  });
  expect_error(cohort, 10, 48, "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "lendingLimit needs a parent");
  EXPECT_EQ(parse_k8s_text(subst(cohort, "spec:\n", "spec:\n  parent: org\n"), "in.yaml").kueue.cohorts[0].resource_groups[0]
                .flavors[0].resources[0].lending_limit,
            2000);
}

TEST(KueueYamlErrors, MisspeltQuotaKey) {
  expect_error(subst(kCq, "{name: cpu, nominalQuota: 1}", "{name: cpu, nominalQuote: 1}"), 15, 21,
               "spec.resourceGroups[0].flavors[0].resources[0].nominalQuote", "unknown key 'nominalQuote'");
}

TEST(KueueYamlErrors, MisspeltSpecKey) {
  // kubectl's strict field validation refuses it; read as is it would leave a queue without quota.
  expect_error(subst(kCq, "  resourceGroups:", "  resourcegroups:"), 10, 3, "spec.resourcegroups", "unknown key 'resourcegroups'");
}

TEST(KueueYamlErrors, QuotasSummingAboveTheLimit) {
  // 2 x 3e18 milli-GPUs: each valid, their sum above 2^62 (about 4.6e18).
  const std::string two = subst(kCq, "nvidia.com/gpu, nominalQuota: 8}", "nvidia.com/gpu, nominalQuota: 3000000000000000}") +
                          "---\n" + subst(subst(kCq.substr(kCq.find("apiVersion", 10)), "{name: q}", "{name: q2}"),
                                          "nvidia.com/gpu, nominalQuota: 8}", "nvidia.com/gpu, nominalQuota: 3000000000000000}");
  expect_error(two, 29, 46, "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota", "sum above 2^62 units");
}

TEST(KueueYamlErrors, ResourceInTwoGroups) {
  expect_error(subst(kCq, "      - {name: nvidia.com/gpu, nominalQuota: 8}\n",
                     "      - {name: nvidia.com/gpu, nominalQuota: 8}\n  - coveredResources: [cpu]\n"
                     "    flavors: [{name: h100, resources: [{name: cpu, nominalQuota: 1}]}]\n"),
               17, 24, "spec.resourceGroups[1].coveredResources[0]", "resource 'cpu' is covered by two resource groups");
}

TEST(KueueYamlErrors, WrongType) {
  expect_error(subst(kCq, "coveredResources: [cpu, nvidia.com/gpu]", "coveredResources: cpu"), 11, 23,
               "spec.resourceGroups[0].coveredResources", "expected a list, got a scalar");
}

TEST(KueueYamlErrors, UnknownEnumValues) {
  expect_error(subst(kCq, "  namespaceSelector: {}", "  namespaceSelector: {}\n  queueingStrategy: FIFO"), 10, 21,
               "spec.queueingStrategy", "unknown queueingStrategy 'FIFO' (expected BestEffortFIFO or StrictFIFO)");
  expect_error(subst(kCq, "  namespaceSelector: {}", "  namespaceSelector: {}\n  preemption: {reclaimWithinCohort: Always}"),
               10, 37, "spec.preemption.reclaimWithinCohort",
               "unknown reclaimWithinCohort 'Always' (expected Never, LowerPriority or Any)");
}

TEST(KueueYamlErrors, Duplicates) {
  expect_error(text({"apiVersion: kueue.x-k8s.io/v1beta1", "kind: ResourceFlavor", "metadata: {name: h100}", "---",
                     "apiVersion: kueue.x-k8s.io/v1beta1", "kind: ResourceFlavor", "metadata: {name: h100}"}),
               7, 18, "metadata.name", "duplicate ResourceFlavor 'h100'");
  expect_error(kQueue + text({"apiVersion: kueue.x-k8s.io/v1beta1", "kind: LocalQueue",
                              "metadata: {name: ml, namespace: team-a}", "spec: {clusterQueue: q}"}),
               28, 18, "metadata.name", "duplicate LocalQueue 'ml' in namespace 'team-a'");
}

const std::string kCohortLoop = text({
    "apiVersion: kueue.x-k8s.io/v1alpha1",  // 1
    "kind: Cohort",
    "metadata: {name: a}",
    "spec: {parentName: b}",
    "---",  // 5
    "apiVersion: kueue.x-k8s.io/v1alpha1",
    "kind: Cohort",
    "metadata: {name: b}",
    "spec: {parentName: c}",
    "---",  // 10
    "apiVersion: kueue.x-k8s.io/v1alpha1",
    "kind: Cohort",
    "metadata: {name: c}",
    "spec: {parentName: a}",
});

TEST(KueueYamlErrors, CohortLoop) {
  expect_error(kCohortLoop, 4, 20, "spec.parentName", "cohort loop: a -> b -> c -> a");
  expect_error(text({"apiVersion: kueue.x-k8s.io/v1alpha1", "kind: Cohort", "metadata: {name: a}", "spec: {parent: a}"}), 4, 16,
               "spec.parent", "Cohort 'a' is its own parent");
  // A chain ending at an undeclared cohort is no loop.
  EXPECT_EQ(parse_k8s_text(subst(kCohortLoop, "spec: {parentName: a}", "spec: {parentName: root}"), "in.yaml").kueue.cohorts.size(), 3u);
}

TEST(KueueYamlErrors, LocalQueueOfUnknownClusterQueue) {
  expect_error(subst(kQueue, "spec: {clusterQueue: q}", "spec: {clusterQueue: r}"), 4, 22, "spec.clusterQueue",
               "unknown ClusterQueue 'r'");
}

TEST(KueueYamlErrors, FlavorOfUnknownTopology) {
  expect_error(text({"apiVersion: kueue.x-k8s.io/v1beta1", "kind: ResourceFlavor", "metadata: {name: h100}", "spec: {topologyName: tas}"}),
               4, 22, "spec.topologyName", "unknown Topology 'tas'");
}

// A Job in namespace `ns` queued to "ml" with `annotations` on its pod template: lines 26-33.
std::string queued_job(const std::string& ns, const std::string& template_annotations, const std::string& extra_labels = "") {
  return kQueue + text({
                      "apiVersion: batch/v1",  // 26
                      "kind: Job",
                      "metadata:",
                      "  name: j",
                      "  namespace: " + ns,  // 30
                      "  labels: {kueue.x-k8s.io/queue-name: ml" + extra_labels + "}",
                      "spec:",
                      "  parallelism: 3",
                      "  template:",
                      "    metadata: {annotations: {" + template_annotations + "}}",  // 35
                      "    spec: {containers: [{name: c}]}",
                  });
}

TEST(KueueYamlErrors, JobNamingMissingLocalQueue) {
  EXPECT_EQ(parse_k8s_text(queued_job("team-a", ""), "in.yaml").queued_workloads.size(), 1u);
  expect_error(queued_job("team-b", ""), 31, 39, "metadata.labels.kueue.x-k8s.io/queue-name",
               "no LocalQueue 'ml' in namespace 'team-b'");
}

TEST(KueueYamlErrors, JobNamingUnknownWorkloadPriorityClass) {
  expect_error(queued_job("team-a", "", ", kueue.x-k8s.io/priority-class: low"), 31, 74,
               "metadata.labels.kueue.x-k8s.io/priority-class", "unknown WorkloadPriorityClass 'low'");
}

TEST(KueueYamlErrors, TopologyLevelNoTopologyDefines) {
  expect_error(queued_job("team-a", "kueue.x-k8s.io/podset-required-topology: example.com/zone"), 35, 71,
               "spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology",
               "topology level 'example.com/zone' is not a level of any Topology");
}

TEST(KueueYamlErrors, TopologyLevelNoNodeCarries) {
  const std::string job = queued_job("team-a", "kueue.x-k8s.io/podset-required-topology: example.com/rack");
  const std::string node = text({"---", "kind: Node", "metadata: {name: n1, labels: {example.com/block: b1}}",
                                 "status: {allocatable: {cpu: 8, memory: 32Gi}}"});
  expect_error(job + node, 35, 71, "spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology",
               "topology level 'example.com/rack' is a label of no node among the inputs");
  EXPECT_EQ(parse_k8s_text(job + subst(node, "example.com/block: b1", "example.com/rack: r1"), "in.yaml").queued_workloads.size(), 1u);
}

TEST(KueueYamlErrors, TopologyAnnotations) {
  expect_error(queued_job("team-a", "kueue.x-k8s.io/podset-required-topology: example.com/rack, "
                                    "kueue.x-k8s.io/podset-preferred-topology: example.com/block"),
               35, 131, "spec.template.metadata.annotations.kueue.x-k8s.io/podset-preferred-topology", "give at most one of");
  expect_error(queued_job("team-a", "kueue.x-k8s.io/podset-slice-size: \"2\""), 35, 64,
               "spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-size", "go together");
  expect_error(queued_job("team-a", "kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, "
                                    "kueue.x-k8s.io/podset-slice-size: \"4\""),
               35, 129, "spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-size", "4 is out of range [1, 3]");
}

TEST(KueueYamlErrors, JobMinParallelism) {
  const std::string job = queued_job("team-a", "");
  expect_error(subst(job, "  labels: {kueue.x-k8s.io/queue-name: ml}",
                     "  labels: {kueue.x-k8s.io/queue-name: ml}\n  annotations: {kueue.x-k8s.io/job-min-parallelism: \"3\"}"),
               32, 53, "metadata.annotations.kueue.x-k8s.io/job-min-parallelism", "3 is out of range [1, 2]");
}

TEST(KueueYamlErrors, PyTorchJobReplicaTypes) {
  const std::string pt = kQueue + text({
                                      "apiVersion: kubeflow.org/v1",  // 26
                                      "kind: PyTorchJob",
                                      "metadata: {name: pt, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: ml}}",
                                      "spec:",
                                      "  pytorchReplicaSpecs:",  // 30
                                      "    Chief: {template: {spec: {containers: [{name: c}]}}}",
                                  });
  expect_error(pt, 31, 5, "spec.pytorchReplicaSpecs.Chief", "unknown replica type 'Chief' (expected Master or Worker)");
  expect_error(subst(pt, "Chief: {", "Master: {replicas: 2, "), 31, 24, "spec.pytorchReplicaSpecs.Master.replicas",
               "exactly one Master replica");
}

TEST(KueueYamlErrors, GangMinMemberAboveMembers) {
  expect_error(subst(kGangs, "spec: {minMember: 3, queue: research}", "spec: {minMember: 4, queue: research}"), 9, 19,
               "spec.minMember", "PodGroup 'g2' needs minMember 4 pods but has 3 member pod(s)");
  // Members of another namespace do not count.
  expect_error(subst(kGangs, "metadata: {name: g1, namespace: ml}", "metadata: {name: g1}"), 4, 19, "spec.minMember",
               "PodGroup 'g1' needs minMember 2 pods but has 0 member pod(s)");
}

TEST(KueueYamlErrors, Configuration) {
  const std::string conf = text({"apiVersion: config.kueue.x-k8s.io/v1beta1", "kind: Configuration",
                                 "waitForPodsReady: {enable: true, timeout: 5 minutes}"});
  expect_error(conf, 3, 43, "waitForPodsReady.timeout", "'5 minutes' is not a duration");
  expect_error(subst(conf, "5 minutes", "300"), 3, 43, "waitForPodsReady.timeout", "missing unit");
  EXPECT_DOUBLE_EQ(parse_k8s_text(subst(conf, "5 minutes", "1h30m"), "in.yaml").kueue.configuration.wait_for_pods_ready_timeout_s, 5400);
  expect_error(subst(conf, "5 minutes", "1h30m") + text({"gpufleet: {placementAware: true}"}), 4, 12, "gpufleet.placementAware",
               "unknown key 'placementAware' (expected placementAwareAdmission)");
}

TEST(KueueYamlErrors, Limits) {
  ObjectLimits limits;
  limits.max_kueue_objects = 1;
  expect_error(kCq, 7, 18, "metadata.name", "more than 1 Kueue objects (limit ObjectLimits::max_kueue_objects", limits);
  limits = ObjectLimits{};
  limits.max_pods = 2;  // the Job queues 3 pods
  expect_error(queued_job("team-a", ""), 33, 16, "spec.parallelism", "limit ObjectLimits::max_pods", limits);
  limits = ObjectLimits{};
  limits.max_pod_groups = 1;
  expect_error(kGangs, 8, 18, "metadata.name", "limit ObjectLimits::max_pod_groups", limits);
}

}  // namespace
}  // namespace gpufleet::io
