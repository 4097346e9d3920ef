#include "replica_autoscaling/hpa.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpufleet::replica_autoscaling {

const char* metric_source_type_name(MetricSourceType t) {
  switch (t) {
    case MetricSourceType::kResource: return "Resource";
    case MetricSourceType::kContainerResource: return "ContainerResource";
    case MetricSourceType::kPods: return "Pods";
    case MetricSourceType::kObject: return "Object";
    case MetricSourceType::kExternal: return "External";
  }
  return "?";
}

const char* metric_target_type_name(MetricTargetType t) {
  switch (t) {
    case MetricTargetType::kUtilization: return "Utilization";
    case MetricTargetType::kAverageValue: return "AverageValue";
    case MetricTargetType::kValue: return "Value";
  }
  return "?";
}

namespace {

// copyHPAScalingRules: the set fields of `from` over the defaults `to`.
ScalingRules copy_rules(const std::optional<ScalingRules>& from, ScalingRules to) {
  if (!from) return to;
  if (from->select_policy) to.select_policy = from->select_policy;
  if (from->stabilization_window_seconds) to.stabilization_window_seconds = from->stabilization_window_seconds;
  if (from->policies) to.policies = from->policies;
  if (from->tolerance) to.tolerance = from->tolerance;
  return to;
}

// Go's int32(x) of a float64 in range: truncation toward zero.
int32_t to_int32(double x) {
  if (x >= static_cast<double>(std::numeric_limits<int32_t>::max())) return std::numeric_limits<int32_t>::max();
  if (x <= static_cast<double>(std::numeric_limits<int32_t>::min())) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(x);
}

}  // namespace

HpaSpec with_api_defaults(HpaSpec spec) {
  if (!spec.min_replicas) spec.min_replicas = 1;
  if (spec.metrics.empty()) {
    // autoscaling.DefaultCPUUtilization = 80
    spec.metrics.push_back({MetricSourceType::kResource, "cpu", MetricTargetType::kUtilization, 80});
  }
  if (spec.behavior) {
    ScalingRules up;
    up.stabilization_window_seconds = 0;
    up.select_policy = SelectPolicy::kMax;
    up.policies = std::vector<ScalingPolicy>{{ScalingPolicyType::kPods, 4, 15}, {ScalingPolicyType::kPercent, 100, 15}};
    ScalingRules down;
    down.select_policy = SelectPolicy::kMax;
    down.policies = std::vector<ScalingPolicy>{{ScalingPolicyType::kPercent, 100, 15}};
    spec.behavior->scale_up = copy_rules(spec.behavior->scale_up, up);
    spec.behavior->scale_down = copy_rules(spec.behavior->scale_down, down);
  }
  return spec;
}

int32_t ceil_replicas(double usage_ratio, int32_t pods) {
  return to_int32(std::ceil(usage_ratio * static_cast<double>(pods)));
}

std::optional<int32_t> plain_metric_replicas(int32_t current, double sum, int32_t reporting_pods,
                                             int32_t missing_pods, double target_per_pod, const Tolerances& tol) {
  if (reporting_pods <= 0 || !(target_per_pod > 0)) return std::nullopt;
  const double usage_ratio = (sum / reporting_pods) / target_per_pod;
  if (missing_pods <= 0) {
    if (tol.within(usage_ratio)) return current;
    return ceil_replicas(usage_ratio, reporting_pods);
  }
  // On a scale-down, missing pods use exactly the target; on a scale-up, nothing.
  const double filled_sum = usage_ratio < 1.0 ? sum + missing_pods * target_per_pod : sum;
  const int32_t pods = reporting_pods + missing_pods;
  const double new_ratio = (filled_sum / pods) / target_per_pod;
  if (tol.within(new_ratio) || (usage_ratio < 1.0 && new_ratio > 1.0) || (usage_ratio > 1.0 && new_ratio < 1.0))
    return current;
  const int32_t replicas = ceil_replicas(new_ratio, pods);
  if ((new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current)) return current;
  return replicas;
}

int32_t usage_ratio_replicas(int32_t current, double usage_ratio, int32_t ready_pods, const Tolerances& tol) {
  if (current != 0) {
    if (tol.within(usage_ratio)) return current;
    return ceil_replicas(usage_ratio, ready_pods);
  }
  return to_int32(std::ceil(usage_ratio));
}

