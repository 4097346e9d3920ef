// The endpoint picker's plugins on tiny cases with hand-computed scores (inference/endpoint_picker.h).
#include "inference/endpoint_picker.h"

#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "inference/deployment.h"
#include "inference/request.h"
#include "inference/step_time.h"

namespace gpufleet::inference {
namespace {

EndpointMetrics ep(int32_t id, int32_t waiting, double kv) { return {id, waiting, kv, 16, 1000}; }

TEST(EndpointPicker, QueueScorerIsMinMaxNormalisedWaitingQueue) {
  // (max - q) / (max - min) over q = 0, 2, 4.
  const std::vector<double> s = queue_scores({ep(0, 0, 0), ep(1, 2, 0), ep(2, 4, 0)});
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_DOUBLE_EQ(s[1], 0.5);
  EXPECT_DOUBLE_EQ(s[2], 0.0);
  // All equal: 1 for every endpoint.
  const std::vector<double> eq = queue_scores({ep(0, 3, 0), ep(1, 3, 0)});
  EXPECT_DOUBLE_EQ(eq[0], 1.0);
  EXPECT_DOUBLE_EQ(eq[1], 1.0);
}

TEST(EndpointPicker, KvCacheUtilizationScorerIsOneMinusUsage) {
  const std::vector<double> s = kv_cache_utilization_scores({ep(0, 0, 0.25), ep(1, 0, 0.9)});
  EXPECT_DOUBLE_EQ(s[0], 0.75);
  EXPECT_NEAR(s[1], 0.1, 1e-12);
}

TEST(EndpointPicker, PrefixCacheScorerIsMatchedOverTotalBlocks) {
  const std::vector<double> s = prefix_cache_scores({3, 0, 1}, 4);
  EXPECT_DOUBLE_EQ(s[0], 0.75);
  EXPECT_DOUBLE_EQ(s[1], 0.0);
  EXPECT_DOUBLE_EQ(s[2], 0.25);
  EXPECT_DOUBLE_EQ(prefix_cache_scores({0}, 0)[0], 0.0);  // no full block: 0
}

TEST(EndpointPicker, UtilizationDetectorSaturationIsMeanOfRooflines) {
  const UtilizationDetectorParams p;  // 5 waiting, 0.8 KV
  // max(5/5, 0.4/0.8) = 1 and max(0/5, 0.4/0.8) = 0.5: mean 0.75.
  EXPECT_DOUBLE_EQ(utilization_saturation({ep(0, 5, 0.4), ep(1, 0, 0.4)}, p), 0.75);
  // max(2/5, 0.88/0.8) = 1.1 and 1: mean 1.05.
  EXPECT_NEAR(utilization_saturation({ep(0, 2, 0.88), ep(1, 5, 0.0)}, p), 1.05, 1e-12);
  EXPECT_DOUBLE_EQ(utilization_saturation({}, p), 1.0);
}

TEST(EndpointPicker, UtilizationFilterKeepsEndpointsUnderBothLimitsElseAll) {
  UtilizationDetectorParams p;
  // waiting < 5 and usage < 0.8: only the first.
  EXPECT_EQ(utilization_filter({ep(0, 4, 0.5), ep(1, 5, 0.1), ep(2, 0, 0.8)}, p), (std::vector<size_t>{0}));
  // None passes: all kept (fail open).
  EXPECT_EQ(utilization_filter({ep(0, 9, 0.1), ep(1, 0, 0.95)}, p), (std::vector<size_t>{0, 1}));
  // Headroom 0.2: limits 6 waiting, 0.96 usage.
  p.headroom = 0.2;
  EXPECT_EQ(utilization_filter({ep(0, 5, 0.1), ep(1, 0, 0.95), ep(2, 6, 0)}, p), (std::vector<size_t>{0, 1}));
}

TEST(EndpointPicker, SheddableRequestsAreRejectedOnlyWhenSaturated) {
  EndpointPicker picker(resolve_endpoint_picker(default_endpoint_picker_config()), 1);
  const std::vector<EndpointMetrics> saturated = {ep(0, 5, 0.1), ep(1, 5, 0.1)};  // 1.0
  const std::vector<EndpointMetrics> busy = {ep(0, 5, 0.1), ep(1, 4, 0.1)};       // 0.9
  EXPECT_FALSE(picker.admit(-1, saturated));
  EXPECT_TRUE(picker.admit(0, saturated));
  EXPECT_TRUE(picker.admit(5, saturated));
  EXPECT_TRUE(picker.admit(-1, busy));
  EXPECT_FALSE(picker.admit(-1, {}));  // no endpoint: saturation 1
}

TEST(EndpointPicker, MaxScorePickerTakesTheBestAndBreaksTiesAtRandomBySeed) {
  GoRand rng(7);
  EXPECT_EQ(max_score_pick({0.2, 4.8, 3.0}, rng), 1u);
  std::set<size_t> seen;
  for (int64_t seed = 0; seed < 40; ++seed) {
    GoRand r(seed);
    const size_t k = max_score_pick({1.0, 1.0, 0.5}, r);
    EXPECT_NE(k, 2u);
    seen.insert(k);
    GoRand again(seed);
    EXPECT_EQ(max_score_pick({1.0, 1.0, 0.5}, again), k);  // same seed, same choice
  }
  EXPECT_EQ(seen.size(), 2u);  // both tied endpoints chosen for some seed
}

TEST(EndpointPicker, PrefixIndexCountsLeadingBlocksUntilNoServerHoldsOne) {
  ApproxPrefixIndex idx;
  idx.add({1, 2, 3}, 0, 10);
  idx.add({1, 2}, 1, 10);
  std::map<int32_t, int32_t> m = idx.match_longest_prefix({1, 2, 3, 4});
  EXPECT_EQ(m[0], 3);
  EXPECT_EQ(m[1], 2);
  EXPECT_TRUE(idx.match_longest_prefix({9, 1}).empty());  // the first block is held by none
  // matchLongestPrefix counts per server while some server holds the block: server 2 holding 1
  // and 3 (not 2) still counts 3 because server 0 holds 2.
  idx.add({1, 3}, 2, 10);
  m = idx.match_longest_prefix({1, 2, 3});
  EXPECT_EQ(m[2], 2);
}

TEST(EndpointPicker, PrefixIndexEvictsTheLeastRecentlyUsedHash) {
  ApproxPrefixIndex idx;
  idx.add({20, 21}, 0, 2);
  idx.add({20}, 0, 2);  // refreshes 20
  idx.add({22}, 0, 2);  // evicts 21
  EXPECT_EQ(idx.entries(0), 2u);
  EXPECT_EQ(idx.match_longest_prefix({20})[0], 1);
  EXPECT_TRUE(idx.match_longest_prefix({21}).empty());
  idx.remove_server(0);
  EXPECT_TRUE(idx.match_longest_prefix({20}).empty());
}

Request req(uint64_t id, int32_t prompt, std::vector<uint32_t> hashes) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.prefix_hashes = std::move(hashes);
  r.prefix_block_tokens = 512;
  return r;
}

TEST(EndpointPicker, BlockHashesFollowTheTracePrefixBlocks) {
  const Request a = req(1, 1024, {7, 8});
  const Request b = req(2, 1024, {7, 9});
  const std::vector<uint64_t> ha = epp_block_hashes(a, 16, 256), hb = epp_block_hashes(b, 16, 256);
  ASSERT_EQ(ha.size(), 64u);  // 1024 / 16
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(ha[i], hb[i]);  // the shared 512-token block
  EXPECT_NE(ha[32], hb[32]);
  EXPECT_EQ(epp_block_hashes(a, 16, 10).size(), 10u);     // at most max blocks
  EXPECT_EQ(epp_block_hashes(req(3, 40, {}), 16, 256).size(), 2u);  // full blocks only
  // Without trace hashes two requests share nothing.
  EXPECT_NE(epp_block_hashes(req(3, 40, {}), 16, 256)[0], epp_block_hashes(req(4, 40, {}), 16, 256)[0]);
}

TEST(EndpointPicker, DefaultProfileIsTheWeightedSumOfItsScorers) {
  const ResolvedEndpointPicker d = resolve_endpoint_picker(default_endpoint_picker_config());
  ASSERT_EQ(d.scorers.size(), 3u);
  EXPECT_EQ(d.scorers[0].plugin.type, "queue-scorer");
  EXPECT_DOUBLE_EQ(d.scorers[0].weight, 2);
  EXPECT_EQ(d.scorers[1].plugin.type, "kv-cache-utilization-scorer");
  EXPECT_DOUBLE_EQ(d.scorers[1].weight, 2);
  EXPECT_EQ(d.scorers[2].plugin.type, "prefix-cache-scorer");
  EXPECT_DOUBLE_EQ(d.scorers[2].weight, 3);
  EXPECT_EQ(d.picker.type, "max-score-picker");
  ASSERT_TRUE(d.prefix.has_value());
  EXPECT_EQ(d.prefix->max_prefix_blocks_to_match, 256);

  // A (waiting 0, usage 0.5, no prefix), B (4, 0.1, the whole prompt), C (2, 0.9, none):
  // queue 1, 0, 0.5; kv 0.5, 0.9, 0.1; prefix 0, 1, 0.
  // Default 2/2/3: A = 2 + 1 = 3, B = 1.8 + 3 = 4.8, C = 1 + 0.2 = 1.2 -> B.
  const Request r = req(1, 1024, {7, 8});
  EndpointPicker picker(d, 3);
  ASSERT_EQ(picker.pick(r, {ep(1, 4, 0.1)}), 1);  // B alone: it now holds r's blocks
  EXPECT_EQ(picker.pick(r, {ep(0, 0, 0.5), ep(1, 4, 0.1), ep(2, 2, 0.9)}), 1);
  // Prefix weight 1: A = 3, B = 1.8 + 1 = 2.8, C = 1.2 -> A.
  EndpointPickerConfig c = default_endpoint_picker_config();
  c.scheduling_profiles[0].plugins[2].weight = 1.0;
  EndpointPicker light(resolve_endpoint_picker(c), 3);
  ASSERT_EQ(light.pick(r, {ep(1, 4, 0.1)}), 1);
  EXPECT_EQ(light.pick(r, {ep(0, 0, 0.5), ep(1, 4, 0.1), ep(2, 2, 0.9)}), 0);
}

TEST(EndpointPicker, AffinityFilterKeepsOnlyStickyEndpoints) {
  EndpointPickerConfig c;
  EppPlugin f;
  f.name = f.type = "prefix-cache-affinity-filter";
  f.affinity.exploration_probability = 0;
  EppPlugin q;
  q.name = q.type = "queue-scorer";
  EppPlugin p;
  p.name = p.type = "prefix-cache-scorer";
  c.plugins = {f, q, p};
  c.scheduling_profiles = {{"default", {{"prefix-cache-affinity-filter", std::nullopt}, {"queue-scorer", std::nullopt}}}};
  EndpointPicker picker(resolve_endpoint_picker(c), 1);
  const Request r = req(1, 1024, {7, 8});
  ASSERT_EQ(picker.pick(r, {ep(2, 50, 0.1)}), 2);
  // Endpoint 2 holds the whole prompt (score 1 >= 0.8): kept alone despite the longest queue.
  EXPECT_EQ(picker.pick(r, {ep(0, 0, 0), ep(1, 0, 0), ep(2, 50, 0.1)}), 2);
  // A prompt nobody holds: the filter keeps all, the queue scorer picks the shortest queue.
  EXPECT_EQ(picker.pick(req(2, 1024, {70, 80}), {ep(0, 3, 0), ep(1, 0, 0), ep(2, 50, 0.1)}), 1);
}

TEST(EndpointPicker, ResolveAppliesTheLoaderDefaultsAndNamesBadReferences) {
  EndpointPickerConfig c;
  EppPlugin q;
  q.type = "queue-scorer";  // name defaults to the type
  EppPlugin r;
  r.name = "rnd";
  r.type = "random-picker";
  c.plugins = {q, r};
  const ResolvedEndpointPicker x = resolve_endpoint_picker(c);  // no profile: every plugin, weight 1
  EXPECT_EQ(x.profile_name, "default");
  ASSERT_EQ(x.scorers.size(), 1u);
  EXPECT_DOUBLE_EQ(x.scorers[0].weight, 1);
  EXPECT_EQ(x.picker.name, "rnd");
  EXPECT_FALSE(x.prefix.has_value());

  c.scheduling_profiles = {{"p", {{"nope", std::nullopt}}}};
  try {
    resolve_endpoint_picker(c);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "schedulingProfiles[0].plugins[0].pluginRef: no plugin named 'nope'");
  }
  c.scheduling_profiles = {{"p", {}}, {"q", {}}};
  EXPECT_THROW(resolve_endpoint_picker(c), std::invalid_argument);
}

