// NodeAffinity (kube-scheduler nodeaffinity/node_affinity.go, component-helpers nodeaffinity.go,
// apimachinery labels.Requirement): Go integer parsing, every operator, terms, nodeSelector +
// required affinity, matchFields, the preferred-term score and the reason string. Every expected
// value below is worked out by hand from the upstream rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

SelectorRequirement req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return SelectorRequirement{std::move(key), std::move(op), std::move(values)};
}

NodeSelectorTerm term(std::vector<SelectorRequirement> exprs, std::vector<SelectorRequirement> fields = {}) {
  return NodeSelectorTerm{std::move(exprs), std::move(fields)};
}

Node labeled(std::string name, Labels labels) {
  Node n = make_node(std::move(name), 16000, 65536, 0);
  n.labels = std::move(labels);
  return n;
}

// --- Go strconv.ParseInt(s, 10, 64) ------------------------------------------------------------------

TEST(NodeAffinityTest, ParseGoInt64Table) {
  const std::vector<std::pair<std::string, std::optional<int64_t>>> cases = {
      {"0", 0},
      {"42", 42},
      {"+7", 7},
      {"-7", -7},
      {"-0", 0},
      {"007", 7},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"9223372036854775808", std::nullopt},   // out of range
      {"-9223372036854775809", std::nullopt},  // out of range
      {"99999999999999999999", std::nullopt},
      {"", std::nullopt},
      {"+", std::nullopt},
      {"-", std::nullopt},
      {"+-1", std::nullopt},
      {"1.5", std::nullopt},
      {" 1", std::nullopt},
      {"1 ", std::nullopt},
      {"0x10", std::nullopt},
      {"1_000", std::nullopt},  // underscores only with base 0
      {"1e3", std::nullopt},
      {"abc", std::nullopt},
      {"16Gi", std::nullopt},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE("'" + text + "'");
    EXPECT_EQ(parse_go_int64(text), want);
  }
}

// --- One term against one node -----------------------------------------------------------------------

struct TermCase {
  const char* what;
  NodeSelectorTerm term;
  bool matches;
};

