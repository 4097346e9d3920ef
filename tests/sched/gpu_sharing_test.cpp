// MIG and time-slicing on tiny clusters: ClusterState's device invariants and accounting, the
// GpuShareFit reasons, the scheduler's device choice and kube's FitError text, with hand-computed
// values (gpu-sharing.md s.1-3; gpu_milli per replica floor(1000/R), per MIG device
// floor(1000 * compute slices / 7)).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/fragmentation.h"
#include "sched/gpu/device_select.h"
#include "sched/framework/interface.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;
using Gpus = std::vector<int32_t>;

const std::vector<MigInstance> k7x1g = {{"1g.10gb", 0}, {"1g.10gb", 1}, {"1g.10gb", 2}, {"1g.10gb", 3},
                                        {"1g.10gb", 4}, {"1g.10gb", 5}, {"1g.10gb", 6}};
const std::vector<MigInstance> k4g3g = {{"4g.40gb", 0}, {"3g.40gb", 4}};
const std::vector<MigInstance> k7g = {{"7g.80gb", 0}};
const std::vector<MigInstance> kOverlap = {{"4g.40gb", 0}, {"3g.40gb", 0}};  // both on memory slices 0-3

// An H100-80GB node (64 CPUs, 512 GiB) whose GPU g has MIG layout layouts[g] (nullptr = no MIG).
Node mig_node(std::string name, const std::vector<const std::vector<MigInstance>*>& layouts) {
  Node n = make_node(std::move(name), 64000, 524288, static_cast<int32_t>(layouts.size()), "H100-80GB");
  for (const auto* l : layouts) n.mig.push_back(l ? GpuMig{true, *l} : GpuMig{});
  return n;
}

// A T4 node with `gpus` GPUs time-sliced `replicas` ways.
Node sliced_node(std::string name, int32_t gpus, int32_t replicas, bool renamed, bool fail_above_one = false) {
  Node n = make_node(std::move(name), 16000, 65536, gpus, "T4");
  n.time_slicing = TimeSlicing{replicas, renamed, fail_above_one};
  return n;
}

Pod mig_pod(std::string name, std::vector<MigRequest> requests) {
  Pod p = make_pod(std::move(name), 1000, 1024, 0, 0);
  p.mig_requests = std::move(requests);
  return p;
}

Pod shared_pod(std::string name, int32_t replicas) {
  Pod p = make_pod(std::move(name), 1000, 1024, 0, 0);
  p.shared_replicas = replicas;
  return p;
}

Pod whole_pod(std::string name, int32_t gpus) { return make_pod(std::move(name), 1000, 1024, gpus, 1000); }

// ------------------------------------------------------------------------------------------------
// ClusterState

TEST(GpuSharingState, KindsAndConstructorChecks) {
  ClusterState s({mig_node("m", {&k7x1g, nullptr}), sliced_node("t", 2, 4, false), make_node("p", 1000, 1000, 1)});
  EXPECT_TRUE(s.has_gpu_sharing(0));
  EXPECT_TRUE(s.has_gpu_sharing(1));
  EXPECT_FALSE(s.has_gpu_sharing(2));
  EXPECT_EQ(s.gpu_kind(0, 0), GpuKind::kMig);
  EXPECT_EQ(s.gpu_kind(0, 1), GpuKind::kPlain);
  EXPECT_EQ(s.gpu_kind(1, 0), GpuKind::kTimeSliced);
  EXPECT_EQ(s.gpu_kind(1, 1), GpuKind::kTimeSliced);
  EXPECT_EQ(s.gpu_kind(2, 0), GpuKind::kPlain);
  EXPECT_EQ(s.replicas_free(1), 8);
  EXPECT_EQ(s.replicas_free(0), 0);
  EXPECT_EQ(s.mig_free_count(0, "1g.10gb"), 7);
  EXPECT_EQ(s.mig_free_count(0, "3g.40gb"), 0);
  EXPECT_EQ(s.gpu_used_milli(), 0);  // a MIG layout alone uses nothing

  auto rejects = [](Node n) { EXPECT_THROW(ClusterState({std::move(n)}), std::invalid_argument); };
  Node t4 = make_node("t4", 1000, 1000, 1, "T4");
  t4.mig = {GpuMig{true, {}}};
  rejects(t4);  // T4 is not MIG-capable
  Node unknown = make_node("u", 1000, 1000, 1, "V100M16");
  unknown.mig = {GpuMig{true, k7x1g}};
  rejects(unknown);  // no catalog model
  rejects(mig_node("overlap", {&kOverlap}));
  Node size = mig_node("size", {&k7x1g});
  size.gpu_count = 2;
  rejects(size);  // 1 MIG entry for 2 GPUs
  Node disabled = mig_node("disabled", {&k7x1g});
  disabled.mig[0].enabled = false;
  rejects(disabled);  // instances without MIG mode
  rejects(sliced_node("zero", 1, 0, false));
}

