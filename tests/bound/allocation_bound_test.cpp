// The LP upper bound on allocation (src/bound/allocation_bound.h) must be valid: on small random
// instances whose exact optimum is found by exhaustive search, bound >= optimum >= what every
// policy achieves. Plus hand-computed cases for each family of constraints.
#include <gtest/gtest.h>

#include <functional>

#include "bound/allocation_bound.h"
#include "bound/gpu_packing_bound.h"
#include "bound/gpu_patterns.h"
#include "bound/work_conserving_bound.h"
#include "model/cluster_state.h"
#include "model/gpu_spec.h"
#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

double bound_of(const std::vector<Node>& nodes, const std::vector<Pod>& pods) {
  bound::AllocationBound b(nodes, pods);
  return b.bound_milli(pods.size());
}

TEST(AllocationBound, GpuMilliCapacity) {
  // One 2-GPU node, three whole-GPU pods: at most 2000 milli.
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 2)};
  const std::vector<Pod> pods{make_pod("a", 1000, 1, 1, 1000), make_pod("b", 1000, 1, 1, 1000), make_pod("c", 1000, 1, 1, 1000)};
  EXPECT_NEAR(bound_of(nodes, pods), 2000.0, 1e-6);
}

TEST(AllocationBound, TwoLargeFractionsCannotShareOneGpu) {
  // 600 + 600 > 1000: only one fits on the single GPU; the "more than half" cut gives exactly 600
  // (the plain GPU-milli capacity would allow 1000).
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 1)};
  const std::vector<Pod> pods{make_pod("a", 1000, 1, 1, 600), make_pod("b", 1000, 1, 1, 600)};
  EXPECT_NEAR(bound_of(nodes, pods), 600.0, 1e-6);
}

TEST(AllocationBound, DualFeasibleCutsThreeFortyPercentPods) {
  // Three 400-milli pods on one GPU: two fit (800). With k=2, u(0.4) = floor(1.2)/2 = 0.5, so at most
  // two such pods per GPU: bound 800, not 1000.
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 1)};
  const std::vector<Pod> pods{make_pod("a", 1000, 1, 1, 400), make_pod("b", 1000, 1, 1, 400), make_pod("c", 1000, 1, 1, 400)};
  EXPECT_NEAR(bound_of(nodes, pods), 800.0, 1e-6);
}

TEST(GpuPackingBound, PatternsKnowWhatCannotShareAGpu) {
  // One GPU, pods of 650 and 370 milli: together 1020, so the best placement takes the 650 alone.
  // Per-node LP: 370a + 650b <= 1000 with a, b <= 1 gives 1000 (every dual feasible cut allows both).
  // Packing LP: patterns {650} and {370, 370} on x + y <= 1 GPU place 650x + 370 min(1, 2y), best at
  // x = y = 1/2: 325 + 370 = 695. AllocationBound takes the smaller.
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 1)};
  const std::vector<Pod> pods{make_pod("a", 1000, 1, 1, 650), make_pod("b", 1000, 1, 1, 370)};
  bound::GpuPackingBound packing(nodes, pods);
  EXPECT_NEAR(packing.bound_milli(pods.size()), 695.0, 1e-6);
  EXPECT_NEAR(packing.bound_milli(1), 650.0, 1e-6);  // a prefix: the 650 alone
  EXPECT_NEAR(bound_of(nodes, pods), 695.0, 1e-6);
}

TEST(GpuPackingBound, GapsOnlySmallPodsCanFill) {
  // Two GPUs, four 470-milli pods and one of 160: 470 + 470 leaves 60, so the 160 cannot join; the
  // best placement is 1880. LP: with patterns {470, 470} (940) and {160 x 6} (960), only one 160 exists:
  // 940 (2 - z) + 960 z with 6z <= 1, so 1880 + 20/6 = 1883.33.
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 2)};
  std::vector<Pod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(make_pod("p" + std::to_string(i), 1000, 1, 1, 470));
  pods.push_back(make_pod("small", 1000, 1, 1, 160));
  bound::GpuPackingBound packing(nodes, pods);
  EXPECT_NEAR(packing.bound_milli(pods.size()), 1880.0 + 20.0 / 6.0, 1e-6);
}

