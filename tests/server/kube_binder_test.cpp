// The bind verb's write (server/kube_binder.h) against a fake API server (cpp-httplib on 127.0.0.1,
// an ephemeral port) that records every PATCH and POST: one Binding carrying the device annotations,
// with its exact path, content type, body and bearer token; the API's Status message in the error of
// a refused request; two replicas racing for one pod against a fake that keeps pods as the API server
// does (the loser gets 409 and the pod keeps the winner's node and annotations).
// Also KubeClient (server/kube_client.h): paths under a prefix, headers, TLS material errors.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/expect_input_error.h"
#include "support/test_pki.h"
#include "readers/kube_api/kubeconfig.h"
#include "server/kube_binder.h"
#include "server/kube_client.h"

namespace gpufleet {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct RecordedRequest {
  std::string method;
  std::string path;
  std::string content_type;
  std::string authorization;
  std::string accept;
  std::string body;
};

// Answers every PATCH and POST with the status and body set for its method (200 / 201 and the
// request's body by default) and records it.
class FakeApiServer {
 public:
  FakeApiServer() {
    server_.Patch(".*", [this](const httplib::Request& q, httplib::Response& r) { handle("PATCH", q, r); });
    server_.Post(".*", [this](const httplib::Request& q, httplib::Response& r) { handle("POST", q, r); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeApiServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  /// From now on POST .../pods/{name}/binding behaves as the API server's BindingREST: the first
  /// Binding of a pod sets its node and annotations (201); a later one gets 409 Conflict with kube's
  /// message and changes nothing.
  void keep_pods() {
    std::lock_guard lock(mu_);
    keep_pods_ = true;
  }
  /// The node and annotations of the pod whose binding path is `path`, as kept (keep_pods).
  std::pair<std::string, json> pod(const std::string& binding_path) const {
    std::lock_guard lock(mu_);
    const auto it = pods_.find(binding_path);
    return it == pods_.end() ? std::pair<std::string, json>{} : it->second;
  }
  void answer(const std::string& method, int status, const json& body) { answer_text(method, status, body.dump()); }
  void answer_text(const std::string& method, int status, std::string body) {
    std::lock_guard lock(mu_);
    answers_[method] = {status, std::move(body)};
  }
  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  void handle(const std::string& method, const httplib::Request& q, httplib::Response& r) {
    std::lock_guard lock(mu_);
    requests_.push_back({method, q.path, q.get_header_value("Content-Type"), q.get_header_value("Authorization"),
                         q.get_header_value("Accept"), q.body});
    if (keep_pods_ && method == "POST") {
      const json binding = json::parse(q.body);
      const std::string name = binding["metadata"]["name"];
      auto [it, fresh] = pods_.try_emplace(q.path);
      if (!fresh) {
        r.status = 409;
        r.set_content(json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"status", "Failure"},
                           {"message", "Operation cannot be fulfilled on pods/binding \"" + name + "\": pod " + name +
                                           " is already assigned to node \"" + it->second.first + "\""},
                           {"reason", "Conflict"},
                           {"code", 409}}
                          .dump(),
                      "application/json");
        return;
      }
      it->second = {binding["target"]["name"], binding["metadata"].value("annotations", json::object())};
      r.status = 201;
      r.set_content(q.body, "application/json");
      return;
    }
    const auto it = answers_.find(method);
    if (it == answers_.end()) {
      r.status = method == "POST" ? 201 : 200;
      r.set_content(q.body, "application/json");
    } else {
      r.status = it->second.first;
      r.set_content(it->second.second, "application/json");
    }
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, std::pair<int, std::string>> answers_;
  std::vector<RecordedRequest> requests_;
  bool keep_pods_ = false;
  std::map<std::string, std::pair<std::string, json>> pods_;  // binding path -> node, annotations
};

io::KubeRestConfig local_config(int port, const std::string& path_prefix = "") {
  io::KubeRestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(port) + path_prefix;
  c.url = io::parse_server_url(c.server, "test", "server");
  c.token = "test-token";
  return c;
}

server::KubeBinderOptions fast_options() {
  server::KubeBinderOptions o;
  o.connect_timeout_s = 2;
  o.read_timeout_s = 2;
  return o;
}

const std::map<std::string, std::string> kAnnotations = {{"gpufleet.io/assume-time", "1700000000000000000"},
                                                         {"gpufleet.io/gpu-ids", "0,1"}};

const json kExpectedBinding = {
    {"apiVersion", "v1"},
    {"kind", "Binding"},
    {"metadata",
     {{"name", "train-0"},
      {"namespace", "team-a"},
      {"uid", "6f1c2e8a-0000-4000-8000-000000000001"},
      {"annotations", {{"gpufleet.io/assume-time", "1700000000000000000"}, {"gpufleet.io/gpu-ids", "0,1"}}}}},
    {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "gpu-node-3"}}}};

TEST(KubeBinder, CreatesOneBindingThatCarriesTheAnnotations) {
  FakeApiServer api;
  server::KubeBinder binder(local_config(api.port()), fast_options());
  EXPECT_EQ(binder.bind("team-a", "train-0", "6f1c2e8a-0000-4000-8000-000000000001", "gpu-node-3", kAnnotations), "");

  const auto reqs = api.requests();
  ASSERT_EQ(reqs.size(), 1u);  // no separate annotation write: a lost race must change nothing
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/team-a/pods/train-0/binding");
  EXPECT_EQ(reqs[0].content_type, "application/json");
  EXPECT_EQ(reqs[0].authorization, "Bearer test-token");
  EXPECT_EQ(reqs[0].accept, "application/json");
  EXPECT_EQ(json::parse(reqs[0].body), kExpectedBinding) << reqs[0].body;
  EXPECT_EQ(reqs[0].body,
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"annotations":{"gpufleet.io/assume-time":"1700000000000000000",)"
            R"("gpufleet.io/gpu-ids":"0,1"},"name":"train-0","namespace":"team-a","uid":"6f1c2e8a-0000-4000-8000-000000000001"},)"
            R"("target":{"apiVersion":"v1","kind":"Node","name":"gpu-node-3"}})");
  EXPECT_NE(binder.render_metrics().find("gpufleet_kube_binds_total{result=\"created\"} 1\n"), std::string::npos);
}

TEST(KubeBinder, ConflictOnTheBindingGivesTheApiMessage) {
  FakeApiServer api;
  api.answer("POST", 409,
             {{"kind", "Status"},
              {"apiVersion", "v1"},
              {"status", "Failure"},
              {"message", "Operation cannot be fulfilled on pods/binding \"train-0\": pod train-0 is already assigned to node \"gpu-node-1\""},
              {"reason", "Conflict"},
              {"code", 409}});
  server::KubeBinder binder(local_config(api.port()), fast_options());
  EXPECT_EQ(binder.bind("team-a", "train-0", "6f1c2e8a-0000-4000-8000-000000000001", "gpu-node-3", kAnnotations),
            "create binding team-a/train-0 to node gpu-node-3: HTTP 409 Conflict Operation cannot be fulfilled on "
            "pods/binding \"train-0\": pod train-0 is already assigned to node \"gpu-node-1\"");
  EXPECT_EQ(api.requests().size(), 1u);
  EXPECT_EQ(binder.render_metrics(),
            "# HELP gpufleet_kube_binds_total Bindings sent to the API server, by result: created, conflict (409: the pod "
            "was already bound, e.g. by another replica), failed.\n"
            "# TYPE gpufleet_kube_binds_total counter\n"
            "gpufleet_kube_binds_total{result=\"conflict\"} 1\n"
            "gpufleet_kube_binds_total{result=\"created\"} 0\n"
            "gpufleet_kube_binds_total{result=\"failed\"} 0\n");
}

TEST(KubeBinder, NotFoundNamesThePod) {
  FakeApiServer api;
  api.answer("POST", 404,
             {{"kind", "Status"},
              {"apiVersion", "v1"},
              {"status", "Failure"},
              {"message", "pods \"train-0\" not found"},
              {"reason", "NotFound"},
              {"details", {{"name", "train-0"}, {"kind", "pods"}}},
              {"code", 404}});
  server::KubeBinder binder(local_config(api.port()), fast_options());
  EXPECT_EQ(binder.bind("team-a", "train-0", "6f1c2e8a-0000-4000-8000-000000000001", "gpu-node-3", kAnnotations),
            "create binding team-a/train-0 to node gpu-node-3: HTTP 404 NotFound pods \"train-0\" not found");
  EXPECT_NE(binder.render_metrics().find("gpufleet_kube_binds_total{result=\"failed\"} 1\n"), std::string::npos);
}

// Two extender replicas (two binders) chose different nodes and devices for one pod and bind at once.
// The API server takes one Binding; the other gets 409 and leaves the pod as the winner wrote it: the
// pod runs where one replica put it, with that replica's devices, never a mix of both.
TEST(KubeBinder, TwoReplicasRacingForOnePodNeverMixTheirChoices) {
  for (int round = 0; round < 20; ++round) {
    FakeApiServer api;
    api.keep_pods();
    server::KubeBinder replica_a(local_config(api.port()), fast_options());
    server::KubeBinder replica_b(local_config(api.port()), fast_options());
    const std::map<std::string, std::string> devices_a = {{"gpufleet.io/gpu-index", "0,1"}};
    const std::map<std::string, std::string> devices_b = {{"gpufleet.io/gpu-index", "2,3"}};
    std::string error_a, error_b;
    std::thread ta([&] { error_a = replica_a.bind("team-a", "train-0", "u-0", "gpu-node-1", devices_a); });
    std::thread tb([&] { error_b = replica_b.bind("team-a", "train-0", "u-0", "gpu-node-2", devices_b); });
    ta.join();
    tb.join();
    ASSERT_TRUE(error_a.empty() != error_b.empty()) << "a: " << error_a << "\nb: " << error_b;
    const bool a_won = error_a.empty();
    const std::string& loser_error = a_won ? error_b : error_a;
    EXPECT_EQ(loser_error, fmt::format("create binding team-a/train-0 to node {}: HTTP 409 Conflict Operation cannot be "
                                       "fulfilled on pods/binding \"train-0\": pod train-0 is already assigned to node \"{}\"",
                                       a_won ? "gpu-node-2" : "gpu-node-1", a_won ? "gpu-node-1" : "gpu-node-2"));
    const auto [node, annotations] = api.pod("/api/v1/namespaces/team-a/pods/train-0/binding");
    EXPECT_EQ(node, a_won ? "gpu-node-1" : "gpu-node-2");
    EXPECT_EQ(annotations, json(a_won ? devices_a : devices_b));
    const server::KubeBinder& loser = a_won ? replica_b : replica_a;
    EXPECT_NE(loser.render_metrics().find("gpufleet_kube_binds_total{result=\"conflict\"} 1\n"), std::string::npos);
  }
}

TEST(KubeBinder, WithoutAnnotationsOnlyBindsUnderThePathPrefix) {
  FakeApiServer api;
  server::KubeBinder binder(local_config(api.port(), "/k8s/clusters/c-1"), fast_options());
  EXPECT_EQ(binder.bind("default", "infer-7", "", "gpu-node-0", {}), "");
  const auto reqs = api.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/k8s/clusters/c-1/api/v1/namespaces/default/pods/infer-7/binding");
  // No uid given: none sent (metav1.ObjectMeta uid is omitempty).
  EXPECT_EQ(reqs[0].body,
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"infer-7","namespace":"default"},)"
            R"("target":{"apiVersion":"v1","kind":"Node","name":"gpu-node-0"}})");
}

