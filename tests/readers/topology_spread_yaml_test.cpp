// spec.topologySpreadConstraints in the Kubernetes YAML reader: every field read, the controllers'
// default selector, and the API server's validation (validateTopologySpreadConstraints) as one
// InputError each, at the offending field.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "support/expect_input_error.h"

namespace gpufleet::io {
namespace {

// A Pod whose topologySpreadConstraints list starts on line 6 (items indented two spaces).
std::string spread_pod(const std::string& items) {
  return "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  topologySpreadConstraints:\n" + items;
}

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { parse_k8s_text(text, "in.yaml"); }, "in.yaml", line, column, field, fragment);
}

TEST(TopologySpreadYaml, EveryFieldIsRead) {
  const K8sObjects k = parse_k8s_text(R"(kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, version: v3}
    spec:
      containers: [{name: c}]
      topologySpreadConstraints:
      - maxSkew: 2
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector:
          matchLabels: {app: web}
        minDomains: 3
        nodeAffinityPolicy: Ignore
        nodeTaintsPolicy: Honor
        matchLabelKeys: [version]
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
)",
                                      "d.yaml");
  ASSERT_EQ(k.pods.size(), 2u);
  EXPECT_TRUE(k.warnings.empty()) << k.warnings.front();
  EXPECT_TRUE(k.not_modelled.empty());
  for (const Pod& p : k.pods) {
    const auto& cs = p.constraints.topology_spread_constraints;
    ASSERT_EQ(cs.size(), 2u);
    EXPECT_EQ(cs[0].max_skew, 2);
    EXPECT_EQ(cs[0].topology_key, "topology.kubernetes.io/zone");
    EXPECT_EQ(cs[0].when_unsatisfiable, UnsatisfiableAction::kDoNotSchedule);
    EXPECT_TRUE(cs[0].has_label_selector);
    EXPECT_EQ(cs[0].label_selector.match_labels, (Labels{{"app", "web"}}));
    EXPECT_EQ(cs[0].min_domains, 3);
    EXPECT_EQ(cs[0].node_affinity_policy, NodeInclusionPolicy::kIgnore);
    EXPECT_EQ(cs[0].node_taints_policy, NodeInclusionPolicy::kHonor);
    EXPECT_EQ(cs[0].match_label_keys, (std::vector<std::string>{"version"}));
    EXPECT_EQ(cs[1].max_skew, 1);
    EXPECT_EQ(cs[1].topology_key, "kubernetes.io/hostname");
    EXPECT_EQ(cs[1].when_unsatisfiable, UnsatisfiableAction::kScheduleAnyway);
    EXPECT_FALSE(cs[1].has_label_selector);
    EXPECT_EQ(cs[1].min_domains, std::nullopt);
    EXPECT_EQ(cs[1].node_affinity_policy, NodeInclusionPolicy::kHonor);  // kube's defaults
    EXPECT_EQ(cs[1].node_taints_policy, NodeInclusionPolicy::kIgnore);
    // The Deployment's selector is the pods' default selector.
    EXPECT_EQ(p.constraints.default_spread_selector.match_labels, (Labels{{"app", "web"}}));
  }
}

// The default selector: a ReplicaSet's and a StatefulSet's spec.selector (with matchExpressions);
// none for a Job's pods or a bare Pod.
TEST(TopologySpreadYaml, DefaultSelectorOfControllersOnly) {
  const K8sObjects k = parse_k8s_text(R"(kind: ReplicaSet
metadata: {name: rs}
spec:
  selector:
    matchExpressions: [{key: tier, operator: In, values: [front]}]
  template:
    metadata: {labels: {tier: front}}
    spec: {containers: [{name: c}]}
---
kind: StatefulSet
metadata: {name: ss}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c}]}
---
kind: Job
metadata: {name: j}
spec:
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec: {containers: [{name: c}]}
---
kind: Pod
metadata: {name: bare, labels: {app: db}}
spec: {containers: [{name: c}]}
)",
                                      "c.yaml");
  ASSERT_EQ(k.pods.size(), 4u);
  ASSERT_EQ(k.pods[0].constraints.default_spread_selector.match_expressions.size(), 1u);
  EXPECT_EQ(k.pods[0].constraints.default_spread_selector.match_expressions[0].key, "tier");
  EXPECT_EQ(k.pods[1].constraints.default_spread_selector.match_labels, (Labels{{"app", "db"}}));
  EXPECT_TRUE(k.pods[2].constraints.default_spread_selector.match_labels.empty());
  EXPECT_TRUE(k.pods[3].constraints.default_spread_selector.match_labels.empty());
  EXPECT_TRUE(k.pods[3].constraints.default_spread_selector.match_expressions.empty());
}

TEST(TopologySpreadYaml, ApiServerValidation) {
  expect_error(spread_pod("  - maxSkew: 0\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"), 6, 14,
               "spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than zero (the API server refuses the pod)");
  // maxSkew missing is 0 (an int32 in the API): at the constraint.
  expect_error(spread_pod("  - topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"), 6, 5,
               "spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than zero");
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: \"\"\n    whenUnsatisfiable: DoNotSchedule\n"), 7, 18,
               "spec.topologySpreadConstraints[0].topologyKey", "Required value: can not be empty");
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: Sometimes\n"), 8, 24,
               "spec.topologySpreadConstraints[0].whenUnsatisfiable",
               "Unsupported value: \"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: zone\n"), 6, 5, "spec.topologySpreadConstraints[0].whenUnsatisfiable",
               "Unsupported value: \"\"");
  // The same {topologyKey, whenUnsatisfiable} twice: at the first (kube checks each against the later ones).
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
                          "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n"
                          "  - {maxSkew: 3, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
               6, 5, "spec.topologySpreadConstraints[0]",
               "{topologyKey, whenUnsatisfiable}: Duplicate value: \"{zone, DoNotSchedule}\" (again at index 2)");
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}\n"), 6, 83,
               "spec.topologySpreadConstraints[0].minDomains", "Invalid value: 0: must be greater than zero");
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n"), 6, 84,
               "spec.topologySpreadConstraints[0].minDomains",
               "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway");
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: honor}\n"), 6, 89,
               "spec.topologySpreadConstraints[0].nodeTaintsPolicy", "Unsupported value: \"honor\": supported values: \"Honor\", \"Ignore\"");
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeAffinityPolicy: Always}\n"), 6, 91,
               "spec.topologySpreadConstraints[0].nodeAffinityPolicy", "Unsupported value: \"Always\"");
  expect_error(spread_pod("  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [version]}\n"), 6, 87,
               "spec.topologySpreadConstraints[0].matchLabelKeys",
               "Forbidden: must not be specified when labelSelector is not set");
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"
                          "    labelSelector: {matchExpressions: [{key: app, operator: Exists}]}\n"
                          "    matchLabelKeys: [version, app]\n"),
               10, 31, "spec.topologySpreadConstraints[0].matchLabelKeys[1]",
               "Invalid value: \"app\": exists in both matchLabelKeys and labelSelector");
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"
                          "    labelSelector: {matchLabels: {app: web}}\n"
                          "    matchLabelKeys: [\"not a key\"]\n"),
               10, 22, "spec.topologySpreadConstraints[0].matchLabelKeys[0]", "'not a key' is not a valid label key");
  // The labelSelector is checked as every label selector is.
  expect_error(spread_pod("  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"
                          "    labelSelector: {matchExpressions: [{key: app, operator: Near}]}\n"),
               9, 61, "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator", "unknown operator 'Near'");
}

}  // namespace
}  // namespace gpufleet::io
