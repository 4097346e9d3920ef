// The live server's cluster cache (live/cluster_cache.h) and the extender verbs' answers
// (live/extender.h) on a hand-built cluster: every expected value below is worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "readers/formats/json_request.h"
#include "readers/kube_api/k8s_json.h"
#include "readers/k8s/k8s_yaml.h"
#include "live/cluster_cache.h"
#include "util/input_error.h"
#include "live/extender.h"
#include "live/request_stats.h"
#include "place/place_workload.h"

namespace gpufleet::live {
namespace {

using nlohmann::json;

json node(const std::string& name, int gpus, bool tainted = false) {
  const json resources = {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"resourceVersion", "10"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
            {"status", {{"allocatable", resources}, {"capacity", resources}}}};
  if (tainted) n["spec"] = {{"taints", json::array({{{"key", "dedicated"}, {"value", "train"}, {"effect", "NoSchedule"}}})}};
  return n;
}

json pod(const std::string& name, int gpus, const std::string& node_name = "", int priority = 0, const std::string& gpu_index = "") {
  json requests = {{"cpu", "1"}, {"memory", "1Gi"}};
  if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"priority", priority}, {"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", requests}}}}})}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  if (!gpu_index.empty()) p["metadata"]["annotations"] = {{"gpufleet.io/gpu-index", gpu_index}};
  return p;
}

// a: 8 GPUs, p1 holds GPUs 2..7 (its annotation); b: 4 GPUs, p2 holds 2 (lowest free: 0, 1) and p4
// (CPU only, priority 50) runs there too; c: 2 GPUs, tainted.
json cluster_list() {
  return {{"apiVersion", "v1"},
          {"kind", "List"},
          {"metadata", {{"resourceVersion", "100"}}},
          {"items", json::array({node("a", 8), node("b", 4), node("c", 2, true), pod("p1", 6, "a", 0, "2,3,4,5,6,7"), pod("p2", 2, "b"),
                                 pod("p4", 0, "b", 50), pod("q", 2), pod("r", 4, "", 100)})}};
}

const Pod& find(const Snapshot& s, const std::string& key) { return s.inputs.input.pods.at(s.pod_by_key.at(key)); }

TEST(LiveCache, SnapshotReadsObjectsAsPlaceDoes) {
  ClusterCache cache(CacheOptions{});
  EXPECT_FALSE(cache.synced());
  cache.replace_all(cluster_list(), "test");
  EXPECT_TRUE(cache.synced());
  const auto s = cache.snapshot();
  ASSERT_EQ(s->inputs.input.nodes.size(), 3u);
  ASSERT_EQ(s->inputs.input.pods.size(), 5u);
  EXPECT_TRUE(s->refused.empty());
  EXPECT_EQ(s->generation, 1u);
  EXPECT_EQ(cache.snapshot().get(), s.get());  // nothing changed: the same snapshot
  // p1 on the GPUs its annotation names; p2 on the lowest free ones.
  ASSERT_EQ(s->cluster.prebound.size(), 3u);
  EXPECT_EQ(s->cluster.prebound[0].result.gpus, (std::vector<int32_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s->cluster.prebound[1].result.gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(find(*s, "default/q").uid, "uid-q");
  EXPECT_EQ(s->resource_versions.at("Pod"), "100");
}

TEST(LiveCache, WatchEventsAndRefusedObjects) {
  ClusterCache cache(CacheOptions{});
  cache.replace(ResourceKind::kNode, {node("a", 8)}, "5");
  EXPECT_FALSE(cache.synced());  // pods not listed yet
  cache.replace(ResourceKind::kPod, {}, "5");
  EXPECT_TRUE(cache.synced());
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, pod("x", 1));
  json bad = pod("y", 1, "a", 0, "zero");  // a malformed device annotation: refused, not fatal
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, bad);
  json done = pod("z", 1, "a");
  done["status"] = {{"phase", "Succeeded"}};  // terminal: holds nothing, left out
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, done);
  json moved = node("a", 4);
  moved["metadata"]["resourceVersion"] = "17";
  cache.apply(ResourceKind::kNode, WatchEventType::kModified, moved);
  cache.apply(ResourceKind::kPod, WatchEventType::kBookmark, {{"metadata", {{"resourceVersion", "21"}}}});
  EXPECT_EQ(cache.resource_version(ResourceKind::kNode), "17");
  EXPECT_EQ(cache.resource_version(ResourceKind::kPod), "21");
  EXPECT_EQ(cache.object_count(ResourceKind::kPod), 1u);
  auto s = cache.snapshot();
  ASSERT_EQ(s->inputs.input.nodes.size(), 1u);
  EXPECT_EQ(s->inputs.input.nodes[0].gpu_count, 4);
  ASSERT_EQ(s->refused.size(), 1u);
  EXPECT_NE(s->refused[0].find("Pod default/y"), std::string::npos) << s->refused[0];
  EXPECT_NE(s->refused[0].find("gpufleet.io/gpu-index"), std::string::npos) << s->refused[0];
  cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, pod("x", 1));
  EXPECT_EQ(cache.snapshot()->inputs.input.pods.size(), 0u);
}