TEST(KubeBinder, AnErrorBodyThatIsNotAStatusIsQuoted) {
  FakeApiServer api;
  api.answer_text("POST", 500, "upstream connect error");  // a proxy's text, not a metav1.Status
  server::KubeBinder binder(local_config(api.port()), fast_options());
  EXPECT_EQ(binder.bind("team-a", "train-0", "u-1", "gpu-node-3", {}),
            "create binding team-a/train-0 to node gpu-node-3: HTTP 500  upstream connect error");
}

TEST(KubeBinder, NoServerIsAConnectionError) {
  // A port bound but not listening: connections to it are refused (ECONNREFUSED).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  server::KubeBinder binder(local_config(ntohs(addr.sin_port)), fast_options());
  EXPECT_EQ(binder.bind("team-a", "train-0", "u-1", "gpu-node-3", kAnnotations),
            "create binding team-a/train-0 to node gpu-node-3: Connection");
  close(fd);
}

TEST(KubeBinder, BindsFromManyThreadsAtOnce) {
  FakeApiServer api;
  server::KubeBinder binder(local_config(api.port()), fast_options());
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      errors[static_cast<size_t>(i)] =
          binder.bind("team-a", "train-" + std::to_string(i), "u-" + std::to_string(i), "gpu-node-3", kAnnotations);
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  const auto reqs = api.requests();
  ASSERT_EQ(reqs.size(), 4u);
  std::map<std::string, int> per_path;
  for (const auto& r : reqs) ++per_path[r.method + " " + r.path];
  for (int i = 0; i < 4; ++i) {
    const std::string pod = "/api/v1/namespaces/team-a/pods/train-" + std::to_string(i);
    EXPECT_EQ(per_path["POST " + pod + "/binding"], 1) << pod;
  }
}

