// kube-scheduler's default Score plugins as the default-scheduler policies run them: NodeResourcesFit
// (LeastAllocated over non-zero requests), NodeResourcesBalancedAllocation, InterPodAffinity's Score
// with hardPodAffinityWeight, each in the current release and v1.20, and the weighted sum with random
// ties. Every expected value is worked out by hand from the upstream formulas quoted in the plugins'
// headers.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/plugins/balanced_allocation.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/resource_allocation_score.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

NodeResourcesFitArgs fit_args(KubeRelease release) {
  NodeResourcesFitArgs a;
  a.release = release;
  return a;
}

// A node of 4 cores and 8 GiB holding one pod that requests nothing (kube counts it 100m, 200 MiB).
ClusterState node_with_best_effort_pod() {
  ClusterState state({make_node("n", 4000, 8192, 0)});
  state.allocate(0, make_pod("idle", 0, 0, 0, 0), {});
  return state;
}

TEST(NodeResourcesFitScore, CountsNonZeroRequestsOfTheNodesPods) {
  const ClusterState state = node_with_best_effort_pod();
  EXPECT_EQ(state.nonzero_cpu_requested_milli(0), 100);
  EXPECT_EQ(state.nonzero_memory_requested_bytes(0), 200 * kBytesPerMib);
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  // cpu (4000 - 1100) * 100 / 4000 = 72; memory (8192 - 1224) * 100 / 8192 = 85.06 -> 85;
  // (72 + 85) / 2 = 78.
  EXPECT_EQ(NodeResourcesFit(fit_args(KubeRelease::kCurrent)).score(pod, state, 0, CycleState()), 78);
  // gpufleet's own leastallocated counts requests as they are: (75 + 87) / 2 = 81.
  EXPECT_EQ(LeastAllocated().score(pod, state, 0, CycleState()), 81);
}

TEST(NodeResourcesFitScore, ZeroAllocatableIsLeftOutNowAndScoredZeroInV120) {
  const ClusterState state({make_node("n", 4000, 0, 0)});
  const Pod pod = make_pod("p", 1000, 0, 0, 0);
  // cpu 75; memory allocatable 0: current leaves it out (75), v1.20 scores it 0 ((75 + 0) / 2).
  EXPECT_EQ(NodeResourcesFit(fit_args(KubeRelease::kCurrent)).score(pod, state, 0, CycleState()), 75);
  EXPECT_EQ(NodeResourcesFit(fit_args(KubeRelease::kV1_20)).score(pod, state, 0, CycleState()), 37);
}

TEST(NodeResourcesFitScore, ExplicitZeroRequestStaysZero) {
  const ClusterState state({make_node("n", 4000, 8192, 0)});
  Pod pod = make_pod("p", 0, 1024, 0, 0);
  pod.scoring_cpu_milli = 0;  // the reader's value for `cpu: "0"` written in the container
  pod.scoring_memory_bytes = 1024 * kBytesPerMib;
  // cpu 100; memory 87: 93.
  EXPECT_EQ(NodeResourcesFit(fit_args(KubeRelease::kCurrent)).score(pod, state, 0, CycleState()), 93);
  pod.scoring_cpu_milli = -1;  // no reader: a 0 total counts as 100m: (97 + 87) / 2 = 92
  EXPECT_EQ(NodeResourcesFit(fit_args(KubeRelease::kCurrent)).score(pod, state, 0, CycleState()), 92);
}

TEST(BalancedAllocation, CurrentUsesActualRequestsAndHalfTheDifference) {
  const ClusterState state = node_with_best_effort_pod();
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  // f_cpu = 0.25, f_memory = 0.125: std = 0.0625, (1 - 0.0625) * 100 = 93.75 -> 93.
  EXPECT_EQ(balanced_allocation_score(pod, state, 0, KubeRelease::kCurrent), 93);
  // v1.20, non-zero: f_cpu = 1100 / 4000 = 0.275, f_memory = 1224 / 8192 = 0.1494: (1 - 0.1256) * 100 -> 87.
  EXPECT_EQ(balanced_allocation_score(pod, state, 0, KubeRelease::kV1_20), 87);
}

