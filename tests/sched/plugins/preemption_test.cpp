// Preemption (kube DefaultPreemption): eligibility, candidate nodes, victim selection with reprieve
// and PDBs, and each rule of the node choice. Every expected node and victim list is worked out by
// hand in the comment above the test. Every dry run must leave the ClusterState as it found it.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod_disruption_budget.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/plugins/default_preemption.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using Gpus = std::vector<int32_t>;
constexpr int32_t k2p30 = 1 << 30;

// Filters in kube's default order (TaintToleration and NodeAffinity before NodeResourcesFit,
// InterPodAffinity last), BestFit scoring.
Profile kube_order_policy() {
  return testing::profile_of("preemption-test",
                             {std::make_shared<TaintToleration>(), std::make_shared<NodeAffinity>(), std::make_shared<NodeResourcesFit>(),
                              std::make_shared<GpuShareFit>(), std::make_shared<InterPodAffinity>()},
                             std::make_shared<BestFitScore>(), std::make_shared<BestFitGpuSelector>());
}

Node node(const std::string& name, int64_t cpu_milli, int32_t gpus = 0) {
  Node n = make_node(name, cpu_milli, 65536, gpus);
  n.labels.emplace_back(std::string(kHostnameLabel), name);
  return n;
}

Pod pod(const std::string& name, int64_t cpu_milli, int32_t priority, const std::string& app = "") {
  Pod p = testing::make_pod(name, cpu_milli, 100, 0, 0);
  p.namespace_name = "default";
  p.priority = priority;
  if (!app.empty()) p.labels = {{"app", app}};
  return p;
}

Pod gpu_pod(const std::string& name, int32_t num_gpu, int32_t gpu_milli, int32_t priority) {
  Pod p = pod(name, 1000, priority);
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  return p;
}

PodAffinityTerm term(const std::string& key, const std::string& app) {
  PodAffinityTerm t;
  t.label_selector.match_labels = {{"app", app}};
  t.topology_key = key;
  return t;
}

PodDisruptionBudget min_available(const std::string& app, int32_t n) {
  PodDisruptionBudget b;
  b.name = app;
  b.has_selector = true;
  b.selector.match_labels = {{"app", app}};
  b.min_available = IntOrPercent{n, false};
  return b;
}

std::vector<std::string> names(const std::vector<BoundPod>& pods) {
  std::vector<std::string> out;
  for (const BoundPod& b : pods) out.push_back(b.pod.name);
  return out;
}

// Everything observable about a ClusterState, to check that a dry run restored it.
using NodeView = std::tuple<std::vector<std::tuple<std::string, std::string, uint64_t, Gpus>>, int64_t, int64_t, int32_t,
                            std::vector<int32_t>, int32_t, std::array<int32_t, kMaxGpusPerPod + 1>>;
std::tuple<std::vector<NodeView>, int64_t, int64_t> snapshot(const ClusterState& s) {
  std::vector<NodeView> nodes;
  for (NodeId n = 0; n < s.node_count(); ++n) {
    std::vector<std::tuple<std::string, std::string, uint64_t, Gpus>> pods;
    for (const BoundPod& b : s.pods_on(n)) pods.emplace_back(b.pod.namespace_name, b.pod.name, b.bind_seq, b.gpus);
    const auto free = s.gpu_free_milli(n);
    nodes.emplace_back(pods, s.cpu_used_milli(n), s.memory_free_bytes(n), s.pod_count(n),
                       std::vector<int32_t>(free.begin(), free.end()), s.anti_affinity_pod_count(n), s.gpu_pod_kinds(n));
  }
  return {nodes, s.gpu_used_milli(), s.anti_affinity_pod_count()};
}