TEST(GpuSharingState, MigDevicesAccountAndNeverGoTwice) {
  ClusterState s({mig_node("m", {&k7x1g})});
  const Pod one = mig_pod("a", {{"1g.10gb", 1}});
  s.allocate(0, one, {{}, {}, {{0, 0, "1g.10gb"}}});
  // floor(1000 * 1 / 7) = 142
  EXPECT_EQ(s.gpu_free_milli(0)[0], 858);
  EXPECT_EQ(s.gpu_used_milli(), 142);
  EXPECT_EQ(s.gpu_free_milli_total(0), 858);
  EXPECT_EQ(s.mig_free_count(0, "1g.10gb"), 6);
  EXPECT_TRUE(s.mig_device_taken(0, 0, 0));
  EXPECT_FALSE(s.mig_device_taken(0, 0, 1));
  ASSERT_EQ(s.pods_on(0).size(), 1u);
  EXPECT_EQ(s.pods_on(0)[0].mig, (std::vector<MigDevice>{{0, 0, "1g.10gb"}}));

  const uint32_t version = s.version(0);
  const Pod other = mig_pod("b", {{"1g.10gb", 1}});
  EXPECT_THROW(s.allocate(0, other, {{}, {}, {{0, 0, "1g.10gb"}}}), InvariantViolation);  // taken
  EXPECT_THROW(s.allocate(0, other, {{}, {}, {{0, 7, "1g.10gb"}}}), InvariantViolation);  // no instance at 7
  EXPECT_THROW(s.allocate(0, other, {{}, {}, {{0, 1, "3g.40gb"}}}), InvariantViolation);  // wrong profile
  EXPECT_THROW(s.allocate(0, other, {{}, {}, {}}), InvariantViolation);                   // count
  EXPECT_THROW(s.allocate(0, mig_pod("c", {{"1g.10gb", 2}}), {{}, {}, {{0, 1, "1g.10gb"}, {0, 1, "1g.10gb"}}}),
               InvariantViolation);  // the same device twice
  EXPECT_THROW(s.allocate(0, other, {}), InvariantViolation);  // no MIG device given
  EXPECT_THROW(s.allocate(0, whole_pod("w", 1), {.gpus = {0}}), InvariantViolation);  // a MIG GPU is never whole
  EXPECT_THROW(s.allocate(0, make_pod("f", 0, 0, 1, 100), {.gpus = {0}}), InvariantViolation);  // nor a fraction
  EXPECT_EQ(s.version(0), version);
  EXPECT_EQ(s.gpu_used_milli(), 142);

  for (int32_t start = 1; start < 7; ++start)
    s.allocate(0, mig_pod("p" + std::to_string(start), {{"1g.10gb", 1}}), {{}, {}, {{0, start, "1g.10gb"}}});
  EXPECT_EQ(s.gpu_used_milli(), 994);  // 7 x 142
  EXPECT_EQ(s.gpu_free_milli(0)[0], 6);
  EXPECT_EQ(s.mig_free_count(0, "1g.10gb"), 0);

  // Release restores exactly, and only what was reserved.
  EXPECT_THROW(s.release(0, mig_pod("a", {{"1g.10gb", 2}})), InvariantViolation);  // not the request bound
  s.release(0, one);
  EXPECT_EQ(s.gpu_used_milli(), 852);
  EXPECT_EQ(s.mig_free_count(0, "1g.10gb"), 1);
  EXPECT_FALSE(s.mig_device_taken(0, 0, 0));
  EXPECT_THROW(s.release(0, one), InvariantViolation);  // already released
}

