// The online typical-pod estimate, the fgd-online policy, and the gpufleet policy in a warm scheduler.
#include <gtest/gtest.h>

#include "model/cluster_state.h"
#include "sched/gpu/fragmentation.h"
#include "sched/plugins/fgd_online_score.h"
#include "sched/plugins/fgd_score.h"
#include "sched/gpu/pod_mix_estimator.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

std::vector<Pod> sample_pods() {
  return {make_pod("a", 4000, 1024, 1, 500), make_pod("b", 4000, 1024, 1, 500), make_pod("c", 8000, 2048, 1, 1000),
          make_pod("d", 2000, 512, 0, 0),    make_pod("e", 4000, 1024, 1, 250), make_pod("f", 16000, 4096, 2, 1000),
          make_pod("g", 4000, 1024, 1, 500), make_pod("h", 8000, 2048, 1, 1000)};
}

TEST(PodMixEstimator, WithoutDecayEqualsTheTraceMix) {
  PodMixEstimator est;
  const auto pods = sample_pods();
  for (const Pod& p : pods) est.add(p);
  EXPECT_EQ(est.pods_seen(), 8);
  for (double coverage : {0.5, 0.95, 1.0}) {
    const auto online = est.mix(coverage);
    const auto offline = typical_pod_mix(pods, coverage);
    ASSERT_EQ(online.size(), offline.size()) << coverage;
    for (size_t i = 0; i < online.size(); ++i) {
      EXPECT_EQ(online[i].cpu_milli, offline[i].cpu_milli);
      EXPECT_EQ(online[i].gpu_milli, offline[i].gpu_milli);
      EXPECT_EQ(online[i].num_gpu, offline[i].num_gpu);
      EXPECT_DOUBLE_EQ(online[i].popularity, offline[i].popularity);
    }
  }
  // 3 of 8 pods are (4000m, 500 milli, 1 GPU): the most popular shape, 3/8 with full coverage.
  EXPECT_EQ(est.mix(1.0)[0].gpu_milli, 500);
  EXPECT_DOUBLE_EQ(est.mix(1.0)[0].popularity, 3.0 / 8.0);
}

TEST(PodMixEstimator, DecayFavoursRecentPods) {
  // Half-life of 1 pod: weights 1, 2, 4 for three pods; shape X first, then Y twice -> X 1/7, Y 6/7.
  PodMixEstimator est(1.0);
  est.add(make_pod("x", 1000, 1, 1, 300));
  est.add(make_pod("y1", 1000, 1, 1, 600));
  est.add(make_pod("y2", 1000, 1, 1, 600));
  const auto mix = est.mix(1.0);
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_EQ(mix[0].gpu_milli, 600);
  EXPECT_NEAR(mix[0].popularity, 6.0 / 7.0, 1e-12);
  EXPECT_NEAR(mix[1].popularity, 1.0 / 7.0, 1e-12);
  EXPECT_TRUE(PodMixEstimator().mix().empty());
}

TEST(OnlineFgd, RefreshSchedule) {
  std::vector<int64_t> points;
  for (int64_t n = 0; n <= 5000; ++n)
    if (OnlineFgdScore::refresh_point(n)) points.push_back(n);
  const std::vector<int64_t> want = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096};
  EXPECT_EQ(points, want);
}

// After observing 8 pods (a refresh point), fgd-online scores every node exactly as FGD does with the
// typical mix of those 8 pods; gpufleet as FGD with full coverage and sigmoid scale 2000.
TEST(OnlineFgd, ScoresEqualFgdWithTheMixSeenSoFar) {
  std::vector<Node> nodes = {make_node("n0", 32000, 65536, 4), make_node("n1", 16000, 32768, 2),
                             make_node("n2", 96000, 393216, 8, "T4")};
  ClusterState state(nodes);
  state.allocate(0, make_pod("x", 8000, 1024, 1, 700), {.gpus = {1}});
  state.allocate(2, make_pod("y", 30000, 1024, 1, 300), {.gpus = {0}});
  const auto pods = sample_pods();
  for (const OnlineFgdParams params : {kFgdOnlineParams, OnlineFgdParams{0.95, 2000.0}}) {
    OnlineFgdScore online(state.gpu_models(), params);
    for (const Pod& p : pods) online.observe(p, state);
    // Checked at 1, 2, 4 and 8 pods; pods a and b share a shape, so the mix after 2 pods equals the one
    // after 1 and the measure is kept (no change >= kMinMixChange): 3 rebuilds.
    EXPECT_EQ(online.generation(), 3u);
    const FragmentationMeasure offline(typical_pod_mix(pods, params.mix_coverage), state.gpu_models());
    for (const Pod& probe : {make_pod("s", 4000, 1024, 1, 500), make_pod("w", 4000, 1024, 1, 1000), make_pod("c", 2000, 512, 0, 0)}) {
      for (NodeId n = 0; n < state.node_count(); ++n) {
        const auto want = fgd_score_and_gpu(offline, probe, state, n, params.sigmoid_scale_milli);
        EXPECT_EQ(online.score(probe, state, n, CycleState{}), want.first) << probe.name << " node " << n;
        if (probe.is_share_pod()) {
          GoRand rng(1);
          EXPECT_EQ(online.select_share_gpu(probe, state, n, rng), want.second);
        }
      }
    }
  }
}

// The scheduler drops cached scores when the online estimates change: a warm scheduler decides like a
// cold one (empty cache) that scores with the same plugin.
TEST(OnlineFgd, SchedulerCacheFollowsTheMeasure) {
  std::vector<Node> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(make_node("n" + std::to_string(i), 32000 + 8000 * i, 131072, 2 + 2 * (i % 3)));
  std::vector<Pod> pods;
  for (int i = 0; i < 60; ++i)
    pods.push_back(make_pod("p" + std::to_string(i), 2000 + 1000 * (i % 5), 1024, i % 7 == 0 ? 0 : 1,
                            i % 7 == 0 ? 0 : (i % 3 == 0 ? 1000 : 150 * (1 + i % 6))));
  ClusterState warm_state(nodes), cold_state(nodes);
  const std::vector<uint32_t> ranks = {3, 1, 4, 0, 5, 2};
  PolicyContext ctx;
  ctx.gpu_models = warm_state.gpu_models();
  ctx.cluster = &warm_state;
  Scheduler warm(make_policy("gpufleet", ctx), ranks);
  GoRand rng_warm(5), rng_cold(5);
  for (const Pod& pod : pods) {
    const ScheduleResult w = warm.schedule_one(pod, warm_state, rng_warm);
    Scheduler cold(warm.profile(), ranks);
    const ScheduleResult c = cold.decide(pod, cold_state, rng_cold);
    ASSERT_EQ(w.node, c.node) << pod.name;
    ASSERT_EQ(w.gpus, c.gpus) << pod.name;
    if (c.scheduled()) cold_state.allocate(c.node, pod, {.gpus = c.gpus});
  }
}

}  // namespace
}  // namespace gpufleet::sched
