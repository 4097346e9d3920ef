// The placement policies (policy_registry.h) and their plugins, on 1-3 node clusters with
// hand-computed expectations (policies of the FGD simulator, hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/gpu/fragmentation.h"
#include "sched/framework/interface.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/dot_product_score.h"
#include "sched/plugins/fgd_score.h"
#include "sched/plugins/gpu_clustering_score.h"
#include "sched/plugins/gpu_packing_score.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/resource_allocation_score.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace gpufleet::sched {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;
using Gpus = std::vector<int32_t>;

TypicalPod type(int64_t cpu, int32_t milli, int32_t num, double popularity) {
  TypicalPod t;
  t.cpu_milli = cpu;
  t.gpu_milli = milli;
  t.num_gpu = num;
  t.count = 1;
  t.popularity = popularity;
  return t;
}

// The FGD mix used throughout: T1 {cpu 2000, 1x500} p .5, T2 {cpu 4000, 1x1000} p .5.
std::shared_ptr<const FragmentationMeasure> test_frag(const ClusterState& state) {
  return std::make_shared<FragmentationMeasure>(std::vector<TypicalPod>{type(2000, 500, 1, 0.5), type(4000, 1000, 1, 0.5)},
                                                state.gpu_models());
}

Profile policy_for(const std::string& name, const ClusterState& state) {
  PolicyContext ctx;
  ctx.frag = test_frag(state);
  ctx.gpu_models = state.gpu_models();
  ctx.cluster = &state;
  return make_policy(name, ctx);
}

std::vector<std::string> cacheable_policies() {
  std::vector<std::string> out;
  for (const auto& n : policy_names())  // default-scheduler breaks ties at random (kube_default_scoring_test)
    if (n != "random" && n.rfind("default-scheduler", 0) != 0) out.push_back(n);
  return out;
}

// One node whose GPU i has free[i] gpu_milli free (filled with CPU-less pods on each GPU).
ClusterState single_node(int64_t cpu, int64_t mem, const std::vector<int32_t>& free) {
  ClusterState s({make_node("n", cpu, mem, static_cast<int32_t>(free.size()))});
  for (size_t g = 0; g < free.size(); ++g) {
    const int32_t used = 1000 - free[g];
    if (used > 0) s.allocate(0, make_pod("fill", 0, 0, 1, used), {.gpus = {static_cast<int32_t>(g)}});
  }
  return s;
}

// The common 3-node cluster (all V100M16):
//   n0: cpu 32000, mem 128000, 4 GPUs; pod {4000, 8000, 1x500} on GPU1
//       -> cpu free 28000, mem used 8000, GPUs [1000, 500, 1000, 1000] (sum 3500), kinds {share}
//   n1: cpu 64000, mem 256000, 8 GPUs; pod {8000, 16000, 1x1000} on GPU0, pod {2000, 4000, 1x700} on GPU2
//       -> cpu free 54000, mem used 20000, GPUs [0, 1000, 300, 1000 x5] (sum 6300), kinds {share, 1-gpu}
//   n2: cpu 16000, mem 64000, 2 GPUs, empty -> [1000, 1000] (sum 2000)
ClusterState common_cluster() {
  ClusterState s({make_node("n0", 32000, 128000, 4), make_node("n1", 64000, 256000, 8), make_node("n2", 16000, 64000, 2)});
  s.allocate(0, make_pod("a", 4000, 8000, 1, 500), {.gpus = {1}});
  s.allocate(1, make_pod("b", 8000, 16000, 1, 1000), {.gpus = {0}});
  s.allocate(1, make_pod("c", 2000, 4000, 1, 700), {.gpus = {2}});
  return s;
}
const Pod kShare = make_pod("share", 4000, 8000, 1, 300);  // share pod {cpu 4000, mem 8000, 1x300}
const Pod kWhole = make_pod("whole", 8000, 16000, 2, 1000);  // {cpu 8000, mem 16000, 2x1000}

// ---------------------------------------------------------------------------------------------
// Registry

TEST(PolicyRegistryTest, NamesAndComposition) {
  const std::vector<std::string> want = {"random",         "dotprod",       "clustering", "packing", "bestfit",
                                         "fgd",            "leastallocated", "mostallocated", "fgd-online", "gpufleet",
                                         "default-scheduler", "default-scheduler-v1.20"};
  EXPECT_EQ(policy_names(), want);
  EXPECT_EQ(all_policy_names(), std::vector<std::string>(want.begin(), want.end() - 1));
  EXPECT_EQ(paper_policy_names(), std::vector<std::string>(want.begin(), want.begin() + 6));
  struct Row {
    const char* name;
    const char* score;
    const char* selector;
  };
  const Row rows[] = {{"random", "RandomScore", "random"},         {"dotprod", "DotProductScore", "best"},
                      {"clustering", "GpuClusteringScore", "best"}, {"packing", "GpuPackingScore", "best"},
                      {"bestfit", "BestFitScore", "best"},          {"fgd", "FGDScore", "fgd"},
                      {"leastallocated", "LeastAllocated", "best"}, {"mostallocated", "MostAllocated", "best"},
                      {"fgd-online", "OnlineFGDScore", "OnlineFGDScore"}, {"gpufleet", "GpufleetScore", "GpufleetScore"}};
  const ClusterState state = common_cluster();
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const Profile p = policy_for(r.name, state);
    EXPECT_EQ(p.name, r.name);
    ASSERT_FALSE(p.scores.empty());
    ASSERT_TRUE(p.gpu_selector);
    EXPECT_EQ(p.scores.back().plugin->name(), r.score);
    EXPECT_EQ(p.gpu_selector->name(), r.selector);
    ASSERT_EQ(p.filters.size(), 10u);  // kube's order, then DynamicResources
    EXPECT_EQ(p.filters[9]->name(), "DynamicResources");
    EXPECT_EQ(p.filters[0]->name(), "NodeUnschedulable");
    EXPECT_EQ(p.filters[1]->name(), "TaintToleration");
    EXPECT_EQ(p.filters[2]->name(), "NodeAffinity");
    EXPECT_EQ(p.filters[3]->name(), "NodeResourcesFit");
    EXPECT_EQ(p.filters[4]->name(), "GpuShareFit");
    EXPECT_EQ(p.filters[5]->name(), "GpuMemoryShareFit");
    EXPECT_EQ(p.filters[6]->name(), "NodeResourceTopologyMatch");
    EXPECT_EQ(p.filters[7]->name(), "PodTopologySpread");
    EXPECT_EQ(p.filters[8]->name(), "InterPodAffinity");
    EXPECT_EQ(p.filters[9]->name(), "DynamicResources");
  }
}

