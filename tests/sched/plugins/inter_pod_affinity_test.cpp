// InterPodAffinity, required anti-affinity (kube interpodaffinity/filtering.go): hostname and zone
// terms, the symmetric rule (existing pods' terms), namespaces, self anti-affinity of a Deployment,
// nodes without the topology label, AddPod/RemovePod, and the Scheduler never serving a stale cached
// answer for it. Every expected code below is worked out by hand from the rules in
// sched/plugins/inter_pod_affinity.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "sched/framework/filter_cycle.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr FilterCode kFits = FilterCode::kFits;
constexpr FilterCode kAnti = InterPodAffinity::kAntiAffinityRulesNotMatch;
constexpr FilterCode kExisting = InterPodAffinity::kExistingAntiAffinityRulesNotMatch;

Node host(const std::string& name, const std::string& zone, int32_t gpus = 0) {
  Node n = make_node(name, 8000, 16384, gpus);
  n.labels.emplace_back(std::string(kHostnameLabel), "host-" + name);
  if (!zone.empty()) n.labels.emplace_back(kZone, zone);
  return n;
}

// n0, n1 in zone a; n2 in zone b; n3 without a zone label.
std::vector<Node> four_nodes() { return {host("n0", "a"), host("n1", "a"), host("n2", "b"), host("n3", "")}; }

Pod labeled(const std::string& name, const std::string& app, const std::string& ns = "default") {
  Pod p = make_pod(name, 500, 512, 0, 0);
  p.namespace_name = ns;
  p.labels = {{"app", app}};
  return p;
}

PodAffinityTerm term(const std::string& key, const std::string& app, std::vector<std::string> namespaces = {}) {
  PodAffinityTerm t;
  t.label_selector.match_labels = {{"app", app}};
  t.namespaces = std::move(namespaces);
  t.topology_key = key;
  return t;
}

Pod with_term(Pod p, PodAffinityTerm t) {
  p.constraints.required_anti_affinity.push_back(std::move(t));
  return p;
}

// The plugin's code on every node, through PreFilter once (FilterCycle) and stand-alone filter().
std::vector<FilterCode> codes(const Pod& pod, const ClusterState& state) {
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {std::make_shared<InterPodAffinity>()};
  const FilterCycle cycle(filters, pod, state);
  std::vector<FilterCode> out;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    out.push_back(cycle.run(state, n).code);
    EXPECT_EQ(filters[0]->filter(pod, state, n), out.back()) << "node " << n;
  }
  return out;
}

Profile anti_affinity_policy(const std::string& base = "bestfit") {
  Profile p = make_policy(base, PolicyContext{});
  p.filters.push_back(std::make_shared<InterPodAffinity>());
  return p;
}

TEST(InterPodAffinityTest, ReasonsAreKubes) {
  EXPECT_EQ(kAnti.reason(), "node(s) didn't match pod anti-affinity rules");
  EXPECT_EQ(kExisting.reason(), "node(s) didn't satisfy existing pods anti-affinity rules");
}

// db-0 on n0. A hostname term against app=db blocks only n0.
TEST(InterPodAffinityTest, HostnameTermBlocksTheHost) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db"), {});
  const Pod pod = with_term(labeled("x", "web"), term(std::string(kHostnameLabel), "db"));
  EXPECT_EQ(codes(pod, s), (std::vector<FilterCode>{kAnti, kFits, kFits, kFits}));
}

// db-0 on n0 (zone a). A zone term blocks n0 and n1 (zone a), not n2 (zone b) nor n3 (no zone label).
TEST(InterPodAffinityTest, ZoneTermBlocksTheZoneButNotUnlabelledNodes) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db"), {});
  const Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  EXPECT_EQ(codes(pod, s), (std::vector<FilterCode>{kAnti, kAnti, kFits, kFits}));
}

