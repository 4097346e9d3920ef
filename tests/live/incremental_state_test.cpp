// The cluster cache's incremental state (live/cluster_cache.h): each watch event kind on a hand-built
// cluster, with values worked out by hand, and a property test: random seeded event sequences applied
// one by one give the state (nodes, usage, devices, bound pods, labels, taints) and the extender's
// decisions that a full build of the same objects gives.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "live/cluster_cache.h"
#include "live/cluster_metrics.h"
#include "live/extender.h"
#include "sched/framework/interface.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::live {
namespace {

using nlohmann::json;

json node(const std::string& name, int gpus, const std::string& zone = "z1", int cpu = 32) {
  const json resources = {{"cpu", std::to_string(cpu)}, {"memory", "256Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name}, {"resourceVersion", "10"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}, {"zone", zone}}}}},
          {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

json pod(const std::string& name, int gpus, const std::string& node_name = "", const std::string& gpu_index = "", int cpu = 1) {
  json requests = {{"cpu", std::to_string(cpu)}, {"memory", "1Gi"}};
  if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", requests}}}}})}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  if (!gpu_index.empty()) p["metadata"]["annotations"] = {{"gpufleet.io/gpu-index", gpu_index}};
  return p;
}

// A cache listed with `nodes` and `pods` and built once: later events take the incremental path.
struct Live {
  ClusterCache cache;
  explicit Live(const std::vector<json>& nodes, const std::vector<json>& pods, const std::string& policy = "gpufleet")
      : cache(CacheOptions{place::PlaceOptions{policy, 42}, {}, {}, {}}) {
    cache.replace(ResourceKind::kNode, nodes, "1");
    cache.replace(ResourceKind::kPod, pods, "1");
    cache.snapshot();
  }
  std::shared_ptr<const Snapshot> s() { return cache.snapshot(); }
};

NodeId id(const Snapshot& s, const std::string& name) { return s.cluster.node_by_name.at(name); }
const ClusterState& state(const Snapshot& s) { return *s.cluster.state; }
// The pods bound on a node, "name:gpus" in binding order.
std::vector<std::string> on(const Snapshot& s, const std::string& name) {
  std::vector<std::string> out;
  for (const BoundPod& b : state(s).pods_on(id(s, name))) {
    std::string gpus;
    for (int32_t g : b.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    out.push_back(b.pod.name + ":" + gpus);
  }
  return out;
}

TEST(IncrementalState, PodBindFinishAndDeleteMoveUsageWithoutABuild) {
  Live l({node("a", 8)}, {pod("p", 2)});
  const uint64_t g0 = l.s()->generation;
  l.cache.apply(ResourceKind::kPod, WatchEventType::kModified, pod("p", 2, "a"));  // bound by kube-scheduler
  auto s = l.s();
  EXPECT_EQ(on(*s, "a"), (std::vector<std::string>{"p:0,1"}));
  EXPECT_EQ(state(*s).gpu_free_milli_total(id(*s, "a")), 6000);
  EXPECT_EQ(state(*s).cpu_used_milli(id(*s, "a")), 1000);
  EXPECT_EQ(s->generation, g0 + 1);
  json done = pod("p", 2, "a");
  done["status"] = {{"phase", "Succeeded"}};  // finished: holds nothing, leaves the pod list
  l.cache.apply(ResourceKind::kPod, WatchEventType::kModified, done);
  EXPECT_TRUE(on(*l.s(), "a").empty());
  EXPECT_EQ(state(*l.s()).gpu_free_milli_total(id(*l.s(), "a")), 8000);
  EXPECT_EQ(l.s()->pod_by_key.count("default/p"), 0u);
  l.cache.apply(ResourceKind::kPod, WatchEventType::kAdded, pod("q", 4, "a"));
  l.cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("q", 4, "a"));
  EXPECT_EQ(state(*l.s()).gpu_free_milli_total(id(*l.s(), "a")), 8000);
  EXPECT_TRUE(l.s()->inputs.input.pods.empty());
  EXPECT_EQ(l.cache.counters().full_builds, 1u);
  EXPECT_EQ(l.cache.counters().events[1][static_cast<size_t>(WatchEventType::kModified)], 2u);
  EXPECT_EQ(l.cache.counters().events[1][static_cast<size_t>(WatchEventType::kDeleted)], 1u);
}

// A node's pods are admitted again in key order, as a full build admits them: a1 held GPUs 0,1 and
// a2 2,3 (lowest free, neither recorded); with a1 gone a2 takes 0,1. k2 did not fit beside k1
// (OutOfnvidia.com/gpu); with k1 gone the kubelet admits it.
TEST(IncrementalState, DeletingAPodReadmitsTheNodesOthersInKeyOrder) {
  Live l({node("b", 4), node("c", 2)}, {pod("a1", 2, "b"), pod("a2", 2, "b"), pod("k1", 2, "c"), pod("k2", 2, "c")});
  EXPECT_EQ(on(*l.s(), "b"), (std::vector<std::string>{"a1:0,1", "a2:2,3"}));
  EXPECT_EQ(on(*l.s(), "c"), (std::vector<std::string>{"k1:0,1"}));
  l.cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("a1", 2, "b"));
  EXPECT_EQ(on(*l.s(), "b"), (std::vector<std::string>{"a2:0,1"}));
  l.cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("k1", 2, "c"));
  EXPECT_EQ(on(*l.s(), "c"), (std::vector<std::string>{"k2:0,1"}));
  // A pod recorded on a GPU another pod holds takes the lowest free one.
  l.cache.apply(ResourceKind::kPod, WatchEventType::kAdded, pod("z", 1, "b", "1"));
  EXPECT_EQ(on(*l.s(), "b"), (std::vector<std::string>{"a2:0,1", "z:2"}));
  EXPECT_EQ(l.cache.counters().full_builds, 1u);
}

TEST(IncrementalState, LabelTaintAndCordonChangesReachTheFilters) {
  json pinned = pod("pinned", 1, "a");
  pinned["spec"]["nodeSelector"] = {{"zone", "z1"}};
  Live l({node("a", 8), node("b", 8)}, {pinned, pod("incoming", 1)}, "bestfit");
  EXPECT_EQ(on(*l.s(), "a"), (std::vector<std::string>{"pinned:0"}));
  const uint64_t node_set = state(*l.s()).node_set_version();
  // zone z1 -> z2: the kubelet no longer admits `pinned` there (its nodeSelector), so a is empty.
  l.cache.apply(ResourceKind::kNode, WatchEventType::kModified, node("a", 8, "z2"));
  auto s = l.s();
  EXPECT_TRUE(on(*s, "a").empty());
  EXPECT_EQ(state(*s).gpu_free_milli_total(id(*s, "a")), 8000);
  EXPECT_NE(state(*s).node_set_version(), node_set);  // static Score columns (labels, taints) are dropped
  json probe = pod("probe", 1);
  probe["spec"]["nodeSelector"] = {{"zone", "z2"}};
  l.cache.apply(ResourceKind::kPod, WatchEventType::kAdded, probe);
  s = l.s();
  const Pod incoming = s->inputs.input.pods[s->pod_by_key.at("default/probe")];
  EXPECT_EQ(extender_filter(*s, incoming, {"a", "b"}).passed, (std::vector<std::string>{"a"}));
  // A taint on a.
  json tainted = node("a", 8, "z2");
  tainted["spec"] = {{"taints", json::array({{{"key", "dedicated"}, {"value", "train"}, {"effect", "NoSchedule"}}})}};
  l.cache.apply(ResourceKind::kNode, WatchEventType::kModified, tainted);
  s = l.s();
  EXPECT_EQ(extender_filter(*s, incoming, {"a", "b"}).failed_unresolvable.at("a"), "node(s) had untolerated taint {dedicated: train}");
  // Cordoned b: only the flag and b's version move.
  const uint64_t b_version = state(*s).version(id(*s, "b"));
  json cordoned = node("b", 8);
  cordoned["spec"] = {{"unschedulable", true}};
  l.cache.apply(ResourceKind::kNode, WatchEventType::kModified, cordoned);
  s = l.s();
  EXPECT_TRUE(state(*s).node(id(*s, "b")).unschedulable);
  EXPECT_NE(state(*s).version(id(*s, "b")), b_version);
  const Pod plain = s->inputs.input.pods[s->pod_by_key.at("default/incoming")];
  EXPECT_EQ(extender_filter(*s, plain, {"b"}).failed_unresolvable.at("b"), "node(s) were unschedulable");
  EXPECT_EQ(l.cache.counters().scheduler_setups, 0u);  // labels, taints, cordon: the scheduler stays
  EXPECT_EQ(l.cache.counters().full_builds, 1u);
}

// A status heartbeat (a MODIFIED Node that reads the same) changes no version: memos stay warm.
TEST(IncrementalState, NodeHeartbeatChangesNothing) {
  Live l({node("a", 8)}, {pod("p", 1, "a")});
  const uint64_t version = state(*l.s()).version(id(*l.s(), "a"));
  json beat = node("a", 8);
  beat["metadata"]["resourceVersion"] = "99";
  beat["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "True"}}});
  l.cache.apply(ResourceKind::kNode, WatchEventType::kModified, beat);
  EXPECT_EQ(state(*l.s()).version(id(*l.s(), "a")), version);
  EXPECT_EQ(l.cache.resource_version(ResourceKind::kNode), "99");
  EXPECT_EQ(l.s()->resource_versions.at("Node"), "99");
}

// Allocatable 8 -> 4 GPUs: p (recorded on GPUs 6,7, now out of range) is admitted again on the lowest
// free; the scheduler is kept and told the node set changed (Scheduler::nodes_changed).
TEST(IncrementalState, AllocatableChangeReadmitsAndKeepsTheScheduler) {
  Live l({node("a", 8)}, {pod("p", 2, "a", "6,7")});
  EXPECT_EQ(on(*l.s(), "a"), (std::vector<std::string>{"p:6,7"}));
  l.cache.apply(ResourceKind::kNode, WatchEventType::kModified, node("a", 4));
  auto s = l.s();
  EXPECT_EQ(on(*s, "a"), (std::vector<std::string>{"p:0,1"}));
  EXPECT_EQ(state(*s).gpu_capacity_milli(), 4000);
  EXPECT_EQ(s->inputs.input.nodes.at(0).gpu_count, 4);
  EXPECT_EQ(l.cache.counters().scheduler_setups, 0u);
}

// A node added: pods that named it (not found until then) run there. A node deleted: its pods stay,
// naming a node that is not found; the filter does not know it.
TEST(IncrementalState, NodeAddAndDelete) {
  Live l({node("a", 8)}, {pod("early", 2, "n"), pod("incoming", 1)});
  EXPECT_EQ(l.s()->cluster.node_by_name.count("n"), 0u);
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("n", 4));
  auto s = l.s();
  EXPECT_EQ(on(*s, "n"), (std::vector<std::string>{"early:0,1"}));
  EXPECT_EQ(state(*s).live_node_count(), 2u);
  EXPECT_EQ(state(*s).gpu_used_milli(), 2000);
  l.cache.apply(ResourceKind::kNode, WatchEventType::kDeleted, node("n", 4));
  s = l.s();
  EXPECT_EQ(state(*s).live_node_count(), 1u);
  EXPECT_EQ(state(*s).gpu_used_milli(), 0);
  EXPECT_EQ(s->inputs.input.nodes.size(), 1u);
  EXPECT_EQ(s->inputs.input.pods[s->pod_by_key.at("default/early")].node_name, "n");
  const Pod incoming = s->inputs.input.pods[s->pod_by_key.at("default/incoming")];
  EXPECT_EQ(extender_filter(*s, incoming, {"a", "n"}).failed_unresolvable.at("n"), "node(s) not in gpufleet's cache");
  // Back again, in the slot the first one left.
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("n", 4));
  EXPECT_EQ(on(*l.s(), "n"), (std::vector<std::string>{"early:0,1"}));
  EXPECT_EQ(state(*l.s()).node_count(), 2u);
  EXPECT_EQ(l.cache.counters().scheduler_setups, 0u);  // same GPU model: the scheduler is kept
  EXPECT_EQ(l.cache.counters().full_builds, 1u);
}

// Nodes added keep the scheduler and rank among the others by name (score ties go to the name that
// sorts first, as after a full build); a node of a GPU model the scheduler was not made with sets it
// up again. Empty 8-GPU nodes tie for a 1-GPU pod under bestfit (the lowest rank wins).
TEST(IncrementalState, NodesAddedRankByNameAndANewModelSetsTheSchedulerUp) {
  Live l({node("c", 8), node("e", 8)}, {pod("incoming", 1)}, "bestfit");
  // The node a cycle picks for the pod: the tie goes to the lowest rank.
  const auto picked = [&] {
    auto s = l.s();
    const Pod incoming = s->inputs.input.pods[s->pod_by_key.at("default/incoming")];
    GoRand rng(1);
    const sched::ScheduleResult result = s->cluster.scheduler->decide(incoming, *s->cluster.state, rng);
    return result.scheduled() ? s->cluster.state->node(result.node).name : std::string("none");
  };
  EXPECT_EQ(picked(), "c");
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("d", 8));
  EXPECT_EQ(picked(), "c");
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("b", 8));
  EXPECT_EQ(picked(), "b");
  l.cache.apply(ResourceKind::kNode, WatchEventType::kDeleted, node("b", 8));
  EXPECT_EQ(picked(), "c");
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("b", 8));
  l.cache.apply(ResourceKind::kNode, WatchEventType::kDeleted, node("c", 8));
  EXPECT_EQ(picked(), "b");
  EXPECT_EQ(l.cache.counters().scheduler_setups, 0u);
  // A node's tie-break rank in the live scheduler.
  const auto r = [&](const std::string& name) {
    const auto s = l.s();
    return s->cluster.scheduler->node_rank()[s->cluster.node_by_name.at(name)];
  };
  EXPECT_LT(r("b"), r("d"));
  EXPECT_LT(r("d"), r("e"));
  json a100 = node("a", 8);
  a100["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB";
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, a100);
  EXPECT_EQ(l.cache.counters().scheduler_setups, 1u);
  EXPECT_LT(r("a"), r("b"));
  EXPECT_LT(r("b"), r("d"));
  EXPECT_EQ(picked(), "a");
  l.cache.apply(ResourceKind::kNode, WatchEventType::kAdded, node("c", 8));
  EXPECT_EQ(l.cache.counters().scheduler_setups, 1u);
  EXPECT_LT(r("b"), r("c"));
  EXPECT_LT(r("c"), r("d"));
  EXPECT_LT(r("d"), r("e"));
}

