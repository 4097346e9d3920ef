// The API-server list/watch client: the watch-line and list readers (readers/kube_api/kube_watch.h), the
// kubeconfig and in-cluster readers (readers/kube_api/kubeconfig.h), the reflector's backoff, and KubeWatcher
// (server/kube_watch.h) against a fake API server (cpp-httplib on 127.0.0.1) that pages lists, streams
// events and bookmarks, answers 410 Gone as an HTTP status and as an ERROR event, and drops the
// connection mid-line. After each scenario the recording sink holds exactly the fake server's objects
// and resourceVersion.
#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/expect_input_error.h"
#include "support/test_pki.h"
#include "readers/kube_api/kube_watch.h"
#include "readers/kube_api/kubeconfig.h"
#include "readers/formats/text_file.h"
#include "live/cluster_cache.h"
#include "server/kube_watch.h"
#include "util/go_rand.h"

namespace gpufleet {
namespace {

using nlohmann::json;
using testing::expect_input_error;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Watch lines and list pages.

TEST(KubeWatchReader, ParsesEachEventType) {
  const auto added = io::parse_watch_event(
      R"({"type":"ADDED","object":{"kind":"Node","metadata":{"name":"gpu-0","resourceVersion":"812"}}})", "w", 1);
  EXPECT_EQ(added.type, io::KubeWatchType::kAdded);
  EXPECT_EQ(added.resource_version, "812");
  EXPECT_EQ(added.object["metadata"]["name"], "gpu-0");

  const auto deleted = io::parse_watch_event(
      R"({"type":"DELETED","object":{"metadata":{"name":"p","namespace":"ml","resourceVersion":"9"}}})", "w", 2);
  EXPECT_EQ(deleted.type, io::KubeWatchType::kDeleted);
  EXPECT_EQ(io::kube_object_key(deleted.object), "ml/p");

  const auto bookmark = io::parse_watch_event(R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"845"}}})", "w", 3);
  EXPECT_EQ(bookmark.type, io::KubeWatchType::kBookmark);
  EXPECT_EQ(bookmark.resource_version, "845");

  const auto gone = io::parse_watch_event(
      R"j({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 5 (812)","reason":"Expired","code":410}})j",
      "w", 4);
  EXPECT_EQ(gone.type, io::KubeWatchType::kError);
  EXPECT_EQ(gone.status.code, 410);
  EXPECT_EQ(gone.status.reason, "Expired");
  EXPECT_EQ(gone.status.message, "too old resource version: 5 (812)");
  EXPECT_TRUE(gone.status.expired());
  EXPECT_TRUE((io::KubeStatus{0, "Gone", ""}.expired()));
  EXPECT_FALSE((io::KubeStatus{500, "InternalError", "etcd"}.expired()));
}

TEST(KubeWatchReader, ErrorsNameLineAndField) {
  expect_input_error([] { io::parse_watch_event(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})", "watch nodes", 7); },
                     "watch nodes", 7, 0, "object.metadata.resourceVersion", "required field is missing");
  expect_input_error([] { io::parse_watch_event(R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"3"}}})", "w", 2); },
                     "w", 2, 0, "object.metadata.name", "required field is missing");
  expect_input_error([] { io::parse_watch_event(R"({"type":"RESYNC","object":{}})", "w", 1); }, "w", 1, 0, "type",
                     "unknown watch event type 'RESYNC'");
  expect_input_error([] { io::parse_watch_event(R"({"type":"ADDED","object":[1]})", "w", 1); }, "w", 1, 0, "object",
                     "expected an object, got an array");
  expect_input_error([] { io::parse_watch_event(R"({"type":"ERROR","object":{"code":"410"}})", "w", 1); }, "w", 1, 0,
                     "object.code", "expected an integer, got a string");
  expect_input_error([] { io::parse_watch_event(R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":3,"resourceVersion":"1"}}})", "w", 1); },
                     "w", 1, 0, "object.metadata.namespace", "expected a string, got a number");
  // A syntax error at its column within the line: `{"type":` then `}` at byte 9.
  expect_input_error([] { io::parse_watch_event(R"({"type":})", "w", 5); }, "w", 5, 9, "", "JSON syntax error");
  io::KubeWatchLimits small;
  small.max_event_bytes = 10;
  expect_input_error([&] { io::parse_watch_event(R"({"type":"ERROR","object":{}})", "w", 3, small); }, "w", 3, 0, "",
                     "more than 10 bytes in a watch event (limit KubeWatchLimits::max_event_bytes");
}

