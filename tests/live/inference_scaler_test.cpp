// The live replica recommendation (live/inference_scaler.h), its trigger metadata, and the
// observation body (readers/kube_api/scaler_observation.h) with its fuzz seed corpus
// (fuzz/corpus/scaler_observation_fuzz: valid-* parse, bad-* are InputErrors).
#include "live/inference_scaler.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "support/expect_input_error.h"
#include "readers/kube_api/scaler_observation.h"
#include "readers/formats/yaml_field.h"
#include "readers/formats/yaml_tree.h"

namespace gpufleet {
namespace {

using live::InferenceScaler;
using live::Recommendation;
using live::ScalerTrigger;

io::ScalerObservation obs(double t, double rate, double waiting = 0, double running = 0) {
  io::ScalerObservation o;
  o.time_s = t;
  o.request_rate_rps = rate;
  o.num_requests_waiting = waiting;
  o.num_requests_running = running;
  return o;
}

ScalerTrigger trigger(std::map<std::string, std::string> metadata, const std::string& service = "prod/chat") {
  return live::parse_scaler_trigger(metadata, service, "prod");
}

Recommendation recommend(const InferenceScaler& s, const ScalerTrigger& t, double now) {
  const std::optional<Recommendation> r = s.recommend(t, now);
  if (!r) throw std::runtime_error("no recommendation");
  return *r;
}

// 10 requests/s for 10 minutes, 4 requests/s per replica: ceil(10 / 4) = 3 replicas.
TEST(InferenceScaler, ConstantRate) {
  InferenceScaler s;
  std::vector<io::ScalerObservation> batch;
  for (int i = 0; i <= 10; ++i) batch.push_back(obs(1000 + 60 * i, 10));
  EXPECT_EQ(s.observe("prod/chat", batch), 11u);
  const Recommendation r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}}), 1600);
  EXPECT_EQ(r.basis, live::ScalingBasis::kRequestRate);
  EXPECT_TRUE(r.active);
  EXPECT_DOUBLE_EQ(*r.forecast_rate_rps, 10.0);
  EXPECT_DOUBLE_EQ(r.value, 10.0);
  EXPECT_EQ(*r.rate_replicas, 3);
  EXPECT_EQ(r.desired_replicas, 3);
  EXPECT_EQ(r.observations, 11u);
  EXPECT_FALSE(r.stale);
  // headroom 1.5: ceil(10 x 1.5 / 4) = ceil(3.75) = 4; exactly 2.5 per replica: 10 / 2.5 = 4, not 5.
  EXPECT_EQ(recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"headroom", "1.5"}}), 1600).desired_replicas, 4);
  EXPECT_EQ(recommend(s, trigger({{"targetRequestRatePerReplica", "2.5"}}), 1600).desired_replicas, 4);
}

// A ramp 1, 2, ..., 10 requests/s a minute apart: with less than a day of history the forecast is the
// mean over the last 30 minutes (persistence), 5.5; at 2 per replica ceil(2.75) = 3. Thirty more
// minutes of 11..40: the window (540, 2340] holds exactly those, mean 25.5, ceil(12.75) = 13.
TEST(InferenceScaler, Ramp) {
  InferenceScaler s;
  std::vector<io::ScalerObservation> first;
  for (int i = 0; i < 10; ++i) first.push_back(obs(60 * i, i + 1));
  s.observe("prod/chat", first);
  const ScalerTrigger t = trigger({{"targetRequestRatePerReplica", "2"}});
  Recommendation r = recommend(s, t, 540);
  EXPECT_DOUBLE_EQ(*r.forecast_rate_rps, 5.5);
  EXPECT_EQ(r.desired_replicas, 3);
  std::vector<io::ScalerObservation> second;
  for (int i = 10; i < 40; ++i) second.push_back(obs(60 * i, i + 1));
  s.observe("prod/chat", second);
  r = recommend(s, t, 2340);
  EXPECT_DOUBLE_EQ(*r.forecast_rate_rps, 25.5);
  EXPECT_EQ(r.desired_replicas, 13);
  EXPECT_DOUBLE_EQ(r.request_rate_rps, 40);
}

