// The Scheduler's best-node index (scheduler.h) changes no decision: with it on and off, the same
// pods on the same seeded clusters get the same node, devices, score and NodeToStatus, while pods
// complete, nodes are cordoned, removed and added, and dry runs are discarded. And the change log it
// follows (ClusterState::changes_since) lists every change.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inputs/place/place_input.h"
#include "model/cluster_state.h"
#include "place/prepared_cluster.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "synthetic/k8s.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using gpufleet::testing::fit_error_of;
using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

std::vector<NodeId> log_of(const ClusterState& state, uint64_t since) {
  const auto changes = state.changes_since(since);
  return changes ? std::vector<NodeId>(changes->begin(), changes->end()) : std::vector<NodeId>{99, 99, 99};
}

TEST(ClusterStateChangeLog, ListsEveryChangeInOrder) {
  ClusterState state({make_node("n0", 4000, 4096, 0), make_node("n1", 4000, 4096, 0), make_node("n2", 4000, 4096, 0)});
  const uint64_t start = state.change_count();
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  state.allocate(1, pod, {});
  state.release(1, pod);
  state.set_unschedulable(2, true);
  // A new slot: the slot count changes, then the node is installed in slot 3.
  EXPECT_EQ(state.add_node(make_node("n3", 4000, 4096, 0)), 3u);
  const NodeId grow = ClusterState::kSlotCountChange;
  EXPECT_EQ(log_of(state, start), (std::vector<NodeId>{1, 1, 2, grow, 3}));
  EXPECT_EQ(log_of(state, start + 3), (std::vector<NodeId>{grow, 3}));
  EXPECT_EQ(log_of(state, state.change_count()), std::vector<NodeId>{});
  EXPECT_FALSE(state.changes_since(state.change_count() + 1));  // ahead of the state
  {
    // A dry run's discard changes node 0 back: two entries.
    auto fork = state.fork();
    state.allocate(0, pod, {});
    fork.discard();
  }
  EXPECT_EQ(log_of(state, start + 5), (std::vector<NodeId>{0, 0}));
  // A copy has an identity of its own and a log that starts at the copy.
  const ClusterState copy = state;
  EXPECT_NE(copy.identity(), state.identity());
  EXPECT_EQ(copy.change_count(), state.change_count());
  EXPECT_EQ(log_of(copy, copy.change_count()), std::vector<NodeId>{});
  EXPECT_FALSE(copy.changes_since(start));
}

TEST(ClusterStateChangeLog, ForgetsTheOldestPastItsBound) {
  ClusterState state({make_node("n0", 4000, 4096, 0), make_node("n1", 4000, 4096, 0)});
  const uint64_t start = state.change_count();
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  for (int i = 0; i < 70000; ++i) {  // 140,000 changes: past 2 x 65,536 the log drops to 65,536
    state.allocate(static_cast<NodeId>(i % 2), pod, {});
    state.release(static_cast<NodeId>(i % 2), pod);
  }
  EXPECT_EQ(state.change_count(), start + 140000);
  EXPECT_FALSE(state.changes_since(start));
  const auto last = state.changes_since(state.change_count() - 65536);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->size(), 65536u);
  EXPECT_EQ(last->back(), 1u);  // the last change: pod released from node 1 (i = 69,999)
}

// Compares two cycles' results field by field.
void expect_same(const ScheduleResult& a, const ScheduleResult& b) {
  ASSERT_EQ(a.node, b.node);
  ASSERT_EQ(a.gpus, b.gpus);
  ASSERT_EQ(a.shared_replicas, b.shared_replicas);
  ASSERT_EQ(a.score, b.score);
  ASSERT_EQ(a.status.code(), b.status.code());
  ASSERT_EQ(a.status.message(), b.status.message());
  ASSERT_EQ(a.node_to_status, b.node_to_status);
  ASSERT_EQ(a.post_filter.nominated_node, b.post_filter.nominated_node);
  ASSERT_EQ(a.post_filter.victims.size(), b.post_filter.victims.size());
}

