// A fake Kubernetes API server for Nodes and Pods, for tests and load runs of `gpufleet serve` against
// a cluster that changes (tests/live/two_replicas_test.sh, bench/live/churn_extender.sh). It serves
// what `serve --kubeconfig` uses, with the API server's semantics where gpufleet depends on them:
//
//   GET  /api/v1/nodes, /api/v1/pods            a list (limit / continue pages of one consistent
//                                               snapshot; metadata.resourceVersion), or with
//                                               watch=1 a stream of watch events (one JSON object a
//                                               line, chunked) after ?resourceVersion=, 410 Gone when
//                                               that version is older than the kept history
//   POST /api/v1/namespaces/{ns}/pods/{name}/binding
//                                               v1.Binding: sets spec.nodeName and copies the
//                                               binding's annotations onto the pod in one update
//                                               (201); 404 for an unknown pod; 409 Conflict "pod X
//                                               is already assigned to node \"Y\"" for a bound one
//                                               (kubernetes pkg/registry/core/pod/storage/storage.go)
//   GET  /fake/pods/{ns}/{name}                 the pod as held (tests read the winner of a race)
//   GET  /fake/stats                            {"events": N, "bindings": N, "conflicts": N}
//
// Unlike the real server, one resourceVersion counter is shared by both kinds (as etcd's revision).
//
// Usage:
//   fake_apiserver [--port P] [--token T] [--objects FILE] [--nodes N] [--pods-per-node K]
//                  [--pending-pods M] [--pending-gpus G] [--events-per-second R] [--seed S] [--history N]
//                  [--watch-delay-seconds D]
//   --objects: a v1 List (kubectl get nodes,pods -o json) loaded at start; --nodes N adds N nodes of
//   8 H100 GPUs named node-<i>, each with K bound pods of 1-4 GPUs; --pending-pods M adds M pending
//   pods pending-<i> (namespace default, uid uid-pending-<i>) of G GPUs each. --events-per-second R > 0 starts
//   churn, R watch events a second, drawn from a generator seeded with --seed: a pending pod created
//   (ADDED), bound by "another scheduler" to a node with room (MODIFIED), finished (DELETED), and at
//   one event in 50 a node added or an empty-ish node removed (its pods deleted first), so the cluster
//   stays about its starting size. --watch-delay-seconds D: watches deliver each event D seconds after
//   it happened (a lagging watch: two replicas then both bind before either sees the other's bind).
//   --history N: events kept per kind for watches to resume from (older: 410). Prints "fake-apiserver listening on port P" on stdout once serving.
//   Stops at SIGTERM or SIGINT.
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

struct Options {
  int port = 0;
  std::string token;
  std::string objects_path;
  int nodes = 0;
  int pods_per_node = 0;
  int pending_pods = 0;
  int pending_gpus = 1;
  double events_per_second = 0;
  uint64_t seed = 1;
  size_t history = 200000;
  double watch_delay_s = 0;
};

constexpr int kGpusPerNode = 8;

json make_node(const std::string& name) {
  const json r = {{"cpu", "96"}, {"memory", "1024Gi"}, {"nvidia.com/gpu", std::to_string(kGpusPerNode)}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}, {"kubernetes.io/hostname", name}}}}},
          {"status", {{"allocatable", r}, {"capacity", r}}}};
}

