// TaintToleration (kube-scheduler tainttoleration/taint_toleration.go, v1 Toleration.ToleratesTaint):
// toleration matching, the Filter, the PreferNoSchedule score and the reason strings. Every expected
// value below is worked out by hand from the upstream rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

Toleration tol(std::string key, std::string op, std::string value, std::string effect) {
  Toleration t;
  t.key = std::move(key);
  t.operator_ = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

Node tainted(std::string name, std::vector<Taint> taints) {
  Node n = make_node(std::move(name), 16000, 65536, 0);
  n.taints = std::move(taints);
  return n;
}

Pod tolerating(std::vector<Toleration> tolerations) {
  Pod p = make_pod("p", 1000, 1024, 0, 0);
  p.constraints.tolerations = std::move(tolerations);
  return p;
}

// --- Toleration.ToleratesTaint ----------------------------------------------------------------------

struct TolerateCase {
  const char* what;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

TEST(TaintTolerationTest, ToleratesTaintTable) {
  const std::vector<TolerateCase> cases = {
      {"Equal: key, value and effect equal", tol("gpu", "Equal", "true", "NoSchedule"), {"gpu", "true", "NoSchedule"}, true},
      {"Equal: value differs", tol("gpu", "Equal", "true", "NoSchedule"), {"gpu", "false", "NoSchedule"}, false},
      {"Equal: key differs", tol("gpu", "Equal", "true", "NoSchedule"), {"tpu", "true", "NoSchedule"}, false},
      {"Equal: empty value matches empty value", tol("gpu", "Equal", "", "NoSchedule"), {"gpu", "", "NoSchedule"}, true},
      {"Equal: empty value vs non-empty value", tol("gpu", "Equal", "", "NoSchedule"), {"gpu", "x", "NoSchedule"}, false},
      {"empty operator means Equal (match)", tol("gpu", "", "true", "NoSchedule"), {"gpu", "true", "NoSchedule"}, true},
      {"empty operator means Equal (no match)", tol("gpu", "", "true", "NoSchedule"), {"gpu", "no", "NoSchedule"}, false},
      {"Exists: any value of the key", tol("gpu", "Exists", "", "NoSchedule"), {"gpu", "anything", "NoSchedule"}, true},
      {"Exists: ignores its own value", tol("gpu", "Exists", "zzz", "NoSchedule"), {"gpu", "true", "NoSchedule"}, true},
      {"Exists: key differs", tol("gpu", "Exists", "", "NoSchedule"), {"tpu", "true", "NoSchedule"}, false},
      {"empty key + Exists tolerates NoSchedule", tol("", "Exists", "", ""), {"a", "b", "NoSchedule"}, true},
      {"empty key + Exists tolerates NoExecute", tol("", "Exists", "", ""), {"x", "", "NoExecute"}, true},
      {"empty key + Exists tolerates PreferNoSchedule", tol("", "Exists", "", ""), {"y", "1", "PreferNoSchedule"}, true},
      {"empty key + Exists, effect still must match", tol("", "Exists", "", "NoSchedule"), {"a", "b", "NoExecute"}, false},
      {"empty effect matches NoSchedule", tol("gpu", "Equal", "true", ""), {"gpu", "true", "NoSchedule"}, true},
      {"empty effect matches PreferNoSchedule", tol("gpu", "Equal", "true", ""), {"gpu", "true", "PreferNoSchedule"}, true},
      {"empty effect matches NoExecute", tol("gpu", "Equal", "true", ""), {"gpu", "true", "NoExecute"}, true},
      {"effect NoSchedule vs NoExecute", tol("gpu", "Equal", "true", "NoSchedule"), {"gpu", "true", "NoExecute"}, false},
      {"effect NoExecute vs NoSchedule", tol("gpu", "Exists", "", "NoExecute"), {"gpu", "true", "NoSchedule"}, false},
      {"effect NoSchedule vs PreferNoSchedule", tol("gpu", "Exists", "", "NoSchedule"), {"gpu", "true", "PreferNoSchedule"}, false},
      {"effect PreferNoSchedule vs PreferNoSchedule", tol("gpu", "Exists", "", "PreferNoSchedule"), {"gpu", "1", "PreferNoSchedule"}, true},
      // Upstream quirks, kept as upstream has them.
      {"empty key + Equal: any key with that value", tol("", "Equal", "v", ""), {"a", "v", "NoSchedule"}, true},
      {"empty key + Equal: value differs", tol("", "Equal", "v", ""), {"a", "w", "NoSchedule"}, false},
      {"unknown operator tolerates nothing", tol("gpu", "Gt", "1", ""), {"gpu", "2", "NoSchedule"}, false},
      {"operators are case-sensitive", tol("gpu", "exists", "", ""), {"gpu", "true", "NoSchedule"}, false},
      {"keys are case-sensitive", tol("GPU", "Exists", "", ""), {"gpu", "true", "NoSchedule"}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(tolerates_taint(c.toleration, c.taint), c.tolerates);
    // TolerationsTolerateTaint: the case alone, and ORed with a toleration that tolerates nothing here.
    const std::vector<Toleration> one{c.toleration};
    const std::vector<Toleration> two{tol("unrelated", "Exists", "", ""), c.toleration};
    EXPECT_EQ(tolerations_tolerate_taint(one, c.taint), c.tolerates);
    EXPECT_EQ(tolerations_tolerate_taint(two, c.taint), c.tolerates);
  }
  EXPECT_FALSE(tolerations_tolerate_taint({}, Taint{"a", "b", "NoSchedule"}));
}

// --- Filter ------------------------------------------------------------------------------------------

// n0: no taints; n1: gpu=true:NoSchedule; n2: gpu=true:NoExecute; n3: gpu=true:PreferNoSchedule;
// n4: gpu=true:NoSchedule and workload-type=inference:NoExecute.
std::vector<Node> filter_nodes() {
  return {tainted("n0", {}),
          tainted("n1", {{"gpu", "true", "NoSchedule"}}),
          tainted("n2", {{"gpu", "true", "NoExecute"}}),
          tainted("n3", {{"gpu", "true", "PreferNoSchedule"}}),
          tainted("n4", {{"gpu", "true", "NoSchedule"}, {"workload-type", "inference", "NoExecute"}})};
}

struct FilterCase {
  const char* what;
  std::vector<Toleration> tolerations;
  std::vector<bool> fits;  // per node n0..n4
};

TEST(TaintTolerationTest, FilterTable) {
  const ClusterState state(filter_nodes());
  const std::vector<FilterCase> cases = {
      {"no tolerations: only untainted and PreferNoSchedule nodes", {}, {true, false, false, true, false}},
      {"Equal gpu=true:NoSchedule", {tol("gpu", "Equal", "true", "NoSchedule")}, {true, true, false, true, false}},
      {"Equal gpu=true:NoExecute", {tol("gpu", "Equal", "true", "NoExecute")}, {true, false, true, true, false}},
      {"Equal gpu=false (value differs)", {tol("gpu", "Equal", "false", "")}, {true, false, false, true, false}},
      {"Exists gpu, any effect", {tol("gpu", "Exists", "", "")}, {true, true, true, true, false}},
      {"Exists gpu + workload-type=inference:NoExecute",
       {tol("gpu", "Exists", "", ""), tol("workload-type", "Equal", "inference", "NoExecute")},
       {true, true, true, true, true}},
      {"Exists gpu + workload-type=inference:NoSchedule (effect differs)",
       {tol("gpu", "Exists", "", ""), tol("workload-type", "Equal", "inference", "NoSchedule")},
       {true, true, true, true, false}},
      {"empty key + Exists tolerates everything", {tol("", "Exists", "", "")}, {true, true, true, true, true}},
      {"empty key + Exists:NoSchedule", {tol("", "Exists", "", "NoSchedule")}, {true, true, false, true, false}},
      {"PreferNoSchedule toleration only", {tol("gpu", "Exists", "", "PreferNoSchedule")}, {true, false, false, true, false}},
  };
  const TaintToleration plugin;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Pod pod = tolerating(c.tolerations);
    for (NodeId n = 0; n < state.node_count(); ++n) {
      SCOPED_TRACE(state.node(n).name);
      EXPECT_EQ(plugin.filter(pod, state, n), c.fits[n] ? FilterCode::kFits : TaintToleration::kUntoleratedTaint);
    }
  }
}

TEST(TaintTolerationTest, FirstUntoleratedTaintAndReason) {
  const std::vector<Taint> taints = {{"soft", "x", "PreferNoSchedule"},
                                     {"gpu", "true", "NoSchedule"},
                                     {"workload-type", "inference", "NoExecute"}};
  // PreferNoSchedule is skipped; the first NoSchedule/NoExecute taint in node order is reported.
  const Taint* t = find_untolerated_taint(taints, std::vector<Toleration>{});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "gpu");
  const std::vector<Toleration> gpu_ok = {tol("gpu", "Exists", "", "")};
  t = find_untolerated_taint(taints, gpu_ok);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "workload-type");
  EXPECT_EQ(untolerated_taint_reason(*t), "node(s) had untolerated taint {workload-type: inference}");
  EXPECT_EQ(untolerated_taint_reason(Taint{"dedicated", "", "NoSchedule"}), "node(s) had untolerated taint {dedicated: }");
  const std::vector<Toleration> all_ok = {tol("gpu", "Exists", "", ""), tol("workload-type", "Exists", "", "NoExecute")};
  EXPECT_EQ(find_untolerated_taint(taints, all_ok), nullptr);
  EXPECT_EQ(TaintToleration::kUntoleratedTaint.reason(), "node(s) had untolerated taint(s)");
}

