// A predictive replica autoscaler: it forecasts the request rate one lead time ahead (the time a new
// replica needs: node provisioning plus vLLM cold start) from the rate's own history with daily and
// weekly seasonality, and asks for enough replicas for that rate, never fewer than a reactive
// autoscaler (HPA or KEDA) it wraps asks for.
//
// Forecast method: seasonal naive with a level correction (additive), a simple relative of
// double-seasonal Holt-Winters.
//   S(x)  = w x y(x - 1 week) + (1 - w) x y(x - 1 day)   (only the daily term with < 1 week of history)
//   F(t + h) = S(t + h) + g x (L(t) - S_L(t))
// where y(x) is the observed rate at x (bucket means, linear between bucket centres), L(t) the mean
// rate over the last level_window_s and S_L(t) the seasonal estimate of that same window (so the
// correction is how far today runs above or below the seasonal pattern). With less than one day of
// history F = L(t) (persistence). Sources: R. J. Hyndman, G. Athanasopoulos, "Forecasting:
// Principles and Practice", 3rd ed., OTexts 2021, sec. 5.2 (seasonal naive) and 8.3 (Holt-Winters);
// J. W. Taylor, "Short-term electricity demand forecasting using double seasonal exponential
// smoothing", J. Operational Research Society 54 (2003) 799-805 (daily + weekly seasonality).
// docs/serving-autoscaling.md discusses the choice.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replica_autoscaling/replica_autoscaler.h"

namespace gpufleet::replica_autoscaling {

inline constexpr double kSecondsPerDay = 86400;
inline constexpr double kSecondsPerWeek = 7 * kSecondsPerDay;

/// The forecaster's settings.
struct ForecastOptions {
  double bucket_s = 300;          ///< history resolution: observations are averaged per bucket (> 0)
  double weekly_weight = 0.5;     ///< w in [0, 1]: share of the weekly term once a week of history exists
  double level_window_s = 1800;   ///< L(t)'s window (> 0)
  double level_gain = 1.0;        ///< g in [0, 1]: 0 = pure seasonal naive
};

/// The rate's history and the forecast above. Observations must come in non-decreasing time.
/// History older than one week plus one day plus the level window is dropped.
class RateForecaster {
 public:
  explicit RateForecaster(ForecastOptions options = {});
  /// Records the rate (requests/s, >= 0; negatives and non-finite values are ignored) seen at t.
  void observe(double t, double rate_rps);
  /// The forecast rate at now + horizon_s (>= 0); nullopt before any observation.
  std::optional<double> forecast(double now, double horizon_s) const;
  /// y(x): the observed rate at x from the buckets; nullopt when no bucket around x has data.
  std::optional<double> observed(double x) const;
  /// The seasonal estimate S(x) given history up to `now`; nullopt with less than a day of history.
  std::optional<double> seasonal(double x, double now) const;
  double history_s(double now) const { return first_ ? now - *first_ : 0; }

 private:
  ForecastOptions options_;
  std::map<int64_t, std::pair<double, int64_t>> buckets_;  // index -> (sum, count)
  std::optional<double> first_;
  double last_t_ = 0;
  std::vector<std::pair<double, double>> recent_;  // (t, rate) within the level window
};

/// The predictive scaler's spec.
struct PredictiveSpec {
  /// The metric whose sample's sum is the service's request rate in requests/s (measured at the
  /// router, so it exists at 0 replicas).
  std::string rate_metric;
  double capacity_rps_per_replica = 0;  ///< requests/s one replica serves within its SLO (> 0)
  double headroom = 1.2;                ///< multiplier on the forecast (>= 1 sensible)
  /// Lead time, seconds: measured node provisioning + replica cold start (model load, CUDA graphs).
  double lead_time_s = 0;
  int32_t min_replicas = 1;
  int32_t max_replicas = 100;
  double evaluation_period_s = 60;      ///< own evaluation grid when no reactive autoscaler is wrapped
  ForecastOptions forecast;
};

/// ceil(rate x headroom / capacity), clamped to [min_replicas, max_replicas].
int32_t replicas_for_rate(double rate_rps, const PredictiveSpec& spec);

/// The predictive autoscaler. evaluate() records the rate sample (a missing sample records
/// nothing), forecasts the rate at t + lead_time_s and returns replicas_for_rate() of it; with a
/// reactive autoscaler wrapped, it evaluates on that one's grid and returns the larger of the two
/// answers (the reactive answer is the floor).
class PredictiveAutoscaler : public ReplicaAutoscaler {
 public:
  /// Throws std::invalid_argument on capacity <= 0, headroom <= 0, lead time < 0, max < min, or an
  /// empty rate_metric.
  explicit PredictiveAutoscaler(PredictiveSpec spec, std::unique_ptr<ReplicaAutoscaler> reactive = nullptr);

  std::vector<std::string> metrics() const override;
  double first_evaluation_s() const override;
  double next_evaluation_s(double t) const override;
  using ReplicaAutoscaler::evaluate;
  int32_t evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) override;

  RateForecaster& forecaster() { return forecaster_; }
  const RateForecaster& forecaster() const { return forecaster_; }
  /// The predictive part's answer at the last evaluation (before the reactive floor).
  std::optional<int32_t> last_predictive() const { return last_predictive_; }

 private:
  PredictiveSpec spec_;
  std::unique_ptr<ReplicaAutoscaler> reactive_;
  RateForecaster forecaster_;
  std::optional<int32_t> last_predictive_;
};

}  // namespace gpufleet::replica_autoscaling
