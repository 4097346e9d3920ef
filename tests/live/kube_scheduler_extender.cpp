// A real kube-scheduler calls `gpufleet serve` as its HTTP extender, and where it puts each pod must
// be where `gpufleet place` puts it on the same cluster and pods.
//
// The scheduler is the FGD authors' simulator (its README: kube-scheduler v1.20 over an in-memory
// clientset, calling HTTP extenders exactly as kube-scheduler does), configured with an `extenders:`
// entry naming this process's server (server/http_server.h, in-process on 127.0.0.1 at a free port):
// filterVerb and prioritizeVerb, weight 100 (so gpufleet's score decides among the nodes both accept:
// live/extender.h), no managedResources (every pod is sent), nodeCacheCapable true and then false.
//
// The simulator cannot call bindVerb (it binds with its own plugin and waits for it: a pod bound by an
// extender is never seen bound and expires after 30 s), and it has no API server for the extender to
// watch. So each pod k is one simulator run: the cluster's Nodes, pods 0..k-1 pinned (nodeSelector
// kubernetes.io/hostname) where kube put them, and pod k. The simulator prefixes node names
// ("0001-n1"); a proxy in this test strips the prefix on the way to the server and restores it on
// the way back (PrefixProxy). Before the run, the server gets the same
// state as a posted snapshot (POST /snapshot): the Nodes, pods 0..k-1 bound (spec.nodeName) and pod k
// pending. `place` runs on that snapshot's objects. Compared: pod k's node (or both pending).
// Asserted too: the extender was called (filter every run; prioritize whenever two or more nodes
// passed kube's own filters), and the pinned pods passed gpufleet's filter on their node.
//
// The cases: a seeded generator draws clusters of 3 to 30 Nodes (nvidia.com/gpu 1, 2, 4 or 8, CPU and
// memory that sometimes bind first, a NoSchedule taint on some) and 8 to 14 pods (0 to 8 GPUs, a
// toleration or a nodeSelector on some). What the simulator cannot compare (GPU models, MIG,
// time-slicing) is left out, as in tests/kube_diff/.
//
// Usage: kube_scheduler_extender [--cases N] [--seed S] [--simon PATH] [--keep]. Exit 0 when every pod
// agrees, 1 otherwise (each difference printed and the files kept), 77 (skipped) without the
// simulator, 2 on usage errors.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "readers/kube_api/k8s_json.h"
#include "live/cluster_cache.h"
#include "place/place_workload.h"
#include "server/http_server.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Case {
  std::vector<json> nodes;
  std::vector<json> pods;
};

Case generate(std::mt19937_64& rng, int id) {
  const auto below = [&](uint64_t n) { return rng() % n; };
  Case c;
  const int node_count = 3 + static_cast<int>(below(28));  // 3 to 30: names n0..n29 sort n10 before n2
  const int gpu_options[] = {1, 2, 4, 8};
  for (int i = 0; i < node_count; ++i) {
    const std::string name = fmt::format("c{}-n{}", id, i);
    const int gpus = gpu_options[below(4)];
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}}};
    const json resources = {{"cpu", std::to_string(8 + 8 * below(4))}, {"memory", fmt::format("{}Gi", 32 + 32 * below(4))},
                            {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
    node["status"] = {{"allocatable", resources}, {"capacity", resources}};
    if (below(5) == 0) node["spec"] = {{"taints", json::array({{{"key", "dedicated"}, {"value", "train"}, {"effect", "NoSchedule"}}})}};
    c.nodes.push_back(std::move(node));
  }
  const int pod_count = 8 + static_cast<int>(below(7));
  const int gpu_requests[] = {0, 1, 1, 1, 2, 2, 4, 8};
  for (int k = 0; k < pod_count; ++k) {
    const int gpus = gpu_requests[below(8)];
    json requests = {{"cpu", std::to_string(1 + below(8))}, {"memory", fmt::format("{}Gi", 2 + 4 * below(8))}};
    json limits = json::object();
    if (gpus > 0) requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = std::to_string(gpus);
    json spec = {{"containers", json::array({{{"name", "c"}, {"image", "x"}, {"resources", {{"requests", requests}, {"limits", limits}}}}})}};
    if (below(4) == 0) spec["tolerations"] = json::array({{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "train"}, {"effect", "NoSchedule"}}});
    if (below(8) == 0) spec["nodeSelector"] = {{"kubernetes.io/hostname", c.nodes[below(c.nodes.size())]["metadata"]["name"]}};
    c.pods.push_back({{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", fmt::format("c{}-p{}", id, k)}, {"namespace", "default"}, {"uid", fmt::format("uid-{}-{}", id, k)}}},
                      {"spec", std::move(spec)}});
  }
  return c;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string find_simon(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("GPUFLEET_KUBE_SCHEDULER_SIM")) return env;
  return (fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "tools" / "kube-scheduler-sim" / "simon").lexically_normal().string();
}