// No traffic: not active (0 is not > activationThreshold 0), so 0 replicas; with minReplicaCount 2
// KEDA ignores activation and the HPA keeps 2.
TEST(InferenceScaler, ZeroTrafficIsInactive) {
  InferenceScaler s;
  s.observe("prod/chat", {obs(100, 0), obs(160, 0)});
  Recommendation r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}}), 160);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.desired_replicas, 0);
  EXPECT_EQ(*r.rate_replicas, 0);
  r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"minReplicaCount", "2"}}), 160);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.desired_replicas, 2);
}

// Activation is strict: 5 requests/s with activationThreshold 5 is inactive, with 4.9 active.
TEST(InferenceScaler, ActivationThresholdIsStrict) {
  InferenceScaler s;
  s.observe("prod/chat", {obs(100, 5)});
  Recommendation r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"activationThreshold", "5"}}), 100);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.desired_replicas, 0);
  r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"activationThreshold", "4.9"}}), 100);
  EXPECT_TRUE(r.active);
  EXPECT_EQ(r.desired_replicas, 2);  // ceil(5 / 4)
}

TEST(InferenceScaler, Clamping) {
  InferenceScaler s;
  s.observe("prod/big", {obs(100, 1000)});
  s.observe("prod/small", {obs(100, 0.5)});
  // 1000 / 1 = 1000 replicas: KEDA's default maxReplicaCount 100, or the trigger's 20.
  EXPECT_EQ(recommend(s, trigger({{"targetRequestRatePerReplica", "1"}}, "prod/big"), 100).desired_replicas, 100);
  EXPECT_EQ(recommend(s, trigger({{"targetRequestRatePerReplica", "1"}, {"maxReplicaCount", "20"}}, "prod/big"), 100)
                .desired_replicas,
            20);
  // 0.5 / 4 asks for 1; minReplicaCount 3 lifts it.
  const Recommendation r =
      recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"minReplicaCount", "3"}}, "prod/small"), 100);
  EXPECT_EQ(*r.rate_replicas, 1);
  EXPECT_EQ(r.desired_replicas, 3);
}

// Queue depth, as the two prometheus triggers of examples/serving/keda-chat-day.yaml: 12 waiting at 5
// per replica asks ceil(2.4) = 3, 130 running at 40 per replica ceil(3.25) = 4; the larger wins.
TEST(InferenceScaler, QueueDepthFallback) {
  InferenceScaler s;
  s.observe("prod/chat", {obs(100, 0, 12, 130)});
  const ScalerTrigger both = trigger({{"targetRequestsWaitingPerReplica", "5"}, {"targetRequestsRunningPerReplica", "40"}});
  Recommendation r = recommend(s, both, 100);
  EXPECT_EQ(r.basis, live::ScalingBasis::kQueueDepth);
  EXPECT_TRUE(r.active);
  EXPECT_EQ(*r.queue_replicas, 4);
  EXPECT_EQ(r.desired_replicas, 4);
  EXPECT_DOUBLE_EQ(r.value, 130);
  EXPECT_FALSE(r.forecast_rate_rps.has_value());
  // Nothing waiting, 10 running: the waiting queue alone is inactive; with the running term, 1 replica.
  s.observe("prod/chat", {obs(160, 0, 0, 10)});
  r = recommend(s, trigger({{"targetRequestsWaitingPerReplica", "5"}}), 160);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.desired_replicas, 0);
  r = recommend(s, both, 160);
  EXPECT_TRUE(r.active);
  EXPECT_EQ(r.desired_replicas, 1);
  // The queue as the floor of the rate basis: 10 requests/s at 4 asks 3, 30 waiting at 5 asks 6.
  s.observe("prod/floor", {obs(100, 10, 30, 0)});
  r = recommend(s, trigger({{"targetRequestRatePerReplica", "4"}, {"targetRequestsWaitingPerReplica", "5"}}, "prod/floor"), 100);
  EXPECT_EQ(r.basis, live::ScalingBasis::kRequestRate);
  EXPECT_EQ(*r.rate_replicas, 3);
  EXPECT_EQ(*r.queue_replicas, 6);
  EXPECT_EQ(r.desired_replicas, 6);
}