class ConstantStep final : public StepTimeModel {
 public:
  double step_seconds(const StepBatch&) const override { return 0.01; }
};

TEST(EndpointPicker, DeploymentShedsSheddableRequestsOnceThePoolIsSaturated) {
  // One replica, ten requests at t = 0, priority -1: the first five find 0..4 waiting (saturation
  // < 1), the sixth finds 5 waiting (5 / 5 = 1) and every later one is dropped.
  RouterConfig rc;
  rc.policy = RoutingPolicy::kEndpointPicker;
  rc.objective_priority = -1;
  std::vector<RequestOutcome> out;
  Deployment::Observer obs;
  obs.on_outcome = [&](const RequestOutcome& o) { out.push_back(o); };
  Deployment dep(rc, obs);
  ConstantStep st;
  EngineLimits lim;
  lim.num_blocks = 10000;
  dep.add_replica(0, st, lim);
  for (uint64_t i = 0; i < 10; ++i) {
    Request q = req(i, 32, {});
    q.output_tokens = 2;
    dep.submit(q, 0);
  }
  dep.finish(100);
  int finished = 0, dropped = 0;
  for (const RequestOutcome& o : out) {
    if (o.status == RequestStatus::kFinished) ++finished;
    if (o.status == RequestStatus::kDropped) {
      ++dropped;
      EXPECT_GE(o.id, 5u);
    }
  }
  EXPECT_EQ(finished, 5);
  EXPECT_EQ(dropped, 5);
  EXPECT_EQ(out.size(), 10u);
}

}  // namespace
}  // namespace gpufleet::inference
