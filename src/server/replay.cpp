#include "server/replay.h"

#include <algorithm>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

#include "live/cluster_cache.h"
#include "sched/framework/interface.h"
#include "server/http_server.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

std::string key_of(const Pod& pod) { return sched::pod_key(pod); }

std::vector<int32_t> distinct_gpus(const DeviceAssignment& d) {
  std::vector<int32_t> out = d.gpus;
  out.insert(out.end(), d.shared_replicas.begin(), d.shared_replicas.end());
  for (const MigDevice& m : d.mig) out.push_back(m.gpu);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string mig_profiles(const DeviceAssignment& d) {
  std::vector<std::string> seen;
  for (const MigDevice& m : d.mig)
    if (std::find(seen.begin(), seen.end(), m.profile) == seen.end()) seen.push_back(m.profile);
  return fmt::format("{}", fmt::join(seen, ","));
}

nlohmann::json post(httplib::Client& client, const std::string& path, const nlohmann::json& body) {
  const auto res = client.Post(path, body.dump(), "application/json");
  if (!res) throw std::runtime_error(fmt::format("replay: POST {}: {}", path, httplib::to_string(res.error())));
  if (res->status != 200) throw std::runtime_error(fmt::format("replay: POST {}: HTTP {}: {}", path, res->status, res->body));
  return nlohmann::json::parse(res->body);
}

}  // namespace

size_t ReplayResult::mismatches() const {
  return static_cast<size_t>(std::count_if(decisions.begin(), decisions.end(), [](const ReplayDecision& d) { return !d.equal(); }));
}