TEST(KubeWatchReader, ParsesListPages) {
  const auto page = io::parse_list_page(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"120","continue":"eyJ2Ijo=","remainingItemCount":3},
          "items":[{"metadata":{"name":"a","namespace":"ml","resourceVersion":"99"}},{"metadata":{"name":"b","namespace":"ml"}}]})",
      "list pods");
  EXPECT_EQ(page.kind, "PodList");
  EXPECT_EQ(page.resource_version, "120");
  EXPECT_EQ(page.continue_token, "eyJ2Ijo=");
  ASSERT_EQ(page.items.size(), 2u);
  EXPECT_EQ(io::kube_object_key(page.items[1]), "ml/b");

  const auto last = io::parse_list_page(R"({"metadata":{"resourceVersion":"7"},"items":null})", "l");
  EXPECT_TRUE(last.items.empty());
  EXPECT_EQ(last.continue_token, "");

  expect_input_error([] { io::parse_list_page(R"({"metadata":{},"items":[]})", "l"); }, "l", 0, 0, "metadata.resourceVersion",
                     "required field is missing");
  expect_input_error([] { io::parse_list_page(R"({"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":""}}]})", "l"); },
                     "l", 0, 0, "items[1].metadata.name", "must not be empty");
  expect_input_error([] { io::parse_list_page(R"({"metadata":{"resourceVersion":"1"},"items":{}})", "l"); }, "l", 0, 0, "items",
                     "expected a list, got an object");
  // A syntax error on the body's second line, column 3.
  expect_input_error([] { io::parse_list_page("{\"metadata\":\n{]", "l"); }, "l", 2, 2, "", "JSON syntax error");
}

TEST(KubeWatchReader, StatusBodiesAndKeys) {
  const auto st = io::parse_status_body(R"({"kind":"Status","code":410,"reason":"Expired","message":"continue token too old"})", 410);
  EXPECT_EQ(st.code, 410);
  EXPECT_EQ(st.reason, "Expired");
  EXPECT_EQ(st.message, "continue token too old");
  const auto text = io::parse_status_body("upstream connect error", 503);
  EXPECT_EQ(text.code, 503);
  EXPECT_EQ(text.message, "upstream connect error");
  EXPECT_EQ(io::kube_object_key(json::parse(R"({"metadata":{"name":"gpu-0"}})")), "gpu-0");
  EXPECT_EQ(io::kube_object_key(json::parse(R"({"metadata":{"name":"p","namespace":""}})")), "p");
  EXPECT_EQ(io::kube_object_key(json::parse(R"({"metadata":{}})")), "");
}

// The fuzz target's seed corpus: valid-watch-* files parse line by line, valid-list-* as a list
// page, bad-* files are refused (some line, or the whole body).
TEST(KubeWatchReader, FuzzCorpusReplays) {
  const fs::path dir = fs::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "kube_watch_fuzz";
  int valid = 0, bad = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::string text = io::read_text_file(e.path().string(), io::kMiB, "test");
    auto parse_lines = [&] {
      std::istringstream in(text);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        if (!line.empty()) io::parse_watch_event(line, name, n);
    };
    if (name.rfind("valid-watch", 0) == 0) {
      EXPECT_NO_THROW(parse_lines()) << name;
      ++valid;
    } else if (name.rfind("valid-list", 0) == 0) {
      EXPECT_NO_THROW(io::parse_list_page(text, name)) << name;
      ++valid;
    } else if (name.rfind("bad-", 0) == 0) {
      EXPECT_THROW(parse_lines(), InputError) << name;
      EXPECT_THROW(io::parse_list_page(text, name), InputError) << name;
      ++bad;
    }
  }
  EXPECT_GE(valid, 3);
  EXPECT_GE(bad, 3);
}

// ---------------------------------------------------------------------------------------------
// kubeconfig and in-cluster config.

using test::TempDir;

const char* kTokenConfig = R"(apiVersion: v1
kind: Config
current-context: prod
contexts:
- name: prod
  context: {cluster: gpu, user: admin, namespace: ml}
- name: dev
  context: {cluster: dev, user: dev-user}
clusters:
- name: gpu
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: pki/ca.crt
- name: dev
  cluster:
    server: http://localhost:8080/k8s/clusters/c-1/
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: abc.def
- name: dev-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
)";

TEST(Kubeconfig, TokenAndCaFileOfTheCurrentContext) {
  const auto c = io::parse_kubeconfig_text(kTokenConfig, "kc", "/home/u/.kube");
  EXPECT_EQ(c.context, "prod");
  EXPECT_EQ(c.server, "https://10.0.0.1:6443");
  EXPECT_EQ(c.url.scheme, "https");
  EXPECT_EQ(c.url.host, "10.0.0.1");
  EXPECT_EQ(c.url.port, 6443);
  EXPECT_EQ(c.url.path_prefix, "");
  EXPECT_EQ(c.certificate_authority, "/home/u/.kube/pki/ca.crt");
  EXPECT_FALSE(c.insecure_skip_tls_verify);
  EXPECT_EQ(c.token, "abc.def");
  EXPECT_EQ(c.namespace_, "ml");
  EXPECT_EQ(io::current_bearer_token(c), "abc.def");
}

