// PodDisruptionBudget: intstr scaling, the disruption controller's status arithmetic, and the YAML
// reader (values and file:line:column:field errors). Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readers/k8s/k8s_yaml.h"
#include "model/cluster_state.h"
#include "model/pod_disruption_budget.h"
#include "support/test_support.h"
#include "util/input_error.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

TEST(PodDisruptionBudgetTest, ScaledValueRoundsUp) {
  EXPECT_EQ(scaled_value_round_up({3, false}, 10), 3);
  EXPECT_EQ(scaled_value_round_up({50, true}, 5), 3);    // ceil(2.5)
  EXPECT_EQ(scaled_value_round_up({33, true}, 10), 4);   // ceil(3.3)
  EXPECT_EQ(scaled_value_round_up({30, true}, 10), 3);   // exact
  EXPECT_EQ(scaled_value_round_up({0, true}, 7), 0);
  EXPECT_EQ(scaled_value_round_up({100, true}, 7), 7);
  EXPECT_EQ(scaled_value_round_up({1, true}, 1), 1);     // ceil(0.01)
  EXPECT_EQ(scaled_value_round_up({50, true}, 0), 0);
}

Pod app_pod(const std::string& name, const std::string& app, const std::string& ns = "default") {
  Pod p = make_pod(name, 100, 100, 0, 0);
  p.namespace_name = ns;
  p.labels = {{"app", app}};
  return p;
}

PodDisruptionBudget web_pdb(std::optional<IntOrPercent> min, std::optional<IntOrPercent> max) {
  PodDisruptionBudget b;
  b.name = "web";
  b.has_selector = true;
  b.selector.match_labels = {{"app", "web"}};
  b.min_available = min;
  b.max_unavailable = max;
  return b;
}

// Workload: web-0..web-3 and db-0 (default), web-x in namespace other. Bound: web-0..web-2, db-0,
// web-x; web-3 is pending. So for app=web in default: healthy 3, expected 4.
class PdbStatusTest : public ::testing::Test {
 protected:
  PdbStatusTest() : state_({make_node("n0", 8000, 8192, 0), make_node("n1", 8000, 8192, 0)}) {
    for (int i = 0; i < 4; ++i) workload_.push_back(app_pod("web-" + std::to_string(i), "web"));
    workload_.push_back(app_pod("db-0", "db"));
    workload_.push_back(app_pod("web-x", "web", "other"));
    for (size_t i : {0u, 1u, 2u, 4u, 5u}) state_.allocate(i % 2, workload_[i], {});
  }
  PdbStatus status(const PodDisruptionBudget& b) const { return pdb_status(b, state_, workload_); }
  ClusterState state_;
  std::vector<Pod> workload_;
};

TEST_F(PdbStatusTest, MinAvailableInteger) {
  // desired 2; allowed 3 - 2 = 1
  EXPECT_EQ(status(web_pdb(IntOrPercent{2, false}, std::nullopt)), (PdbStatus{3, 2, 4, 1}));
  // desired 5 > healthy: allowed clamps to 0
  EXPECT_EQ(status(web_pdb(IntOrPercent{5, false}, std::nullopt)), (PdbStatus{3, 5, 4, 0}));
}

TEST_F(PdbStatusTest, MinAvailablePercent) {
  // desired ceil(50% x 4) = 2; allowed 1. 60%: ceil(2.4) = 3; allowed 0.
  EXPECT_EQ(status(web_pdb(IntOrPercent{50, true}, std::nullopt)), (PdbStatus{3, 2, 4, 1}));
  EXPECT_EQ(status(web_pdb(IntOrPercent{60, true}, std::nullopt)), (PdbStatus{3, 3, 4, 0}));
}

TEST_F(PdbStatusTest, MaxUnavailable) {
  // 1: desired 4 - 1 = 3; allowed 0 (web-3 pending already uses the budget).
  EXPECT_EQ(status(web_pdb(std::nullopt, IntOrPercent{1, false})), (PdbStatus{3, 3, 4, 0}));
  // 30%: ceil(1.2) = 2, desired 2; allowed 1. 100%: desired 0; allowed 3.
  EXPECT_EQ(status(web_pdb(std::nullopt, IntOrPercent{30, true})), (PdbStatus{3, 2, 4, 1}));
  EXPECT_EQ(status(web_pdb(std::nullopt, IntOrPercent{100, true})), (PdbStatus{3, 0, 4, 3}));
  // 9 > expected: desired clamps to 0.
  EXPECT_EQ(status(web_pdb(std::nullopt, IntOrPercent{9, false})), (PdbStatus{3, 0, 4, 3}));
}

TEST_F(PdbStatusTest, SelectorAndNamespace) {
  PodDisruptionBudget other = web_pdb(IntOrPercent{0, false}, std::nullopt);
  other.namespace_name = "other";
  EXPECT_EQ(status(other), (PdbStatus{1, 0, 1, 1}));  // web-x only
  PodDisruptionBudget nil = web_pdb(IntOrPercent{0, false}, std::nullopt);
  nil.has_selector = false;
  EXPECT_EQ(status(nil), (PdbStatus{0, 0, 0, 0}));
  EXPECT_FALSE(pdb_selects(nil, workload_[0]));
  PodDisruptionBudget everything = web_pdb(IntOrPercent{1, false}, std::nullopt);
  everything.selector = {};  // policy/v1: the whole namespace (3 web + db bound, 5 in the workload)
  EXPECT_EQ(status(everything), (PdbStatus{4, 1, 5, 3}));
  // Neither field: kube leaves expected and desired at 0, so nothing may be disrupted.
  EXPECT_EQ(status(web_pdb(std::nullopt, std::nullopt)), (PdbStatus{3, 0, 0, 0}));
}