// A matching pod on n3, which has no zone label, is in no zone: it blocks nothing.
TEST(InterPodAffinityTest, PodOnNodeWithoutTheLabelBlocksNothing) {
  ClusterState s(four_nodes());
  s.allocate(3, labeled("db-0", "db"), {});
  const Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  EXPECT_EQ(codes(pod, s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
}

// guard on n1 refuses app=batch in its zone (a): a batch pod without terms of its own is kept out of
// n0 and n1; a web pod is not concerned (PreFilter skips: nothing to check).
TEST(InterPodAffinityTest, ExistingPodsTermsAreSymmetric) {
  ClusterState s(four_nodes());
  s.allocate(1, with_term(labeled("guard", "guard"), term(kZone, "batch")), {});
  EXPECT_EQ(codes(labeled("b", "batch"), s), (std::vector<FilterCode>{kExisting, kExisting, kFits, kFits}));
  EXPECT_EQ(codes(labeled("w", "web"), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  EXPECT_EQ(InterPodAffinity().pre_filter(labeled("w", "web"), s), nullptr);
  // A guard on n3 (no zone label) guards no zone.
  ClusterState s3(four_nodes());
  s3.allocate(3, with_term(labeled("guard", "guard"), term(kZone, "batch")), {});
  EXPECT_EQ(codes(labeled("b", "batch"), s3), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
}

// Both rules at once: the pod's own term is checked first (kube's order).
TEST(InterPodAffinityTest, OwnTermsAreCheckedBeforeExistingOnes) {
  ClusterState s(four_nodes());
  s.allocate(0, with_term(labeled("guard", "guard"), term(kZone, "batch")), {});
  const Pod pod = with_term(labeled("b", "batch"), term(std::string(kHostnameLabel), "guard"));
  EXPECT_EQ(codes(pod, s), (std::vector<FilterCode>{kAnti, kExisting, kFits, kFits}));
}

TEST(InterPodAffinityTest, NamespacesOfTheTerm) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db", "prod"), {});
  const std::string hostname(kHostnameLabel);
  // No namespaces: the incoming pod's own ("default"); db-0 is in prod.
  EXPECT_EQ(codes(with_term(labeled("x", "web"), term(hostname, "db")), s),
            (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  EXPECT_EQ(codes(with_term(labeled("x", "web"), term(hostname, "db", {"prod"})), s),
            (std::vector<FilterCode>{kAnti, kFits, kFits, kFits}));
  EXPECT_EQ(codes(with_term(labeled("x", "web"), term(hostname, "db", {"dev", "default"})), s),
            (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  // The same pod in prod: its own namespace now matches.
  EXPECT_EQ(codes(with_term(labeled("x", "web", "prod"), term(hostname, "db")), s),
            (std::vector<FilterCode>{kAnti, kFits, kFits, kFits}));
}

// An existing pod's term without namespaces means the existing pod's namespace.
TEST(InterPodAffinityTest, ExistingTermDefaultsToItsOwnersNamespace) {
  ClusterState s(four_nodes());
  s.allocate(0, with_term(labeled("guard", "guard", "prod"), term(std::string(kHostnameLabel), "batch")), {});
  EXPECT_EQ(codes(labeled("b", "batch", "default"), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  EXPECT_EQ(codes(labeled("b", "batch", "prod"), s), (std::vector<FilterCode>{kExisting, kFits, kFits, kFits}));
}

// openb pods have no namespace: it counts as "default".
TEST(InterPodAffinityTest, EmptyNamespaceIsDefault) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db", ""), {});
  EXPECT_EQ(codes(with_term(labeled("x", "web", "default"), term(std::string(kHostnameLabel), "db")), s),
            (std::vector<FilterCode>{kAnti, kFits, kFits, kFits}));
}

// A term without labelSelector (nil) matches no pod; an empty selector matches every pod of the
// namespace, so it blocks every host that runs one (n0 and n2 here).
TEST(InterPodAffinityTest, NilSelectorMatchesNothingEmptyMatchesAll) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db"), {});
  s.allocate(2, labeled("web-0", "web"), {});
  PodAffinityTerm nil = term(std::string(kHostnameLabel), "db");
  nil.label_selector = {};
  nil.has_label_selector = false;
  EXPECT_EQ(codes(with_term(labeled("x", "x"), nil), s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  PodAffinityTerm all = nil;
  all.has_label_selector = true;
  EXPECT_EQ(codes(with_term(labeled("x", "x"), all), s), (std::vector<FilterCode>{kAnti, kFits, kAnti, kFits}));
}

// Nodes without labels: a hostname term still sees the node (its name stands in for the
// kubernetes.io/hostname label); a zone term does not.
TEST(InterPodAffinityTest, HostnameFallsBackToTheNodeName) {
  ClusterState s({make_node("bare-0", 8000, 16384, 0), make_node("bare-1", 8000, 16384, 0)});
  s.allocate(0, labeled("db-0", "db"), {});
  EXPECT_EQ(codes(with_term(labeled("x", "web"), term(std::string(kHostnameLabel), "db")), s),
            (std::vector<FilterCode>{kAnti, kFits}));
  EXPECT_EQ(codes(with_term(labeled("x", "web"), term(kZone, "db")), s), (std::vector<FilterCode>{kFits, kFits}));
  s.allocate(1, with_term(labeled("guard", "guard"), term(std::string(kHostnameLabel), "batch")), {});
  EXPECT_EQ(codes(labeled("b", "batch"), s), (std::vector<FilterCode>{kFits, kExisting}));
}

// A Deployment of 3 replicas with "one per host" self anti-affinity on 2 hosts: web-0 lands (it does
// not count against itself), web-1 goes to the other host, web-2 fits nowhere.
TEST(InterPodAffinityTest, SelfAntiAffinityDeployment) {
  ClusterState s({host("n0", "a"), host("n1", "a")});
  Scheduler sched(anti_affinity_policy(), {0, 1});
  GoRand rng(1);
  std::vector<Pod> replicas;
  for (int i = 0; i < 3; ++i)
    replicas.push_back(with_term(labeled("web-" + std::to_string(i), "web"), term(std::string(kHostnameLabel), "web")));
  // Equal BestFit scores on two empty equal nodes: rank 0 wins.
  EXPECT_EQ(sched.schedule_one(replicas[0], s, rng).node, 0u);
  EXPECT_EQ(sched.schedule_one(replicas[1], s, rng).node, 1u);
  const ScheduleResult r = sched.schedule_one(replicas[2], s, rng);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(testing::codes_of(r.node_to_status), (std::vector<FilterCode>{kAnti, kAnti}));
  EXPECT_EQ(testing::fit_error_of(r, replicas[2], s), "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.");
  // A pod of another app is not affected.
  EXPECT_TRUE(sched.schedule_one(labeled("other", "other"), s, rng).scheduled());
}

// The plugin runs after the cached filters, only on the nodes that passed them: a node rejected for
// CPU keeps its CPU code, even where anti-affinity would also reject it.
TEST(InterPodAffinityTest, CachedFiltersComeFirst) {
  ClusterState s({host("n0", "a"), host("n1", "a"), host("n2", "b")});
  s.allocate(0, labeled("db-0", "db"), {});
  Pod big = make_pod("filler", 7800, 0, 0, 0);
  s.allocate(1, big, {});
  Scheduler sched(anti_affinity_policy(), {0, 1, 2});
  GoRand rng(1);
  Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  pod.cpu_milli = 7600;  // n0 has 7500 free, n1 200, n2 8000
  ScheduleResult r = sched.decide(pod, s, rng);
  EXPECT_EQ(r.node, 2u);
  s.allocate(2, make_pod("filler2", 1000, 0, 0, 0), {});
  r = sched.decide(pod, s, rng);
  EXPECT_EQ(testing::codes_of(r.node_to_status), (std::vector<FilterCode>{NodeResourcesFit::kInsufficientCpu, NodeResourcesFit::kInsufficientCpu,
                                                   NodeResourcesFit::kInsufficientCpu}));
  pod.cpu_milli = 500;  // n0 7500 free (zone a has db-0), n1 200, n2 7000
  r = sched.decide(pod, s, rng);
  EXPECT_EQ(r.node, 2u);
  s.allocate(2, labeled("db-1", "db"), {});
  r = sched.decide(pod, s, rng);
  EXPECT_EQ(testing::codes_of(r.node_to_status), (std::vector<FilterCode>{kAnti, NodeResourcesFit::kInsufficientCpu, kAnti}));
  EXPECT_EQ(r.node_to_status.count(kAnti), 2);
}

// AddPod / RemovePod keep the PreFilter counts in step with the state (preemption's dry run).
TEST(InterPodAffinityTest, AddAndRemovePodUpdateTheCounts) {
  ClusterState s(four_nodes());
  s.allocate(0, labeled("db-0", "db"), {});
  s.allocate(2, with_term(labeled("guard", "guard"), term(kZone, "web")), {});
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {std::make_shared<InterPodAffinity>()};
  const Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  FilterCycle cycle(filters, pod, s);
  auto all = [&] {
    std::vector<FilterCode> out;
    for (NodeId n = 0; n < s.node_count(); ++n) out.push_back(cycle.run(s, n).code);
    return out;
  };
  EXPECT_EQ(all(), (std::vector<FilterCode>{kAnti, kAnti, kExisting, kFits}));
  const BoundPod db = s.pods_on(0)[0];
  s.release(0, db.pod);
  cycle.remove_pod(s, 0, db);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kFits, kFits, kExisting, kFits}));
  const BoundPod guard = s.pods_on(2)[0];
  s.release(2, guard.pod);
  cycle.remove_pod(s, 2, guard);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  s.rebind(2, guard);
  cycle.add_pod(s, 2, guard);
  s.rebind(0, db);
  cycle.add_pod(s, 0, db);
  EXPECT_EQ(all(), (std::vector<FilterCode>{kAnti, kAnti, kExisting, kFits}));
}

// The cache must not serve a stale answer: n1's own version does not change when a matching pod
// lands on n0, yet n1 (same zone) is no longer feasible.
TEST(InterPodAffinityTest, WarmSchedulerSeesChangesOnOtherNodesOfTheZone) {
  ClusterState s({host("n0", "a"), host("n1", "a"), host("n2", "b")});
  Scheduler sched(anti_affinity_policy(), {2, 0, 1});  // ties go to n1, then n2, then n0
  GoRand rng(1);
  const Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  EXPECT_EQ(sched.decide(pod, s, rng).node, 1u);
  const uint32_t v1 = s.version(1);
  s.allocate(0, labeled("db-0", "db"), {});
  ASSERT_EQ(s.version(1), v1);
  EXPECT_EQ(sched.decide(pod, s, rng).node, 2u);
  // And the symmetric rule: a guard against app=web in zone b.
  s.allocate(2, with_term(labeled("guard", "guard"), term(kZone, "web")), {});
  const ScheduleResult r = sched.decide(pod, s, rng);
  EXPECT_EQ(testing::codes_of(r.node_to_status), (std::vector<FilterCode>{kAnti, kAnti, kExisting}));
}

// A warm Scheduler over a whole run decides exactly like a cold one built for every pod, under
// anti-affinity of every kind (hostname and zone, own and existing terms), with releases.
// 12 nodes in 3 zones (4 GPUs on every other node); 240 pods cycling through: web (one per host),
// cache (one per zone), batch (no terms), guard (keeps batch out of its zone), plain GPU pods.
TEST(InterPodAffinityTest, WarmCacheDecidesLikeColdScheduler) {
  std::vector<Node> nodes;
  for (int i = 0; i < 12; ++i) nodes.push_back(host("n" + std::to_string(i), std::string(1, static_cast<char>('a' + i % 3)), i % 2 ? 4 : 0));
  ClusterState warm_state(nodes), cold_state(nodes);
  const std::vector<uint32_t> ranks = {5, 3, 11, 0, 7, 1, 9, 2, 10, 4, 8, 6};
  Scheduler warm(anti_affinity_policy(), ranks);
  GoRand warm_rng(7), cold_rng(7);
  const std::string hostname(kHostnameLabel);
  std::vector<std::pair<NodeId, BoundPod>> placed;
  int anti = 0, existing = 0, scheduled = 0;
  for (int i = 0; i < 240; ++i) {
    Pod p;
    switch (i % 5) {
      case 0: p = with_term(labeled("web-" + std::to_string(i), "web"), term(hostname, "web")); break;
      case 1: p = with_term(labeled("cache-" + std::to_string(i), "cache"), term(kZone, "cache")); break;
      case 2: p = labeled("batch-" + std::to_string(i), "batch"); break;
      case 3: p = with_term(labeled("guard-" + std::to_string(i), "guard"), term(kZone, "batch")); break;
      default: p = labeled("gpu-" + std::to_string(i), "gpu"); p.num_gpu = 1; p.gpu_milli = 250; break;
    }
    p.cpu_milli = 300 + 100 * (i % 7);
    SCOPED_TRACE(p.name);
    const ScheduleResult w = warm.decide(p, warm_state, warm_rng);
    Scheduler cold(anti_affinity_policy(), ranks);
    const ScheduleResult c = cold.decide(p, cold_state, cold_rng);
    ASSERT_EQ(w.node, c.node);
    ASSERT_EQ(w.gpus, c.gpus);
    ASSERT_EQ(w.score, c.score);
    ASSERT_EQ(w.node_to_status, c.node_to_status);
    anti += w.node_to_status.count(kAnti);
    existing += w.node_to_status.count(kExisting);
    if (w.scheduled()) {
      ++scheduled;
      warm_state.allocate(w.node, p, {.gpus = w.gpus});
      cold_state.allocate(c.node, p, {.gpus = c.gpus});
      placed.emplace_back(w.node, warm_state.pods_on(w.node).back());
    }
    if (i % 9 == 8 && !placed.empty()) {  // release the oldest placement from both states
      const auto [n, b] = placed.front();
      placed.erase(placed.begin());
      warm_state.release(n, b.pod);
      cold_state.release(n, b.pod);
    }
  }
  // Every kind of outcome happened.
  EXPECT_GT(scheduled, 60);
  EXPECT_LT(scheduled, 240);
  EXPECT_GT(anti, 0);
  EXPECT_GT(existing, 0);
}

// The incoming-pod counts are memoized per (namespace, terms) and follow the state's change log
// (inter_pod_affinity.h, IncomingMemo). One warm plugin, its counts for zone anti-affinity against
// app=db kept across changes on other nodes, a node replaced in its slot and a discarded dry run;
// each expected code worked out by hand (n0, n1 zone a; n2 zone b; n3 no zone).
std::vector<FilterCode> codes_with(const std::shared_ptr<const FilterPlugin>& plugin, const Pod& pod, const ClusterState& state) {
  const std::vector<std::shared_ptr<const FilterPlugin>> filters = {plugin};
  const FilterCycle cycle(filters, pod, state);
  std::vector<FilterCode> out;
  for (NodeId n = 0; n < state.node_count(); ++n) out.push_back(cycle.run(state, n).code);
  return out;
}

TEST(InterPodAffinityMemo, FollowsChangesOnOtherNodes) {
  ClusterState s(four_nodes());
  const auto plugin = std::make_shared<InterPodAffinity>();
  const Pod pod = with_term(labeled("x", "web"), term(kZone, "db"));
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  s.allocate(0, labeled("db-0", "db"), {});  // zone a holds a db pod
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kAnti, kAnti, kFits, kFits}));
  s.release(0, labeled("db-0", "db"));
  s.allocate(2, labeled("db-1", "db"), {});  // now only zone b
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kFits, kFits, kAnti, kFits}));
  // n3 (no zone) leaves; a node of zone a takes its slot and gets a db pod: zone a again.
  s.remove_node(3);
  EXPECT_EQ(s.add_node(host("n4", "a"), NodeId{3}), 3u);
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kFits, kFits, kAnti, kFits}));
  s.allocate(3, labeled("db-2", "db"), {});
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kAnti, kAnti, kAnti, kAnti}));
  {
    // A dry run releases db-1 (zone b free), then is discarded (zone b blocked again).
    auto fork = s.fork();
    s.release(2, labeled("db-1", "db"));
    EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kAnti, kAnti, kFits, kAnti}));
    fork.discard();
  }
  EXPECT_EQ(codes_with(plugin, pod, s), (std::vector<FilterCode>{kAnti, kAnti, kAnti, kAnti}));
  // Another namespace is another key: its terms match no db pod of "default".
  Pod other = with_term(labeled("y", "web", "prod"), term(kZone, "db"));
  EXPECT_EQ(codes_with(plugin, other, s), (std::vector<FilterCode>{kFits, kFits, kFits, kFits}));
  // A copy of the state is another history: counted afresh, the same answer.
  const ClusterState copy = s;
  EXPECT_EQ(codes_with(plugin, pod, copy), (std::vector<FilterCode>{kAnti, kAnti, kAnti, kAnti}));
}

