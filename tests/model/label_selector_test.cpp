// meta/v1 label selectors (label_selector_matches, apimachinery labels.Requirement.Matches) and the
// reader's nil-versus-empty labelSelector of a pod anti-affinity term.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readers/k8s/k8s_yaml.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {
namespace {

SelectorRequirement req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return SelectorRequirement{std::move(key), std::move(op), std::move(values)};
}

struct SelectorCase {
  const char* what;
  LabelSelector selector;
  bool matches;
};

TEST(LabelSelectorTest, Table) {
  const Labels labels = {{"app", "web"}, {"tier", "gold"}, {"empty", ""}};
  const std::vector<SelectorCase> cases = {
      {"empty selector matches everything", {}, true},
      {"matchLabels: equal", {{{"app", "web"}}, {}}, true},
      {"matchLabels: other value", {{{"app", "db"}}, {}}, false},
      {"matchLabels: absent key", {{{"zone", "a"}}, {}}, false},
      {"matchLabels: empty value present", {{{"empty", ""}}, {}}, true},
      {"matchLabels: two pairs ANDed", {{{"app", "web"}, {"tier", "gold"}}, {}}, true},
      {"matchLabels: second pair fails", {{{"app", "web"}, {"tier", "silver"}}, {}}, false},
      {"In: listed", {{}, {req("app", "In", {"db", "web"})}}, true},
      {"In: not listed", {{}, {req("app", "In", {"db"})}}, false},
      {"In: absent", {{}, {req("zone", "In", {"a"})}}, false},
      {"NotIn: not listed", {{}, {req("app", "NotIn", {"db"})}}, true},
      {"NotIn: listed", {{}, {req("app", "NotIn", {"web"})}}, false},
      {"NotIn: absent matches", {{}, {req("zone", "NotIn", {"a"})}}, true},
      {"Exists: present", {{}, {req("tier", "Exists")}}, true},
      {"Exists: absent", {{}, {req("zone", "Exists")}}, false},
      {"DoesNotExist: absent", {{}, {req("zone", "DoesNotExist")}}, true},
      {"DoesNotExist: present", {{}, {req("app", "DoesNotExist")}}, false},
      {"labels AND expressions", {{{"app", "web"}}, {req("tier", "In", {"gold"})}}, true},
      {"labels AND expressions: expression fails", {{{"app", "web"}}, {req("tier", "NotIn", {"gold"})}}, false},
      {"invalid: In without values", {{}, {req("app", "In")}}, false},
      {"invalid: NotIn without values (label absent)", {{}, {req("zone", "NotIn")}}, false},
      {"invalid: Exists with values", {{}, {req("app", "Exists", {"web"})}}, false},
      {"invalid: Gt is not a label selector operator", {{}, {req("app", "Gt", {"1"})}}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(label_selector_matches(c.selector, labels), c.matches);
  }
}

// A term without labelSelector is nil (matches no pod); `labelSelector: {}` is empty (matches all).
TEST(LabelSelectorTest, ReaderTellsNilFromEmptySelector) {
  const io::K8sObjects k = io::parse_k8s_text(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
      - topologyKey: kubernetes.io/hostname
        labelSelector: {}
)",
                                              "pod.yaml");
  ASSERT_EQ(k.pods.size(), 1u);
  const auto& terms = k.pods[0].constraints.required_anti_affinity;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_FALSE(terms[0].has_label_selector);
  EXPECT_TRUE(terms[1].has_label_selector);
}

}  // namespace
}  // namespace gpufleet