TEST(PolicyRegistryTest, UnknownPolicyAndMissingContext) {
  EXPECT_THROW(make_policy("nope", PolicyContext{}), UsageError);
  EXPECT_THROW(make_policy("FGD-ish", PolicyContext{}), UsageError);
  EXPECT_THROW(make_policy("fgd", PolicyContext{}), std::invalid_argument);
  EXPECT_THROW(make_policy("gpufleet", PolicyContext{}), std::invalid_argument);
  EXPECT_THROW(make_policy("fgd-online", PolicyContext{}), std::invalid_argument);
  EXPECT_NO_THROW(make_policy("packing", PolicyContext{}));  // only FGD needs the measure
}

TEST(PolicyRegistryTest, ParsePolicyList) {
  EXPECT_EQ(parse_policy_list("all"), all_policy_names());
  EXPECT_EQ(parse_policy_list("fgd,BestFit"), (std::vector<std::string>{"fgd", "bestfit"}));
  EXPECT_EQ(parse_policy_list("packing"), (std::vector<std::string>{"packing"}));
  // Duplicates removed, order kept: fgd first, then the rest of "all" without a second fgd.
  std::vector<std::string> want = {"fgd"};
  for (const auto& n : all_policy_names())
    if (n != "fgd") want.push_back(n);
  EXPECT_EQ(parse_policy_list("fgd,all,FGD"), want);
  EXPECT_THROW(parse_policy_list("fgd,bogus"), UsageError);
  try {
    parse_policy_list("fgd,bogus");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("--policy: unknown policy 'bogus' (valid: ", 0), 0u) << e.what();
  }
  try {  // named after where the text came from
    parse_policy_list("bogus", "--config 'pools.yaml,bogus'");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--config 'pools.yaml,bogus': unknown policy 'bogus' (valid: ", 0), 0u) << e.what();
  }
}

