#include "server/scaler_routes.h"

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "readers/kube_api/scaler_observation.h"
#include "server/http_server.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

void reply_error(HttpResponse& res, int status, const std::string& reason) {
  res.status = status;
  std::string line = reason;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  res.set_content(line + "\n", "text/plain");
}

// "<ns>/<name>" of the path's two captures, or "" after answering 400.
std::string path_service(const HttpRequest& req, HttpResponse& res) {
  const std::string key = live::service_key(req.matches[1], req.matches[2]);
  if (key.empty())
    reply_error(res, 400, fmt::format("'{}/{}' is not a Kubernetes namespace and name", req.matches[1].substr(0, 64),
                                      req.matches[2].substr(0, 253)));
  return key;
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json optional_json(const std::optional<int32_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json recommendation_json(const live::Recommendation& r) {
  return {{"service", r.service},
          {"basis", live::basis_name(r.basis)},
          {"active", r.active},
          {"desiredReplicas", r.desired_replicas},
          {"value", r.value},
          {"forecastRequestRate", optional_json(r.forecast_rate_rps)},
          {"rateReplicas", optional_json(r.rate_replicas)},
          {"queueReplicas", optional_json(r.queue_replicas)},
          {"observation",
           {{"time_s", r.observed_at_s},
            {"request_rate_rps", r.request_rate_rps},
            {"num_requests_waiting", r.num_requests_waiting},
            {"num_requests_running", r.num_requests_running},
            {"current_replicas", optional_json(r.current_replicas)},
            {"age_s", r.age_s}}},
          {"observations", r.observations}};
}

}  // namespace

void add_scaler_routes(Routes& routes, live::InferenceScaler& scaler, std::function<double()> clock, BodyLimits limits) {
  if (!clock)
    clock = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };

  routes.post(R"(/v1/services/([^/]+)/([^/]+)/observations)", [&scaler, clock, limits](const HttpRequest& req, HttpResponse& res) {
    const std::optional<std::string> body = read_request_body(req, res, limits);
    if (!body) return;
    const std::string service = path_service(req, res);
    if (service.empty()) return;
    try {
      const std::vector<io::ScalerObservation> batch =
          io::parse_scaler_observations(*body, fmt::format("POST /v1/services/{}/observations", service));
      // An observation from the future would hold the service's clock there: every later real one would
      // be "before the last observation" and the recommendation never stale. A minute of clock skew passes.
      constexpr double kMaxClockSkewSeconds = 60;
      const double now = clock();
      for (const io::ScalerObservation& o : batch)
        if (o.time_s > now + kMaxClockSkewSeconds)
          throw std::invalid_argument(fmt::format("time_s {} is more than {} s ahead of this server's clock ({})", o.time_s,
                                                  kMaxClockSkewSeconds, now));
      const size_t total = scaler.observe(service, batch);
      const nlohmann::json body{{"service", service}, {"accepted", batch.size()}, {"observations", total}};
      res.set_content(body.dump() + "\n", "application/json");
    } catch (const InputError& e) {
      reply_error(res, 400, e.what());
    } catch (const std::invalid_argument& e) {
      reply_error(res, 400, e.what());
    }
  });

  routes.get(R"(/v1/services/([^/]+)/([^/]+)/scale)", [&scaler, clock](const HttpRequest& req, HttpResponse& res) {
    const std::string service = path_service(req, res);
    if (service.empty()) return;
    std::map<std::string, std::string> metadata;
    for (const auto& [k, v] : req.params) {
      if (k == "service") return reply_error(res, 400, "query service: the path names the service");
      if (!metadata.emplace(k, v).second) return reply_error(res, 400, fmt::format("query {}: given twice", k.substr(0, 64)));
    }
    live::ScalerTrigger trigger;
    try {
      trigger = live::parse_scaler_trigger(metadata, service, "");
    } catch (const std::invalid_argument& e) {
      return reply_error(res, 400, e.what());
    }
    const std::optional<live::Recommendation> r = scaler.recommend(trigger, clock());
    if (const std::string why = live::unavailable_reason(trigger, r, scaler.options()); !why.empty())
      return reply_error(res, r ? 503 : 404, why);
    res.set_content(recommendation_json(*r).dump() + "\n", "application/json");
  });
}

}  // namespace gpufleet::server
