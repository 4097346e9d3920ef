// Reserve / Unreserve, Permit and Bind in the Scheduler, with a toy gang plugin in the manner of the
// coscheduling plugin (kubernetes-sigs/scheduler-plugins pkg/coscheduling): the members of a pod
// group (label pod-group) wait in Permit until min-member of them (label min-member) are reserved,
// then all are allowed; when one is rejected, its Unreserve rejects the others. A rejected gang must
// leave the ClusterState as it found it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

std::string label(const Pod& pod, std::string_view key) {
  for (const auto& [k, v] : pod.labels)
    if (k == key) return v;
  return {};
}

// The toy gang plugin. Reserve and Unreserve are logged (with `log`, shared with other plugins).
class Gang final : public ReservePlugin, public PermitPlugin, public NamedPlugin<"Gang"> {
 public:
  Gang(std::vector<std::string>* log, double timeout_seconds) : log_(log), timeout_seconds_(timeout_seconds) {}
  Status reserve(const Pod& pod, const ClusterState&, NodeId, CycleState&) override {
    log_->push_back("reserve Gang " + pod.name);
    return Status();
  }
  void unreserve(const Pod& pod, const ClusterState&, NodeId, CycleState&, Handle& handle) override {
    log_->push_back("unreserve Gang " + pod.name);
    const std::string group = label(pod, "pod-group");
    if (group.empty()) return;
    handle.iterate_over_waiting_pods([&](WaitingPod& w) {
      if (label(w.pod(), "pod-group") == group) w.reject(kName, "rejection in Unreserve");
    });
  }
  PermitDecision permit(const Pod& pod, NodeId, CycleState&, Handle& handle) override {
    const std::string group = label(pod, "pod-group");
    if (group.empty()) return {};
    const int min_member = std::stoi(label(pod, "min-member"));
    int reserved = 1;  // this pod
    handle.iterate_over_waiting_pods([&](WaitingPod& w) { reserved += label(w.pod(), "pod-group") == group; });
    if (reserved < min_member) return {Status(Code::kWait), timeout_seconds_};
    handle.iterate_over_waiting_pods([&](WaitingPod& w) {
      if (label(w.pod(), "pod-group") == group) w.allow(kName);
    });
    return {};
  }

 private:
  std::vector<std::string>* log_;
  double timeout_seconds_;
};

