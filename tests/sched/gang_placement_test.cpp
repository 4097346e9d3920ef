// Gang placement (sched/gang_placement.h) through the Coscheduling Permit plugin
// (sched/plugins/coscheduling.h): all or nothing, role order irrelevant, no partial hold between
// competing gangs, topology domains (Kueue TAS required / preferred levels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod_group.h"
#include "sched/gang_placement.h"
#include "sched/plugins/coscheduling.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

constexpr const char* kRack = "example.com/rack";
constexpr const char* kClique = "nvidia.com/gpu.clique";


Pod worker(const std::string& name, int32_t gpus) { return make_pod(name, 1000, 1024, gpus, gpus > 0 ? 1000 : 0); }

GangRequest gang(const std::string& name, const std::vector<int32_t>& gpus, int32_t min_member) {
  GangRequest g;
  g.name = name;
  g.min_member = min_member;
  for (size_t i = 0; i < gpus.size(); ++i) g.pods.push_back(worker(name + "-w" + std::to_string(i), gpus[i]));
  return g;
}

// Bound pods of pod group `group` (label scheduling.x-k8s.io/pod-group).
int bound_of(const ClusterState& s, const std::string& group) {
  int count = 0;
  for (NodeId n = 0; n < s.node_count(); ++n)
    for (const BoundPod& b : s.pods_on(n))
      for (const auto& [k, v] : b.pod.labels) count += k == kPodGroupLabel && v == group;
  return count;
}

// Releases every pod of the group (the job finished).
void finish(ClusterState& s, const std::string& group) {
  for (NodeId n = 0; n < s.node_count(); ++n) {
    std::vector<Pod> pods;
    for (const BoundPod& b : s.pods_on(n))
      for (const auto& [k, v] : b.pod.labels)
        if (k == kPodGroupLabel && v == group) pods.push_back(b.pod);
    for (const Pod& p : pods) s.release(n, p);
  }
}

// ClusterState's usage equals the sum of its bound pods (CPU, memory, per-GPU milli).
void expect_usage_is_sum_of_pods(const ClusterState& s) {
  for (NodeId n = 0; n < s.node_count(); ++n) {
    int64_t cpu = 0, mem = 0;
    std::vector<int32_t> used(static_cast<size_t>(s.node(n).gpu_count), 0);
    for (const BoundPod& b : s.pods_on(n)) {
      cpu += b.pod.cpu_milli;
      mem += b.pod.memory_bytes;
      for (const int32_t g : b.gpus) used[static_cast<size_t>(g)] += b.pod.gpu_milli;
    }
    ASSERT_EQ(s.cpu_free_milli(n), s.node(n).cpu_milli - cpu);
    ASSERT_EQ(s.memory_free_bytes(n), s.node(n).memory_bytes - mem);
    const auto free = s.gpu_free_milli(n);
    for (size_t g = 0; g < used.size(); ++g) ASSERT_EQ(free[g], 1000 - used[g]) << s.node(n).name << " GPU " << g;
  }
}

std::vector<std::string> node_names(const ClusterState& s, const std::vector<NodeId>& nodes) {
  std::vector<std::string> out;
  for (const NodeId n : nodes) out.push_back(n == kNoNode ? "-" : s.node(n).name);
  return out;
}

Scheduler policy_scheduler(const std::string& policy, const ClusterState& state) {
  return Scheduler(make_policy(policy, PolicyContext{nullptr, state.gpu_models(), &state}), {});
}

