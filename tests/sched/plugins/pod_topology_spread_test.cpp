// PodTopologySpread (kube podtopologyspread/filtering.go and scoring.go): maxSkew over zones with
// existing pods, the missing-label reason, minDomains, the node inclusion policies, matchLabelKeys,
// a pod its own selector does not match, ScheduleAnyway scores through NormalizeScore, kube's system
// default constraints for a Deployment's pods and not for a bare pod, AddPod/RemovePod in preemption's
// dry run, and the FitError message. Every expected value is worked out by hand in the comments from
// the rules in sched/plugins/pod_topology_spread.h.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/framework/filter_cycle.h"
#include "sched/framework/validation.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/pod_topology_spread.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr FilterCode kFits = FilterCode::kFits;
constexpr FilterCode kSkew = PodTopologySpread::kConstraintsNotMatch;
constexpr FilterCode kNoLabel = PodTopologySpread::kMissingRequiredLabel;

Node zoned(const std::string& name, const std::string& zone) {
  Node n = make_node(name, 8000, 16384, 0);
  if (!zone.empty()) n.labels.emplace_back(kZone, zone);
  return n;
}

Pod app(const std::string& name, const std::string& app_label, const std::string& ns = "default") {
  Pod p = make_pod(name, 100, 128, 0, 0);
  p.namespace_name = ns;
  p.labels = {{"app", app_label}};
  return p;
}

TopologySpreadConstraint spread(const std::string& key, int32_t max_skew, const std::string& selected_app,
                                UnsatisfiableAction action = UnsatisfiableAction::kDoNotSchedule) {
  TopologySpreadConstraint c;
  c.topology_key = key;
  c.max_skew = max_skew;
  c.when_unsatisfiable = action;
  c.label_selector.match_labels = {{"app", selected_app}};
  c.has_label_selector = true;
  return c;
}

Pod with(Pod p, TopologySpreadConstraint c) {
  p.constraints.topology_spread_constraints.push_back(std::move(c));
  return p;
}

void put(ClusterState& s, NodeId n, const Pod& p, int copies = 1) {
  for (int i = 0; i < copies; ++i) {
    Pod copy = p;
    copy.name += "-" + std::to_string(n) + "-" + std::to_string(i) + "-" + std::to_string(s.pods_on(n).size());
    s.allocate(n, copy, {});
  }
}

// The plugin's code on every node, through one PreFilter (FilterCycle) and stand-alone filter().
std::vector<FilterCode> codes(const Pod& pod, const ClusterState& state) {
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {std::make_shared<PodTopologySpread>()};
  const FilterCycle cycle(filters, pod, state);
  std::vector<FilterCode> out;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    out.push_back(cycle.run(state, n).code);
    EXPECT_EQ(filters[0]->filter(pod, state, n), out.back()) << "node " << n;
  }
  return out;
}

// n0, n1 in zone a; n2, n3 in zone b.
std::vector<Node> two_zones() { return {zoned("n0", "a"), zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "b")}; }

TEST(PodTopologySpreadTest, ReasonsAreKubes) {
  EXPECT_EQ(kSkew.reason(), "node(s) didn't match pod topology spread constraints");
  EXPECT_TRUE(kSkew.resolvable());  // Unschedulable: preemption may help
  EXPECT_EQ(kNoLabel.reason(), "node(s) didn't match pod topology spread constraints (missing required label)");
  EXPECT_FALSE(kNoLabel.resolvable());  // UnschedulableAndUnresolvable
  EXPECT_FALSE(PodTopologySpread().filter_cacheable());
}