TEST(GpuPackingBound, WholeAndMultiGpuPodsTakeWholeGpusAndModelsArePooled) {
  // Whole GPUs are items of 1000; a 2-GPU pod is two of them. Models and nodes are relaxed: a T4-only
  // pod counts on a V100 cluster here (the per-node LP is the one that refuses it).
  const std::vector<Node> nodes{make_node("n1", 64000, 65536, 2), make_node("n2", 64000, 65536, 1)};
  const std::vector<Pod> pods{make_pod("two", 1000, 1, 2, 1000), make_pod("t4", 1000, 1, 1, 500, "T4"),
                              make_pod("cpu", 1000, 1, 0, 0), make_pod("half", 1000, 1, 1, 500)};
  bound::GpuPackingBound packing(nodes, pods);
  EXPECT_NEAR(packing.bound_milli(pods.size()), 3000.0, 1e-6);
  EXPECT_NEAR(packing.bound_milli(2), 2500.0, 1e-6);
  EXPECT_NEAR(bound_of(nodes, pods), 2500.0, 1e-6);  // per-node LP: the T4 pod never fits
}

TEST(AllocationBound, CpuCapacityLimitsWholeGpuPods) {
  // Two 1-GPU pods of 6 vCPU on a node with 8 vCPU: LP allows 8/6 pods = 1333.3 milli (>= the true 1000).
  const std::vector<Node> nodes{make_node("n", 8000, 65536, 2)};
  const std::vector<Pod> pods{make_pod("a", 6000, 1, 1, 1000), make_pod("b", 6000, 1, 1, 1000)};
  EXPECT_NEAR(bound_of(nodes, pods), 1000.0 * 8.0 / 6.0, 1e-6);
}

TEST(AllocationBound, ModelConstraintAndOversizedPods) {
  // A T4-only pod on a V100 cluster, and a 4-GPU pod on 2-GPU nodes, can never be placed.
  const std::vector<Node> nodes{make_node("n1", 64000, 65536, 2, "V100M16"), make_node("n2", 64000, 65536, 2, "V100M16")};
  const std::vector<Pod> pods{make_pod("t4", 1000, 1, 1, 500, "T4"), make_pod("big", 1000, 1, 4, 1000),
                              make_pod("ok", 1000, 1, 1, 300)};
  EXPECT_NEAR(bound_of(nodes, pods), 300.0, 1e-6);
}

TEST(AllocationBound, PrefixesGrowAndWarmStartMatchesColdSolve) {
  const std::vector<Node> nodes{make_node("n1", 16000, 65536, 2), make_node("n2", 32000, 65536, 4, "T4")};
  std::vector<Pod> pods;
  for (int i = 0; i < 12; ++i) pods.push_back(make_pod("p" + std::to_string(i), 3000, 1024, 1, 250 + 75 * (i % 9)));
  bound::AllocationBound warm(nodes, pods);
  double prev = 0;
  for (size_t k = 0; k <= pods.size(); ++k) {
    const double b = warm.bound_milli(k);
    EXPECT_GE(b, prev - 1e-6);
    prev = b;
    const std::vector<Pod> prefix(pods.begin(), pods.begin() + static_cast<long>(k));
    if (!prefix.empty()) {
      EXPECT_NEAR(b, bound_of(nodes, prefix), 1e-6) << "prefix " << k;
    }
  }
}