TEST(BalancedAllocation, FullResourceCapsNowAndZeroesInV120) {
  const ClusterState state({make_node("n", 4000, 8192, 0)});
  const Pod pod = make_pod("p", 4000, 1024, 0, 0);
  // current: f_cpu = min(1, 1) = 1, f_memory = 0.125: std 0.4375 -> 56.25 -> 56; v1.20: f_cpu >= 1 -> 0.
  EXPECT_EQ(balanced_allocation_score(pod, state, 0, KubeRelease::kCurrent), 56);
  EXPECT_EQ(balanced_allocation_score(pod, state, 0, KubeRelease::kV1_20), 0);
}

TEST(BalancedAllocation, SkipsBestEffortPodsInTheCurrentReleaseOnly) {
  const ClusterState state({make_node("n", 4000, 8192, 0)});
  const Pod pod = make_pod("p", 0, 0, 0, 0);
  CycleState cycle;
  GoRand rng(1);
  const NodeId nodes[] = {0};
  EXPECT_TRUE(NodeResourcesBalancedAllocation(BalancedAllocationArgs{}).pre_score(pod, state, nodes, cycle, rng).is_skip());
  BalancedAllocationArgs v1_20;
  v1_20.release = KubeRelease::kV1_20;
  EXPECT_TRUE(NodeResourcesBalancedAllocation(v1_20).pre_score(pod, state, nodes, cycle, rng).is_success());
}

PodAffinityTerm term(std::string app, std::string key) {
  PodAffinityTerm t;
  t.label_selector.match_labels = {{"app", std::move(app)}};
  t.topology_key = std::move(key);
  return t;
}

Pod labelled(std::string name, std::string app) {
  Pod p = make_pod(std::move(name), 100, 100, 0, 0);
  p.namespace_name = "default";
  p.labels = {{"app", std::move(app)}};
  return p;
}

// Zone a holds n1 and n2, zone b n3. On n1 a web pod; on n3 a pod whose required affinity the
// incoming pod matches.
struct AffinityCluster {
  ClusterState state;
  AffinityCluster() : state(nodes()) {
    state.allocate(0, labelled("web", "web"), {});
    Pod follower = labelled("follower", "db");
    follower.constraints.required_affinity = {term("cache", "zone")};
    state.allocate(2, follower, {});
  }
  static std::vector<Node> nodes() {
    std::vector<Node> out;
    for (const char* zone_of : {"n1:a", "n2:a", "n3:b"}) {
      const std::string s = zone_of;
      Node n = make_node(s.substr(0, 2), 8000, 8192, 0);
      n.labels = {{"zone", s.substr(3)}};
      out.push_back(n);
    }
    return out;
  }
};

std::vector<int64_t> normalized(const InterPodAffinity& plugin, const Pod& pod, const ClusterState& state) {
  CycleState cycle;
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0, 1, 2};
  EXPECT_TRUE(plugin.pre_score(pod, state, feasible, cycle, rng).is_success());
  std::vector<NodeScore> scores;
  for (NodeId n : feasible) scores.push_back({n, plugin.score(pod, state, n, cycle)});
  plugin.normalize_score(pod, scores, cycle);
  std::vector<int64_t> out;
  for (const NodeScore& s : scores) out.push_back(s.score);
  return out;
}

TEST(InterPodAffinityScore, SumsPreferredTermsAndHardAffinityThenNormalizes) {
  AffinityCluster c;
  Pod pod = labelled("p", "cache");
  pod.constraints.preferred_affinity = {{10, term("web", "zone")}};                         // (zone, a) +10
  pod.constraints.preferred_anti_affinity = {{5, term("web", "kubernetes.io/hostname")}};  // (host, n1) -5
  // The follower's required term matches the pod: (zone, b) + hardPodAffinityWeight 1.
  const InterPodAffinity current{InterPodAffinityArgs{}};
  CycleState cycle;
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0, 1, 2};
  ASSERT_TRUE(current.pre_score(pod, c.state, feasible, cycle, rng).is_success());
  EXPECT_EQ(current.score(pod, c.state, 0, cycle), 5);
  EXPECT_EQ(current.score(pod, c.state, 1, cycle), 10);
  EXPECT_EQ(current.score(pod, c.state, 2, cycle), 1);
  // current: min 1, max 10: 100 * 4 / 9 = 44, 100, 0.
  EXPECT_EQ(normalized(current, pod, c.state), (std::vector<int64_t>{44, 100, 0}));
  // v1.20: min and max start at 0: 50, 100, 10.
  InterPodAffinityArgs v1_20;
  v1_20.release = KubeRelease::kV1_20;
  EXPECT_EQ(normalized(InterPodAffinity(v1_20), pod, c.state), (std::vector<int64_t>{50, 100, 10}));
  // Without the hard weight, n3 scores 0: current 50, 100, 0.
  InterPodAffinityArgs no_hard;
  no_hard.hard_pod_affinity_weight = 0;
  EXPECT_EQ(normalized(InterPodAffinity(no_hard), pod, c.state), (std::vector<int64_t>{50, 100, 0}));
}