// web pods: 2 on n0 (zone a), 1 on n2 (zone b). Zone maxSkew 1: a = 2, b = 1, min 1.
// Zone a: 2 + 1 - 1 = 2 > 1, rejected; zone b: 1 + 1 - 1 = 1, fits.
TEST(PodTopologySpreadTest, MaxSkewOneOverTwoZones) {
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"), 2);
  put(s, 2, app("web", "web"));
  put(s, 1, app("db", "db"), 3);  // other apps do not count
  EXPECT_EQ(codes(with(app("x", "web"), spread(kZone, 1, "web")), s), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  // maxSkew 2: zone a 2 <= 2 fits too.
  EXPECT_EQ(codes(with(app("x", "web"), spread(kZone, 2, "web")), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  // Web pods of another namespace are not counted: a = 0, b = 0, all fit.
  EXPECT_EQ(codes(with(app("x", "web", "prod"), spread(kZone, 1, "web")), s),
            (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
}

// A pod its selector does not match (selfMatchNum 0): zone a 2 + 0 - 1 = 1 <= 1, every node fits.
TEST(PodTopologySpreadTest, SelfMatchFalse) {
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"), 2);
  put(s, 2, app("web", "web"));
  EXPECT_EQ(codes(with(app("x", "batch"), spread(kZone, 1, "web")), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  // With 3 on n0: 3 + 0 - 1 = 2 > 1, zone a rejected although the pod is not a web pod.
  put(s, 0, app("web", "web"));
  EXPECT_EQ(codes(with(app("x", "batch"), spread(kZone, 1, "web")), s), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
}

// n4 has no zone label: UnschedulableAndUnresolvable there, and the web pods on it count nowhere.
TEST(PodTopologySpreadTest, MissingLabel) {
  std::vector<Node> nodes = two_zones();
  nodes.push_back(zoned("n4", ""));
  ClusterState s(nodes);
  put(s, 4, app("web", "web"), 5);
  put(s, 0, app("web", "web"));
  // a = 1, b = 0, min 0: zone a 1 + 1 - 0 = 2 > 1.
  EXPECT_EQ(codes(with(app("x", "web"), spread(kZone, 1, "web")), s),
            (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits, kNoLabel}));
  // A second constraint whose key no node has: every node lacks it.
  Pod two = with(with(app("x", "web"), spread(kZone, 1, "web")), spread("example.com/rack", 1, "web"));
  EXPECT_EQ(codes(two, s), (std::vector<FilterCode>{kNoLabel, kNoLabel, kNoLabel, kNoLabel, kNoLabel}));
}

// One web pod per zone, maxSkew 1: a = b = 1, min 1, 1 + 1 - 1 = 1 fits. minDomains 3 with only
// 2 domains: the global minimum is 0, 1 + 1 - 0 = 2 > 1 everywhere. minDomains 2: as without it.
TEST(PodTopologySpreadTest, MinDomainsMakesTheGlobalMinimumZero) {
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"));
  put(s, 3, app("web", "web"));
  TopologySpreadConstraint c = spread(kZone, 1, "web");
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  c.min_domains = 3;
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kSkew, kSkew, kSkew, kSkew}));
  c.min_domains = 2;
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  // An empty cluster of pods: 0 + 1 - 0 = 1 fits whatever minDomains says.
  ClusterState empty(two_zones());
  c.min_domains = 5;
  EXPECT_EQ(codes(with(app("x", "web"), c), empty), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
}

// n0 zone a and n1 zone b in pool x, n2 zone c outside it; one web pod on n0 and on n1. The pod
// selects pool x. Honor (the default): zone c is not a domain, a = b = 1, min 1: all fit. Ignore:
// c = 0 is a domain, min 0, zones a and b: 1 + 1 - 0 = 2 > 1.
TEST(PodTopologySpreadTest, NodeAffinityPolicyHonorAndIgnore) {
  std::vector<Node> nodes = {zoned("n0", "a"), zoned("n1", "b"), zoned("n2", "c")};
  nodes[0].labels.emplace_back("pool", "x");
  nodes[1].labels.emplace_back("pool", "x");
  ClusterState s(nodes);
  put(s, 0, app("web", "web"));
  put(s, 1, app("web", "web"));
  Pod pod = app("x", "web");
  pod.constraints.node_selector = {{"pool", "x"}};
  TopologySpreadConstraint c = spread(kZone, 1, "web");
  EXPECT_EQ(codes(with(pod, c), s), (std::vector<FilterCode>{kFits, kFits, kFits}));
  c.node_affinity_policy = NodeInclusionPolicy::kIgnore;
  EXPECT_EQ(codes(with(pod, c), s), (std::vector<FilterCode>{kSkew, kSkew, kFits}));
}

// The same, n2 (zone c) tainted NoSchedule instead. Ignore (the default): c counts, min 0, a and b
// rejected. Honor: c is not a domain, all fit; a pod tolerating the taint counts c again.
TEST(PodTopologySpreadTest, NodeTaintsPolicyHonor) {
  std::vector<Node> nodes = {zoned("n0", "a"), zoned("n1", "b"), zoned("n2", "c")};
  nodes[2].taints.push_back({"gpu", "true", "NoSchedule"});
  ClusterState s(nodes);
  put(s, 0, app("web", "web"));
  put(s, 1, app("web", "web"));
  TopologySpreadConstraint c = spread(kZone, 1, "web");
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kSkew, kSkew, kFits}));
  c.node_taints_policy = NodeInclusionPolicy::kHonor;
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kFits, kFits, kFits}));
  Pod tolerant = with(app("x", "web"), c);
  tolerant.constraints.tolerations.push_back({"gpu", "Equal", "true", "NoSchedule", std::nullopt});
  EXPECT_EQ(codes(tolerant, s), (std::vector<FilterCode>{kSkew, kSkew, kFits}));
  // A PreferNoSchedule taint never excludes a node.
  nodes[2].taints = {{"gpu", "true", "PreferNoSchedule"}};
  ClusterState prefer(nodes);
  put(prefer, 0, app("web", "web"));
  put(prefer, 1, app("web", "web"));
  EXPECT_EQ(codes(with(app("x", "web"), c), prefer), (std::vector<FilterCode>{kSkew, kSkew, kFits}));
}