TEST(Kubeconfig, ClientCertificateDataOfAnotherContext) {
  const auto c = io::parse_kubeconfig_text(kTokenConfig, "kc", "/home/u/.kube", "dev");
  EXPECT_EQ(c.url.scheme, "http");
  EXPECT_EQ(c.url.port, 8080);
  EXPECT_EQ(c.url.path_prefix, "/k8s/clusters/c-1");
  EXPECT_TRUE(c.insecure_skip_tls_verify);
  EXPECT_EQ(c.client_certificate_data, "CERT");
  EXPECT_EQ(c.client_key_data, "KEY");
  EXPECT_EQ(c.token, "");
}

TEST(Kubeconfig, FileFormsResolveAgainstTheFilesDirectory) {
  TempDir dir;
  dir.write("token", "tok-1\n");
  const std::string path = dir.write("config", R"(current-context: a
contexts: [{name: a, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://[fd00::1]", certificate-authority-data: Q0E=}}]
users: [{name: u, user: {tokenFile: token, client-certificate: /etc/k/u.crt, client-key: u.key}}]
)");
  const auto c = io::read_kubeconfig_file(path);
  EXPECT_EQ(c.url.host, "fd00::1");
  EXPECT_EQ(c.url.port, 443);
  EXPECT_EQ(c.certificate_authority_data, "CA");
  EXPECT_EQ(c.token_file, (dir.path / "token").string());
  EXPECT_EQ(c.client_certificate, "/etc/k/u.crt");
  EXPECT_EQ(c.client_key, (dir.path / "u.key").string());
  EXPECT_EQ(io::current_bearer_token(c), "tok-1");
  dir.write("token", "tok-2");  // a rotated token is read again
  EXPECT_EQ(io::current_bearer_token(c), "tok-2");
}

TEST(Kubeconfig, ErrorsAtTheirPosition) {
  const std::string head = "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n";
  const std::string users = "users: [{name: u, user: {token: t}}]\n";
  auto parse = [](const std::string& text) { return [text] { io::parse_kubeconfig_text(text, "kc", ""); }; };
  expect_input_error(parse(head + "clusters:\n- name: c\n  cluster:\n    server: https://k\n    certificate-authority: ca.crt\n"
                                  "    certificate-authority-data: Q0E=\n" + users),
                     "kc", 8, 33, "clusters[0].cluster.certificate-authority-data", "both specified");
  expect_input_error(parse(head + "clusters:\n- name: c\n  cluster:\n    server: https://k\n    certificate-authority: ca.crt\n"
                                  "    insecure-skip-tls-verify: true\n" + users),
                     "kc", 8, 31, "clusters[0].cluster.insecure-skip-tls-verify",
                     "specifying a root certificates file with the insecure flag is not allowed");
  expect_input_error(parse(head + "clusters: [{name: c, cluster: {server: 'ftp://k'}}]\n" + users), "kc", 3, 40,
                     "clusters[0].cluster.server", "is not an http:// or https:// URL");
  expect_input_error(parse(head + "clusters: [{name: c, cluster: {server: 'https://k:99999'}}]\n" + users), "kc", 3, 40,
                     "clusters[0].cluster.server", "port outside 1-65535");
  expect_input_error(parse(head + "clusters: [{name: c, cluster: {}}]\n" + users), "kc", 3, 31, "clusters[0].cluster.server",
                     "no server found for cluster 'c'");
  expect_input_error(parse(head + "clusters: [{name: c, cluster: {server: 'https://k'}}, {name: c}]\n" + users), "kc", 3, 62,
                     "clusters[1].name", "duplicate name 'c' in clusters");
  const std::string cluster = "clusters: [{name: c, cluster: {server: 'https://k'}}]\n";
  expect_input_error(parse(head + cluster + "users: [{name: u, user: {client-certificate-data: 'Q0VSVA', client-key-data: S0VZ}}]\n"), "kc", 4, 51,
                     "users[0].user.client-certificate-data", "not valid base64");
  expect_input_error(parse(head + cluster + "users: [{name: u, user: {client-certificate-data: 'Q0VSVA=='}}]\n"), "kc", 4, 51,
                     "users[0].user.client-certificate-data", "client-key-data or client-key must be specified");
  expect_input_error(parse(head + cluster + "users: [{name: u, user: {exec: {command: aws}}}]\n"), "kc", 4, 26, "users[0].user.exec",
                     "exec is not supported");
  expect_input_error(parse(head + cluster + "users: [{name: v, user: {token: t}}]\n"), "kc", 2, 50, "contexts[0].context.user",
                     "user 'u' was not found in users");
  expect_input_error(parse("contexts: []\n" + cluster), "kc", 1, 1, "current-context", "no context chosen");
  expect_input_error([] { io::parse_kubeconfig_text("current-context: x\ncontexts: []\n", "kc", ""); }, "kc", 1, 18,
                     "current-context", "context 'x' was not found");
}

TEST(Kubeconfig, FuzzCorpusReplays) {
  const fs::path dir = fs::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "kubeconfig_fuzz";
  int valid = 0, bad = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::string text = io::read_text_file(e.path().string(), io::kMiB, "test");
    if (name.rfind("valid-", 0) == 0) {
      EXPECT_NO_THROW(io::parse_kubeconfig_text(text, name, "")) << name;
      ++valid;
    } else if (name.rfind("bad-", 0) == 0) {
      EXPECT_THROW(io::parse_kubeconfig_text(text, name, ""), InputError) << name;
      ++bad;
    }
  }
  EXPECT_GE(valid, 3);
  EXPECT_GE(bad, 3);
}

TEST(Kubeconfig, InClusterConfig) {
  TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", "PEM");
  dir.write("namespace", "gpufleet\n");
  const auto c = io::in_cluster_config("10.96.0.1", "443", dir.path.string());
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.url.host, "10.96.0.1");
  EXPECT_EQ(c.url.port, 443);
  EXPECT_EQ(c.token, "sa-token");
  EXPECT_EQ(c.token_file, (dir.path / "token").string());
  EXPECT_EQ(c.certificate_authority, (dir.path / "ca.crt").string());
  EXPECT_EQ(c.namespace_, "gpufleet");
  const auto v6 = io::in_cluster_config("fd00::1", "6443", dir.path.string());
  EXPECT_EQ(v6.server, "https://[fd00::1]:6443");
  EXPECT_EQ(v6.url.host, "fd00::1");
  expect_input_error([&] { io::in_cluster_config("", "443", dir.path.string()); }, "environment", 0, 0, "KUBERNETES_SERVICE_HOST",
                     "must be defined");
  expect_input_error([&] { io::in_cluster_config("10.96.0.1", "443", (dir.path / "missing").string()); },
                     (dir.path / "missing" / "token").string(), 0, 0, "", "");
}