// The existing pods' terms at one anti_affinity_version(): a pod with other labels than the last
// one is first checked against the distinct terms of the bound pods (inter_pod_affinity.h,
// ExistingTerms). A guard in zone b repels app=web of its namespace; later a guard of "prod" in
// zone a repels app=web of "prod". Hand-computed codes (n0, n1 zone a; n2 zone b; n3 no zone).
TEST(InterPodAffinityMemo, ExistingTermsSkipPodsTheyCannotMatch) {
  ClusterState s(four_nodes());
  s.allocate(2, with_term(labeled("guard", "guard"), term(kZone, "web")), {});
  const auto plugin = std::make_shared<InterPodAffinity>();
  const std::vector<FilterCode> none = {kFits, kFits, kFits, kFits};
  EXPECT_EQ(codes_with(plugin, labeled("b", "batch"), s), none);
  EXPECT_EQ(codes_with(plugin, labeled("w", "web"), s), (std::vector<FilterCode>{kFits, kFits, kExisting, kFits}));
  EXPECT_EQ(codes_with(plugin, labeled("b2", "batch"), s), none);
  EXPECT_EQ(codes_with(plugin, labeled("wp", "web", "prod"), s), none);  // the term's namespace is the guard's
  s.allocate(0, with_term(labeled("guard-p", "guard", "prod"), term(kZone, "web")), {});
  EXPECT_EQ(codes_with(plugin, labeled("wp", "web", "prod"), s), (std::vector<FilterCode>{kExisting, kExisting, kFits, kFits}));
  EXPECT_EQ(codes_with(plugin, labeled("w", "web"), s), (std::vector<FilterCode>{kFits, kFits, kExisting, kFits}));
  EXPECT_EQ(codes_with(plugin, labeled("b", "batch", "prod"), s), none);
  EXPECT_EQ(codes_with(plugin, labeled("wp", "web", "prod"), s), (std::vector<FilterCode>{kExisting, kExisting, kFits, kFits}));
}

