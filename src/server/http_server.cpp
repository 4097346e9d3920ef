#include "server/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <stdexcept>

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

}  // namespace

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

  // Runs `body` for route `route`: times it, maps reader errors to 400 and anything else to 500.
  void handle(std::string_view route, const httplib::Request& req, httplib::Response& res,
              const std::function<void(const httplib::Request&, httplib::Response&)>& body) {
    const auto start = std::chrono::steady_clock::now();
    try {
      body(req, res);
    } catch (const InputError& e) {
      bad_request(res, e.what());
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(fmt::format("internal error: {}\n", e.what()), "text/plain");
    }
    if (res.status == -1) res.status = 200;  // cpp-httplib's "not set": it sends 200
    if (hooks.on_request) hooks.on_request(route, res.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  void filter(const httplib::Request& req, httplib::Response& res) {
    const io::ExtenderArgs args = io::parse_extender_args(req.body, "request body");
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
    reply_json(res, out);
  }

  void prioritize(const httplib::Request& req, httplib::Response& res) {
    const io::ExtenderArgs args = io::parse_extender_args(req.body, "request body");
    const auto snapshot = cache.snapshot();
    nlohmann::json out = nlohmann::json::array();
    for (const live::HostScore& s : live::extender_prioritize(*snapshot, args.pod, args.node_names))
      out.push_back({{"Host", s.host}, {"Score", s.score}});
    reply_json(res, out);
  }

  void preempt(const httplib::Request& req, httplib::Response& res) {
    const io::ExtenderPreemptionArgs args = io::parse_extender_preemption_args(req.body, "request body");
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

  void bind(const httplib::Request& req, httplib::Response& res) {
    const io::ExtenderBindingArgs args = io::parse_extender_binding_args(req.body, "request body");
    const std::string key = args.pod_namespace + "/" + args.pod_name;
    const auto snapshot = cache.snapshot();
    const auto it = snapshot->pod_by_key.find(key);
    if (it == snapshot->pod_by_key.end()) {
      reply_json(res, {{"Error", fmt::format("pod {} is not in gpufleet's cache", key)}});
      return;
    }
    const Pod& pod = snapshot->inputs.input.pods[it->second];
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

  void snapshot_post(const httplib::Request& req, httplib::Response& res) {
    if (!options.accept_snapshots) {
      res.status = 409;
      res.set_content("the state comes from the API server (--kubeconfig / --in-cluster); POST /snapshot is for offline use\n", "text/plain");
      return;
    }
    const nlohmann::json list = io::parse_json_request(req.body, "request body", io::kSnapshotRequestLimits);
    cache.replace_all(list, "request body");
    const auto snapshot = cache.snapshot();
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
  const size_t threads = s.options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
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
  http.set_keep_alive_timeout(10);
  // cpp-httplib answers an oversized body 413 and an unreadable one 400 without a handler; say why.
  http.set_error_handler([max = s.options.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413) {
      res.status = 400;
      const std::string length = req.get_header_value("Content-Length");
      if (req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded"))
        res.set_content("request body: a form-encoded body is limited to 8192 bytes; send Content-Type: application/json\n", "text/plain");
      else
        res.set_content(fmt::format("request body{} is over the limit of {} bytes\n", length.empty() ? "" : " of " + length + " bytes", max),
                        "text/plain");
    } else if (res.status == 400 && res.body.empty()) {
      res.set_content("request: malformed or truncated HTTP request\n", "text/plain");
    } else if (res.status == 404 && res.body.empty()) {
      std::string path;  // printable, so that the reason stays one line
      for (const char ch : req.path.substr(0, 200)) path += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
      res.set_content(fmt::format("no route {} {}\n", req.method, path), "text/plain");
    }
  });
  const auto route = [&s](std::string_view name, void (Impl::*fn)(const httplib::Request&, httplib::Response&)) {
    return [&s, name, fn](const httplib::Request& req, httplib::Response& res) {
      s.handle(name, req, res, [&](const httplib::Request& q, httplib::Response& r) { (s.*fn)(q, r); });
    };
  };
  http.Post("/filter", route("filter", &Impl::filter));
  http.Post("/prioritize", route("prioritize", &Impl::prioritize));
  http.Post("/preempt", route("preempt", &Impl::preempt));
  http.Post("/bind", route("bind", &Impl::bind));
  http.Post("/snapshot", route("snapshot", &Impl::snapshot_post));
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
