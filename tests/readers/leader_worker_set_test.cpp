// LeaderWorkerSet (kubernetes-sigs/lws, leaderworkerset.x-k8s.io/v1) in the Kubernetes reader: the
// groups, their pods' names and labels, one pod group per group, the exclusive-topology affinity as
// lws's pod webhook injects it, warnings for fields not modelled, and one precise error per bad value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/leader_worker_set.h"
#include "model/pod_group.h"
#include "readers/k8s/k8s_yaml.h"
#include "support/expect_input_error.h"

namespace gpufleet::io {
namespace {

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { parse_k8s_text(text, "lws.yaml"); }, "lws.yaml", line, column, field, fragment);
}

std::string label_of(const Pod& p, const std::string& key) {
  const std::string* v = find_label(p.labels, key);
  return v ? *v : "<none>";
}

// Two groups of three: a 1-GPU leader and two 8-GPU workers each, exclusive per rack.
const char* kTwoGroups = R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lws
  annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: example.com/rack}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    leaderTemplate:
      metadata: {labels: {role: leader}}
      spec:
        containers:
        - name: c
          resources: {limits: {nvidia.com/gpu: 1}}
    workerTemplate:
      metadata: {labels: {role: worker}}
      spec:
        containers:
        - name: c
          resources: {limits: {nvidia.com/gpu: 8}}
)";

TEST(LeaderWorkerSet, GroupsOfLeaderAndWorkersWithLwsNamesAndLabels) {
  const K8sObjects k = parse_k8s_text(kTwoGroups, "lws.yaml");
  ASSERT_EQ(k.pods.size(), 6u);
  const std::vector<std::string> names = {"lws-0", "lws-0-1", "lws-0-2", "lws-1", "lws-1-1", "lws-1-2"};
  const std::vector<int> gpus = {1, 8, 8, 1, 8, 8};
  // sha1("default/lws-0"), sha1("default/lws-1") by `printf 'default/lws-0' | sha1sum`.
  const std::vector<std::string> keys = {"9f7c49a9534189e737848b962d712086e1d5dfd8", "e3b77691ceaf9c99ab858e9bdc360b8be0489795"};
  for (size_t i = 0; i < 6; ++i) {
    const Pod& p = k.pods[i];
    const size_t g = i / 3, w = i % 3;
    EXPECT_EQ(p.name, names[i]);
    EXPECT_EQ(p.namespace_name, "default");
    EXPECT_EQ(p.num_gpu, gpus[i]) << p.name;
    EXPECT_EQ(label_of(p, "role"), w == 0 ? "leader" : "worker");
    EXPECT_EQ(label_of(p, kLwsNameLabel), "lws");
    EXPECT_EQ(label_of(p, kLwsGroupIndexLabel), std::to_string(g));
    EXPECT_EQ(label_of(p, kLwsWorkerIndexLabel), std::to_string(w));
    EXPECT_EQ(label_of(p, kLwsGroupKeyLabel), keys[g]);
    EXPECT_EQ(label_of(p, kPodGroupLabel), names[3 * g]);
    EXPECT_EQ(k.pod_owners[i].kind, "LeaderWorkerSet");
    EXPECT_EQ(k.pod_owners[i].name, "lws");
    // pod_webhook.go SetExclusiveAffinities: affinity to the own group, anti-affinity to the others.
    ASSERT_EQ(p.constraints.required_affinity.size(), 1u);
    const PodAffinityTerm& same = p.constraints.required_affinity[0];
    EXPECT_EQ(same.topology_key, "example.com/rack");
    ASSERT_EQ(same.label_selector.match_expressions.size(), 1u);
    EXPECT_EQ(same.label_selector.match_expressions[0].key, kLwsGroupKeyLabel);
    EXPECT_EQ(same.label_selector.match_expressions[0].operator_, "In");
    EXPECT_EQ(same.label_selector.match_expressions[0].values, std::vector<std::string>{keys[g]});
    ASSERT_EQ(p.constraints.required_anti_affinity.size(), 1u);
    const PodAffinityTerm& others = p.constraints.required_anti_affinity[0];
    EXPECT_EQ(others.topology_key, "example.com/rack");
    ASSERT_EQ(others.label_selector.match_expressions.size(), 2u);
    EXPECT_EQ(others.label_selector.match_expressions[0].operator_, "Exists");
    EXPECT_EQ(others.label_selector.match_expressions[1].operator_, "NotIn");
    EXPECT_EQ(others.label_selector.match_expressions[1].values, std::vector<std::string>{keys[g]});
  }
  ASSERT_EQ(k.pod_groups.size(), 2u);
  EXPECT_EQ(k.pod_groups[0].name, "lws-0");
  EXPECT_EQ(k.pod_groups[0].min_member, 3);
  EXPECT_EQ(k.pod_groups[1].name, "lws-1");
  EXPECT_EQ(k.pod_groups[1].min_member, 3);
  EXPECT_TRUE(k.warnings.empty()) << k.warnings[0];
  EXPECT_TRUE(k.skipped_kinds.empty());
}

TEST(LeaderWorkerSet, DefaultsOneGroupOfOneFromTheWorkerTemplateWithoutAffinity) {
  const K8sObjects k = parse_k8s_text(R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: solo, namespace: serve}
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "2"}}}
)",
                                      "lws.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  EXPECT_EQ(k.pods[0].name, "solo-0");
  EXPECT_EQ(k.pods[0].namespace_name, "serve");
  EXPECT_EQ(k.pods[0].cpu_milli, 2000);
  EXPECT_EQ(label_of(k.pods[0], kLwsWorkerIndexLabel), "0");
  EXPECT_TRUE(k.pods[0].constraints.required_affinity.empty());
  EXPECT_TRUE(k.pods[0].constraints.required_anti_affinity.empty());
  ASSERT_EQ(k.pod_groups.size(), 1u);
  EXPECT_EQ(k.pod_groups[0].namespace_name, "serve");
  EXPECT_EQ(k.pod_groups[0].min_member, 1);
}