TEST(InferenceScaler, UnknownAndStale) {
  InferenceScaler s;
  const ScalerTrigger t = trigger({{"targetRequestRatePerReplica", "4"}});
  EXPECT_FALSE(s.recommend(t, 0).has_value());
  EXPECT_EQ(live::unavailable_reason(t, s.recommend(t, 0), s.options()),
            "no observations of prod/chat (POST /v1/services/prod/chat/observations)");
  s.observe("prod/chat", {obs(1000, 8)});
  EXPECT_FALSE(recommend(s, t, 1300).stale);  // 300 s old: the limit itself
  const std::optional<Recommendation> r = s.recommend(t, 1301);
  EXPECT_TRUE(r->stale);
  EXPECT_DOUBLE_EQ(r->age_s, 301);
  EXPECT_EQ(live::unavailable_reason(t, r, s.options()), "the last observation of prod/chat is 301 s old (more than 300 s)");
}

TEST(InferenceScaler, TimeMustNotGoBack) {
  InferenceScaler s;
  s.observe("prod/chat", {obs(1000, 8)});
  EXPECT_THROW(s.observe("prod/chat", {obs(999, 8)}), std::invalid_argument);
  EXPECT_THROW(s.observe("prod/chat", {obs(1001, 8), obs(1000, 8)}), std::invalid_argument);
  EXPECT_THROW(s.observe("Prod/chat", {obs(1001, 8)}), std::invalid_argument);
  EXPECT_THROW(s.observe("chat", {obs(1001, 8)}), std::invalid_argument);
  EXPECT_EQ(s.observe("prod/chat", {obs(1000, 9)}), 2u);  // equal time is fine
  EXPECT_EQ(s.services(), std::vector<std::string>{"prod/chat"});
  live::InferenceScalerOptions one;
  one.max_services = 1;
  InferenceScaler small(one);
  small.observe("a/b", {obs(1, 1)});
  EXPECT_THROW(small.observe("a/c", {obs(1, 1)}), std::invalid_argument);
}

TEST(ScalerTrigger, Metadata) {
  const ScalerTrigger d = live::parse_scaler_trigger({{"targetRequestRatePerReplica", "8"}, {"scalerAddress", "x:1"}},
                                                     "prod/chat", "prod");
  EXPECT_EQ(d.service, "prod/chat");
  EXPECT_DOUBLE_EQ(*d.target_request_rate_per_replica, 8);
  EXPECT_DOUBLE_EQ(d.activation_threshold, 0);
  EXPECT_DOUBLE_EQ(d.headroom, 1);
  EXPECT_EQ(d.min_replicas, 0);
  EXPECT_EQ(d.max_replicas, 100);
  EXPECT_EQ(live::parse_scaler_trigger({{"targetRequestRatePerReplica", "8"}, {"service", "llama"}}, "prod/chat", "prod").service,
            "prod/llama");
  EXPECT_EQ(live::parse_scaler_trigger({{"targetRequestRatePerReplica", "8"}, {"service", "ml/llama.v1"}}, "", "prod").service,
            "ml/llama.v1");
  auto message = [](std::map<std::string, std::string> m) {
    try {
      live::parse_scaler_trigger(m, "prod/chat", "prod");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({}), "metadata: needs targetRequestRatePerReplica, or targetRequestsWaitingPerReplica / "
                         "targetRequestsRunningPerReplica");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "abc"}}), "metadata targetRequestRatePerReplica: 'abc' is not a number");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "0"}}), "metadata targetRequestRatePerReplica: 0 is not > 0");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "4"}, {"minReplicaCount", "1.5"}}),
            "metadata minReplicaCount: 1.5 is not a whole number in [0, 1000000]");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "4"}, {"minReplicaCount", "5"}, {"maxReplicaCount", "2"}}),
            "metadata maxReplicaCount: 2 is below 1 or below minReplicaCount 5");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "4"}, {"service", "Bad_Name"}}),
            "metadata service: 'Bad_Name' is not a Kubernetes name or namespace/name");
  EXPECT_EQ(message({{"targetRequestRatePerReplica", "nan"}}), "metadata targetRequestRatePerReplica: 'nan' is not a number");
}