// A Reserve plugin that logs and rejects the pods named in `reject`.
class Recorder final : public ReservePlugin {
 public:
  Recorder(std::string name, std::vector<std::string>* log, std::vector<std::string> reject = {})
      : name_(std::move(name)), log_(log), reject_(std::move(reject)) {}
  std::string_view name() const override { return name_; }
  Status reserve(const Pod& pod, const ClusterState&, NodeId, CycleState&) override {
    log_->push_back("reserve " + name_ + " " + pod.name);
    for (const std::string& r : reject_)
      if (r == pod.name) return Status(Code::kUnschedulable, "no room in " + name_);
    return Status();
  }
  void unreserve(const Pod& pod, const ClusterState&, NodeId, CycleState&, Handle&) override {
    log_->push_back("unreserve " + name_ + " " + pod.name);
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  std::vector<std::string> reject_;
};

Pod member(const std::string& name, const std::string& group, int min_member) {
  Pod p = make_pod(name, 4000, 8192, 1, 1000);
  p.namespace_name = "team";
  p.labels = {{"pod-group", group}, {"min-member", std::to_string(min_member)}};
  return p;
}


// Three 2-GPU nodes; n0 already runs a 1-GPU pod.
ClusterState cluster() {
  ClusterState s({make_node("n0", 16000, 65536, 2), make_node("n1", 16000, 65536, 2), make_node("n2", 16000, 65536, 2)});
  s.allocate(0, make_pod("running", 2000, 4096, 1, 1000), {.gpus = {0}});
  return s;
}

struct Fixture {
  std::vector<std::string> log;
  Scheduler scheduler;
  explicit Fixture(double timeout_seconds = 10, std::vector<std::string> reject = {})
      : scheduler(make_profile(timeout_seconds, std::move(reject)), {0, 1, 2}) {}
  Profile make_profile(double timeout_seconds, std::vector<std::string> reject) {
    Profile p = testing::profile_of("gang", {std::make_shared<NodeResourcesFit>(), std::make_shared<GpuShareFit>()},
                                    std::make_shared<BestFitScore>(), std::make_shared<BestFitGpuSelector>());
    auto gang = std::make_shared<Gang>(&log, timeout_seconds);
    p.reserves = {std::make_shared<Recorder>("A", &log), gang, std::make_shared<Recorder>("B", &log, std::move(reject))};
    p.permits = {gang};
    return p;
  }
};

std::vector<std::string> names(const std::vector<PermitOutcome>& outcomes) {
  std::vector<std::string> out;
  for (const PermitOutcome& o : outcomes) out.push_back(o.pod.name + (o.status.is_success() ? " bound" : " rejected: " + o.status.message()));
  return out;
}

// min-member 3: g0 and g1 wait (reserved: the state holds them), g2 completes the gang, is bound at
// once and allows the two waiting pods, which are bound at the end of the same call. BestFit packs:
// g0 on n0 (1 GPU left), g1 on n1, g2 on n1.
TEST(PermitTest, GangWaitsUntilMinMemberThenAllBind) {
  Fixture f;
  ClusterState state = cluster();
  GoRand rng(1);
  ScheduleResult r0 = f.scheduler.schedule_one(member("g0", "train", 3), state, rng);
  EXPECT_TRUE(r0.status.is_wait());
  EXPECT_EQ(r0.status.message(), "one or more plugins asked to wait and no plugin rejected pod \"g0\"");
  EXPECT_EQ(r0.node, 0u);
  EXPECT_EQ(state.pod_count(0), 2);  // reserved while waiting
  ASSERT_NE(f.scheduler.get_waiting_pod("team/g0"), nullptr);
  EXPECT_EQ(f.scheduler.get_waiting_pod("team/g0")->pending_plugins(), std::vector<std::string>{"Gang"});
  ScheduleResult r1 = f.scheduler.schedule_one(member("g1", "train", 3), state, rng);
  EXPECT_TRUE(r1.status.is_wait());
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 2u);
  EXPECT_TRUE(f.scheduler.take_permit_outcomes().empty());
  ScheduleResult r2 = f.scheduler.schedule_one(member("g2", "train", 3), state, rng);
  EXPECT_TRUE(r2.status.is_success());
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 0u);
  EXPECT_EQ(names(f.scheduler.take_permit_outcomes()), (std::vector<std::string>{"g0 bound", "g1 bound"}));
  EXPECT_EQ(std::vector<NodeId>({r0.node, r1.node, r2.node}), (std::vector<NodeId>{0, 1, 1}));
  EXPECT_EQ(state.pod_count(0) + state.pod_count(1) + state.pod_count(2), 4);
  EXPECT_EQ(f.log, (std::vector<std::string>{"reserve A g0", "reserve Gang g0", "reserve B g0", "reserve A g1", "reserve Gang g1",
                                              "reserve B g1", "reserve A g2", "reserve Gang g2", "reserve B g2"}));
}