int32_t per_pod_total_replicas(int32_t spec_replicas, int32_t status_replicas, double total, double target_per_pod,
                               const Tolerances& tol, bool keep_status_within_tolerance) {
  if (status_replicas <= 0) return to_int32(std::ceil(total / target_per_pod));
  const double usage_ratio = total / (target_per_pod * status_replicas);
  if (tol.within(usage_ratio)) return keep_status_within_tolerance ? status_replicas : spec_replicas;
  return to_int32(std::ceil(total / target_per_pod));
}

std::optional<int32_t> metric_replicas(const MetricSpec& m, const std::optional<MetricSample>& sample,
                                       const ScaleStatus& scale, const Tolerances& tol, bool keep_status_within_tolerance) {
  if (!sample || !(m.target > 0) || !std::isfinite(sample->sum)) return std::nullopt;
  const int32_t current = scale.spec_replicas;
  const int32_t ready = scale.ready;
  const int32_t missing = std::max(0, ready - sample->pods);
  switch (m.type) {
    case MetricSourceType::kResource:
    case MetricSourceType::kContainerResource:
      if (m.target_type == MetricTargetType::kValue) return std::nullopt;
      return plain_metric_replicas(current, sample->sum, sample->pods, missing, m.target, tol);
    case MetricSourceType::kPods:
      if (m.target_type != MetricTargetType::kAverageValue) return std::nullopt;
      return plain_metric_replicas(current, sample->sum, sample->pods, missing, m.target, tol);
    case MetricSourceType::kObject:
    case MetricSourceType::kExternal:
      if (m.target_type == MetricTargetType::kValue) return usage_ratio_replicas(current, sample->sum / m.target, ready, tol);
      if (m.target_type == MetricTargetType::kAverageValue) return per_pod_total_replicas(current, scale.status_replicas, sample->sum, m.target, tol,
                                                                                   keep_status_within_tolerance);
      return std::nullopt;
  }
  return std::nullopt;
}

int32_t replicas_changed_in_period(const std::vector<ScaleEvent>& events, double period_s, double now) {
  const double cutoff = now - period_s;
  int32_t replicas = 0;
  for (const ScaleEvent& e : events)
    if (e.t > cutoff) replicas += e.replica_change;
  return replicas;
}

int32_t scale_up_limit(int32_t current, const std::vector<ScaleEvent>& up, const std::vector<ScaleEvent>& down,
                       const ScalingRules& rules, double now) {
  const SelectPolicy select = rules.select_policy.value_or(SelectPolicy::kMax);
  if (select == SelectPolicy::kDisabled) return current;
  const bool pick_min = select == SelectPolicy::kMin;
  int32_t result = pick_min ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
  for (const ScalingPolicy& p : rules.policies.value_or(std::vector<ScalingPolicy>{})) {
    const int32_t start = current - replicas_changed_in_period(up, p.period_seconds, now) +
                          replicas_changed_in_period(down, p.period_seconds, now);
    int32_t proposed = 0;
    if (p.type == ScalingPolicyType::kPods) {
      proposed = start + p.value;
    } else {
      // Rounded up so that a small percentage still adds a pod.
      proposed = to_int32(std::ceil(static_cast<double>(start) * (1.0 + static_cast<double>(p.value) / 100.0)));
    }
    result = pick_min ? std::min(result, proposed) : std::max(result, proposed);
  }
  return result;
}