// A pod deleted and made again under its name (a StatefulSet's) is another pod (another uid): the
// scheduler's observers are told of it again, and a pod that left the cache leaves `observed`.
TEST(IncrementalState, APodMadeAgainUnderItsNameIsToldOfAgain) {
  Live l({node("a", 8)}, {pod("p", 1, "a")});
  EXPECT_EQ(l.s()->observed.count("uid-p"), 1u);
  l.cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("p", 1, "a"));
  EXPECT_EQ(l.s()->observed.count("uid-p"), 0u);
  json again = pod("p", 3, "a");
  again["metadata"]["uid"] = "uid-p-2";
  l.cache.apply(ResourceKind::kPod, WatchEventType::kAdded, again);
  EXPECT_EQ(l.s()->observed.count("uid-p-2"), 1u);
  EXPECT_EQ(on(*l.s(), "a"), (std::vector<std::string>{"p:0,1,2"}));
  // A change of the same pod (its labels) keeps it observed once.
  again["metadata"]["labels"] = {{"app", "x"}};
  l.cache.apply(ResourceKind::kPod, WatchEventType::kModified, again);
  EXPECT_EQ(l.s()->observed.count("uid-p-2"), 1u);
  EXPECT_EQ(l.s()->observed.size(), 1u);
}

// A posted snapshot is the whole state: after one snapshot and then another (the 1-GPU pods gone,
// the pod on zz made again with 3 GPUs), gpufleet's scores are those of a cache given the second
// alone, whatever it learnt from the first (kept, the two caches rank m1 and zz the other way).
TEST(IncrementalState, APostedSnapshotAnswersAsACacheStartedWithIt) {
  const auto l4 = [](const std::string& name, int gpus) {
    json n = node(name, gpus, "z1", 96);
    n["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-L4";
    n["status"]["allocatable"]["memory"] = n["status"]["capacity"]["memory"] = "1024Gi";
    return n;
  };
  const auto list = [&](const std::vector<json>& pods) {
    json items = json::array({l4("m1", 8), l4("zz", 4)});
    for (const json& p : pods) items.push_back(p);
    return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  };
  // Before: pzz and four more 1-GPU pods; after: pzz made again with 3 GPUs, the others gone.
  std::vector<json> before = {pod("pzz", 1, "zz")};
  for (int i = 0; i < 4; ++i) before.push_back(pod("q" + std::to_string(i), 1, "m1"));
  json remade = pod("pzz", 3, "zz");
  remade["metadata"]["uid"] = "uid-new";
  const std::vector<json> after = {remade};
  const CacheOptions options{place::PlaceOptions{"gpufleet", 42}, {}, {}, {}};
  ClusterCache posted(options), fresh(options);
  posted.replace_all(list(before), "before");
  posted.snapshot();
  posted.replace_all(list(after), "after");
  fresh.replace_all(list(after), "after");
  ClusterCache reader(CacheOptions{});
  json incoming = pod("incoming", 1, "", "", 4);
  incoming["spec"]["containers"][0]["resources"]["requests"]["memory"] = incoming["spec"]["containers"][0]["resources"]["limits"]["memory"] = "16Gi";
  incoming["kind"] = "Pod";
  reader.replace(ResourceKind::kPod, {incoming}, "1");
  const Pod probe = reader.snapshot()->inputs.input.pods.at(0);
  const std::vector<HostScore> a = extender_prioritize(*posted.snapshot(), probe, {"m1", "zz"});
  const std::vector<HostScore> b = extender_prioritize(*fresh.snapshot(), probe, {"m1", "zz"});
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].host, b[i].host);
    EXPECT_EQ(a[i].score, b[i].score) << a[i].host;
  }
}

