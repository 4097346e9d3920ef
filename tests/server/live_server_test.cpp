// `gpufleet serve`'s HTTP server (server/http_server.h) in-process on 127.0.0.1: the extender verbs'
// JSON as kube-scheduler reads it, health and readiness, and bad requests (malformed, wrongly typed,
// oversized, truncated, slow, compressed) that get a 4xx with a reason while the server keeps serving
// others, and answers that never carry an exception's text.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "live/cluster_cache.h"
#include "server/http_server.h"

namespace gpufleet::server {
namespace {

using nlohmann::json;

json node(const std::string& name, int gpus) {
  const json r = {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
  return {{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", {{"name", name}}}, {"status", {{"allocatable", r}, {"capacity", r}}}};
}

json pod(const std::string& name, int gpus, const std::string& node_name = "") {
  const json r = {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  json p = {{"kind", "Pod"},
            {"apiVersion", "v1"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"requests", r}, {"limits", r}}}}})}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

// `text` compressed as gzip (window bits 15 + 16) or zlib (15, HTTP's "deflate").
std::string compress(const std::string& text, bool gzip) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, gzip ? 15 + 16 : 15, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class LiveServer : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = threads_;
    o.max_body_bytes = 1 << 20;
    o.request_timeout_s = 2;
    o.max_connections = max_connections_;
    o.shutdown_grace_s = shutdown_grace_s_;
    server_ = std::make_unique<HttpServer>(o, cache_, nullptr, std::move(hooks_));
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  httplib::Result post(const std::string& path, const std::string& body) {
    httplib::Client c("127.0.0.1", port_);
    return c.Post(path, body, "application/json");
  }
  void load_cluster() {
    const json list = {{"kind", "List"}, {"apiVersion", "v1"}, {"items", json::array({node("a", 8), node("b", 2), pod("busy", 2, "b"), pod("p", 1)})}};
    const auto r = post("/snapshot", list.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body)["nodes"], 2);
  }
  // A new connection to the server (a blocking socket).
  int connect_raw() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }
  // Sends raw bytes on a new connection and returns what comes back (empty when the server closes).
  std::string raw(const std::string& bytes, int pause_ms_per_byte = 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (pause_ms_per_byte == 0) {
      (void)!::write(fd, bytes.data(), bytes.size());
    } else {
      for (char ch : bytes) {
        if (::write(fd, &ch, 1) != 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_per_byte));
      }
    }
    ::shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
  }

  // A POST with extra headers (Content-Encoding, ...).
  httplib::Result post(const std::string& path, const std::string& body, const httplib::Headers& headers) {
    httplib::Client c("127.0.0.1", port_);
    return c.Post(path, headers, body, "application/json");
  }
  json filter_body() const { return json{{"Pod", pod("p", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a", "b"}}}; }
  void expect_filter_works() {
    const auto r = post("/filter", filter_body().dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }

  size_t threads_ = 4;
  size_t max_connections_ = 1024;
  double shutdown_grace_s_ = 10;
  ServerHooks hooks_;
  live::ClusterCache cache_{live::CacheOptions{}};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(LiveServer, HealthAndReadiness) {
  httplib::Client c("127.0.0.1", port_);
  auto h = c.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto r = c.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);  // nothing listed yet
  load_cluster();
  r = c.Get("/readyz");
  EXPECT_EQ(r->status, 200);
  auto m = c.Get("/nope");
  EXPECT_EQ(m->status, 404);
}

// A posted List's items of other kinds than Node and Pod are left out and counted by kind in the
// answer ("" for an item without a kind), not dropped silently.
TEST_F(LiveServer, SnapshotCountsTheKindsItSkips) {
  const json slice = {{"kind", "ResourceSlice"}, {"apiVersion", "resource.k8s.io/v1"}, {"metadata", {{"name", "s"}}}};
  const json list = {{"kind", "List"},
                     {"apiVersion", "v1"},
                     {"items", json::array({node("a", 8), slice, pod("p", 1), slice,
                                            {{"kind", "DeviceClass"}, {"metadata", {{"name", "gpu"}}}},
                                            {{"metadata", {{"name", "x"}}}}})}};
  const auto r = post("/snapshot", list.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json answer = json::parse(r->body);
  EXPECT_EQ(answer["nodes"], 1);
  EXPECT_EQ(answer["pods"], 1);
  EXPECT_EQ(answer["skipped"], (json{{"", 1}, {"DeviceClass", 1}, {"ResourceSlice", 2}}));
}

TEST_F(LiveServer, VerbsAnswerInKubeSchedulersJson) {
  load_cluster();
  // nodeCacheCapable: names in, names out.
  auto f = post("/filter", json{{"Pod", pod("p", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a", "b", "zz"}}}.dump());
  ASSERT_TRUE(f);
  ASSERT_EQ(f->status, 200) << f->body;
  json out = json::parse(f->body);
  EXPECT_EQ(out["NodeNames"], json({"a"}));
  EXPECT_TRUE(out["Nodes"].is_null());
  EXPECT_EQ(out["FailedNodes"]["b"], "Insufficient nvidia.com/gpu");
  EXPECT_EQ(out["FailedAndUnresolvableNodes"]["zz"], "node(s) not in gpufleet's cache");
  EXPECT_EQ(out["Error"], "");
  // Not nodeCacheCapable: a NodeList in, the passing Node objects echoed.
  const json list = {{"metadata", json::object()}, {"items", json::array({node("a", 8), node("b", 2)})}};
  f = post("/filter", json{{"Pod", pod("p", 1)}, {"Nodes", list}, {"NodeNames", nullptr}}.dump());
  ASSERT_EQ(f->status, 200) << f->body;
  out = json::parse(f->body);
  EXPECT_TRUE(out["NodeNames"].is_null());
  ASSERT_EQ(out["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(out["Nodes"]["items"][0], node("a", 8));
  // Prioritize: HostPriorityList.
  auto p = post("/prioritize", json{{"Pod", pod("p", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a"}}}.dump());
  ASSERT_EQ(p->status, 200) << p->body;
  EXPECT_EQ(json::parse(p->body), json::parse(R"([{"Host":"a","Score":10}])"));
  // Bind: records the pod bound with its devices; b is full, a takes p.
  auto b = post("/bind", json{{"PodName", "p"}, {"PodNamespace", "default"}, {"PodUID", "uid-p"}, {"Node", "b"}}.dump());
  ASSERT_EQ(b->status, 200);
  EXPECT_EQ(json::parse(b->body)["Error"], "pod default/p does not fit node b: Insufficient nvidia.com/gpu");
  b = post("/bind", json{{"PodName", "p"}, {"PodNamespace", "default"}, {"PodUID", "uid-p"}, {"Node", "a"}}.dump());
  EXPECT_EQ(json::parse(b->body)["Error"], "");
  EXPECT_EQ(cache_.snapshot()->inputs.input.pods[cache_.snapshot()->pod_by_key.at("default/p")].node_name, "a");
  // A second bind, or another UID: refused, as the API server refuses a second Binding.
  b = post("/bind", json{{"PodName", "p"}, {"PodNamespace", "default"}, {"PodUID", "uid-p"}, {"Node", "a"}}.dump());
  EXPECT_EQ(json::parse(b->body)["Error"], "pod default/p is already bound to node a");
  b = post("/bind", json{{"PodName", "busy"}, {"PodNamespace", "default"}, {"PodUID", "uid-other"}, {"Node", "a"}}.dump());
  EXPECT_EQ(json::parse(b->body)["Error"], "pod default/busy has UID uid-busy, not uid-other");
  // Preempt: MetaVictims in, the accepted ones out.
  auto e = post("/preempt", json{{"Pod", pod("big", 2)},
                                 {"NodeNameToMetaVictims", {{"b", {{"Pods", json::array({{{"UID", "uid-busy"}}})}, {"NumPDBViolations", 0}}}}}}
                                .dump());
  ASSERT_EQ(e->status, 200) << e->body;
  EXPECT_EQ(json::parse(e->body)["NodeNameToMetaVictims"]["b"]["Pods"][0]["UID"], "uid-busy");
}

TEST_F(LiveServer, BadBodiesGet400WithAReasonAndTheServerKeepsServing) {
  load_cluster();
  const std::vector<std::string> bad = {
      "{",                                                   // truncated JSON
      "not json at all",                                     // malformed
      R"({"Pod": 7, "NodeNames": ["a"]})",                   // wrongly typed
      R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": "a"})",  // NodeNames not a list
      "[1, 2, 3]",                                           // not an object
      "",                                                    // empty
  };
  for (const char* verb : {"/filter", "/prioritize", "/preempt", "/bind"})
    for (const std::string& body : bad) {
      const auto r = post(verb, body);
      ASSERT_TRUE(r) << verb << " " << body;
      EXPECT_EQ(r->status, 400) << verb << " " << body << ": " << r->body;
      EXPECT_FALSE(r->body.empty());
      EXPECT_EQ(r->body.find('\n'), r->body.size() - 1) << "one line: " << r->body;
    }
  // Oversized: refused before it is read.
  const auto big = post("/filter", std::string(2 << 20, ' '));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("request body of 2097152 bytes is over the limit of 1048576 bytes"), std::string::npos) << big->body;
  // A body shorter than its Content-Length: the read times out, 400, connection closed.
  const std::string reply = raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"Pod\":");
  EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 400")) << reply;
  // Still serving.
  const auto ok = post("/filter", json{{"Pod", pod("p", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a"}}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(LiveServer, ASlowClientDoesNotStallOthers) {
  load_cluster();
  // The slow client sends its request a byte every 40 ms (about 1.3 s); the others are all answered
  // while it is still sending.
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::atomic<bool> slow_done{false};
  std::string slow_reply;
  std::thread slow([&] {
    slow_reply = raw(request, 40);
    slow_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 20; ++i) {
    const auto r = post("/filter", json{{"Pod", pod("p", 1)}, {"Nodes", nullptr}, {"NodeNames", {"a", "b"}}}.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_FALSE(slow_done) << "the other requests waited for the slow client";
  slow.join();
  EXPECT_TRUE(slow_reply.starts_with("HTTP/1.1 200")) << slow_reply;
}

TEST_F(LiveServer, AnUnsupportedContentEncodingGets415NamingIt) {
  load_cluster();
  for (const std::string encoding : {"br", "x-unknown", "gzip, br", "compress"}) {
    const auto r = post("/filter", filter_body().dump(), {{"Content-Encoding", encoding}});
    ASSERT_TRUE(r) << encoding;
    EXPECT_EQ(r->status, 415) << encoding << ": " << r->body;
    EXPECT_NE(r->body.find("Content-Encoding '" + encoding + "' is not supported"), std::string::npos) << r->body;
    EXPECT_FALSE(r->has_header("EXCEPTION_WHAT"));
  }
  // A multipart form is no JSON body either.
  httplib::Client c("127.0.0.1", port_);
  const auto form = c.Post("/filter", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n",
                           "multipart/form-data; boundary=x");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415) << form->body;
  EXPECT_FALSE(form->has_header("EXCEPTION_WHAT"));
  expect_filter_works();
}

TEST_F(LiveServer, GzipAndDeflateBodiesAreInflated) {
  load_cluster();
  const std::string body = filter_body().dump();
  for (const auto& [encoding, gzip] : std::vector<std::pair<std::string, bool>>{{"gzip", true}, {"deflate", false}, {"GZIP", true}}) {
    const auto r = post("/filter", compress(body, gzip), {{"Content-Encoding", encoding}});
    ASSERT_TRUE(r) << encoding;
    EXPECT_EQ(r->status, 200) << encoding << ": " << r->body;
    EXPECT_EQ(json::parse(r->body)["NodeNames"], json({"a"})) << encoding;
    EXPECT_FALSE(r->has_header("EXCEPTION_WHAT"));
  }
  // "identity" is the body as sent.
  const auto identity = post("/filter", body, {{"Content-Encoding", "identity"}});
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->status, 200) << identity->body;
  // A corrupt or truncated stream: 400 naming the encoding; the next request on the server is served.
  const std::string gz = compress(body, true);
  for (const std::string& bad : {gz.substr(0, gz.size() / 2), std::string("\x1f\x8b garbage"), gz + "trailing"}) {
    const auto r = post("/filter", bad, {{"Content-Encoding", "gzip"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_TRUE(r->body.starts_with("request body: Content-Encoding gzip: ")) << r->body;
    EXPECT_FALSE(r->has_header("EXCEPTION_WHAT"));
  }
  expect_filter_works();
}

TEST_F(LiveServer, AGzipBombGets413WhileInflating) {
  load_cluster();
  // 64 MiB of zeros are about 64 KB compressed; the limit (max_body_bytes here) is 1 MiB. The
  // inflation stops at the first byte over it, the rest of the body is read and dropped undecoded.
  const std::string bomb = compress(std::string(size_t{64} << 20, '\0'), true);
  ASSERT_LT(bomb.size(), size_t{1} << 20);
  httplib::Client c("127.0.0.1", port_);
  for (int i = 0; i < 2; ++i) {  // twice on one keep-alive connection: it stays usable
    const auto r = c.Post("/filter", {{"Content-Encoding", "gzip"}}, bomb, "application/json");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 413) << r->body;
    EXPECT_EQ(r->body, "request body (decoded from gzip) is over the limit of 1048576 bytes\n");
    EXPECT_FALSE(r->has_header("EXCEPTION_WHAT"));
  }
  const auto ok = c.Post("/filter", filter_body().dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  // The same for a bomb sent chunked (no Content-Length).
  const auto chunked = c.Post(
      "/filter", {{"Content-Encoding", "gzip"}},
      [&](size_t offset, httplib::DataSink& sink) {
        if (offset < bomb.size()) return sink.write(bomb.data() + offset, std::min<size_t>(65536, bomb.size() - offset));
        sink.done();
        return true;
      },
      "application/json");
  ASSERT_TRUE(chunked) << httplib::to_string(chunked.error());
  EXPECT_EQ(chunked->status, 413) << chunked->body;
  expect_filter_works();
}

TEST_F(LiveServer, PreemptWithADuplicateVictimGets400NamingTheField) {
  load_cluster();
  const json victims = {{"b", {{"Pods", json::array({{{"UID", "uid-busy"}}, {{"UID", "uid-busy"}}})}, {"NumPDBViolations", 0}}}};
  const auto r = post("/preempt", json{{"Pod", pod("big", 2)}, {"NodeNameToMetaVictims", victims}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("NodeNameToMetaVictims.b.Pods[1].UID"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("listed twice"), std::string::npos) << r->body;
  // Unknown nodes and victims are not errors: kube-scheduler's view may be ahead of the cache's, and
  // such a node is left out of the answer.
  const json unknown = {{"zz", {{"Pods", json::array({{{"UID", "uid-busy"}}})}}}, {"b", {{"Pods", json::array({{{"UID", "uid-nobody"}}})}}}};
  const auto u = post("/preempt", json{{"Pod", pod("big", 2)}, {"NodeNameToMetaVictims", unknown}}.dump());
  ASSERT_TRUE(u);
  EXPECT_EQ(u->status, 200) << u->body;
  EXPECT_EQ(json::parse(u->body)["NodeNameToMetaVictims"], json::object());
  // Still serving: a valid request.
  const json one = {{"b", {{"Pods", json::array({{{"UID", "uid-busy"}}})}, {"NumPDBViolations", 0}}}};
  const auto ok = post("/preempt", json{{"Pod", pod("big", 2)}, {"NodeNameToMetaVictims", one}}.dump());
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(json::parse(ok->body)["NodeNameToMetaVictims"]["b"]["Pods"][0]["UID"], "uid-busy");
}

TEST_F(LiveServer, ABodyThatTricklesGets408) {
  load_cluster();
  // The head at once, then the body a byte every 300 ms: past the request timeout (2 s here).
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string head = "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
  ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
  for (int i = 0; i < 12; ++i) {  // until the answer comes
    if (::send(fd, " ", 1, MSG_NOSIGNAL) != 1) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 300) > 0) break;
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 408")) << out;
  EXPECT_NE(out.find("request timeout of 2 s"), std::string::npos) << out;
  expect_filter_works();
}

// Slow and silent connections each hold a worker, never all of them: the workers are started on
// demand up to `threads` (64 here).
class LiveServerManyWorkers : public LiveServer {
 protected:
  LiveServerManyWorkers() { threads_ = 64; }
};

TEST_F(LiveServerManyWorkers, SlowAndSilentConnectionsDoNotHoldEveryWorker) {
  std::vector<int> fds;
  std::atomic<bool> stop{false};
  for (int i = 0; i < 20; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    fds.push_back(fd);
  }
  // Half of them send a request head a header line at a time, every 500 ms (within the read
  // timeout); the others send nothing.
  std::thread slow([&] {
    for (int fd : fds) ::send(fd, "GET /healthz HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
    for (int line = 0; !stop; ++line) {
      for (size_t i = 0; i < fds.size(); i += 2) {
        const std::string header = "X-Slow-" + std::to_string(line) + ": 1\r\n";
        ::send(fds[i], header.data(), header.size(), MSG_NOSIGNAL);
      }
      for (int k = 0; k < 5 && !stop; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(5);
  c.set_read_timeout(5);
  for (int i = 0; i < 5; ++i) {
    const auto h = c.Get("/healthz");
    ASSERT_TRUE(h) << httplib::to_string(h.error());
    EXPECT_EQ(h->status, 200);
    EXPECT_FALSE(h->has_header("EXCEPTION_WHAT"));
  }
  stop = true;
  slow.join();
  for (int fd : fds) ::close(fd);
}

// 50 clients that send a request head a byte every 500 ms hold 50 connections, no worker (4 here):
// requests from others are answered at once meanwhile, and each slow one gets 408 at the request
// deadline (2 s from its first byte), then is closed.
TEST_F(LiveServer, FiftySlowClientsDoNotDelayOthersAndGet408AtTheDeadline) {
  load_cluster();
  constexpr int kSlow = 50;
  const std::string head = "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n";
  std::vector<int> fds;
  for (int i = 0; i < kSlow; ++i) fds.push_back(connect_raw());
  const auto first_byte = std::chrono::steady_clock::now();
  std::atomic<bool> stop{false};
  std::thread slow([&] {
    for (size_t sent = 0; sent < head.size() && !stop; ++sent) {
      for (int fd : fds) ::send(fd, &head[sent], 1, MSG_NOSIGNAL);
      for (int k = 0; k < 5 && !stop; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  httplib::Client c("127.0.0.1", port_);
  double slowest_s = 0;
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = c.Post("/filter", filter_body().dump(), "application/json");
    slowest_s = std::max(slowest_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200) << r->body;
  }
  // Milliseconds on an idle machine; the old server (a worker per connection) made these wait 2 s.
  EXPECT_LT(slowest_s, 0.5) << "a request waited for the slow clients";
  // Each slow client: 408 at its deadline, then closed.
  for (int fd : fds) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    EXPECT_TRUE(out.starts_with("HTTP/1.1 408")) << out;
    EXPECT_NE(out.find("request head: not received within the request timeout of 2 s"), std::string::npos) << out;
  }
  const double closed_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_byte).count();
  EXPECT_GT(closed_after_s, 1.9);
  EXPECT_LT(closed_after_s, 4.0);
  stop = true;
  slow.join();
  for (int fd : fds) ::close(fd);
  expect_filter_works();
}

// At max_connections (4 here), a new connection closes the one idle longest; the newcomer is served.
class LiveServerFewConnections : public LiveServer {
 protected:
  LiveServerFewConnections() { max_connections_ = 4; }
};

TEST_F(LiveServerFewConnections, ANewConnectionClosesTheIdleLongest) {
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(connect_raw());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // idle[0] is the oldest
  }
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  const auto h = c.Get("/healthz");
  ASSERT_TRUE(h) << httplib::to_string(h.error());
  EXPECT_EQ(h->status, 200);
  // The oldest was closed (read gives end of file at once), the others are open.
  pollfd p{idle[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 1000), 1);
  char ch;
  EXPECT_EQ(::read(idle[0], &ch, 1), 0);
  for (size_t i = 2; i < idle.size(); ++i) {
    pollfd q{idle[i], POLLIN, 0};
    EXPECT_EQ(::poll(&q, 1, 0), 0) << "connection " << i << " was closed";
  }
  for (int fd : idle) ::close(fd);
}

// stop(): a request in flight (a /metrics that takes 600 ms) is answered; a client still sending
// its head is closed; serve() returns once the request in flight is answered, within the grace.
class LiveServerStopping : public LiveServer {
 protected:
  LiveServerStopping() {
    shutdown_grace_s_ = 3;
    hooks_.metrics = [] {
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      return std::string("gpufleet_test 1\n");
    };
  }
  void TearDown() override {
    if (thread_.joinable()) LiveServer::TearDown();
  }
};

TEST_F(LiveServerStopping, StopAnswersTheRequestInFlightClosesSlowClientsAndReturnsWithinTheGrace) {
  const int slow_fd = connect_raw();
  ::send(slow_fd, "GET /healthz HTTP/1.1\r\n", 23, MSG_NOSIGNAL);  // the head, never finished
  int metrics_status = 0;
  std::string metrics_body;
  std::thread in_flight([&] {
    httplib::Client c("127.0.0.1", port_);
    if (const auto r = c.Get("/metrics")) {
      metrics_status = r->status;
      metrics_body = r->body;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the /metrics handler is running
  const auto stop_at = std::chrono::steady_clock::now();
  server_->stop();
  thread_.join();  // serve() returned
  const double stopped_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_at).count();
  in_flight.join();
  EXPECT_LT(stopped_after_s, 3.0);   // the grace
  EXPECT_GT(stopped_after_s, 0.3);   // it waited for the request in flight (600 ms, 200 in)
  EXPECT_EQ(metrics_status, 200);
  EXPECT_EQ(metrics_body, "gpufleet_test 1\n");
  // The slow client was closed without an answer (before its 2 s deadline).
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(slow_fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(out, "");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_at).count(), 1.5);
  ::close(slow_fd);
}

// A handler that outlives the grace (1 s here; /metrics takes 3 s): serve() returns at the grace.
class LiveServerShortGrace : public LiveServer {
 protected:
  LiveServerShortGrace() {
    shutdown_grace_s_ = 1;
    hooks_.metrics = [] {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return std::string();
    };
  }
  void TearDown() override {
    if (thread_.joinable()) LiveServer::TearDown();
  }
};

TEST_F(LiveServerShortGrace, ServeReturnsAtTheGraceWhenARequestOutlivesIt) {
  std::thread in_flight([&] {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(5);
    (void)c.Get("/metrics");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto stop_at = std::chrono::steady_clock::now();
  server_->stop();
  thread_.join();
  const double stopped_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_at).count();
  EXPECT_GT(stopped_after_s, 0.9);
  EXPECT_LT(stopped_after_s, 1.5);
  in_flight.join();
}

// HTTPS (--tls-cert, --tls-key): the routes over TLS; a client that connects and never completes its
// handshake is closed at the request deadline (2 s here) and holds no worker meanwhile. The
// certificate is made with the openssl command (Debian package openssl).
TEST(LiveServerTls, ServesHttpsAndClosesAStalledHandshakeAtTheDeadline) {
  char dir_template[] = "/tmp/gpufleet-tls-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string cmd = "cd " + dir + " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key"
                          " -out server.crt -days 1 -subj /CN=127.0.0.1 >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "the openssl command could not make a test certificate";
  live::ClusterCache cache{live::CacheOptions{}};
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 1;
  o.request_timeout_s = 2;
  o.tls_cert_file = dir + "/server.crt";
  o.tls_key_file = dir + "/server.key";
  HttpServer server(o, cache, nullptr, ServerHooks{});
  const int port = server.bind();
  std::thread serving([&] { server.serve(); });
  // A TCP connection that sends a partial TLS record and stalls.
  const int stalled = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(stalled, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::send(stalled, "\x16\x03\x01", 3, MSG_NOSIGNAL);
  const auto start = std::chrono::steady_clock::now();
  httplib::SSLClient c("127.0.0.1", port);
  c.enable_server_certificate_verification(false);
  const auto h = c.Get("/healthz");  // the one worker is free
  ASSERT_TRUE(h) << httplib::to_string(h.error());
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->body, "ok\n");
  const auto r = c.Post("/snapshot", R"({"kind": "List", "apiVersion": "v1", "items": []})", "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200) << r->body;
  char buf[256];
  while (::read(stalled, buf, sizeof buf) > 0) {
  }
  const double closed_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(closed_after_s, 1.5);
  EXPECT_LT(closed_after_s, 3.5);
  ::close(stalled);
  server.stop();
  serving.join();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpufleet::server