class PreemptionTest : public ::testing::Test {
 protected:
  // Runs the pod's cycle (it must fail), then preemption, and checks the state came back unchanged.
  PreemptionResult run(const Pod& p, ClusterState& s, std::vector<PodDisruptionBudget> pdbs = {},
                       std::vector<Pod> workload = {}, std::vector<uint32_t> ranks = {}) {
    std::vector<uint32_t> sched_ranks = ranks;
    for (uint32_t i = static_cast<uint32_t>(sched_ranks.size()); i < s.node_count(); ++i) sched_ranks.push_back(i);
    Scheduler sched(policy_, sched_ranks);
    GoRand rng(1);
    const ScheduleResult r = sched.decide(p, s, rng);
    EXPECT_FALSE(r.scheduled()) << "the pod fits without preemption";
    const auto before = snapshot(s);
    const PreemptionInputs in{policy_.filters, r.node_to_status, pdbs, workload, ranks};
    PreemptionResult out = preempt(p, s, in);
    EXPECT_EQ(snapshot(s), before) << "the dry run changed the state";
    return out;
  }
  // Evicts the victims and runs the cycle again with the nominated node (kube's next cycle).
  ScheduleResult evict_and_schedule(const Pod& p, ClusterState& s, const PreemptionResult& result) {
    evict_victims(s, result);
    std::vector<uint32_t> ranks(s.node_count());
    for (uint32_t i = 0; i < ranks.size(); ++i) ranks[i] = i;
    Scheduler sched(policy_, ranks);
    GoRand rng(1);
    return sched.schedule_one(p, s, rng, result.node);
  }
  Profile policy_ = kube_order_policy();
};

TEST(PreemptionRules, ResolvableCodes) {
  EXPECT_TRUE(NodeResourcesFit::kInsufficientCpu.resolvable());
  EXPECT_TRUE(NodeResourcesFit::kInsufficientMemory.resolvable());
  EXPECT_TRUE(NodeResourcesFit::kTooManyPods.resolvable());
  EXPECT_TRUE(GpuShareFit::kInsufficientGpu.resolvable());
  EXPECT_TRUE(InterPodAffinity::kAntiAffinityRulesNotMatch.resolvable());
  EXPECT_TRUE(InterPodAffinity::kExistingAntiAffinityRulesNotMatch.resolvable());
  EXPECT_FALSE(FilterCode::kFits.resolvable());
  EXPECT_FALSE(GpuShareFit::kGpuModelMismatch.resolvable());
  EXPECT_FALSE(TaintToleration::kUntoleratedTaint.resolvable());
  EXPECT_FALSE(NodeAffinity::kNodeAffinityMismatch.resolvable());
}

// n0 (4000m): a (prio 10, 2000m), b (prio 5, 2000m). Only b is below 10.
//  - p (prio 10, 3000m): without b, 2000m free < 3000m: no candidate.
//  - q (prio 10, 2000m): evicting b frees 2000m: node 0, victim b; a (equal priority) is never touched.
//  - r (prio 5): no pod is strictly below 5.
TEST_F(PreemptionTest, NeverPreemptsEqualOrHigherPriority) {
  ClusterState s({node("n0", 4000)});
  s.allocate(0, pod("a", 2000, 10), {});
  s.allocate(0, pod("b", 2000, 5), {});
  PreemptionResult r = run(pod("p", 3000, 10), s);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.message, "preemption: 0/1 nodes are available: 1 Insufficient cpu.");
  r = run(pod("q", 2000, 10), s);
  ASSERT_TRUE(r.found());
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"b"}));
  r = run(pod("r", 1000, 5), s);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.message, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
}

TEST_F(PreemptionTest, PreemptionPolicyNever) {
  ClusterState s({node("n0", 4000)});
  s.allocate(0, pod("low", 4000, 0), {});
  Pod p = pod("p", 2000, 100);
  p.preempt_lower_priority = false;
  const PreemptionResult r = run(p, s);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.candidates, 0);
  EXPECT_EQ(r.message, "preemption: not eligible due to preemptionPolicy=Never.");
}