// BOOKMARK moves the resourceVersion only; a relist drops, adds and changes objects one by one.
TEST(IncrementalState, BookmarkAndRelist) {
  Live l({node("a", 8)}, {pod("p", 2, "a"), pod("q", 1, "a"), pod("r", 1)});
  const uint64_t generation = l.s()->generation;
  l.cache.apply(ResourceKind::kPod, WatchEventType::kBookmark, {{"metadata", {{"resourceVersion", "40"}}}});
  EXPECT_EQ(l.s()->generation, generation);
  EXPECT_EQ(l.s()->resource_versions.at("Pod"), "40");
  l.cache.replace(ResourceKind::kPod, {pod("q", 1, "a"), pod("r", 4, "a"), pod("s", 1)}, "50");  // p gone, r bound, s new
  auto s = l.s();
  EXPECT_EQ(on(*s, "a"), (std::vector<std::string>{"q:0", "r:1,2,3,4"}));
  EXPECT_EQ(s->inputs.input.pods.size(), 3u);
  EXPECT_EQ(s->resource_versions.at("Pod"), "50");
  EXPECT_EQ(s->generation, generation + 3);  // three objects changed; q was given unchanged
  EXPECT_EQ(l.cache.counters().relists[1], 1u);
  EXPECT_EQ(l.cache.counters().full_builds, 1u);
}