// web v1 x2 on n0 (zone a), web v2 x1 on n2 (zone b). Selector app=web: a = 2, b = 1, min 1, zone a
// rejected. With matchLabelKeys [version] the incoming v2 pod counts only v2 pods: a = 0, b = 1,
// min 0, zone b 1 + 1 - 0 = 2 rejected, zone a fits.
TEST(PodTopologySpreadTest, MatchLabelKeys) {
  ClusterState s(two_zones());
  Pod v1 = app("web-v1", "web");
  v1.labels.emplace_back("version", "v1");
  Pod v2 = app("web-v2", "web");
  v2.labels.emplace_back("version", "v2");
  put(s, 0, v1, 2);
  put(s, 2, v2);
  Pod incoming = v2;
  incoming.name = "x";
  TopologySpreadConstraint c = spread(kZone, 1, "web");
  EXPECT_EQ(codes(with(incoming, c), s), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  c.match_label_keys = {"version"};
  EXPECT_EQ(codes(with(incoming, c), s), (std::vector<FilterCode>{kFits, kFits, kSkew, kSkew}));
  // A key the pod lacks is left out: as without matchLabelKeys.
  c.match_label_keys = {"track"};
  EXPECT_EQ(codes(with(incoming, c), s), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
}

// No labelSelector matches no pod (not even the pod itself); `{}` matches the pod itself but counts
// no pod on the nodes (countPodsMatchSelector with an empty selector).
TEST(PodTopologySpreadTest, NilAndEmptySelectors) {
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"), 3);
  TopologySpreadConstraint c = spread(kZone, 1, "web");
  c.label_selector = {};
  c.has_label_selector = false;
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  c.has_label_selector = true;
  EXPECT_EQ(codes(with(app("x", "web"), c), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
}

// Pods without constraints or default selector (openb, pack) and pods whose constraints are all
// ScheduleAnyway: PreFilter skips, PreScore skips for the former.
TEST(PodTopologySpreadTest, SkipsWhenNothingToCheck) {
  ClusterState s(two_zones());
  const PodTopologySpread plugin;
  CycleState cycle;
  EXPECT_TRUE(plugin.pre_filter(make_pod("openb", 100, 128, 0, 0), s, cycle).is_skip());
  EXPECT_TRUE(plugin.pre_filter(with(app("x", "web"), spread(kZone, 1, "web", UnsatisfiableAction::kScheduleAnyway)), s, cycle).is_skip());
  EXPECT_EQ(cycle.read("PreFilterPodTopologySpread"), nullptr);
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0, 1, 2, 3};
  EXPECT_TRUE(plugin.pre_score(make_pod("openb", 100, 128, 0, 0), s, feasible, cycle, rng).is_skip());
  EXPECT_TRUE(plugin.pre_score(with(app("x", "web"), spread(kZone, 1, "web")), s, feasible, cycle, rng).is_skip());
  EXPECT_EQ(cycle.read("PreScorePodTopologySpread"), nullptr);
}

std::vector<int64_t> raw_scores(const PodTopologySpread& plugin, const Pod& pod, const ClusterState& s,
                                const std::vector<NodeId>& feasible, CycleState& cycle) {
  std::vector<int64_t> out;
  for (const NodeId n : feasible) out.push_back(plugin.score(pod, s, n, cycle));
  return out;
}

std::vector<int64_t> normalized(const PodTopologySpread& plugin, const Pod& pod, const std::vector<NodeId>& feasible,
                                const std::vector<int64_t>& raw, const CycleState& cycle) {
  std::vector<NodeScore> scores;
  for (size_t j = 0; j < feasible.size(); ++j) scores.push_back({feasible[j], raw[j]});
  plugin.normalize_score(pod, scores, cycle);
  std::vector<int64_t> out;
  for (const NodeScore& ns : scores) out.push_back(ns.score);
  return out;
}

// n0, n1 zone a; n2 zone b; n3 no zone. web pods: n0 2, n2 1, n3 1. The pod's own ScheduleAnyway
// constraints, zone maxSkew 1 and hostname maxSkew 2. n3 lacks the zone: ignored (score 0).
// Zone: domains a, b (feasible, not ignored) -> weight ln 4 = 1.386294; a = 2 (n3's pod counts nowhere), b = 1.
// Hostname: 3 nodes not ignored -> weight ln 5 = 1.609438; per node n0 2, n1 0, n2 1.
//   n0: 2 * 1.386294 + 0 + 2 * 1.609438 + 1 = 6.991464 -> 7
//   n1: 2 * 1.386294 + 0 + 0 + 1            = 3.772589 -> 4
//   n2: 1 * 1.386294 + 0 + 1 * 1.609438 + 1 = 3.995732 -> 4
// Normalized over n0..n2 (min 4, max 7): n0 100 * (7 + 4 - 7) / 7 = 57, n1 and n2 100 * 7 / 7 = 100; n3 0.
TEST(PodTopologySpreadTest, ScheduleAnywayScoresByHand) {
  std::vector<Node> nodes = {zoned("n0", "a"), zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "")};
  ClusterState s(nodes);
  put(s, 0, app("web", "web"), 2);
  put(s, 2, app("web", "web"));
  put(s, 3, app("web", "web"));
  const Pod pod = with(with(app("x", "web"), spread(kZone, 1, "web", UnsatisfiableAction::kScheduleAnyway)),
                       spread(std::string(kHostnameLabel), 2, "web", UnsatisfiableAction::kScheduleAnyway));
  const PodTopologySpread plugin;
  CycleState cycle;
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0, 1, 2, 3};
  ASSERT_TRUE(plugin.pre_score(pod, s, feasible, cycle, rng).is_success());
  const std::vector<int64_t> raw = raw_scores(plugin, pod, s, feasible, cycle);
  EXPECT_EQ(raw, (std::vector<int64_t>{7, 4, 4, 0}));
  EXPECT_EQ(normalized(plugin, pod, feasible, raw, cycle), (std::vector<int64_t>{57, 100, 100, 0}));
  // Only n0 and n2 feasible: zone domains a, b (ln 4), hostname 2 nodes (ln 4 = 1.386294).
  //   n0: 2 * 1.386294 + 2 * 1.386294 + 1 = 6.545177 -> 7;  n2: 1.386294 + 1.386294 + 1 = 3.772589 -> 4
  //   normalized: n0 100 * (7 + 4 - 7) / 7 = 57, n2 100 * (7 + 4 - 4) / 7 = 100.
  CycleState two;
  const std::vector<NodeId> some = {0, 2};
  ASSERT_TRUE(plugin.pre_score(pod, s, some, two, rng).is_success());
  const std::vector<int64_t> raw2 = raw_scores(plugin, pod, s, some, two);
  EXPECT_EQ(raw2, (std::vector<int64_t>{7, 4}));
  EXPECT_EQ(normalized(plugin, pod, some, raw2, two), (std::vector<int64_t>{57, 100}));
  // maxSkew 5 on the zone adds 4 to every scored node: no web pod anywhere -> all raw equal, max > 0
  // -> 100 * (max + min - s) / max = 100 for all.
  ClusterState none(nodes);
  TopologySpreadConstraint wide = spread(kZone, 5, "web", UnsatisfiableAction::kScheduleAnyway);
  const Pod wide_pod = with(app("x", "web"), wide);
  CycleState c3;
  ASSERT_TRUE(plugin.pre_score(wide_pod, none, feasible, c3, rng).is_success());
  const std::vector<int64_t> raw3 = raw_scores(plugin, wide_pod, none, feasible, c3);
  EXPECT_EQ(raw3, (std::vector<int64_t>{4, 4, 4, 0}));
  EXPECT_EQ(normalized(plugin, wide_pod, feasible, raw3, c3), (std::vector<int64_t>{100, 100, 100, 0}));
}

// A hand-built weighted-sum profile with PodTopologySpread's Score only: the node with the fewest
// matching pods in its zone and on itself wins (n1 and n2 tie at 100: the lower rank, n1).
TEST(PodTopologySpreadTest, WeightedSumProfilePicksTheLeastCrowdedNode) {
  std::vector<Node> nodes = {zoned("n0", "a"), zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "")};
  ClusterState s(nodes);
  put(s, 0, app("web", "web"), 2);
  put(s, 2, app("web", "web"));
  put(s, 3, app("web", "web"));
  const Pod pod = with(with(app("x", "web"), spread(kZone, 1, "web", UnsatisfiableAction::kScheduleAnyway)),
                       spread(std::string(kHostnameLabel), 2, "web", UnsatisfiableAction::kScheduleAnyway));
  auto plugin = std::make_shared<PodTopologySpread>();
  Profile p;
  p.name = "spread";
  p.pre_filters = {plugin};
  p.filters = {plugin};
  p.pre_scores = {plugin};
  p.scores = {{plugin, 2}};
  p.score_combination = ScoreCombination::kWeightedSum;
  p.gpu_selector = std::make_shared<BestFitGpuSelector>();
  Scheduler sched(p, {0, 1, 2, 3});
  GoRand rng(1);
  const ScheduleResult r = sched.decide(pod, s, rng);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.score, 200);  // 100 x weight 2
  Scheduler reversed(p, {3, 2, 1, 0});  // n2 now wins the tie
  EXPECT_EQ(reversed.decide(pod, s, rng).node, 2u);
}