TEST(NodeAffinityTest, TermTable) {
  const Node node = labeled("node-1", {{"zone", "a"}, {"gpu-mem", "16"}, {"tier", "gold"}, {"weird", "12abc"},
                                       {"neg", "-3"}, {"empty", ""}});
  const std::vector<TermCase> cases = {
      // In
      {"In: value listed", term({req("zone", "In", {"b", "a"})}), true},
      {"In: value not listed", term({req("zone", "In", {"b"})}), false},
      {"In: label absent", term({req("region", "In", {"a"})}), false},
      {"In: empty label value listed", term({req("empty", "In", {""})}), true},
      {"In: no values is invalid", term({req("zone", "In", {})}), false},
      // NotIn
      {"NotIn: value not listed", term({req("zone", "NotIn", {"b"})}), true},
      {"NotIn: value listed", term({req("zone", "NotIn", {"b", "a"})}), false},
      {"NotIn: label absent matches", term({req("region", "NotIn", {"x"})}), true},
      {"NotIn: no values is invalid (even with the label absent)", term({req("region", "NotIn", {})}), false},
      // Exists / DoesNotExist
      {"Exists: present", term({req("zone", "Exists")}), true},
      {"Exists: present with empty value", term({req("empty", "Exists")}), true},
      {"Exists: absent", term({req("region", "Exists")}), false},
      {"Exists: values are invalid", term({req("zone", "Exists", {"a"})}), false},
      {"DoesNotExist: absent", term({req("region", "DoesNotExist")}), true},
      {"DoesNotExist: present", term({req("zone", "DoesNotExist")}), false},
      {"DoesNotExist: values are invalid", term({req("region", "DoesNotExist", {"a"})}), false},
      // Gt / Lt
      {"Gt: 16 > 8", term({req("gpu-mem", "Gt", {"8"})}), true},
      {"Gt: 16 > 16 is false", term({req("gpu-mem", "Gt", {"16"})}), false},
      {"Gt: 16 > 32 is false", term({req("gpu-mem", "Gt", {"32"})}), false},
      {"Lt: 16 < 32", term({req("gpu-mem", "Lt", {"32"})}), true},
      {"Lt: 16 < 16 is false", term({req("gpu-mem", "Lt", {"16"})}), false},
      // labels.NewRequirement also checks each value as a label value, which may not start with a
      // sign: a negative or signed Gt/Lt value makes the term match nothing, even where the integer
      // comparison would hold. A negative label value compares normally.
      {"Gt: value -4 is not a label value", term({req("neg", "Gt", {"-4"})}), false},
      {"Lt: negative label -3 < 0", term({req("neg", "Lt", {"0"})}), true},
      {"Gt: value +15 is not a label value", term({req("gpu-mem", "Gt", {"+15"})}), false},
      {"NotIn: value -x is not a label value", term({req("zone", "NotIn", {"-x"})}), false},
      {"In: key with a bad prefix", term({req("Bad_Prefix/zone", "In", {"a"})}), false},
      {"Gt: label absent", term({req("region", "Gt", {"0"})}), false},
      {"Gt: non-integer label value '12abc'", term({req("weird", "Gt", {"1"})}), false},
      {"Lt: non-integer label value '12abc'", term({req("weird", "Lt", {"100"})}), false},
      {"Gt: non-integer label value 'a'", term({req("zone", "Gt", {"100"})}), false},
      {"Lt: empty label value", term({req("empty", "Lt", {"1"})}), false},
      {"Gt: non-integer requirement value is invalid", term({req("gpu-mem", "Gt", {"8.5"})}), false},
      {"Lt: two values are invalid", term({req("gpu-mem", "Lt", {"32", "64"})}), false},
      {"Gt: no value is invalid", term({req("gpu-mem", "Gt", {})}), false},
      // operators
      {"unknown operator", term({req("zone", "Equals", {"a"})}), false},
      {"operators are case-sensitive", term({req("zone", "in", {"a"})}), false},
      // AND within a term
      {"AND: both hold", term({req("zone", "In", {"a"}), req("tier", "In", {"gold"})}), true},
      {"AND: second fails", term({req("zone", "In", {"a"}), req("tier", "In", {"silver"})}), false},
      {"AND: an invalid requirement fails the term", term({req("zone", "In", {"a"}), req("gpu-mem", "Gt", {"x"})}), false},
      {"AND: invalid NotIn fails a term that would match", term({req("zone", "In", {"a"}), req("region", "NotIn", {})}), false},
      {"empty term matches nothing", term({}), false},
      // matchFields (metadata.name)
      {"fields: name In", term({}, {req("metadata.name", "In", {"node-1"})}), true},
      {"fields: name In other", term({}, {req("metadata.name", "In", {"node-2"})}), false},
      {"fields: name NotIn other", term({}, {req("metadata.name", "NotIn", {"node-2"})}), true},
      {"fields: name NotIn self", term({}, {req("metadata.name", "NotIn", {"node-1"})}), false},
      {"fields: In with two values is invalid", term({}, {req("metadata.name", "In", {"node-1", "node-2"})}), false},
      {"fields: In without values is invalid", term({}, {req("metadata.name", "In", {})}), false},
      {"fields: Exists is invalid", term({}, {req("metadata.name", "Exists")}), false},
      {"fields: AND of two", term({}, {req("metadata.name", "In", {"node-1"}), req("metadata.name", "NotIn", {"x"})}), true},
      {"fields: another key reads as empty (In)", term({}, {req("metadata.uid", "In", {"node-1"})}), false},
      {"fields: another key reads as empty (NotIn)", term({}, {req("metadata.uid", "NotIn", {"x"})}), true},
      {"fields + expressions: both hold", term({req("zone", "In", {"a"})}, {req("metadata.name", "In", {"node-1"})}), true},
      {"fields + expressions: field fails", term({req("zone", "In", {"a"})}, {req("metadata.name", "In", {"node-2"})}), false},
      {"fields + expressions: expression fails", term({req("zone", "In", {"b"})}, {req("metadata.name", "In", {"node-1"})}), false},
      {"fields + expressions: invalid field fails", term({req("zone", "In", {"a"})}, {req("metadata.name", "Gt", {"1"})}), false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(node_selector_term_matches(c.term, node), c.matches);
    // A term list of one behaves like the term; adding an empty term (dropped) changes nothing.
    EXPECT_EQ(node_selector_terms_match(std::vector<NodeSelectorTerm>{c.term}, node), c.matches);
    EXPECT_EQ(node_selector_terms_match(std::vector<NodeSelectorTerm>{term({}), c.term}, node), c.matches);
  }
  EXPECT_FALSE(node_selector_terms_match(std::vector<NodeSelectorTerm>{}, node));
}

TEST(NodeAffinityTest, MatchFieldsIgnoredForNodeWithoutName) {
  // nodeSelectorTerm.match skips matchFields when the node has no fields (no name), as upstream.
  const Node anonymous = labeled("", {{"zone", "a"}});
  EXPECT_TRUE(node_selector_term_matches(term({}, {req("metadata.name", "In", {"node-1"})}), anonymous));
  EXPECT_TRUE(node_selector_term_matches(term({req("zone", "In", {"a"})}, {req("metadata.name", "In", {"x"})}), anonymous));
  EXPECT_FALSE(node_selector_term_matches(term({req("zone", "In", {"b"})}, {req("metadata.name", "In", {"x"})}), anonymous));
  // Still invalid (parse error) even then.
  EXPECT_FALSE(node_selector_term_matches(term({}, {req("metadata.name", "Exists")}), anonymous));
}

// --- Filter: nodeSelector AND required node affinity -------------------------------------------------

// n0 gpu-a100-0 {gpu: a100, zone: z1, mem: 80}; n1 gpu-a100-1 {gpu: a100, zone: z2, mem: 80};
// n2 gpu-t4-0 {gpu: t4, zone: z1, mem: 16}; n3 cpu-0 {zone: z2}.
std::vector<Node> cluster_nodes() {
  return {labeled("gpu-a100-0", {{"gpu", "a100"}, {"zone", "z1"}, {"mem", "80"}}),
          labeled("gpu-a100-1", {{"gpu", "a100"}, {"zone", "z2"}, {"mem", "80"}}),
          labeled("gpu-t4-0", {{"gpu", "t4"}, {"zone", "z1"}, {"mem", "16"}}),
          labeled("cpu-0", {{"zone", "z2"}})};
}

struct FilterCase {
  const char* what;
  Labels node_selector;
  std::vector<NodeSelectorTerm> required;
  std::vector<bool> fits;  // per node n0..n3
};

TEST(NodeAffinityTest, FilterTable) {
  const ClusterState state(cluster_nodes());
  const std::vector<FilterCase> cases = {
      {"no constraints", {}, {}, {true, true, true, true}},
      {"nodeSelector gpu=a100", {{"gpu", "a100"}}, {}, {true, true, false, false}},
      {"nodeSelector gpu=a100, zone=z1 (every pair)", {{"gpu", "a100"}, {"zone", "z1"}}, {}, {true, false, false, false}},
      {"nodeSelector gpu='' needs the label with an empty value", {{"gpu", ""}}, {}, {false, false, false, false}},
      {"nodeSelector on a missing label", {{"rack", "r1"}}, {}, {false, false, false, false}},
      {"required zone In z1", {}, {term({req("zone", "In", {"z1"})})}, {true, false, true, false}},
      {"required terms ORed: gpu In t4 | zone In z2", {}, {term({req("gpu", "In", {"t4"})}), term({req("zone", "In", {"z2"})})},
       {false, true, true, true}},
      {"required expressions ANDed: gpu In a100 & zone NotIn z1", {},
       {term({req("gpu", "In", {"a100"}), req("zone", "NotIn", {"z1"})})}, {false, true, false, false}},
      {"nodeSelector gpu=a100 AND required zone In z2", {{"gpu", "a100"}}, {term({req("zone", "In", {"z2"})})},
       {false, true, false, false}},
      {"nodeSelector gpu=t4 AND required zone In z2: nothing", {{"gpu", "t4"}}, {term({req("zone", "In", {"z2"})})},
       {false, false, false, false}},
      {"required mem Gt 40", {}, {term({req("mem", "Gt", {"40"})})}, {true, true, false, false}},
      {"required mem Lt 40", {}, {term({req("mem", "Lt", {"40"})})}, {false, false, true, false}},
      {"nodeSelector gpu=a100 AND required mem Lt 40: nothing", {{"gpu", "a100"}}, {term({req("mem", "Lt", {"40"})})},
       {false, false, false, false}},
      {"required gpu DoesNotExist", {}, {term({req("gpu", "DoesNotExist")})}, {false, false, false, true}},
      {"required gpu Exists", {}, {term({req("gpu", "Exists")})}, {true, true, true, false}},
      {"required: only an empty term matches nothing", {}, {term({})}, {false, false, false, false}},
      {"required: empty term ORed with zone In z2", {}, {term({}), term({req("zone", "In", {"z2"})})},
       {false, true, false, true}},
      {"required: invalid term skipped, sibling still tried", {},
       {term({req("mem", "Gt", {"abc"})}), term({req("gpu", "In", {"t4"})})}, {false, false, true, false}},
      {"required: matchFields names ORed", {},
       {term({}, {req("metadata.name", "In", {"gpu-t4-0"})}), term({}, {req("metadata.name", "In", {"cpu-0"})})},
       {false, false, true, true}},
      {"required: gpu In a100 AND name NotIn gpu-a100-0", {},
       {term({req("gpu", "In", {"a100"})}, {req("metadata.name", "NotIn", {"gpu-a100-0"})})}, {false, true, false, false}},
      {"nodeSelector zone=z1 AND matchFields name In gpu-a100-1: nothing", {{"zone", "z1"}},
       {term({}, {req("metadata.name", "In", {"gpu-a100-1"})})}, {false, false, false, false}},
  };
  const NodeAffinity plugin;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Pod pod = make_pod("p", 1000, 1024, 0, 0);
    pod.constraints.node_selector = c.node_selector;
    pod.constraints.required_node_affinity = c.required;
    for (NodeId n = 0; n < state.node_count(); ++n) {
      SCOPED_TRACE(state.node(n).name);
      EXPECT_EQ(pod_matches_node_required_affinity(pod, state.node(n)), c.fits[n]);
      EXPECT_EQ(plugin.filter(pod, state, n), c.fits[n] ? FilterCode::kFits : NodeAffinity::kNodeAffinityMismatch);
    }
  }
  EXPECT_EQ(NodeAffinity::kNodeAffinityMismatch.reason(), "node(s) didn't match Pod's node affinity/selector");
}