int32_t scale_down_limit(int32_t current, const std::vector<ScaleEvent>& up, const std::vector<ScaleEvent>& down,
                         const ScalingRules& rules, double now) {
  const SelectPolicy select = rules.select_policy.value_or(SelectPolicy::kMax);
  if (select == SelectPolicy::kDisabled) return current;
  const bool pick_max = select == SelectPolicy::kMin;  // the smallest change keeps the most replicas
  int32_t result = pick_max ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  for (const ScalingPolicy& p : rules.policies.value_or(std::vector<ScalingPolicy>{})) {
    const int32_t start = current - replicas_changed_in_period(up, p.period_seconds, now) +
                          replicas_changed_in_period(down, p.period_seconds, now);
    int32_t proposed = 0;
    if (p.type == ScalingPolicyType::kPods) {
      proposed = start - p.value;
    } else {
      proposed = to_int32(static_cast<double>(start) * (1.0 - static_cast<double>(p.value) / 100.0));
    }
    result = pick_max ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

int32_t stabilize_with_behaviors(std::vector<TimedRecommendation>& history, double now, int32_t current,
                                 int32_t desired, double up_window_s, double down_window_s) {
  const double up_cutoff = now - up_window_s;
  const double down_cutoff = now - down_window_s;
  int32_t up = desired;
  int32_t down = desired;
  std::optional<size_t> old;
  for (size_t i = 0; i < history.size(); ++i) {
    const TimedRecommendation& r = history[i];
    if (r.t > up_cutoff) up = std::min(up, r.replicas);
    if (r.t > down_cutoff) down = std::max(down, r.replicas);
    if (r.t < up_cutoff && r.t < down_cutoff) old = i;
  }
  int32_t recommendation = current;
  if (recommendation < up) recommendation = up;
  if (recommendation > down) recommendation = down;
  if (old) {
    history[*old] = {desired, now};
  } else {
    history.push_back({desired, now});
  }
  return recommendation;
}

int32_t stabilize_legacy(std::vector<TimedRecommendation>& history, double now, int32_t desired, double window_s) {
  const double cutoff = now - window_s;
  int32_t max_rec = desired;
  std::optional<size_t> old;
  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].t < cutoff) {
      old = i;
    } else if (history[i].replicas > max_rec) {
      max_rec = history[i].replicas;
    }
  }
  if (old) {
    history[*old] = {desired, now};
  } else {
    history.push_back({desired, now});
  }
  return max_rec;
}

int32_t legacy_scale_up_limit(int32_t current) {
  return to_int32(std::max(2.0 * static_cast<double>(current), 4.0));
}

double next_on_grid(double t, double first, double period) {
  if (t < first - 1e-6) return first;
  const double k = std::floor((t - first + 1e-6) / period) + 1.0;
  return first + k * period;
}

// ---------------------------------------------------------------------------------------------

HpaAutoscaler::HpaAutoscaler(HpaSpec spec, HpaControllerOptions options)
    : spec_(with_api_defaults(std::move(spec))), options_(options) {
  if (spec_.max_replicas < std::max<int32_t>(*spec_.min_replicas, 1))
    throw std::invalid_argument("HorizontalPodAutoscaler " + spec_.name + ": maxReplicas " +
                                std::to_string(spec_.max_replicas) + " is below minReplicas " +
                                std::to_string(*spec_.min_replicas) + " (or 1)");
  if (*spec_.min_replicas < 0) throw std::invalid_argument("HorizontalPodAutoscaler " + spec_.name + ": minReplicas is negative");
  for (const MetricSpec& m : spec_.metrics)
    if (!(m.target > 0))
      throw std::invalid_argument("HorizontalPodAutoscaler " + spec_.name + ": metric " + m.name + " has a target <= 0");
  if (!(options_.sync_period_s > 0)) throw std::invalid_argument("HPA sync period must be positive");
  if (spec_.behavior && !spec_.behavior->scale_down->stabilization_window_seconds)
    spec_.behavior->scale_down->stabilization_window_seconds = static_cast<int32_t>(options_.downscale_stabilization_s);
  up_down_tol_ = {options_.tolerance, options_.tolerance};
  if (spec_.behavior) {
    if (spec_.behavior->scale_down->tolerance) up_down_tol_.scale_down = *spec_.behavior->scale_down->tolerance;
    if (spec_.behavior->scale_up->tolerance) up_down_tol_.scale_up = *spec_.behavior->scale_up->tolerance;
  }
}

std::vector<std::string> HpaAutoscaler::metrics() const {
  std::vector<std::string> names;
  for (const MetricSpec& m : spec_.metrics)
    if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  return names;
}

double HpaAutoscaler::next_evaluation_s(double t) const {
  return next_on_grid(t, options_.first_sync_s, options_.sync_period_s);
}