// ---------------------------------------------------------------------------------------------
// KubeClient.

using test::TempDir;

TEST(KubeClient, PathsAndHeadersWithATokenFileReadPerRequest) {
  TempDir dir;
  io::KubeRestConfig c = local_config(8080, "/k8s/clusters/c-1");
  c.token.clear();
  c.token_file = dir.write("token", "first-token\n");
  const server::KubeClient client(c);
  EXPECT_EQ(client.path("/api/v1/pods"), "/k8s/clusters/c-1/api/v1/pods");
  httplib::Headers h = client.headers();
  EXPECT_EQ(h.size(), 2u);
  EXPECT_EQ(httplib::detail::get_header_value(h, "Accept", 0, ""), std::string("application/json"));
  EXPECT_EQ(httplib::detail::get_header_value(h, "Authorization", 0, ""), std::string("Bearer first-token"));
  dir.write("token", "rotated-token\n");
  h = client.headers();
  EXPECT_EQ(httplib::detail::get_header_value(h, "Authorization", 0, ""), std::string("Bearer rotated-token"));

  c.token_file.clear();  // no credentials: no Authorization header
  h = server::KubeClient(c).headers();
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.count("Authorization"), 0u);
}

TEST(KubeClient, TlsMaterialThatDoesNotLoadIsAnInputError) {
  TempDir dir;
  io::KubeRestConfig c = local_config(8443);
  c.server = "https://127.0.0.1:8443";
  c.url = io::parse_server_url(c.server, "test", "server");
  c.certificate_authority_data = "not a certificate";
  testing::expect_input_error([&] { server::KubeClient client(c); }, "certificate-authority-data", 0, 0,
                              "certificate-authority", "no PEM certificate in the CA bundle");
  c.certificate_authority_data.clear();
  c.certificate_authority = dir.write("ca.crt", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  testing::expect_input_error([&] { server::KubeClient client(c); }, c.certificate_authority, 0, 0,
                              "certificate-authority", "no PEM certificate in the CA bundle");
  // The same bad CA over plain http is never read.
  c.server = "http://127.0.0.1:8080";
  c.url = io::parse_server_url(c.server, "test", "server");
  EXPECT_NO_THROW(server::KubeClient client(c));
}

// A CA, client certificate or key from a kubeconfig that does not load is reported at the
// kubeconfig's field (file, line, column), with the file the field names when it is a path.
TEST(KubeClient, TlsMaterialFromAKubeconfigNamesItsField) {
  TempDir dir;
  const std::string head = "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                           "users: [{name: u, user: {token: t}}]\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:8443\n";
  dir.write("bad.crt", "not a certificate\n");
  const std::string kc = dir.write("kc.yaml", head + "    certificate-authority: bad.crt\n");
  const io::KubeRestConfig c = io::read_kubeconfig_file(kc);
  testing::expect_input_error([&] { server::KubeClient client(c); }, kc, 10, 28, "clusters[0].cluster.certificate-authority",
                              (dir.path / "bad.crt").string() + ": no PEM certificate in the CA bundle");
  const std::string missing = dir.write("kc2.yaml", head + "    certificate-authority: none.crt\n");
  testing::expect_input_error([&] { server::KubeClient client(io::read_kubeconfig_file(missing)); }, missing, 10, 28,
                              "clusters[0].cluster.certificate-authority",
                              (dir.path / "none.crt").string() + ": cannot open file: no such file");
  const std::string data = dir.write("kc3.yaml", head + "    certificate-authority-data: Q0E=\n");
  testing::expect_input_error([&] { server::KubeClient client(io::read_kubeconfig_file(data)); }, data, 10, 33,
                              "clusters[0].cluster.certificate-authority-data", "no PEM certificate in the CA bundle");
}

TEST(KubeClient, EscapeAndFailureLine) {
  EXPECT_EQ(server::kube_url_escape("abc-_.~XYZ09"), "abc-_.~XYZ09");
  EXPECT_EQ(server::kube_url_escape("a b/c=d+e"), "a%20b%2Fc%3Dd%2Be");
  EXPECT_EQ(server::kube_http_failure("list pods", 403,
                                      R"({"kind":"Status","reason":"Forbidden","message":"pods is forbidden","code":403})"),
            "list pods: HTTP 403 Forbidden pods is forbidden");
}

}  // namespace
}  // namespace gpufleet