// --- Score: sum of the weights of the matching preferred terms ---------------------------------------

struct ScoreCase {
  const char* what;
  std::vector<PreferredSchedulingTerm> preferred;
  std::vector<int32_t> scores;  // per node n0..n3
};

TEST(NodeAffinityTest, PreferredScoreTable) {
  const ClusterState state(cluster_nodes());
  const std::vector<ScoreCase> cases = {
      {"no preferences", {}, {0, 0, 0, 0}},
      {"one term", {{30, term({req("gpu", "In", {"a100"})})}}, {30, 30, 0, 0}},
      {"weights add: gpu=a100 (10) + zone=z1 (5) + name cpu-0 (3)",
       {{10, term({req("gpu", "In", {"a100"})})},
        {5, term({req("zone", "In", {"z1"})})},
        {3, term({}, {req("metadata.name", "In", {"cpu-0"})})}},
       {15, 10, 5, 3}},
      {"weight 0, empty and invalid terms count 0",
       {{0, term({req("zone", "Exists")})},
        {7, term({})},
        {20, term({req("mem", "Gt", {"abc"})})},
        {9, term({req("mem", "Lt", {"50"})})}},
       {0, 0, 9, 0}},
      {"Gt on a missing label counts 0", {{40, term({req("mem", "Gt", {"0"})})}}, {40, 40, 40, 0}},
      {"expressions ANDed inside a preferred term",
       {{25, term({req("gpu", "In", {"a100"}), req("zone", "In", {"z2"})})}}, {0, 25, 0, 0}},
      {"maximum: three matching terms of weight 100",
       {{100, term({req("zone", "Exists")})}, {100, term({req("gpu", "DoesNotExist")})}, {100, term({req("zone", "In", {"z2"})})}},
       {100, 200, 100, 300}},
  };
  const NodeAffinity plugin;
  EXPECT_FALSE(plugin.cacheable());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Pod pod = make_pod("p", 1000, 1024, 0, 0);
    pod.constraints.preferred_node_affinity = c.preferred;
    for (NodeId n = 0; n < state.node_count(); ++n) {
      SCOPED_TRACE(state.node(n).name);
      EXPECT_EQ(preferred_node_affinity_score(pod, state.node(n)), c.scores[n]);
      EXPECT_EQ(plugin.score(pod, state, n, CycleState{}), c.scores[n]);
    }
  }
}