// Exact optimum by exhaustive search: each pod is skipped or placed on some node and GPUs.
// GPUs with equal free milli are interchangeable, so only one of each free value is tried.
// `work_conserving`: a pod may be skipped only when it fits nowhere (the best work-conserving run).
int64_t brute_force_optimum(const std::vector<Node>& nodes, const std::vector<Pod>& pods, bool work_conserving = false) {
  ClusterState state(nodes);
  int64_t best = 0;
  std::function<void(size_t, int64_t)> dfs = [&](size_t i, int64_t allocated) {
    int64_t remaining = 0;
    for (size_t j = i; j < pods.size(); ++j) remaining += pods[j].gpu_request_milli();
    if (allocated + remaining <= best) return;
    if (i == pods.size()) {
      best = std::max(best, allocated);
      return;
    }
    const Pod& pod = pods[i];
    bool fits = false;
    for (NodeId n = 0; n < state.node_count(); ++n) {
      if (!pod.is_gpu_pod()) {
        if (state.can_allocate(n, pod, {})) {
          fits = true;
          state.allocate(n, pod, {});
          dfs(i + 1, allocated);
          state.release(n, pod);
        }
        continue;
      }
      if (!gpu_spec_allows(pod.gpu_spec, state.node(n).gpu_model)) continue;
      const auto free = state.gpu_free_milli(n);
      if (pod.is_share_pod()) {
        std::vector<int32_t> tried;
        for (int32_t g = 0; g < static_cast<int32_t>(free.size()); ++g) {
          const int32_t left = free[static_cast<size_t>(g)];
          if (left < pod.gpu_milli || std::find(tried.begin(), tried.end(), left) != tried.end()) continue;
          tried.push_back(left);
          const std::vector<int32_t> gpus{g};
          if (!state.can_allocate(n, pod, {.gpus = gpus})) continue;
          fits = true;
          state.allocate(n, pod, {.gpus = gpus});
          dfs(i + 1, allocated + pod.gpu_request_milli());
          state.release(n, pod);
        }
      } else {
        std::vector<int32_t> gpus;
        for (int32_t g = 0; g < static_cast<int32_t>(free.size()) && static_cast<int32_t>(gpus.size()) < pod.num_gpu; ++g)
          if (free[static_cast<size_t>(g)] == kGpuMilliPerGpu) gpus.push_back(g);
        if (static_cast<int32_t>(gpus.size()) == pod.num_gpu && state.can_allocate(n, pod, {.gpus = gpus})) {
          fits = true;
          state.allocate(n, pod, {.gpus = gpus});
          dfs(i + 1, allocated + pod.gpu_request_milli());
          state.release(n, pod);
        }
      }
    }
    if (!work_conserving || !fits) dfs(i + 1, allocated);  // leave the pod out
  };
  dfs(0, 0);
  return best;
}

// Runs every policy on `pods` in order (ties to the lowest node, seed `instance`): each must allocate
// at most `limit` gpu_milli.
void expect_every_policy_at_most(const std::vector<Node>& nodes, const std::vector<Pod>& pods, int64_t limit, int instance) {
  ClusterState probe(nodes);
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(pods), probe.gpu_models());
  for (const auto& name : sched::policy_names()) {
    ClusterState state(nodes);
    std::vector<uint32_t> ranks(nodes.size());
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<uint32_t>(i);
    sched::Scheduler scheduler(sched::make_policy(name, {frag, state.gpu_models(), &state}), ranks);
    GoRand policy_rng(instance);
    for (const Pod& pod : pods) scheduler.schedule_one(pod, state, policy_rng);
    EXPECT_LE(state.gpu_used_milli(), limit) << name << " instance " << instance;
  }
}