// The cache's own metrics after the events of one bind, one delete and a relist.
TEST(IncrementalState, CacheMetrics) {
  Live l({node("a", 8)}, {pod("p", 1)});
  l.cache.apply(ResourceKind::kPod, WatchEventType::kModified, pod("p", 1, "a"));
  l.cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("p", 1, "a"));
  l.cache.replace(ResourceKind::kPod, {}, "9");
  const std::string text = render_cache_metrics(l.cache.counters());
  EXPECT_NE(text.find("gpufleet_cache_watch_events_total{kind=\"Pod\",type=\"MODIFIED\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpufleet_cache_watch_events_total{kind=\"Pod\",type=\"DELETED\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpufleet_cache_watch_events_total{kind=\"Node\",type=\"ADDED\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpufleet_cache_relists_total{kind=\"Pod\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpufleet_cache_full_builds_total 1\n"), std::string::npos) << text;
  // Three lists and two events: five lags.
  EXPECT_NE(text.find("gpufleet_cache_event_lag_seconds_bucket{le=\"+Inf\"} 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpufleet_cache_event_lag_seconds_count 5\n"), std::string::npos) << text;
}

// ---- property: incremental == full build -------------------------------------------------------

// The objects the API server holds, changed by random events.
struct World {
  std::map<std::string, json> nodes, pods;
};

