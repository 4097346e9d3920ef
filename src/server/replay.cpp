#include "server/replay.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

#include "live/cluster_cache.h"
#include "readers/kube_api/k8s_json.h"
#include "sched/daemon_set.h"
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

using nlohmann::json;

std::string string_at(const json& object, const char* a, const char* b) {
  if (!object.is_object()) return {};
  const auto x = object.find(a);
  if (x == object.end() || !x->is_object()) return {};
  const auto y = x->find(b);
  return y != x->end() && y->is_string() ? y->get<std::string>() : std::string();
}

// metadata.namespace, "default" when absent or empty (as the reader reads it).
std::string namespace_of(const json& object) {
  const std::string ns = string_at(object, "metadata", "namespace");
  return ns.empty() ? "default" : ns;
}

// The workload controllers the reader makes pods of (io::PodOwner::kind), and DaemonSets.
bool is_controller(const std::string& kind) {
  return kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" || kind == "Job" || kind == "DaemonSet";
}

// A pod the controller creates from its template (GetPodFromTemplate): the template's metadata and
// spec, with the pod's name and the controller's namespace.
json pod_from_template(const json& owner, const std::string& name, const std::string& namespace_name) {
  const json& spec = owner.at("spec");
  const json& tmpl = spec.at("template");
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = tmpl.contains("metadata") && tmpl["metadata"].is_object() ? tmpl["metadata"] : json::object();
  pod["metadata"]["name"] = name;
  pod["metadata"]["namespace"] = namespace_name;
  pod["spec"] = tmpl.contains("spec") && tmpl["spec"].is_object() ? tmpl["spec"] : json::object();
  return pod;
}

// core/v1 Toleration and NodeSelectorTerm as the API writes them (empty fields left out).
json toleration_json(const Toleration& t) {
  json out = json::object();
  if (!t.key.empty()) out["key"] = t.key;
  out["operator"] = t.operator_;
  if (!t.value.empty()) out["value"] = t.value;
  if (!t.effect.empty()) out["effect"] = t.effect;
  if (t.toleration_seconds) out["tolerationSeconds"] = *t.toleration_seconds;
  return out;
}
json requirements_json(const std::vector<SelectorRequirement>& requirements) {
  json out = json::array();
  for (const SelectorRequirement& r : requirements) {
    json one = {{"key", r.key}, {"operator", r.operator_}};
    if (!r.values.empty()) one["values"] = r.values;
    out.push_back(std::move(one));
  }
  return out;
}
json node_selector_term_json(const NodeSelectorTerm& t) {
  json out = json::object();
  if (!t.match_expressions.empty()) out["matchExpressions"] = requirements_json(t.match_expressions);
  if (!t.match_fields.empty()) out["matchFields"] = requirements_json(t.match_fields);
  return out;
}

// A DaemonSet's pod for its node as the daemon controller creates it: the template, with the pod's
// name, the controller's tolerations and its node affinity (sched::daemon_set_pod made `pod` so).
json daemon_set_pod_json(const json& daemon_set, const Pod& pod) {
  json out = pod_from_template(daemon_set, pod.name, pod.namespace_name);
  json& spec = out["spec"];
  spec["tolerations"] = json::array();
  for (const Toleration& t : pod.constraints.tolerations) spec["tolerations"].push_back(toleration_json(t));
  json terms = json::array();
  for (const NodeSelectorTerm& t : pod.constraints.required_node_affinity) terms.push_back(node_selector_term_json(t));
  if (!spec["affinity"].is_object()) spec["affinity"] = json::object();
  if (!spec["affinity"]["nodeAffinity"].is_object()) spec["affinity"]["nodeAffinity"] = json::object();
  spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", std::move(terms)}};
  return out;
}

// What the API server's Priority admission writes on a pod (as the reader resolved `pod`).
void admit_priority(json& object, const Pod& pod) {
  json& spec = object["spec"];
  spec["priority"] = pod.priority;
  spec["preemptionPolicy"] = pod.preempt_lower_priority ? "PreemptLowerPriority" : "Never";
  if (!pod.priority_class_name.empty()) spec["priorityClassName"] = pod.priority_class_name;
}

// One pod of the replayed cluster: its object as the API holds it and as the reader read it.
struct CreatedPod {
  json object;
  const Pod* pod = nullptr;
  bool daemon_set = false;
};

}  // namespace

size_t ReplayResult::mismatches() const {
  return static_cast<size_t>(std::count_if(decisions.begin(), decisions.end(), [](const ReplayDecision& d) { return !d.equal(); }));
}

ReplayInputs read_replay_inputs(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths) {
  ReplayInputs out;
  out.place = io::read_place_inputs(cluster_paths, workload_paths);
  out.objects = io::read_k8s_json_objects(io::place_input_paths(cluster_paths, workload_paths));
  return out;
}

