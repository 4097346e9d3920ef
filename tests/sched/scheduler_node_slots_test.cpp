// The Scheduler over a ClusterState whose nodes come and go between cycles: its per-node cache and
// its node preferences follow the slots, empty slots are never chosen or counted, and the tie-break
// ranks grow with the slots. Each case is built so that a result cached for the slot's previous
// node would give another answer.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

// n0 has 1 GPU, n1 4: a 2-GPU pod fits only n1. The cycle caches "n1 fits" at n1's version. n1
// goes (never bound) and a 1-GPU node takes slot 1: the pod fits nowhere, and slot 1 is rejected
// for its GPUs. A 4-GPU node added at slot 3 (slot 2 stays empty) takes it.
TEST(SchedulerNodeSlots, AReusedSlotIsEvaluatedAfresh) {
  ClusterState state({make_node("n0", 8000, 8192, 1), make_node("n1", 8000, 8192, 4)});
  Scheduler s(make_policy("packing", PolicyContext{}), {0, 1});
  GoRand rng(1);
  const Pod pod = make_pod("p", 1000, 1024, 2, 1000);
  ScheduleResult r = s.decide(pod, state, rng);
  ASSERT_EQ(r.node, 1u);

  state.remove_node(1);
  EXPECT_EQ(state.add_node(make_node("small", 8000, 8192, 1)), 1u);
  r = s.decide(pod, state, rng);
  EXPECT_FALSE(r.scheduled());
  ASSERT_EQ(r.node_to_status.size(), 2u);
  EXPECT_EQ(r.node_to_status.number(1), r.node_to_status.number(0));
  EXPECT_TRUE(r.node_to_status.at(1).rejected());
  EXPECT_EQ(r.node_to_status.count(r.node_to_status.at(0).code), 2);

  EXPECT_EQ(state.add_node(make_node("big", 8000, 8192, 4), 3), 3u);
  s.set_node_rank(3, 3);  // slot 2 ranks as its id, 2
  r = s.schedule_one(pod, state, rng);
  EXPECT_EQ(r.node, 3u);
  EXPECT_EQ(r.gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(state.pods_on(3).size(), 1u);
  EXPECT_EQ(std::vector<uint32_t>(s.node_rank().begin(), s.node_rank().end()), (std::vector<uint32_t>{0, 1, 2, 3}));

  // Unschedulable again (3 GPUs left nowhere): the empty slot 2 is neither rejected nor counted.
  const Pod three = make_pod("q", 1000, 1024, 3, 1000);
  r = s.decide(three, state, rng);
  EXPECT_FALSE(r.scheduled());
  ASSERT_EQ(r.node_to_status.size(), 4u);
  EXPECT_FALSE(r.node_to_status.at(2).rejected());
  int32_t rejected = 0;
  for (int32_t c : r.node_to_status.counts()) rejected += c;
  EXPECT_EQ(rejected, 3);
}

// Three equal empty nodes; ties go to the lowest rank. Ranks {2, 1}: slot 1 wins. A node added at
// slot 2 needs a rank: without one the cycle throws; with rank 2 it loses the tie to slot 1, with 0
// it wins. set_node_rank ahead of the slots ranks the slots between as their ids. Without ranks
// (empty), the lowest NodeId wins, however many slots there are.
TEST(SchedulerNodeSlots, RanksGrowWithTheSlots) {
  ClusterState state({make_node("n0", 8000, 8192, 4), make_node("n1", 8000, 8192, 4)});
  Scheduler s(make_policy("packing", PolicyContext{}), {2, 1});
  GoRand rng(1);
  const Pod pod = make_pod("p", 1000, 1024, 1, 1000);
  EXPECT_EQ(s.decide(pod, state, rng).node, 1u);
  state.add_node(make_node("n2", 8000, 8192, 4));
  EXPECT_THROW(s.decide(pod, state, rng), std::invalid_argument);
  s.set_node_rank(2, 2);
  EXPECT_EQ(s.decide(pod, state, rng).node, 1u);
  s.set_node_rank(2, 0);
  EXPECT_EQ(s.decide(pod, state, rng).node, 2u);
  s.set_node_rank(5, 0);
  EXPECT_EQ(std::vector<uint32_t>(s.node_rank().begin(), s.node_rank().end()), (std::vector<uint32_t>{2, 1, 0, 3, 4, 0}));

  Scheduler by_id(make_policy("packing", PolicyContext{}), {});
  state.remove_node(0);
  EXPECT_EQ(by_id.decide(pod, state, rng).node, 1u);
  state.add_node(make_node("n3", 8000, 8192, 4), 4);
  EXPECT_EQ(by_id.decide(pod, state, rng).node, 1u);
  EXPECT_TRUE(by_id.node_rank().empty());
}

// The pod prefers zone a (weight 10). Slot 1 holds the zone-a node: chosen. Both nodes go; a zone-b
// node takes slot 1 and a zone-a node slot 0 (same slot count): the preference follows, slot 0.
TEST(SchedulerNodeSlots, NodePreferencesFollowTheSlots) {
  auto zone = [](std::string name, std::string z) {
    Node n = make_node(std::move(name), 8000, 8192, 4);
    n.labels.emplace_back("topology.kubernetes.io/zone", std::move(z));
    return n;
  };
  ClusterState state({zone("b0", "b"), zone("a1", "a")});
  Scheduler s(make_policy("packing", PolicyContext{}), {0, 1});
  GoRand rng(1);
  Pod pod = make_pod("p", 1000, 1024, 1, 1000);
  PreferredSchedulingTerm term;
  term.weight = 10;
  term.preference.match_expressions.push_back({"topology.kubernetes.io/zone", "In", {"a"}});
  pod.constraints.preferred_node_affinity.push_back(term);
  EXPECT_EQ(s.decide(pod, state, rng).node, 1u);

  state.remove_node(0);
  state.remove_node(1);
  EXPECT_EQ(state.add_node(zone("b1", "b"), 1), 1u);
  EXPECT_EQ(state.add_node(zone("a0", "a"), 0), 0u);
  EXPECT_EQ(s.decide(pod, state, rng).node, 0u);
}

// A scheduler and a state where nodes come and go in every cycle decide like a fresh scheduler
// built for each cycle (no cache), pod by pod.
TEST(SchedulerNodeSlots, ChurnDecidesLikeAColdScheduler) {
  ClusterState state({make_node("n0", 16000, 16384, 4), make_node("n1", 16000, 16384, 8)});
  Scheduler warm(make_policy("packing", PolicyContext{}), {});
  GoRand warm_rng(3), cold_rng(3), gen(11);
  auto pick = [&gen](size_t n) { return static_cast<int32_t>(gen.intn(static_cast<int64_t>(n))); };
  std::vector<std::pair<NodeId, Pod>> bound;
  int scheduled = 0, churned = 0;
  for (int i = 0; i < 400; ++i) {
    // Churn: drop a node without pods, or add one (in the lowest empty slot).
    if (pick(3) == 0) {
      const auto n = static_cast<NodeId>(pick(state.node_count()));
      if (state.has_node(n) && state.pods_on(n).empty()) {
        state.remove_node(n);
        ++churned;
      } else {
        state.add_node(make_node("a" + std::to_string(i), 16000, 16384, 4 * (1 + pick(2))));
        ++churned;
      }
    }
    // Completion of an earlier pod.
    if (!bound.empty() && pick(2) == 0) {
      const size_t k = static_cast<size_t>(pick(bound.size()));
      state.release(bound[k].first, bound[k].second);
      bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(k));
    }
    const int32_t gpus = 1 + pick(4);
    const Pod pod = make_pod("p" + std::to_string(i), 1000 * (1 + pick(4)), 1024, gpus, gpus == 1 ? 250 * (1 + pick(4)) : 1000);
    Scheduler cold(make_policy("packing", PolicyContext{}), {});
    const ScheduleResult c = cold.decide(pod, state, cold_rng);
    const ScheduleResult w = warm.decide(pod, state, warm_rng);
    ASSERT_EQ(w.node, c.node) << i;
    ASSERT_EQ(w.gpus, c.gpus) << i;
    ASSERT_EQ(w.node_to_status, c.node_to_status) << i;
    if (w.scheduled()) {
      Scheduler::assume(pod, state, w);
      bound.emplace_back(w.node, pod);
      ++scheduled;
    }
  }
  EXPECT_GT(scheduled, 100);
  EXPECT_GT(churned, 60);
}

}  // namespace
}  // namespace gpufleet::sched
