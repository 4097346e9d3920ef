// `gpufleet serve`'s HTTP server (server/http_server.h) in-process on 127.0.0.1: the extender verbs'
// JSON as kube-scheduler reads it, health and readiness, and bad requests (malformed, wrongly typed,
// oversized, truncated, slow) that get a 4xx with a reason while the server keeps serving others.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

class LiveServer : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    o.max_body_bytes = 1 << 20;
    o.read_timeout_s = 1;
    server_ = std::make_unique<HttpServer>(o, cache_, nullptr, ServerHooks{});
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
  EXPECT_EQ(big->status, 400);
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

}  // namespace
}  // namespace gpufleet::server