ReplayResult run_replay(const ReplayInputs& inputs, const ReplayOptions& options) {
  const io::PlaceInputs& read = inputs.place;
  const place::PlaceInput& input = read.input;
  if (!input.pod_groups.empty()) {
    const PodGroup& g = input.pod_groups.front();
    throw UsageError(fmt::format("--replay: PodGroup {}/{} is a gang: pod groups and Kueue workloads are placed all or nothing, "
                                 "which the extender verbs (one pod at a time) do not replay; `gpufleet place` places them",
                                 g.namespace_name, g.name));
  }
  if (!input.queued_workloads.empty()) {
    const queue::Workload& w = input.queued_workloads.front();
    throw UsageError(fmt::format("--replay: {}/{} is queued to Kueue (LocalQueue {}), a gang: pod groups and Kueue workloads are placed "
                                 "all or nothing, which the extender verbs (one pod at a time) do not replay; `gpufleet place` places them",
                                 w.namespace_name, w.name, w.local_queue));
  }
  const place::PlaceResult placed = place::place_workload(input, options.place);
  std::map<std::string, const place::Placement*> place_of;
  for (const place::Placement& p : placed.placements) place_of[p.pod] = &p;
  std::set<std::string> quota_rejected;  // at creation: never created
  for (const place::Unplaced& u : placed.quota_rejected)
    if (!u.recreated) quota_rejected.insert(u.pod);

  // The objects by kind: Nodes, Pods and controllers by key; the rest is static.
  std::map<std::string, const json*> node_objects, pod_objects, owners;  // name; namespace/name; kind/namespace/name
  std::vector<json> static_objects;
  for (const json& object : inputs.objects) {
    const std::string kind = object.is_object() && object.contains("kind") && object["kind"].is_string() ? object["kind"].get<std::string>() : "";
    const std::string name = string_at(object, "metadata", "name");
    if (kind == "Node") {
      node_objects.emplace(name, &object);
    } else if (kind == "Pod") {
      pod_objects.emplace(namespace_of(object) + "/" + name, &object);
    } else if (is_controller(kind)) {
      owners.emplace(kind + "/" + namespace_of(object) + "/" + name, &object);
    } else if (!(kind == "NodePoolSet" && object.value("apiVersion", json()).is_string() &&
                 object["apiVersion"].get<std::string>().starts_with("gpufleet.io/"))) {  // node pools: pool_paths
      static_objects.push_back(object);
    }
  }
  const auto owner_object = [&](const std::string& kind, const std::string& namespace_name, const std::string& name) -> const json& {
    const auto it = owners.find(kind + "/" + namespace_name + "/" + name);
    if (it == owners.end()) throw std::logic_error(fmt::format("replay: no {} {}/{} among the objects read", kind, namespace_name, name));
    return *it->second;
  };

  // The pods, in creation order: the DaemonSets' first (place/place_workload.h step 1a), then the input's.
  std::vector<CreatedPod> created;
  std::deque<Pod> daemon_pods;  // stable addresses
  for (const DaemonSet& ds : input.daemon_sets) {
    const json& object = owner_object("DaemonSet", ds.namespace_name, ds.name);
    for (Pod& pod : sched::daemon_set_pods(std::span(&ds, 1), input.nodes)) {
      daemon_pods.push_back(std::move(pod));
      created.push_back({daemon_set_pod_json(object, daemon_pods.back()), &daemon_pods.back(), true});
    }
  }
  for (size_t i = 0; i < read.objects.pods.size(); ++i) {
    const Pod& pod = read.objects.pods[i];
    const io::PodOwner& owner = read.objects.pod_owners.at(i);
    json object = owner.kind == "Pod" ? *pod_objects.at(key_of(pod))
                                      : pod_from_template(owner_object(owner.kind, pod.namespace_name, owner.name), pod.name, pod.namespace_name);
    created.push_back({std::move(object), &pod, false});
  }
  size_t uids = 0;
  for (CreatedPod& c : created) {
    admit_priority(c.object, *c.pod);
    // The API server gives every object a metadata.uid when it is created, and kube-scheduler binds
    // by it; a Pod file written by hand has none, so the replay gives one, the same on every run.
    if (string_at(c.object, "metadata", "uid").empty()) c.object["metadata"]["uid"] = fmt::format("00000000-0000-4000-8000-{:012d}", ++uids);
  }

  nlohmann::json items = nlohmann::json::array();
  for (const Node& n : input.nodes)
    if (const auto it = node_objects.find(n.name); it != node_objects.end()) items.push_back(*it->second);
  for (const CreatedPod& c : created) items.push_back(c.object);
  live::CacheOptions cache_options;
  cache_options.place = options.place;
  cache_options.static_objects = std::move(static_objects);
  cache_options.pool_paths = read.objects.pool_files;
  live::ClusterCache cache(std::move(cache_options));
  cache.replace_all(nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}, "--replay");
  const std::shared_ptr<const live::Snapshot> first = cache.snapshot();
  for (const std::string& line : first->refused) throw UsageError(fmt::format("--replay: {}", line));
  const place::PlaceInput& live_input = first->inputs.input;
  for (const CreatedPod& c : created)
    if (first->pod_by_key.count(key_of(*c.pod)) == 0) {
      const std::string phase = string_at(c.object, "status", "phase");
      if (phase == "Succeeded" || phase == "Failed")  // live/cluster_cache.h: kube-scheduler's informer leaves them out
        throw UsageError(fmt::format("--replay: Pod {} has status.phase {}: the server leaves terminal pods out, as kube-scheduler does, "
                                     "and place counts them; leave it out of the files",
                                     key_of(*c.pod), phase));
      throw std::logic_error(fmt::format("replay: the server's cache does not hold pod {}", key_of(*c.pod)));
    }
  if (live_input.nodes.size() != input.nodes.size())
    throw std::logic_error(fmt::format("replay: the server's cache holds {} nodes, place {}", live_input.nodes.size(), input.nodes.size()));

  ReplayResult result;
  result.nodes = live_input.nodes.size();
  std::vector<std::string> node_names;
  nlohmann::json node_list = {{"metadata", nlohmann::json::object()}, {"items", nlohmann::json::array()}};
  for (const Node& n : live_input.nodes) {  // the cache's order: pool nodes, then Nodes by name (the API's order)
    node_names.push_back(n.name);
    if (const auto it = node_objects.find(n.name); it != node_objects.end()) {
      node_list["items"].push_back(*it->second);
    } else {  // a pool node: its name and labels
      json labels = json::object();
      for (const auto& [k, v] : n.labels) labels[k] = v;
      node_list["items"].push_back({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", n.name}, {"labels", std::move(labels)}}}});
    }
  }

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
  // kube-scheduler's queue as place fills it: the DaemonSets' pods, then the others; each by
  // priority, then creation (the order given). Pods bound already and pods never created are not in it.
  std::vector<size_t> queue;
  for (size_t i = 0; i < created.size(); ++i) {
    const Pod& pod = *created[i].pod;
    if (!pod.node_name.empty()) continue;
    if (quota_rejected.count(key_of(pod)) != 0) {
      result.quota_rejected.push_back(key_of(pod));
      continue;
    }
    queue.push_back(i);
  }
  std::stable_sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
    if (created[a].daemon_set != created[b].daemon_set) return created[a].daemon_set;
    return created[a].pod->priority > created[b].pod->priority;
  });
  for (const size_t i : queue) {
    const Pod& pod = *created[i].pod;
    const std::string key = key_of(pod);
    ReplayDecision d;
    d.pod = key;
    d.daemon_set = created[i].daemon_set;
    if (const auto p = place_of.find(key); p != place_of.end()) {
      d.place_node = p->second->node;
      d.place_gpus = p->second->gpus;
      d.place_mig = p->second->mig.value_or("");
      d.place_preempted = !p->second->preempted.empty();
    }
    nlohmann::json args = {{"Pod", created[i].object}};
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
                                                          {"PodUID", string_at(created[i].object, "metadata", "uid")},
                                                          {"Node", chosen}});
      ++result.bind_calls;
      if (!bound.value("Error", std::string()).empty())
        throw std::runtime_error(fmt::format("replay: bind {} to {}: {}", key, chosen, bound["Error"].get<std::string>()));
      const std::shared_ptr<const live::Snapshot> now = cache.snapshot();
      const std::lock_guard lock(now->decide_mutex);
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
  size_t bound = 0, preempted = 0, daemon = 0;
  for (const ReplayDecision& d : r.decisions) {
    bound += d.live_node.empty() ? 0 : 1;
    preempted += d.place_preempted ? 1 : 0;
    daemon += d.daemon_set ? 1 : 0;
  }
  std::string out = fmt::format("replay: {} nodes, {} pods to schedule{}: {} bound, {} pending\n", r.nodes, r.decisions.size(),
                                daemon ? fmt::format(" ({} of DaemonSets, first)", daemon) : "", bound, r.decisions.size() - bound);
  if (!r.quota_rejected.empty())
    out += fmt::format("not created, rejected by ResourceQuota admission as in place: {} pod{}\n", r.quota_rejected.size(),
                       r.quota_rejected.size() == 1 ? "" : "s");
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
                         {"daemon_set", d.daemon_set},
                         {"serve", {{"node", d.live_node}, {"gpus", d.live_gpus}, {"mig", d.live_mig}}},
                         {"place", {{"node", d.place_node}, {"gpus", d.place_gpus}, {"mig", d.place_mig}, {"preempted_others", d.place_preempted}}},
                         {"equal", d.equal()}});
  return {{"nodes", r.nodes},
          {"calls", {{"filter", r.filter_calls}, {"prioritize", r.prioritize_calls}, {"bind", r.bind_calls}}},
          {"mismatches", r.mismatches()},
          {"quota_rejected", r.quota_rejected},
          {"decisions", std::move(decisions)}};
}

}  // namespace gpufleet::server
