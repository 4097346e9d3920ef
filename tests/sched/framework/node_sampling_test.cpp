// kube-scheduler's percentageOfNodesToScore (sched/framework/node_sampling.h) and the Scheduler's
// sampled Filter pass (sched/scheduler.h, "Sampling"). Expected values are worked out by hand from
// kube's schedule_one.go numFeasibleNodesToFind / findNodesThatPassFilters and node_tree.go list().
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "sched/framework/node_sampling.h"
#include "sched/framework/profile.h"
#include "sched/framework/validation.h"
#include "sched/plugins/registry.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

TEST(NodeSampling, NumFeasibleNodesToFindIsKubes) {
  EXPECT_EQ(num_feasible_nodes_to_find(0, 0), 0);
  EXPECT_EQ(num_feasible_nodes_to_find(0, 99), 99);     // below 100 nodes: all
  EXPECT_EQ(num_feasible_nodes_to_find(10, 99), 99);
  EXPECT_EQ(num_feasible_nodes_to_find(0, 100), 100);   // 49 % of 100 = 49, raised to 100
  EXPECT_EQ(num_feasible_nodes_to_find(0, 250), 120);   // 50 - 2 = 48 %
  EXPECT_EQ(num_feasible_nodes_to_find(0, 1000), 420);  // 50 - 8 = 42 %
  EXPECT_EQ(num_feasible_nodes_to_find(0, 5000), 500);  // 50 - 40 = 10 %
  EXPECT_EQ(num_feasible_nodes_to_find(0, 6000), 300);  // 50 - 48 = 2 %, raised to 5 %
  EXPECT_EQ(num_feasible_nodes_to_find(0, 100000), 5000);
  EXPECT_EQ(num_feasible_nodes_to_find(30, 1000), 300);
  EXPECT_EQ(num_feasible_nodes_to_find(5, 1000), 100);  // 50, raised to 100
  EXPECT_EQ(num_feasible_nodes_to_find(1, 20001), 200);  // 200.01 rounds down
  EXPECT_EQ(num_feasible_nodes_to_find(100, 100000), 100000);
}

Node zoned(std::string name, const char* zone, const char* region = nullptr) {
  Node n = make_node(std::move(name), 8000, 8192, 4);
  if (zone) n.labels.emplace_back("topology.kubernetes.io/zone", zone);
  if (region) n.labels.emplace_back("topology.kubernetes.io/region", region);
  return n;
}

// Zones in order of their first node: a (n0), b (n1), "" (n3, no labels), c (n4, beta label);
// then one of each in turn: a b "" c, a b, a. With ranks reversing n0 and n2 (both zone a), n2
// arrives first. Region r1 with zone a is another zone than zone a alone.
TEST(NodeSampling, NodeTreeOrderInterleavesZones) {
  Node beta = make_node("n4", 8000, 8192, 4);
  beta.labels.emplace_back("failure-domain.beta.kubernetes.io/zone", "c");
  ClusterState state({zoned("n0", "a"), zoned("n1", "b"), zoned("n2", "a"), zoned("n3", nullptr), beta,
                      zoned("n5", "a"), zoned("n6", "b")});
  EXPECT_EQ(node_tree_order(state, {}), (std::vector<NodeId>{0, 1, 3, 4, 2, 6, 5}));
  const std::vector<uint32_t> rank{2, 1, 0, 3, 4, 5, 6};
  EXPECT_EQ(node_tree_order(state, rank), (std::vector<NodeId>{2, 1, 3, 4, 0, 6, 5}));
  state.remove_node(3);  // an empty slot is left out, and zone "" with it
  EXPECT_EQ(node_tree_order(state, {}), (std::vector<NodeId>{0, 1, 4, 2, 6, 5}));

  ClusterState regions({zoned("x", "a"), zoned("y", "a", "r1"), zoned("z", "a")});
  EXPECT_EQ(node_tree_order(regions, {}), (std::vector<NodeId>{0, 1, 2}));
}

TEST(NodeSampling, ValidationRefusesOutOfRange) {
  ProfileConfig c = policy_profile("bestfit");
  for (int32_t ok : {0, 1, 100}) {
    c.percentage_of_nodes_to_score = ok;
    EXPECT_TRUE(validate_profile(c, in_tree_registry()).empty()) << ok;
  }
  c.percentage_of_nodes_to_score = 101;
  FieldErrors errs = validate_profile(c, in_tree_registry());
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].to_string(), "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]");
  c.percentage_of_nodes_to_score = -1;
  errs = validate_profile(c, in_tree_registry());
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].to_string(), "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]");
  c.percentage_of_nodes_to_score = 7;
  EXPECT_EQ(build_profile(c, in_tree_registry(), PolicyContext{}).percentage_of_nodes_to_score, 7);
}

Profile sampled(const char* policy, std::optional<int32_t> percentage) {
  Profile p = make_policy(policy, PolicyContext{});
  p.percentage_of_nodes_to_score = percentage;
  return p;
}