// ---------------------------------------------------------------------------------------------
// The reflector's backoff (k8s.io/apimachinery wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)).

TEST(ReflectorBackoff, DoublesFromPoint8ToTheCapAndResetsAfterTwoMinutes) {
  server::KubeWatchOptions o;
  o.backoff_jitter = 0;
  GoRand rng(1);
  server::ReflectorBackoff b(o, rng);
  const double expected[] = {0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30};
  double t = 0;
  for (const double e : expected) {
    EXPECT_DOUBLE_EQ(b.next(t), e);
    t += 10;  // less than 2 min between failures: no reset
  }
  EXPECT_DOUBLE_EQ(b.next(t + 121), 0.8);  // more than 2 min since the last: starts over
  EXPECT_DOUBLE_EQ(b.next(t + 122), 1.6);
}

TEST(ReflectorBackoff, JitterAddsUpToOneDelayFromTheSeededGenerator) {
  server::KubeWatchOptions o;  // jitter 1.0
  GoRand rng(42), same(42);
  server::ReflectorBackoff b(o, rng);
  // wait.Jitter(d, 1.0) = d + r * d with r the generator's next Float64.
  for (const double d : {0.8, 1.6, 3.2}) {
    const double got = b.next(0);
    EXPECT_DOUBLE_EQ(got, d + same.float64() * d);
    EXPECT_GE(got, d);
    EXPECT_LT(got, 2 * d);
  }
}

// ---------------------------------------------------------------------------------------------
// KubeWatcher against a fake API server.

// The sink the watcher feeds, with ObjectSink's semantics (live/cluster_cache.h).
class RecordingSink : public live::ObjectSink {
 public:
  void replace(live::ResourceKind kind, std::vector<json> items, const std::string& rv) override {
    std::lock_guard lock(mu_);
    auto& m = objects_[idx(kind)];
    m.clear();
    for (auto& item : items) {
      const std::string key = io::kube_object_key(item);
      m[key] = std::move(item);
    }
    rv_[idx(kind)] = rv;
    ++replaces_[idx(kind)];
  }
  void apply(live::ResourceKind kind, live::WatchEventType type, const json& object) override {
    std::lock_guard lock(mu_);
    if (type == live::WatchEventType::kDeleted) objects_[idx(kind)].erase(io::kube_object_key(object));
    else if (type != live::WatchEventType::kBookmark) objects_[idx(kind)][io::kube_object_key(object)] = object;
    rv_[idx(kind)] = object["metadata"]["resourceVersion"].get<std::string>();
  }
  std::string resource_version(live::ResourceKind kind) const override {
    std::lock_guard lock(mu_);
    return rv_[idx(kind)];
  }
  std::map<std::string, json> objects(live::ResourceKind kind) const {
    std::lock_guard lock(mu_);
    return objects_[idx(kind)];
  }
  int replaces(live::ResourceKind kind) const {
    std::lock_guard lock(mu_);
    return replaces_[idx(kind)];
  }

