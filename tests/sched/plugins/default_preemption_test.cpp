// DefaultPreemption as the profile's PostFilter gives what preemption run by hand gave before it
// moved into the cycle: the same nominated node, victims, PDB violations and message, and the same
// ClusterState once the pod is bound on its nominated node. Each case runs both ways on copies of
// one state: (a) Scheduler::schedule_one with DefaultPreemption at PostFilter, then schedule_cycle
// with the nomination; (b) decide(), preempt(), evict_victims(), decide() with the nomination and
// assume() (the old `place` flow).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod_disruption_budget.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/default_preemption.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using Gpus = std::vector<int32_t>;

Node node(const std::string& name, int64_t cpu_milli, int32_t gpus = 0) {
  Node n = testing::make_node(name, cpu_milli, 65536, gpus);
  n.labels.emplace_back(std::string(kHostnameLabel), name);
  return n;
}

Pod pod(const std::string& name, int64_t cpu_milli, int32_t priority, const std::string& app = "") {
  Pod p = testing::make_pod(name, cpu_milli, 100, 0, 0);
  p.namespace_name = "default";
  p.priority = priority;
  if (!app.empty()) p.labels = {{"app", app}};
  return p;
}

Profile plain_profile() {
  return testing::profile_of("preemption",
                             {std::make_shared<TaintToleration>(), std::make_shared<NodeAffinity>(), std::make_shared<NodeResourcesFit>(),
                              std::make_shared<GpuShareFit>(), std::make_shared<InterPodAffinity>()},
                             std::make_shared<BestFitScore>(), std::make_shared<BestFitGpuSelector>());
}

using Snapshot = std::vector<std::tuple<int64_t, int64_t, std::vector<int32_t>, std::vector<std::tuple<std::string, Gpus, uint64_t>>>>;
Snapshot snapshot(const ClusterState& s) {
  Snapshot out;
  for (NodeId n = 0; n < s.node_count(); ++n) {
    std::vector<std::tuple<std::string, Gpus, uint64_t>> pods;
    for (const BoundPod& b : s.pods_on(n)) pods.emplace_back(b.pod.name, b.gpus, b.bind_seq);
    const auto free = s.gpu_free_milli(n);
    out.emplace_back(s.cpu_free_milli(n), s.memory_free_bytes(n), Gpus(free.begin(), free.end()), pods);
  }
  return out;
}

std::vector<std::string> names(const std::vector<BoundPod>& pods) {
  std::vector<std::string> out;
  for (const BoundPod& b : pods) out.push_back(b.pod.name);
  return out;
}

struct Case {
  const char* what;
  std::vector<Node> nodes;
  std::vector<std::pair<NodeId, Pod>> bound;  // CPU-only pods, bound in order
  Pod pod;
  std::vector<PodDisruptionBudget> pdbs;
  // Hand-computed: the nominated node (kNoNode: none) and victims, or the PostFilter message.
  NodeId node;
  std::vector<std::string> victims;
  std::string message;
};

PodDisruptionBudget min_available(const std::string& app, int32_t n) {
  PodDisruptionBudget b;
  b.name = app;
  b.has_selector = true;
  b.selector.match_labels = {{"app", app}};
  b.min_available = IntOrPercent{n, false};
  return b;
}

