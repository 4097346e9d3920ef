// The extender verbs over kube-scheduler's sample (live/extender.h): Filter and Score run on the sent
// nodes only (Scheduler::evaluate with candidates). On seeded random clusters, each sent node's
// filter verdict and words are those of the evaluation over every node, and prioritize (the default
// policy, whose raw scores need no normalization) ranks the sent nodes as the whole cluster's order
// does; with a weighted-sum profile, NormalizeScore runs over the sent nodes, worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "live/cluster_cache.h"
#include "live/extender.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::live {
namespace {

using nlohmann::json;

json resources(int cpu, int memory_gib, int gpus) {
  json r = {{"cpu", std::to_string(cpu)}, {"memory", std::to_string(memory_gib) + "Gi"}, {"pods", "110"}};
  if (gpus > 0) r["nvidia.com/gpu"] = std::to_string(gpus);
  return r;
}

json node_object(const std::string& name, int cpu, int memory_gib, int gpus, json labels = json::object()) {
  if (gpus > 0) labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
  const json r = resources(cpu, memory_gib, gpus);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", json::object()},
          {"status", {{"allocatable", r}, {"capacity", r}}}};
}

json pod_object(const std::string& name, int cpu, int memory_gib, int gpus, const std::string& node_name = "") {
  json requests = {{"cpu", std::to_string(cpu)}, {"memory", std::to_string(memory_gib) + "Gi"}};
  if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", requests}}}}})}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

const Pod& find(const Snapshot& s, const std::string& key) { return s.inputs.input.pods.at(s.pod_by_key.at(key)); }

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

// A seeded cluster of 20..59 nodes "n<i>": 0, 2, 4 or 8 GPUs, some tainted NoSchedule (dedicated=
// train) or PreferNoSchedule (spot), some cordoned, 0..3 pods bound on each within its GPUs; and 12
// pending pods "q<k>" of 0..4 GPUs, some tolerating the taint, some asking for 64 CPUs (none fit).
json random_cluster(GoRand& gen) {
  json items = json::array();
  const int nodes = 20 + static_cast<int>(gen.intn(40));
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    const int gpus = std::vector<int>{0, 2, 4, 8}[static_cast<size_t>(gen.intn(4))];
    json n = node_object(name, 32, 256, gpus);
    json taints = json::array();
    if (gen.intn(5) == 0) taints.push_back({{"key", "dedicated"}, {"value", "train"}, {"effect", "NoSchedule"}});
    if (gen.intn(6) == 0) taints.push_back({{"key", "spot"}, {"value", "true"}, {"effect", "PreferNoSchedule"}});
    if (!taints.empty()) n["spec"]["taints"] = taints;
    if (gen.intn(10) == 0) n["spec"]["unschedulable"] = true;
    items.push_back(n);
    int free = gpus;
    for (int k = 0, pods = static_cast<int>(gen.intn(4)); k < pods; ++k) {
      const int take = free == 0 ? 0 : static_cast<int>(gen.intn(free + 1));
      free -= take;
      items.push_back(pod_object(fmt::format("b{}-{}", i, k), 1 + static_cast<int>(gen.intn(8)), 4, take, name));
    }
  }
  for (int k = 0; k < 12; ++k) {
    json p = pod_object("q" + std::to_string(k), gen.intn(6) == 0 ? 64 : 2, 8, static_cast<int>(gen.intn(5)));
    if (gen.intn(3) == 0)
      p["spec"]["tolerations"] = json::array({{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "train"}, {"effect", "NoSchedule"}}});
    items.push_back(p);
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
}

