// `gpufleet serve`'s HTTP server (cpp-httplib): the kube-scheduler extender verbs, health and
// readiness, snapshots for offline use, /metrics. Routes and their contract: docs/live.md.
//
//   POST /filter /prioritize /preempt /bind   the extender verbs (k8s.io/kube-scheduler/extender/v1
//                                             JSON, Go field names); kube-scheduler's urlPrefix is
//                                             the server's base URL, e.g. http://gpufleet:8888
//   POST /snapshot                            a `kubectl get nodes,pods -o json` List replaces the
//                                             cache's Nodes and Pods (offline use, tests)
//   GET  /healthz                             200 while the process serves
//   GET  /readyz                              200 once the cache has listed Nodes and Pods (or a
//                                             snapshot was posted), else 503
//   GET  /metrics                             Prometheus text (the metrics hook's text)
//
// Bad requests: a body the readers refuse (syntax, types, limits, a truncated body) gets 400 and
// one line naming the field ("request body line 1 column 17: ..."), an oversized body 400 (before
// it is read when Content-Length says so); the server keeps serving. Handlers never let an exception escape: anything unexpected is
// a 500 with its message (none is expected: the load test asserts zero 5xx).
// Threads: a pool of `threads` workers (cpp-httplib gives each connection one worker for its
// keep-alive life); a client that sends slowly holds one worker (read_timeout_s bounds each read,
// not the whole request), never the others.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "live/cluster_cache.h"

namespace httplib {
class Server;
}

namespace gpufleet::server {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;                      ///< 0 = any free port (bound_port() tells)
  std::string tls_cert_file;            ///< PEM; with tls_key_file, the server speaks HTTPS only
  std::string tls_key_file;
  size_t threads = 64;                  ///< worker threads (one per open connection)
  /// Largest body any route takes (POST /snapshot's, io::kSnapshotRequestLimits); larger bodies get
  /// 400 unread. The extender verbs' own limit is io::kJsonRequestLimits (32 MiB), checked by the reader.
  size_t max_body_bytes = size_t{512} << 20;
  double read_timeout_s = 5;            ///< kube-scheduler's default extender httpTimeout is 5 s
  double write_timeout_s = 5;
  /// POST /snapshot replaces the state (offline use); false when the state comes from the API server
  /// (the route answers 409).
  bool accept_snapshots = true;
};

/// Writes the bind to the API server: patches the pod's annotations, then creates its Binding.
/// Returns "" on success, else the error for ExtenderBindingResult.Error. Absent (nullptr) in
/// offline use: the bind is only recorded in the cache.
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual std::string bind(const std::string& pod_namespace, const std::string& pod_name, const std::string& pod_uid,
                           const std::string& node, const std::map<std::string, std::string>& annotations) = 0;
};

/// Hooks into the rest of the server (set before start; each may be empty).
struct ServerHooks {
  /// Called once per request with its route ("filter", "metrics", ...), HTTP status and duration.
  std::function<void(std::string_view route, int status, double seconds)> on_request;
  /// The /metrics text (Prometheus text format 0.0.4), without a trailing request-stats part.
  std::function<std::string()> metrics;
  /// Adds more routes (the KEDA metrics-api, ...) to the server before it starts.
  std::function<void(httplib::Server&)> add_routes;
  /// Nanoseconds since the epoch for gpufleet.io/assume-time (a clock is passed in so that replay
  /// and tests are deterministic); empty = the system clock.
  std::function<int64_t()> now_ns;
};

class HttpServer {
 public:
  /// Throws std::runtime_error when the TLS certificate or key cannot be loaded.
  HttpServer(ServerOptions options, live::ClusterCache& cache, PodBinder* binder, ServerHooks hooks);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds the address; throws std::runtime_error naming it when it cannot. Returns the port.
  int bind();
  /// Serves until stop(); returns then, after the requests in flight finished.
  void serve();
  /// Stops accepting connections; serve() returns once the requests in flight are answered. Safe
  /// from any thread (e.g. the SIGTERM handler's).
  void stop();
  int bound_port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace gpufleet::server