TEST(GpuSharingState, MigLayoutAccountingPerProfile) {
  // 4g: floor(4000/7) = 571, 3g: floor(3000/7) = 428; together 999 <= 1000.
  ClusterState s({mig_node("m", {&k4g3g})});
  s.allocate(0, mig_pod("four", {{"4g.40gb", 1}}), {{}, {}, {{0, 0, "4g.40gb"}}});
  EXPECT_EQ(s.gpu_used_milli(), 571);
  s.allocate(0, mig_pod("three", {{"3g.40gb", 1}}), {{}, {}, {{0, 4, "3g.40gb"}}});
  EXPECT_EQ(s.gpu_used_milli(), 999);
  EXPECT_EQ(s.gpu_free_milli(0)[0], 1);
  // 7g.80gb: 1000.
  ClusterState full({mig_node("m", {&k7g})});
  full.allocate(0, mig_pod("seven", {{"7g.80gb", 1}}), {{}, {}, {{0, 0, "7g.80gb"}}});
  EXPECT_EQ(full.gpu_used_milli(), 1000);
  EXPECT_EQ(full.gpu_free_milli(0)[0], 0);
}

TEST(GpuSharingState, TimeSlicedReplicasNeverAboveR) {
  // R = 3: floor(1000/3) = 333 per replica, 999 when full.
  ClusterState s({sliced_node("t", 1, 3, false)});
  const Pod p = whole_pod("a", 1);
  s.allocate(0, p, {.gpus = {0}});  // nvidia.com/gpu: 1 takes one replica on a node that does not rename
  EXPECT_EQ(s.replicas_used(0, 0), 1);
  EXPECT_EQ(s.gpu_used_milli(), 333);
  s.allocate(0, whole_pod("b", 2), {.gpus = {0, 0}});  // two replicas of the same GPU
  EXPECT_EQ(s.replicas_used(0, 0), 3);
  EXPECT_EQ(s.gpu_used_milli(), 999);
  EXPECT_EQ(s.replicas_free(0), 0);
  EXPECT_THROW(s.allocate(0, whole_pod("c", 1), {.gpus = {0}}), InvariantViolation);
  EXPECT_THROW(s.allocate(0, shared_pod("d", 1), {{}, {0}, {}}), InvariantViolation);  // not renamed
  s.release(0, whole_pod("b", 2));
  EXPECT_EQ(s.replicas_used(0, 0), 1);
  EXPECT_EQ(s.gpu_used_milli(), 333);
  // A fraction of a time-sliced GPU is never given.
  EXPECT_THROW(s.allocate(0, make_pod("f", 0, 0, 1, 500), {.gpus = {0}}), InvariantViolation);

  // Renamed: only nvidia.com/gpu.shared takes replicas; R = 4 -> 250 each.
  ClusterState r({sliced_node("r", 2, 4, true)});
  EXPECT_THROW(r.allocate(0, whole_pod("w", 1), {.gpus = {0}}), InvariantViolation);
  r.allocate(0, shared_pod("s", 3), {{}, {0, 0, 1}, {}});
  EXPECT_EQ(r.replicas_used(0, 0), 2);
  EXPECT_EQ(r.replicas_used(0, 1), 1);
  EXPECT_EQ(r.gpu_free_milli(0)[0], 500);
  EXPECT_EQ(r.gpu_free_milli(0)[1], 750);
  EXPECT_EQ(r.gpu_used_milli(), 750);
  EXPECT_EQ(r.pods_on(0)[0].shared_replicas, (Gpus{0, 0, 1}));
  EXPECT_THROW(r.allocate(0, shared_pod("t", 3), {{}, {0, 0, 0}, {}}), InvariantViolation);  // GPU 0: 2 free
  r.release(0, shared_pod("s", 3));
  EXPECT_EQ(r.gpu_used_milli(), 0);
  EXPECT_EQ(r.replicas_free(0), 8);
}