TEST(SchedulerTest, RejectsIncompletePolicyAndWrongRankCount) {
  Profile p = make_policy("packing", PolicyContext{});
  Profile no_score = p;
  no_score.scores.clear();
  EXPECT_THROW(Scheduler(no_score, std::vector<uint32_t>{0}), std::invalid_argument);
  Profile no_sel = p;
  no_sel.gpu_selector = nullptr;
  EXPECT_THROW(Scheduler(no_sel, std::vector<uint32_t>{0}), std::invalid_argument);
  Scheduler s(p, {0, 1});
  ClusterState state = common_cluster();  // 3 nodes, 2 ranks
  GoRand rng(1);
  EXPECT_THROW(s.decide(kShare, state, rng), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Every policy on the common cluster: chosen node, GPUs and winning score.
//
// Share pod {cpu 4000, mem 8000, 1x300}:
//  dotprod  r = [4000/128000, 300/8000] = [.03125, .0375]
//    n0 v=[.21875, .4375]:  v.r=.0068359+.0164063=.0232422 -> 100*(1-.0116211)=98.84 -> 98
//    n1 v=[.421875, .7875]: v.r=.0131836+.0295313=.0427148 -> 97.86 -> 97
//    n2 v=[.125, .25]:      v.r=.0039063+.009375 =.0132813 -> 99.34 -> 99   => n2, best-fit GPU 0 (tie, first)
//  clustering (tag share): n0 base 25*4500/8000=14, holds only share -> 89; n1 base 25*1700/8000=5,
//    holds share+1-gpu -> 55; n2 base 25*6000/8000=18, empty -> 43          => n0, best-fit GPU 1 (500)
//  packing: n0 fits ascending 500 (not free) -> 100-(50)/10=95; n1 ascending 0 (no), 300 (fits) ->
//    100-30/10=97; n2 all free, 2 GPUs -> max(31,2)=31                       => n1, best-fit GPU 2 (300)
//  bestfit: n0 .5*24000/128000+.5*3200/8000=.29375 -> 70; n1 .1953125+.375 -> 42;
//    n2 .046875+.10625=.153125 -> 84                                        => n2, GPU 0
//  fgd (F with the test mix): n0 F=250 (T2 strands the 500); GPU1 -> [1000,200,..]: F=100+100=200,
//    S=int(100*sig(.05))=51; GPUs 0/2/3 -> F=600, S=int(100*sig(-.35))=41 -> n0: 51 @1.
//    n1 F=150+150=300; GPU2 -> [0,1000,0,..]: F=0, S=int(100*sig(.3))=57; GPU1 -> F=150+500, 41 -> 57 @2.
//    n2 F=0; either GPU -> T2 strands 700: F=350, 41 @0                       => n1, GPU 2
//  leastallocated (cpu, mem, gpu): n0 (75+87+80)/3=80; n1 (78+89+75)/3=80; n2 (75+87+85)/3=82 => n2, GPU 0
//  mostallocated: n0 (25+12+20)/3=19; n1 (21+10+25)/3=18; n2 (25+12+15)/3=17   => n0, GPU 1
//
// Whole pod {cpu 8000, mem 16000, 2x1000} (GPUs: lowest-index fully free):
//  dotprod r=[.0625,.25]: n0 .0136719+.109375 -> 93; n1 .0263672+.196875 -> 88; n2 .0078125+.0625 -> 96 => n2 [0,1]
//  clustering (tag 2-gpu): n0 14+0; n1 5+0; n2 18+25=43                      => n2 [0,1]
//  packing: n0 takes 2 free GPUs -> max(50-2,33)=48; n1 48; n2 31 -> tie n0/n1 -> rank => n0 [0,2]
//  bestfit: n0 .078125+.09375 -> 82; n1 .1796875+.26875 -> 55; n2 .03125+0 -> 96 => n2 [0,1]
//  fgd: n0 after [0,500,0,1000]: F = 0 + 250 = 250 -> delta 0 -> 50; n1 after: 150+150 = 300 -> 50;
//    n2 after [0,0]: no GPU fits either type (Q2 of L=0) -> 0 -> 50. All 50 -> rank => n0 [0,2]
//  leastallocated: n0 (62+81+37)/3=60; n1 (71+85+53)/3=69; n2 (50+75+0)/3=41   => n1 [1,3]
//  mostallocated: n0 (37+18+62)/3=39; n1 (28+14+46)/3=29; n2 (50+25+100)/3=58  => n2 [0,1]
struct PolicyCase {
  const char* policy;
  NodeId share_node;
  Gpus share_gpus;
  int32_t share_score;
  NodeId whole_node;
  Gpus whole_gpus;
  int32_t whole_score;
  NodeId whole_node_ranked;  // with ranks {2, 0, 1}: n1 wins the n0/n1 ties
  Gpus whole_gpus_ranked;
};

void PrintTo(const PolicyCase& c, std::ostream* os) { *os << c.policy; }

class PolicyDecisionTest : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(PolicyDecisionTest, CommonCluster) {
  const PolicyCase& c = GetParam();
  const ClusterState state = common_cluster();
  GoRand rng(1);
  {
    Scheduler s(policy_for(c.policy, state), {0, 1, 2});
    const ScheduleResult share = s.decide(kShare, state, rng);
    EXPECT_EQ(share.node, c.share_node);
    EXPECT_EQ(share.gpus, c.share_gpus);
    EXPECT_EQ(share.score, c.share_score);
    const ScheduleResult whole = s.decide(kWhole, state, rng);
    EXPECT_EQ(whole.node, c.whole_node);
    EXPECT_EQ(whole.gpus, c.whole_gpus);
    EXPECT_EQ(whole.score, c.whole_score);
  }
  {
    Scheduler s(policy_for(c.policy, state), {2, 0, 1});
    const ScheduleResult share = s.decide(kShare, state, rng);  // no ties for the share pod
    EXPECT_EQ(share.node, c.share_node);
    EXPECT_EQ(share.gpus, c.share_gpus);
    const ScheduleResult whole = s.decide(kWhole, state, rng);
    EXPECT_EQ(whole.node, c.whole_node_ranked);
    EXPECT_EQ(whole.gpus, c.whole_gpus_ranked);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllScoredPolicies, PolicyDecisionTest,
    ::testing::Values(PolicyCase{"dotprod", 2, {0}, 99, 2, {0, 1}, 96, 2, {0, 1}},
                      PolicyCase{"clustering", 0, {1}, 89, 2, {0, 1}, 43, 2, {0, 1}},
                      PolicyCase{"packing", 1, {2}, 97, 0, {0, 2}, 48, 1, {1, 3}},
                      PolicyCase{"bestfit", 2, {0}, 84, 2, {0, 1}, 96, 2, {0, 1}},
                      PolicyCase{"fgd", 1, {2}, 57, 0, {0, 2}, 50, 1, {1, 3}},
                      PolicyCase{"leastallocated", 2, {0}, 82, 1, {1, 3}, 69, 1, {1, 3}},
                      PolicyCase{"mostallocated", 0, {1}, 19, 2, {0, 1}, 58, 2, {0, 1}}),
    [](const ::testing::TestParamInfo<PolicyCase>& info) { return std::string(info.param.policy); });

TEST(PolicyRegistryTest, EveryRegisteredPolicyIsInTheDecisionTable) {
  // The parameterized table above covers every policy but random, which has its own tests below, and
  // the online FGD policies, tested against FGD in sched/plugins/online_fgd_test.cpp, and kube's
  // default profiles, in sched/plugins/kube_default_scoring_test.cpp and the kube_scheduler_diff test.
  std::set<std::string> tabled = {"dotprod", "clustering", "packing", "bestfit", "fgd", "leastallocated", "mostallocated"};
  for (const auto& n : policy_names())
    EXPECT_TRUE(n == "random" || n == "fgd-online" || n == "gpufleet" || n.rfind("default-scheduler", 0) == 0 || tabled.count(n)) << n;
}

// schedule_one reserves what decide chose: packing puts the share pod on n1 GPU 2 (300 -> 0 free).
TEST(SchedulerTest, ScheduleOneAllocates) {
  ClusterState state = common_cluster();
  Scheduler s(policy_for("packing", state), {0, 1, 2});
  GoRand rng(1);
  const uint32_t v = state.version(1);
  const ScheduleResult r = s.schedule_one(kShare, state, rng);
  ASSERT_EQ(r.node, 1u);
  EXPECT_EQ(state.gpu_free_milli(1)[2], 0);
  EXPECT_EQ(state.cpu_free_milli(1), 54000 - 4000);
  EXPECT_EQ(state.gpu_free_milli_total(1), 6000);
  EXPECT_GT(state.version(1), v);
}

// ---------------------------------------------------------------------------------------------
// Random

// Reference model of the Random policy from the reference doc: node = feasible[rng.Intn(#feasible)],
// then reservoir sampling over the node's GPUs that fit (k-th fitting GPU taken when Intn(k) == 0).
struct RandomPick {
  NodeId node;
  int32_t gpu;
};
RandomPick random_reference(int64_t seed, const std::vector<NodeId>& feasible, const ClusterState& state, int32_t milli) {
  GoRand ref(seed);
  const NodeId n = feasible[static_cast<size_t>(ref.intn(static_cast<int64_t>(feasible.size())))];
  int32_t chosen = -1;
  int64_t seen = 0;
  const auto free = state.gpu_free_milli(n);
  for (size_t g = 0; g < free.size(); ++g) {
    if (free[g] < milli) continue;
    ++seen;
    if (ref.intn(seen) == 0) chosen = static_cast<int32_t>(g);
  }
  return {n, chosen};
}

TEST(RandomPolicyTest, MatchesReferenceDrawsOnCommonCluster) {
  const ClusterState state = common_cluster();
  std::set<NodeId> nodes_seen;
  std::set<std::pair<NodeId, int32_t>> picks_seen;
  for (int64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    Scheduler s(policy_for("random", state), {0, 1, 2});
    GoRand rng(seed);
    const ScheduleResult r = s.decide(kShare, state, rng);
    const RandomPick want = random_reference(seed, {0, 1, 2}, state, 300);
    ASSERT_EQ(r.node, want.node);
    ASSERT_EQ(r.gpus, Gpus{want.gpu});
    EXPECT_EQ(r.score, 100);
    EXPECT_GE(state.gpu_free_milli(r.node)[static_cast<size_t>(r.gpus[0])], 300);
    nodes_seen.insert(r.node);
    picks_seen.insert({r.node, r.gpus[0]});
  }
  EXPECT_EQ(nodes_seen.size(), 3u);
  EXPECT_GT(picks_seen.size(), 5u);  // not always the same GPU (n1 alone has 7 fitting GPUs)
}

// n1 lacks CPU for an 8000m pod: Random only ever draws among the feasible nodes {n0, n2}.
TEST(RandomPolicyTest, PicksOnlyFeasibleNodes) {
  ClusterState state({make_node("n0", 16000, 65536, 2), make_node("n1", 4000, 65536, 2), make_node("n2", 16000, 65536, 2)});
  const Pod pod = make_pod("p", 8000, 1024, 1, 500);
  std::set<NodeId> seen;
  for (int64_t seed = 1; seed <= 200; ++seed) {
    Scheduler s(policy_for("random", state), {0, 1, 2});
    GoRand rng(seed);
    const ScheduleResult r = s.decide(pod, state, rng);
    ASSERT_TRUE(r.scheduled());
    ASSERT_NE(r.node, 1u) << "seed " << seed;
    ASSERT_EQ(r.node, random_reference(seed, {0, 2}, state, 500).node) << "seed " << seed;
    seen.insert(r.node);
  }
  EXPECT_EQ(seen, (std::set<NodeId>{0, 2}));
}

TEST(RandomPolicyTest, DeterministicForSeed) {
  auto run = [](int64_t seed) {
    ClusterState state({make_node("n0", 64000, 262144, 4), make_node("n1", 64000, 262144, 8), make_node("n2", 64000, 262144, 2)});
    Scheduler s(policy_for("random", state), {0, 1, 2});
    GoRand rng(seed);
    std::vector<std::pair<NodeId, Gpus>> out;
    for (int i = 0; i < 30; ++i) {
      const Pod pod = i % 3 == 0 ? make_pod("w", 2000, 1024, 1, 1000) : make_pod("s", 1000, 1024, 1, 250 + 10 * i);
      const ScheduleResult r = s.schedule_one(pod, state, rng);
      out.emplace_back(r.node, r.gpus);
    }
    return out;
  };
  const auto a = run(7);
  EXPECT_EQ(a, run(7));
  EXPECT_NE(a, run(8));
}

// ---------------------------------------------------------------------------------------------
// Tie-breaking: identical empty nodes give every scored policy equal scores; the lowest rank wins.
TEST(SchedulerTest, TiesGoToLowestRank) {
  const std::vector<std::pair<std::vector<uint32_t>, NodeId>> rankings = {
      {{0, 1, 2}, 0}, {{2, 0, 1}, 1}, {{1, 2, 0}, 2}, {{2, 1, 0}, 2}};
  const Pod pods[] = {make_pod("share", 1000, 1000, 1, 500), make_pod("whole", 1000, 1000, 2, 1000),
                      make_pod("cpu", 1000, 1000, 0, 0)};
  const Gpus want_gpus[] = {{0}, {0, 1}, {}};
  for (const auto& name : cacheable_policies()) {
    for (const auto& [ranks, winner] : rankings) {
      ClusterState state({make_node("a", 32000, 65536, 4), make_node("b", 32000, 65536, 4), make_node("c", 32000, 65536, 4)});
      Scheduler s(policy_for(name, state), ranks);
      GoRand rng(3);
      for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(name + " pod " + pods[i].name + " winner " + std::to_string(winner));
        const ScheduleResult r = s.decide(pods[i], state, rng);
        EXPECT_EQ(r.node, winner);
        EXPECT_EQ(r.gpus, want_gpus[i]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GPU selection

// GPUs [800, 400, 1000, 400, 350]:
//   milli 400 -> least free that fits is 400, at 1 and 3 -> first index 1
//   milli 100 -> 350 at 4;  milli 900 -> 1000 at 2;  milli 1000 -> 2;  milli 810 on [800, 300] -> none (-1)
TEST(PolicyGpuSelectionTest, BestFitSelector) {
  const std::vector<int32_t> free = {800, 400, 1000, 400, 350};
  EXPECT_EQ(best_fit_gpu(free, 400), 1);
  EXPECT_EQ(best_fit_gpu(free, 100), 4);
  EXPECT_EQ(best_fit_gpu(free, 900), 2);
  EXPECT_EQ(best_fit_gpu(free, 1000), 2);
  EXPECT_EQ(best_fit_gpu(std::vector<int32_t>{800, 300}, 810), -1);

  const ClusterState state = single_node(64000, 262144, free);
  GoRand rng(1);
  EXPECT_EQ(BestFitGpuSelector().select_share_gpu(make_pod("p", 0, 0, 1, 400), state, 0, rng), 1);
  // Through the scheduler, every "best" policy picks GPU 1 on the only node.
  for (const auto& name : {"dotprod", "clustering", "packing", "bestfit", "leastallocated", "mostallocated"}) {
    Scheduler s(policy_for(name, state), {0});
    const ScheduleResult r = s.decide(make_pod("p", 1000, 1000, 1, 400), state, rng);
    EXPECT_EQ(r.node, 0u) << name;
    EXPECT_EQ(r.gpus, Gpus{1}) << name;
  }
}

// Pods taking whole GPUs get the lowest-index fully free ones, under every policy.
// GPUs [600, 1000, 0, 1000, 1000]: 2x1000 -> [1, 3]; 1x1000 -> [1]; 3x1000 -> [1, 3, 4].
TEST(PolicyGpuSelectionTest, WholeGpuPodsTakeLowestFreeIndices) {
  const ClusterState state = single_node(64000, 262144, {600, 1000, 0, 1000, 1000});
  EXPECT_EQ(lowest_free_gpus(state, 0, 2), (Gpus{1, 3}));
  EXPECT_EQ(lowest_free_gpus(state, 0, 5), (Gpus{1, 3, 4}));  // fewer if the node lacks them
  for (const auto& name : policy_names()) {
    Scheduler s(policy_for(name, state), {0});
    GoRand rng(11);
    EXPECT_EQ(s.decide(make_pod("w2", 1000, 1000, 2, 1000), state, rng).gpus, (Gpus{1, 3})) << name;
    EXPECT_EQ(s.decide(make_pod("w1", 1000, 1000, 1, 1000), state, rng).gpus, (Gpus{1})) << name;
    EXPECT_EQ(s.decide(make_pod("w3", 1000, 1000, 3, 1000), state, rng).gpus, (Gpus{1, 3, 4})) << name;
    EXPECT_FALSE(s.decide(make_pod("w4", 1000, 1000, 4, 1000), state, rng).scheduled()) << name;
  }
}

// FGD picks the first GPU reaching the max *truncated* score. Mix T1 {0, 1x500} p .5, T2 {0, 1x300} p .5;
// node cpu 8000, GPUs [400, 200, 1000], pod {1000, 1x20}. F = .5*(400+200) + .5*200 = 400.
//   GPU0 -> [380,200,1000]: .5*580 + .5*200 = 390, delta 10 -> int(100*sig(.01)) = 50
//   GPU1 -> [400,180,1000]: .5*580 + .5*180 = 380, delta 20 -> int(100*sig(.02)) = 50 (larger raw)
//   GPU2 -> [400,200,980]:  400, delta 0 -> 50
// All truncate to 50 -> GPU 0 (best-fit would take GPU 1, the 200).
TEST(PolicyGpuSelectionTest, FgdSelectorFirstIndexOfTruncatedMax) {
  const ClusterState state = single_node(8000, 65536, {400, 200, 1000});
  auto frag = std::make_shared<FragmentationMeasure>(std::vector<TypicalPod>{type(0, 500, 1, 0.5), type(0, 300, 1, 0.5)},
                                                     state.gpu_models());
  const Pod pod = make_pod("p", 1000, 0, 1, 20);
  EXPECT_EQ(fgd_score_and_gpu(*frag, pod, state, 0), (std::pair<int32_t, int32_t>{50, 0}));
  GoRand rng(1);
  EXPECT_EQ(FgdGpuSelector(frag).select_share_gpu(pod, state, 0, rng), 0);
  Scheduler fgd(make_policy("fgd", PolicyContext{frag, {}, {}}), {0});
  EXPECT_EQ(fgd.decide(pod, state, rng).gpus, Gpus{0});
  Scheduler packing(make_policy("packing", PolicyContext{}), {0});
  EXPECT_EQ(packing.decide(pod, state, rng).gpus, Gpus{1});
}

// ---------------------------------------------------------------------------------------------
// Score plugins, directly

TEST(PolicyScorePluginTest, GpuPackingVectors) {
  const GpuPackingScore packing;
  struct Case {
    const char* label;
    std::vector<int32_t> free;
    Pod pod;
    int32_t want;
  };
  const Case cases[] = {
      // all GPUs free: max(33 - n, n)
      {"8 free, whole", std::vector<int32_t>(8, 1000), make_pod("p", 1000, 0, 1, 1000), 25},
      {"8 free, share", std::vector<int32_t>(8, 1000), make_pod("p", 1000, 0, 1, 500), 25},
      {"4 free", std::vector<int32_t>(4, 1000), make_pod("p", 1000, 0, 1, 1000), 29},
      {"2 free", std::vector<int32_t>(2, 1000), make_pod("p", 1000, 0, 1, 300), 31},
      // share 500 on [700,200,0,0]: ascending 0,0,200 do not fit; 700 fits, not free -> 100 - 70/10 = 93
      {"share on 700", {700, 200, 0, 0}, make_pod("p", 1000, 0, 1, 500), 93},
      // share 200 on the same: 200 (GPU1) fits first in ascending order -> 100 - 20/10 = 98
      {"share on 200", {700, 200, 0, 0}, make_pod("p", 1000, 0, 1, 200), 98},
      // share 500 on [1000,950,1000]: 950 first -> 100 - 95/10 = 91
      {"share on 950", {1000, 950, 1000}, make_pod("p", 1000, 0, 1, 500), 91},
      // share 500 on [200,1000,1000,1000]: only free GPUs fit, k=1 -> max(50-1,33) = 49
      {"share on free k1", {200, 1000, 1000, 1000}, make_pod("p", 1000, 0, 1, 500), 49},
      // whole pods on [500, 1000 x7]: k = num_gpu -> 49, 48, 46
      {"1 whole", {500, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, make_pod("p", 1000, 0, 1, 1000), 49},
      {"2 whole", {500, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, make_pod("p", 1000, 0, 2, 1000), 48},
      {"4 whole", {500, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, make_pod("p", 1000, 0, 4, 1000), 46},
      {"7 whole", {0, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, make_pod("p", 1000, 0, 7, 1000), 43},
      // CPU-only pod: 0
      {"cpu only", {1000, 1000}, make_pod("p", 1000, 0, 0, 0), 0},
  };
  for (const Case& c : cases) {
    const ClusterState state = single_node(64000, 262144, c.free);
    EXPECT_EQ(packing.score(c.pod, state, 0, CycleState{}), c.want) << c.label;
  }
}

TEST(PolicyScorePluginTest, DotProduct) {
  const DotProductScore dot;
  // node cpu 64000, 4 free GPUs: v = [.5, .5]
  const ClusterState mid = single_node(64000, 262144, {1000, 1000, 1000, 1000});
  // pod {16000, 1x1000}: r = [.125, .125], v.r = .125 -> 100*(1-.0625) = 93.75 -> 93
  EXPECT_EQ(dot.score(make_pod("p", 16000, 0, 1, 1000), mid, 0, CycleState{}), 93);
  // CPU-only {32000}: r = [.25, 0], v.r = .125 -> 93
  EXPECT_EQ(dot.score(make_pod("p", 32000, 0, 0, 0), mid, 0, CycleState{}), 93);
  // share {4000, 1x600}: r = [.03125, .075], v.r = .015625 + .0375 = .053125 -> 100*(1-.0265625) = 97.34 -> 97
  EXPECT_EQ(dot.score(make_pod("p", 4000, 0, 1, 600), mid, 0, CycleState{}), 97);
  // The largest pod on the largest node: v.r = 1 + 1 = 2 -> 0
  const ClusterState big = single_node(128000, 1048576, std::vector<int32_t>(8, 1000));
  EXPECT_EQ(dot.score(make_pod("p", 128000, 0, 8, 1000), big, 0, CycleState{}), 0);
  // cpu 0 counts as 100m: v=[1,1], r=[100/128000, 0] -> 100*(1-.000390625) = 99.96 -> 99 (100 if taken as 0)
  EXPECT_EQ(dot.score(make_pod("p", 0, 0, 0, 0), big, 0, CycleState{}), 99);
  // Common cluster, share pod: 98 / 97 / 99 (see PolicyDecisionTest)
  const ClusterState common = common_cluster();
  EXPECT_EQ(dot.score(kShare, common, 0, CycleState{}), 98);
  EXPECT_EQ(dot.score(kShare, common, 1, CycleState{}), 97);
  EXPECT_EQ(dot.score(kShare, common, 2, CycleState{}), 99);
}

TEST(PolicyScorePluginTest, BestFit) {
  const BestFitScore bf;
  const ClusterState common = common_cluster();
  // share: n0 .29375 -> 70; n1 .5703125 -> 42; n2 .153125 -> 84
  EXPECT_EQ(bf.score(kShare, common, 0, CycleState{}), 70);
  EXPECT_EQ(bf.score(kShare, common, 1, CycleState{}), 42);
  EXPECT_EQ(bf.score(kShare, common, 2, CycleState{}), 84);
  // whole 2x1000: n0 .171875 -> 82; n1 .4484375 -> 55; n2 .03125 -> 96
  EXPECT_EQ(bf.score(kWhole, common, 0, CycleState{}), 82);
  EXPECT_EQ(bf.score(kWhole, common, 1, CycleState{}), 55);
  EXPECT_EQ(bf.score(kWhole, common, 2, CycleState{}), 96);
  // Exact fill: node cpu 16000, 2 GPUs, pod {16000, 2x1000}: raw 0 -> 100
  const ClusterState exact = single_node(16000, 65536, {1000, 1000});
  EXPECT_EQ(bf.score(make_pod("p", 16000, 0, 2, 1000), exact, 0, CycleState{}), 100);
  // node cpu 64000, 4 free; pod {8000, 1x1000}: .5*56000/128000 + .5*3000/8000 = .21875+.1875 = .40625 -> 59.375 -> 59
  const ClusterState mid = single_node(64000, 262144, {1000, 1000, 1000, 1000});
  EXPECT_EQ(bf.score(make_pod("p", 8000, 0, 1, 1000), mid, 0, CycleState{}), 59);
}

TEST(PolicyScorePluginTest, GpuClusteringTags) {
  const GpuClusteringScore cl;
  const Pod share = make_pod("s", 1000, 0, 1, 500);
  const Pod one = make_pod("o", 1000, 0, 1, 1000);
  const Pod two = make_pod("t", 1000, 0, 2, 1000);
  const Pod four = make_pod("f", 1000, 0, 4, 1000);
  const Pod cpu = make_pod("c", 1000, 0, 0, 0);
  ClusterState s({make_node("empty", 64000, 262144, 8), make_node("two", 64000, 262144, 8),
                  make_node("mixed", 64000, 262144, 8), make_node("cpuonly", 64000, 262144, 8),
                  make_node("small", 64000, 262144, 4)});
  s.allocate(1, two, {.gpus = {0, 1}});
  s.allocate(2, two, {.gpus = {0, 1}});
  s.allocate(2, share, {.gpus = {2}});
  s.allocate(3, cpu, {});
  // empty: base 25*0/8000 = 0, no tags -> +25
  EXPECT_EQ(cl.score(share, s, 0, CycleState{}), 25);
  EXPECT_EQ(cl.score(two, s, 0, CycleState{}), 25);
  // two: free 6000, base 25*2000/8000 = 6; tags {2-gpu}: 2-gpu pod -> 81; share / 1-gpu -> 6
  EXPECT_EQ(cl.score(two, s, 1, CycleState{}), 81);
  EXPECT_EQ(cl.score(share, s, 1, CycleState{}), 6);
  EXPECT_EQ(cl.score(one, s, 1, CycleState{}), 6);
  // mixed: free 5500, base 25*2500/8000 = 7; tags {2-gpu, share}: share/2-gpu -> +50 = 57; 4-gpu -> 7
  EXPECT_EQ(cl.score(share, s, 2, CycleState{}), 57);
  EXPECT_EQ(cl.score(two, s, 2, CycleState{}), 57);
  EXPECT_EQ(cl.score(four, s, 2, CycleState{}), 7);
  // cpuonly: CPU-only pods carry no tag -> as empty: 25
  EXPECT_EQ(cl.score(share, s, 3, CycleState{}), 25);
  // small (4 GPUs, empty): base 25*(8000-4000)/8000 = 12, +25 = 37
  EXPECT_EQ(cl.score(one, s, 4, CycleState{}), 37);
  // CPU-only pod scores 0 everywhere
  for (NodeId n = 0; n < 5; ++n) EXPECT_EQ(cl.score(cpu, s, n, CycleState{}), 0) << n;
}

TEST(PolicyScorePluginTest, LeastAndMostAllocated) {
  const LeastAllocated least;
  const MostAllocated most;
  EXPECT_EQ(least.name(), "LeastAllocated");
  EXPECT_EQ(most.name(), "MostAllocated");
  // GPU node: cpu 32000, mem 65536, 4 GPUs, holding {8000, 16384, 1x500}.
  ClusterState s({make_node("g", 32000, 65536, 4), make_node("c", 16000, 32768, 0), make_node("t", 1000, 1000, 0)});
  s.allocate(0, make_pod("x", 8000, 16384, 1, 500), {.gpus = {0}});
  s.allocate(2, make_pod("y", 950, 0, 0, 0), {});
  const Pod gpu_pod = make_pod("p", 8000, 16384, 1, 1000);
  const Pod cpu_pod = make_pod("q", 8000, 16384, 0, 0);
  // GPU pod: requested cpu 16000/32000, mem 32768/65536, gpu 1500/4000
  //   least: (50 + 50 + 2500*100/4000=62)/3 = 54;  most: (50 + 50 + 37)/3 = 45
  EXPECT_EQ(least.score(gpu_pod, s, 0, CycleState{}), 54);
  EXPECT_EQ(most.score(gpu_pod, s, 0, CycleState{}), 45);
  // CPU-only pod: GPU skipped -> least (50+50)/2 = 50 (62 if counted), most 50 (37 if counted)
  EXPECT_EQ(least.score(cpu_pod, s, 0, CycleState{}), 50);
  EXPECT_EQ(most.score(cpu_pod, s, 0, CycleState{}), 50);
  // CPU-only node (no GPU capacity): pod {4000, 8192}: least (75+75)/2 = 75, most (25+25)/2 = 25
  EXPECT_EQ(least.score(make_pod("r", 4000, 8192, 0, 0), s, 1, CycleState{}), 75);
  EXPECT_EQ(most.score(make_pod("r", 4000, 8192, 0, 0), s, 1, CycleState{}), 25);
  // cpu 0 counts as 100m: node cpu 1000 mem 1000 empty... node "t" holds 950m:
  //   pod {0, 500}: cpu requested 950+100 = 1050 > 1000 -> 0; mem 500/1000 -> 50 -> least (0+50)/2 = 25, most (0+50)/2 = 25
  EXPECT_EQ(least.score(make_pod("z", 0, 500, 0, 0), s, 2, CycleState{}), 25);
  EXPECT_EQ(most.score(make_pod("z", 0, 500, 0, 0), s, 2, CycleState{}), 25);
  // On the CPU-only node "c" a 0m pod is 100m: least cpu (16000-100)*100/16000 = 99, mem 100 -> 99;
  //   most cpu 100*100/16000 = 0, mem 0 -> 0
  EXPECT_EQ(least.score(make_pod("z", 0, 0, 0, 0), s, 1, CycleState{}), 99);
  EXPECT_EQ(most.score(make_pod("z", 0, 0, 0, 0), s, 1, CycleState{}), 0);
}

TEST(PolicyScorePluginTest, FgdScoreAndGpu) {
  const ClusterState common = common_cluster();
  auto frag = test_frag(common);
  const FgdScore fgd(frag);
  using P = std::pair<int32_t, int32_t>;
  // Share pod (see PolicyDecisionTest): n0 51 @1, n1 57 @2, n2 41 @0
  EXPECT_EQ(fgd_score_and_gpu(*frag, kShare, common, 0), (P{51, 1}));
  EXPECT_EQ(fgd_score_and_gpu(*frag, kShare, common, 1), (P{57, 2}));
  EXPECT_EQ(fgd_score_and_gpu(*frag, kShare, common, 2), (P{41, 0}));
  EXPECT_EQ(fgd.score(kShare, common, 1, CycleState{}), 57);
  // Whole pod: delta 0 on every node -> 50, no GPU index
  for (NodeId n = 0; n < 3; ++n) EXPECT_EQ(fgd_score_and_gpu(*frag, kWhole, common, n), (P{50, -1})) << n;
  // CPU-only {14000} on n2 (cpu 16000 -> 2000): T1 still Q3 (0), T2 now Q4 -> .5*2000 = 1000;
  //   delta -1000 -> int(100*sig(-1)) = 26
  EXPECT_EQ(fgd_score_and_gpu(*frag, make_pod("c", 14000, 0, 0, 0), common, 2), (P{26, -1}));
  // 1x1000 {4000} on n0: takes GPU0 -> [0,500,1000,1000]: F = 0 + .5*500 = 250 = before -> 50
  EXPECT_EQ(fgd_score_and_gpu(*frag, make_pod("w", 4000, 0, 1, 1000), common, 0), (P{50, -1}));
}

// ---------------------------------------------------------------------------------------------
// Unschedulable pods and filters

TEST(SchedulerTest, UnschedulableCountsAndMessage) {
  // n0, n1: cpu 4000 / 6000 < 8000; n2: cpu fits, its only GPU has 900 free < 1000.
  ClusterState state({make_node("n0", 4000, 65536, 4), make_node("n1", 6000, 65536, 4), make_node("n2", 16000, 65536, 1)});
  state.allocate(2, make_pod("x", 0, 0, 1, 100), {.gpus = {0}});
  const Pod pod = make_pod("p", 8000, 1024, 1, 1000);
  for (const auto& name : policy_names()) {
    SCOPED_TRACE(name);
    Scheduler s(policy_for(name, state), {0, 1, 2});
    GoRand rng(1);
    for (int round = 0; round < 2; ++round) {  // the second round answers from the cache
      const ScheduleResult r = s.decide(pod, state, rng);
      EXPECT_FALSE(r.scheduled());
      EXPECT_EQ(r.node, kNoNode);
      EXPECT_TRUE(r.gpus.empty());
      // Per node, the plugin that rejected it and its code (kube's NodeToStatus).
      ASSERT_EQ(r.node_to_status.size(), 3u);
      for (NodeId n : {0u, 1u}) {
        EXPECT_EQ(r.node_to_status.at(n).plugin_name(), "NodeResourcesFit");
        EXPECT_EQ(r.node_to_status.at(n).code, NodeResourcesFit::kInsufficientCpu);
      }
      EXPECT_EQ(r.node_to_status.at(2).plugin_name(), "GpuShareFit");
      EXPECT_EQ(r.node_to_status.at(2).code, GpuShareFit::kInsufficientGpu);
      EXPECT_EQ(r.node_to_status.count(NodeResourcesFit::kInsufficientCpu), 2);
      EXPECT_EQ(r.node_to_status.count(GpuShareFit::kInsufficientGpu), 1);
      EXPECT_EQ(testing::fit_error_of(r, pod, state),
                "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 Insufficient cpu.");  // Go's string sort
    }
  }
}

TEST(SchedulerTest, EveryFilterReason) {
  // n0: max_pods 1 and full; n1: cpu 4000 < 8000; n2: mem 16384 < 32768; n3: model T4 vs spec V100M16.
  Node full = make_node("n0", 16000, 65536, 2);
  full.max_pods = 1;
  ClusterState state({full, make_node("n1", 4000, 65536, 2), make_node("n2", 16000, 16384, 2),
                      make_node("n3", 16000, 65536, 2, "T4")});
  state.allocate(0, make_pod("x", 0, 0, 0, 0), {});
  const Pod pod = make_pod("p", 8000, 32768, 1, 500, "V100M16");
  Scheduler s(policy_for("fgd", state), {0, 1, 2, 3});
  GoRand rng(1);
  const ScheduleResult r = s.decide(pod, state, rng);
  ASSERT_FALSE(r.scheduled());
  EXPECT_EQ(r.node_to_status.count(FilterCode::kFits), 0);
  EXPECT_EQ(r.node_to_status.count(NodeResourcesFit::kTooManyPods), 1);
  EXPECT_EQ(r.node_to_status.count(NodeResourcesFit::kInsufficientCpu), 1);
  EXPECT_EQ(r.node_to_status.count(NodeResourcesFit::kInsufficientMemory), 1);
  EXPECT_EQ(r.node_to_status.count(GpuShareFit::kGpuModelMismatch), 1);
  EXPECT_EQ(testing::fit_error_of(r, pod, state),
            "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods, "
            "1 node(s) didn't match pod's GPU model constraint.");
  // A GPU pod on a node without GPUs: Insufficient nvidia.com/gpu.
  ClusterState cpu_only({make_node("c", 16000, 65536, 0)});
  Scheduler s2(policy_for("bestfit", cpu_only), {0});
  const Pod g = make_pod("g", 1000, 1000, 1, 500);
  const ScheduleResult r2 = s2.decide(g, cpu_only, rng);
  EXPECT_EQ(testing::fit_error_of(r2, g, cpu_only), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
  // ... while a CPU-only pod fits there.
  EXPECT_EQ(s2.decide(make_pod("c", 1000, 1000, 0, 0), cpu_only, rng).node, 0u);
}

// GPU model constraint: nodes n0 "C", n1 "B", n2 "A", otherwise identical (equal scores everywhere).
TEST(SchedulerTest, GpuModelConstraintFiltersNodes) {
  ClusterState state({make_node("n0", 16000, 65536, 2, "C"), make_node("n1", 16000, 65536, 2, "B"),
                      make_node("n2", 16000, 65536, 2, "A")});
  struct Case {
    const char* spec;
    std::vector<uint32_t> ranks;
    NodeId want;
  };
  const Case cases[] = {
      {"A|B", {0, 1, 2}, 1},  // n0 excluded; tie n1/n2 -> rank 1 < 2
      {"A|B", {0, 2, 1}, 2},  // same, n2 has the lower rank now
      {"A", {0, 1, 2}, 2},    {"B|", {0, 1, 2}, 1},  // empty items ignored
      {"|", {2, 1, 0}, 2},    // only empty items: any model
      {"", {0, 1, 2}, 0},     {"A|B|C", {1, 0, 2}, 1}, {"D", {0, 1, 2}, kNoNode},
      {"a", {0, 1, 2}, kNoNode},  // exact, case-sensitive match
  };
  for (const auto& name : cacheable_policies()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(name + " spec '" + c.spec + "'");
      Scheduler s(policy_for(name, state), c.ranks);
      GoRand rng(1);
      const ScheduleResult r = s.decide(make_pod("p", 1000, 1000, 1, 500, c.spec), state, rng);
      EXPECT_EQ(r.node, c.want);
      if (c.want == kNoNode) {
        EXPECT_EQ(r.node_to_status.count(GpuShareFit::kGpuModelMismatch), 3);
      } else {
        EXPECT_EQ(r.gpus, Gpus{0});
      }
    }
  }
  // A CPU-only pod ignores gpu_spec.
  Scheduler s(policy_for("bestfit", state), {0, 1, 2});
  GoRand rng(1);
  EXPECT_EQ(s.decide(make_pod("c", 1000, 1000, 0, 0, "D"), state, rng).node, 0u);
}

}  // namespace
}  // namespace gpufleet::sched