// Pod p (prio 50, 3000m, nodeSelector gpu=a100, no toleration), every node 4000m and full:
//  n0 tainted (untolerated: unresolvable), n1 gpu=t4 (node affinity: unresolvable), n2 gpu=a100 with
//  one pod of prio 100 (no victim), n3 gpu=a100 with low1 (prio 1, 2000m) and low2 (prio 2, 2000m).
//  Without n3: no candidate. With n3: node 3; reprieving low2 leaves 2000m < 3000m, so both go,
//  most important first: [low2, low1].
TEST_F(PreemptionTest, UnresolvableNodesAreSkipped) {
  std::vector<Node> nodes = {node("n0", 4000), node("n1", 4000), node("n2", 4000), node("n3", 4000)};
  nodes[0].taints = {{"dedicated", "infra", "NoSchedule"}};
  nodes[0].labels.emplace_back("gpu", "a100");
  nodes[1].labels.emplace_back("gpu", "t4");
  nodes[2].labels.emplace_back("gpu", "a100");
  nodes[3].labels.emplace_back("gpu", "a100");
  Pod p = pod("p", 3000, 50);
  p.constraints.node_selector = {{"gpu", "a100"}};

  ClusterState three({nodes[0], nodes[1], nodes[2]});
  three.allocate(0, pod("t-low", 4000, 0), {});
  three.allocate(1, pod("a-low", 4000, 0), {});
  three.allocate(2, pod("high", 4000, 100), {});
  PreemptionResult r = run(p, three);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.message,
            "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.");

  ClusterState four(nodes);
  four.allocate(0, pod("t-low", 4000, 0), {});
  four.allocate(1, pod("a-low", 4000, 0), {});
  four.allocate(2, pod("high", 4000, 100), {});
  four.allocate(3, pod("low1", 2000, 1), {});
  four.allocate(3, pod("low2", 2000, 2), {});
  r = run(p, four);
  ASSERT_TRUE(r.found());
  EXPECT_EQ(r.node, 3u);
  EXPECT_EQ(r.candidates, 1);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"low2", "low1"}));
  EXPECT_EQ(evict_and_schedule(p, four, r).node, 3u);
}

// A V100 node full of low-priority GPU pods cannot help a pod that asks for an A100.
TEST_F(PreemptionTest, GpuModelMismatchIsUnresolvable) {
  ClusterState s({node("n0", 32000, 2)});
  s.allocate(0, gpu_pod("a", 1, 1000, 0), {.gpus = {0}});
  s.allocate(0, gpu_pod("b", 1, 1000, 0), {.gpus = {1}});
  Pod p = gpu_pod("p", 1, 1000, 10);
  p.gpu_spec = "A100";
  const PreemptionResult r = run(p, s);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.message, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
}

// p (prio 10, 5000m). n0 (4000m) could never hold it (request above allocatable: unresolvable);
// n1 (8000m) holds high (prio 20, 4000m) and low (prio 1, 4000m): without low, 4000m < 5000m.
TEST_F(PreemptionTest, PodThatFitsNowhereGetsNoCandidate) {
  ClusterState s({node("n0", 4000), node("n1", 8000)});
  s.allocate(0, pod("small-low", 1000, 0), {});
  s.allocate(1, pod("high", 4000, 20), {});
  s.allocate(1, pod("low", 4000, 1), {});
  const PreemptionResult r = run(pod("p", 5000, 10), s);
  EXPECT_FALSE(r.found());
  EXPECT_EQ(r.candidates, 0);
  EXPECT_EQ(r.message,
            "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.");
}

// n0 (6000m): p1 (prio 1), p2 (prio 2), p3 (prio 3), 2000m each, bound in that order.
//  - 2000m pod: all out (6000m free), reprieve p3 (4000m free, fits), p2 (2000m, fits), p1 (0: victim).
//  - 3000m pod: reprieve p3 (4000m, fits), p2 (2000m < 3000m: victim), p1 (2000m: victim).
TEST_F(PreemptionTest, ReprieveKeepsUnneededVictims) {
  ClusterState s({node("n0", 6000)});
  s.allocate(0, pod("p1", 2000, 1), {});
  s.allocate(0, pod("p2", 2000, 2), {});
  s.allocate(0, pod("p3", 2000, 3), {});
  PreemptionResult r = run(pod("x", 2000, 10), s);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"p1"}));
  r = run(pod("y", 3000, 10), s);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"p2", "p1"}));
  EXPECT_EQ(r.pdb_violations, 0);
  const ScheduleResult placed = evict_and_schedule(pod("y", 3000, 10), s, r);
  EXPECT_EQ(placed.node, 0u);
  EXPECT_EQ(s.pods_on(0).size(), 2u);  // p3 and y
}