TEST(GpuSharingState, MixedNodeGivesOnlyPlainGpusWhole) {
  ClusterState s({mig_node("m", {&k7x1g, nullptr})});
  EXPECT_EQ(sched::lowest_free_gpus(s, 0, 2), Gpus{1});
  EXPECT_THROW(s.allocate(0, whole_pod("w", 1), {.gpus = {0}}), InvariantViolation);
  s.allocate(0, whole_pod("w", 1), {.gpus = {1}});
  EXPECT_EQ(s.gpu_used_milli(), 1000);
  EXPECT_TRUE(sched::lowest_free_gpus(s, 0, 1).empty());
}

// ------------------------------------------------------------------------------------------------
// Scheduling

sched::Profile policy_for(const std::string& name, const ClusterState& state) {
  sched::TypicalPod t;
  t.cpu_milli = 1000;
  t.gpu_milli = 1000;
  t.num_gpu = 1;
  t.count = 1;
  t.popularity = 1;
  sched::PolicyContext ctx;
  ctx.frag = std::make_shared<sched::FragmentationMeasure>(std::vector<sched::TypicalPod>{t}, state.gpu_models());
  ctx.gpu_models = state.gpu_models();
  ctx.cluster = &state;
  return sched::make_policy(name, ctx);
}

class GpuSharingPolicy : public ::testing::TestWithParam<std::string> {
 protected:
  sched::ScheduleResult schedule(sched::Scheduler& s, const Pod& pod, ClusterState& state) {
    return s.schedule_one(pod, state, rng_);
  }
  GoRand rng_{7};
};

TEST_P(GpuSharingPolicy, SevenSmallMigDevicesThenInsufficient) {
  ClusterState state({mig_node("m", {&k7x1g})});
  sched::Scheduler s(policy_for(GetParam(), state), {0});
  for (int32_t i = 0; i < 7; ++i) {
    const sched::ScheduleResult r = schedule(s, mig_pod("p" + std::to_string(i), {{"1g.10gb", 1}}), state);
    ASSERT_TRUE(r.scheduled()) << i;
    EXPECT_TRUE(r.gpus.empty());
    EXPECT_EQ(r.mig, (std::vector<MigDevice>{{0, i, "1g.10gb"}}));  // lowest free start
    EXPECT_EQ(r.gpu_indices(), Gpus{0});
    EXPECT_EQ(r.mig_profiles(), "1g.10gb");
  }
  EXPECT_EQ(state.gpu_used_milli(), 994);
  const Pod p7 = mig_pod("p7", {{"1g.10gb", 1}});
  const sched::ScheduleResult r = schedule(s, p7, state);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(r.node_to_status.count(sched::GpuShareFit::kInsufficientMig), 1);
  EXPECT_EQ(testing::fit_error_of(r, p7, state),
            "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb.");
}

