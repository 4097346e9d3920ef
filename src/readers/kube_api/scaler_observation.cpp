#include "readers/kube_api/scaler_observation.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "readers/formats/json_request.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using nlohmann::json;

// A finite number in [0, max] at `field`.
double number_field(const json& value, const std::string& source, const std::string& field, double max,
                    std::string_view limit_name) {
  if (!value.is_number())
    throw InputError(source, 0, field, fmt::format("expected a number, got {}", value.type_name()));
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0) throw InputError(source, 0, field, fmt::format("{} is not a number >= 0", v));
  if (v > max)
    throw InputError(source, 0, field,
                     fmt::format("{} is more than {} (limit ScalerObservationLimits::{}, docs/input-limits.md)", v, max, limit_name));
  return v;
}

ScalerObservation read_observation(const json& o, const std::string& source, const std::string& path,
                                   const ScalerObservationLimits& limits) {
  const std::string prefix = path.empty() ? "" : path + ".";
  if (!o.is_object()) throw InputError(source, 0, path, fmt::format("expected an object, got {}", o.type_name()));
  ScalerObservation obs;
  bool has_time = false;
  bool has_rate = false;
  for (const auto& [key, value] : o.items()) {
    const std::string field = prefix + key;
    if (key == "time_s") {
      obs.time_s = number_field(value, source, field, limits.max_time_s, "max_time_s");
      has_time = true;
    } else if (key == "request_rate_rps") {
      obs.request_rate_rps = number_field(value, source, field, limits.max_request_rate_rps, "max_request_rate_rps");
      has_rate = true;
    } else if (key == "num_requests_waiting") {
      obs.num_requests_waiting = number_field(value, source, field, limits.max_requests, "max_requests");
    } else if (key == "num_requests_running") {
      obs.num_requests_running = number_field(value, source, field, limits.max_requests, "max_requests");
    } else if (key == "current_replicas") {
      const double v = number_field(value, source, field, static_cast<double>(limits.max_replicas), "max_replicas");
      if (v != std::floor(v)) throw InputError(source, 0, field, fmt::format("{} is not a whole number of replicas", v));
      obs.current_replicas = static_cast<int32_t>(v);
    } else {
      throw InputError(source, 0, field,
                       "unknown field (expected time_s, request_rate_rps, num_requests_waiting, "
                       "num_requests_running, current_replicas)");
    }
  }
  if (!has_time) throw InputError(source, 0, prefix + "time_s", "required field is missing");
  if (!has_rate) throw InputError(source, 0, prefix + "request_rate_rps", "required field is missing");
  return obs;
}

}  // namespace

std::vector<ScalerObservation> parse_scaler_observations(std::string_view body, const std::string& source,
                                                         const ScalerObservationLimits& limits) {
  JsonRequestLimits json_limits;
  json_limits.max_body_bytes = limits.max_body_bytes;
  const json doc = parse_json_request(body, source, json_limits);
  if (!doc.is_object())
    throw InputError(source, 0, "", fmt::format("expected a JSON object, got {}", doc.type_name()));
  std::vector<ScalerObservation> out;
  if (const auto it = doc.find("observations"); it != doc.end()) {
    if (doc.size() != 1)
      throw InputError(source, 0, "", "a body with \"observations\" has no other field");
    if (!it->is_array())
      throw InputError(source, 0, "observations", fmt::format("expected an array, got {}", it->type_name()));
    if (it->empty()) throw InputError(source, 0, "observations", "is empty");
    if (it->size() > limits.max_observations)
      throw InputError(source, 0, "observations",
                       limit_message(limits.max_observations, "observations", "ScalerObservationLimits::max_observations"));
    out.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i)
      out.push_back(read_observation((*it)[i], source, fmt::format("observations[{}]", i), limits));
  } else {
    out.push_back(read_observation(doc, source, "", limits));
  }
  return out;
}

}  // namespace gpufleet::io