// Runs the simulator on dir/cluster; kube's node for pod `name` ("" = failed), without the "NNNN-"
// prefix.
std::string run_simon(const std::string& simon, const fs::path& dir, const std::string& name) {
  const fs::path log = dir / "simon.log";
  const std::string cmd =
      fmt::format("cd '{}' && '{}' apply -f simon.yaml -s scheduler-config.yaml > '{}' 2>&1", dir.string(), simon, log.string());
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("the simulator failed; see " + log.string());
  std::ifstream in(log);
  static const std::regex scheduled(R"(pod\(default/([^)]+)\) is scheduled to node\(\d+-([^)]+)\))");
  std::string line, out;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, scheduled) && m[1] == name) out = m[2];
  return out;
}

// The simulator names node n "NNNN-n" in what it sends (its README): a proxy between it and the
// server strips the prefix from the request's node names and puts it back in the answer, so that the
// server sees the cluster's own names. Nothing else in the bodies changes.
class PrefixProxy {
 public:
  explicit PrefixProxy(int server_port) : client_("127.0.0.1", server_port) {
    const auto forward = [this](const httplib::Request& req, httplib::Response& res) {
      json body = json::parse(req.body);
      std::map<std::string, std::string> prefixed;  // plain -> as sent
      const auto strip = [&](std::string name) {
        static const std::regex prefix(R"(^\d{4}-(.+)$)");
        std::smatch m;
        std::string plain = std::regex_match(name, m, prefix) ? std::string(m[1]) : name;
        prefixed[plain] = name;
        return plain;
      };
      if (body["NodeNames"].is_array())
        for (json& n : body["NodeNames"]) n = strip(n.get<std::string>());
      if (body["Nodes"].is_object())
        for (json& n : body["Nodes"]["items"]) n["metadata"]["name"] = strip(n["metadata"]["name"].get<std::string>());
      const auto answer = client_.Post(req.path, body.dump(), "application/json");
      if (!answer) {
        res.status = 502;
        return;
      }
      json out = json::parse(answer->body);
      const auto back = [&](const std::string& plain) { return prefixed.count(plain) ? prefixed[plain] : plain; };
      if (out.is_array()) {
        for (json& h : out) h["Host"] = back(h["Host"].get<std::string>());
      } else {
        if (out["NodeNames"].is_array())
          for (json& n : out["NodeNames"]) n = back(n.get<std::string>());
        if (out["Nodes"].is_object())
          for (json& n : out["Nodes"]["items"]) n["metadata"]["name"] = back(n["metadata"]["name"].get<std::string>());
        for (const char* map : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
          json renamed = json::object();
          for (auto& [k, v] : out[map].items()) renamed[back(k)] = v;
          out[map] = renamed;
        }
      }
      res.status = answer->status;
      res.set_content(out.dump(), "application/json");
      if (const char* trace = std::getenv("GPUFLEET_EXTENDER_TRACE")) {  // debugging: every exchange, appended
        std::ofstream log(trace, std::ios::app);
        log << req.path << " " << body["Pod"]["metadata"]["name"] << " " << body["NodeNames"].dump() << " -> " << answer->body << "\n";
      }
    };
    http_.Post("/filter", forward);
    http_.Post("/prioritize", forward);
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
  }
  ~PrefixProxy() {
    http_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  httplib::Client client_;
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  int cases = 6;
  uint64_t seed = 1;
  std::string simon;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--cases") cases = std::stoi(value());
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--simon") simon = value();
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: kube_scheduler_extender [--cases N] [--seed S] [--simon PATH] [--keep]\n");
      return 2;
    }
  }
  simon = find_simon(simon);
  if (!fs::exists(simon)) {
    std::printf("kube_scheduler_extender skipped: no kube-scheduler simulator at %s (set GPUFLEET_KUBE_SCHEDULER_SIM or --simon)\n",
                simon.c_str());
    return 77;
  }
  char tmpl[] = "/tmp/gpufleet-extender-XXXXXX";
  const fs::path dir = ::mkdtemp(tmpl);

  // The server, in-process.
  gpufleet::live::ClusterCache cache(gpufleet::live::CacheOptions{});
  std::map<std::string, int> calls;
  std::mutex calls_mutex;
  gpufleet::server::ServerHooks hooks;
  hooks.on_request = [&](std::string_view route, int status, double) {
    std::lock_guard lock(calls_mutex);
    ++calls[fmt::format("{} {}", route, status)];
  };
  gpufleet::server::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 8;
  gpufleet::server::HttpServer server(options, cache, nullptr, hooks);
  const int port = server.bind();
  std::thread serving([&] { server.serve(); });
  httplib::Client client("127.0.0.1", port);
  PrefixProxy proxy(port);

  std::mt19937_64 rng(seed);
  int compared = 0, differences = 0, bound = 0, prioritized_runs = 0;
  for (bool cache_capable : {true, false}) {
    write(dir / "simon.yaml", "apiVersion: simon/v1alpha1\nkind: Config\nmetadata: {name: extender}\nspec:\n  cluster:\n    customConfig: cluster\n");
    write(dir / "scheduler-config.yaml",
          fmt::format("apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 100\n"
                      "extenders:\n- urlPrefix: \"http://127.0.0.1:{}\"\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 100\n"
                      "  nodeCacheCapable: {}\n  httpTimeout: 5s\n"
                      "profiles:\n- schedulerName: simon-scheduler\n  plugins:\n    bind:\n      disabled:\n      - name: DefaultBinder\n"
                      "      enabled:\n      - name: Simon\n",
                      proxy.port(), cache_capable ? "true" : "false"));
    for (int id = 0; id < cases; ++id) {
      const Case c = generate(rng, id);
      std::map<std::string, std::string> kube_node;  // pod name -> node ("" = failed)
      for (size_t k = 0; k < c.pods.size(); ++k) {
        const fs::path cluster = dir / "cluster";
        fs::remove_all(cluster);
        fs::create_directories(cluster / "node");
        fs::create_directories(cluster / "pod");
        json snapshot_items = json::array();
        for (const json& n : c.nodes) {
          write(cluster / "node" / (n["metadata"]["name"].get<std::string>() + ".yaml"), n.dump());
          snapshot_items.push_back(n);
        }
        for (size_t j = 0; j <= k; ++j) {
          const std::string name = c.pods[j]["metadata"]["name"];
          json for_kube = c.pods[j];
          json for_gpufleet = c.pods[j];
          if (j < k) {
            if (kube_node[name].empty()) continue;  // kube could not place it: the simulator deleted it
            for_kube["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", kube_node[name]}};
            for_gpufleet["spec"]["nodeName"] = kube_node[name];
          }
          write(cluster / "pod" / fmt::format("{:03}-{}.yaml", j, name), for_kube.dump());
          snapshot_items.push_back(for_gpufleet);
        }
        const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", snapshot_items}};
        const auto posted = client.Post("/snapshot", list.dump(), "application/json");
        if (!posted || posted->status != 200) {
          std::fprintf(stderr, "POST /snapshot failed: %s\n", posted ? posted->body.c_str() : "no response");
          return 1;
        }
        const int prioritize_before = calls["prioritize 200"];
        const std::string name = c.pods[k]["metadata"]["name"];
        const std::string kube = run_simon(simon, dir, name);
        kube_node[name] = kube;
        if (calls["prioritize 200"] > prioritize_before) ++prioritized_runs;
        // place on the same objects.
        const std::shared_ptr<const gpufleet::live::Snapshot> snap = cache.snapshot();
        const gpufleet::place::PlaceResult placed = gpufleet::place::place_workload(snap->inputs.input, {"gpufleet", 42});
        std::string place_node;
        for (const auto& p : placed.placements)
          if (p.pod == "default/" + name) place_node = p.node;
        ++compared;
        bound += kube.empty() ? 0 : 1;
        if (kube != place_node) {
          ++differences;
          std::printf("differs (nodeCacheCapable %s, case %d): pod %s: kube-scheduler with gpufleet %s, place %s\n", cache_capable ? "true" : "false",
                      id, name.c_str(), kube.empty() ? "unschedulable" : kube.c_str(), place_node.empty() ? "pending" : place_node.c_str());
          fs::copy(cluster, dir / fmt::format("differs-{}-{}", cache_capable, name), fs::copy_options::recursive);
        }
      }
    }
  }
  server.stop();
  serving.join();
  std::printf("kube_scheduler_extender: %d pods scheduled by kube-scheduler v1.20 through gpufleet serve (%d bound, %d unschedulable); "
              "%d differ from gpufleet place\n",
              compared, bound, compared - bound, differences);
  std::printf("extender calls:");
  for (const auto& [k, v] : calls) std::printf(" %s: %d;", k.c_str(), v);
  std::printf(" runs with prioritize: %d\n", prioritized_runs);
  bool ok = differences == 0;
  if (calls["filter 200"] < compared || prioritized_runs == 0) {
    std::printf("FAILED: the extender was not called as expected\n");
    ok = false;
  }
  for (const auto& [k, v] : calls)
    if (!k.ends_with(" 200")) {
      std::printf("FAILED: %d responses %s\n", v, k.c_str());
      ok = false;
    }
  if (ok && !keep) fs::remove_all(dir);
  else std::printf("files: %s\n", dir.string().c_str());
  return ok ? 0 : 1;
}