// kube's system defaults (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) for a Deployment's pod
// (default selector app=web) without constraints of its own: PreFilter skips (nothing DoNotSchedule),
// PreScore scores. A bare pod (no default selector) skips both.
// Nodes n0, n1 zone a; n2 zone b; n3 no zone (not ignored: system defaults do not require every
// label). web pods: n0 1, n2 2, n3 1; one web pod in namespace prod on n1 (not counted).
// Hostname: 4 nodes -> ln 6 = 1.791759. Zone: domains a, b and "" (n3) -> ln 5 = 1.609438;
// a = 1, b = 2, "" = 1.
//   n0: 1 * 1.791759 + 2 + 1 * 1.609438 + 4 = 9.401197  -> 9
//   n1: 0            + 2 + 1 * 1.609438 + 4 = 7.609438  -> 8
//   n2: 2 * 1.791759 + 2 + 2 * 1.609438 + 4 = 12.802395 -> 13
//   n3: 1 * 1.791759 + 2 (no zone label: no zone term)  = 3.791759  -> 4
// Normalized (min 4, max 13): n0 100 * 8 / 13 = 61, n1 100 * 9 / 13 = 69, n2 100 * 4 / 13 = 30, n3 100.
TEST(PodTopologySpreadTest, SystemDefaultsForADeploymentsPodNotForABarePod) {
  std::vector<Node> nodes = {zoned("n0", "a"), zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "")};
  ClusterState s(nodes);
  put(s, 0, app("web", "web"));
  put(s, 2, app("web", "web"), 2);
  put(s, 3, app("web", "web"));
  put(s, 1, app("web", "web", "prod"));
  Pod replica = app("web-7", "web");
  replica.constraints.default_spread_selector.match_labels = {{"app", "web"}};
  const PodTopologySpread plugin;
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0, 1, 2, 3};
  CycleState cycle;
  EXPECT_TRUE(plugin.pre_filter(replica, s, cycle).is_skip());
  ASSERT_TRUE(plugin.pre_score(replica, s, feasible, cycle, rng).is_success());
  const std::vector<int64_t> raw = raw_scores(plugin, replica, s, feasible, cycle);
  EXPECT_EQ(raw, (std::vector<int64_t>{9, 8, 13, 4}));
  EXPECT_EQ(normalized(plugin, replica, feasible, raw, cycle), (std::vector<int64_t>{61, 69, 30, 100}));

  CycleState bare_cycle;
  const Pod bare = app("web-bare", "web");
  EXPECT_TRUE(plugin.pre_filter(bare, s, bare_cycle).is_skip());
  EXPECT_TRUE(plugin.pre_score(bare, s, feasible, bare_cycle, rng).is_skip());
  // A pod with constraints of its own ignores the defaults: only its DoNotSchedule one here.
  Pod own = with(replica, spread(kZone, 1, "web"));
  CycleState own_cycle;
  EXPECT_TRUE(plugin.pre_score(own, s, feasible, own_cycle, rng).is_skip());
  EXPECT_EQ(PodTopologySpread::system_default_constraints().size(), 2u);
  EXPECT_EQ(PodTopologySpread::system_default_constraints()[0].max_skew, 3);
  EXPECT_EQ(PodTopologySpread::system_default_constraints()[1].max_skew, 5);
}

