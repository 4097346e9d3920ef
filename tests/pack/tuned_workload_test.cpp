// build_tuned_workload / draw_node_ranks: the FGD simulator's workload tuning and node ranks.
// Expected name lists were produced by running the documented protocol (pack_experiment.h steps 1-4)
// with Go 1.19 math/rand, not by gpufleet.
#include "pack/pack_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace gpufleet::pack {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

// Five pods, deliberately not in name order: total GPU request 500 + 0 + 2000 + 1000 + 250 = 3750.
std::vector<Pod> small_pods() {
  return {make_pod("c", 8000, 16384, 2, 1000), make_pod("a", 1000, 2048, 1, 500, "V100M16"), make_pod("e", 500, 512, 1, 250),
          make_pod("b", 2000, 4096, 0, 0), make_pod("d", 4000, 8192, 1, 1000)};
}

std::vector<std::string> names(const std::vector<Pod>& pods) {
  std::vector<std::string> out;
  for (const Pod& p : pods) out.push_back(p.name);
  return out;
}

int64_t total_gpu(const std::vector<Pod>& pods) {
  int64_t t = 0;
  for (const Pod& p : pods) t += p.gpu_request_milli();
  return t;
}

std::vector<Pod> tuned(const std::vector<Pod>& pods, int64_t capacity, double tune, int64_t seed) {
  GoRand rng(seed);
  return build_tuned_workload(pods, capacity, tune, rng);
}

TEST(TunedWorkload, MatchesGoForKnownSeeds) {
  const std::vector<Pod> pods = small_pods();
  EXPECT_EQ(names(tuned(pods, 8000, 1.0, 1)),
            (std::vector<std::string>{"d", "a", "b", "c", "e", "d-tuned-0", "a-tuned-1", "a-tuned-2", "b-tuned-3", "a-tuned-4",
                                      "e-tuned-5", "b-tuned-6", "c-tuned-7"}));
  EXPECT_EQ(total_gpu(tuned(pods, 8000, 1.0, 1)), 8500);
  EXPECT_EQ(names(tuned(pods, 8000, 1.0, 2)),
            (std::vector<std::string>{"c", "e", "d", "a", "b", "e-tuned-0", "a-tuned-1", "e-tuned-2", "b-tuned-3", "b-tuned-4",
                                      "a-tuned-5", "e-tuned-6", "a-tuned-7", "c-tuned-8", "b-tuned-9"}));
  EXPECT_EQ(total_gpu(tuned(pods, 8000, 1.0, 2)), 8000);
  EXPECT_EQ(names(tuned(pods, 8000, 1.0, 42)),
            (std::vector<std::string>{"b", "d", "e", "c", "a", "a-tuned-0", "c-tuned-1", "b-tuned-2", "d-tuned-3"}));
  EXPECT_EQ(total_gpu(tuned(pods, 8000, 1.0, 42)), 7250);
}

// Replays the documented draws on a second generator: one Int, the Shuffle, one Intn per clone,
// then the discarded draw that ended the loop.
TEST(TunedWorkload, TuneUpInvariants) {
  const std::vector<Pod> pods = small_pods();
  std::vector<Pod> sorted = pods;
  std::sort(sorted.begin(), sorted.end(), [](const Pod& a, const Pod& b) { return a.name < b.name; });
  const size_t n = pods.size();
  for (int64_t seed : {1, 2, 3, 42, 1000, -9}) {
    for (double tune : {0.6, 1.0, 1.3, 2.5}) {
      const int64_t capacity = 8000;
      const double target = tune * static_cast<double>(capacity);
      const std::vector<Pod> out = tuned(pods, capacity, tune, seed);
      SCOPED_TRACE("seed " + std::to_string(seed) + " tune " + std::to_string(tune));
      ASSERT_GE(out.size(), n);
      const int64_t total = total_gpu(out);
      EXPECT_LE(static_cast<double>(total), target + 1000.0 * 8);

      // The first N entries are a permutation of the originals, unchanged.
      std::map<std::string, const Pod*> by_name;
      for (const Pod& p : sorted) by_name[p.name] = &p;
      std::vector<std::string> head;
      for (size_t i = 0; i < n; ++i) {
        head.push_back(out[i].name);
        ASSERT_TRUE(by_name.count(out[i].name)) << out[i].name;
        EXPECT_EQ(out[i].cpu_milli, by_name[out[i].name]->cpu_milli);
        EXPECT_EQ(out[i].gpu_milli, by_name[out[i].name]->gpu_milli);
      }
      std::sort(head.begin(), head.end());
      EXPECT_EQ(head, names(sorted));

      GoRand replay(seed);
      replay.int_();
      replay.shuffle(static_cast<int64_t>(n), [](int64_t, int64_t) {});
      int64_t running = 3750;
      for (size_t i = n; i < out.size(); ++i) {
        const Pod& src = sorted[static_cast<size_t>(replay.intn(static_cast<int64_t>(n)))];
        const Pod& clone = out[i];
        EXPECT_EQ(clone.name, src.name + "-tuned-" + std::to_string(i - n));
        EXPECT_EQ(clone.cpu_milli, src.cpu_milli);
        EXPECT_EQ(clone.memory_bytes, src.memory_bytes);
        EXPECT_EQ(clone.num_gpu, src.num_gpu);
        EXPECT_EQ(clone.gpu_milli, src.gpu_milli);
        EXPECT_EQ(clone.gpu_spec, src.gpu_spec);
        // A clone is only added while the draw's per-GPU milli keeps the total within the target.
        EXPECT_LE(static_cast<double>(running + src.gpu_milli), target);
        running += src.gpu_request_milli();
      }
      EXPECT_EQ(running, total);
      // The loop stopped exactly because the next draw would have passed the target.
      const Pod& stop = sorted[static_cast<size_t>(replay.intn(static_cast<int64_t>(n)))];
      EXPECT_GT(static_cast<double>(total + stop.gpu_milli), target);
    }
  }
}

