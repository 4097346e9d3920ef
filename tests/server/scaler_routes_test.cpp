// The metrics-api routes (server/scaler_routes.h) through httplib::Client: observations in, the
// JSON a KEDA metrics-api trigger reads out; bad bodies get 400 with a one-line reason and the server
// keeps serving.
#include "server/scaler_routes.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "live/cluster_cache.h"

namespace gpufleet {
namespace {

class ScalerRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    server::ServerHooks hooks;
    hooks.add_routes = [this](server::Routes& routes) { server::add_scaler_routes(routes, scaler_, [this] { return now_.load(); }); };
    server_ = std::make_unique<server::HttpServer>(o, cache_, nullptr, std::move(hooks));
    port_ = server_->bind();
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  httplib::Result post(const std::string& path, const std::string& body) {
    httplib::Client c("127.0.0.1", port_);
    return c.Post(path.c_str(), body, "application/json");
  }
  httplib::Result get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    return c.Get(path.c_str());
  }

  std::atomic<double> now_{1120};
  live::InferenceScaler scaler_;
  live::ClusterCache cache_{live::CacheOptions{}};
  std::unique_ptr<server::HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ScalerRoutesTest, ObservationsThenScale) {
  auto r = post("/v1/services/prod/chat/observations",
                R"({"observations": [{"time_s": 1000, "request_rate_rps": 9, "current_replicas": 2},)"
                R"( {"time_s": 1060, "request_rate_rps": 11, "num_requests_waiting": 4, "num_requests_running": 30}]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body), nlohmann::json::parse(R"({"service": "prod/chat", "accepted": 2, "observations": 2})"));
  r = post("/v1/services/prod/chat/observations", R"({"time_s": 1120, "request_rate_rps": 13})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  // Mean of 9, 11, 13 = 11 requests/s; at 3 per replica ceil(3.67) = 4.
  r = get("/v1/services/prod/chat/scale?targetRequestRatePerReplica=3&maxReplicaCount=20");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const nlohmann::json j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["service"], "prod/chat");
  EXPECT_EQ(j["basis"], "request_rate");
  EXPECT_EQ(j["active"], true);
  EXPECT_EQ(j["desiredReplicas"], 4);
  EXPECT_DOUBLE_EQ(j["value"].get<double>(), 11.0);
  EXPECT_DOUBLE_EQ(j["forecastRequestRate"].get<double>(), 11.0);
  EXPECT_EQ(j["rateReplicas"], 4);
  EXPECT_TRUE(j["queueReplicas"].is_null());
  EXPECT_EQ(j["observation"]["time_s"], 1120.0);
  EXPECT_EQ(j["observation"]["request_rate_rps"], 13.0);
  EXPECT_TRUE(j["observation"]["current_replicas"].is_null());
  EXPECT_EQ(j["observation"]["age_s"], 0.0);
  EXPECT_EQ(j["observations"], 3);

  // The queue basis from the last observation (0 waiting, 0 running): inactive.
  r = get("/v1/services/prod/chat/scale?targetRequestsWaitingPerReplica=5");
  ASSERT_TRUE(r);
  EXPECT_EQ(nlohmann::json::parse(r->body)["desiredReplicas"], 0);
}

TEST_F(ScalerRoutesTest, BadRequestsGet400AndTheServerKeepsServing) {
  struct Case {
    std::string path;
    std::string body;
    std::string reason;
  };
  const std::vector<Case> cases = {
      // Truncated: 38 bytes, the end of input is column 39.
      {"/v1/services/prod/chat/observations", R"({"time_s": 1000, "request_rate_rps": 1)",
       "POST /v1/services/prod/chat/observations:1:39: JSON syntax error: syntax error while parsing object - "
       "unexpected end of input"},
      {"/v1/services/prod/chat/observations", R"({"time_s": 1000, "request_rate_rps": "fast"})",
       "POST /v1/services/prod/chat/observations: field 'request_rate_rps': expected a number, got string\n"},
      {"/v1/services/prod/chat/observations", R"({"time_s": 1000})",
       "POST /v1/services/prod/chat/observations: field 'request_rate_rps': required field is missing\n"},
      {"/v1/services/prod/chat/observations", "", "POST /v1/services/prod/chat/observations:1:1: JSON syntax error: "},
      {"/v1/services/Prod/chat/observations", R"({"time_s": 1000, "request_rate_rps": 1})",
       "'Prod/chat' is not a Kubernetes namespace and name\n"},
  };
  for (const Case& c : cases) {
    auto r = post(c.path, c.body);
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, 400) << c.body;
    EXPECT_EQ(r->body.substr(0, c.reason.size()), c.reason) << r->body;
    EXPECT_EQ(std::count(r->body.begin(), r->body.end(), '\n'), 1) << r->body;
  }
  // Time going backwards.
  ASSERT_EQ(post("/v1/services/prod/chat/observations", R"({"time_s": 1000, "request_rate_rps": 8})")->status, 200);
  auto r = post("/v1/services/prod/chat/observations", R"({"time_s": 999, "request_rate_rps": 8})");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, "time_s 999 is before the service's last observation at 1000\n");
  // Bad queries, unknown and stale services.
  r = get("/v1/services/prod/chat/scale");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body,
            "metadata: needs targetRequestRatePerReplica, or targetRequestsWaitingPerReplica / targetRequestsRunningPerReplica\n");
  r = get("/v1/services/prod/chat/scale?targetRequestRatePerReplica=4&service=x");
  EXPECT_EQ(r->status, 400);
  r = get("/v1/services/prod/other/scale?targetRequestRatePerReplica=4");
  EXPECT_EQ(r->status, 404);
  now_ = 1400;  // 400 s after the last observation
  r = get("/v1/services/prod/chat/scale?targetRequestRatePerReplica=4");
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, "the last observation of prod/chat is 400 s old (more than 300 s)\n");
  // Still serving: a good observation and a recommendation (8 requests/s at 4 per replica = 2).
  now_ = 1060;
  ASSERT_EQ(post("/v1/services/prod/chat/observations", R"({"time_s": 1060, "request_rate_rps": 8})")->status, 200);
  r = get("/v1/services/prod/chat/scale?targetRequestRatePerReplica=4");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body)["desiredReplicas"], 2);
}

}  // namespace
}  // namespace gpufleet
