#include "server/http_server.h"

#include <sys/socket.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "readers/kube_api/extender_args.h"
#include "readers/formats/json_request.h"
#include "live/extender.h"
#include "model/device_annotations.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

constexpr const char* kJson = "application/json";

void reply_json(httplib::Response& res, const nlohmann::json& body) { res.set_content(body.dump(), kJson); }

void bad_request(httplib::Response& res, const std::string& reason) {
  res.status = 400;
  res.set_content(reason + "\n", "text/plain");
}

nlohmann::json string_map(const std::map<std::string, std::string>& m) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

// The request's Content-Encoding, moved here by the pre-routing handler so that cpp-httplib reads the
// body as sent (it would inflate gzip, deflate and br without a bound, up to std::string's max_size).
constexpr const char* kEncodingHeader = "X-Gpufleet-Content-Encoding";

// Answers `status` with `text` and closes the connection after it: a request whose body was left
// unread (or half read) must not have its remaining bytes read as the next request. cpp-httplib 0.11
// closes a connection when writing a response fails, so the body goes out through a content provider
// that writes it all and then reports failure.
void answer_and_close(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_header("Connection", "close");
  res.body.clear();
  auto body = std::make_shared<std::string>(text);
  res.set_content_provider(body->size(), "text/plain", [body](size_t offset, size_t length, httplib::DataSink& sink) {
    sink.write(body->data() + offset, length);
    return false;
  });
}

