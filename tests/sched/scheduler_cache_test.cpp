// The Scheduler's per-(pod shape, node) filter/score cache must not change any decision: a scheduler
// kept warm over a whole run decides exactly like a fresh (cold) scheduler built for every pod.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"
#include "synthetic/openb.h"

namespace gpufleet::sched {
namespace {

// 40 nodes spread over the whole synthetic openb list (every 30th: G2, T4, P100, G3, V100M16, ...),
// so the subset mixes GPU counts, models and CPU sizes.
std::vector<Node> subset_nodes() {
  const auto all = synthetic::synthetic_openb_nodes();
  std::vector<Node> out;
  for (size_t i = 0; i < 40; ++i) out.push_back(all.at(i * 30));
  return out;
}

std::vector<uint32_t> random_ranks(size_t n, int64_t seed) {
  GoRand rng(seed);
  std::vector<uint32_t> ranks;
  for (int r : rng.perm(static_cast<int>(n))) ranks.push_back(static_cast<uint32_t>(r));
  return ranks;
}

struct Placement {
  size_t pod;
  NodeId node;
  std::vector<int32_t> gpus;
  bool live = true;
};

class SchedulerCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerCacheTest, WarmCacheDecidesLikeColdScheduler) {
  const std::string name = GetParam();
  const auto pods = synthetic::synthetic_openb_pods(300, 42);
  ClusterState warm_state(subset_nodes());
  ClusterState cold_state(subset_nodes());
  ASSERT_GT(warm_state.gpu_models().size(), 3u);  // the subset really mixes models

  PolicyContext ctx;
  ctx.frag = std::make_shared<FragmentationMeasure>(typical_pod_mix(pods), warm_state.gpu_models());
  ctx.gpu_models = warm_state.gpu_models();
  ctx.cluster = &warm_state;
  const auto ranks = random_ranks(warm_state.node_count(), 5);
  Scheduler warm(make_policy(name, ctx), ranks);
  GoRand warm_rng(2024);
  GoRand cold_rng(2024);  // same stream: Random draws identically in both

  std::vector<Placement> placed;
  size_t failed = 0;
  size_t released = 0;
  std::set<NodeId> used_nodes;
  for (size_t i = 0; i < pods.size(); ++i) {
    SCOPED_TRACE(name + " pod " + std::to_string(i));
    const Pod& pod = pods[i];
    const ScheduleResult w = warm.decide(pod, warm_state, warm_rng);
    Scheduler cold(make_policy(name, ctx), ranks);
    const ScheduleResult c = cold.decide(pod, cold_state, cold_rng);
    ASSERT_EQ(w.node, c.node);
    ASSERT_EQ(w.gpus, c.gpus);
    ASSERT_EQ(w.score, c.score);
    ASSERT_EQ(w.node_to_status, c.node_to_status);
    if (w.scheduled()) {
      ASSERT_EQ(w.gpus.size(), pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0u);
      warm_state.allocate(w.node, pod, {.gpus = w.gpus});
      cold_state.allocate(c.node, pod, {.gpus = c.gpus});
      placed.push_back({i, w.node, w.gpus});
      used_nodes.insert(w.node);
    } else {
      ++failed;
    }
    // Every 25th pod, release the oldest live placement from both states (versions move on
    // release too, so the warm cache must notice freed capacity).
    if (i % 25 == 24) {
      for (Placement& p : placed) {
        if (!p.live) continue;
        warm_state.release(p.node, pods[p.pod]);
        cold_state.release(p.node, pods[p.pod]);
        p.live = false;
        ++released;
        break;
      }
    }
  }
  EXPECT_EQ(placed.size() + failed, pods.size());
  EXPECT_GT(placed.size(), 100u);
  EXPECT_GT(used_nodes.size(), 5u);
  EXPECT_EQ(released, 12u);

  // Invariants, and the state equals the sum of the live placements.
  std::vector<int64_t> cpu(warm_state.node_count()), mem(warm_state.node_count());
  std::vector<int32_t> npods(warm_state.node_count());
  std::map<std::pair<NodeId, int32_t>, int32_t> gpu_used;
  for (const Placement& p : placed) {
    if (!p.live) continue;
    const Pod& pod = pods[p.pod];
    cpu[p.node] += pod.cpu_milli;
    mem[p.node] += pod.memory_bytes;
    ++npods[p.node];
    for (int32_t g : p.gpus) gpu_used[{p.node, g}] += pod.gpu_milli;
  }
  int64_t total_gpu_used = 0;
  for (NodeId n = 0; n < warm_state.node_count(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_GE(warm_state.cpu_free_milli(n), 0);
    EXPECT_GE(warm_state.memory_free_bytes(n), 0);
    EXPECT_EQ(warm_state.cpu_used_milli(n), cpu[n]);
    EXPECT_EQ(warm_state.memory_free_bytes(n), warm_state.node(n).memory_bytes - mem[n]);
    EXPECT_EQ(warm_state.pod_count(n), npods[n]);
    const auto free = warm_state.gpu_free_milli(n);
    int32_t sum = 0;
    for (size_t g = 0; g < free.size(); ++g) {
      EXPECT_GE(free[g], 0);
      EXPECT_LE(free[g], 1000);
      auto it = gpu_used.find({n, static_cast<int32_t>(g)});
      EXPECT_EQ(free[g], 1000 - (it == gpu_used.end() ? 0 : it->second));
      sum += free[g];
      EXPECT_EQ(free[g], cold_state.gpu_free_milli(n)[g]);
    }
    EXPECT_EQ(warm_state.gpu_free_milli_total(n), sum);
    total_gpu_used += static_cast<int64_t>(free.size()) * 1000 - sum;
  }
  EXPECT_EQ(warm_state.gpu_used_milli(), total_gpu_used);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, SchedulerCacheTest, ::testing::ValuesIn(policy_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;  // gtest names allow only [A-Za-z0-9_]
                           for (char& c : name)
                             if (c == '-' || c == '.') c = '_';
                           return name;
                         });

// The same scheduler deciding one shape twice on an unchanged state gives the same answer, and a
// change to one node (outside the scheduler) is seen on the next call.
// Two nodes, 4 GPUs each, cpu 32000; packing; share pod {1000, 1x500}. Both empty: max(33-4,4) = 29
// each, tie -> node 0 (rank). Put a {0, 1x300} pod on node 1 GPU 2 (700 free): node 1 now scores
// 100 - 70/10 = 93 -> node 1, GPU 2.  Release it: back to node 0, score 29.
TEST(SchedulerCacheBasicsTest, SeesChangesMadeOutsideTheScheduler) {
  using gpufleet::testing::make_node;
  using gpufleet::testing::make_pod;
  ClusterState state({make_node("a", 32000, 65536, 4), make_node("b", 32000, 65536, 4)});
  Scheduler s(make_policy("packing", PolicyContext{}), {0, 1});
  GoRand rng(1);
  const Pod pod = make_pod("p", 1000, 1000, 1, 500);
  auto r = s.decide(pod, state, rng);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(r.score, 29);
  r = s.decide(pod, state, rng);
  EXPECT_EQ(r.node, 0u);
  const Pod filler = make_pod("f", 0, 0, 1, 300);
  state.allocate(1, filler, {.gpus = {2}});
  r = s.decide(pod, state, rng);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.gpus, std::vector<int32_t>{2});
  EXPECT_EQ(r.score, 93);
  state.release(1, filler);
  r = s.decide(pod, state, rng);
  EXPECT_EQ(r.node, 0u);
  EXPECT_EQ(r.score, 29);
}

}  // namespace
}  // namespace gpufleet::sched
