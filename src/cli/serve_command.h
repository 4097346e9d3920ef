// `gpufleet serve`: the live server beside kube-scheduler (server/http_server.h: the extender verbs,
// /metrics, health), its cluster state from the API server or posted snapshots (live/cluster_cache.h),
// and `--replay`, which drives the same server with a workload and checks its decisions against
// `place`'s. docs/live.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct ServeCommandOptions {
  std::string listen = "0.0.0.0:8888";       ///< HOST:PORT; port 0 = any free port (printed)
  std::string tls_cert_path, tls_key_path;   ///< both or neither: HTTPS
  std::string policy = "gpufleet";
  uint64_t seed = 42;
  /// Static Kubernetes files for every snapshot: device-plugin / mig-parted configs, PriorityClasses,
  /// ResourceQuotas, PodDisruptionBudgets (not Nodes or Pods). With --replay: more cluster paths.
  std::vector<std::string> cluster_config_paths;
  std::string snapshot_path;                 ///< a `kubectl get nodes,pods -o json` List to start from
  std::string prices_path;                   ///< a gpufleet pool file: instance type -> USD per hour (/metrics costs)
  std::string kubeconfig_path;               ///< list and watch the API server named by this kubeconfig
  std::string kube_context;                  ///< its context ("" = current-context)
  bool in_cluster = false;                   ///< the pod's service account instead (KUBERNETES_SERVICE_HOST)
  std::string keda_grpc_listen;              ///< HOST:PORT of the KEDA external scaler (gRPC); "" = off
  std::string keda_tls_cert_path, keda_tls_key_path;  ///< both or neither: the KEDA scaler speaks TLS
  std::string keda_client_ca_path;           ///< with them: clients must present a certificate this CA signs
  size_t threads = 256;                      ///< server::ServerOptions::threads
  double request_timeout_s = 5;              ///< head and body, from the first byte (server::ServerOptions)
  size_t max_connections = 1024;             ///< server::ServerOptions::max_connections
  double shutdown_grace_s = 10;              ///< after SIGTERM: the requests in flight get this long
  bool quiet = false;
  // --replay: place's inputs (place --cluster --workload) driven through the server (docs/live.md).
  bool replay = false;
  std::vector<std::string> cluster_paths, workload_paths;
  std::string json_path;                     ///< replay: the decisions and the comparison as JSON
};

/// Runs the command. Serving: until SIGTERM or SIGINT, then finishes the requests in flight (within
/// shutdown_grace_s) and returns 0. Replay: 0 when every decision equals place's, 1 otherwise. Throws InputError /
/// UsageError for bad options or input, std::runtime_error when it cannot listen.
int run_serve_command(const ServeCommandOptions& options);

}  // namespace gpufleet::cli