TEST(TunedWorkload, MultiGpuCloneMayOvershootByLessThanEightGpus) {
  // The stop test uses per-GPU milli: 8100 + 1000 <= 16000 admits an 8-GPU clone, ending at 16100.
  const std::vector<Pod> pods{make_pod("s", 100, 100, 1, 100), make_pod("m", 1000, 1000, 8, 1000)};
  const std::vector<Pod> out = tuned(pods, 16000, 1.0, 3);
  EXPECT_EQ(names(out), (std::vector<std::string>{"m", "s", "m-tuned-0"}));
  EXPECT_EQ(total_gpu(out), 16100);
  EXPECT_LE(total_gpu(out), 16000 + 8000);
}

TEST(TunedWorkload, SameSeedSameListDifferentSeedDifferentOrder) {
  const std::vector<Pod> pods = small_pods();
  const std::vector<Pod> a = tuned(pods, 8000, 1.3, 77);
  const std::vector<Pod> b = tuned(pods, 8000, 1.3, 77);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].gpu_request_milli(), b[i].gpu_request_milli());
  }
  const std::vector<Pod> s1 = tuned(pods, 8000, 1.0, 1);
  const std::vector<Pod> s42 = tuned(pods, 8000, 1.0, 42);
  const std::vector<std::string> n1 = names(s1), n42 = names(s42);
  ASSERT_GE(n1.size(), 5u);
  ASSERT_GE(n42.size(), 5u);
  EXPECT_NE(std::vector<std::string>(n1.begin(), n1.begin() + 5), std::vector<std::string>(n42.begin(), n42.begin() + 5));
}

TEST(TunedWorkload, InputOrderDoesNotMatter) {
  // Pods are sorted by name before the shuffle, so any input order yields the same workload.
  std::vector<Pod> pods = small_pods();
  const std::vector<std::string> want = names(tuned(pods, 8000, 1.0, 5));
  std::reverse(pods.begin(), pods.end());
  EXPECT_EQ(names(tuned(pods, 8000, 1.0, 5)), want);
}

TEST(TunedWorkload, TuneDownRemovesPods) {
  const std::vector<Pod> pods = small_pods();  // 3750 requested; target 0.25 x 8000 = 2000
  const std::vector<Pod> s1 = tuned(pods, 8000, 0.25, 1);
  EXPECT_EQ(names(s1), (std::vector<std::string>{"d", "a", "b", "e"}));
  EXPECT_EQ(total_gpu(s1), 1750);
  const std::vector<Pod> s42 = tuned(pods, 8000, 0.25, 42);
  EXPECT_EQ(names(s42), (std::vector<std::string>{"c"}));
  EXPECT_EQ(total_gpu(s42), 2000);
  for (int64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<Pod> out = tuned(pods, 8000, 0.25, seed);
    EXPECT_LE(total_gpu(out), 2000) << seed;
    EXPECT_LT(out.size(), pods.size()) << seed;
    for (const Pod& p : out) EXPECT_EQ(p.name.find("-tuned-"), std::string::npos) << seed;
  }
}

