#include "live/inference_scaler.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::live {
namespace {

bool dns_chars(std::string_view s, bool allow_dot, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || (allow_dot && c == '.'); });
}

// The value of `key`, cut for the message (metadata comes from the network).
std::string echo(std::string_view v) {
  return v.size() <= 64 ? std::string(v) : fmt::format("{}...", v.substr(0, 64));
}

std::optional<double> number(const std::map<std::string, std::string>& m, const std::string& key) {
  const auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  const std::string& s = it->second;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("metadata {}: '{}' is not a number", key, echo(s)));
  return v;
}

std::optional<double> positive(const std::map<std::string, std::string>& m, const std::string& key) {
  const std::optional<double> v = number(m, key);
  if (v && !(*v > 0)) throw std::invalid_argument(fmt::format("metadata {}: {} is not > 0", key, *v));
  return v;
}

std::optional<int32_t> replicas(const std::map<std::string, std::string>& m, const std::string& key) {
  const std::optional<double> v = number(m, key);
  if (!v) return std::nullopt;
  if (*v < 0 || *v > 1'000'000 || *v != std::floor(*v))
    throw std::invalid_argument(fmt::format("metadata {}: {} is not a whole number in [0, 1000000]", key, *v));
  return static_cast<int32_t>(*v);
}

int32_t ceil_ratio(double value, double target) {
  const double r = std::ceil(std::max(0.0, value) / target - 1e-9);
  return static_cast<int32_t>(std::min(r, 1e9));
}

}  // namespace

std::string service_key(std::string_view namespace_name, std::string_view name) {
  if (!dns_chars(namespace_name, false, 63) || !dns_chars(name, true, 253)) return "";
  return fmt::format("{}/{}", namespace_name, name);
}

const char* basis_name(ScalingBasis basis) {
  return basis == ScalingBasis::kRequestRate ? "request_rate" : "queue_depth";
}

ScalerTrigger parse_scaler_trigger(const std::map<std::string, std::string>& metadata,
                                   std::string_view default_service, std::string_view default_namespace) {
  ScalerTrigger t;
  if (const auto it = metadata.find("service"); it != metadata.end()) {
    const std::string& s = it->second;
    const size_t slash = s.find('/');
    t.service = slash == std::string::npos ? service_key(default_namespace, s)
                                           : service_key(std::string_view(s).substr(0, slash), std::string_view(s).substr(slash + 1));
    if (t.service.empty())
      throw std::invalid_argument(fmt::format("metadata service: '{}' is not a Kubernetes name or namespace/name", echo(s)));
  } else {
    t.service = std::string(default_service);
    if (t.service.empty()) throw std::invalid_argument("metadata service: absent and the ScaledObject's namespace/name is invalid");
  }
  t.target_request_rate_per_replica = positive(metadata, "targetRequestRatePerReplica");
  t.target_requests_waiting_per_replica = positive(metadata, "targetRequestsWaitingPerReplica");
  t.target_requests_running_per_replica = positive(metadata, "targetRequestsRunningPerReplica");
  if (!t.target_request_rate_per_replica && !t.target_requests_waiting_per_replica && !t.target_requests_running_per_replica)
    throw std::invalid_argument(
        "metadata: needs targetRequestRatePerReplica, or targetRequestsWaitingPerReplica / targetRequestsRunningPerReplica");
  if (const auto v = number(metadata, "activationThreshold")) t.activation_threshold = *v;
  if (const auto v = positive(metadata, "headroom")) t.headroom = *v;
  if (const auto v = number(metadata, "leadTimeSeconds")) {
    if (*v < 0 || *v > 86400) throw std::invalid_argument(fmt::format("metadata leadTimeSeconds: {} is not in [0, 86400]", *v));
    t.lead_time_s = *v;
  }
  if (const auto v = replicas(metadata, "minReplicaCount")) t.min_replicas = *v;
  if (const auto v = replicas(metadata, "maxReplicaCount")) t.max_replicas = *v;
  if (t.max_replicas < 1 || t.max_replicas < t.min_replicas)
    throw std::invalid_argument(fmt::format("metadata maxReplicaCount: {} is below 1 or below minReplicaCount {}",
                                            t.max_replicas, t.min_replicas));
  return t;
}

InferenceScaler::InferenceScaler(InferenceScalerOptions options) : options_(options) {
  replica_autoscaling::RateForecaster check(options_.forecast);  // throws std::invalid_argument on bad options
  if (!(options_.max_observation_age_s > 0)) throw std::invalid_argument("max_observation_age_s must be > 0");
}