// --- Score -------------------------------------------------------------------------------------------

// s0: none; s1: a=1:PreferNoSchedule; s2: a=1 and b=2 PreferNoSchedule; s3: a=1:NoSchedule (does not
// count); s4: a=1, b=2, c=3 PreferNoSchedule and d=4:NoExecute.
std::vector<Node> score_nodes() {
  return {tainted("s0", {}),
          tainted("s1", {{"a", "1", "PreferNoSchedule"}}),
          tainted("s2", {{"a", "1", "PreferNoSchedule"}, {"b", "2", "PreferNoSchedule"}}),
          tainted("s3", {{"a", "1", "NoSchedule"}}),
          tainted("s4", {{"a", "1", "PreferNoSchedule"}, {"b", "2", "PreferNoSchedule"}, {"c", "3", "PreferNoSchedule"},
                         {"d", "4", "NoExecute"}})};
}

struct ScoreCase {
  const char* what;
  std::vector<Toleration> tolerations;
  std::vector<int32_t> intolerable;  // intolerable PreferNoSchedule taints per node s0..s4
};

// kube's normalized TaintToleration score (helper.DefaultNormalizeScore(100, reverse=true)).
std::vector<int64_t> kube_normalized(const std::vector<int32_t>& counts) {
  int64_t max = 0;
  for (int32_t c : counts) max = std::max<int64_t>(max, c);
  std::vector<int64_t> out;
  for (int32_t c : counts) out.push_back(max == 0 ? 100 : 100 - 100 * c / max);
  return out;
}

