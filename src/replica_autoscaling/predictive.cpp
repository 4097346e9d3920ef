#include "replica_autoscaling/predictive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "replica_autoscaling/hpa.h"

namespace gpufleet::replica_autoscaling {

RateForecaster::RateForecaster(ForecastOptions options) : options_(options) {
  if (!(options_.bucket_s > 0) || !(options_.level_window_s > 0) || !(options_.weekly_weight >= 0) ||
      options_.weekly_weight > 1 || !(options_.level_gain >= 0) || options_.level_gain > 1)
    throw std::invalid_argument("forecast options out of range (bucket_s > 0, level_window_s > 0, weights in [0, 1])");
}

void RateForecaster::observe(double t, double rate_rps) {
  if (!std::isfinite(rate_rps) || rate_rps < 0 || !std::isfinite(t)) return;
  if (!first_) first_ = t;
  last_t_ = std::max(last_t_, t);
  const auto b = static_cast<int64_t>(std::floor(t / options_.bucket_s));
  auto& [sum, count] = buckets_[b];
  sum += rate_rps;
  ++count;
  recent_.emplace_back(t, rate_rps);
  const double level_cutoff = last_t_ - options_.level_window_s;
  recent_.erase(std::remove_if(recent_.begin(), recent_.end(), [&](const auto& r) { return r.first <= level_cutoff; }),
                recent_.end());
  const double keep_from = last_t_ - (kSecondsPerWeek + kSecondsPerDay + options_.level_window_s + 2 * options_.bucket_s);
  const auto oldest = static_cast<int64_t>(std::floor(keep_from / options_.bucket_s));
  buckets_.erase(buckets_.begin(), buckets_.lower_bound(oldest));
}

std::optional<double> RateForecaster::observed(double x) const {
  const double bs = options_.bucket_s;
  const auto b = static_cast<int64_t>(std::floor(x / bs));
  const double centre = (static_cast<double>(b) + 0.5) * bs;
  const int64_t lo = x >= centre ? b : b - 1;
  auto mean = [&](int64_t i) -> std::optional<double> {
    const auto it = buckets_.find(i);
    if (it == buckets_.end() || it->second.second == 0) return std::nullopt;
    return it->second.first / static_cast<double>(it->second.second);
  };
  const std::optional<double> a = mean(lo);
  const std::optional<double> c = mean(lo + 1);
  if (a && c) {
    const double frac = (x - (static_cast<double>(lo) + 0.5) * bs) / bs;
    return *a + (*c - *a) * frac;
  }
  if (a) return a;
  return c;
}

std::optional<double> RateForecaster::seasonal(double x, double now) const {
  const double history = history_s(now);
  if (history < kSecondsPerDay) return std::nullopt;
  const std::optional<double> day = observed(x - kSecondsPerDay);
  const std::optional<double> week = history >= kSecondsPerWeek ? observed(x - kSecondsPerWeek) : std::nullopt;
  if (day && week) return options_.weekly_weight * *week + (1.0 - options_.weekly_weight) * *day;
  if (day) return day;
  return week;
}

std::optional<double> RateForecaster::forecast(double now, double horizon_s) const {
  if (!first_ || buckets_.empty()) return std::nullopt;
  double level = 0;
  int64_t n = 0;
  double seasonal_level = 0;
  int64_t ns = 0;
  for (const auto& [ti, ri] : recent_) {
    if (ti > now || ti <= now - options_.level_window_s) continue;
    level += ri;
    ++n;
    if (const std::optional<double> s = seasonal(ti, now)) {
      seasonal_level += *s;
      ++ns;
    }
  }
  if (n == 0) {
    // No recent observation: the last bucket's mean.
    const auto& [sum, count] = buckets_.rbegin()->second;
    level = sum / static_cast<double>(count);
  } else {
    level /= static_cast<double>(n);
  }
  const std::optional<double> s = seasonal(now + horizon_s, now);
  if (!s) return level;
  const double correction = ns > 0 ? options_.level_gain * (level - seasonal_level / static_cast<double>(ns)) : 0.0;
  return std::max(0.0, *s + correction);
}

int32_t replicas_for_rate(double rate_rps, const PredictiveSpec& spec) {
  const double want = std::ceil(std::max(0.0, rate_rps) * spec.headroom / spec.capacity_rps_per_replica - 1e-9);
  const double clamped = std::clamp(want, static_cast<double>(spec.min_replicas), static_cast<double>(spec.max_replicas));
  return static_cast<int32_t>(clamped);
}

PredictiveAutoscaler::PredictiveAutoscaler(PredictiveSpec spec, std::unique_ptr<ReplicaAutoscaler> reactive)
    : spec_(std::move(spec)), reactive_(std::move(reactive)), forecaster_(spec_.forecast) {
  if (spec_.rate_metric.empty()) throw std::invalid_argument("predictive autoscaler: rate_metric is empty");
  if (!(spec_.capacity_rps_per_replica > 0)) throw std::invalid_argument("predictive autoscaler: capacity must be positive");
  if (!(spec_.headroom > 0)) throw std::invalid_argument("predictive autoscaler: headroom must be positive");
  if (!(spec_.lead_time_s >= 0)) throw std::invalid_argument("predictive autoscaler: lead time must be >= 0");
  if (spec_.min_replicas < 0 || spec_.max_replicas < spec_.min_replicas)
    throw std::invalid_argument("predictive autoscaler: need 0 <= min_replicas <= max_replicas");
  if (!(spec_.evaluation_period_s > 0)) throw std::invalid_argument("predictive autoscaler: evaluation period must be positive");
}

std::vector<std::string> PredictiveAutoscaler::metrics() const {
  std::vector<std::string> names{spec_.rate_metric};
  if (reactive_)
    for (std::string& m : reactive_->metrics())
      if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(std::move(m));
  return names;
}

double PredictiveAutoscaler::first_evaluation_s() const { return reactive_ ? reactive_->first_evaluation_s() : 0.0; }

double PredictiveAutoscaler::next_evaluation_s(double t) const {
  return reactive_ ? reactive_->next_evaluation_s(t) : next_on_grid(t, 0.0, spec_.evaluation_period_s);
}

int32_t PredictiveAutoscaler::evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) {
  if (const auto it = metrics.find(spec_.rate_metric); it != metrics.end()) forecaster_.observe(t, it->second.sum);
  last_predictive_.reset();
  std::optional<int32_t> want;
  if (const std::optional<double> f = forecaster_.forecast(t, spec_.lead_time_s)) {
    last_predictive_ = replicas_for_rate(*f, spec_);
    want = last_predictive_;
  }
  if (reactive_) {
    const int32_t r = reactive_->evaluate(t, scale, metrics);
    want = want ? std::max(*want, r) : r;
  }
  return want.value_or(scale.spec_replicas);
}

}  // namespace gpufleet::replica_autoscaling