TEST_P(GpuSharingPolicy, ThreeGFourGNodeServesOneOfEach) {
  ClusterState state({mig_node("m", {&k4g3g})});
  sched::Scheduler s(policy_for(GetParam(), state), {0});
  const auto three = schedule(s, mig_pod("three", {{"3g.40gb", 1}}), state);
  EXPECT_EQ(three.mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}}));
  const auto four = schedule(s, mig_pod("four", {{"4g.40gb", 1}}), state);
  EXPECT_EQ(four.mig, (std::vector<MigDevice>{{0, 0, "4g.40gb"}}));
  EXPECT_EQ(state.gpu_used_milli(), 999);
  const Pod three_2 = mig_pod("three-2", {{"3g.40gb", 1}});
  const auto again = schedule(s, three_2, state);
  EXPECT_FALSE(again.scheduled());
  EXPECT_EQ(testing::fit_error_of(again, three_2, state), "0/1 nodes are available: 1 Insufficient nvidia.com/mig-3g.40gb.");
  // A plain GPU pod finds no plain GPU there.
  const Pod whole_1 = whole_pod("whole", 1);
  const auto whole = schedule(s, whole_1, state);
  EXPECT_EQ(testing::fit_error_of(whole, whole_1, state), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

TEST_P(GpuSharingPolicy, MigPodNeverLandsOnNonMigNode) {
  // n0 and n2 plain H100 nodes rank first; only n1 has a 3g.40gb device.
  ClusterState state({make_node("n0", 64000, 524288, 8, "H100-80GB"), mig_node("n1", {&k4g3g}),
                      make_node("n2", 64000, 524288, 8, "H100-80GB")});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 2, 1});
  const auto r = schedule(s, mig_pod("three", {{"3g.40gb", 1}}), state);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}}));
  const Pod three_2 = mig_pod("three-2", {{"3g.40gb", 1}});
  const auto next = schedule(s, three_2, state);
  EXPECT_FALSE(next.scheduled());
  EXPECT_EQ(testing::fit_error_of(next, three_2, state), "0/3 nodes are available: 3 Insufficient nvidia.com/mig-3g.40gb.");
}

TEST_P(GpuSharingPolicy, WholeGpuPodsNeverTakeMigOrTimeSlicedGpus) {
  // n0: GPU 0 MIG, GPU 1 plain; n1: renamed time-sliced; n2: time-sliced, not renamed (1 GPU, R 2).
  ClusterState state({mig_node("n0", {&k7x1g, nullptr}), sliced_node("n1", 2, 4, true), sliced_node("n2", 1, 2, false)});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1, 2});
  // Two GPUs: no node has 2 plain free GPUs nor 2 free replicas besides n2 (R = 2): n2 takes both.
  const auto two = schedule(s, whole_pod("two", 2), state);
  EXPECT_EQ(two.node, 2u);
  EXPECT_EQ(two.gpus, (Gpus{0, 0}));
  const auto one = schedule(s, whole_pod("one", 1), state);
  EXPECT_EQ(one.node, 0u);
  EXPECT_EQ(one.gpus, Gpus{1});
  const Pod none_1 = whole_pod("none", 1);
  const auto none = schedule(s, none_1, state);
  EXPECT_FALSE(none.scheduled());
  EXPECT_EQ(testing::fit_error_of(none, none_1, state), "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.");
  // Fractions of a GPU (openb) take plain GPUs only, so none either.
  const auto part = schedule(s, make_pod("part", 1000, 1024, 1, 300), state);
  EXPECT_FALSE(part.scheduled());
  EXPECT_EQ(state.mig_free_count(0, "1g.10gb"), 7);
  EXPECT_EQ(state.replicas_free(1), 8);
}