json make_pod(const std::string& name, int gpus, const std::string& node) {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec",
             {{"containers",
               {{{"name", "c"},
                 {"resources",
                  {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
                   {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
            {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

int pod_gpus(const json& pod) {
  int n = 0;
  for (const json& c : pod["spec"].value("containers", json::array())) {
    const json req = c.value("resources", json::object()).value("requests", json::object());
    if (req.contains("nvidia.com/gpu")) n += std::atoi(req["nvidia.com/gpu"].get<std::string>().c_str());
  }
  return n;
}

std::string key_of(const json& obj) {
  const json& m = obj["metadata"];
  const std::string ns = m.value("namespace", "");
  return ns.empty() ? m.value("name", "") : ns + "/" + m.value("name", "");
}

class FakeApi {
 public:
  explicit FakeApi(Options o) : o_(std::move(o)), rng_(o_.seed) {}

  void load(const json& list) {
    std::lock_guard lock(mu_);
    for (const json& item : list.value("items", json::array())) {
      const std::string kind = item.value("kind", "");
      if (kind == "Node" || kind == "Pod") put_locked(kind == "Node" ? 0 : 1, item, /*event=*/false);
    }
  }
  void seed_cluster(int nodes, int pods_per_node, int pending_pods, int pending_gpus) {
    std::lock_guard lock(mu_);
    for (int i = 0; i < pending_pods; ++i) {
      put_locked(1, make_pod("pending-" + std::to_string(i), pending_gpus, ""), false);
      pending_.push_back("default/pending-" + std::to_string(i));
    }
    for (int i = 0; i < nodes; ++i) {
      const std::string n = "node-" + std::to_string(i);
      put_locked(0, make_node(n), false);
      for (int k = 0; k < pods_per_node; ++k) put_locked(1, make_pod("p" + std::to_string(i) + "-" + std::to_string(k), 1 + (i + k) % 4, n), false);
    }
    next_node_ = nodes;
  }

  void routes(httplib::Server& s) {
    s.Get("/api/v1/nodes", [this](const httplib::Request& q, httplib::Response& r) { list_or_watch(0, q, r); });
    s.Get("/api/v1/pods", [this](const httplib::Request& q, httplib::Response& r) { list_or_watch(1, q, r); });
    s.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)", [this](const httplib::Request& q, httplib::Response& r) { bind(q, r); });
    s.Get(R"(/fake/pods/([^/]+)/([^/]+))", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard lock(mu_);
      const auto it = objects_[1].find(q.matches[1].str() + "/" + q.matches[2].str());
      if (it == objects_[1].end()) {
        r.status = 404;
        return;
      }
      r.set_content(it->second.dump(), "application/json");
    });
    s.Get("/fake/stats", [this](const httplib::Request&, httplib::Response& r) {
      std::lock_guard lock(mu_);
      r.set_content(json{{"events", events_}, {"bindings", bindings_}, {"conflicts", conflicts_}, {"nodes", objects_[0].size()},
                         {"pods", objects_[1].size()}}
                        .dump(),
                    "application/json");
    });
  }

  // One churn step (see the top of this file).
  void churn_step() {
    std::lock_guard lock(mu_);
    std::uniform_real_distribution<double> u(0, 1);
    const double x = u(rng_);
    if (x < 0.02 || objects_[0].empty()) {  // node scale-up or removal
      if (u(rng_) < 0.5 || objects_[0].size() < 2) {
        put_locked(0, make_node("node-" + std::to_string(next_node_++)), true);
      } else {
        const std::string node = node_names_[std::uniform_int_distribution<size_t>(0, node_names_.size() - 1)(rng_)];
        const auto on = pods_on_.find(node);
        const std::vector<std::string> doomed = on == pods_on_.end() ? std::vector<std::string>{}
                                                                     : std::vector<std::string>(on->second.begin(), on->second.end());
        for (const std::string& k : doomed) remove_locked(1, k);
        remove_locked(0, node);
        free_.erase(node);
      }
      return;
    }
    if (x < 0.36 || (pending_.empty() && running_.empty())) {  // arrival
      const std::string name = "churn-" + std::to_string(next_pod_++);
      put_locked(1, make_pod(name, 1 + static_cast<int>(u(rng_) * 4), ""), true);
      pending_.push_back("default/" + name);
      return;
    }
    if (x < 0.68 && !pending_.empty()) {  // another scheduler binds the oldest pending pod
      const std::string k = pending_.front();
      pending_.pop_front();
      auto pit = objects_[1].find(k);
      if (pit == objects_[1].end()) return;
      const int gpus = pod_gpus(pit->second);
      for (int tries = 0; tries < 32; ++tries) {
        const std::string& node = node_names_[std::uniform_int_distribution<size_t>(0, node_names_.size() - 1)(rng_)];
        if (free_gpus(node) < gpus) continue;
        json p = pit->second;
        p["spec"]["nodeName"] = node;
        p["status"]["phase"] = "Running";
        put_locked(1, p, true);
        running_.push_back(k);
        return;
      }
      pending_.push_back(k);  // no room found: stays pending
      return;
    }
    if (!running_.empty()) {  // a completion
      const size_t i = std::uniform_int_distribution<size_t>(0, running_.size() - 1)(rng_);
      const std::string k = running_[i];
      running_[i] = running_.back();
      running_.pop_back();
      if (objects_[1].count(k) != 0) remove_locked(1, k);
    }
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
  }

 private:
  // Free GPUs of `node`. The first call counts every node's in one pass over the pods (a pass per
  // node made the churn of a 10,000-node cluster cost the fake most of a core); account() keeps the
  // counts after that, and a node added since starts with all its GPUs free.
  int free_gpus(const std::string& node) {
    if (!free_counted_) {
      free_counted_ = true;
      for (const auto& [k, n] : objects_[0]) free_.emplace(k, kGpusPerNode);
      for (const auto& [k, p] : objects_[1]) {
        const auto it = free_.find(p["spec"].value("nodeName", ""));
        if (it != free_.end()) it->second -= pod_gpus(p);
      }
    }
    const auto it = free_.find(node);
    if (it != free_.end()) return it->second;
    int used = 0;
    for (const auto& [k, p] : objects_[1])
      if (p["spec"].value("nodeName", "") == node) used += pod_gpus(p);
    return free_[node] = kGpusPerNode - used;
  }
  void account(const json& pod, int sign) {
    const std::string node = pod["spec"].value("nodeName", "");
    if (node.empty()) return;
    auto it = free_.find(node);
    if (it != free_.end()) it->second -= sign * pod_gpus(pod);
  }

  void put_locked(int kind, json obj, bool event) {
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    const std::string key = key_of(obj);
    auto it = objects_[kind].find(key);
    const char* type = it == objects_[kind].end() ? "ADDED" : "MODIFIED";
    if (kind == 1 && it != objects_[kind].end()) account(it->second, -1);
    if (kind == 1) account(obj, +1);
    if (kind == 0 && it == objects_[kind].end()) {
      node_slot_[key] = node_names_.size();
      node_names_.push_back(key);
    }
    if (kind == 1) index_pod(it == objects_[kind].end() ? nullptr : &it->second, &obj, key);
    if (event) record(kind, type, obj);
    objects_[kind][key] = std::move(obj);
  }
  void remove_locked(int kind, const std::string& key) {
    auto it = objects_[kind].find(key);
    json obj = it->second;
    if (kind == 1) account(obj, -1);
    if (kind == 1) index_pod(&obj, nullptr, key);
    if (kind == 0) {  // the last name takes the slot of the one removed
      const size_t slot = node_slot_.at(key);
      node_slot_[node_names_.back()] = slot;
      node_names_[slot] = node_names_.back();
      node_names_.pop_back();
      node_slot_.erase(key);
    }
    objects_[kind].erase(it);
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    record(kind, "DELETED", obj);
  }
  // pods_on_ after pod `key` changed from `was` to `now` (nullptr: absent).
  void index_pod(const json* was, const json* now, const std::string& key) {
    if (was != nullptr)
      if (const std::string node = (*was)["spec"].value("nodeName", ""); !node.empty()) {
        auto& keys = pods_on_[node];
        keys.erase(key);
        if (keys.empty()) pods_on_.erase(node);
      }
    if (now != nullptr)
      if (const std::string node = (*now)["spec"].value("nodeName", ""); !node.empty()) pods_on_[node].insert(key);
  }
  void record(int kind, const char* type, const json& obj) {
    history_[kind].push_back({rv_, {std::chrono::steady_clock::now(), json{{"type", type}, {"object", obj}}.dump() + "\n"}});
    if (history_[kind].size() > o_.history) {
      oldest_kept_[kind] = history_[kind].front().first;
      history_[kind].pop_front();
    }
    ++events_;
    cv_.notify_all();
  }

  static std::string status(int code, const char* reason, const std::string& message) {
    return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"message", message}, {"reason", reason}, {"code", code}}.dump();
  }
  bool authorized(const httplib::Request& q, httplib::Response& r) {
    if (o_.token.empty() || q.get_header_value("Authorization") == "Bearer " + o_.token) return true;
    r.status = 401;
    r.set_content(status(401, "Unauthorized", "Unauthorized"), "application/json");
    return false;
  }

  void list_or_watch(int kind, const httplib::Request& q, httplib::Response& r) {
    if (!authorized(q, r)) return;
    std::unique_lock lock(mu_);
    if (!q.has_param("watch")) {
      const size_t limit = q.has_param("limit") ? std::stoul(q.get_param_value("limit")) : 0;
      size_t snap = 0, offset = 0;
      if (q.has_param("continue")) {
        if (std::sscanf(q.get_param_value("continue").c_str(), "%zu:%zu", &snap, &offset) != 2 || snap >= snapshots_.size()) {
          r.status = 410;
          r.set_content(status(410, "Expired", "the continue token is no longer valid"), "application/json");
          return;
        }
      } else {
        snapshots_.push_back({{}, rv_});
        snap = snapshots_.size() - 1;
        for (const auto& [k, obj] : objects_[kind]) snapshots_.back().items.push_back(obj);
      }
      const Snapshot& s = snapshots_[snap];
      const size_t end = limit == 0 ? s.items.size() : std::min(s.items.size(), offset + limit);
      json items = json::array();
      for (size_t j = offset; j < end; ++j) items.push_back(s.items[j]);
      json meta = {{"resourceVersion", std::to_string(s.rv)}};
      if (end < s.items.size()) meta["continue"] = std::to_string(snap) + ":" + std::to_string(end);
      else if (snap + 1 == snapshots_.size()) snapshots_.back().items.clear();  // done with it
      r.set_content(json{{"kind", kind == 0 ? "NodeList" : "PodList"}, {"apiVersion", "v1"}, {"metadata", meta}, {"items", items}}.dump(),
                    "application/json");
      return;
    }
    const int64_t from = q.has_param("resourceVersion") ? std::stoll(q.get_param_value("resourceVersion")) : rv_;
    if (from < oldest_kept_[kind]) {
      r.status = 410;
      r.set_content(status(410, "Gone", "too old resource version"), "application/json");
      return;
    }
    const double timeout_s = q.has_param("timeoutSeconds") ? std::stod(q.get_param_value("timeoutSeconds")) : 300;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int64_t cursor = from;
    lock.unlock();
    r.set_chunked_content_provider("application/json", [this, kind, cursor, deadline](size_t, httplib::DataSink& sink) mutable {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] {
        return stopping_ || (!history_[kind].empty() && history_[kind].back().first > cursor);
      });
      if (stopping_ || std::chrono::steady_clock::now() > deadline) {
        sink.done();
        return true;
      }
      if (cursor < oldest_kept_[kind]) {  // fell behind the kept history
        const std::string line = json{{"type", "ERROR"}, {"object", json::parse(status(410, "Expired", "too old resource version"))}}.dump() + "\n";
        sink.write(line.data(), line.size());
        sink.done();
        return true;
      }
      std::string out;
      const auto visible = std::chrono::steady_clock::now() - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                 std::chrono::duration<double>(o_.watch_delay_s));
      for (const auto& [rv, event] : history_[kind]) {
        if (rv <= cursor) continue;
        if (event.first > visible) break;
        out += event.second;
        cursor = rv;
      }
      lock.unlock();
      return out.empty() || sink.write(out.data(), out.size());
    });
  }

  void bind(const httplib::Request& q, httplib::Response& r) {
    if (!authorized(q, r)) return;
    const std::string ns = q.matches[1].str(), name = q.matches[2].str();
    json binding;
    try {
      binding = json::parse(q.body);
    } catch (const std::exception& e) {
      r.status = 400;
      r.set_content(status(400, "BadRequest", e.what()), "application/json");
      return;
    }
    std::lock_guard lock(mu_);
    auto it = objects_[1].find(ns + "/" + name);
    if (it == objects_[1].end()) {
      r.status = 404;
      r.set_content(status(404, "NotFound", "pods \"" + name + "\" not found"), "application/json");
      return;
    }
    const json& m = binding.value("metadata", json::object());
    if (m.contains("uid") && m["uid"] != it->second["metadata"].value("uid", "")) {
      ++conflicts_;
      r.status = 409;
      r.set_content(status(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + name + "\": the UID in the precondition (" +
                                                m["uid"].get<std::string>() + ") does not match the UID in record"),
                    "application/json");
      return;
    }
    const std::string bound = it->second["spec"].value("nodeName", "");
    if (!bound.empty()) {
      ++conflicts_;
      r.status = 409;
      r.set_content(status(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + name + "\": pod " + name +
                                                " is already assigned to node \"" + bound + "\""),
                    "application/json");
      return;
    }
    json pod = it->second;
    pod["spec"]["nodeName"] = binding["target"].value("name", "");
    const json annotations = m.value("annotations", json::object());  // items() of a temporary would dangle
    for (const auto& [k, v] : annotations.items()) pod["metadata"]["annotations"][k] = v;
    put_locked(1, pod, true);
    for (auto p = pending_.begin(); p != pending_.end(); ++p)
      if (*p == ns + "/" + name) {
        pending_.erase(p);
        break;
      }
    running_.push_back(ns + "/" + name);
    ++bindings_;
    r.status = 201;
    r.set_content(json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}}.dump(), "application/json");
  }

  struct Snapshot {
    std::vector<json> items;
    int64_t rv;
  };
  Options o_;
  std::mt19937_64 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t rv_ = 1000;
  std::map<std::string, json> objects_[2];
  // The Node names in a vector (a random pick in O(1); the churn picked by walking the map, which
  // cost the fake most of a core at 10,000 nodes), and the pods naming each node.
  std::vector<std::string> node_names_;
  std::unordered_map<std::string, size_t> node_slot_;
  std::unordered_map<std::string, std::set<std::string>> pods_on_;
  std::deque<std::pair<int64_t, std::pair<std::chrono::steady_clock::time_point, std::string>>> history_[2];
  int64_t oldest_kept_[2] = {0, 0};
  std::vector<Snapshot> snapshots_;
  std::map<std::string, int> free_;  // node -> free GPUs (churn's own bookkeeping)
  bool free_counted_ = false;        // free_gpus counted every node once
  std::deque<std::string> pending_;
  std::vector<std::string> running_;
  int next_node_ = 0;
  int next_pod_ = 0;
  uint64_t events_ = 0, bindings_ = 0, conflicts_ = 0;
};

