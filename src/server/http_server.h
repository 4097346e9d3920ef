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
// one line naming the field ("request body line 1 column 17: ..."); the server keeps serving.
// Bodies (read_request_body): a Content-Encoding other than gzip, deflate or identity gets 415 naming
// it; gzip and deflate are inflated with the route's limit applied while inflating (the verbs: 32 MiB,
// io::kJsonRequestLimits; /snapshot: 512 MiB), and the first byte over it stops the inflation: 413. A
// Content-Length over max_body_bytes gets 413 before the body is read. A body not received within
// request_timeout_s of its head gets 408 and the connection is closed.
// Handlers never let an exception escape, and no answer carries an exception's text: anything
// unexpected is a 500 "internal error", its detail on stderr (none is expected: the load test asserts
// zero 5xx).
// Threads: at most `threads` workers, started on demand; cpp-httplib 0.11 gives each connection one
// worker for its keep-alive life, and connections beyond `threads` wait for a free worker. An idle
// keep-alive connection holds its worker idle_timeout_s at most. Limit: cpp-httplib 0.11 bounds each
// read of a request head (read_timeout_s), not the whole head, and has no hook before the head is
// complete, so a client that sends a head a byte every few seconds holds one worker until it stops;
// `threads` is the number of such clients the server takes before others wait (docs/live.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "live/cluster_cache.h"

namespace httplib {
class Server;
class ContentReader;
struct Request;
struct Response;
}

namespace gpufleet::server {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;                      ///< 0 = any free port (bound_port() tells)
  std::string tls_cert_file;            ///< PEM; with tls_key_file, the server speaks HTTPS only
  std::string tls_key_file;
  /// Most worker threads, started on demand (they stay until the server stops); each serves one open
  /// connection at a time, further connections wait for a free one.
  size_t threads = 256;
  /// Largest body any route takes (POST /snapshot's, io::kSnapshotRequestLimits), as sent (before
  /// decoding); a larger Content-Length gets 413 unread. Each route's own limit (the verbs':
  /// io::kJsonRequestLimits, 32 MiB), at most this, applies to the decoded body while it is read.
  size_t max_body_bytes = size_t{512} << 20;
  double read_timeout_s = 5;            ///< each read; kube-scheduler's default extender httpTimeout is 5 s
  double write_timeout_s = 5;
  /// A body must arrive within this many seconds of its request head (else 408, connection closed).
  double request_timeout_s = 30;
  /// An idle keep-alive connection is closed after this many seconds (it holds a worker meanwhile).
  int idle_timeout_s = 5;
  /// POST /snapshot replaces the state (offline use); false when the state comes from the API server
  /// (the route answers 409).
  bool accept_snapshots = true;
};

/// Limits of one request body, for read_request_body.
struct BodyLimits {
  size_t max_bytes;       ///< the decoded body
  size_t max_raw_bytes;   ///< the body as sent (a chunked body has no Content-Length to check first)
  double timeout_s;       ///< from the call to the last byte
};

/// Reads the body of a route registered with a ContentReader: inflates gzip and deflate (the
/// Content-Encoding HttpServer's pre-routing handler moved aside) with `limits.max_bytes` applied while
/// inflating; stops at the first byte over it. On a refusal, sets `res` (413 over a limit, 415 an
/// unsupported Content-Encoding, 400 a corrupt or truncated stream, 408 past the timeout) and returns
/// nothing; the rest of a refused body is read and dropped undecoded, so the connection stays usable,
/// except after 408 or a chunked body over max_raw_bytes (closed).
std::optional<std::string> read_request_body(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res,
                                             const BodyLimits& limits);

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
  /// Adds more routes (the KEDA metrics-api, ...) to the server before it starts. A route that takes
  /// a body registers a ContentReader handler and reads it with read_request_body: a plain handler's
  /// body is read by cpp-httplib whole, with no limit but a Content-Length's.
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