// Same node, p1 now app=web under a PDB minAvailable 1 (1 healthy, 1 expected: 0 disruptions left),
// so p1 is PDB-violating and reprieved first:
//  - 2000m pod: p1 back (4000m free, fits), then p3 (2000m, fits), p2 (0: victim) -> [p2], 0 violations.
//  - 3000m pod: p1 back (4000m, fits), p3 (2000m: victim), p2 (2000m: victim) -> [p3, p2].
//  - 5000m pod: p1 back (4000m: no) -> victim and a violation; p3, p2 victims too -> [p3, p2, p1], 1.
TEST_F(PreemptionTest, PdbViolatingVictimsAreReprievedFirst) {
  ClusterState s({node("n0", 6000)});
  const Pod p1 = pod("p1", 2000, 1, "web");
  s.allocate(0, p1, {});
  s.allocate(0, pod("p2", 2000, 2), {});
  s.allocate(0, pod("p3", 2000, 3), {});
  const std::vector<PodDisruptionBudget> pdbs = {min_available("web", 1)};
  const std::vector<Pod> workload = {p1};
  PreemptionResult r = run(pod("x", 2000, 10), s, pdbs, workload);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"p2"}));
  EXPECT_EQ(r.pdb_violations, 0);
  r = run(pod("y", 3000, 10), s, pdbs, workload);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"p3", "p2"}));
  EXPECT_EQ(r.pdb_violations, 0);
  r = run(pod("z", 5000, 10), s, pdbs, workload);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"p3", "p2", "p1"}));
  EXPECT_EQ(r.pdb_violations, 1);
}

// Rule 1. n0: web-0 (prio 1, app web, PDB minAvailable 1: 0 disruptions left); n1: db-0 (prio 2).
// Rule 2 alone would pick n0 (victim priority 1 < 2); rule 1 picks n1 (0 violations against 1).
// With minAvailable 0 (1 disruption left) both have 0 violations and rule 2 picks n0. When n1 only
// has a higher-priority pod, n0 is chosen anyway, with 1 violation (PDBs are best effort).
TEST_F(PreemptionTest, FewestPdbViolationsWins) {
  const Pod web = pod("web-0", 4000, 1, "web");
  const Pod db = pod("db-0", 4000, 2, "db");
  const std::vector<Pod> workload = {web, db};
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(0, web, {});
  s.allocate(1, db, {});
  PreemptionResult r = run(pod("p", 4000, 10), s, {min_available("web", 1)}, workload);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"db-0"}));
  EXPECT_EQ(r.pdb_violations, 0);
  EXPECT_EQ(r.candidates, 2);
  r = run(pod("p", 4000, 10), s, {min_available("web", 0)}, workload);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(r.pdb_violations, 0);

  ClusterState only(std::vector<Node>{node("n0", 4000), node("n1", 4000)});
  only.allocate(0, web, {});
  only.allocate(1, pod("vip", 4000, 100), {});
  r = run(pod("p", 4000, 10), only, {min_available("web", 1)}, workload);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(r.pdb_violations, 1);
}

// Rule 2. p (prio 10, 4000m). n0: a (prio 5, 4000m) -> victims [a], highest 5. n1: b, c (prio 3,
// 2000m each) -> victims [b, c], highest 3. n1 wins despite more victims.
TEST_F(PreemptionTest, LowestHighestVictimPriorityWins) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(0, pod("a", 4000, 5), {});
  s.allocate(1, pod("b", 2000, 3), {});
  s.allocate(1, pod("c", 2000, 3), {});
  const PreemptionResult r = run(pod("p", 4000, 10), s);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"b", "c"}));  // equal priority: earlier start first
}

// Rule 3. p (4000m). n0: a (prio 4), b (prio 1); n1: c (prio 4), d (prio 3); 2000m each, all victims.
// Highest 4 on both; sums 5 + 2^32 < 7 + 2^32: n0.
TEST_F(PreemptionTest, SmallestSumOfPrioritiesWins) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(1, pod("c", 2000, 4), {});
  s.allocate(1, pod("d", 2000, 3), {});
  s.allocate(0, pod("a", 2000, 4), {});
  s.allocate(0, pod("b", 2000, 1), {});
  const PreemptionResult r = run(pod("p", 4000, 10), s);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"a", "b"}));
}