// `place`'s scheduler (its profile with DefaultPreemption, ranks by name) on a seeded synthetic
// Kubernetes cluster, with and without the index, over a workload that overflows it, with churn
// between cycles. Every 20th pod, evaluate() (which never uses the index) must see the same
// feasible nodes in the same order on both: the entries the index kept are the filters' answers.
class BestNodeIndexTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BestNodeIndexTest, ChangesNoDecision) {
  const std::string policy = GetParam();
  int scheduled = 0, failed = 0, churned = 0;
  for (int64_t seed = 1; seed <= 3; ++seed) {
    GoRand gen(seed * 7919);
    auto pick = [&gen](size_t n) { return static_cast<size_t>(gen.intn(static_cast<int64_t>(n))); };
    place::PlaceInput input;
    input.nodes = synthetic::synthetic_k8s_nodes(static_cast<int32_t>(120 + pick(200)));
    if (seed == 3) input.nodes[pick(input.nodes.size())].taints.push_back(Taint{"spot", "true", "PreferNoSchedule"});
    input.pods = synthetic::synthetic_k8s_pods(1500, seed);
    if (seed == 2)  // preferred node affinity (a kNodeStatic Score before the memoized one) on a third of the pods
      for (size_t i = 0; i < input.pods.size(); i += 3)
        input.pods[i].constraints.preferred_node_affinity = {PreferredSchedulingTerm{
            static_cast<int32_t>(1 + i % 100), NodeSelectorTerm{{SelectorRequirement{"topology.kubernetes.io/zone", "In", {i % 2 ? "zone-a" : "zone-b"}}}, {}}}};
    place::PlaceOptions on_options{policy, 42};
    place::PlaceOptions off_options{policy, 42};
    off_options.best_node_index = false;
    ClusterState on_state(input.nodes), off_state(input.nodes);
    auto on = place::make_scheduler(on_state, input, on_options);
    auto off = place::make_scheduler(off_state, input, off_options);
    GoRand on_rng(seed), off_rng(seed);
    for (size_t i = 0; i < input.pods.size(); ++i) {
      SCOPED_TRACE(fmt::format("{} seed {} pod {}", policy, seed, i));
      const Pod& pod = input.pods[i];
      const ScheduleResult a = on->schedule_one(pod, on_state, on_rng);
      const ScheduleResult b = off->schedule_one(pod, off_state, off_rng);
      expect_same(a, b);
      a.scheduled() ? ++scheduled : ++failed;
      if (i % 20 == 0) {
        NodeEvaluation ea, eb;
        on->evaluate(pod, on_state, on_rng, ea);
        off->evaluate(pod, off_state, off_rng, eb);
        ASSERT_EQ(ea.node_to_status, eb.node_to_status);
        ASSERT_EQ(ea.ranked, eb.ranked);
      }
      // Churn, the same on both states.
      const auto n = static_cast<NodeId>(pick(on_state.node_count()));
      switch (pick(8)) {
        case 0:  // a pod completes
          if (on_state.has_node(n) && !on_state.pods_on(n).empty()) {
            const Pod done = on_state.pods_on(n).front().pod;
            on_state.release(n, done);
            off_state.release(n, done);
            ++churned;
          }
          break;
        case 1:  // cordon or uncordon
          if (on_state.has_node(n)) {
            const bool cordon = !on_state.node(n).unschedulable;
            on_state.set_unschedulable(n, cordon);
            off_state.set_unschedulable(n, cordon);
            ++churned;
          }
          break;
        case 2:  // a node without pods leaves, or a copy of it joins in the lowest empty slot
          if (on_state.has_node(n) && on_state.pods_on(n).empty()) {
            Node gone = on_state.remove_node(n);
            off_state.remove_node(n);
            gone.name += "-again";
            if (pick(2) == 0) {
              EXPECT_EQ(on_state.add_node(gone), off_state.add_node(gone));
            }
            ++churned;
          }
          break;
        case 3: {  // a dry run: the pod bound somewhere, then discarded
          if (a.scheduled() && pick(2) == 0) {
            auto fa = on_state.fork();
            auto fb = off_state.fork();
            on_state.release(a.node, pod);
            off_state.release(b.node, pod);
            fb.discard();
            fa.discard();
            ++churned;
          }
          break;
        }
        default:
          break;
      }
    }
  }
  EXPECT_GT(scheduled, 1000);
  EXPECT_GT(failed, 100);
  EXPECT_GT(churned, 300);
}