std::string lower_trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  std::string out(v);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Printable and short, for a reason line.
std::string printable(std::string_view v) {
  std::string out;
  for (const char ch : v.substr(0, 100)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  return out;
}

// Workers started on demand, at most `max_workers`: each serves one connection at a time (cpp-httplib
// gives a connection's whole keep-alive life to one task); further connections wait in the queue.
class WorkerPool final : public httplib::TaskQueue {
 public:
  explicit WorkerPool(size_t max_workers) : max_workers_(std::max<size_t>(max_workers, 1)) {}
  ~WorkerPool() override = default;

  void enqueue(std::function<void()> fn) override {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && workers_.size() < max_workers_)
      workers_.emplace_back([this] { run(); });
    else
      cond_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      shutdown_ = true;
    }
    cond_.notify_all();
    for (std::thread& t : workers_) t.join();  // no enqueue after shutdown: the listen loop has ended
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      cond_.wait(lock, [this] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (jobs_.empty()) return;  // shut down, nothing left
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_workers_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace

std::optional<std::string> read_request_body(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res,
                                             const BodyLimits& limits) {
  if (req.is_multipart_form_data()) {  // no route takes one; read it through and drop it
    size_t raw_bytes = 0;
    const bool read = reader([](const httplib::MultipartFormData&) { return true; },
                             [&](const char*, size_t n) { return (raw_bytes += n) <= limits.max_raw_bytes; });
    const std::string text = "request body: a multipart/form-data body is not accepted; send Content-Type: application/json\n";
    if (read) {
      res.status = 415;
      res.set_content(text, "text/plain");
    } else {
      answer_and_close(res, 415, text);
    }
    return std::nullopt;
  }
  const std::string encoding = lower_trimmed(req.has_header(kEncodingHeader) ? req.get_header_value(kEncodingHeader)
                                                                               : req.get_header_value("Content-Encoding"));
  // A body that a plain httplib::Server (no pre-routing handler) has already inflated carries its
  // Content-Encoding still; only the header moved by HttpServer's pre-routing handler means "raw".
  const bool raw = req.has_header(kEncodingHeader);
  const bool inflate = raw && (encoding == "gzip" || encoding == "x-gzip" || encoding == "deflate");
  const bool unsupported = raw && !inflate && !encoding.empty() && encoding != "identity";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(limits.timeout_s));
  std::string body;
  size_t raw_bytes = 0;
  bool over = false, timed_out = false, drain_over = false, stream_end = false;
  std::string bad;  // the compressed stream's error
  z_stream z{};
  bool z_ready = false;
  if (inflate) {
    // 15 + 32: a zlib or gzip header, detected (HTTP's "deflate" is zlib-wrapped, RFC 9110 8.4.1.2).
    if (inflateInit2(&z, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2 failed");
    z_ready = true;
  }
  struct ZEnd {
    z_stream& z;
    bool& ready;
    ~ZEnd() {
      if (ready) inflateEnd(&z);
    }
  } z_end{z, z_ready};
  const auto refuse = [&] {
    body.clear();
    body.shrink_to_fit();
  };
  const bool read = reader([&](const char* data, size_t n) {
    raw_bytes += n;
    if (std::chrono::steady_clock::now() > deadline) {
      timed_out = true;
      return false;
    }
    if (raw_bytes > limits.max_raw_bytes) {  // only a chunked body gets here (Content-Length is checked first)
      drain_over = true;
      return false;
    }
    if (unsupported || over || !bad.empty()) return true;  // drain the rest as sent, without decoding it
    if (!inflate) {
      if (body.size() + n > limits.max_bytes) {
        over = true;
        refuse();
      } else {
        body.append(data, n);
      }
      return true;
    }
    if (stream_end) {
      bad = "data after the end of the compressed stream";
      refuse();
      return true;
    }
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z.avail_in = static_cast<uInt>(n);
    char out[16384];
    while (z.avail_in > 0 && !stream_end) {
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof out;
      const int r = ::inflate(&z, Z_NO_FLUSH);
      if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
        bad = z.msg != nullptr ? z.msg : fmt::format("zlib error {}", r);
        refuse();
        return true;
      }
      const size_t produced = sizeof out - z.avail_out;
      if (body.size() + produced > limits.max_bytes) {  // stop inflating at the first byte over
        over = true;
        refuse();
        return true;
      }
      body.append(out, produced);
      if (r == Z_STREAM_END) stream_end = true;
      if (r == Z_BUF_ERROR) break;
    }
    if (stream_end && z.avail_in > 0) {
      bad = "data after the end of the compressed stream";
      refuse();
    }
    return true;
  });
  const std::string decoded = inflate ? fmt::format(" (decoded from {})", encoding) : "";
  if (timed_out) {
    answer_and_close(res, 408, fmt::format("request body: not received within the request timeout of {} s\n", limits.timeout_s));
    return std::nullopt;
  }
  if (drain_over) {
    answer_and_close(res, 413, fmt::format("request body is over the limit of {} bytes\n", limits.max_raw_bytes));
    return std::nullopt;
  }
  if (!read && res.status == 413) {  // cpp-httplib: a Content-Length over max_body_bytes, read through unkept
    res.set_content(fmt::format("request body of {} bytes is over the limit of {} bytes\n", printable(req.get_header_value("Content-Length")),
                                limits.max_raw_bytes),
                    "text/plain");
    return std::nullopt;
  }
  if (!read) {
    answer_and_close(res, 400, "request: malformed or truncated HTTP request body\n");
    return std::nullopt;
  }
  if (unsupported) {
    res.status = 415;
    res.set_content(fmt::format("request body: Content-Encoding '{}' is not supported (gzip, deflate or identity)\n", printable(encoding)),
                    "text/plain");
    return std::nullopt;
  }
  if (over) {
    res.status = 413;
    res.set_content(fmt::format("request body{} is over the limit of {} bytes\n", decoded, limits.max_bytes), "text/plain");
    return std::nullopt;
  }
  if (!bad.empty() || (inflate && !stream_end && raw_bytes > 0)) {
    res.status = 400;
    res.set_content(fmt::format("request body: Content-Encoding {}: {}\n", encoding, bad.empty() ? "truncated compressed stream" : printable(bad)),
                    "text/plain");
    return std::nullopt;
  }
  return body;
}

struct HttpServer::Impl {
  ServerOptions options;
  live::ClusterCache& cache;
  PodBinder* binder;
  ServerHooks hooks;
  std::unique_ptr<httplib::Server> http;
  std::mutex run_mutex;  // serve() and stop()
  bool serving = false, stopping = false;
  std::atomic<bool> done{false};

  Impl(ServerOptions o, live::ClusterCache& c, PodBinder* b, ServerHooks h) : options(std::move(o)), cache(c), binder(b), hooks(std::move(h)) {}

  // 500 with a generic body: the detail goes to stderr, never to the client.
  static void internal_error(const httplib::Request& req, httplib::Response& res, const char* what) {
    std::fprintf(stderr, "gpufleet serve: error: %s %s: %s\n", req.method.c_str(), printable(req.path).c_str(), what);
    res.headers.erase("EXCEPTION_WHAT");
    res.status = 500;
    res.set_content("internal error\n", "text/plain");
  }

  // Runs `body` for route `route`: times it, maps reader errors to 400 and anything else to 500.
  void handle(std::string_view route, const httplib::Request& req, httplib::Response& res,
              const std::function<void(const httplib::Request&, httplib::Response&)>& body) {
    const auto start = std::chrono::steady_clock::now();
    try {
      body(req, res);
    } catch (const InputError& e) {
      bad_request(res, e.what());
    } catch (const std::exception& e) {
      internal_error(req, res, e.what());
    } catch (...) {
      internal_error(req, res, "an exception that is not a std::exception");
    }
    if (res.status == -1) res.status = 200;  // cpp-httplib's "not set": it sends 200
    if (hooks.on_request) hooks.on_request(route, res.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  void filter(const std::string& body, httplib::Response& res) {
    const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
    const auto snapshot = cache.snapshot();
    const live::FilterAnswer answer = live::extender_filter(*snapshot, args.pod, args.node_names);
    nlohmann::json out;
    if (args.node_cache_capable) {
      out["Nodes"] = nullptr;
      out["NodeNames"] = answer.passed;
    } else {
      // Echo the passing Node objects (kube-scheduler reads Nodes.items when NodeNames is null).
      std::map<std::string, size_t> index;
      for (size_t i = 0; i < args.node_names.size(); ++i) index.emplace(args.node_names[i], i);
      nlohmann::json items = nlohmann::json::array();
      for (const std::string& name : answer.passed) items.push_back(args.node_items.at(index.at(name)));
      out["Nodes"] = {{"metadata", nlohmann::json::object()}, {"items", std::move(items)}};
      out["NodeNames"] = nullptr;
    }
    out["FailedNodes"] = string_map(answer.failed);
    out["FailedAndUnresolvableNodes"] = string_map(answer.failed_unresolvable);
    out["Error"] = answer.error;
    if (!answer.note.empty()) out["gpufleetNote"] = answer.note;  // ignored by kube-scheduler (unknown field)
    reply_json(res, out);
  }

  void prioritize(const std::string& body, httplib::Response& res) {
    const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
    const auto snapshot = cache.snapshot();
    nlohmann::json out = nlohmann::json::array();
    for (const live::HostScore& s : live::extender_prioritize(*snapshot, args.pod, args.node_names))
      out.push_back({{"Host", s.host}, {"Score", s.score}});
    reply_json(res, out);
  }

  void preempt(const std::string& body, httplib::Response& res) {
    const io::ExtenderPreemptionArgs args = io::parse_extender_preemption_args(body, "request body");
    std::map<std::string, live::NodeVictims> candidates;
    for (const auto& [node, victims] : args.node_victims) candidates[node] = live::NodeVictims{victims.pod_uids, victims.num_pdb_violations};
    const auto snapshot = cache.snapshot();
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [node, victims] : live::extender_preempt(*snapshot, args.pod, candidates)) {
      nlohmann::json pods = nlohmann::json::array();
      for (const std::string& uid : victims.pod_uids) pods.push_back({{"UID", uid}});
      meta[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", victims.num_pdb_violations}};
    }
    reply_json(res, {{"NodeNameToMetaVictims", std::move(meta)}});
  }

  void bind(const std::string& body, httplib::Response& res) {
    const io::ExtenderBindingArgs args = io::parse_extender_binding_args(body, "request body");
    const std::string key = args.pod_namespace + "/" + args.pod_name;
    const auto snapshot = cache.snapshot();
    Pod pod;  // a copy: the live snapshot changes under its decide_mutex (live/cluster_cache.h)
    {
      const std::lock_guard lock(snapshot->decide_mutex);
      const auto it = snapshot->pod_by_key.find(key);
      if (it == snapshot->pod_by_key.end()) {
        reply_json(res, {{"Error", fmt::format("pod {} is not in gpufleet's cache", key)}});
        return;
      }
      pod = snapshot->inputs.input.pods[it->second];
    }
    if (!pod.uid.empty() && pod.uid != args.pod_uid) {
      reply_json(res, {{"Error", fmt::format("pod {} has UID {}, not {}", key, pod.uid, args.pod_uid)}});
      return;
    }
    if (!pod.node_name.empty()) {  // the API server refuses a second Binding (409 Conflict)
      reply_json(res, {{"Error", fmt::format("pod {} is already bound to node {}", key, pod.node_name)}});
      return;
    }
    const live::DeviceChoice choice = live::choose_devices(*snapshot, pod, args.node);
    if (!choice.devices) {
      reply_json(res, {{"Error", choice.error}});
      return;
    }
    std::map<std::string, std::string> annotations = device_annotation_values(*choice.devices);
    const int64_t now = hooks.now_ns ? hooks.now_ns()
                                     : std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    annotations.emplace(kAssumeTimeAnnotation, std::to_string(now));
    if (binder != nullptr)
      if (std::string error = binder->bind(args.pod_namespace, args.pod_name, args.pod_uid, args.node, annotations); !error.empty()) {
        reply_json(res, {{"Error", error}});
        return;
      }
    cache.assume_bound(key, args.node, *choice.devices);
    reply_json(res, {{"Error", ""}});
  }

  void snapshot_post(const std::string& body, httplib::Response& res) {
    if (!options.accept_snapshots) {
      res.status = 409;
      res.set_content("the state comes from the API server (--kubeconfig / --in-cluster); POST /snapshot is for offline use\n", "text/plain");
      return;
    }
    const nlohmann::json list = io::parse_json_request(body, "request body", io::kSnapshotRequestLimits);
    cache.replace_all(list, "request body");
    const auto snapshot = cache.snapshot();
    const std::lock_guard lock(snapshot->decide_mutex);
    reply_json(res, {{"nodes", snapshot->inputs.input.nodes.size()},
                     {"pods", snapshot->inputs.input.pods.size()},
                     {"refused", snapshot->refused}});
  }
};

HttpServer::HttpServer(ServerOptions options, live::ClusterCache& cache, PodBinder* binder, ServerHooks hooks)
    : impl_(std::make_unique<Impl>(std::move(options), cache, binder, std::move(hooks))) {
  Impl& s = *impl_;
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    auto tls = std::make_unique<httplib::SSLServer>(s.options.tls_cert_file.c_str(), s.options.tls_key_file.c_str());
    if (!tls->is_valid())
      throw std::runtime_error(fmt::format("cannot load the TLS certificate {} and key {}", s.options.tls_cert_file, s.options.tls_key_file));
    s.http = std::move(tls);
  } else {
    s.http = std::make_unique<httplib::Server>();
  }
  httplib::Server& http = *s.http;
  http.new_task_queue = [workers = s.options.threads] { return new WorkerPool(workers); };
  http.set_payload_max_length(s.options.max_body_bytes);
  http.set_read_timeout(std::chrono::duration<double>(s.options.read_timeout_s));
  http.set_write_timeout(std::chrono::duration<double>(s.options.write_timeout_s));
  // cpp-httplib sets SO_REUSEPORT, which lets a second server take the same port silently (and
  // share its connections); SO_REUSEADDR alone restarts fast after a stop and refuses a port in use.
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Answers go out as they are written: with Nagle's algorithm a response written in two parts (head,
  // body) waits for the client's delayed ACK, 40 ms on Linux, on many keep-alive requests.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(100'000);
  // An idle keep-alive connection holds its worker this long (kube-scheduler's Go client keeps idle
  // connections 90 s and opens a new one when the server closed it).
  http.set_keep_alive_timeout(s.options.idle_timeout_s);
  // Before the body is read: move Content-Encoding aside, so that cpp-httplib reads every body as sent
  // (its automatic inflation has no bound); read_request_body decodes with the route's limit. The
  // handler's Request is process_request's own non-const object, so changing it is defined. Every POST
  // route reads its body with read_request_body (ServerHooks::add_routes); a body to no route is read
  // as sent (Content-Length at most max_body_bytes) and answered 404.
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    auto& headers = const_cast<httplib::Request&>(req).headers;
    headers.erase(kEncodingHeader);
    std::string encoding;
    for (auto [it, end] = headers.equal_range("Content-Encoding"); it != end; ++it) encoding += (encoding.empty() ? "" : ", ") + it->second;
    headers.erase("Content-Encoding");
    if (!encoding.empty()) headers.emplace(kEncodingHeader, encoding);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // cpp-httplib answers a body over max_body_bytes 413 and an unreadable request 400 without a
  // handler; say why. Responses the routes wrote themselves are left alone.
  http.set_error_handler([max = s.options.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.get_header_value("Connection") == "close") return;
    if (res.status == 413) {
      const std::string length = req.get_header_value("Content-Length");
      if (req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded"))
        res.set_content("request body: a form-encoded body is limited to 8192 bytes; send Content-Type: application/json\n", "text/plain");
      else
        res.set_content(fmt::format("request body{} is over the limit of {} bytes\n", length.empty() ? "" : " of " + printable(length) + " bytes", max),
                        "text/plain");
    } else if (res.status == 400) {
      res.set_content("request: malformed or truncated HTTP request\n", "text/plain");
    } else if (res.status == 404) {
      res.set_content(fmt::format("no route {} {}\n", printable(req.method), printable(req.path)), "text/plain");
    } else if (res.status == 500) {
      res.set_content("internal error\n", "text/plain");
    }
  });
  // An exception out of cpp-httplib's own reading (std::bad_alloc, ...) or out of a route that does not
  // catch its own: 500 with a generic body; cpp-httplib's default would send e.what() in a header.
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      Impl::internal_error(req, res, e.what());
    } catch (...) {
      Impl::internal_error(req, res, "an exception that is not a std::exception");
    }
  });
  // The verbs and /snapshot read their bodies themselves (read_request_body): decoded within the
  // route's limit, within the request timeout.
  const auto route = [&s](std::string_view name, void (Impl::*fn)(const std::string&, httplib::Response&), size_t limit) {
    const BodyLimits limits{std::min(limit, s.options.max_body_bytes), s.options.max_body_bytes, s.options.request_timeout_s};
    return [&s, name, fn, limits](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
      s.handle(name, req, res, [&](const httplib::Request& q, httplib::Response& r) {
        if (const std::optional<std::string> body = read_request_body(q, reader, r, limits)) (s.*fn)(*body, r);
      });
    };
  };
  http.Post("/filter", route("filter", &Impl::filter, io::kJsonRequestLimits.max_body_bytes));
  http.Post("/prioritize", route("prioritize", &Impl::prioritize, io::kJsonRequestLimits.max_body_bytes));
  http.Post("/preempt", route("preempt", &Impl::preempt, io::kJsonRequestLimits.max_body_bytes));
  http.Post("/bind", route("bind", &Impl::bind, io::kJsonRequestLimits.max_body_bytes));
  http.Post("/snapshot", route("snapshot", &Impl::snapshot_post, io::kSnapshotRequestLimits.max_body_bytes));
  http.Get("/healthz", [&s](const httplib::Request& req, httplib::Response& res) {
    s.handle("healthz", req, res, [](const httplib::Request&, httplib::Response& r) { r.set_content("ok\n", "text/plain"); });
  });
  http.Get("/readyz", [&s](const httplib::Request& req, httplib::Response& res) {
    s.handle("readyz", req, res, [&s](const httplib::Request&, httplib::Response& r) {
      if (s.cache.synced()) {
        r.set_content("ok\n", "text/plain");
      } else {
        r.status = 503;
        r.set_content("not ready: Nodes and Pods not listed yet\n", "text/plain");
      }
    });
  });
  http.Get("/metrics", [&s](const httplib::Request& req, httplib::Response& res) {
    s.handle("metrics", req, res, [&s](const httplib::Request&, httplib::Response& r) {
      r.set_content(s.hooks.metrics ? s.hooks.metrics() : std::string(), "text/plain; version=0.0.4; charset=utf-8");
    });
  });
  if (s.hooks.add_routes) s.hooks.add_routes(http);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  Impl& s = *impl_;
  if (s.options.port == 0) {
    port_ = s.http->bind_to_any_port(s.options.host);
    if (port_ < 0) throw std::runtime_error(fmt::format("cannot listen on {}", s.options.host));
  } else {
    if (!s.http->bind_to_port(s.options.host, s.options.port))
      throw std::runtime_error(fmt::format("cannot listen on {}:{}", s.options.host, s.options.port));
    port_ = s.options.port;
  }
  return port_;
}

void HttpServer::serve() {
  {
    std::lock_guard lock(impl_->run_mutex);
    if (impl_->stopping) return;
    impl_->serving = true;
  }
  impl_->http->listen_after_bind();
  impl_->done = true;
}

void HttpServer::stop() {
  if (!impl_ || !impl_->http) return;
  bool serving = false;
  {
    std::lock_guard lock(impl_->run_mutex);
    impl_->stopping = true;
    serving = impl_->serving;
  }
  // serve() may be between its start and the listen loop: wait for it, or its loop would miss the stop.
  if (serving)
    while (!impl_->http->is_running() && !impl_->done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http->stop();
}

}  // namespace gpufleet::server