// Rule 3 with negative priorities, where the MaxInt32 + 1 offset matters. p (prio 0, 4000m).
// n0: e (prio -10, 4000m); n1: f (prio -10), g (prio -20), 2000m each. Highest -10 on both.
// Raw sums -10 vs -30 would pick n1; with the offset: 2^31 - 10 < 2^32 - 30, so n0.
TEST_F(PreemptionTest, SumOffsetKeepsNegativePrioritiesFromFavouringMoreVictims) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(1, pod("f", 2000, -10), {});
  s.allocate(1, pod("g", 2000, -20), {});
  s.allocate(0, pod("e", 4000, -10), {});
  const PreemptionResult r = run(pod("p", 4000, 0), s);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"e"}));
}

// Rule 4. p (prio 2^30 + 1, 6000m), nodes of 6000m. n0: a, b (prio 2^30, 2000m each; 2000m left
// free); n1: c (2^30), d (0), e (-2^30), 2000m each. All are victims. Highest 2^30 on both; sums
// 2 x 2^30 + 2 x 2^31 = 3 x 2^31 = 0 + 3 x 2^31: a tie. Fewest victims: n0 (2 against 3), although
// rule 5 would have preferred n1 (its earliest top victim c started after a).
TEST_F(PreemptionTest, FewestVictimsWins) {
  ClusterState s({node("n0", 6000), node("n1", 6000)});
  s.allocate(0, pod("a", 2000, k2p30), {});
  s.allocate(0, pod("b", 2000, k2p30), {});
  s.allocate(1, pod("c", 2000, k2p30), {});
  s.allocate(1, pod("d", 2000, 0), {});
  s.allocate(1, pod("e", 2000, -k2p30), {});
  const PreemptionResult r = run(pod("p", 6000, k2p30 + 1), s);
  EXPECT_EQ(r.candidates, 2);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"a", "b"}));
}

// Rule 5. Single victims: x0 on n0 bound first, x1 on n1 second, both prio 5 and 4000m: n1 (its
// victim started later). Two victims: n0 holds a (bound 1st) and b (4th), n1 holds c (2nd) and d
// (3rd), all prio 5: the earliest top victims are a (1st) and c (2nd): n1, although n0 holds the
// most recent pod.
TEST_F(PreemptionTest, LatestStartTimeWins) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(0, pod("x0", 4000, 5), {});
  s.allocate(1, pod("x1", 4000, 5), {});
  PreemptionResult r = run(pod("p", 4000, 10), s);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"x1"}));

  ClusterState two({node("n0", 4000), node("n1", 4000)});
  two.allocate(0, pod("a", 2000, 5), {});
  two.allocate(1, pod("c", 2000, 5), {});
  two.allocate(1, pod("d", 2000, 5), {});
  two.allocate(0, pod("b", 2000, 5), {});
  r = run(pod("p", 4000, 10), two);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"c", "d"}));
}

// Rule 6. Two candidates equal under rules 1-5 (hand-built: equal start times cannot happen in a
// ClusterState): the lowest node id, or with ranks the lowest rank.
TEST(PreemptionRules, FirstNodeBreaksTheLastTie) {
  BoundPod v;
  v.pod.priority = 3;
  v.bind_seq = 7;
  const std::vector<PreemptionCandidate> c = {{3, {v}, 0}, {1, {v}, 0}};
  EXPECT_EQ(pick_one_node_for_preemption(c, {}), 1u);  // node 1
  const std::vector<uint32_t> ranks = {0, 9, 5, 2};   // node 3 ranks 2, node 1 ranks 9
  EXPECT_EQ(pick_one_node_for_preemption(c, ranks), 0u);  // node 3
  EXPECT_THROW(pick_one_node_for_preemption({}, {}), std::invalid_argument);
}

