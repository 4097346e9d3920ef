#include "cli/serve_command.h"

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "readers/kube_api/k8s_json.h"
#include "readers/k8s/place_inputs.h"
#include "readers/kube_api/kubeconfig.h"
#include "readers/k8s/pool_file.h"
#include "live/cluster_cache.h"
#include "live/cluster_metrics.h"
#include "live/inference_scaler.h"
#include "live/request_stats.h"
#include "server/http_server.h"
#include "server/keda_scaler.h"
#include "server/kube_binder.h"
#include "server/kube_watch.h"
#include "server/replay.h"
#include "server/scaler_routes.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {
namespace {

// glibc's malloc gives each thread that allocates an arena of its own (up to 8 per core) and keeps
// in each what was freed there. The server's workers (--threads) take requests in turn, each
// allocating a request's body and answer, so RSS grew as arena after arena reached its own
// high-water mark (325 -> 356 MiB over 10 minutes at 10,000 nodes), though nothing leaked: the
// cluster's size stayed the same. With one arena it stays flat, and the server is as fast (the
// handlers allocate little; docs/live.md "Under churn"). A MALLOC_ARENA_MAX set in the environment wins.
constexpr int kMallocArenas = 1;
void bound_malloc_arenas() {
#ifdef __GLIBC__
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, kMallocArenas);
#endif
}

// HOST:PORT (HOST may be empty: every address); the port 0..65535.
std::pair<std::string, int> split_listen(const std::string& listen, const char* option = "--listen") {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const std::string p = listen.substr(colon + 1);
    if (!p.empty() && p.size() <= 5 && p.find_first_not_of("0123456789") == std::string::npos) port = std::stoi(p);
  }
  if (port < 0 || port > 65535) throw UsageError(fmt::format("{}: '{}' is not HOST:PORT with a port from 0 to 65535", option, listen));
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host.empty() ? "0.0.0.0" : host, port};
}