TEST(InterPodAffinityScore, SkipsWhenNoPodHasTermsToScore) {
  ClusterState state({make_node("n1", 8000, 8192, 0)});
  state.allocate(0, labelled("web", "web"), {});
  CycleState cycle;
  GoRand rng(1);
  const std::vector<NodeId> feasible = {0};
  EXPECT_EQ(state.scored_affinity_pod_count(), 0);
  EXPECT_TRUE(InterPodAffinity().pre_score(labelled("p", "db"), state, feasible, cycle, rng).is_skip());
}

TEST(DefaultSchedulerProfile, WeightsAndRandomTies) {
  const ProfileConfig current = policy_profile("default-scheduler");
  EXPECT_EQ(current.score_combination, ScoreCombination::kWeightedSum);
  EXPECT_EQ(current.tie_break, ScoreTieBreak::kRandom);
  std::vector<std::pair<std::string, int64_t>> weights;
  for (const PluginRef& p : current.at(ExtensionPoint::kScore).enabled) weights.emplace_back(p.name, p.weight);
  EXPECT_EQ(weights, (std::vector<std::pair<std::string, int64_t>>{{"TaintToleration", 3},
                                                                   {"NodeAffinity", 2},
                                                                   {"NodeResourcesFit", 1},
                                                                   {"PodTopologySpread", 2},
                                                                   {"InterPodAffinity", 2},
                                                                   {"NodeResourcesBalancedAllocation", 1}}));
  const ProfileConfig v1_20 = policy_profile("default-scheduler-v1.20");
  for (const PluginRef& p : v1_20.at(ExtensionPoint::kScore).enabled) EXPECT_EQ(p.weight, p.name == "PodTopologySpread" ? 2 : 1) << p.name;
  // "all" leaves the v1.20 variant out.
  EXPECT_EQ(parse_policy_list("all").back(), "default-scheduler");

  // Two identical empty nodes and a third, smaller one: the pod goes to n1 or n2 (both score
  // LeastAllocated (87 + 87) / 2 = 87 and Balanced 100 against the small node's 75 and 100), each for
  // some seed, always the same for one seed.
  const ClusterState state({make_node("n1", 8000, 8192, 0), make_node("n2", 8000, 8192, 0), make_node("small", 4000, 4096, 0)});
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  std::set<NodeId> chosen;
  for (int64_t seed = 1; seed <= 16; ++seed) {
    Scheduler a(make_policy("default-scheduler", {}), {});
    Scheduler b(make_policy("default-scheduler", {}), {});
    GoRand ra(seed), rb(seed);
    NodeEvaluation evaluation;
    const ScheduleResult ea = a.evaluate(pod, state, ra, evaluation);
    const ScheduleResult eb = b.decide(pod, state, rb);
    ASSERT_TRUE(ea.scheduled());
    EXPECT_EQ(ea.node, eb.node) << "seed " << seed;
    EXPECT_EQ(evaluation.top_count, 2u);
    EXPECT_EQ(evaluation.ranked, (std::vector<NodeId>{0, 1, 2}));
    EXPECT_EQ(ea.score, 87 + 100);
    chosen.insert(ea.node);
  }
  EXPECT_EQ(chosen, (std::set<NodeId>{0, 1}));
}

}  // namespace
}  // namespace gpufleet::sched