// examples/live/keda-scaledobject.yaml: the external trigger's metadata and the metrics-api URL's
// query are both triggers gpufleet accepts, with the values the comments there state.
TEST(ScalerTrigger, Example) {
  const std::string path = std::string(GPUFLEET_SOURCE_DIR) + "/examples/live/keda-scaledobject.yaml";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  io::detail::Source src;
  src.file = path;
  const std::vector<io::detail::YamlNode> docs = io::detail::parse_yaml_stream(ss.str(), src, "");
  ASSERT_EQ(docs.size(), 2u);
  auto trigger_metadata = [](const io::detail::YamlNode& doc) {
    std::map<std::string, std::string> m;
    for (const io::detail::YamlEntry& e : doc.find("spec")->find("triggers")->items[0].find("metadata")->entries)
      m[e.key.scalar] = e.value.scalar;
    return m;
  };
  const ScalerTrigger external = live::parse_scaler_trigger(trigger_metadata(docs[0]), "prod/chat", "prod");
  EXPECT_EQ(external.service, "prod/chat");
  EXPECT_DOUBLE_EQ(*external.target_request_rate_per_replica, 8);
  EXPECT_DOUBLE_EQ(external.headroom, 1.2);
  EXPECT_DOUBLE_EQ(external.lead_time_s, 240);
  EXPECT_DOUBLE_EQ(external.activation_threshold, 0.5);
  EXPECT_EQ(external.max_replicas, 20);
  EXPECT_EQ(docs[0].find("spec")->find("maxReplicaCount")->scalar, "20");  // repeated in the metadata

  const std::map<std::string, std::string> api = trigger_metadata(docs[1]);
  EXPECT_EQ(api.at("valueLocation"), "desiredReplicas");
  EXPECT_EQ(api.at("targetValue"), "1");
  const std::string& url = api.at("url");
  const std::string prefix = "http://gpufleet.gpufleet-system.svc:8888/v1/services/prod/chat-queue/scale?";
  ASSERT_EQ(url.substr(0, prefix.size()), prefix);
  std::map<std::string, std::string> query;
  std::stringstream q(url.substr(prefix.size()));
  for (std::string kv; std::getline(q, kv, '&');) query[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  const ScalerTrigger queue = live::parse_scaler_trigger(query, "prod/chat-queue", "prod");
  EXPECT_FALSE(queue.target_request_rate_per_replica.has_value());
  EXPECT_DOUBLE_EQ(*queue.target_requests_waiting_per_replica, 5);
  EXPECT_DOUBLE_EQ(*queue.target_requests_running_per_replica, 40);
  EXPECT_EQ(queue.min_replicas, 1);
  EXPECT_EQ(queue.max_replicas, 32);
  EXPECT_EQ(docs[1].find("spec")->find("maxReplicaCount")->scalar, "32");
}

// --- the observation body ---

TEST(ScalerObservationReader, OneAndBatch) {
  std::vector<io::ScalerObservation> v = io::parse_scaler_observations(
      R"({"time_s": 1764650000, "request_rate_rps": 12.5, "num_requests_waiting": 3, "num_requests_running": 40, "current_replicas": 2})",
      "body");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_DOUBLE_EQ(v[0].time_s, 1764650000);
  EXPECT_DOUBLE_EQ(v[0].request_rate_rps, 12.5);
  EXPECT_DOUBLE_EQ(v[0].num_requests_waiting, 3);
  EXPECT_DOUBLE_EQ(v[0].num_requests_running, 40);
  EXPECT_EQ(v[0].current_replicas, 2);
  v = io::parse_scaler_observations(R"({"observations": [{"time_s": 1, "request_rate_rps": 0}, {"time_s": 2, "request_rate_rps": 3}]})",
                                    "body");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_DOUBLE_EQ(v[1].request_rate_rps, 3);
  EXPECT_FALSE(v[1].current_replicas.has_value());
  EXPECT_DOUBLE_EQ(v[1].num_requests_waiting, 0);
}

TEST(ScalerObservationReader, Errors) {
  using testing::expect_input_error;
  auto parse = [](std::string body) { return [body] { io::parse_scaler_observations(body, "body"); }; };
  // The offending byte: the '}' that ends the literal "tru", column 25 of line 2 (readers/formats/json_request.h).
  expect_input_error(parse("{\"time_s\": 1,\n \"request_rate_rps\": tru}"), "body", 2, 25, "", "invalid literal");
  expect_input_error(parse(R"({"time_s": 1, "request_rate_rps": "12"})"), "body", 0, 0, "request_rate_rps",
                     "expected a number, got string");
  expect_input_error(parse(R"({"time_s": 1, "request_rate_rps": -1})"), "body", 0, 0, "request_rate_rps", "-1 is not a number >= 0");
  expect_input_error(parse(R"({"time_s": 1})"), "body", 0, 0, "request_rate_rps", "required field is missing");
  expect_input_error(parse(R"({"time_s": 1, "request_rate": 1})"), "body", 0, 0, "request_rate", "unknown field");
  expect_input_error(parse(R"({"time_s": 1, "request_rate_rps": 1, "current_replicas": 2.5})"), "body", 0, 0,
                     "current_replicas", "2.5 is not a whole number of replicas");
  expect_input_error(parse(R"({"time_s": 1e11, "request_rate_rps": 1})"), "body", 0, 0, "time_s",
                     "limit ScalerObservationLimits::max_time_s");
  expect_input_error(parse(R"({"observations": [{"time_s": 1, "request_rate_rps": 1}, {"time_s": 2}]})"), "body", 0, 0,
                     "observations[1].request_rate_rps", "required field is missing");
  expect_input_error(parse(R"({"observations": []})"), "body", 0, 0, "observations", "is empty");
  expect_input_error(parse("[1]"), "body", 0, 0, "", "expected a JSON object, got array");
  io::ScalerObservationLimits small;
  small.max_observations = 1;
  expect_input_error(
      [&] { io::parse_scaler_observations(R"({"observations": [{"time_s": 1, "request_rate_rps": 1}, {"time_s": 2, "request_rate_rps": 1}]})", "body", small); },
      "body", 0, 0, "observations", "more than 1 observations (limit ScalerObservationLimits::max_observations");
}

TEST(ScalerObservationReader, FuzzSeedCorpus) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "scaler_observation_fuzz";
  int valid = 0;
  int bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string name = e.path().filename().string();
    if (name.rfind("valid-", 0) == 0) {
      EXPECT_NO_THROW(io::parse_scaler_observations(ss.str(), name)) << name;
      ++valid;
    } else {
      EXPECT_THROW(io::parse_scaler_observations(ss.str(), name), InputError) << name;
      ++bad;
    }
  }
  EXPECT_EQ(valid, 3);
  EXPECT_EQ(bad, 11);
}

}  // namespace
}  // namespace gpufleet