TEST(TaintTolerationTest, PreferNoScheduleScoreTable) {
  const ClusterState state(score_nodes());
  const std::vector<ScoreCase> cases = {
      {"no tolerations", {}, {0, 1, 2, 0, 3}},
      {"a Exists:PreferNoSchedule", {tol("a", "Exists", "", "PreferNoSchedule")}, {0, 0, 1, 0, 2}},
      {"a=1, empty effect", {tol("a", "Equal", "1", "")}, {0, 0, 1, 0, 2}},
      {"a=1:NoSchedule does not tolerate PreferNoSchedule", {tol("a", "Equal", "1", "NoSchedule")}, {0, 1, 2, 0, 3}},
      {"a=2 (value differs)", {tol("a", "Equal", "2", "")}, {0, 1, 2, 0, 3}},
      {"a and b", {tol("a", "Exists", "", ""), tol("b", "Equal", "2", "PreferNoSchedule")}, {0, 0, 0, 0, 1}},
      {"empty key + Exists", {tol("", "Exists", "", "")}, {0, 0, 0, 0, 0}},
      {"d=4 NoExecute toleration is irrelevant to the score", {tol("d", "Exists", "", "")}, {0, 1, 2, 0, 3}},
  };
  const TaintToleration plugin;
  EXPECT_FALSE(plugin.cacheable());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Pod pod = tolerating(c.tolerations);
    std::vector<int32_t> ours;
    for (NodeId n = 0; n < state.node_count(); ++n) {
      EXPECT_EQ(count_intolerable_prefer_no_schedule_taints(state.node(n).taints, pod.constraints.tolerations), c.intolerable[n]);
      ours.push_back(plugin.score(pod, state, n, CycleState{}));
      EXPECT_EQ(ours.back(), 100 - c.intolerable[n]);
    }
    // Our un-normalized score orders every pair of nodes exactly as kube's normalized one.
    const auto kube = kube_normalized(c.intolerable);
    for (size_t i = 0; i < ours.size(); ++i)
      for (size_t j = 0; j < ours.size(); ++j) {
        EXPECT_EQ(ours[i] < ours[j], kube[i] < kube[j]) << i << " vs " << j;
        EXPECT_EQ(ours[i] == ours[j], kube[i] == kube[j]) << i << " vs " << j;
      }
  }
  // Hand-checked kube values for "no tolerations": max 3 -> 100, 100-33, 100-66, 100, 0.
  EXPECT_EQ(kube_normalized({0, 1, 2, 0, 3}), (std::vector<int64_t>{100, 67, 34, 100, 0}));
}