// Every node sent, and random subsets of them (with names the cache does not know, in random order,
// some twice), for every pending pod: each sent node's answer is the one of the evaluation over every
// node (Scheduler::evaluate without candidates), as the extender read it before it filtered only the
// sent nodes; prioritize ranks the sent feasible nodes in the whole cluster's order.
TEST(LiveExtenderSample, SentNodesAnswerAsTheEvaluationOverEveryNode) {
  int sent_total = 0, passed_total = 0, failed_total = 0, unresolvable_total = 0, ranked_total = 0;
  for (int64_t seed = 1; seed <= 6; ++seed) {
    GoRand gen(seed * 7919);
    ClusterCache cache(CacheOptions{});
    cache.replace_all(random_cluster(gen), "test");
    const auto s = cache.snapshot();
    std::map<NodeId, std::string> name_of;
    for (const auto& [name, n] : s->cluster.node_by_name) name_of[n] = name;
    std::vector<std::string> all_names;
    for (const auto& [n, name] : name_of) all_names.push_back(name);
    for (const Pod& pod : s->inputs.input.pods) {
      if (!pod.node_name.empty()) continue;
      const std::string key = pod.namespace_name + "/" + pod.name;
      for (int round = 0; round < 6; ++round) {
        SCOPED_TRACE(fmt::format("seed {} pod {} round {}", seed, key, round));
        std::vector<std::string> names;
        if (round == 0) {
          names = all_names;
        } else {
          const int64_t one_in = 1 + gen.intn(4);
          for (const int i : gen.perm(static_cast<int>(all_names.size())))
            if (gen.intn(one_in) == 0) names.push_back(all_names[static_cast<size_t>(i)]);
          if (!names.empty() && gen.intn(2) == 0) names.push_back(names.front());
          if (gen.intn(2) == 0) names.insert(names.begin() + static_cast<ptrdiff_t>(gen.intn(static_cast<int64_t>(names.size()) + 1)), "gone");
        }
        const FilterAnswer filter = extender_filter(*s, pod, names);
        const std::vector<HostScore> scores = extender_prioritize(*s, pod, names);
        // The oracle: the evaluation over every node, read for the sent nodes.
        sched::NodeEvaluation full;
        {
          std::lock_guard<std::mutex> lock(s->decide_mutex);
          GoRand rng(static_cast<int64_t>(s->seed));
          s->cluster.scheduler->evaluate(pod, *s->cluster.state, rng, full);
        }
        ASSERT_FALSE(full.node_to_status.empty());
        ASSERT_TRUE(filter.error.empty());
        std::vector<std::string> passed;
        for (const std::string& name : names) {
          ++sent_total;
          const auto it = s->cluster.node_by_name.find(name);
          if (it == s->cluster.node_by_name.end()) {
            EXPECT_EQ(filter.failed_unresolvable.at(name), "node(s) not in gpufleet's cache");
            continue;
          }
          const sched::Rejection r = full.node_to_status.at(it->second);
          if (!r.rejected()) {
            passed.push_back(name);
            continue;
          }
          const auto& bucket = r.resolvable() ? filter.failed : filter.failed_unresolvable;
          ASSERT_EQ(bucket.count(name), 1u) << name;
          EXPECT_EQ(bucket.at(name), joined(r.node_reasons(pod, *s->cluster.state, it->second))) << name;
          ++(r.resolvable() ? failed_total : unresolvable_total);
        }
        EXPECT_EQ(filter.passed, passed);
        passed_total += static_cast<int>(passed.size());
        // Prioritize: the whole cluster's order restricted to the sent nodes; the best 10, the k-th
        // of n after it floor(9 (n-1-k) / (n-1)), the rest 0.
        std::vector<std::string> order;
        for (const NodeId n : full.ranked)
          if (std::find(names.begin(), names.end(), name_of.at(n)) != names.end()) order.push_back(name_of.at(n));
        std::map<std::string, int64_t> want;
        for (size_t k = 0; k < order.size(); ++k)
          want[order[k]] = k == 0 ? 10 : static_cast<int64_t>(9 * (order.size() - 1 - k) / (order.size() - 1));
        ASSERT_EQ(scores.size(), names.size());
        std::map<std::string, bool> first;
        for (size_t i = 0; i < names.size(); ++i) {
          ASSERT_EQ(scores[i].host, names[i]);
          // A name sent twice: its first place gets the score, the repeat 0.
          const bool is_first = first.emplace(names[i], true).second;
          EXPECT_EQ(scores[i].score, is_first && want.count(names[i]) ? want.at(names[i]) : 0) << names[i];
        }
        ranked_total += static_cast<int>(order.size());
      }
    }
  }
  // The runs cover what they claim.
  EXPECT_GT(sent_total, 5000);
  EXPECT_GT(passed_total, 500);
  EXPECT_GT(failed_total, 100);
  EXPECT_GT(unresolvable_total, 100);
  EXPECT_GT(ranked_total, 500);
}