// Property: over seeded random clusters with binds, releases, nodes replaced and dry runs, a warm
// plugin (memo on, more keys than it keeps) gives every node the same code as a fresh plugin
// (counts from scratch), for pods with hostname and zone anti-affinity, zone affinity, and both.
TEST(InterPodAffinityMemo, DecidesLikeAFreshPlugin) {
  const std::vector<std::string> apps = {"web", "db", "cache", "batch"};
  const std::string hostname(kHostnameLabel);
  int blocked = 0, compared = 0;
  for (int64_t seed = 1; seed <= 4; ++seed) {
    GoRand gen(seed * 104729);
    auto pick = [&gen](size_t n) { return static_cast<size_t>(gen.intn(static_cast<int64_t>(n))); };
    std::vector<Node> nodes;
    const std::vector<std::string> zones = {"a", "b", "c", ""};
    for (int i = 0; i < 24; ++i) nodes.push_back(host("n" + std::to_string(i), zones[pick(zones.size())]));
    ClusterState s(nodes);
    const auto warm = std::make_shared<InterPodAffinity>();
    int added = 0;
    auto random_pod = [&](const std::string& name) {
      Pod p = labeled(name, apps[pick(apps.size())], pick(5) == 0 ? "prod" : "default");
      p.cpu_milli = 100;
      p.memory_bytes = 0;
      const size_t kind = pick(6);
      if (kind == 1 || kind == 4) p = with_term(p, term(pick(2) ? hostname : std::string(kZone), apps[pick(apps.size())]));
      if (kind == 2 || kind == 4) {
        PodAffinityTerm t = term(kZone, apps[pick(apps.size())]);
        p.constraints.required_affinity.push_back(t);
      }
      if (kind == 3) p = with_term(p, term(kZone, apps[pick(apps.size())], {"prod", "default"}));
      return p;
    };
    for (int step = 0; step < 400; ++step) {
      SCOPED_TRACE(fmt::format("seed {} step {}", seed, step));
      const auto n = static_cast<NodeId>(pick(s.node_count()));
      switch (pick(6)) {
        case 0:
        case 1:
        case 2:  // bind
          if (s.has_node(n)) s.allocate(n, random_pod(fmt::format("p{}", step)), {});
          break;
        case 3:  // release
          if (s.has_node(n) && !s.pods_on(n).empty()) s.release(n, s.pods_on(n)[pick(s.pods_on(n).size())].pod);
          break;
        case 4:  // a node without pods replaced by one of another zone
          if (s.has_node(n) && s.pods_on(n).empty()) {
            s.remove_node(n);
            s.add_node(host(fmt::format("m{}", added++), zones[pick(zones.size())]), n);
          }
          break;
        default: {  // a dry run, discarded after the plugin saw it
          auto fork = s.fork();
          if (s.has_node(n) && !s.pods_on(n).empty()) s.release(n, s.pods_on(n).front().pod);
          const Pod q = random_pod("q");
          ASSERT_EQ(codes_with(warm, q, s), codes_with(std::make_shared<InterPodAffinity>(), q, s));
          fork.discard();
        }
      }
      for (int k = 0; k < 2; ++k) {
        const Pod q = random_pod("q");
        const std::vector<FilterCode> got = codes_with(warm, q, s);
        ASSERT_EQ(got, codes_with(std::make_shared<InterPodAffinity>(), q, s));
        blocked += static_cast<int>(std::count_if(got.begin(), got.end(), [](FilterCode c) { return c.rejected(); }));
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3200);
  EXPECT_GT(blocked, 1000);  // the terms did block nodes
}

}  // namespace
}  // namespace gpufleet::sched