// defaultingType List with a DoNotSchedule default: a Deployment's pod is filtered by it (selector:
// the default selector), a bare pod is not. Every label is then required in PreScore too.
TEST(PodTopologySpreadTest, ListDefaultsFilterWithTheDefaultSelector) {
  PodTopologySpreadArgs args;
  args.defaulting_type = PodTopologySpreadArgs::Defaulting::kList;
  TopologySpreadConstraint c;
  c.topology_key = kZone;
  c.max_skew = 1;
  args.default_constraints = {c};
  const auto plugin = std::make_shared<PodTopologySpread>(args);
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"), 2);
  Pod replica = app("web-1", "web");
  replica.constraints.default_spread_selector.match_labels = {{"app", "web"}};
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {plugin};
  const FilterCycle cycle(filters, replica, s);
  // a = 2, b = 0: zone a 2 + 1 - 0 = 3 > 1.
  EXPECT_EQ(cycle.run(s, 0).code, kSkew);
  EXPECT_EQ(cycle.run(s, 2).code, kFits);
  const FilterCycle bare(filters, app("web-bare", "web"), s);
  EXPECT_EQ(bare.run(s, 0).code, kFits);
  // The arguments are validated as kube validates them.
  PodTopologySpreadArgs bad;
  bad.default_constraints = {c};  // System with constraints
  EXPECT_THROW(PodTopologySpread{bad}, ProfileError);
  EXPECT_EQ(validate_pod_topology_spread_args(bad, "args")[0].to_string(),
            "args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
  bad.defaulting_type = PodTopologySpreadArgs::Defaulting::kList;
  bad.default_constraints[0].has_label_selector = true;
  bad.default_constraints[0].max_skew = 0;
  EXPECT_EQ(validate_pod_topology_spread_args(bad, "args"),
            (FieldErrors{{FieldError::Type::kInvalid, "args.defaultConstraints[0].maxSkew", "0", "not in valid range (0, inf)"},
                         {FieldError::Type::kForbidden, "args.defaultConstraints[0].labelSelector", "",
                          "constraint must not define a selector, as they deduced for each pod"}}));
}

// AddPod / RemovePod keep the counts right (preemption's dry run). Start: web x2 on n0 (a), x1 on n2
// (b): a rejected. Remove one from n0: a = b = 1, all fit. Remove the one on n2: a = 1, b = 0, min 0,
// zone a 1 + 1 - 0 = 2 rejected again. Re-add both: back to the start.
TEST(PodTopologySpreadTest, AddAndRemovePodUpdateTheCounts) {
  ClusterState s(two_zones());
  put(s, 0, app("web", "web"), 2);
  put(s, 2, app("web", "web"));
  put(s, 1, app("db", "db"));
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {std::make_shared<PodTopologySpread>()};
  const Pod pod = with(app("x", "web"), spread(kZone, 1, "web"));
  FilterCycle cycle(filters, pod, s);
  const auto all = [&] {
    std::vector<FilterCode> out;
    for (NodeId n = 0; n < s.node_count(); ++n) out.push_back(cycle.run(s, n).code);
    return out;
  };
  EXPECT_EQ(all(), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  const BoundPod first = s.pods_on(0)[0];
  s.release(0, first.pod);
  cycle.remove_pod(s, 0, first);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  const BoundPod third = s.pods_on(2)[0];
  s.release(2, third.pod);
  cycle.remove_pod(s, 2, third);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  // A pod the selector does not match changes nothing.
  const BoundPod db = s.pods_on(1)[0];
  s.release(1, db.pod);
  cycle.remove_pod(s, 1, db);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  s.rebind(1, db);
  cycle.add_pod(s, 1, db);
  s.rebind(2, third);
  cycle.add_pod(s, 2, third);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  s.rebind(0, first);
  cycle.add_pod(s, 0, first);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kSkew, kSkew, kFits, kFits}));
  // The same answers as a cycle set up afresh on the state.
  const FilterCycle fresh(filters, pod, s);
  for (NodeId n = 0; n < s.node_count(); ++n) EXPECT_EQ(cycle.run(s, n).code, fresh.run(s, n).code);
}