// Two Pods with one metadata.uid (the API server never has them): the second is refused, the first
// keeps the uid; once the first is gone, the uid is free again.
TEST(LiveCache, ASecondPodWithTheSameUidIsRefused) {
  ClusterCache cache(CacheOptions{});
  cache.replace(ResourceKind::kNode, {node("a", 8)}, "5");
  json first = pod("p", 1, "a"), second = pod("q", 1, "a");
  second["metadata"]["uid"] = "uid-p";
  cache.replace(ResourceKind::kPod, {first, second}, "5");
  auto s = cache.snapshot();
  ASSERT_EQ(s->inputs.input.pods.size(), 1u);
  EXPECT_EQ(s->inputs.input.pods[0].name, "p");
  ASSERT_EQ(s->refused.size(), 1u);
  EXPECT_EQ(s->refused[0],
            "Pod default/q: object: field 'metadata.uid': uid 'uid-p' is already that of pod default/p (the API server gives every "
            "object its own)");
  cache.apply(ResourceKind::kPod, WatchEventType::kModified, first);  // the owner again: still its own
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, second);   // by watch too
  EXPECT_EQ(cache.snapshot()->refused.size(), 1u);
  cache.apply(ResourceKind::kPod, WatchEventType::kDeleted, first);
  cache.apply(ResourceKind::kPod, WatchEventType::kModified, second);
  s = cache.snapshot();
  EXPECT_TRUE(s->refused.empty());
  ASSERT_EQ(s->inputs.input.pods.size(), 1u);
  EXPECT_EQ(s->inputs.input.pods[0].name, "q");
}

// A pod with spec.resourceClaims (Dynamic Resource Allocation) is left to kube-scheduler's own
// DynamicResources plugin: every node sent passes, with a note, even the tainted node c and one the
// cache does not know (kube-scheduler's own filters judge those).
TEST(LiveExtender, DraPodPassesEveryNodeWithANote) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  const auto s = cache.snapshot();
  Pod pod = find(*s, "default/q");
  pod.resource_claims.push_back({"gpu", "", "gpu-template", ""});
  const FilterAnswer a = extender_filter(*s, pod, {"a", "b", "c", "x"});
  EXPECT_EQ(a.passed, (std::vector<std::string>{"a", "b", "c", "x"}));
  EXPECT_TRUE(a.failed.empty());
  EXPECT_TRUE(a.failed_unresolvable.empty());
  EXPECT_EQ(a.note, "pod has spec.resourceClaims: left to kube-scheduler's DynamicResources plugin, every node passed");
  EXPECT_TRUE(extender_filter(*s, find(*s, "default/q"), {"a"}).note.empty());
  // Prioritize stays neutral: 0 on every node sent, so kube-scheduler's own scores decide.
  const std::vector<HostScore> scores = extender_prioritize(*s, pod, {"a", "b"});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_EQ(scores[0].host, "a");
  EXPECT_EQ(scores[0].score, 0);
  EXPECT_EQ(scores[1].host, "b");
  EXPECT_EQ(scores[1].score, 0);
}