// g0 and g1 wait; the clock passes g0's 10 s timeout: g0 is rejected (kube's timeout message), its
// Unreserve runs (B, Gang, A: reverse order) and rejects g1, whose Unreserve runs too. Both are
// released: the state is as before the gang, pods and usage alike.
TEST(PermitTest, TimedOutGangRollsBackWithoutATrace) {
  Fixture f;
  ClusterState state = cluster();
  const testing::StateSnapshot before = testing::state_snapshot(state);
  GoRand rng(1);
  f.scheduler.advance_clock(state, 100);
  EXPECT_TRUE(f.scheduler.schedule_one(member("g0", "train", 3), state, rng).status.is_wait());
  f.scheduler.advance_clock(state, 105);
  EXPECT_TRUE(f.scheduler.schedule_one(member("g1", "train", 3), state, rng).status.is_wait());
  EXPECT_NE(testing::state_snapshot(state), before);
  f.scheduler.advance_clock(state, 109.5);  // g0 waits until 110
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 2u);
  f.log.clear();
  f.scheduler.advance_clock(state, 110);
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 0u);
  EXPECT_EQ(names(f.scheduler.take_permit_outcomes()),
            (std::vector<std::string>{"g0 rejected: rejected due to timeout after waiting 10s at plugin Gang",
                                      "g1 rejected: rejection in Unreserve"}));
  EXPECT_EQ(f.log, (std::vector<std::string>{"unreserve B g0", "unreserve Gang g0", "unreserve A g0", "unreserve B g1",
                                              "unreserve Gang g1", "unreserve A g1"}));
  EXPECT_EQ(testing::state_snapshot(state), before);
}

// The last member fails Reserve (plugin B): every Reserve plugin's Unreserve runs for it, in reverse
// order, and the gang's rejects the two waiting members. Nothing is left of the gang.
TEST(PermitTest, ReserveFailureRejectsTheGang) {
  Fixture f(10, {"g2"});
  ClusterState state = cluster();
  const testing::StateSnapshot before = testing::state_snapshot(state);
  GoRand rng(1);
  f.scheduler.schedule_one(member("g0", "train", 3), state, rng);
  f.scheduler.schedule_one(member("g1", "train", 3), state, rng);
  f.log.clear();
  const ScheduleResult r = f.scheduler.schedule_one(member("g2", "train", 3), state, rng);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(r.status.code(), Code::kUnschedulable);
  EXPECT_EQ(r.status.message(), "no room in B");
  EXPECT_EQ(r.status.plugin(), "B");
  EXPECT_EQ(names(f.scheduler.take_permit_outcomes()),
            (std::vector<std::string>{"g0 rejected: rejection in Unreserve", "g1 rejected: rejection in Unreserve"}));
  EXPECT_EQ(f.log, (std::vector<std::string>{"reserve A g2", "reserve Gang g2", "reserve B g2", "unreserve B g2", "unreserve Gang g2",
                                              "unreserve A g2", "unreserve B g0", "unreserve Gang g0", "unreserve A g0",
                                              "unreserve B g1", "unreserve Gang g1", "unreserve A g1"}));
  EXPECT_EQ(testing::state_snapshot(state), before);
}

// Rejecting a waiting pod by hand (kube RejectWaitingPod), a pod outside any gang (bound at once),
// and the 15-minute cap on a Permit timeout.
TEST(PermitTest, RejectWaitingPodSoloPodAndTimeoutCap) {
  Fixture f(3600);
  ClusterState state = cluster();
  const testing::StateSnapshot before = testing::state_snapshot(state);
  GoRand rng(1);
  f.scheduler.schedule_one(member("g0", "train", 2), state, rng);
  EXPECT_FALSE(f.scheduler.reject_waiting_pod(state, "team/nope", "removed"));
  f.scheduler.advance_clock(state, 899);
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 1u);
  EXPECT_TRUE(f.scheduler.reject_waiting_pod(state, "team/g0", "removed"));
  EXPECT_EQ(names(f.scheduler.take_permit_outcomes()), std::vector<std::string>{"g0 rejected: removed"});
  EXPECT_EQ(testing::state_snapshot(state), before);
  f.scheduler.schedule_one(member("g1", "infer", 2), state, rng);
  f.scheduler.advance_clock(state, 899 + 900);  // waited 900 s, not 3600
  EXPECT_EQ(names(f.scheduler.take_permit_outcomes()),
            std::vector<std::string>{"g1 rejected: rejected due to timeout after waiting 900s at plugin Gang"});
  Pod solo = make_pod("solo", 1000, 1024, 0, 0);
  EXPECT_TRUE(f.scheduler.schedule_one(solo, state, rng).status.is_success());
  EXPECT_EQ(f.scheduler.waiting_pod_count(), 0u);
}

}  // namespace
}  // namespace gpufleet::sched