json random_node(std::mt19937_64& rng, const std::string& name) {
  const int gpus[] = {2, 4, 8};
  json n = node(name, gpus[rng() % 3], rng() % 2 ? "z1" : "z2", rng() % 2 ? 32 : 16);
  if (rng() % 3 == 0) n["spec"]["taints"] = json::array({{{"key", "dedicated"}, {"value", "train"}, {"effect", "NoSchedule"}}});
  if (rng() % 5 == 0) n["spec"]["unschedulable"] = true;
  if (rng() % 2) n["metadata"]["labels"]["tier"] = rng() % 2 ? "gold" : "silver";
  if (rng() % 5 == 0) n["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB";  // a model joins
  return n;
}

json random_pod(std::mt19937_64& rng, const std::string& name, const std::string& node_name) {
  const int gpus[] = {0, 1, 1, 2, 4};
  const int g = gpus[rng() % 5];
  std::string index;
  if (!node_name.empty() && g > 0 && rng() % 3 == 0) {  // recorded devices, sometimes taken or out of range
    const int first = static_cast<int>(rng() % 8);
    for (int i = 0; i < g; ++i) index += (i ? "," : "") + std::to_string(first + i);
  }
  json p = pod(name, g, node_name, index, 1 + static_cast<int>(rng() % 12));
  if (rng() % 4 == 0) p["spec"]["nodeSelector"] = {{"zone", rng() % 2 ? "z1" : "z2"}};
  if (rng() % 4 == 0) p["spec"]["tolerations"] = json::array({{{"key", "dedicated"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  if (rng() % 3 == 0) p["metadata"]["labels"] = {{"app", rng() % 2 ? "x" : "y"}};
  return p;
}

template <typename Map>
std::string pick(std::mt19937_64& rng, const Map& m) {
  auto it = m.begin();
  std::advance(it, static_cast<long>(rng() % m.size()));
  return it->first;
}

// One random event on `world`, applied to `cache` as the watch (or a relist) delivers it.
void random_event(std::mt19937_64& rng, World& world, ClusterCache& cache, int& next) {
  const int kind = static_cast<int>(rng() % 100);
  if (kind < 8 || world.nodes.empty()) {  // node added
    const std::string name = "n" + std::to_string(next++);
    world.nodes[name] = random_node(rng, name);
    cache.apply(ResourceKind::kNode, WatchEventType::kAdded, world.nodes[name]);
  } else if (kind < 12) {  // node deleted (one stays, for the pods to name)
    if (world.nodes.size() < 2) return;
    const std::string name = pick(rng, world.nodes);
    cache.apply(ResourceKind::kNode, WatchEventType::kDeleted, world.nodes[name]);
    world.nodes.erase(name);
  } else if (kind < 24) {  // node changed: labels, taints, allocatable, cordon (a new draw of each)
    const std::string name = pick(rng, world.nodes);
    json n = random_node(rng, name);
    if (rng() % 2) n["status"] = world.nodes[name]["status"];  // same allocatable: labels, taints, cordon only
    world.nodes[name] = n;
    cache.apply(ResourceKind::kNode, WatchEventType::kModified, n);
  } else if (kind < 27) {  // node heartbeat
    const std::string name = pick(rng, world.nodes);
    world.nodes[name]["metadata"]["resourceVersion"] = std::to_string(next++);
    cache.apply(ResourceKind::kNode, WatchEventType::kModified, world.nodes[name]);
  } else if (kind < 45 || world.pods.empty()) {  // pod added, pending or (a third) bound
    const std::string name = "p" + std::to_string(next++);
    const std::string on = rng() % 3 == 0 ? pick(rng, world.nodes) : "";
    world.pods[name] = random_pod(rng, name, on);
    cache.apply(ResourceKind::kPod, WatchEventType::kAdded, world.pods[name]);
  } else if (kind < 65) {  // pod bound (sometimes to a node that does not exist)
    const std::string name = pick(rng, world.pods);
    json& p = world.pods[name];
    p["spec"]["nodeName"] = rng() % 10 == 0 ? std::string("gone") : pick(rng, world.nodes);
    cache.apply(ResourceKind::kPod, WatchEventType::kModified, p);
  } else if (kind < 75) {  // pod finished
    const std::string name = pick(rng, world.pods);
    json p = world.pods[name];
    p["status"] = {{"phase", rng() % 2 ? "Succeeded" : "Failed"}};
    world.pods.erase(name);  // the cache leaves terminal pods out, as the full build's objects do
    cache.apply(ResourceKind::kPod, WatchEventType::kModified, p);
  } else if (kind < 88) {  // pod deleted
    const std::string name = pick(rng, world.pods);
    cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, world.pods[name]);
    world.pods.erase(name);
  } else if (kind < 92) {  // pod labels changed
    const std::string name = pick(rng, world.pods);
    world.pods[name]["metadata"]["labels"] = {{"app", "z" + std::to_string(next++)}};
    cache.apply(ResourceKind::kPod, WatchEventType::kModified, world.pods[name]);
  } else if (kind < 94) {
    cache.apply(rng() % 2 ? ResourceKind::kPod : ResourceKind::kNode, WatchEventType::kBookmark,
                {{"metadata", {{"resourceVersion", std::to_string(next++)}}}});
  } else {  // relist of one kind, with a few objects changed or dropped meanwhile
    const bool pods = rng() % 2 == 0;
    auto& objects = pods ? world.pods : world.nodes;
    for (int i = 0; i < 3 && objects.size() > 1; ++i) {
      const std::string name = pick(rng, objects);
      if (rng() % 2)
        objects.erase(name);
      else
        objects[name] = pods ? random_pod(rng, name, rng() % 2 ? pick(rng, world.nodes) : "") : random_node(rng, name);
    }
    std::vector<json> items;
    for (const auto& [name, object] : objects) items.push_back(object);
    cache.replace(pods ? ResourceKind::kPod : ResourceKind::kNode, items, std::to_string(next++));
  }
}

// Everything the state holds for one node, keyed and sorted so that slots and binding order drop out.
std::string node_record(const ClusterState& state, NodeId n) {
  const Node& node = state.node(n);
  std::string out = node.name;
  json labels = json::object(), taints = json::array();
  for (const auto& [k, v] : node.labels) labels[k] = v;
  for (const Taint& t : node.taints) taints.push_back({t.key, t.value, t.effect});
  std::vector<int32_t> free(state.gpu_free_milli(n).begin(), state.gpu_free_milli(n).end());
  std::vector<std::string> pods;
  for (const BoundPod& b : state.pods_on(n)) pods.push_back(json{sched::pod_key(b.pod), b.gpus, b.shared_replicas}.dump());
  std::sort(pods.begin(), pods.end());
  return json{{"name", node.name},
              {"cpu", node.cpu_milli},
              {"memory", node.memory_bytes},
              {"gpus", node.gpu_count},
              {"model", node.gpu_model},
              {"max_pods", node.max_pods},
              {"labels", labels},
              {"taints", taints},
              {"unschedulable", node.unschedulable},
              {"cpu_used", state.cpu_used_milli(n)},
              {"memory_free", state.memory_free_bytes(n)},
              {"pod_count", state.pod_count(n)},
              {"nonzero_cpu", state.nonzero_cpu_requested_milli(n)},
              {"nonzero_memory", state.nonzero_memory_requested_bytes(n)},
              {"gpu_free", free},
              {"gpu_free_total", state.gpu_free_milli_total(n)},
              {"pods", pods}}
      .dump();
}

void expect_same(const Snapshot& inc, const Snapshot& full, const std::string& where) {
  const std::lock_guard a(inc.decide_mutex), b(full.decide_mutex);
  ASSERT_TRUE(inc.cluster.state && full.cluster.state) << where;
  const ClusterState &si = *inc.cluster.state, &sf = *full.cluster.state;
  EXPECT_EQ(si.live_node_count(), sf.live_node_count()) << where;
  EXPECT_EQ(si.gpu_capacity_milli(), sf.gpu_capacity_milli()) << where;
  EXPECT_EQ(si.gpu_used_milli(), sf.gpu_used_milli()) << where;
  EXPECT_EQ(si.anti_affinity_pod_count(), sf.anti_affinity_pod_count()) << where;
  ASSERT_EQ(inc.cluster.node_by_name.size(), full.cluster.node_by_name.size()) << where;
  for (const auto& [name, n] : full.cluster.node_by_name) {
    const auto it = inc.cluster.node_by_name.find(name);
    ASSERT_NE(it, inc.cluster.node_by_name.end()) << where << " node " << name;
    EXPECT_EQ(node_record(si, it->second), node_record(sf, n)) << where;
  }
  std::map<std::string, std::string> nodes_i, nodes_f;  // inputs.input.nodes, by name
  for (const Node& n : inc.inputs.input.nodes) nodes_i[n.name] = n.gpu_model + std::to_string(n.gpu_count) + std::to_string(n.cpu_milli);
  for (const Node& n : full.inputs.input.nodes) nodes_f[n.name] = n.gpu_model + std::to_string(n.gpu_count) + std::to_string(n.cpu_milli);
  EXPECT_EQ(nodes_i, nodes_f) << where;
  ASSERT_EQ(inc.pod_by_key.size(), full.pod_by_key.size()) << where;
  ASSERT_EQ(inc.inputs.input.pods.size(), full.inputs.input.pods.size()) << where;
  for (const auto& [key, i] : full.pod_by_key) {
    const auto it = inc.pod_by_key.find(key);
    ASSERT_NE(it, inc.pod_by_key.end()) << where << " pod " << key;
    const Pod &pi = inc.inputs.input.pods.at(it->second), &pf = full.inputs.input.pods.at(i);
    EXPECT_EQ(sched::pod_key(pi), key) << where;
    EXPECT_EQ(pi.node_name, pf.node_name) << where << " " << key;
    EXPECT_EQ(pi.uid, pf.uid) << where << " " << key;
    EXPECT_EQ(pi.cpu_milli, pf.cpu_milli) << where << " " << key;
    EXPECT_EQ(pi.num_gpu, pf.num_gpu) << where << " " << key;
    EXPECT_EQ(pi.labels, pf.labels) << where << " " << key;
    EXPECT_EQ(pi.assigned_devices.has_value(), pf.assigned_devices.has_value()) << where << " " << key;
    if (pi.uid.empty()) continue;
    EXPECT_EQ(inc.pod_by_uid.at(pi.uid), it->second) << where << " " << key;
  }
  std::vector<std::string> ri = inc.refused, rf = full.refused;
  std::sort(ri.begin(), ri.end());
  std::sort(rf.begin(), rf.end());
  EXPECT_EQ(ri, rf) << where;
  EXPECT_EQ(inc.resource_versions, full.resource_versions) << where;
}

// The extender's answers on both for a few probe pods over every node (and one the caches do not know).
void expect_same_decisions(const Snapshot& inc, const Snapshot& full, const std::string& where) {
  std::vector<std::string> names = {"unknown"};
  {
    const std::lock_guard lock(full.decide_mutex);
    for (const auto& [name, n] : full.cluster.node_by_name) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 6; ++i) {
    json object = random_pod(rng, "probe" + std::to_string(i), "");
    object["kind"] = "Pod";
    // The probes as the extender reads a request's pod.
    ClusterCache reader(CacheOptions{});
    reader.replace(ResourceKind::kPod, {object}, "1");
    const auto read = reader.snapshot();
    const Pod probe = read->inputs.input.pods.at(0);
    const FilterAnswer fi = extender_filter(inc, probe, names), ff = extender_filter(full, probe, names);
    EXPECT_EQ(fi.passed, ff.passed) << where << " probe " << i;
    EXPECT_EQ(fi.failed, ff.failed) << where << " probe " << i;
    EXPECT_EQ(fi.failed_unresolvable, ff.failed_unresolvable) << where << " probe " << i;
    const std::vector<HostScore> pi = extender_prioritize(inc, probe, names), pf = extender_prioritize(full, probe, names);
    ASSERT_EQ(pi.size(), pf.size());
    for (size_t k = 0; k < pi.size(); ++k) EXPECT_EQ(pi[k].score, pf[k].score) << where << " probe " << i << " " << pi[k].host;
    for (const std::string& name : ff.passed) {
      const DeviceChoice ci = choose_devices(inc, probe, name), cf = choose_devices(full, probe, name);
      EXPECT_EQ(ci.devices, cf.devices) << where << " probe " << i << " on " << name;
    }
  }
}

class IncrementalEqualsFullBuild : public ::testing::TestWithParam<std::string> {};

TEST_P(IncrementalEqualsFullBuild, AfterRandomEventSequences) {
  const std::string policy = GetParam();
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    World world;
    int next = 0;
    for (int i = 0; i < 6; ++i) {
      const std::string name = "n" + std::to_string(next++);
      world.nodes[name] = random_node(rng, name);
    }
    for (int i = 0; i < 20; ++i) {
      const std::string name = "p" + std::to_string(next++);
      world.pods[name] = random_pod(rng, name, rng() % 2 ? pick(rng, world.nodes) : "");
    }
    const CacheOptions options{place::PlaceOptions{policy, 42}, {}, {}, {}};
    ClusterCache inc(options);
    std::vector<json> nodes, pods;
    for (const auto& [name, object] : world.nodes) nodes.push_back(object);
    for (const auto& [name, object] : world.pods) pods.push_back(object);
    inc.replace(ResourceKind::kNode, nodes, "1");
    inc.replace(ResourceKind::kPod, pods, "1");
    inc.snapshot();
    for (int step = 0; step < 120; ++step) {
      random_event(rng, world, inc, next);
      if (step % 40 != 39) continue;
      // The same objects, listed into a fresh cache: one full build.
      ClusterCache full(options);
      nodes.clear();
      pods.clear();
      for (const auto& [name, object] : world.nodes) nodes.push_back(object);
      for (const auto& [name, object] : world.pods) pods.push_back(object);
      full.replace(ResourceKind::kNode, nodes, inc.resource_version(ResourceKind::kNode));
      full.replace(ResourceKind::kPod, pods, inc.resource_version(ResourceKind::kPod));
      const std::string where = "policy " + policy + " seed " + std::to_string(seed) + " step " + std::to_string(step);
      const auto si = inc.snapshot(), sf = full.snapshot();
      expect_same(*si, *sf, where);
      if (policy != "gpufleet") expect_same_decisions(*si, *sf, where);  // gpufleet learns in bind order (cluster_cache.h)
      if (HasFailure()) return;
    }
    EXPECT_EQ(inc.counters().full_builds, 1u) << "seed " << seed;  // every event applied in place
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, IncrementalEqualsFullBuild, ::testing::Values("bestfit", "default-scheduler", "gpufleet"));

}  // namespace
}  // namespace gpufleet::live