// S01: J1 takes the four nodes; J2 binds nothing and stays pending as a whole (nothing left
// waiting at Permit, nothing held); once J1 finishes, J2 takes all four. No job ever holds 1..3.
TEST(GangPlacementTest, S01TwoGangsNeverHalfPlaced) {
  ClusterState state({make_node("n1", 64000, 512 * 1024, 8), make_node("n2", 64000, 512 * 1024, 8), make_node("n3", 64000, 512 * 1024, 8),
                      make_node("n4", 64000, 512 * 1024, 8)});
  Scheduler scheduler = policy_scheduler("bestfit", state);
  GoRand rng(7);
  const GangRequest j1 = gang("j1", {8, 8, 8, 8}, 4), j2 = gang("j2", {8, 8, 8, 8}, 4);
  auto check = [&](int want_j1, int want_j2) {
    EXPECT_EQ(bound_of(state, "j1"), want_j1);
    EXPECT_EQ(bound_of(state, "j2"), want_j2);
    EXPECT_EQ(scheduler.waiting_pod_count(), 0u);
    expect_usage_is_sum_of_pods(state);
  };
  const GangPlacement p1 = place_gang(scheduler, state, rng, j1);
  EXPECT_TRUE(p1.placed);
  EXPECT_EQ(node_names(state, p1.nodes), (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  check(4, 0);
  const testing::StateSnapshot before = testing::state_snapshot(state);
  const GangPlacement p2 = place_gang(scheduler, state, rng, j2);
  EXPECT_FALSE(p2.placed);
  EXPECT_EQ(p2.reason, "pod default/j2-w0: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(node_names(state, p2.nodes), (std::vector<std::string>{"-", "-", "-", "-"}));
  EXPECT_EQ(testing::state_snapshot(state), before);
  check(4, 0);
  finish(state, "j1");
  check(0, 0);
  const GangPlacement p3 = place_gang(scheduler, state, rng, j2);
  EXPECT_TRUE(p3.placed);
  check(0, 4);
}

// The gang really goes through Permit: the first three members wait (reserved), the fourth allows
// them. Seen in the scheduler's outcomes: none left for the caller, nothing waiting afterwards;
// and the Coscheduling plugin knows the group (minMember 4).
TEST(GangPlacementTest, S01GoesThroughCoschedulingPermit) {
  ClusterState state({make_node("n1", 64000, 512 * 1024, 8), make_node("n2", 64000, 512 * 1024, 8), make_node("n3", 64000, 512 * 1024, 8),
                      make_node("n4", 64000, 512 * 1024, 8)});
  Profile profile = make_policy("bestfit", PolicyContext{nullptr, state.gpu_models(), &state});
  ASSERT_EQ(profile.permits.size(), 1u);
  auto* coscheduling = dynamic_cast<Coscheduling*>(profile.permits.front().get());
  ASSERT_NE(coscheduling, nullptr);
  Scheduler scheduler(std::move(profile), {});
  GoRand rng(1);
  ASSERT_TRUE(place_gang(scheduler, state, rng, gang("j1", {8, 8, 8, 8}, 0)).placed);
  const PodGroup* group = coscheduling->pod_group("default", "j1");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->min_member, 4);
  EXPECT_TRUE(scheduler.take_permit_outcomes().empty());
  // A profile without Coscheduling cannot place gangs.
  Profile bare = make_policy("bestfit", PolicyContext{nullptr, state.gpu_models(), &state});
  bare.permits.clear();
  Scheduler plain(std::move(bare), {});
  EXPECT_THROW(place_gang(plain, state, rng, gang("j2", {8}, 1)), std::invalid_argument);
  EXPECT_THROW(place_gang(scheduler, state, rng, gang("j3", {8}, 2)), std::invalid_argument);
}

// A Reserve and Permit plugin after Coscheduling: logs, at each member's Permit, how many pods wait
// already; rejects the members named in `reject` at Reserve.
class Probe final : public ReservePlugin, public PermitPlugin {
 public:
  Probe(std::vector<std::string>* log, std::vector<std::string> reject) : log_(log), reject_(std::move(reject)) {}
  std::string_view name() const override { return "Probe"; }
  Status reserve(const Pod& pod, const ClusterState&, NodeId, CycleState&) override {
    for (const std::string& r : reject_)
      if (r == pod.name) return Status(Code::kUnschedulable, "no room in Probe");
    return Status();
  }
  void unreserve(const Pod&, const ClusterState&, NodeId, CycleState&, Handle&) override {}
  PermitDecision permit(const Pod& pod, NodeId, CycleState&, Handle& handle) override {
    int waiting = 0;
    handle.iterate_over_waiting_pods([&](WaitingPod&) { ++waiting; });
    log_->push_back(pod.name + " " + std::to_string(waiting));
    return {};
  }

 private:
  std::vector<std::string>* log_;
  std::vector<std::string> reject_;
};

// Members 0..2 wait at Coscheduling's Permit (3 already waiting when the 4th arrives); a member that
// fails Reserve takes the gang back: the waiting ones are rejected and the state is as before.
TEST(GangPlacementTest, MembersWaitAtPermitAndARejectionTakesTheGangBack) {
  for (const bool reject : {false, true}) {
    ClusterState state({make_node("n1", 64000, 512 * 1024, 8), make_node("n2", 64000, 512 * 1024, 8), make_node("n3", 64000, 512 * 1024, 8),
                        make_node("n4", 64000, 512 * 1024, 8)});
    std::vector<std::string> log;
    Profile profile = make_policy("bestfit", PolicyContext{nullptr, state.gpu_models(), &state});
    auto probe = std::make_shared<Probe>(&log, reject ? std::vector<std::string>{"j1-w2"} : std::vector<std::string>{});
    profile.reserves.push_back(probe);
    profile.permits.push_back(probe);
    Scheduler scheduler(std::move(profile), {});
    GoRand rng(1);
    const testing::StateSnapshot before = testing::state_snapshot(state);
    const GangPlacement p = place_gang(scheduler, state, rng, gang("j1", {8, 8, 8, 8}, 4));
    EXPECT_EQ(scheduler.waiting_pod_count(), 0u);
    if (!reject) {
      EXPECT_TRUE(p.placed);
      EXPECT_EQ(log, (std::vector<std::string>{"j1-w0 0", "j1-w1 1", "j1-w2 2", "j1-w3 3"}));
      EXPECT_EQ(bound_of(state, "j1"), 4);
    } else {
      EXPECT_FALSE(p.placed);
      EXPECT_EQ(p.reason, "pod default/j1-w2: no room in Probe");
      EXPECT_EQ(log, (std::vector<std::string>{"j1-w0 0", "j1-w1 1"}));
      EXPECT_EQ(testing::state_snapshot(state), before);
      EXPECT_EQ(node_names(state, p.nodes), (std::vector<std::string>{"-", "-", "-", "-"}));
    }
  }
}

// S02: A has 5 GPUs free, B 3. Y (5 GPUs) can only go to A, so X (3) must go to B; with either role
// listed first, under every seed (random policy: the tie-breaks vary) and a packing policy.
TEST(GangPlacementTest, S02RoleOrderDoesNotMatter) {
  for (const std::string policy : {"random", "bestfit", "leastallocated"}) {
    for (const bool x_first : {true, false}) {
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        ClusterState state({make_node("A", 64000, 512 * 1024, 8), make_node("B", 64000, 512 * 1024, 8)});
        state.allocate(0, worker("used-a", 3), {.gpus = {0, 1, 2}});
        state.allocate(1, worker("used-b", 5), {.gpus = {0, 1, 2, 3, 4}});
        Scheduler scheduler = policy_scheduler(policy, state);
        GoRand rng(seed);
        GangRequest g;
        g.name = "job";
        g.min_member = 2;
        const Pod x = worker("x", 3), y = worker("y", 5);
        g.pods = x_first ? std::vector<Pod>{x, y} : std::vector<Pod>{y, x};
        const GangPlacement p = place_gang(scheduler, state, rng, g);
        ASSERT_TRUE(p.placed) << policy << " seed " << seed << ": " << p.reason;
        const std::vector<std::string> want = x_first ? std::vector<std::string>{"B", "A"} : std::vector<std::string>{"A", "B"};
        EXPECT_EQ(node_names(state, p.nodes), want) << policy << " seed " << seed;
        EXPECT_EQ(state.gpu_free_milli_total(0) + state.gpu_free_milli_total(1), 0);
        expect_usage_is_sum_of_pods(state);
      }
    }
  }
}

// Only the backtracking finds it: A 8 GPUs free, B 4 free (labelled zone b); p and q 4 GPUs each, r
// 4 GPUs confined to zone b and last (less CPU). BestFit puts p on B (fewest free), q on A, and r has
// no room; the search moves p to A, where q follows, and r takes B. Without backtracking steps the
// gang is not placed (r's FitError); a dry run finds the same nodes and leaves no trace.
TEST(GangPlacementTest, BacktrackingFindsWhatGreedyMisses) {
  Node b = make_node("B", 64000, 512 * 1024, 8);
  b.labels = {{"zone", "b"}};
  ClusterState state({make_node("A", 64000, 512 * 1024, 8), b});
  state.allocate(1, worker("used-b", 4), {.gpus = {0, 1, 2, 3}});
  Scheduler scheduler = policy_scheduler("bestfit", state);
  GoRand rng(1);
  GangRequest g;
  g.name = "job";
  g.pods = {make_pod("p", 2000, 1024, 4, 1000), make_pod("q", 2000, 1024, 4, 1000), make_pod("r", 1000, 1024, 4, 1000)};
  g.pods[2].constraints.node_selector = {{"zone", "b"}};
  const testing::StateSnapshot before = testing::state_snapshot(state);
  const GangPlacement none = place_gang(scheduler, state, rng, g, {.commit = true, .max_backtrack_steps = 0});
  EXPECT_FALSE(none.placed);
  EXPECT_EQ(none.reason, "pod default/r: 0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node "
                         "affinity/selector.");
  EXPECT_EQ(testing::state_snapshot(state), before);
  const GangPlacement dry = place_gang(scheduler, state, rng, g, {.commit = false});
  EXPECT_TRUE(dry.placed);
  EXPECT_EQ(node_names(state, dry.nodes), (std::vector<std::string>{"A", "A", "B"}));
  EXPECT_EQ(testing::state_snapshot(state), before);
  const GangPlacement p = place_gang(scheduler, state, rng, g);
  ASSERT_TRUE(p.placed) << p.reason;
  EXPECT_EQ(node_names(state, p.nodes), (std::vector<std::string>{"A", "A", "B"}));
  EXPECT_EQ(p.devices[0].gpus, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.devices[1].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(p.devices[2].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(bound_of(state, "job"), 3);
  expect_usage_is_sum_of_pods(state);
}

// Randomized: small clusters, competing gangs; place the pending ones in order, finish a random
// running one, repeat. Never a partly bound gang, never a pod left at Permit, a failed attempt leaves
// the state as it was, and when stuck (nothing runs) no pending gang fits alone (dry run).
TEST(GangPlacementTest, RandomizedNoPartialHoldNoDeadlock) {
  const std::vector<std::string> policies = {"bestfit", "random", "dotprod", "leastallocated"};
  int placed_total = 0, stuck_runs = 0, optional_left_out = 0;
  for (uint64_t run = 0; run < 1000; ++run) {
    std::mt19937_64 gen(run);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
    std::vector<Node> nodes;
    const int node_count = uniform(2, 6);
    for (int i = 0; i < node_count; ++i) nodes.push_back(make_node("n" + std::to_string(i), 64000, 512 * 1024, uniform(0, 1) ? 8 : 4));
    ClusterState state(nodes);
    for (NodeId n = 0; n < state.node_count(); ++n) {
      const int used = uniform(0, 2) == 0 ? uniform(1, state.node(n).gpu_count - 1) : 0;
      DeviceAssignment d;
      for (int g = 0; g < used; ++g) d.gpus.push_back(g);
      if (used > 0) state.allocate(n, worker("pre-" + std::to_string(n), used), d);
    }
    std::vector<GangRequest> gangs;
    const int gang_count = uniform(2, 5);
    for (int j = 0; j < gang_count; ++j) {
      std::vector<int32_t> gpus;
      const int pods = uniform(1, 4);
      for (int p = 0; p < pods; ++p) gpus.push_back(std::vector<int32_t>{1, 2, 4, 8}[static_cast<size_t>(uniform(0, 3))]);
      gangs.push_back(gang("g" + std::to_string(j), gpus, uniform(0, pods)));
    }
    const std::string& policy = policies[run % policies.size()];
    Scheduler scheduler = policy_scheduler(policy, state);
    GoRand rng(run + 1);
    std::vector<int> phase(gangs.size(), 0);  // 0 pending, 1 running, 2 done
    auto need = [&](size_t j) { return gangs[j].min_member == 0 ? static_cast<int>(gangs[j].pods.size()) : gangs[j].min_member; };
    auto check_all = [&](const std::string& step) {
      for (size_t j = 0; j < gangs.size(); ++j) {
        const int b = bound_of(state, gangs[j].name);
        if (phase[j] == 1) ASSERT_GE(b, need(j)) << "run " << run << " " << step << " gang " << j;
        else ASSERT_EQ(b, 0) << "run " << run << " " << step << " gang " << j;
      }
      ASSERT_EQ(scheduler.waiting_pod_count(), 0u);
      expect_usage_is_sum_of_pods(state);
    };
    for (int round = 0; round < 100; ++round) {
      for (size_t j = 0; j < gangs.size(); ++j) {
        if (phase[j] != 0) continue;
        const testing::StateSnapshot before = testing::state_snapshot(state);
        const GangPlacement p = place_gang(scheduler, state, rng, gangs[j]);
        if (p.placed) {
          phase[j] = 1;
          ++placed_total;
          int placed_pods = 0;
          for (const NodeId n : p.nodes) placed_pods += n != kNoNode;
          ASSERT_EQ(bound_of(state, gangs[j].name), placed_pods);
          optional_left_out += static_cast<int>(gangs[j].pods.size()) - placed_pods;
        } else {
          ASSERT_FALSE(p.reason.empty());
          ASSERT_EQ(testing::state_snapshot(state), before) << "run " << run << " gang " << j;
        }
        check_all("after placing");
      }
      std::vector<size_t> running;
      for (size_t j = 0; j < gangs.size(); ++j)
        if (phase[j] == 1) running.push_back(j);
      if (running.empty()) break;
      const size_t j = running[static_cast<size_t>(uniform(0, static_cast<int>(running.size()) - 1))];
      finish(state, gangs[j].name);
      phase[j] = 2;
      check_all("after finishing");
    }
    bool stuck = false;
    for (size_t j = 0; j < gangs.size(); ++j) {
      if (phase[j] == 1) FAIL() << "run " << run << ": gang " << j << " still running after 100 rounds";
      if (phase[j] != 0) continue;
      stuck = true;
      const testing::StateSnapshot before = testing::state_snapshot(state);
      const GangPlacement dry = place_gang(scheduler, state, rng, gangs[j], {.commit = false});
      EXPECT_FALSE(dry.placed) << "run " << run << ": stuck, yet gang " << j << " fits alone";
      EXPECT_EQ(testing::state_snapshot(state), before);
    }
    stuck_runs += stuck;
  }
  // The generator gives both outcomes often (figures of this seed sequence).
  EXPECT_GT(placed_total, 2000);
  EXPECT_GT(stuck_runs, 50);
  EXPECT_GT(optional_left_out, 0);
  RecordProperty("placed", placed_total);
  RecordProperty("stuck_runs", stuck_runs);
  std::printf("placed %d gangs, %d runs with a gang that never fits, %d optional pods left out\n", placed_total, stuck_runs, optional_left_out);
}

// Topology. Racks r1 (cliques c1: a1 a2; c2: b1 b2, b1 with 4 GPUs used) and r2 (c3: d1 d2 d3;
// c4: e1 e2 e3, e1 with 2 used). Free GPUs per clique: c2 12, c1 16, c4 22, c3 24. A 2 x 8-GPU
// gang with required clique: c2 cannot hold it (b1 has 4 free), c1 can and has the fewest free.
ClusterState topology_cluster() {
  auto node = [](const std::string& name, const std::string& rack, const std::string& clique) {
    Node n = make_node(name, 64000, 512 * 1024, 8, "H100");
    n.labels = {{kRack, rack}, {kClique, clique}};
    return n;
  };
  ClusterState s({node("a1", "r1", "c1"), node("a2", "r1", "c1"), node("b1", "r1", "c2"), node("b2", "r1", "c2"), node("d1", "r2", "c3"),
                  node("d2", "r2", "c3"), node("d3", "r2", "c3"), node("e1", "r2", "c4"), node("e2", "r2", "c4"), node("e3", "r2", "c4")});
  s.allocate(2, worker("used-b1", 4), {.gpus = {0, 1, 2, 3}});
  s.allocate(7, worker("used-e1", 2), {.gpus = {0, 1}});
  return s;
}

GangRequest topo_gang(const std::string& name, int pods, GangTopology::Mode mode, int32_t level) {
  GangRequest g = gang(name, std::vector<int32_t>(static_cast<size_t>(pods), 8), 0);
  g.levels.labels = {kRack, kClique};
  g.topology = {mode, level};
  return g;
}

TEST(GangPlacementTest, RequiredCliqueGoesToTheBestFittingClique) {
  for (const std::string policy : {"bestfit", "leastallocated", "random"}) {
    ClusterState state = topology_cluster();
    Scheduler scheduler = policy_scheduler(policy, state);
    GoRand rng(3);
    const GangPlacement p = place_gang(scheduler, state, rng, topo_gang("train", 2, GangTopology::Mode::kRequired, 1));
    ASSERT_TRUE(p.placed) << p.reason;
    EXPECT_EQ(p.domain, "c1");
    EXPECT_EQ(p.domain_level, 1);
    std::vector<std::string> names = node_names(state, p.nodes);
    std::sort(names.begin(), names.end());  // random: either pod may take either node
    EXPECT_EQ(names, (std::vector<std::string>{"a1", "a2"})) << policy;
    EXPECT_EQ(p.spans, (std::vector<int32_t>{1, 1}));
  }
}

// With d1 full, no clique has three free nodes (c1: a1 a2; c2: b2; c3: d2 d3; c4: e2 e3), so a
// 3 x 8-GPU gang with required clique fails, naming the level, and leaves no trace. Preferred clique
// falls back to the rack level: r1 (28 free GPUs: a1 a2 b2 free, b1 4) and r2 (38: d2 d3 e2 e3,
// e1 6) both hold it; best fit picks r1. Then 10 x 4 GPUs, preferred rack: r1 has room for 1 (b1),
// r2 for 9 (2 on each free node, 1 on e1): only unconstrained, over both racks and cliques c2 c3 c4.
TEST(GangPlacementTest, PreferredFallsBackALevelRequiredFailsNamingTheLevel) {
  ClusterState state = topology_cluster();
  state.allocate(4, worker("used-d1", 8), {.gpus = {0, 1, 2, 3, 4, 5, 6, 7}});
  Scheduler scheduler = policy_scheduler("bestfit", state);
  GoRand rng(5);
  const testing::StateSnapshot before = testing::state_snapshot(state);
  const GangPlacement req = place_gang(scheduler, state, rng, topo_gang("big", 3, GangTopology::Mode::kRequired, 1));
  EXPECT_FALSE(req.placed);
  EXPECT_EQ(req.reason, "no domain of nvidia.com/gpu.clique can hold 3 pods: none of its 4 domains fits them");
  EXPECT_EQ(req.domain, "");
  EXPECT_EQ(req.spans, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(testing::state_snapshot(state), before);
  EXPECT_EQ(scheduler.waiting_pod_count(), 0u);

  const GangPlacement pref = place_gang(scheduler, state, rng, topo_gang("big", 3, GangTopology::Mode::kPreferred, 1));
  ASSERT_TRUE(pref.placed) << pref.reason;
  EXPECT_EQ(pref.domain, "r1");
  EXPECT_EQ(pref.domain_level, 0);
  EXPECT_EQ(node_names(state, pref.nodes), (std::vector<std::string>{"a1", "a2", "b2"}));
  EXPECT_EQ(pref.spans, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(bound_of(state, "big"), 3);

  GangRequest more = gang("more", std::vector<int32_t>(10, 4), 0);
  more.levels.labels = {kRack, kClique};
  more.topology = {GangTopology::Mode::kPreferred, 0};
  const GangPlacement free = place_gang(scheduler, state, rng, more);
  ASSERT_TRUE(free.placed) << free.reason;
  EXPECT_EQ(free.domain, "");
  EXPECT_EQ(free.domain_level, -1);
  EXPECT_EQ(free.spans, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(state.gpu_free_milli_total(2) + state.gpu_free_milli_total(7), 2000);  // b1 full, e1 2 left
  expect_usage_is_sum_of_pods(state);
}

TEST(GangPlacementTest, TopologySpans) {
  ClusterState state = topology_cluster();
  Node bare = make_node("x", 64000, 512 * 1024, 8);
  state.add_node(bare);
  const TopologyLevels levels{{kRack, kClique}};
  EXPECT_EQ(topology_spans(state, levels, {0, 1}), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(topology_spans(state, levels, {0, 2, kNoNode}), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(topology_spans(state, levels, {0, 4, 7, 9}), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(topology_spans(state, levels, {10}), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(topology_spans(state, levels, {}), (std::vector<int32_t>{0, 0}));
  GoRand rng(1);
  Scheduler scheduler = policy_scheduler("bestfit", state);
  GangRequest g = topo_gang("g", 1, GangTopology::Mode::kRequired, 2);
  EXPECT_THROW(place_gang(scheduler, state, rng, g), std::invalid_argument);
}

// A clique with enough free GPUs in total but not on one node per pod is searched and fails: the
// reason names the level and the first pod that found no node in the first domain searched.
TEST(GangPlacementTest, RequiredSearchedAndFailedNamesThePod) {
  ClusterState state = topology_cluster();
  state.allocate(0, worker("used-a1", 4), {.gpus = {0, 1, 2, 3}});
  state.allocate(1, worker("used-a2", 4), {.gpus = {0, 1, 2, 3}});
  for (const NodeId n : {4, 5, 6, 8, 9}) state.allocate(n, worker("full-" + std::to_string(n), 8), {.gpus = {0, 1, 2, 3, 4, 5, 6, 7}});
  // Free: c3 0, c4 6 (e1), c1 8 (a1 4, a2 4), c2 12 (b1 4, b2 8). Pods 2 x 6 GPUs: 12 needed, so
  // only c2 is searched: the first pod takes b2 (2 left), the second finds no node among c2's two.
  Scheduler scheduler = policy_scheduler("bestfit", state);
  GoRand rng(1);
  const testing::StateSnapshot before = testing::state_snapshot(state);
  GangRequest g = gang("six", {6, 6}, 2);
  g.levels.labels = {kRack, kClique};
  g.topology = {GangTopology::Mode::kRequired, 1};
  const GangPlacement p = place_gang(scheduler, state, rng, g);
  EXPECT_FALSE(p.placed);
  EXPECT_EQ(p.reason, "no domain of nvidia.com/gpu.clique can hold 2 pods: none of its 4 domains fits them; first failure: pod "
                      "default/six-w1: 0/10 nodes are available: 2 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node "
                      "affinity/selector.");
  EXPECT_EQ(testing::state_snapshot(state), before);
}

// The plugin alone: inert without the label, PreFilter's sibling count, "PodGroup not found" at
// Permit for an unregistered group.
TEST(CoschedulingTest, PreFilterPermitAndInertness) {
  ClusterState state({make_node("n1", 64000, 512 * 1024, 8)});
  Profile profile = make_policy("bestfit", PolicyContext{nullptr, state.gpu_models(), &state});
  auto* coscheduling = dynamic_cast<Coscheduling*>(profile.permits.front().get());
  Scheduler scheduler(std::move(profile), {});
  GoRand rng(1);
  EXPECT_TRUE(scheduler.schedule_one(worker("solo", 1), state, rng).status.is_success());
  Pod p = worker("m0", 1);
  p.labels = {{kPodGroupLabel, "pg"}};
  ScheduleResult r = scheduler.schedule_one(p, state, rng);
  EXPECT_EQ(r.status.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(r.status.message(), "PodGroup not found");
  PodGroup g;
  g.name = "pg";
  g.min_member = 3;
  coscheduling->set_pod_group(g, 2);
  r = scheduler.schedule_one(p, state, rng);
  EXPECT_EQ(r.status.code(), Code::kUnschedulable);
  EXPECT_EQ(r.status.message(), "pre-filter pod m0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3");
  coscheduling->set_pod_group(g, 3);
  r = scheduler.schedule_one(p, state, rng);
  EXPECT_TRUE(r.status.is_wait());
  EXPECT_EQ(state.pods_on(0).size(), 2u);
  scheduler.advance_clock(state, 60);  // scheduleTimeoutSeconds default 60
  const auto outcomes = scheduler.take_permit_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].status.message(), "rejected due to timeout after waiting 60s at plugin Coscheduling");
  EXPECT_EQ(state.pods_on(0).size(), 1u);
}

}  // namespace
}  // namespace gpufleet::sched