TEST(TunedWorkload, ExactTargetIsLeftAlone) {
  // 3750 == 0.46875 x 8000: neither tuned up nor down, just shuffled.
  const std::vector<Pod> pods = small_pods();
  const std::vector<Pod> out = tuned(pods, 8000, 0.46875, 1);
  EXPECT_EQ(names(out), (std::vector<std::string>{"d", "a", "b", "c", "e"}));
}

TEST(TunedWorkload, EmptyPodList) {
  EXPECT_TRUE(tuned({}, 8000, 1.0, 1).empty());
}

TEST(TunedWorkload, CpuOnlyPodsDoNotLoopForever) {
  // No draw can ever reach the target: the workload is returned as is (shuffled) instead of
  // cloning CPU-only pods forever.
  const std::vector<Pod> pods{make_pod("x", 100, 100, 0, 0), make_pod("y", 200, 200, 0, 0)};
  const std::vector<Pod> out = tuned(pods, 8000, 1.0, 1);
  ASSERT_EQ(out.size(), 2u);
  std::vector<std::string> got = names(out);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"x", "y"}));
}

TEST(NodeRanks, KnownSeedAndPermutation) {
  // Nodes sorted by name (n0, n1, n2, n3) take Go's Perm(4) for seed 5: 3, 2, 0, 1.
  const std::vector<Node> nodes{make_node("n3", 1000, 1000, 1), make_node("n1", 1000, 1000, 1), make_node("n2", 1000, 1000, 1),
                                make_node("n0", 1000, 1000, 1)};
  GoRand rng(5);
  const std::vector<uint32_t> rank = draw_node_ranks(nodes, rng);
  EXPECT_EQ(rank, (std::vector<uint32_t>{1, 2, 0, 3}));  // rank[index of n3]=1, n1=2, n2=0, n0=3

  for (int64_t seed : {1, 2, 3, 4}) {
    std::vector<Node> many;
    for (int i = 0; i < 37; ++i) many.push_back(make_node("node-" + std::to_string((i * 17) % 37), 1000, 1000, 1));
    GoRand r(seed);
    std::vector<uint32_t> ranks = draw_node_ranks(many, r);
    ASSERT_EQ(ranks.size(), many.size());
    std::sort(ranks.begin(), ranks.end());
    for (uint32_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(ranks[i], i) << seed;
  }
  GoRand empty_rng(1);
  EXPECT_TRUE(draw_node_ranks({}, empty_rng).empty());
}

TEST(NodeRanks, ContinuesTheWorkloadStream) {
  // After build_tuned_workload (one Int, Shuffle of 5, no tuning), Go's Perm(4) on seed 5 gives 3, 0, 1, 2.
  const std::vector<Node> nodes{make_node("a", 1000, 1000, 1), make_node("b", 1000, 1000, 1), make_node("c", 1000, 1000, 1),
                                make_node("d", 1000, 1000, 1)};
  const std::vector<Pod> pods = small_pods();
  GoRand rng(5);
  build_tuned_workload(pods, 8000, 0.46875, rng);  // total == target: no tune draws
  EXPECT_EQ(draw_node_ranks(nodes, rng), (std::vector<uint32_t>{3, 0, 1, 2}));
}

TEST(PackBounds, SameAsTheBoundsOfEveryRunOfThatSeed) {
  // `pack` computes the bounds once per seed and gives them to every policy's run: they must be what
  // each run would compute itself, whatever its policy placed.
  const std::vector<Node> nodes{make_node("n1", 32000, 131072, 4), make_node("n2", 16000, 65536, 2, "T4")};
  std::vector<Pod> pods;
  for (int i = 0; i < 6; ++i) pods.push_back(make_pod("p" + std::to_string(i), 1000, 1024, 1, 150 + 130 * i));
  pods.push_back(make_pod("whole", 1000, 1024, 1, 1000));
  const PackBounds shared = pack_bounds(nodes, pods, 7, 1.3);
  ASSERT_EQ(shared.bound_pct.size(), static_cast<size_t>(kCurveBuckets));
  ASSERT_FALSE(std::isnan(shared.bound_pct[100]));
  ASSERT_FALSE(std::isnan(shared.work_conserving_bound_pct_at_100));
  EXPECT_LE(shared.work_conserving_bound_pct_at_100, shared.bound_pct[100]);
  for (const std::string policy : {"random", "bestfit", "gpufleet"}) {
    const PackRun run = run_pack(nodes, pods, policy, 7, 1.3, true);
    for (size_t x = 0; x < shared.bound_pct.size(); ++x) {
      if (std::isnan(run.bound_pct[x])) {
        EXPECT_TRUE(std::isnan(shared.bound_pct[x])) << policy << " " << x;
      } else {
        EXPECT_EQ(run.bound_pct[x], shared.bound_pct[x]) << policy << " " << x;
      }
      if (!std::isnan(run.allocation_pct[x])) {
        EXPECT_LE(run.allocation_pct[x], run.bound_pct[x]) << policy << " " << x;
      }
    }
    EXPECT_EQ(run.work_conserving_bound_pct_at_100, shared.work_conserving_bound_pct_at_100) << policy;
    EXPECT_LE(run.allocation_pct[100], run.work_conserving_bound_pct_at_100) << policy;
  }
  EXPECT_THROW(pack_bounds(nodes, pods, 7, 0.0), std::invalid_argument);
}

TEST(PackGrid, TaskCount) {
  EXPECT_EQ(pack_grid_tasks(7, 10, true), 80u);   // 70 runs + 10 seeds' bounds
  EXPECT_EQ(pack_grid_tasks(7, 10, false), 70u);
  EXPECT_EQ(pack_grid_tasks(1, 1, true), 2u);
  EXPECT_EQ(pack_grid_tasks(0, 3, true), 3u);
}

TEST(PackGrid, PolicyMajorRunsWithTheirSeedsBoundsOnAnyThreadCount) {
  const std::vector<Node> nodes{make_node("n1", 32000, 131072, 4), make_node("n2", 16000, 65536, 2, "T4")};
  std::vector<Pod> pods;
  for (int i = 0; i < 6; ++i) pods.push_back(make_pod("p" + std::to_string(i), 1000, 1024, 1, 150 + 130 * i));
  pods.push_back(make_pod("whole", 1000, 1024, 1, 1000));  // as in PackBounds above: bucket 100 is not empty
  const std::vector<std::string> policies{"bestfit", "random"};
  const std::vector<int64_t> seeds{7, 8};
  for (int threads : {1, 3}) {
    const std::vector<PackRun> runs = run_pack_grid(nodes, pods, policies, seeds, 1.3, true, threads);
    ASSERT_EQ(runs.size(), 4u);
    const std::vector<std::pair<std::string, int64_t>> order{{"bestfit", 7}, {"bestfit", 8}, {"random", 7}, {"random", 8}};
    for (size_t i = 0; i < runs.size(); ++i) {
      EXPECT_EQ(runs[i].policy, order[i].first) << i;
      EXPECT_EQ(runs[i].seed, order[i].second) << i;
      const PackRun alone = run_pack(nodes, pods, order[i].first, order[i].second, 1.3, true);
      ASSERT_EQ(runs[i].allocation_pct.size(), alone.allocation_pct.size());
      for (size_t x = 0; x < alone.allocation_pct.size(); ++x) {
        if (std::isnan(alone.allocation_pct[x])) {
          EXPECT_TRUE(std::isnan(runs[i].allocation_pct[x])) << i << " " << x;
        } else {
          EXPECT_EQ(runs[i].allocation_pct[x], alone.allocation_pct[x]) << i << " " << x;
        }
        if (std::isnan(alone.bound_pct[x])) {
          EXPECT_TRUE(std::isnan(runs[i].bound_pct[x])) << i << " " << x;
        } else {
          EXPECT_EQ(runs[i].bound_pct[x], alone.bound_pct[x]) << i << " " << x;
        }
      }
      if (std::isnan(alone.work_conserving_bound_pct_at_100)) {
        EXPECT_TRUE(std::isnan(runs[i].work_conserving_bound_pct_at_100)) << i;
      } else {
        EXPECT_EQ(runs[i].work_conserving_bound_pct_at_100, alone.work_conserving_bound_pct_at_100) << i;
      }
      EXPECT_EQ(runs[i].failed_pods, alone.failed_pods) << i;
    }
    EXPECT_FALSE(std::isnan(runs[0].work_conserving_bound_pct_at_100));  // seed 7: see PackBounds above
    // Without the bounds the runs carry none.
    const std::vector<PackRun> plain = run_pack_grid(nodes, pods, {"bestfit"}, {7}, 1.3, false, threads);
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_TRUE(plain[0].bound_pct.empty());
    EXPECT_TRUE(std::isnan(plain[0].work_conserving_bound_pct_at_100));
  }
  EXPECT_THROW(run_pack_grid(nodes, pods, {"no-such-policy"}, {7}, 1.3, false, 2), std::exception);
}

}  // namespace
}  // namespace gpufleet::pack