size_t InferenceScaler::observe(const std::string& service, const std::vector<io::ScalerObservation>& batch) {
  const size_t slash = service.find('/');
  if (slash == std::string::npos ||
      service_key(std::string_view(service).substr(0, slash), std::string_view(service).substr(slash + 1)) != service)
    throw std::invalid_argument(fmt::format("'{}' is not namespace/name", echo(service)));
  for (size_t i = 1; i < batch.size(); ++i)
    if (batch[i].time_s < batch[i - 1].time_s)
      throw std::invalid_argument(fmt::format("observation {}: time_s {} is before the previous one's {}", i,
                                              batch[i].time_s, batch[i - 1].time_s));
  std::lock_guard lock(mutex_);
  if (batch.empty()) {
    const auto found = services_.find(service);
    return found == services_.end() ? 0 : found->second.observations;
  }
  auto it = services_.find(service);
  if (it == services_.end()) {
    if (services_.size() >= options_.max_services)
      throw std::invalid_argument(fmt::format("more than {} services (InferenceScalerOptions::max_services)", options_.max_services));
  } else if (batch.front().time_s < it->second.last.time_s) {
    throw std::invalid_argument(fmt::format("time_s {} is before the service's last observation at {}",
                                            batch.front().time_s, it->second.last.time_s));
  }
  if (it == services_.end()) it = services_.emplace(service, ServiceState(options_.forecast)).first;
  ServiceState& s = it->second;
  for (const io::ScalerObservation& o : batch) {
    s.forecaster.observe(o.time_s, o.request_rate_rps);
    s.last = o;
    ++s.observations;
  }
  return s.observations;
}

std::optional<Recommendation> InferenceScaler::recommend(const ScalerTrigger& trigger, double now_s) const {
  std::lock_guard lock(mutex_);
  const auto it = services_.find(trigger.service);
  if (it == services_.end()) return std::nullopt;
  const ServiceState& s = it->second;
  Recommendation r;
  r.service = trigger.service;
  r.observed_at_s = s.last.time_s;
  r.request_rate_rps = s.last.request_rate_rps;
  r.num_requests_waiting = s.last.num_requests_waiting;
  r.num_requests_running = s.last.num_requests_running;
  r.current_replicas = s.last.current_replicas;
  r.age_s = std::max(0.0, now_s - s.last.time_s);
  r.stale = r.age_s > options_.max_observation_age_s;
  r.observations = s.observations;

  // The queue term: the larger of the HPA's two AverageValue answers.
  const bool queue_targets = trigger.target_requests_waiting_per_replica || trigger.target_requests_running_per_replica;
  bool queue_active = false;
  if (queue_targets) {
    int32_t q = 0;
    if (trigger.target_requests_waiting_per_replica) {
      q = std::max(q, ceil_ratio(r.num_requests_waiting, *trigger.target_requests_waiting_per_replica));
      queue_active = queue_active || r.num_requests_waiting > trigger.activation_threshold;
    }
    if (trigger.target_requests_running_per_replica) {
      q = std::max(q, ceil_ratio(r.num_requests_running, *trigger.target_requests_running_per_replica));
      queue_active = queue_active || r.num_requests_running > trigger.activation_threshold;
    }
    r.queue_replicas = q;
  }
  int32_t want = 0;
  if (trigger.target_request_rate_per_replica) {
    r.basis = ScalingBasis::kRequestRate;
    replica_autoscaling::PredictiveSpec spec;
    spec.capacity_rps_per_replica = *trigger.target_request_rate_per_replica;
    spec.headroom = trigger.headroom;
    spec.lead_time_s = trigger.lead_time_s;
    spec.min_replicas = 0;
    spec.max_replicas = std::numeric_limits<int32_t>::max();
    r.forecast_rate_rps = s.forecaster.forecast(now_s, trigger.lead_time_s).value_or(0.0);
    r.value = *r.forecast_rate_rps;
    r.rate_replicas = replica_autoscaling::replicas_for_rate(*r.forecast_rate_rps, spec);
    r.active = r.value > trigger.activation_threshold || queue_active;
    want = std::max(*r.rate_replicas, r.queue_replicas.value_or(0));
  } else {
    r.basis = ScalingBasis::kQueueDepth;
    r.value = std::max(trigger.target_requests_waiting_per_replica ? r.num_requests_waiting : 0.0,
                       trigger.target_requests_running_per_replica ? r.num_requests_running : 0.0);
    r.active = queue_active;
    want = *r.queue_replicas;
  }
  // KEDA ignores activation when minReplicaCount >= 1: the HPA alone decides within [min, max].
  r.desired_replicas = r.active || trigger.min_replicas >= 1
                           ? std::clamp(std::max(want, 1), std::max(trigger.min_replicas, 1), trigger.max_replicas)
                           : 0;
  return r;
}

std::string unavailable_reason(const ScalerTrigger& trigger, const std::optional<Recommendation>& r,
                               const InferenceScalerOptions& options) {
  if (!r) return fmt::format("no observations of {} (POST /v1/services/{}/observations)", trigger.service, trigger.service);
  if (r->stale)
    return fmt::format("the last observation of {} is {} s old (more than {} s)", trigger.service, r->age_s,
                       options.max_observation_age_s);
  return "";
}

std::vector<std::string> InferenceScaler::services() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  out.reserve(services_.size());
  for (const auto& [k, v] : services_) out.push_back(k);
  return out;
}

}  // namespace gpufleet::live