TEST(AllocationBound, ValidOnRandomSmallInstances) {
  GoRand rng(2026);
  const std::vector<std::string> models{"T4", "V100M16"};
  int tight = 0, packing_binds = 0;
  for (int instance = 0; instance < 150; ++instance) {
    std::vector<Node> nodes;
    const int node_count = 1 + static_cast<int>(rng.intn(3));
    for (int n = 0; n < node_count; ++n)
      nodes.push_back(make_node("n" + std::to_string(n), 4000 + 2000 * rng.intn(6), 8192 + 4096 * rng.intn(4),
                                1 + static_cast<int32_t>(rng.intn(4)), models[static_cast<size_t>(rng.intn(2))]));
    std::vector<Pod> pods;
    const int pod_count = 3 + static_cast<int>(rng.intn(5));
    for (int p = 0; p < pod_count; ++p) {
      const int64_t cpu = 1000 + 1000 * rng.intn(6), mem = 2048 * (1 + rng.intn(4));
      const std::string spec = rng.intn(5) == 0 ? models[static_cast<size_t>(rng.intn(2))] : "";
      switch (rng.intn(4)) {
        case 0: pods.push_back(make_pod("p" + std::to_string(p), cpu, mem, 0, 0)); break;
        case 1: pods.push_back(make_pod("p" + std::to_string(p), cpu, mem, 1, 1000, spec)); break;
        case 2: pods.push_back(make_pod("p" + std::to_string(p), cpu, mem, 2, 1000, spec)); break;
        default: pods.push_back(make_pod("p" + std::to_string(p), cpu, mem, 1, static_cast<int32_t>(100 + 50 * rng.intn(18)), spec)); break;
      }
    }
    const double bound = bound_of(nodes, pods);
    const int64_t optimum = brute_force_optimum(nodes, pods);
    std::string desc;
    for (const auto& n : nodes) desc += " node(" + std::to_string(n.cpu_milli) + "," + std::to_string(n.memory_bytes) + "," + std::to_string(n.gpu_count) + "," + n.gpu_model + ")";
    for (const auto& p : pods) desc += " pod(" + std::to_string(p.cpu_milli) + "," + std::to_string(p.memory_bytes) + "," + std::to_string(p.num_gpu) + "x" + std::to_string(p.gpu_milli) + "," + p.gpu_spec + ")";
    ASSERT_GE(bound + 1e-6, static_cast<double>(optimum)) << "instance " << instance << desc;
    bound::GpuPackingBound packing(nodes, pods);  // valid on its own too; AllocationBound takes the min
    const double packing_milli = packing.bound_milli(pods.size());
    ASSERT_GE(packing_milli + 1e-6, static_cast<double>(optimum)) << "packing, instance " << instance << desc;
    packing_binds += packing_milli <= bound + 1e-6;
    tight += std::abs(bound - static_cast<double>(optimum)) < 1e-6;

    expect_every_policy_at_most(nodes, pods, optimum, instance);
  }
  // The bound is not vacuous: on most tiny instances it is exact.
  EXPECT_GT(tight, 75);
  EXPECT_GT(packing_binds, 45);  // the packing bound decides (or ties) on many of them: 91 of 150 when written
}

TEST(WorkConservingBound, A810PodThatFitsCostsAWholeGpuPod) {
  // Two GPUs; an 810-milli pod arrives, then two whole-GPU pods. A scheduler that places what fits
  // puts the 810 on one GPU, a whole pod on the other, and the last one fails: 1810. Refusing the 810
  // would allow 2000, which is what AllocationBound says. Intervals of X (no GPU free from then on):
  // [0,1] fails both whole pods (<= 810), [1,2] and [2,3] place the 810 on its own GPU (<= 1810).
  const std::vector<Node> nodes{make_node("n", 64000, 65536, 2)};
  const std::vector<Pod> pods{make_pod("frac", 1000, 1, 1, 810), make_pod("w1", 1000, 1, 1, 1000),
                              make_pod("w2", 1000, 1, 1, 1000)};
  EXPECT_NEAR(bound::work_conserving_bound_milli(2, pods, pods.size()), 1810.0, 1e-6);
  EXPECT_NEAR(bound_of(nodes, pods), 2000.0, 1e-6);
  EXPECT_EQ(brute_force_optimum(nodes, pods, true), 1810);
  EXPECT_NEAR(bound::work_conserving_bound_milli(2, pods, 1), 810.0, 1e-6);  // a prefix
  // With a gpu_spec the 810 may fail somewhere else (its model could be full), so it is optional.
  std::vector<Pod> pinned = pods;
  pinned[0].gpu_spec = "V100M16";
  EXPECT_NEAR(bound::work_conserving_bound_milli(2, pinned, pinned.size()), 2000.0, 1e-6);
  EXPECT_THROW(bound::work_conserving_bound_milli(-1, pods, 3), std::invalid_argument);
  EXPECT_NEAR(bound::work_conserving_bound_milli(2, {}, 0), 0.0, 1e-9);
}