// Preempt and bind do not decide for a DRA pod either: kube-scheduler's victims come back unchanged
// (even a UID the cache does not know, which drops the node for other pods), and bind takes no
// device-plugin devices (no annotations). Each verb counts the pod in
// gpufleet_extender_dra_pods_passed_total (process-wide: the deltas are checked).
TEST(LiveExtender, DraPodIsCountedPerVerbAndNeverDecided) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  const auto s = cache.snapshot();
  Pod pod = find(*s, "default/q");
  pod.resource_claims.push_back({"gpu", "", "gpu-template", ""});
  DraPassCounts& counts = extender_dra_pods_passed();
  using V = DraPassCounts::Verb;
  const uint64_t filter0 = counts.count(V::kFilter), prioritize0 = counts.count(V::kPrioritize);
  const uint64_t preempt0 = counts.count(V::kPreempt), bind0 = counts.count(V::kBind);
  extender_filter(*s, pod, {"a"});
  extender_filter(*s, pod, {"b"});
  extender_filter(*s, find(*s, "default/q"), {"a"});  // no claims: not counted
  extender_prioritize(*s, pod, {"a", "b"});
  const std::map<std::string, NodeVictims> candidates = {{"b", {{"uid-p2", "uid-unknown"}, 1}}};
  const std::map<std::string, NodeVictims> kept = extender_preempt(*s, pod, candidates);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept.at("b").pod_uids, (std::vector<std::string>{"uid-p2", "uid-unknown"}));
  EXPECT_EQ(kept.at("b").num_pdb_violations, 1);
  EXPECT_TRUE(extender_preempt(*s, find(*s, "default/q"), candidates).empty());  // without claims: b dropped
  const DeviceChoice bound = choose_devices(*s, pod, "c");  // tainted: kube-scheduler judged it
  ASSERT_TRUE(bound.devices.has_value()) << bound.error;
  EXPECT_EQ(*bound.devices, DeviceAssignment{});
  EXPECT_EQ(choose_devices(*s, pod, "x").error, "node x is not in gpufleet's cache");
  EXPECT_EQ(counts.count(V::kFilter) - filter0, 2u);
  EXPECT_EQ(counts.count(V::kPrioritize) - prioritize0, 1u);
  EXPECT_EQ(counts.count(V::kPreempt) - preempt0, 1u);
  EXPECT_EQ(counts.count(V::kBind) - bind0, 1u);
}

TEST(LiveExtender, DraPassCountsRenderEveryVerb) {
  DraPassCounts counts;
  counts.add(DraPassCounts::Verb::kFilter);
  counts.add(DraPassCounts::Verb::kFilter);
  counts.add(DraPassCounts::Verb::kBind);
  EXPECT_EQ(counts.render(),
            "# HELP gpufleet_extender_dra_pods_passed_total Pods with spec.resourceClaims that gpufleet left to kube-scheduler's "
            "DynamicResources plugin, by extender verb.\n"
            "# TYPE gpufleet_extender_dra_pods_passed_total counter\n"
            "gpufleet_extender_dra_pods_passed_total{verb=\"bind\"} 1\n"
            "gpufleet_extender_dra_pods_passed_total{verb=\"filter\"} 2\n"
            "gpufleet_extender_dra_pods_passed_total{verb=\"preempt\"} 0\n"
            "gpufleet_extender_dra_pods_passed_total{verb=\"prioritize\"} 0\n");
}

TEST(LiveExtender, FilterSaysWhyPerNode) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  const auto s = cache.snapshot();
  const FilterAnswer q = extender_filter(*s, find(*s, "default/q"), {"a", "b", "c", "x"});
  EXPECT_EQ(q.passed, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(q.failed.empty());
  EXPECT_EQ(q.failed_unresolvable.at("c"), "node(s) had untolerated taint {dedicated: train}");
  EXPECT_EQ(q.failed_unresolvable.at("x"), "node(s) not in gpufleet's cache");
  const FilterAnswer r = extender_filter(*s, find(*s, "default/r"), {"a", "b", "c"});
  EXPECT_TRUE(r.passed.empty());
  EXPECT_EQ(r.failed.at("a"), "Insufficient nvidia.com/gpu");
  EXPECT_EQ(r.failed.at("b"), "Insufficient nvidia.com/gpu");
  EXPECT_EQ(r.failed_unresolvable.count("c"), 1u);
}

TEST(LiveExtender, PrioritizeGivesPlacesChoiceTen) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  const auto s = cache.snapshot();
  const std::vector<HostScore> scores = extender_prioritize(*s, find(*s, "default/q"), {"b", "a", "c"});
  ASSERT_EQ(scores.size(), 3u);
  // place's node for q gets 10, the other feasible node floor(9 (2-1-1)/(2-1)) = 0, the tainted node
  // 0. place is run without r, which would preempt before q is scheduled.
  json without_r = cluster_list();
  without_r["items"].erase(without_r["items"].size() - 1);
  ClusterCache other(CacheOptions{});
  other.replace_all(without_r, "test");
  const place::PlaceResult placed = place::place_workload(other.snapshot()->inputs.input, {});
  std::string q_node;
  for (const auto& p : placed.placements)
    if (p.pod == "default/q") q_node = p.node;
  ASSERT_FALSE(q_node.empty());
  for (const HostScore& h : scores) EXPECT_EQ(h.score, h.host == q_node ? 10 : 0) << h.host;
  EXPECT_EQ(scores[0].host, "b");  // in the order sent
}

