// `gpufleet serve`'s HTTP server (Boost.Beast): the kube-scheduler extender verbs, health and
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
// body over max_body_bytes as sent (its Content-Length, or a chunked body reaching it) gets 413 at
// once, unread, and the connection is closed. A
// request whose head and body are not received within request_timeout_s of its first byte gets 408
// and the connection is closed; a truncated one (the client closed) gets 400.
// Handlers never let an exception escape, and no answer carries an exception's text: anything
// unexpected is a 500 "internal error", its detail on stderr (none is expected: the load test asserts
// zero 5xx).
// Connections (Boost.Beast on Asio): one I/O thread reads and writes every connection without
// blocking; only a complete request (head and body) goes to a worker thread, so a slow client costs
// one open connection, never a worker. Each request has one deadline, request_timeout_s from its
// first byte, covering the head and the body (past it: 408, connection closed); an idle keep-alive
// connection is closed after idle_timeout_s. At most max_connections are open: a new connection
// beyond it first closes the connection idle longest; when none is idle it waits in the kernel's
// listen backlog (accepting pauses) until one closes, at most request_timeout_s + write_timeout_s
// plus a handler's time later. stop(): no more connections; idle ones and requests still arriving
// are closed, the requests in flight (received, being handled or answered) finish; whatever is left
// after shutdown_grace_s is closed and serve() returns (docs/live.md "Limits and bad requests").
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/cluster_cache.h"

namespace gpufleet::server {

/// One request as received, head and body complete.
struct HttpRequest {
  std::string method;                                        ///< "GET", "POST", ... (HEAD is served as GET without a body)
  std::string path;                                          ///< the target before '?', as sent
  std::multimap<std::string, std::string> params;            ///< the query, percent-decoded ('+' is a space)
  std::vector<std::pair<std::string, std::string>> headers;  ///< as sent, in order
  std::string body;                                          ///< as sent: de-chunked, Content-Encoding not decoded
  std::vector<std::string> matches;                          ///< the route's regex: [0] the path, [1...] its groups
  /// The first header named `name` (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
  bool has_header(std::string_view name) const;
};

/// A route's answer: status, body and its Content-Type. `close` closes the connection after it.
struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  bool close = false;
  void set_content(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
};

using RouteHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

/// The server's routes: a method and a regex matching the whole path (ECMAScript, std::regex_match).
/// The first route added that matches answers; no match is 404 "no route METHOD PATH".
class Routes {
 public:
  void get(const std::string& path_regex, RouteHandler handler) { add("GET", path_regex, std::move(handler)); }
  void post(const std::string& path_regex, RouteHandler handler) { add("POST", path_regex, std::move(handler)); }
  void add(std::string method, const std::string& path_regex, RouteHandler handler);
  /// The handler for `req` (filling req.matches), or nullptr.
  const RouteHandler* find(HttpRequest& req) const;

 private:
  struct Route;
  std::vector<std::shared_ptr<const Route>> routes_;
};

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;                      ///< 0 = any free port (bound_port() tells)
  std::string tls_cert_file;            ///< PEM; with tls_key_file, the server speaks HTTPS only
  std::string tls_key_file;
  /// Most worker threads, started on demand (they stay until the server stops); each runs one
  /// complete request's handler at a time. Requests beyond it wait for a free worker.
  size_t threads = 256;
  /// Largest body any route takes (POST /snapshot's, io::kSnapshotRequestLimits), as sent (before
  /// decoding); a larger one gets 413 unread and the connection is closed. Each route's own limit
  /// (the verbs': io::kJsonRequestLimits, 32 MiB), at most this, applies to the decoded body
  /// (read_request_body).
  size_t max_body_bytes = size_t{512} << 20;
  /// A request's head and body must arrive within this many seconds of its first byte (else 408,
  /// connection closed). kube-scheduler's extender httpTimeout defaults to 5 s
  /// (k8s.io/kube-scheduler/config/v1 Extender.HTTPTimeout): a request it gave up on frees its
  /// connection by then.
  double request_timeout_s = 5;
  double write_timeout_s = 5;           ///< an answer must be written within this (else the connection is closed)
  /// An idle keep-alive connection (or a new one that sends nothing) is closed after this many seconds.
  double idle_timeout_s = 5;
  /// Most open connections; beyond it the idle one idle longest is closed, else accepting pauses.
  size_t max_connections = 1024;
  /// After stop(), the requests in flight have this long to finish; then every connection is closed.
  double shutdown_grace_s = 10;
  /// POST /snapshot replaces the state (offline use); false when the state comes from the API server
  /// (the route answers 409).
  bool accept_snapshots = true;
};

/// Limits of one request body, for read_request_body (the body as sent is bounded by the server's
/// max_body_bytes, its time by request_timeout_s).
struct BodyLimits {
  size_t max_bytes;       ///< the decoded body
};

/// A route's body, decoded: gzip and deflate inflated with `limits.max_bytes` applied while
/// inflating (stops at the first byte over it). On a refusal, sets `res` (413 over the limit, 415 an
/// unsupported Content-Encoding or a multipart body, 400 a corrupt or truncated stream) and returns
/// nothing; the connection stays usable.
std::optional<std::string> read_request_body(const HttpRequest& req, HttpResponse& res, const BodyLimits& limits);

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
  /// a body decodes it with read_request_body. Exceptions out of a handler are answered 500
  /// "internal error" (InputError: 400 with its line).
  std::function<void(Routes&)> add_routes;
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
  /// Serves until stop(); returns then, once the requests in flight are answered or
  /// shutdown_grace_s has passed, whichever is first.
  void serve();
  /// Stops accepting connections and closes idle ones; serve() returns once the requests in flight
  /// are answered, within shutdown_grace_s. Safe from any thread (e.g. the SIGTERM handler's).
  void stop();
  int bound_port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace gpufleet::server