TEST(PdbStatusOfCounts, IsTheArithmeticOfPdbStatus) {
  // The counts of the fixture above, without pods: 4 expected, 3 healthy.
  EXPECT_EQ(pdb_status_of_counts(IntOrPercent{2, false}, std::nullopt, 4, 3), (PdbStatus{3, 2, 4, 1}));
  EXPECT_EQ(pdb_status_of_counts(IntOrPercent{60, true}, std::nullopt, 4, 3), (PdbStatus{3, 3, 4, 0}));
  EXPECT_EQ(pdb_status_of_counts(std::nullopt, IntOrPercent{30, true}, 4, 3), (PdbStatus{3, 2, 4, 1}));
  EXPECT_EQ(pdb_status_of_counts(std::nullopt, IntOrPercent{9, false}, 4, 3), (PdbStatus{3, 0, 4, 3}));
  // maxUnavailable wins when both are set (getExpectedPodCount checks it first).
  EXPECT_EQ(pdb_status_of_counts(IntOrPercent{4, false}, IntOrPercent{1, false}, 4, 4), (PdbStatus{4, 3, 4, 1}));
  EXPECT_EQ(pdb_status_of_counts(std::nullopt, std::nullopt, 4, 3), (PdbStatus{3, 0, 0, 0}));
  EXPECT_EQ(pdb_status_of_counts(IntOrPercent{0, false}, std::nullopt, 0, 0), (PdbStatus{0, 0, 0, 0}));
}

// An openb pod (no namespace) belongs to "default".
TEST_F(PdbStatusTest, EmptyNamespaceIsDefault) {
  Pod p = app_pod("bare", "web", "");
  EXPECT_TRUE(pdb_selects(web_pdb(IntOrPercent{1, false}, std::nullopt), p));
}

// --- The YAML reader --------------------------------------------------------------------------

TEST(PodDisruptionBudgetReader, ReadsEveryForm) {
  const io::K8sObjects k = io::parse_k8s_text(R"(apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: prod}
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: web}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  maxUnavailable: "25%"
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector:
    matchExpressions:
    - {key: app, operator: In, values: [db, cache]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: all}
spec:
  minAvailable: 100%
)",
                                              "pdb.yaml");
  ASSERT_EQ(k.pod_disruption_budgets.size(), 3u);
  EXPECT_TRUE(k.skipped_kinds.empty());
  const PodDisruptionBudget& web = k.pod_disruption_budgets[0];
  EXPECT_EQ(web.namespace_name, "prod");
  EXPECT_EQ(web.name, "web");
  EXPECT_TRUE(web.has_selector);
  EXPECT_EQ(web.selector.match_labels, (Labels{{"app", "web"}}));
  EXPECT_EQ(web.min_available, (IntOrPercent{2, false}));
  EXPECT_FALSE(web.max_unavailable.has_value());
  EXPECT_EQ(web.unhealthy_pod_eviction_policy, "IfHealthyBudget");
  const PodDisruptionBudget& db = k.pod_disruption_budgets[1];
  EXPECT_EQ(db.namespace_name, "default");
  EXPECT_EQ(db.max_unavailable, (IntOrPercent{25, true}));
  EXPECT_EQ(db.selector.match_expressions.size(), 1u);
  EXPECT_EQ(db.unhealthy_pod_eviction_policy, "AlwaysAllow");
  const PodDisruptionBudget& all = k.pod_disruption_budgets[2];
  EXPECT_FALSE(all.has_selector);
  EXPECT_EQ(all.min_available, (IntOrPercent{100, true}));
}

void expect_error(const std::string& spec, int line, int column, const std::string& field, const std::string& fragment) {
  const std::string text = "kind: PodDisruptionBudget\nmetadata: {name: p}\n" + spec;
  try {
    io::parse_k8s_text(text, "pdb.yaml");
    ADD_FAILURE() << "no InputError for\n" << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "pdb.yaml") << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(PodDisruptionBudgetReader, Errors) {
  expect_error("spec:\n  minAvailable: 1\n  maxUnavailable: 1\n", 5, 19, "spec.maxUnavailable", "cannot both be set");
  expect_error("spec:\n  selector: {matchLabels: {a: b}}\n", 4, 3, "spec", "one of minAvailable or maxUnavailable is required");
  expect_error("spec:\n  minAvailable: 150%\n", 4, 17, "spec.minAvailable", "'150%' is more than 100%");
  expect_error("spec:\n  maxUnavailable: a%\n", 4, 19, "spec.maxUnavailable", "'a%' is not a valid percent");
  expect_error("spec:\n  maxUnavailable: \"-5%\"\n", 4, 19, "spec.maxUnavailable", "is not a valid percent");
  expect_error("spec:\n  minAvailable: -1\n", 4, 17, "spec.minAvailable", "negative");
  expect_error("spec:\n  minAvailable: half\n", 4, 17, "spec.minAvailable", "'half' is not an integer");
  expect_error("spec:\n  minAvailable: 1\n  unhealthyPodEvictionPolicy: Never\n", 5, 31, "spec.unhealthyPodEvictionPolicy",
               "unknown unhealthyPodEvictionPolicy 'Never'");
  expect_error("spec:\n  minAvailable: 1\n  selector:\n    matchExpressions: [{key: a, operator: Is}]\n", 6, 43,
               "spec.selector.matchExpressions[0].operator", "unknown operator 'Is'");
  expect_error("", 1, 1, "spec", "required field is missing");
  expect_error("spec:\n  minAvailable: 1\n---\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {minAvailable: 1}\n", 7, 18,
               "metadata.name", "duplicate PodDisruptionBudget 'p' in namespace 'default'");
}

}  // namespace
}  // namespace gpufleet