std::vector<Case> cases() {
  Pod never = pod("never", 2000, 100);
  never.preempt_lower_priority = false;
  Pod anti = pod("anti", 1000, 10, "web");
  PodAffinityTerm no_db;
  no_db.label_selector.match_labels = {{"app", "db"}};
  no_db.topology_key = std::string(kHostnameLabel);
  anti.constraints.required_anti_affinity = {no_db};
  return {
      // The lower-priority b (2000m) makes room; a has the pod's own priority and stays.
      {"one victim", {node("n0", 4000)}, {{0, pod("a", 2000, 10)}, {0, pod("b", 2000, 5)}}, pod("q", 2000, 10), {}, 0, {"b"}, ""},
      {"equal priority is never a victim", {node("n0", 4000)}, {{0, pod("a", 2000, 10)}, {0, pod("b", 2000, 5)}}, pod("p", 3000, 10), {},
       kNoNode, {}, "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
      {"preemptionPolicy Never", {node("n0", 4000)}, {{0, pod("low", 4000, 0)}}, never, {}, kNoNode, {},
       "preemption: not eligible due to preemptionPolicy=Never."},
      // n0 6000m with p1, p2, p3 (prio 1..3): a 3000m pod reprieves p3 and takes p2 and p1.
      {"reprieve", {node("n0", 6000)}, {{0, pod("p1", 2000, 1)}, {0, pod("p2", 2000, 2)}, {0, pod("p3", 2000, 3)}}, pod("y", 3000, 10), {},
       0, {"p2", "p1"}, ""},
      // p1 is under a PDB with no disruption left: reprieved first, so p3 and p2 go instead.
      {"PDB", {node("n0", 6000)}, {{0, pod("p1", 2000, 1, "web")}, {0, pod("p2", 2000, 2)}, {0, pod("p3", 2000, 3)}}, pod("y", 3000, 10),
       {min_available("web", 1)}, 0, {"p3", "p2"}, ""},
      // n0 holds a low-priority db pod the incoming pod's hostname anti-affinity refuses; n1 is full
      // of higher-priority pods: evicting db on n0 is the way.
      {"anti-affinity", {node("n0", 4000), node("n1", 1000)}, {{0, pod("db", 1000, 1, "db")}, {1, pod("high", 1000, 100)}}, anti, {}, 0,
       {"db"}, ""},
      // Best node by the rules: n1's victim has the lower priority.
      {"lowest highest-victim priority", {node("n0", 2000), node("n1", 2000)}, {{0, pod("v5", 2000, 5)}, {1, pod("v3", 2000, 3)}},
       pod("p", 2000, 10), {}, 1, {"v3"}, ""},
  };
}

TEST(DefaultPreemptionPostFilter, EqualsPreemptionRunByHand) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    ClusterState base(c.nodes);
    for (const auto& [n, p] : c.bound) base.allocate(n, p, {});
    std::vector<Pod> workload;
    for (const auto& [n, p] : c.bound) workload.push_back(p);
    workload.push_back(c.pod);
    std::vector<uint32_t> ranks(base.node_count());
    for (uint32_t i = 0; i < ranks.size(); ++i) ranks[i] = i;

    // (a) PostFilter in the cycle.
    ClusterState a = base;
    Profile with = plain_profile();
    with.post_filters.push_back(std::make_shared<DefaultPreemption>(c.pdbs, workload));
    Scheduler sa(with, ranks);
    GoRand rng_a(1);
    const ScheduleResult first = sa.schedule_one(c.pod, a, rng_a);
    ASSERT_FALSE(first.scheduled());
    EXPECT_EQ(first.post_filter.nominated_node, c.node);
    EXPECT_EQ(names(first.post_filter.victims), c.victims);
    EXPECT_EQ(first.post_filter_status.is_success(), c.node != kNoNode);
    EXPECT_EQ(first.post_filter_status.message(), c.message);
    if (c.node != kNoNode) {
      EXPECT_EQ(first.post_filter_status.plugin(), "DefaultPreemption");
    }

    // (b) By hand, as `place` did.
    ClusterState b = base;
    Scheduler sb(plain_profile(), ranks);
    GoRand rng_b(1);
    const ScheduleResult failed = sb.decide(c.pod, b, rng_b);
    const PreemptionResult found = preempt(c.pod, b, PreemptionInputs{sb.profile().filters, failed.node_to_status, c.pdbs, workload, ranks});
    EXPECT_EQ(found.node, first.post_filter.nominated_node);
    EXPECT_EQ(names(found.victims), names(first.post_filter.victims));
    EXPECT_EQ(found.pdb_violations, first.post_filter.pdb_violations);
    EXPECT_EQ(found.candidates, first.post_filter.candidates);
    if (!found.found()) {
      EXPECT_EQ(found.message, first.post_filter_status.message());
      EXPECT_EQ(snapshot(a), snapshot(base));  // nothing evicted
      continue;
    }
    evict_victims(b, found);
    EXPECT_EQ(snapshot(a), snapshot(b));  // the plugin evicted the same pods

    // The next cycle with the nomination binds the pod on that node, both ways.
    const ScheduleResult bound_a = sa.schedule_cycle(c.pod, a, rng_a, first.post_filter.nominated_node);
    const ScheduleResult bound_b = sb.decide(c.pod, b, rng_b, found.node);
    Scheduler::assume(c.pod, b, bound_b);
    EXPECT_EQ(bound_a.node, c.node);
    EXPECT_EQ(bound_b.node, c.node);
    EXPECT_EQ(snapshot(a), snapshot(b));
  }
}

}  // namespace
}  // namespace gpufleet::sched