ReplayResult run_replay(const std::vector<nlohmann::json>& objects, const ReplayOptions& options) {
  nlohmann::json items = nlohmann::json::array();
  std::map<std::string, nlohmann::json> pod_objects;  // key -> the object, as kube-scheduler sends it
  std::vector<nlohmann::json> node_objects;
  size_t pods_without_uid = 0;
  for (nlohmann::json object : objects) {
    const std::string kind = object.is_object() ? object.value("kind", std::string()) : std::string();
    const nlohmann::json meta = object.is_object() ? object.value("metadata", nlohmann::json::object()) : nlohmann::json();
    const std::string name = meta.is_object() ? meta.value("name", std::string()) : std::string();
    if (kind != "Node" && kind != "Pod")
      throw UsageError(fmt::format("--replay: {} {}: give Nodes and Pods (other kinds with --cluster-config)", kind.empty() ? "an object without kind" : kind, name));
    // The API server gives every object a metadata.uid when it is created, and kube-scheduler binds
    // by it; a Pod file written by hand has none, so the replay gives one, the same on every run.
    if (kind == "Pod" && meta.is_object() && meta.value("uid", std::string()).empty())
      object["metadata"]["uid"] = fmt::format("00000000-0000-4000-8000-{:012d}", ++pods_without_uid);
    if (kind == "Pod") {
      pod_objects[live::object_key(live::ResourceKind::kPod, object)] = object;
    } else {
      node_objects.push_back(object);
    }
    items.push_back(object);
  }
  live::ClusterCache cache(live::CacheOptions{options.place, options.cluster_config_paths});
  cache.replace_all(nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}, "--replay");
  const std::shared_ptr<const live::Snapshot> first = cache.snapshot();
  for (const std::string& line : first->refused) throw UsageError(fmt::format("--replay: {}", line));
  const place::PlaceInput& input = first->inputs.input;
  if (input.nodes.empty()) throw UsageError("--replay: no nodes");
  if (!input.pod_groups.empty() || !input.queued_workloads.empty())
    throw UsageError("--replay: pod groups and Kueue workloads are gangs, which the extender verbs do not replay");
  // `place` on the same objects in the order given, as `place --cluster` reads them from files: the
  // replay then catches a tie rule or queue order of `serve` that depends on the order it lists them.
  place::PlaceInput as_given = input;
  std::map<std::string, size_t> node_at, pod_at;  // name / "namespace/name" -> position given
  const auto at = [](const std::map<std::string, size_t>& m, const std::string& k) {
    const auto it = m.find(k);
    return it == m.end() ? m.size() : it->second;
  };
  {
    for (const nlohmann::json& o : objects) {
      const std::string kind = o.value("kind", std::string());
      if (kind == "Node") node_at.emplace(o["metadata"].value("name", std::string()), node_at.size());
      else pod_at.emplace(live::object_key(live::ResourceKind::kPod, o), pod_at.size());
    }
    std::stable_sort(as_given.nodes.begin(), as_given.nodes.end(),
                     [&](const Node& a, const Node& b) { return at(node_at, a.name) < at(node_at, b.name); });
    std::stable_sort(as_given.pods.begin(), as_given.pods.end(),
                     [&](const Pod& a, const Pod& b) { return at(pod_at, key_of(a)) < at(pod_at, key_of(b)); });
  }
  const place::PlaceResult placed = place::place_workload(as_given, options.place);
  std::map<std::string, const place::Placement*> place_of;
  for (const place::Placement& p : placed.placements) place_of[p.pod] = &p;

  ReplayResult result;
  result.nodes = input.nodes.size();
  std::vector<std::string> node_names;
  for (const Node& n : input.nodes) node_names.push_back(n.name);
  nlohmann::json node_list = {{"metadata", nlohmann::json::object()}, {"items", nlohmann::json::array()}};
  for (const Node& n : input.nodes)
    for (const nlohmann::json& o : node_objects)
      if (o["metadata"].value("name", std::string()) == n.name) node_list["items"].push_back(o);

  ServerOptions server_options;
  server_options.host = "127.0.0.1";
  server_options.port = 0;
  server_options.threads = 2;
  ServerHooks hooks;
  hooks.now_ns = [] { return int64_t{0}; };
  HttpServer server(server_options, cache, nullptr, std::move(hooks));
  const int port = server.bind();
  std::thread serving([&] { server.serve(); });
  struct Stop {
    HttpServer& server;
    std::thread& thread;
    ~Stop() {
      server.stop();
      thread.join();
    }
  } stop{server, serving};

  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(std::chrono::seconds(60));
  std::vector<size_t> queue;
  for (size_t i = 0; i < input.pods.size(); ++i)
    if (input.pods[i].node_name.empty()) queue.push_back(i);
  // kube-scheduler's queue: priority, then creation (the order given).
  std::stable_sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
    if (input.pods[a].priority != input.pods[b].priority) return input.pods[a].priority > input.pods[b].priority;
    return at(pod_at, key_of(input.pods[a])) < at(pod_at, key_of(input.pods[b]));
  });
  for (const size_t i : queue) {
    const Pod& pod = input.pods[i];
    const std::string key = key_of(pod);
    ReplayDecision d;
    d.pod = key;
    if (const auto p = place_of.find(key); p != place_of.end()) {
      d.place_node = p->second->node;
      d.place_gpus = p->second->gpus;
      d.place_mig = p->second->mig.value_or("");
      d.place_preempted = !p->second->preempted.empty();
    }
    nlohmann::json args = {{"Pod", pod_objects.at(key)}};
    if (options.node_cache_capable) {
      args["Nodes"] = nullptr;
      args["NodeNames"] = node_names;
    } else {
      args["Nodes"] = node_list;
      args["NodeNames"] = nullptr;
    }
    const nlohmann::json filtered = post(client, "/filter", args);
    ++result.filter_calls;
    std::vector<std::string> passed;
    if (options.node_cache_capable) {
      if (filtered["NodeNames"].is_array()) passed = filtered["NodeNames"].get<std::vector<std::string>>();
    } else if (filtered["Nodes"].is_object()) {
      for (const nlohmann::json& n : filtered["Nodes"]["items"]) passed.push_back(n["metadata"]["name"].get<std::string>());
    }
    std::string chosen;
    if (passed.size() == 1) {
      chosen = passed.front();
    } else if (passed.size() > 1) {
      if (options.node_cache_capable) {
        args["NodeNames"] = passed;
      } else {
        nlohmann::json kept = nlohmann::json::array();
        for (const nlohmann::json& n : filtered["Nodes"]["items"]) kept.push_back(n);
        args["Nodes"]["items"] = std::move(kept);
      }
      const nlohmann::json scores = post(client, "/prioritize", args);
      ++result.prioritize_calls;
      int64_t best = -1;
      for (const nlohmann::json& s : scores)
        if (s["Score"].get<int64_t>() > best) {
          best = s["Score"].get<int64_t>();
          chosen = s["Host"].get<std::string>();
        }
    }
    if (!chosen.empty()) {
      const nlohmann::json bound = post(client, "/bind", {{"PodName", pod.name},
                                                          {"PodNamespace", pod.namespace_name.empty() ? "default" : pod.namespace_name},
                                                          {"PodUID", pod.uid},
                                                          {"Node", chosen}});
      ++result.bind_calls;
      if (!bound.value("Error", std::string()).empty())
        throw std::runtime_error(fmt::format("replay: bind {} to {}: {}", key, chosen, bound["Error"].get<std::string>()));
      const std::shared_ptr<const live::Snapshot> now = cache.snapshot();
      const Pod& as_bound = now->inputs.input.pods[now->pod_by_key.at(key)];
      d.live_node = as_bound.node_name;
      if (as_bound.assigned_devices) {
        d.live_gpus = distinct_gpus(*as_bound.assigned_devices);
        d.live_mig = mig_profiles(*as_bound.assigned_devices);
      }
    }
    result.decisions.push_back(std::move(d));
  }
  return result;
}