 private:
  static int idx(live::ResourceKind k) { return k == live::ResourceKind::kPod ? 1 : 0; }
  mutable std::mutex mu_;
  std::map<std::string, json> objects_[2];
  std::string rv_[2];
  int replaces_[2] = {0, 0};
};

constexpr live::ResourceKind kNode = live::ResourceKind::kNode;
constexpr live::ResourceKind kPod = live::ResourceKind::kPod;

// A fake API server for Nodes and Pods: objects, a resourceVersion per kind, and the event history
// watches stream from.
class FakeApiServer {
 public:
  explicit FakeApiServer(std::string token = "test-token", std::unique_ptr<httplib::Server> server = nullptr)
      : token_(std::move(token)), server_(server ? std::move(server) : std::make_unique<httplib::Server>()) {
    server_->Get("/api/v1/nodes", [this](const httplib::Request& q, httplib::Response& r) { handle(0, q, r); });
    server_->Get("/api/v1/pods", [this](const httplib::Request& q, httplib::Response& r) { handle(1, q, r); });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  ~FakeApiServer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }

  // Adds or replaces an object; `silent`: no watch event (as if compacted away).
  void put(live::ResourceKind k, json obj, bool silent = false) {
    std::lock_guard lock(mu_);
    Kind& K = kinds_[i(k)];
    obj["metadata"]["resourceVersion"] = std::to_string(++K.rv);
    const std::string key = io::kube_object_key(obj);
    const char* type = K.objects.count(key) != 0 ? "MODIFIED" : "ADDED";
    K.objects[key] = obj;
    if (!silent) K.history.push_back({K.rv, json{{"type", type}, {"object", obj}}.dump()});
    cv_.notify_all();
  }
  void remove(live::ResourceKind k, const std::string& key, bool silent = false) {
    std::lock_guard lock(mu_);
    Kind& K = kinds_[i(k)];
    json obj = K.objects.at(key);
    K.objects.erase(key);
    obj["metadata"]["resourceVersion"] = std::to_string(++K.rv);
    if (!silent) K.history.push_back({K.rv, json{{"type", "DELETED"}, {"object", obj}}.dump()});
    cv_.notify_all();
  }
  // A BOOKMARK at a new resourceVersion (as when other resources changed).
  void bookmark(live::ResourceKind k) {
    std::lock_guard lock(mu_);
    Kind& K = kinds_[i(k)];
    ++K.rv;
    K.history.push_back({K.rv, json{{"type", "BOOKMARK"}, {"object", {{"kind", "Node"}, {"metadata", {{"resourceVersion", std::to_string(K.rv)}}}}}}.dump()});
    cv_.notify_all();
  }
  // The next watch (or the one in flight) of `k` learns its resourceVersion is too old: as HTTP 410 on
  // the next request (the one in flight ends normally), or as an ERROR event in the stream.
  void expire(live::ResourceKind k, bool as_event) {
    std::lock_guard lock(mu_);
    Kind& K = kinds_[i(k)];
    K.expire_pending = true;
    K.expire_as_event = as_event;
    if (!as_event) ++K.generation;
    cv_.notify_all();
  }
  // Watches of `k` in flight end normally (as at timeoutSeconds).
  void end_watches(live::ResourceKind k) {
    std::lock_guard lock(mu_);
    ++kinds_[i(k)].generation;
    cv_.notify_all();
  }
  // The watch of `k` drops its connection after its next `lines` lines, halfway through the line after.
  void drop_after(live::ResourceKind k, int lines) {
    std::lock_guard lock(mu_);
    kinds_[i(k)].drop_after = lines;
  }

  std::map<std::string, json> objects(live::ResourceKind k) const {
    std::lock_guard lock(mu_);
    return kinds_[i(k)].objects;
  }
  std::string rv(live::ResourceKind k) const {
    std::lock_guard lock(mu_);
    return std::to_string(kinds_[i(k)].rv);
  }
  std::vector<std::string> watch_queries(live::ResourceKind k) const {
    std::lock_guard lock(mu_);
    return kinds_[i(k)].watch_queries;
  }
  int list_pages(live::ResourceKind k) const {
    std::lock_guard lock(mu_);
    return kinds_[i(k)].list_pages;
  }