// The order of the rules, on hand-built candidates: each pair differs in two rules, and the earlier
// rule decides.
TEST(PreemptionRules, RulesApplyInKubesOrder) {
  auto victim = [](int32_t priority, uint64_t seq) {
    BoundPod b;
    b.pod.priority = priority;
    b.bind_seq = seq;
    return b;
  };
  // 1 before 2: fewer violations beats a lower top priority.
  std::vector<PreemptionCandidate> c = {{0, {victim(1, 1)}, 1}, {1, {victim(9, 2)}, 0}};
  EXPECT_EQ(pick_one_node_for_preemption(c, {}), 1u);
  // 2 before 3: top priority 5 (sum 5 + 1) beats top 6 (sum 6).
  c = {{0, {victim(6, 1)}, 0}, {1, {victim(5, 2), victim(1, 3)}, 0}};
  EXPECT_EQ(pick_one_node_for_preemption(c, {}), 1u);
  // 3 before 4: 2 victims summing 2^31 + 2^32 against 3 summing -2^30 + 3 x 2^31 (smaller): the
  // node with more victims wins.
  c = {{0, {victim(k2p30, 1), victim(k2p30, 2)}, 0}, {1, {victim(k2p30, 3), victim(-k2p30, 4), victim(-k2p30, 5)}, 0}};
  EXPECT_EQ(pick_one_node_for_preemption(c, {}), 1u);
  // 5: earliest top victim 4 (node 0) against 2 (node 1): node 0; a lower victim's start is ignored.
  c = {{0, {victim(5, 4), victim(1, 1)}, 0}, {1, {victim(5, 2), victim(1, 9)}, 0}};
  EXPECT_EQ(pick_one_node_for_preemption(c, {}), 0u);
}

// GPUs. n0 (4 GPUs): a (prio 3) on GPU 0, b (prio 2) on GPU 1, c (prio 1, 300 milli) on GPU 2,
// d (prio 20) on GPU 3. p (prio 10) wants 2 whole GPUs. Without a, b, c: GPUs 0-2 free, fits.
// Reprieve a: whole free {1, 2}, fits. b: {2}, no -> victim. c (700 left on GPU 2): {1}, no ->
// victim. After the eviction p takes GPUs 1 and 2.
TEST_F(PreemptionTest, GpuVictimsAndReprieve) {
  ClusterState s({node("n0", 32000, 4)});
  s.allocate(0, gpu_pod("a", 1, 1000, 3), {.gpus = {0}});
  s.allocate(0, gpu_pod("b", 1, 1000, 2), {.gpus = {1}});
  s.allocate(0, gpu_pod("c", 1, 300, 1), {.gpus = {2}});
  s.allocate(0, gpu_pod("d", 1, 1000, 20), {.gpus = {3}});
  const Pod p = gpu_pod("p", 2, 1000, 10);
  const PreemptionResult r = run(p, s);
  ASSERT_TRUE(r.found());
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(r.victims[0].gpus, Gpus{1});
  EXPECT_EQ(r.victims[1].gpus, Gpus{2});
  const ScheduleResult placed = evict_and_schedule(p, s, r);
  EXPECT_EQ(placed.node, 0u);
  EXPECT_EQ(placed.gpus, (Gpus{1, 2}));
}

// Anti-affinity of the pod is resolvable: p (prio 10) refuses app=db on its host. n0 holds db-low
// (prio 1), n1 db-high (prio 100): n0, victim db-low.
TEST_F(PreemptionTest, PodsAntiAffinityIsResolvable) {
  ClusterState s({node("n0", 8000), node("n1", 8000)});
  s.allocate(0, pod("db-low", 1000, 1, "db"), {});
  s.allocate(1, pod("db-high", 1000, 100, "db"), {});
  Pod p = pod("p", 1000, 10, "web");
  p.constraints.required_anti_affinity = {term(std::string(kHostnameLabel), "db")};
  const PreemptionResult r = run(p, s);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"db-low"}));
  EXPECT_EQ(r.candidates, 1);
  EXPECT_EQ(evict_and_schedule(p, s, r).node, 0u);
}