TEST(LiveExtender, BindChoosesFreeDevicesAndTheCacheAssumesIt) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  auto s = cache.snapshot();
  const DeviceChoice on_a = choose_devices(*s, find(*s, "default/q"), "a");
  ASSERT_TRUE(on_a.devices) << on_a.error;
  EXPECT_EQ(on_a.devices->gpus, (std::vector<int32_t>{0, 1}));  // p1 holds 2..7
  const DeviceChoice on_b = choose_devices(*s, find(*s, "default/q"), "b");
  ASSERT_TRUE(on_b.devices);
  EXPECT_EQ(on_b.devices->gpus, (std::vector<int32_t>{2, 3}));
  const DeviceChoice on_c = choose_devices(*s, find(*s, "default/r"), "a");
  EXPECT_FALSE(on_c.devices);
  EXPECT_EQ(on_c.error, "pod default/r does not fit node a: Insufficient nvidia.com/gpu");
  ASSERT_TRUE(cache.assume_bound("default/q", "a", *on_a.devices));
  EXPECT_FALSE(cache.assume_bound("default/nope", "a", *on_a.devices));
  s = cache.snapshot();
  EXPECT_EQ(find(*s, "default/q").node_name, "a");
  ASSERT_TRUE(find(*s, "default/q").assigned_devices);
  EXPECT_EQ(find(*s, "default/q").assigned_devices->gpus, (std::vector<int32_t>{0, 1}));
  // a is full now.
  const FilterAnswer again = extender_filter(*s, find(*s, "default/q"), {"a"});  // q itself is decided as unbound
  EXPECT_EQ(again.passed, (std::vector<std::string>{"a"}));
  json other = pod("w", 1);
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, other);
  s = cache.snapshot();
  EXPECT_EQ(extender_filter(*s, find(*s, "default/w"), {"a"}).failed.at("a"), "Insufficient nvidia.com/gpu");
  // The API shows q bound elsewhere: the API wins, the assumption goes.
  cache.apply(ResourceKind::kPod, WatchEventType::kModified, pod("q", 2, "b"));
  s = cache.snapshot();
  EXPECT_EQ(find(*s, "default/q").node_name, "b");
  EXPECT_EQ(extender_filter(*s, find(*s, "default/w"), {"a"}).passed, (std::vector<std::string>{"a"}));
}

// A posted snapshot replaces the whole state, this server's own binds included: q, bound to a by the
// extender and pending in the new snapshot, is pending again and a has its two GPUs back.
TEST(LiveExtender, APostedSnapshotEndsTheServersOwnBinds) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  auto s = cache.snapshot();
  const DeviceChoice on_a = choose_devices(*s, find(*s, "default/q"), "a");
  ASSERT_TRUE(on_a.devices) << on_a.error;
  ASSERT_TRUE(cache.assume_bound("default/q", "a", *on_a.devices));
  cache.apply(ResourceKind::kPod, WatchEventType::kAdded, pod("w", 1));
  s = cache.snapshot();
  EXPECT_EQ(find(*s, "default/q").node_name, "a");
  EXPECT_EQ(extender_filter(*s, find(*s, "default/w"), {"a"}).failed.at("a"), "Insufficient nvidia.com/gpu");
  json list = cluster_list();
  list["items"].push_back(pod("w", 1));
  cache.replace_all(list, "test");
  s = cache.snapshot();
  EXPECT_EQ(find(*s, "default/q").node_name, "");
  EXPECT_EQ(extender_filter(*s, find(*s, "default/w"), {"a"}).passed, (std::vector<std::string>{"a"}));
}