 private:
  struct Kind {
    std::map<std::string, json> objects;
    int64_t rv = 100;
    std::vector<std::pair<int64_t, std::string>> history;
    bool expire_pending = false;
    bool expire_as_event = false;
    int generation = 0;
    int drop_after = -1;
    std::vector<std::string> watch_queries;  // "rv=<resourceVersion> timeout=<timeoutSeconds>"
    int list_pages = 0;
  };
  struct Snapshot {
    std::vector<json> items;
    int64_t rv;
  };
  static int i(live::ResourceKind k) { return k == kPod ? 1 : 0; }
  static std::string status_json(int code, const char* reason, const std::string& message) {
    return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"message", message}, {"reason", reason}, {"code", code}}.dump();
  }

  void handle(int k, const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer " + token_) {
      res.status = 401;
      res.set_content(status_json(401, "Unauthorized", "Unauthorized"), "application/json");
      return;
    }
    std::unique_lock lock(mu_);
    Kind& K = kinds_[k];
    if (!req.has_param("watch")) {  // a list page
      const size_t limit = std::stoul(req.get_param_value("limit"));
      size_t snap = 0, offset = 0;
      if (req.has_param("continue")) {
        // Tokens hold '=', '&', '+' and '/' to check the client escapes them.
        if (std::sscanf(req.get_param_value("continue").c_str(), "snap=%zu&off=%zu+/", &snap, &offset) != 2) {
          res.status = 400;
          return;
        }
      } else {
        snap = snapshots_.size();
        Snapshot s{{}, K.rv};
        for (const auto& [key, obj] : K.objects) s.items.push_back(obj);
        snapshots_.push_back(std::move(s));
      }
      const Snapshot& s = snapshots_.at(snap);
      json items = json::array();
      for (size_t j = offset; j < std::min(offset + limit, s.items.size()); ++j) items.push_back(s.items[j]);
      json meta = {{"resourceVersion", std::to_string(s.rv)}};
      if (offset + limit < s.items.size()) meta["continue"] = "snap=" + std::to_string(snap) + "&off=" + std::to_string(offset + limit) + "+/";
      ++K.list_pages;
      res.set_content(json{{"kind", k == 0 ? "NodeList" : "PodList"}, {"apiVersion", "v1"}, {"metadata", meta}, {"items", items}}.dump(),
                      "application/json");
      return;
    }
    const int64_t from = std::stoll(req.get_param_value("resourceVersion"));
    K.watch_queries.push_back("rv=" + req.get_param_value("resourceVersion") + " timeout=" + req.get_param_value("timeoutSeconds") +
                              " bookmarks=" + req.get_param_value("allowWatchBookmarks"));
    if (K.expire_pending && !K.expire_as_event) {
      K.expire_pending = false;
      res.status = 410;
      res.set_content(status_json(410, "Gone", "too old resource version"), "application/json");
      return;
    }
    size_t cursor = 0;
    while (cursor < K.history.size() && K.history[cursor].first <= from) ++cursor;
    const int generation = K.generation;
    lock.unlock();
    res.set_chunked_content_provider("application/json", [this, k, cursor, generation](size_t, httplib::DataSink& sink) mutable {
      std::unique_lock lock(mu_);
      Kind& K = kinds_[k];
      cv_.wait_for(lock, std::chrono::milliseconds(20), [&] {
        return stopping_ || K.generation != generation || cursor < K.history.size() || K.expire_pending;
      });
      if (stopping_) return false;
      if (K.expire_pending && K.expire_as_event) {
        K.expire_pending = false;
        const std::string line = json{{"type", "ERROR"}, {"object", json::parse(status_json(410, "Expired", "too old resource version"))}}.dump() + "\n";
        sink.write(line.data(), line.size());
        sink.done();
        return true;
      }
      if (K.generation != generation) {
        sink.done();
        return true;
      }
      while (cursor < K.history.size()) {
        const std::string line = K.history[cursor++].second + "\n";
        sink.write(line.data(), line.size());
        if (K.drop_after > 0 && --K.drop_after == 0) {
          K.drop_after = -1;
          if (cursor < K.history.size()) sink.write(K.history[cursor].second.data(), K.history[cursor].second.size() / 2);
          return false;  // the connection closes without the last chunk
        }
      }
      return true;
    });
  }

  std::string token_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Kind kinds_[2];
  std::vector<Snapshot> snapshots_;
};

json node(const std::string& name, int gpus = 8) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}
json pod(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}}}, {"spec", {{"schedulerName", "gpufleet"}}}};
}

io::KubeRestConfig local_config(int port) {
  io::KubeRestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.url = io::parse_server_url(c.server, "test", "server");
  c.token = "test-token";
  return c;
}

server::KubeWatchOptions fast_options() {
  server::KubeWatchOptions o;
  o.initial_backoff_s = 0.01;
  o.max_backoff_s = 0.05;
  o.list_page_size = 3;
  o.min_watch_timeout_s = 60;
  o.connect_timeout_s = 2;
  o.seed = 7;
  return o;
}

// True once `done()` holds, polling until a 10 s deadline.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// The sink holds exactly the server's objects of `k` at its resourceVersion.
bool converged(const RecordingSink& sink, const FakeApiServer& api, live::ResourceKind k) {
  return sink.objects(k) == api.objects(k) && sink.resource_version(k) == api.rv(k);
}

void expect_converged(const RecordingSink& sink, const FakeApiServer& api, live::ResourceKind k) {
  EXPECT_TRUE(eventually([&] { return converged(sink, api, k); }))
      << live::kind_name(k) << ": sink has " << sink.objects(k).size() << " objects at " << sink.resource_version(k)
      << ", server " << api.objects(k).size() << " at " << api.rv(k);
}