std::string replay_text(const ReplayResult& r) {
  size_t bound = 0, preempted = 0;
  for (const ReplayDecision& d : r.decisions) {
    bound += d.live_node.empty() ? 0 : 1;
    preempted += d.place_preempted ? 1 : 0;
  }
  std::string out = fmt::format("replay: {} nodes, {} pods to schedule: {} bound, {} pending\n", r.nodes, r.decisions.size(), bound,
                                r.decisions.size() - bound);
  out += fmt::format("extender calls: filter {}, prioritize {}, bind {}\n", r.filter_calls, r.prioritize_calls, r.bind_calls);
  out += fmt::format("equal to place: {}/{}{}\n", r.decisions.size() - r.mismatches(), r.decisions.size(),
                     preempted ? fmt::format(" ({} bound by preemption in place, not replayed)", preempted) : "");
  const auto where = [](const std::string& node, const std::vector<int32_t>& gpus, const std::string& mig) {
    if (node.empty()) return std::string("pending");
    return fmt::format("{} gpus [{}]{}", node, fmt::join(gpus, ","), mig.empty() ? "" : " mig " + mig);
  };
  for (const ReplayDecision& d : r.decisions)
    if (!d.equal())
      out += fmt::format("  differs: {}: serve {} / place {}\n", d.pod, where(d.live_node, d.live_gpus, d.live_mig),
                         where(d.place_node, d.place_gpus, d.place_mig));
  return out;
}

nlohmann::json replay_json(const ReplayResult& r) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const ReplayDecision& d : r.decisions)
    decisions.push_back({{"pod", d.pod},
                         {"serve", {{"node", d.live_node}, {"gpus", d.live_gpus}, {"mig", d.live_mig}}},
                         {"place", {{"node", d.place_node}, {"gpus", d.place_gpus}, {"mig", d.place_mig}, {"preempted_others", d.place_preempted}}},
                         {"equal", d.equal()}});
  return {{"nodes", r.nodes},
          {"calls", {{"filter", r.filter_calls}, {"prioritize", r.prioritize_calls}, {"bind", r.bind_calls}}},
          {"mismatches", r.mismatches()},
          {"decisions", std::move(decisions)}};
}

}  // namespace gpufleet::server