TEST_P(GpuSharingPolicy, TimeSlicingFourReplicasThenInsufficient) {
  ClusterState state({sliced_node("t", 1, 4, false)});
  sched::Scheduler s(policy_for(GetParam(), state), {0});
  for (int32_t i = 0; i < 4; ++i) {
    const auto r = schedule(s, whole_pod("p" + std::to_string(i), 1), state);
    ASSERT_TRUE(r.scheduled()) << i;
    EXPECT_EQ(r.gpus, Gpus{0});
    EXPECT_EQ(state.replicas_used(0, 0), i + 1);
    EXPECT_EQ(state.gpu_used_milli(), 250 * (i + 1));
  }
  const Pod p4 = whole_pod("p4", 1);
  const auto r = schedule(s, p4, state);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(testing::fit_error_of(r, p4, state), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");

  // The renamed resource: 4 nvidia.com/gpu.shared pods, then Insufficient nvidia.com/gpu.shared.
  ClusterState renamed({sliced_node("r", 1, 4, true)});
  sched::Scheduler s2(policy_for(GetParam(), renamed), {0});
  for (int32_t i = 0; i < 4; ++i) {
    const auto ok = schedule(s2, shared_pod("s" + std::to_string(i), 1), renamed);
    ASSERT_TRUE(ok.scheduled()) << i;
    EXPECT_EQ(ok.shared_replicas, Gpus{0});
    EXPECT_EQ(ok.gpu_indices(), Gpus{0});
    EXPECT_EQ(ok.mig_profiles(), "");
  }
  const Pod s4 = shared_pod("s4", 1);
  const auto full = schedule(s2, s4, renamed);
  EXPECT_EQ(testing::fit_error_of(full, s4, renamed), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.shared.");
}

TEST_P(GpuSharingPolicy, FailRequestsGreaterThanOneRefusesTwo) {
  ClusterState state({sliced_node("r", 1, 4, true, true), sliced_node("t", 1, 4, false, true)});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1});
  const Pod a = shared_pod("a", 2);
  const auto shared_two = schedule(s, a, state);
  EXPECT_FALSE(shared_two.scheduled());
  EXPECT_EQ(shared_two.node_to_status.count(sched::GpuShareFit::kSharedRequestAboveOne), 1);
  EXPECT_EQ(testing::fit_error_of(shared_two, a, state),
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu.shared, 1 node(s) refuse more than one "
            "shared GPU replica per pod (failRequestsGreaterThanOne).");
  const Pod b = whole_pod("b", 2);
  const auto gpu_two = schedule(s, b, state);
  EXPECT_EQ(testing::fit_error_of(gpu_two, b, state),
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) refuse more than one "
            "shared GPU replica per pod (failRequestsGreaterThanOne).");
  // One replica is fine on both.
  EXPECT_EQ(schedule(s, shared_pod("c", 1), state).node, 0u);
  EXPECT_EQ(schedule(s, whole_pod("d", 1), state).node, 1u);
  // Without the flag two replicas fit, on the same GPU.
  ClusterState lax({sliced_node("r", 1, 4, true)});
  sched::Scheduler s2(policy_for(GetParam(), lax), {0});
  EXPECT_EQ(schedule(s2, shared_pod("e", 2), lax).shared_replicas, (Gpus{0, 0}));
}

TEST_P(GpuSharingPolicy, RenamedVersusPlainResource) {
  // n0 renames its replicas nvidia.com/gpu.shared; n1 advertises them as nvidia.com/gpu.
  ClusterState state({sliced_node("renamed", 1, 2, true), sliced_node("plain", 1, 2, false)});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1});
  const auto shared = schedule(s, shared_pod("shared", 1), state);
  EXPECT_EQ(shared.node, 0u);
  EXPECT_EQ(shared.shared_replicas, Gpus{0});
  EXPECT_TRUE(shared.gpus.empty());
  const auto gpu = schedule(s, whole_pod("gpu", 1), state);
  EXPECT_EQ(gpu.node, 1u);
  EXPECT_EQ(gpu.gpus, Gpus{0});
  EXPECT_TRUE(gpu.shared_replicas.empty());
  EXPECT_EQ(state.replicas_used(0, 0), 1);
  EXPECT_EQ(state.replicas_used(1, 0), 1);
  // Each resource has one replica left, on its own node only.
  const Pod gpu_two_pod = whole_pod("gpu-two", 2);
  const auto gpu_two = schedule(s, gpu_two_pod, state);
  EXPECT_EQ(testing::fit_error_of(gpu_two, gpu_two_pod, state), "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  const Pod shared_two_pod = shared_pod("shared-two", 2);
  const auto shared_two = schedule(s, shared_two_pod, state);
  EXPECT_EQ(testing::fit_error_of(shared_two, shared_two_pod, state), "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.shared.");
}