// kube's default profile (weighted sum) normalizes each Score plugin over the nodes it scores, here
// the sent ones. Nodes of 10 CPUs and 10 GiB; b runs a pod of 8 CPUs and 8 GiB. The pod (1 CPU,
// 1 GiB) prefers pref=a (weight 10) and pref=b (weight 3). TaintToleration, PodTopologySpread and
// InterPodAffinity skip (no taints, no constraints); per node:
//   NodeResourcesFit (LeastAllocated, cpu and memory): a, c (10-1)*100/10 = 90; b (10-9)*100/10 = 10
//   NodeResourcesBalancedAllocation: cpu and memory in equal shares everywhere: 100
//   NodeAffinity raw sums a 10, b 3, c 0; normalized 100 * sum / max over the nodes scored.
// Sent a, b, c: NodeAffinity 100, 30, 0; totals (weight 2) a 200+90+100 = 390, b 60+10+100 = 170,
// c 0+90+100 = 190: order a, c, b: 10, floor(9*1/2) = 4, 0.
// Sent b, c: NodeAffinity b 100, c 0; totals b 200+10+100 = 310, c 190: b first. Over the whole
// cluster (before: the cluster's normalization) c came first.
TEST(LiveExtenderSample, PrioritizeNormalizesOverTheSentNodes) {
  CacheOptions options;
  options.place.policy = "default-scheduler";
  ClusterCache cache(std::move(options));
  json incoming = pod_object("p", 1, 1, 0);
  incoming["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution",
         json::array({{{"weight", 10}, {"preference", {{"matchExpressions", json::array({{{"key", "pref"}, {"operator", "In"}, {"values", {"a"}}}})}}}},
                      {{"weight", 3}, {"preference", {{"matchExpressions", json::array({{{"key", "pref"}, {"operator", "In"}, {"values", {"b"}}}})}}}}})}}}};
  cache.replace_all({{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"metadata", {{"resourceVersion", "1"}}},
                     {"items", json::array({node_object("a", 10, 10, 0, {{"pref", "a"}}), node_object("b", 10, 10, 0, {{"pref", "b"}}),
                                            node_object("c", 10, 10, 0), pod_object("big", 8, 8, 0, "b"), incoming})}},
                    "test");
  const auto s = cache.snapshot();
  const Pod& p = find(*s, "default/p");
  const auto score_of = [](const std::vector<HostScore>& scores) {
    std::map<std::string, int64_t> out;
    for (const HostScore& h : scores) out[h.host] = h.score;
    return out;
  };
  EXPECT_EQ(score_of(extender_prioritize(*s, p, {"a", "b", "c"})), (std::map<std::string, int64_t>{{"a", 10}, {"b", 0}, {"c", 4}}));
  EXPECT_EQ(score_of(extender_prioritize(*s, p, {"c", "b"})), (std::map<std::string, int64_t>{{"b", 10}, {"c", 0}}));
  EXPECT_EQ(score_of(extender_prioritize(*s, p, {"a", "c"})), (std::map<std::string, int64_t>{{"a", 10}, {"c", 0}}));
}

}  // namespace
}  // namespace gpufleet::live