TEST(LiveExtender, PreemptKeepsNodesWhereTheVictimsFreeAGpuFitAndReprieves) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all(cluster_list(), "test");
  const auto s = cache.snapshot();
  const Pod& r = find(*s, "default/r");  // 4 GPUs, priority 100
  const std::map<std::string, NodeVictims> accepted =
      extender_preempt(*s, r, {{"a", {{"uid-p1"}, 0}}, {"b", {{"uid-p2", "uid-p4"}, 1}}, {"c", {{}, 0}}, {"x", {{"uid-p1"}, 0}}});
  ASSERT_EQ(accepted.size(), 2u);
  EXPECT_EQ(accepted.at("a").pod_uids, (std::vector<std::string>{"uid-p1"}));  // 6 GPUs back leave 2 < 4
  // p4 (priority 50, no GPU) is reprieved first and r still fits; p2 back leaves 2 GPUs < 4.
  EXPECT_EQ(accepted.at("b").pod_uids, (std::vector<std::string>{"uid-p2"}));
  EXPECT_EQ(accepted.at("b").num_pdb_violations, 1);
  // An unknown victim: the node is dropped.
  EXPECT_TRUE(extender_preempt(*s, r, {{"b", {{"uid-nobody"}, 0}}}).empty());
  // Victims that do not free enough: dropped.
  EXPECT_TRUE(extender_preempt(*s, r, {{"b", {{"uid-p4"}, 0}}}).empty());
}

// Two replicas (or one restarted, relisting) fed the same objects, in another order and after
// different histories, give the same answers: the cache keys objects by name, and each decision depends
// on the snapshot and the request only.
TEST(LiveExtender, TwoReplicasGiveTheSameAnswers) {
  ClusterCache a(CacheOptions{}), b(CacheOptions{});
  a.replace_all(cluster_list(), "test");
  json reversed = cluster_list();
  std::reverse(reversed["items"].begin(), reversed["items"].end());
  b.apply(ResourceKind::kPod, WatchEventType::kAdded, pod("old", 1));  // a history the relist replaces
  b.replace_all(reversed, "test");
  const auto sa = a.snapshot(), sb = b.snapshot();
  extender_prioritize(*sa, find(*sa, "default/r"), {"a", "b"});  // an earlier request on replica a only
  for (const std::string q : {"default/q", "default/r"}) {
    const FilterAnswer fa = extender_filter(*sa, find(*sa, q), {"a", "b", "c"}), fb = extender_filter(*sb, find(*sb, q), {"a", "b", "c"});
    EXPECT_EQ(fa.passed, fb.passed) << q;
    EXPECT_EQ(fa.failed, fb.failed) << q;
    EXPECT_EQ(fa.failed_unresolvable, fb.failed_unresolvable) << q;
    const auto pa = extender_prioritize(*sa, find(*sa, q), {"a", "b"}), pb = extender_prioritize(*sb, find(*sb, q), {"a", "b"});
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].score, pb[i].score) << q << " " << pa[i].host;
    const DeviceChoice da = choose_devices(*sa, find(*sa, q), "a"), db = choose_devices(*sb, find(*sb, q), "a");
    EXPECT_EQ(da.devices, db.devices) << q;
  }
}

// The seeds of fuzz/corpus/snapshot_fuzz (POST /snapshot bodies): valid-* lists are read, item by
// item, as the cache reads them; bad-* ones are InputErrors.
TEST(LiveCache, SnapshotFuzzSeeds) {
  const std::filesystem::path dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "snapshot_fuzz";
  int valid = 0, bad = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string name = entry.path().filename().string();
    const auto read = [&] {
      size_t objects = 0;
      for (json& item : io::k8s_list_items(io::parse_json_request(text.str(), name, io::kSnapshotRequestLimits), name)) {
        item["apiVersion"] = "v1";
        objects += io::parse_k8s_text(item.dump(), name).nodes.size() + io::parse_k8s_text(item.dump(), name).pods.size();
      }
      return objects;
    };
    if (name.starts_with("bad-")) {
      EXPECT_THROW(read(), InputError) << name;
      ++bad;
    } else {
      EXPECT_GT(read(), 0u) << name;
      ++valid;
    }
  }
  EXPECT_EQ(valid, 3);
  EXPECT_EQ(bad, 4);
  // A PodList's items are Pods; other kinds are skipped.
  EXPECT_EQ(io::k8s_list_items(json::parse(R"({"kind":"PodList","items":[{"metadata":{"name":"p"}},{"kind":"Service","metadata":{"name":"s"}}]})"), "t")
                .size(),
            1u);
}

}  // namespace
}  // namespace gpufleet::live