TEST_P(GpuSharingPolicy, ReplicasSpreadOverTheGpusWithMostFree) {
  ClusterState state({sliced_node("t", 2, 4, false)});
  sched::Scheduler s(policy_for(GetParam(), state), {0});
  EXPECT_EQ(schedule(s, whole_pod("a", 1), state).gpus, Gpus{0});  // free [4,4] -> 0
  EXPECT_EQ(schedule(s, whole_pod("b", 1), state).gpus, Gpus{1});  // free [3,4] -> 1
  // free [3,3]: 0 (tie, lowest), then [2,3]: 1
  EXPECT_EQ(schedule(s, whole_pod("c", 2), state).gpus, (Gpus{0, 1}));
  // free [2,2]: 0, [1,2]: 1, [1,1]: 0
  const auto d = schedule(s, whole_pod("d", 3), state);
  EXPECT_EQ(d.gpus, (Gpus{0, 0, 1}));
  EXPECT_EQ(d.gpu_indices(), (Gpus{0, 1}));
  EXPECT_EQ(state.replicas_used(0, 0), 4);
  EXPECT_EQ(state.replicas_used(0, 1), 3);
  EXPECT_EQ(state.gpu_used_milli(), 7 * 250);
}

TEST_P(GpuSharingPolicy, MigDevicesLowestGpuThenStart) {
  ClusterState state({mig_node("m", {&k7x1g, &k7x1g})});
  sched::Scheduler s(policy_for(GetParam(), state), {0});
  const Pod x = mig_pod("x", {{"1g.10gb", 1}});
  state.allocate(0, x, {{}, {}, {{0, 0, "1g.10gb"}}});
  EXPECT_EQ(schedule(s, mig_pod("a", {{"1g.10gb", 1}}), state).mig, (std::vector<MigDevice>{{0, 1, "1g.10gb"}}));
  state.release(0, x);
  EXPECT_EQ(schedule(s, mig_pod("b", {{"1g.10gb", 1}}), state).mig, (std::vector<MigDevice>{{0, 0, "1g.10gb"}}));
  // GPU 0 has starts 2..6 free: a pod of 6 takes them and GPU 1's start 0.
  const auto six = schedule(s, mig_pod("six", {{"1g.10gb", 6}}), state);
  EXPECT_EQ(six.mig, (std::vector<MigDevice>{{0, 2, "1g.10gb"},
                                             {0, 3, "1g.10gb"},
                                             {0, 4, "1g.10gb"},
                                             {0, 5, "1g.10gb"},
                                             {0, 6, "1g.10gb"},
                                             {1, 0, "1g.10gb"}}));
  EXPECT_EQ(six.gpu_indices(), (Gpus{0, 1}));
  // Two 3g devices on a two-GPU 4g+3g node: one per GPU, both at start 4.
  ClusterState two({mig_node("m2", {&k4g3g, &k4g3g})});
  sched::Scheduler s2(policy_for(GetParam(), two), {0});
  const auto r = schedule(s2, mig_pod("pair", {{"3g.40gb", 2}}), two);
  EXPECT_EQ(r.mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}, {1, 4, "3g.40gb"}}));
  EXPECT_EQ(r.mig_profiles(), "3g.40gb");
}