int usage(const char* msg) {
  std::fprintf(stderr, "fake_apiserver: %s\n", msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value of " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--port") o.port = std::atoi(v.c_str());
    else if (a == "--token") o.token = v;
    else if (a == "--objects") o.objects_path = v;
    else if (a == "--nodes") o.nodes = std::atoi(v.c_str());
    else if (a == "--pods-per-node") o.pods_per_node = std::atoi(v.c_str());
    else if (a == "--pending-pods") o.pending_pods = std::atoi(v.c_str());
    else if (a == "--pending-gpus") o.pending_gpus = std::atoi(v.c_str());
    else if (a == "--events-per-second") o.events_per_second = std::atof(v.c_str());
    else if (a == "--seed") o.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--watch-delay-seconds") o.watch_delay_s = std::atof(v.c_str());
    else if (a == "--history") o.history = std::strtoull(v.c_str(), nullptr, 10);
    else return usage(("unknown option " + a).c_str());
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  FakeApi api(o);
  if (!o.objects_path.empty()) {
    std::ifstream in(o.objects_path);
    if (!in) return usage(("cannot read " + o.objects_path).c_str());
    try {
      api.load(json::parse(in));
    } catch (const std::exception& e) {
      return usage((o.objects_path + ": " + e.what()).c_str());
    }
  }
  api.seed_cluster(o.nodes, o.pods_per_node, o.pending_pods, o.pending_gpus);

  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  api.routes(server);
  const int port = o.port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", o.port) ? o.port : -1);
  if (port < 0) return usage("cannot listen");
  std::thread http([&] { server.listen_after_bind(); });
  std::printf("fake-apiserver listening on port %d\n", port);
  std::fflush(stdout);

  std::atomic<bool> done{false};
  std::thread churn;
  if (o.events_per_second > 0)
    churn = std::thread([&] {
      const auto period = std::chrono::duration<double>(1.0 / o.events_per_second);
      auto next = std::chrono::steady_clock::now();
      while (!done) {
        api.churn_step();
        next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
        std::this_thread::sleep_until(next);
      }
    });
  int received = 0;
  sigwait(&signals, &received);
  done = true;
  api.stop();
  if (churn.joinable()) churn.join();
  server.stop();
  http.join();
  return 0;
}