// --- Through the Scheduler ---------------------------------------------------------------------------

Profile affinity_policy() {
  auto affinity = std::make_shared<NodeAffinity>();
  return testing::profile_of("affinity", {std::make_shared<TaintToleration>(), affinity}, affinity, std::make_shared<BestFitGpuSelector>());
}

TEST(NodeAffinityTest, SchedulerPicksPreferredAndReportsReasons) {
  std::vector<Node> nodes = cluster_nodes();
  nodes[0].taints = {{"workload-type", "inference", "NoSchedule"}};
  ClusterState state(nodes);
  GoRand rng(1);

  // n0 is tainted; among the a100 nodes only n1 is left. Preferring zone z1 does not bring n0 back.
  Pod pod = make_pod("p", 1000, 1024, 0, 0);
  pod.constraints.node_selector = {{"gpu", "a100"}};
  pod.constraints.preferred_node_affinity = {{50, term({req("zone", "In", {"z1"})})}};
  Scheduler s(affinity_policy(), {0, 1, 2, 3});
  ScheduleResult r = s.decide(pod, state, rng);
  ASSERT_TRUE(r.scheduled());
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.score, 0);

  // Without a nodeSelector the preference decides: n2 (z1, untainted) scores 50 and beats the better rank of n1/n3.
  Pod pref = make_pod("q", 1000, 1024, 0, 0);
  pref.constraints.preferred_node_affinity = {{50, term({req("zone", "In", {"z1"})})}};
  Scheduler s2(affinity_policy(), {3, 0, 2, 1});
  r = s2.decide(pref, state, rng);
  ASSERT_TRUE(r.scheduled());
  EXPECT_EQ(r.node, 2u);
  EXPECT_EQ(r.score, 50);

  // Nothing fits: n0 rejected by its taint (TaintToleration runs first), n1..n3 by the affinity.
  Pod none = make_pod("r", 1000, 1024, 0, 0);
  none.constraints.required_node_affinity = {term({req("gpu", "In", {"a100"})}, {req("metadata.name", "In", {"gpu-a100-0"})})};
  Scheduler s3(affinity_policy(), {0, 1, 2, 3});
  r = s3.decide(none, state, rng);
  ASSERT_FALSE(r.scheduled());
  EXPECT_EQ(r.node_to_status.count(TaintToleration::kUntoleratedTaint), 1);
  EXPECT_EQ(r.node_to_status.count(NodeAffinity::kNodeAffinityMismatch), 3);
  EXPECT_EQ(testing::fit_error_of(r, none, state),
            "0/4 nodes are available: 1 node(s) had untolerated taint {workload-type: inference}, "
            "3 node(s) didn't match Pod's node affinity/selector.");
}

// The Scheduler memoizes filter results per pod request shape AND constraints: two pods with equal
// requests but different nodeSelectors must not share a cache entry (a regression test for a bug
// where the key held only the request).
TEST(NodeAffinityTest, SchedulerCacheMustKeyOnConstraints) {
  ClusterState state(cluster_nodes());
  Scheduler s(affinity_policy(), {0, 1, 2, 3});
  GoRand rng(1);
  Pod a100 = make_pod("a", 1000, 1024, 0, 0);
  a100.constraints.node_selector = {{"gpu", "a100"}};
  Pod t4 = make_pod("b", 1000, 1024, 0, 0);  // same request shape
  t4.constraints.node_selector = {{"gpu", "t4"}};
  EXPECT_EQ(s.decide(a100, state, rng).node, 0u);
  EXPECT_EQ(s.decide(t4, state, rng).node, 2u);  // today: 0, the a100 pod's cached filter results
  Pod anywhere = make_pod("c", 1000, 1024, 0, 0);
  anywhere.constraints.tolerations = {{"", "Exists", "", "", std::nullopt}};
  EXPECT_EQ(s.decide(anywhere, state, rng).node, 0u);
}

}  // namespace
}  // namespace gpufleet::sched