// 250 nodes without zones: 0..49 have 1 GPU, 50..249 have 4; a 2-GPU pod fits 50..249, all alike,
// so the lowest NodeId checked wins. Adaptive: 48 % of 250 = 120 nodes to find.
//  cycle 1: from 0, checks 0..169 (50 rejected, 120 fit) -> 50; start 170.
//  cycle 2: from 170, 170..249 (80 fit), 0..49 (rejected), 50..89 (40 fit) -> 50; start (170+170)%250 = 90.
//  cycle 3: from 90, 90..209 -> 90; start 210.
//  cycle 4: from 210, 210..249, 0..49, 50..129 -> 50; start 130.
//  cycle 5: from 130, 130..249 -> 130.
// Without sampling every cycle gets 50.
TEST(NodeSampling, SchedulerRotatesLikeKube) {
  std::vector<Node> nodes;
  for (int i = 0; i < 250; ++i) nodes.push_back(make_node(fmt::format("n{}", i), 8000, 8192, i < 50 ? 1 : 4));
  const ClusterState state(nodes);
  const Pod pod = make_pod("p", 1000, 1024, 2, 1000);
  GoRand rng(1);
  Scheduler s(sampled("packing", 0), {});
  std::vector<NodeId> got;
  for (int c = 0; c < 5; ++c) got.push_back(s.decide(pod, state, rng).node);
  EXPECT_EQ(got, (std::vector<NodeId>{50, 50, 90, 50, 130}));

  Scheduler off(sampled("packing", std::nullopt), {});
  for (int c = 0; c < 3; ++c) EXPECT_EQ(off.decide(pod, state, rng).node, 50u);

  // 30 %: 75 nodes, raised to 100. From 0: 0..149 -> 50, start 150; from 150: 150..249 -> 150,
  // start (150 + 100) % 250 = 0; then 50 again.
  Scheduler thirty(sampled("packing", 30), {});
  EXPECT_EQ(thirty.decide(pod, state, rng).node, 50u);
  EXPECT_EQ(thirty.decide(pod, state, rng).node, 150u);
  EXPECT_EQ(thirty.decide(pod, state, rng).node, 50u);

  // Ranks: the nodes arrive in rank order, so with reversed ranks the order is 249, 248, ..., 0.
  //  cycle 1: positions 0..119 (nodes 249..130 fit) -> 249 (rank 0); start 120.
  //  cycle 2: positions 120..199 (nodes 129..50 fit, 80), 200..249 (49..0 rejected), 0..39
  //           (249..210 fit, 40) -> 249; start (120 + 170) % 250 = 40.
  //  cycle 3: positions 40..159 (nodes 209..90) -> 209 (rank 40).
  std::vector<uint32_t> reversed(250);
  for (uint32_t i = 0; i < 250; ++i) reversed[i] = 249 - i;
  Scheduler r(sampled("packing", 0), reversed);
  EXPECT_EQ(r.decide(pod, state, rng).node, 249u);
  EXPECT_EQ(r.decide(pod, state, rng).node, 249u);
  EXPECT_EQ(r.decide(pod, state, rng).node, 209u);
}

// A cycle that finds no node checks every node (its NodeToStatus complete) and leaves the start
// where it was (250 checked of 250); evaluate() (the extender) answers for every node.
TEST(NodeSampling, NoFitChecksEveryNodeAndEvaluateIsNotSampled) {
  std::vector<Node> nodes;
  for (int i = 0; i < 250; ++i) nodes.push_back(make_node(fmt::format("n{}", i), 8000, 8192, i < 50 ? 1 : 4));
  const ClusterState state(nodes);
  GoRand rng(1);
  Scheduler s(sampled("packing", 0), {});
  EXPECT_EQ(s.decide(make_pod("p", 1000, 1024, 2, 1000), state, rng).node, 50u);  // start 170
  const ScheduleResult none = s.decide(make_pod("big", 1000, 1024, 8, 1000), state, rng);
  EXPECT_FALSE(none.scheduled());
  int32_t rejected = 0;
  for (int32_t c : none.node_to_status.counts()) rejected += c;
  EXPECT_EQ(rejected, 250);
  EXPECT_EQ(s.decide(make_pod("p", 1000, 1024, 2, 1000), state, rng).node, 50u);  // from 170 as cycle 2 above
  NodeEvaluation evaluation;
  const ScheduleResult all = s.evaluate(make_pod("p", 1000, 1024, 2, 1000), state, rng, evaluation);
  EXPECT_EQ(all.node, 50u);
  EXPECT_EQ(evaluation.ranked.size(), 200u);
  EXPECT_EQ(s.decide(make_pod("p", 1000, 1024, 2, 1000), state, rng).node, 90u);  // evaluate() did not move the start
}

// Below 100 nodes in one zone, every node is checked from position 0 in NodeId order, so any
// percentage places exactly as no sampling, random tie-breaks (default-scheduler) included: 300
// pods of mixed shapes on 60 nodes of mixed sizes, with allocation between cycles.
TEST(NodeSampling, SmallClusterPlacesAsUnsampled) {
  std::vector<Node> nodes;
  for (int i = 0; i < 60; ++i) nodes.push_back(make_node(fmt::format("n{}", i), 16000 + 4000 * (i % 3), 65536, 2 + 2 * (i % 4)));
  for (const char* policy : {"packing", "bestfit", "default-scheduler"})
    for (int32_t percentage : {0, 1, 50, 100}) {
      ClusterState a(nodes), b(nodes);
      Scheduler off(sampled(policy, std::nullopt), {}), on(sampled(policy, percentage), {});
      GoRand ra(7), rb(7);
      for (int i = 0; i < 300; ++i) {
        const Pod pod = make_pod(fmt::format("p{}", i), 500 + 250 * (i % 5), 1024, i % 3, i % 3 == 0 ? 0 : i % 3 == 1 ? 500 : 1000);
        const ScheduleResult x = off.schedule_one(pod, a, ra), y = on.schedule_one(pod, b, rb);
        ASSERT_EQ(x.node, y.node) << policy << " " << percentage << " pod " << i;
        ASSERT_EQ(x.gpus, y.gpus) << policy << " " << percentage << " pod " << i;
      }
    }
}

}  // namespace
}  // namespace gpufleet::sched
