#include "replica_autoscaling/keda.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpufleet::replica_autoscaling {

namespace {
constexpr double kGridEps = 1e-6;

bool on_grid(double t, double first, double period) {
  if (t < first - kGridEps) return false;
  const double k = std::round((t - first) / period);
  return std::abs(first + k * period - t) <= kGridEps;
}
}  // namespace

std::optional<double> trigger_value(const PrometheusTrigger& trigger, const MetricSnapshot& metrics) {
  const auto it = metrics.find(trigger.metric);
  if (it == metrics.end()) return std::nullopt;
  const MetricSample& s = it->second;
  if (trigger.aggregation == QueryAggregation::kSum) return s.sum;
  if (s.pods <= 0) return std::nullopt;  // avg() over no series: an empty result
  return s.sum / s.pods;
}

bool trigger_active(const PrometheusTrigger& trigger, std::optional<double> value) {
  if (!value) {
    if (!trigger.ignore_null_values) return false;  // a scaler error: not active
    value = 0.0;
  }
  return *value > trigger.activation_threshold;
}

std::string keda_external_metric_name(size_t trigger_index) {
  std::string name = "s";
  name += std::to_string(trigger_index);
  name += "-prometheus";
  return name;
}

HpaSpec keda_hpa_spec(const ScaledObjectSpec& so) {
  HpaSpec h;
  h.name = so.hpa_name.empty() ? "keda-hpa-" + so.name : so.hpa_name;
  h.namespace_name = so.namespace_name;
  h.scale_target_kind = so.scale_target_kind;
  h.scale_target_name = so.scale_target_name;
  h.min_replicas = so.min_replica_count > 0 ? so.min_replica_count : 1;
  h.max_replicas = so.max_replica_count;
  for (size_t i = 0; i < so.triggers.size(); ++i) {
    const PrometheusTrigger& t = so.triggers[i];
    h.metrics.push_back({MetricSourceType::kExternal, keda_external_metric_name(i),
                         t.metric_type == KedaMetricType::kValue ? MetricTargetType::kValue : MetricTargetType::kAverageValue,
                         t.threshold});
  }
  h.behavior = so.hpa_behavior;
  return h;
}

KedaAutoscaler::KedaAutoscaler(ScaledObjectSpec spec, HpaControllerOptions hpa_options)
    : spec_(std::move(spec)), hpa_options_(hpa_options) {
  if (spec_.triggers.empty()) throw std::invalid_argument("ScaledObject " + spec_.name + " has no triggers");
  for (const PrometheusTrigger& t : spec_.triggers)
    if (!(t.threshold > 0)) throw std::invalid_argument("ScaledObject " + spec_.name + ": a trigger's threshold must be positive");
  if (spec_.polling_interval_s <= 0) throw std::invalid_argument("ScaledObject " + spec_.name + ": pollingInterval must be positive");
  if (spec_.max_replica_count < std::max(spec_.min_replica_count, 1))
    throw std::invalid_argument("ScaledObject " + spec_.name + ": maxReplicaCount is below minReplicaCount (or 1)");
  hpa_ = std::make_unique<HpaAutoscaler>(keda_hpa_spec(spec_), hpa_options_);
}

std::vector<std::string> KedaAutoscaler::metrics() const {
  std::vector<std::string> names;
  for (const PrometheusTrigger& t : spec_.triggers)
    if (std::find(names.begin(), names.end(), t.metric) == names.end()) names.push_back(t.metric);
  return names;
}

double KedaAutoscaler::first_evaluation_s() const { return std::min(0.0, hpa_options_.first_sync_s); }

double KedaAutoscaler::next_evaluation_s(double t) const {
  return std::min(next_on_grid(t, 0.0, spec_.polling_interval_s),
                  next_on_grid(t, hpa_options_.first_sync_s, hpa_options_.sync_period_s));
}

bool KedaAutoscaler::is_poll(double t) const { return on_grid(t, 0.0, spec_.polling_interval_s); }
bool KedaAutoscaler::is_sync(double t) const {
  return on_grid(t, hpa_options_.first_sync_s, hpa_options_.sync_period_s);
}

std::optional<int32_t> KedaAutoscaler::poll(double t, int32_t current, const MetricSnapshot& metrics) {
  bool is_active = false;
  for (const PrometheusTrigger& tr : spec_.triggers)
    if (trigger_active(tr, trigger_value(tr, metrics))) is_active = true;
  active_ = is_active;
  const int32_t min_replicas = spec_.min_replica_count;
  const std::optional<int32_t>& idle = spec_.idle_replica_count;
  if (is_active) {
    if ((idle && current < min_replicas) || current == 0) {
      // scaleFromZeroOrIdle
      last_active_s_ = t;
      return min_replicas > 0 ? min_replicas : 1;
    }
    last_active_s_ = t;
    return std::nullopt;
  }
  if ((idle && current > *idle) || (current > 0 && min_replicas == 0)) {
    // scaleToZeroOrIdle
    const bool cooled = last_active_s_ ? *last_active_s_ + spec_.cooldown_period_s < t
                                       : 0.0 + spec_.initial_cooldown_period_s < t;
    if (!cooled) return std::nullopt;
    const int32_t to = idle ? *idle : min_replicas;  // getIdleOrMinimumReplicaCount
    return to != current ? std::optional<int32_t>(to) : std::nullopt;
  }
  if (!idle && current < min_replicas) return min_replicas;
  return std::nullopt;
}

int32_t KedaAutoscaler::evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) {
  const int32_t current = scale.spec_replicas;
  if (is_poll(t)) {
    if (const std::optional<int32_t> to = poll(t, current, metrics)) return *to;
  }
  if (!is_sync(t)) return current;
  // The KEDA metrics server answers the HPA's External metric with the trigger's value.
  MetricSnapshot hpa_metrics;
  for (size_t i = 0; i < spec_.triggers.size(); ++i) {
    const PrometheusTrigger& tr = spec_.triggers[i];
    std::optional<double> v = trigger_value(tr, metrics);
    if (!v && tr.ignore_null_values) v = 0.0;
    if (v) hpa_metrics[keda_external_metric_name(i)] = MetricSample{*v, current};
  }
  return hpa_->evaluate(t, scale, hpa_metrics);
}

}  // namespace gpufleet::replica_autoscaling