// A zone term blocked by a pod on another node of the zone is not resolved by evicting pods here:
// n0 and n1 in zone a, db (prio 1) on n1, x (prio 1) on n0. Dry run on n0: without x, db still
// blocks zone a. On n1: without db, zone a is clear. So n1, victim db.
TEST_F(PreemptionTest, ZoneAntiAffinityNeedsTheVictimOnTheNode) {
  std::vector<Node> nodes = {node("n0", 8000), node("n1", 8000)};
  for (Node& n : nodes) n.labels.emplace_back("topology.kubernetes.io/zone", "a");
  ClusterState s(nodes);
  s.allocate(0, pod("x", 1000, 1, "x"), {});
  s.allocate(1, pod("db", 1000, 1, "db"), {});
  Pod p = pod("p", 1000, 10, "web");
  p.constraints.required_anti_affinity = {term("topology.kubernetes.io/zone", "db")};
  const PreemptionResult r = run(p, s);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.candidates, 1);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"db"}));
  // Once db is gone both nodes fit, and BestFit (97 on both: (1 - 0.5 x 6000/128000) x 100 and
  // (1 - 0.5 x 7000/128000) x 100, truncated) would take n0 by rank: the nominated node decides.
  ClusterState copy = s;
  evict_victims(copy, r);
  Scheduler plain(policy_, {0, 1});
  GoRand rng(1);
  EXPECT_EQ(plain.decide(p, copy, rng).node, 0u);
  EXPECT_EQ(evict_and_schedule(p, s, r).node, 1u);
}

// A nominated node that no longer fits is ignored: the cycle runs as usual.
TEST_F(PreemptionTest, NominatedNodeThatNoLongerFitsIsIgnored) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  s.allocate(0, pod("a", 4000, 0), {});
  Scheduler sched(policy_, {0, 1});
  GoRand rng(1);
  const ScheduleResult r = sched.decide(pod("p", 2000, 10), s, rng, 0);
  EXPECT_EQ(r.node, 1u);
  EXPECT_THROW(sched.decide(pod("p", 2000, 10), s, rng, 7), std::invalid_argument);
}

// The symmetric rule is resolvable too: a low-priority guard refusing app=batch on its host goes.
TEST_F(PreemptionTest, ExistingPodsAntiAffinityIsResolvable) {
  ClusterState s({node("n0", 8000), node("n1", 8000)});
  Pod guard = pod("guard", 1000, 1, "guard");
  guard.constraints.required_anti_affinity = {term(std::string(kHostnameLabel), "batch")};
  Pod vip_guard = guard;
  vip_guard.name = "vip-guard";
  vip_guard.priority = 100;
  s.allocate(0, guard, {});
  s.allocate(1, vip_guard, {});
  const Pod p = pod("p", 1000, 10, "batch");
  const PreemptionResult r = run(p, s);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(names(r.victims), (std::vector<std::string>{"guard"}));
  EXPECT_EQ(evict_and_schedule(p, s, r).node, 0u);
  EXPECT_EQ(s.anti_affinity_pod_count(), 1);  // vip-guard only
}

TEST_F(PreemptionTest, RejectsMismatchedInputs) {
  ClusterState s({node("n0", 4000), node("n1", 4000)});
  // NodeToStatus entries of "Insufficient cpu" (NodeResourcesFit's) for one node, then for two.
  auto table = std::make_shared<const FilterReasonTable>(policy_.filters);
  uint8_t cpu = 0;
  for (size_t i = 0; i < policy_.filters.size(); ++i)
    if (policy_.filters[i]->name() == NodeResourcesFit::kName) cpu = table->number(i, NodeResourcesFit::kInsufficientCpu);
  ASSERT_NE(cpu, 0);
  const NodeToStatus one(table, {cpu});
  EXPECT_THROW(preempt(pod("p", 1000, 1), s, PreemptionInputs{policy_.filters, one, {}, {}, {}}), std::invalid_argument);
  const NodeToStatus two(table, {cpu, cpu});
  const std::vector<uint32_t> ranks = {0};
  EXPECT_THROW(preempt(pod("p", 1000, 1), s, PreemptionInputs{policy_.filters, two, {}, {}, ranks}), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::sched