// Every policy's profile runs PodTopologySpread's PreFilter and Filter right before
// InterPodAffinity's, and not its Score (but for default-scheduler). A pod that fits nowhere gets kube's FitError.
// n0 zone a with 2 web pods, n1 zone b full (CPU), n2 no zone label.
TEST(PodTopologySpreadTest, EveryPolicyFiltersAndSaysWhy) {
  for (const std::string& name : policy_names()) {
    const ProfileConfig config = policy_profile(name);
    const auto& pre = config.at(ExtensionPoint::kPreFilter).enabled;
    ASSERT_GE(pre.size(), 2u) << name;
    EXPECT_EQ(pre[0].name, "PodTopologySpread") << name;
    EXPECT_EQ(pre[1].name, "InterPodAffinity") << name;
    const auto& filters = config.at(ExtensionPoint::kFilter).enabled;
    ASSERT_GE(filters.size(), 3u) << name;
    EXPECT_EQ(filters[filters.size() - 3].name, "PodTopologySpread") << name;
    EXPECT_EQ(filters[filters.size() - 2].name, "InterPodAffinity") << name;
    EXPECT_EQ(filters.back().name, "DynamicResources") << name;  // Dynamic Resource Allocation, last
    // Its Score only in kube's default profiles (kube_default_scoring_test.cpp).
    if (name.rfind("default-scheduler", 0) != 0) {
      for (const auto& ref : config.at(ExtensionPoint::kScore).enabled) EXPECT_NE(ref.name, "PodTopologySpread") << name;
    }
  }
  ClusterState s({zoned("n0", "a"), zoned("n1", "b"), zoned("n2", "")});
  put(s, 0, app("web", "web"), 2);
  s.allocate(1, make_pod("filler", 7950, 0, 0, 0), {});
  Scheduler sched(make_policy("bestfit", PolicyContext{}), {0, 1, 2});
  GoRand rng(1);
  const Pod pod = with(app("x", "web"), spread(kZone, 1, "web"));
  const ScheduleResult r = sched.decide(pod, s, rng);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(testing::fit_error_of(r, pod, s),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, "
            "1 node(s) didn't match pod topology spread constraints (missing required label).");
  // Without the constraint it lands on n0 or n2.
  EXPECT_TRUE(sched.decide(app("y", "web"), s, rng).scheduled());
}

}  // namespace
}  // namespace gpufleet::sched