int32_t HpaAutoscaler::evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) {
  const int32_t current = scale.spec_replicas;
  // recordInitialRecommendation
  if (!recorded_initial_) {
    recommendations_.push_back({current, t});
    recorded_initial_ = true;
  }
  last_recommendation_.reset();
  const int32_t min_replicas = *spec_.min_replicas;
  int32_t desired = 0;
  if (current == 0 && min_replicas != 0) return 0;  // scaling disabled while the target is at 0
  if (current > spec_.max_replicas) {
    desired = spec_.max_replicas;
  } else if (current < min_replicas) {
    desired = min_replicas;
  } else {
    // computeReplicasForMetrics: the largest proposal of the valid metrics.
    int32_t proposal = 0;
    size_t invalid = 0;
    for (const MetricSpec& m : spec_.metrics) {
      std::optional<MetricSample> sample;
      if (auto it = metrics.find(m.name); it != metrics.end()) sample = it->second;
      const std::optional<int32_t> r = metric_replicas(m, sample, scale, up_down_tol_, options_.keep_status_within_tolerance);
      if (!r) {
        ++invalid;
        continue;
      }
      if (proposal == 0 || *r > proposal) proposal = *r;
    }
    // All invalid, or some invalid and the others would scale down: no decision.
    if (invalid >= spec_.metrics.size() || (invalid > 0 && proposal < current)) return current;
    last_recommendation_ = proposal;
    desired = std::max(0, proposal);
    desired = spec_.behavior ? normalize_with_behaviors(t, current, desired) : normalize_legacy(t, current, desired);
  }
  if (desired != current && spec_.behavior) {
    // storeScaleEvent; events older than every policy period no longer count.
    double longest = 0;
    for (const ScalingRules* r : {&*spec_.behavior->scale_up, &*spec_.behavior->scale_down})
      for (const ScalingPolicy& p : r->policies.value_or(std::vector<ScalingPolicy>{}))
        longest = std::max(longest, static_cast<double>(p.period_seconds));
    auto prune = [&](std::vector<ScaleEvent>& ev) {
      ev.erase(std::remove_if(ev.begin(), ev.end(), [&](const ScaleEvent& e) { return e.t < t - longest; }), ev.end());
    };
    prune(scale_up_events_);
    prune(scale_down_events_);
    if (desired > current) {
      scale_up_events_.push_back({desired - current, t});
    } else {
      scale_down_events_.push_back({current - desired, t});
    }
  }
  return desired;
}

int32_t HpaAutoscaler::normalize_with_behaviors(double t, int32_t current, int32_t desired) {
  const ScalingRules& up = *spec_.behavior->scale_up;
  const ScalingRules& down = *spec_.behavior->scale_down;
  const int32_t stabilized = stabilize_with_behaviors(recommendations_, t, current, desired,
                                                      up.stabilization_window_seconds.value_or(0),
                                                      down.stabilization_window_seconds.value_or(0));
  // convertDesiredReplicasWithBehaviorRate
  if (stabilized > current) {
    int32_t limit = scale_up_limit(current, scale_up_events_, scale_down_events_, up, t);
    if (limit < current) limit = current;
    const int32_t max_allowed = std::min(spec_.max_replicas, limit);
    if (stabilized > max_allowed) return max_allowed;
  } else if (stabilized < current) {
    int32_t limit = scale_down_limit(current, scale_up_events_, scale_down_events_, down, t);
    if (limit > current) limit = current;
    const int32_t min_allowed = std::max(*spec_.min_replicas, limit);
    if (stabilized < min_allowed) return min_allowed;
  }
  return stabilized;
}

int32_t HpaAutoscaler::normalize_legacy(double t, int32_t current, int32_t desired) {
  const int32_t stabilized = stabilize_legacy(recommendations_, t, desired, options_.downscale_stabilization_s);
  // convertDesiredReplicasWithRules
  const int32_t max_allowed = std::min(spec_.max_replicas, legacy_scale_up_limit(current));
  if (stabilized < *spec_.min_replicas) return *spec_.min_replicas;
  if (stabilized > max_allowed) return max_allowed;
  return stabilized;
}

}  // namespace gpufleet::replica_autoscaling