int run_replay(const ServeCommandOptions& o) {
  if (o.cluster_paths.empty()) throw UsageError("--replay: --cluster is required (the cluster, as `place --cluster` takes it)");
  if (!o.snapshot_path.empty() || !o.kubeconfig_path.empty() || o.in_cluster || !o.keda_grpc_listen.empty() || !o.tls_cert_path.empty() ||
      !o.prices_path.empty())
    throw UsageError("--replay runs its own server on a free local port: --snapshot, --kubeconfig, --in-cluster, --keda-grpc, --tls-* "
                     "and --prices are options of serving");
  // --cluster-config with --replay: more of the cluster, read as place reads --cluster.
  std::vector<std::string> cluster_paths = o.cluster_paths;
  cluster_paths.insert(cluster_paths.end(), o.cluster_config_paths.begin(), o.cluster_config_paths.end());
  std::vector<InputArg> input_paths;
  for (const std::string& p : o.cluster_paths) input_paths.push_back({"--cluster", p, true});
  for (const std::string& p : o.cluster_config_paths) input_paths.push_back({"--cluster-config", p, true});
  for (const std::string& p : o.workload_paths) input_paths.push_back({"--workload", p, true});
  check_output_paths({{"--json", o.json_path}}, input_paths);
  // The files as `place` reads them (its errors name the file, line and field), and its warnings.
  const server::ReplayInputs inputs = server::read_replay_inputs(cluster_paths, o.workload_paths);
  for (const std::string& w : inputs.place.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  server::ReplayOptions options;
  options.place.policy = o.policy;
  options.place.seed = o.seed;
  server::ReplayResult result = server::run_replay(inputs, options);
  options.node_cache_capable = false;
  const server::ReplayResult with_node_list = server::run_replay(inputs, options);
  std::string text = "nodeCacheCapable: true\n" + server::replay_text(result) + "nodeCacheCapable: false\n" + server::replay_text(with_node_list);
  if (!o.json_path.empty()) {
    write_file_atomically(o.json_path, nlohmann::json{{"node_cache_capable", server::replay_json(result)},
                                                      {"node_list", server::replay_json(with_node_list)}}
                                           .dump(2) +
                                           "\n");
    text += fmt::format("json: {}\n", o.json_path);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return result.mismatches() + with_node_list.mismatches() == 0 ? 0 : 1;
}

}  // namespace

int run_serve_command(const ServeCommandOptions& o) {
  if (o.tls_cert_path.empty() != o.tls_key_path.empty()) throw UsageError("--tls-cert and --tls-key go together");
  if (o.keda_tls_cert_path.empty() != o.keda_tls_key_path.empty()) throw UsageError("--keda-tls-cert and --keda-tls-key go together");
  if (!o.keda_client_ca_path.empty() && o.keda_tls_cert_path.empty())
    throw UsageError("--keda-client-ca needs --keda-tls-cert and --keda-tls-key");
  if (!o.keda_tls_cert_path.empty() && o.keda_grpc_listen.empty()) throw UsageError("--keda-tls-cert needs --keda-grpc");
  if (o.replay) return run_replay(o);
  if (!o.kubeconfig_path.empty() && o.in_cluster) throw UsageError("--kubeconfig and --in-cluster: give one");
  if (!o.kube_context.empty() && o.kubeconfig_path.empty()) throw UsageError("--context needs --kubeconfig");
  if ((!o.kubeconfig_path.empty() || o.in_cluster) && !o.snapshot_path.empty())
    throw UsageError("--snapshot: the state comes from the API server (--kubeconfig / --in-cluster) or from snapshots, not both");
  if (!o.cluster_paths.empty() || !o.workload_paths.empty() || !o.json_path.empty())
    throw UsageError("--cluster, --workload and --json are options of --replay");
  const auto [host, port] = split_listen(o.listen);

  bound_malloc_arenas();
  live::CacheOptions cache_options;
  cache_options.place = place::PlaceOptions{o.policy, o.seed};
  cache_options.static_paths = o.cluster_config_paths;
  live::ClusterCache cache(std::move(cache_options));
  if (!o.snapshot_path.empty()) {
    // The file as `place` reads it first: its errors name the file, line and field (exit 2).
    io::read_place_inputs({o.snapshot_path}, {}, "--snapshot");
    nlohmann::json items = nlohmann::json::array();
    for (nlohmann::json& object : io::read_k8s_json_objects({o.snapshot_path})) items.push_back(std::move(object));
    const std::map<std::string, size_t> skipped =
        cache.replace_all(nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}, o.snapshot_path);
    if (!o.quiet) {
      for (const std::string& line : cache.snapshot()->refused) std::fprintf(stderr, "gpufleet serve: warning: %s\n", line.c_str());
      for (const auto& [kind, count] : skipped)
        std::fprintf(stderr, "gpufleet serve: warning: %s: %zu %s object(s) skipped: serve keeps Nodes and Pods only\n",
                     o.snapshot_path.c_str(), count, kind.empty() ? "(no kind)" : kind.c_str());
    }
  }

  // SIGTERM and SIGINT go to one thread, which stops the server gracefully.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  server::ServerOptions options;
  options.host = host;
  options.port = port;
  options.tls_cert_file = o.tls_cert_path;
  options.tls_key_file = o.tls_key_path;
  options.threads = o.threads;
  options.request_timeout_s = o.request_timeout_s;
  options.max_connections = o.max_connections;
  options.shutdown_grace_s = o.shutdown_grace_s;
  live::MetricsOptions metrics;
  if (!o.prices_path.empty()) metrics.prices = live::instance_prices(io::read_pool_file(o.prices_path));
  live::RequestStats stats({"filter", "prioritize", "preempt", "bind"});
  live::InferenceScaler scaler;
  server::ServerHooks hooks;
  hooks.on_request = [&stats](std::string_view route, int status, double seconds) { stats.observe(route, status, seconds); };
  hooks.add_routes = [&scaler](server::Routes& routes) { server::add_scaler_routes(routes, scaler); };

  // The API server: a kubeconfig or the pod's service account.
  // With the API server, bind writes the device annotations and the Binding there.
  std::unique_ptr<server::KubeWatcher> watcher;
  std::unique_ptr<server::KubeBinder> binder;
  if (!o.kubeconfig_path.empty() || o.in_cluster) {
    io::KubeRestConfig api = o.in_cluster ? io::in_cluster_config_from_env() : io::read_kubeconfig_file(o.kubeconfig_path, o.kube_context);
    binder = std::make_unique<server::KubeBinder>(api);
    watcher = std::make_unique<server::KubeWatcher>(api, cache);
  }
  hooks.metrics = [&cache, &metrics, &stats, &binder, &watcher] {
    return live::render_cluster_metrics(*cache.snapshot(), metrics) + live::render_cache_metrics(cache.counters()) + stats.render() +
           live::extender_dra_pods_passed().render() +
           (binder ? binder->render_metrics() : "") +
           (watcher ? watcher->render_metrics() : "");
  };
  options.accept_snapshots = watcher == nullptr;
  std::unique_ptr<server::HttpServer> http_owner;
  try {
    http_owner = std::make_unique<server::HttpServer>(options, cache, binder.get(), std::move(hooks));
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("--tls-cert / --tls-key: {}", e.what()));
  }
  server::HttpServer& http = *http_owner;
  int bound = 0;
  try {
    bound = http.bind();
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("--listen: {} (in use, or not an address of this host)", e.what()));
  }
  std::unique_ptr<server::KedaScaler> keda;
  if (!o.keda_grpc_listen.empty()) {
    const auto [keda_host, keda_port_wanted] = split_listen(o.keda_grpc_listen, "--keda-grpc");
    setenv("GRPC_VERBOSITY", "NONE", 0);  // gRPC's own log lines on stderr (a bind failure is reported below)
    server::KedaScalerOptions keda_options;
    keda_options.tls_cert_file = o.keda_tls_cert_path;
    keda_options.tls_key_file = o.keda_tls_key_path;
    keda_options.tls_client_ca_file = o.keda_client_ca_path;
    keda = std::make_unique<server::KedaScaler>(scaler, keda_options);
    int keda_port = 0;
    try {
      keda_port = keda->start(fmt::format("{}:{}", keda_host, keda_port_wanted));
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--keda-tls-cert / --keda-tls-key / --keda-client-ca: {}", e.what()));
    } catch (const std::runtime_error& e) {
      throw UsageError(fmt::format("--keda-grpc: {} (in use, or not an address of this host)", e.what()));
    }
    if (!o.quiet) std::fprintf(stderr, "gpufleet serve: KEDA external scaler (gRPC) on port %d\n", keda_port);
  }
  if (watcher) watcher->start();
  if (!o.quiet)
    std::fprintf(stderr, "gpufleet serve: listening on %s://%s:%d (policy %s; extender verbs /filter /prioritize /preempt /bind, /metrics, /healthz, /readyz)\n",
                 o.tls_cert_path.empty() ? "http" : "https", host.c_str(), bound, o.policy.c_str());
  std::fflush(stderr);
  std::thread signal_thread([&http, signals] {
    int received = 0;
    sigwait(&signals, &received);
    http.stop();
  });
  http.serve();
  if (keda) keda->shutdown();
  if (watcher) watcher->stop();
  // serve() returned (stopped by a signal, or failed): make sure the signal thread ends.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  if (!o.quiet) std::fprintf(stderr, "gpufleet serve: stopped\n");
  return 0;
}

}  // namespace gpufleet::cli