INSTANTIATE_TEST_SUITE_P(Policies, BestNodeIndexTest,
                         ::testing::Values("gpufleet", "leastallocated", "bestfit", "mostallocated", "fgd", "packing"),
                         [](const auto& info) { return info.param; });

// Non-cacheable filters: a Deployment whose replicas repel each other per hostname under
// MostAllocated, which prefers the nodes already used. Replica k finds the k nodes its siblings hold
// at the top of the index, each rejected by InterPodAffinity; past 64 the cycle passes over every
// node. Every replica still takes the lowest free node (equal scores: the lowest rank, here the
// NodeId), and once all 100 are taken the next replica fits nowhere, rejected on every node by
// InterPodAffinity.
TEST(BestNodeIndex, TriesTheNextNodesPastANonCacheableFilter) {
  std::vector<Node> nodes;
  for (int i = 0; i < 100; ++i) nodes.push_back(make_node(fmt::format("n{:03}", i), 8000, 16384, 0));
  for (Node& node : nodes) node.labels.emplace_back("kubernetes.io/hostname", node.name);
  for (const bool index : {true, false}) {
    SCOPED_TRACE(index ? "index on" : "index off");
    ClusterState state(nodes);
    Scheduler s(make_policy("mostallocated", PolicyContext{}), {});
    s.set_best_node_index(index);
    GoRand rng(1);
    for (int r = 0; r <= 100; ++r) {
      Pod pod = make_pod(fmt::format("web-{}", r), 1000, 1024, 0, 0);
      pod.labels = {{"app", "web"}};
      PodAffinityTerm term;
      term.label_selector.match_labels = {{"app", "web"}};
      term.topology_key = "kubernetes.io/hostname";
      pod.constraints.required_anti_affinity = {term};
      const ScheduleResult result = s.schedule_one(pod, state, rng);
      if (r < 100) {
        ASSERT_EQ(result.node, static_cast<NodeId>(r)) << r;
      } else {
        ASSERT_FALSE(result.scheduled());
        EXPECT_EQ(fit_error_of(result, pod, state), "0/100 nodes are available: 100 node(s) didn't match pod anti-affinity rules.");
      }
    }
  }
}

// Scheduler::set_node_to_status(false) (what `pack` sets): the same nodes, and a pod no node fits
// gets Unschedulable with an empty NodeToStatus. Three nodes of 4000 CPU milli, pods of 3000: one
// per node (BestFit: the fullest node that fits, ties to the lowest NodeId), then the fourth fits
// nowhere: with the diagnosis on, 3 nodes rejected for CPU.
TEST(BestNodeIndex, NodeToStatusOffChangesNoChoice) {
  const std::vector<Node> nodes = {make_node("n0", 4000, 16384, 0), make_node("n1", 4000, 16384, 0), make_node("n2", 4000, 16384, 0)};
  for (const bool index : {true, false})
    for (const bool diagnosis : {true, false}) {
      SCOPED_TRACE(fmt::format("index {} diagnosis {}", index, diagnosis));
      ClusterState state(nodes);
      Scheduler s(make_policy("bestfit", PolicyContext{}), {});
      s.set_best_node_index(index);
      s.set_node_to_status(diagnosis);
      GoRand rng(1);
      for (int r = 0; r < 3; ++r) EXPECT_EQ(s.schedule_one(make_pod(fmt::format("p{}", r), 3000, 1024, 0, 0), state, rng).node, NodeId(r));
      const Pod last = make_pod("p3", 3000, 1024, 0, 0);
      const ScheduleResult result = s.schedule_one(last, state, rng);
      EXPECT_FALSE(result.scheduled());
      EXPECT_EQ(result.status.code(), Code::kUnschedulable);
      if (diagnosis) {
        EXPECT_EQ(fit_error_of(result, last, state), "0/3 nodes are available: 3 Insufficient cpu.");
      } else {
        EXPECT_TRUE(result.node_to_status.empty());
      }
    }
}

}  // namespace
}  // namespace gpufleet::sched