// --- Through the Scheduler ---------------------------------------------------------------------------

TEST(TaintTolerationTest, SchedulerPicksFewestPreferNoScheduleAndReportsReason) {
  auto plugin = std::make_shared<TaintToleration>();
  const Profile policy = testing::profile_of("taints", {plugin}, plugin, std::make_shared<BestFitGpuSelector>());
  // No tolerations: s3 and s4 are filtered out (NoSchedule, NoExecute); s0 scores 100, s1 99, s2 98.
  // s0 wins although its tie-break rank is the worst.
  ClusterState state(score_nodes());
  Scheduler s(policy, {4, 3, 2, 1, 0});
  GoRand rng(1);
  ScheduleResult r = s.decide(tolerating({}), state, rng);
  ASSERT_TRUE(r.scheduled());
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(r.score, 100);

  // Every node untolerated: four nodes rejected by the taint filter.
  ClusterState blocked({tainted("b0", {{"workload-type", "inference", "NoSchedule"}}),
                        tainted("b1", {{"workload-type", "inference", "NoSchedule"}}),
                        tainted("b2", {{"workload-type", "training", "NoExecute"}}),
                        tainted("b3", {{"soft", "", "PreferNoSchedule"}, {"gpu", "", "NoSchedule"}})});
  Scheduler s2(policy, {0, 1, 2, 3});
  const Pod soft_only = tolerating({tol("soft", "Exists", "", "")});
  r = s2.decide(soft_only, blocked, rng);
  ASSERT_FALSE(r.scheduled());
  EXPECT_EQ(r.node_to_status.count(TaintToleration::kUntoleratedTaint), 4);
  // kube names each node's first untolerated taint ({key: value}, value empty for b3's gpu taint).
  EXPECT_EQ(testing::fit_error_of(r, soft_only, blocked),
            "0/4 nodes are available: 1 node(s) had untolerated taint {gpu: }, 1 node(s) had untolerated taint "
            "{workload-type: training}, 2 node(s) had untolerated taint {workload-type: inference}.");
}

}  // namespace
}  // namespace gpufleet::sched