TEST(WorkConservingBound, ValidOnRandomSmallInstances) {
  // CPU and memory ample (the bound's setting): bound >= the best work-conserving run (exhaustive
  // search) >= what each policy achieves, since every policy places what fits.
  GoRand rng(2027);
  const std::vector<std::string> models{"T4", "V100M16"};
  const int32_t sizes[] = {160, 230, 320, 370, 470, 550, 650, 810};
  int tighter = 0;
  for (int instance = 0; instance < 150; ++instance) {
    std::vector<Node> nodes;
    const int node_count = 1 + static_cast<int>(rng.intn(3));
    int64_t gpus = 0;
    for (int n = 0; n < node_count; ++n) {
      nodes.push_back(make_node("n" + std::to_string(n), 256000, 1 << 20, 1 + static_cast<int32_t>(rng.intn(3)),
                                models[static_cast<size_t>(rng.intn(2))]));
      gpus += nodes.back().gpu_count;
    }
    std::vector<Pod> pods;
    const int pod_count = 3 + static_cast<int>(rng.intn(5));
    for (int p = 0; p < pod_count; ++p) {
      const std::string spec = rng.intn(6) == 0 ? models[static_cast<size_t>(rng.intn(2))] : "";
      const std::string name = "p" + std::to_string(p);
      switch (rng.intn(3)) {
        case 0: pods.push_back(make_pod(name, 1000, 1024, 1 + static_cast<int32_t>(rng.intn(2)), 1000, spec)); break;
        default: pods.push_back(make_pod(name, 1000, 1024, 1, sizes[rng.intn(8)], spec)); break;
      }
    }
    const double bound = bound::work_conserving_bound_milli(gpus, pods, pods.size());
    const int64_t best = brute_force_optimum(nodes, pods, true);
    ASSERT_GE(bound + 1e-6, static_cast<double>(best)) << "instance " << instance;
    tighter += bound < bound_of(nodes, pods) - 1e-6;
    expect_every_policy_at_most(nodes, pods, best, instance);
  }
  // Not vacuous: on some instances it is below the bound for every placement.
  EXPECT_GT(tighter, 20);  // 39 of 150 when written
}

TEST(GpuPackingBound, SizeClassesKeepBothBoundsValidForAnyMilli) {
  // Patterns are built from sizes rounded down to 10 milli (size_class_milli), so 655 + 346 = 1001
  // "fits" one GPU in the LP: looser, but still above what any placement reaches. Random sizes
  // 1..999 against exhaustive search, for the packing LP and the work-conserving bound.
  EXPECT_EQ(bound::size_class_milli(655), 650);
  EXPECT_EQ(bound::size_class_milli(7), 7);
  EXPECT_EQ(bound::size_class_milli(1000), 1000);
  const std::vector<Node> one{make_node("n", 64000, 65536, 1)};
  const std::vector<Pod> pair{make_pod("a", 1000, 1, 1, 655), make_pod("b", 1000, 1, 1, 346)};
  bound::GpuPackingBound packing(one, pair);
  EXPECT_NEAR(packing.bound_milli(pair.size()), 1001.0, 1e-6);
  EXPECT_EQ(brute_force_optimum(one, pair), 655);
  GoRand rng(2028);
  for (int instance = 0; instance < 100; ++instance) {
    std::vector<Node> nodes;
    int64_t gpus = 0;
    const int node_count = 1 + static_cast<int>(rng.intn(2));
    for (int n = 0; n < node_count; ++n) {
      nodes.push_back(make_node("n" + std::to_string(n), 256000, 1 << 20, 1 + static_cast<int32_t>(rng.intn(3))));
      gpus += nodes.back().gpu_count;
    }
    std::vector<Pod> pods;
    const int pod_count = 3 + static_cast<int>(rng.intn(4));
    for (int p = 0; p < pod_count; ++p)
      pods.push_back(make_pod("p" + std::to_string(p), 1000, 1024, 1, 1 + static_cast<int32_t>(rng.intn(999))));
    const int64_t optimum = brute_force_optimum(nodes, pods);
    bound::GpuPackingBound b(nodes, pods);
    EXPECT_GE(b.bound_milli(pods.size()) + 1e-6, static_cast<double>(optimum)) << "instance " << instance;
    EXPECT_GE(bound::work_conserving_bound_milli(gpus, pods, pods.size()) + 1e-6,
              static_cast<double>(brute_force_optimum(nodes, pods, true)))
        << "instance " << instance;
  }
}

}  // namespace
}  // namespace gpufleet