TEST_P(GpuSharingPolicy, ReleaseRestoresExactly) {
  ClusterState state({mig_node("m", {&k4g3g, nullptr}), sliced_node("t", 2, 3, true)});
  ClusterState fresh({mig_node("m", {&k4g3g, nullptr}), sliced_node("t", 2, 3, true)});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1});
  const std::vector<Pod> pods = {mig_pod("a", {{"3g.40gb", 1}, {"4g.40gb", 1}}), whole_pod("b", 1), shared_pod("c", 2),
                                 shared_pod("d", 3)};
  std::vector<sched::ScheduleResult> results;
  for (const Pod& p : pods) {
    results.push_back(schedule(s, p, state));
    ASSERT_TRUE(results.back().scheduled()) << p.name;
  }
  EXPECT_EQ(results[0].mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}, {0, 0, "4g.40gb"}}));
  EXPECT_EQ(results[0].mig_profiles(), "3g.40gb,4g.40gb");
  EXPECT_EQ(results[1].gpus, Gpus{1});
  EXPECT_EQ(results[2].shared_replicas, (Gpus{0, 1}));
  EXPECT_EQ(results[3].shared_replicas, (Gpus{0, 0, 1}));  // free [2,2]: 0, [1,2]: 1, [1,1]: 0
  // 999 + 1000 on m; t: 5 replicas x floor(1000/3) = 1665
  EXPECT_EQ(state.gpu_used_milli(), 999 + 1000 + 5 * 333);
  for (size_t i = pods.size(); i-- > 0;) state.release(results[i].node, pods[i]);
  for (NodeId n = 0; n < 2; ++n) {
    EXPECT_EQ(std::vector<int32_t>(state.gpu_free_milli(n).begin(), state.gpu_free_milli(n).end()),
              std::vector<int32_t>(fresh.gpu_free_milli(n).begin(), fresh.gpu_free_milli(n).end()));
    EXPECT_EQ(state.cpu_free_milli(n), fresh.cpu_free_milli(n));
    EXPECT_EQ(state.pod_count(n), 0);
    EXPECT_TRUE(state.pods_on(n).empty());
  }
  EXPECT_EQ(state.gpu_used_milli(), 0);
  EXPECT_EQ(state.mig_free_count(0, "3g.40gb"), 1);
  EXPECT_EQ(state.mig_free_count(0, "4g.40gb"), 1);
  EXPECT_EQ(state.replicas_free(1), 6);
}

TEST_P(GpuSharingPolicy, MultiProfileMessageCountsEachProfile) {
  // The pod wants 1g.10gb + 3g.40gb: n0 (7x 1g) lacks the 3g, n1 (plain) lacks both.
  ClusterState state({mig_node("n0", {&k7x1g}), make_node("n1", 64000, 524288, 1, "H100-80GB")});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1});
  const Pod p = mig_pod("p", {{"1g.10gb", 1}, {"3g.40gb", 1}});
  const auto r = schedule(s, p, state);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(r.node_to_status.count(sched::GpuShareFit::kInsufficientMig), 2);
  EXPECT_EQ(testing::fit_error_of(r, p, state),
            "0/2 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb, 2 Insufficient nvidia.com/mig-3g.40gb.");
}

TEST_P(GpuSharingPolicy, CacheKeySeparatesDeviceRequests) {
  // Same CPU and memory, different devices: a warm scheduler must not reuse one pod's verdict.
  ClusterState state({mig_node("m", {&k7x1g}), sliced_node("r", 1, 2, true)});
  sched::Scheduler s(policy_for(GetParam(), state), {0, 1});
  EXPECT_EQ(s.decide(mig_pod("a", {{"1g.10gb", 1}}), state, rng_).node, 0u);
  EXPECT_FALSE(s.decide(mig_pod("b", {{"3g.40gb", 1}}), state, rng_).scheduled());
  EXPECT_FALSE(s.decide(mig_pod("c", {{"1g.10gb", 8}}), state, rng_).scheduled());
  EXPECT_EQ(s.decide(shared_pod("d", 1), state, rng_).node, 1u);
  EXPECT_FALSE(s.decide(shared_pod("e", 3), state, rng_).scheduled());
  EXPECT_EQ(s.decide(mig_pod("f", {{"1g.10gb", 7}}), state, rng_).node, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, GpuSharingPolicy, ::testing::ValuesIn(sched::policy_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-' || c == '.') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace gpufleet