TEST(LeaderWorkerSet, ZeroReplicasMakeNoPods) {
  std::string text = kTwoGroups;
  text.replace(text.find("replicas: 2"), 11, "replicas: 0");
  const K8sObjects k = parse_k8s_text(text, "lws.yaml");
  EXPECT_TRUE(k.pods.empty());
  EXPECT_TRUE(k.pod_groups.empty());
}

TEST(LeaderWorkerSet, FieldsNotModelledAndUnknownFieldsAreWarnedAboutByName) {
  std::string text = kTwoGroups;
  text.replace(text.find("  replicas: 2\n"), 14,
               "  replicas: 2\n  startupPolicy: LeaderReady\n  rolloutStrategy: {type: RollingUpdate}\n  replica: 3\n");
  text.replace(text.find("    size: 3\n"), 12, "    size: 3\n    subGroupPolicy: {subGroupSize: 2}\n");
  const K8sObjects k = parse_k8s_text(text, "lws.yaml");
  EXPECT_EQ(k.pods.size(), 6u);
  ASSERT_EQ(k.warnings.size(), 4u);  // in order of first appearance: spec's keys, then startupPolicy, subGroupPolicy
  EXPECT_EQ(k.warnings[0], "lws.yaml:9:20: field 'spec.rolloutStrategy': LeaderWorkerSet spec.rolloutStrategy is not modelled "
                           "(1 object(s)): the groups are placed as one revision, with no rolling update");
  EXPECT_EQ(k.warnings[1], "lws.yaml:10:12: field 'spec.replica': LeaderWorkerSet unknown field spec.replica is not modelled "
                           "(1 object(s)): the field is ignored (not in leaderworkerset.x-k8s.io/v1)");
  EXPECT_EQ(k.warnings[2], "lws.yaml:8:18: field 'spec.startupPolicy': LeaderWorkerSet spec.startupPolicy is not modelled "
                           "(1 object(s)): the workers are placed with their leader, as one gang, not once the leader is Ready");
  EXPECT_NE(k.warnings[3].find("field 'spec.leaderWorkerTemplate.subGroupPolicy': LeaderWorkerSet "
                               "spec.leaderWorkerTemplate.subGroupPolicy is not modelled"),
            std::string::npos)
      << k.warnings[3];
}

TEST(LeaderWorkerSet, BadValuesAreOneErrorAtTheField) {
  const std::string t = kTwoGroups;
  const auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = t;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_error(edit("size: 3", "size: 0"), 9, 11, "spec.leaderWorkerTemplate.size", "");
  expect_error(edit("replicas: 2", "replicas: -1"), 7, 13, "spec.replicas", "");
  expect_error(edit("replicas: 2", "replicas: 1000001"), 7, 13, "spec.replicas", "");
  std::string big = edit("replicas: 2\n", "replicas: 1000\n");
  big.replace(big.find("size: 3"), 7, "size: 3000000");  // 3e9 pods
  expect_error(big, 7, 13, "spec.replicas", "the product of replicas and size must not exceed 2147483647");
  expect_error(edit("    size: 3\n", "    size: 3\n    restartPolicy: Always\n"), 10, 20, "spec.leaderWorkerTemplate.restartPolicy",
               "unknown restartPolicy 'Always'");
  expect_error(edit("  replicas: 2\n", "  replicas: 2\n  startupPolicy: Leader\n"), 8, 18, "spec.startupPolicy",
               "unknown startupPolicy 'Leader'");
  expect_error(edit("example.com/rack}", "''}"), 5, 65, "metadata.annotations.leaderworkerset.sigs.k8s.io/exclusive-topology",
               "an empty topology key");
  expect_error(edit("    size: 3\n", "    size: 3\n    subGroupPolicy: {subGroupSize: 2, subGroupPolicyType: All}\n"), 10, 59,
               "spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType", "unknown subGroupPolicyType 'All'");
  expect_error(edit("    size: 3\n", "    size: 3\n    subGroupPolicy: {subGroupSize: 4}\n"), 10, 36,
               "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize", "size or size - 1 must be divisible by subGroupSize");
  const std::string no_workers = t.substr(0, t.find("    workerTemplate:"));
  expect_error(no_workers, 9, 5, "spec.leaderWorkerTemplate.workerTemplate", "missing workerTemplate");
  expect_error(edit("      spec:\n        containers:\n        - name: c\n          resources: {limits: {nvidia.com/gpu: 8}}",
                    "      spec:\n        containers:\n        - name: c\n          resources: {limits: {nvidia.com/gpu: eight}}"),
               21, 48, "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.limits.nvidia.com/gpu", "");
}

TEST(LeaderWorkerSet, OtherApiGroupIsSkipped) {
  std::string text = kTwoGroups;
  text.replace(0, text.find('\n'), "apiVersion: example.com/v1");
  const K8sObjects k = parse_k8s_text(text, "lws.yaml");
  EXPECT_TRUE(k.pods.empty());
  EXPECT_EQ(k.skipped_kinds.at("LeaderWorkerSet"), 1);
}

}  // namespace
}  // namespace gpufleet::io