struct WatchFixture : ::testing::Test {
  FakeApiServer api;
  RecordingSink sink;
  std::unique_ptr<server::KubeWatcher> watcher;

  void SetUp() override {
    for (int n = 0; n < 7; ++n) api.put(kNode, node("gpu-" + std::to_string(n)));
    for (int n = 0; n < 4; ++n) api.put(kPod, pod(n % 2 == 0 ? "ml" : "infer", "p" + std::to_string(n)));
    watcher = std::make_unique<server::KubeWatcher>(local_config(api.port()), sink, fast_options());
    watcher->start();
    expect_converged(sink, api, kNode);
    expect_converged(sink, api, kPod);
    // Wait for each kind's first watch to be in flight.
    ASSERT_TRUE(eventually([&] { return api.watch_queries(kNode).size() == 1 && api.watch_queries(kPod).size() == 1; }));
  }
  void TearDown() override { watcher->stop(); }
};

TEST_F(WatchFixture, ListsInPagesThenAppliesEvents) {
  EXPECT_EQ(api.list_pages(kNode), 3);  // 7 Nodes in pages of 3
  EXPECT_EQ(api.list_pages(kPod), 2);   // 4 Pods
  EXPECT_TRUE(watcher->synced(kNode));
  EXPECT_TRUE(watcher->synced(kPod));
  // The watch starts at the list's resourceVersion (7 puts after 100), timeoutSeconds in [60, 120).
  const std::string q = api.watch_queries(kNode).at(0);
  EXPECT_EQ(q.substr(0, 15), "rv=107 timeout=") << q;
  const int timeout = std::stoi(q.substr(15));
  EXPECT_GE(timeout, 60);
  EXPECT_LT(timeout, 120);
  EXPECT_NE(q.find("bookmarks=true"), std::string::npos) << q;

  api.put(kNode, node("gpu-7"));
  api.put(kNode, node("gpu-0", 4));  // MODIFIED
  api.remove(kNode, "gpu-3");
  api.put(kPod, pod("ml", "p9"));
  api.remove(kPod, "infer/p1");
  expect_converged(sink, api, kNode);
  expect_converged(sink, api, kPod);
  EXPECT_EQ(sink.objects(kNode).at("gpu-0")["status"]["allocatable"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(sink.objects(kNode).count("gpu-3"), 0u);
  const auto nodes = watcher->counters(kNode);
  EXPECT_EQ(nodes.lists, 1u);
  EXPECT_EQ(nodes.relists, 0u);
  EXPECT_EQ(nodes.list_pages, 3u);
  EXPECT_EQ(nodes.events, 3u);
  EXPECT_EQ(nodes.errors, 0u);
  EXPECT_EQ(watcher->counters(kPod).events, 2u);
  EXPECT_EQ(sink.replaces(kNode), 1);
}

TEST_F(WatchFixture, BookmarkMovesTheResourceVersion) {
  api.bookmark(kPod);
  expect_converged(sink, api, kPod);
  EXPECT_EQ(sink.resource_version(kPod), "105");
  EXPECT_EQ(watcher->counters(kPod).bookmarks, 1u);
  EXPECT_EQ(watcher->counters(kPod).events, 0u);
}

TEST_F(WatchFixture, GoneAsHttp410Relists) {
  // Changes whose events were compacted away: only a relist can bring them.
  api.put(kNode, node("gpu-8"), true);
  api.remove(kNode, "gpu-1", true);
  api.expire(kNode, false);
  expect_converged(sink, api, kNode);
  const auto c = watcher->counters(kNode);
  EXPECT_EQ(c.expired, 1u);
  EXPECT_EQ(c.lists, 2u);
  EXPECT_EQ(c.relists, 1u);
  EXPECT_EQ(sink.replaces(kNode), 2);
  // And it watches on from the relist.
  api.put(kNode, node("gpu-9"));
  expect_converged(sink, api, kNode);
  EXPECT_EQ(watcher->counters(kPod).relists, 0u);
}

TEST_F(WatchFixture, GoneAsErrorEventRelists) {
  api.put(kPod, pod("ml", "hidden"), true);
  api.expire(kPod, true);
  expect_converged(sink, api, kPod);
  const auto c = watcher->counters(kPod);
  EXPECT_EQ(c.expired, 1u);
  EXPECT_EQ(c.relists, 1u);
  EXPECT_EQ(c.errors, 0u);
  EXPECT_NE(watcher->last_error(kPod).find("410 Expired"), std::string::npos) << watcher->last_error(kPod);
}

TEST_F(WatchFixture, DroppedConnectionWatchesAgainFromTheLastResourceVersion) {
  api.drop_after(kNode, 1);
  api.put(kNode, node("gpu-10"));  // rv 108: delivered, then the connection drops mid-line
  api.put(kNode, node("gpu-11"));
  api.put(kNode, node("gpu-12"));
  expect_converged(sink, api, kNode);
  const auto c = watcher->counters(kNode);
  EXPECT_EQ(c.lists, 1u);  // no relist: the watch resumed
  EXPECT_GE(c.errors, 1u);
  EXPECT_GE(c.watch_restarts, 1u);
  EXPECT_EQ(c.events, 3u);
  const auto queries = api.watch_queries(kNode);
  ASSERT_GE(queries.size(), 2u);
  EXPECT_EQ(queries[1].substr(0, 7), "rv=108 ") << queries[1];
}

TEST_F(WatchFixture, NormalEndWatchesAgainAtOnce) {
  api.end_watches(kPod);
  ASSERT_TRUE(eventually([&] { return api.watch_queries(kPod).size() == 2; }));
  api.put(kPod, pod("ml", "after"));
  expect_converged(sink, api, kPod);
  const auto c = watcher->counters(kPod);
  EXPECT_EQ(c.watch_restarts, 1u);
  EXPECT_EQ(c.errors, 0u);
  EXPECT_EQ(c.lists, 1u);
  EXPECT_EQ(api.watch_queries(kPod)[1].substr(0, 7), "rv=104 ");
}

TEST_F(WatchFixture, StopReturnsPromptlyDuringAnIdleWatch) {
  const auto t0 = std::chrono::steady_clock::now();
  watcher->stop();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 1.0);
}

TEST(KubeWatcher, UnauthorizedIsAnErrorNotASync) {
  FakeApiServer api("other-token");
  RecordingSink sink;
  server::KubeWatcher watcher(local_config(api.port()), sink, fast_options());
  watcher.start();
  ASSERT_TRUE(eventually([&] { return watcher.counters(kNode).errors >= 2; }));  // retried after the backoff
  EXPECT_FALSE(watcher.synced(kNode));
  EXPECT_NE(watcher.last_error(kNode).find("HTTP 401 Unauthorized"), std::string::npos) << watcher.last_error(kNode);
  watcher.stop();
  EXPECT_EQ(sink.replaces(kNode), 0);
}

// TLS: the server's certificate verified against the CA given as data, a client certificate and key
// from files (the server requires one), and no verification against roots that do not sign it.
// Certificates are made with the openssl command (Debian package openssl).
using test::Pki;

TEST(KubeWatcherTls, VerifiesTheServerAndPresentsTheClientCertificate) {
  Pki pki;
  if (!pki.ok) GTEST_SKIP() << "the openssl command could not make test certificates";
  FakeApiServer api("test-token", std::make_unique<httplib::SSLServer>(pki.path("server.crt").c_str(), pki.path("server.key").c_str(),
                                                                        pki.path("ca.crt").c_str()));
  api.put(kNode, node("gpu-0"));
  io::KubeRestConfig c = local_config(api.port());
  c.server = "https://127.0.0.1:" + std::to_string(api.port());
  c.url = io::parse_server_url(c.server, "test", "server");
  c.certificate_authority_data = io::read_text_file(pki.path("ca.crt"), io::kMiB, "test");
  c.client_certificate = pki.path("client.crt");
  c.client_key = pki.path("client.key");
  {
    RecordingSink sink;
    server::KubeWatcher watcher(c, sink, fast_options());
    watcher.start();
    expect_converged(sink, api, kNode);
    EXPECT_EQ(watcher.counters(kNode).errors, 0u) << watcher.last_error(kNode);
  }
  {  // A CA that did not sign the server's certificate: never synced.
    io::KubeRestConfig other = c;
    other.certificate_authority_data.clear();
    other.certificate_authority = pki.path("other.crt");
    RecordingSink sink;
    server::KubeWatcher watcher(other, sink, fast_options());
    watcher.start();
    ASSERT_TRUE(eventually([&] { return watcher.counters(kNode).errors >= 1; }));
    EXPECT_FALSE(watcher.synced(kNode));
    EXPECT_NE(watcher.last_error(kNode).find("SSL"), std::string::npos) << watcher.last_error(kNode);
  }
  {  // insecure-skip-tls-verify: the same untrusted server is accepted.
    io::KubeRestConfig insecure = c;
    insecure.certificate_authority_data.clear();
    insecure.insecure_skip_tls_verify = true;
    RecordingSink sink;
    server::KubeWatcher watcher(insecure, sink, fast_options());
    watcher.start();
    expect_converged(sink, api, kNode);
  }
  {  // A key that is not the certificate's is refused before any connection.
    io::KubeRestConfig mismatched = c;
    mismatched.client_key = pki.path("other.key");
    RecordingSink sink;
    server::KubeWatcher watcher(mismatched, sink, fast_options());
    expect_input_error([&] { watcher.start(); }, pki.path("other.key"), 0, 0, "client-key", "does not match the client certificate");
  }
}

}  // namespace
}  // namespace gpufleet
