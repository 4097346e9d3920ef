// Scheduler::evaluate over candidate nodes (scheduler.h), as the extender answers for the nodes
// kube-scheduler sent: on seeded synthetic Kubernetes clusters filling up under churn, for random
// subsets in random order with repeats, each candidate's Filter answer (plugin, code, kube's words)
// is the one of the evaluation over every node and every other slot reads "not rejected"; the ranked
// nodes are the feasible candidates (in a lexicographic profile, the whole cluster's order restricted
// to them: its raw scores need no normalization); and candidates holding every node, in any order
// and with repeats, give exactly the evaluation over every node.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inputs/place/place_input.h"
#include "model/cluster_state.h"
#include "place/prepared_cluster.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "synthetic/k8s.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

void expect_same(const ScheduleResult& a, const NodeEvaluation& ea, const ScheduleResult& b, const NodeEvaluation& eb) {
  ASSERT_EQ(a.node, b.node);
  ASSERT_EQ(a.gpus, b.gpus);
  ASSERT_EQ(a.shared_replicas, b.shared_replicas);
  ASSERT_EQ(a.score, b.score);
  ASSERT_EQ(a.status.code(), b.status.code());
  ASSERT_EQ(a.status.message(), b.status.message());
  ASSERT_EQ(a.node_to_status, b.node_to_status);
  ASSERT_EQ(ea.node_to_status, eb.node_to_status);
  ASSERT_EQ(ea.ranked, eb.ranked);
  ASSERT_EQ(ea.top_count, eb.top_count);
}

class EvaluateCandidatesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EvaluateCandidatesTest, AnswerAsTheEvaluationOverEveryNode) {
  const std::string policy = GetParam();
  // Raw scores compared in order, no PreScore draw: the subset's order is the cluster's restricted.
  const bool restricts_order = policy != "default-scheduler" && policy != "random";
  int evaluations = 0, candidate_rejections = 0, uncached_rejections = 0, feasible_subsets = 0, empty_subsets = 0;
  for (int64_t seed = 1; seed <= 3; ++seed) {
    GoRand gen(seed * 104729);
    auto pick = [&gen](size_t n) { return static_cast<size_t>(gen.intn(static_cast<int64_t>(n))); };
    place::PlaceInput input;
    input.nodes = synthetic::synthetic_k8s_nodes(static_cast<int32_t>(80 + pick(120)));
    if (seed == 2)
      for (int k = 0; k < 10; ++k) input.nodes[pick(input.nodes.size())].taints.push_back(Taint{"spot", "true", "PreferNoSchedule"});
    input.pods = synthetic::synthetic_k8s_pods(900, seed);
    ClusterState state(input.nodes);
    auto scheduler = place::make_scheduler(state, input, place::PlaceOptions{policy, 42});
    GoRand rng(seed);
    for (size_t i = 0; i < input.pods.size(); ++i) {
      SCOPED_TRACE(fmt::format("{} seed {} pod {}", policy, seed, i));
      const Pod& pod = input.pods[i];
      if (i % 7 == 0) {
        ++evaluations;
        const size_t slots = state.node_count();
        // A random subset (each node with one chance in 1..8), shuffled, a few listed twice.
        const size_t one_in = 1 + pick(8);
        std::vector<NodeId> subset;
        for (const int n : gen.perm(static_cast<int>(slots)))
          if (pick(one_in) == 0) subset.push_back(static_cast<NodeId>(n));
        for (size_t k = 0; k < subset.size() / 10; ++k) subset.push_back(subset[pick(subset.size())]);
        // Every node, shuffled, a few listed twice.
        std::vector<NodeId> every;
        for (const int n : gen.perm(static_cast<int>(slots))) every.push_back(static_cast<NodeId>(n));
        for (size_t k = 0; k < 5; ++k) every.push_back(static_cast<NodeId>(pick(slots)));

        NodeEvaluation full, sub, all;
        GoRand r_full(static_cast<int64_t>(i)), r_sub(static_cast<int64_t>(i)), r_all(static_cast<int64_t>(i));
        const ScheduleResult f = scheduler->evaluate(pod, state, r_full, full);
        const ScheduleResult s = scheduler->evaluate(pod, state, r_sub, sub, true, &subset);
        const ScheduleResult a = scheduler->evaluate(pod, state, r_all, all, true, &every);
        expect_same(f, full, a, all);

        // PreFilter sees the whole state either way.
        ASSERT_EQ(full.node_to_status.empty(), sub.node_to_status.empty());
        if (full.node_to_status.empty()) continue;
        ASSERT_EQ(sub.node_to_status.size(), slots);
        const std::set<NodeId> in(subset.begin(), subset.end());
        std::set<NodeId> feasible;
        for (NodeId n = 0; n < slots; ++n) {
          const Rejection want = full.node_to_status.at(n), got = sub.node_to_status.at(n);
          if (!in.count(n)) {
            ASSERT_FALSE(got.rejected()) << n;  // not evaluated
            continue;
          }
          ASSERT_EQ(got.plugin_name(), want.plugin_name()) << n;
          ASSERT_EQ(got.code, want.code) << n;
          ASSERT_EQ(got.node_reasons(pod, state, n), want.node_reasons(pod, state, n)) << n;
          if (got.rejected()) {
            ++candidate_rejections;
            if (got.plugin_name() == "InterPodAffinity") ++uncached_rejections;
          } else if (state.has_node(n)) {
            feasible.insert(n);
          }
        }
        if (s.status.code() == Code::kError) continue;  // a PreScore error (e.g. NodeAffinity's over these nodes)
        if (feasible.empty()) {
          ++empty_subsets;
          ASSERT_EQ(s.status.code(), Code::kUnschedulable);
          ASSERT_EQ(s.node, kNoNode);
          ASSERT_EQ(s.node_to_status, sub.node_to_status);
          ASSERT_TRUE(sub.ranked.empty());
          continue;
        }
        ++feasible_subsets;
        ASSERT_EQ(std::set<NodeId>(sub.ranked.begin(), sub.ranked.end()), feasible);
        ASSERT_EQ(sub.ranked.size(), feasible.size());
        ASSERT_GE(sub.top_count, 1u);
        ASSERT_TRUE(std::find(sub.ranked.begin(), sub.ranked.begin() + static_cast<ptrdiff_t>(sub.top_count), s.node) !=
                    sub.ranked.begin() + static_cast<ptrdiff_t>(sub.top_count));
        if (restricts_order && f.status.is_success()) {
          std::vector<NodeId> restricted;
          for (const NodeId n : full.ranked)
            if (in.count(n)) restricted.push_back(n);
          ASSERT_EQ(sub.ranked, restricted);
          ASSERT_EQ(s.node, restricted.front());
        }
      }
      const ScheduleResult placed = scheduler->schedule_one(pod, state, rng);
      // Churn: now and then a pod completes.
      const auto n = static_cast<NodeId>(pick(state.node_count()));
      if (pick(4) == 0 && state.has_node(n) && !state.pods_on(n).empty()) state.release(n, state.pods_on(n).front().pod);
      (void)placed;
    }
  }
  // The runs cover what they claim: rejections by cached and non-cacheable filters, subsets with
  // and without a feasible node.
  EXPECT_GT(evaluations, 300);
  EXPECT_GT(candidate_rejections, 1000);
  EXPECT_GT(uncached_rejections, 0);
  EXPECT_GT(feasible_subsets, 100);
  EXPECT_GT(empty_subsets, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, EvaluateCandidatesTest,
                         ::testing::Values("gpufleet", "fgd", "leastallocated", "default-scheduler", "random"),
                         [](const auto& info) { return info.param == "default-scheduler" ? std::string("default_scheduler") : info.param; });

TEST(EvaluateCandidates, ACandidateOutOfRangeThrows) {
  ClusterState state({gpufleet::testing::make_node("n0", 4000, 4096, 0)});
  auto scheduler = place::make_scheduler(state, place::PlaceInput{}, place::PlaceOptions{"gpufleet", 42});
  GoRand rng(1);
  NodeEvaluation evaluation;
  const std::vector<NodeId> candidates{0, 1};
  EXPECT_THROW(scheduler->evaluate(gpufleet::testing::make_pod("p", 1000, 1024, 0, 0), state, rng, evaluation, true, &candidates),
               std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::sched
