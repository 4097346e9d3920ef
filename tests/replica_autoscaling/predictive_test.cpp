// The predictive autoscaler (replica_autoscaling/predictive.h): seasonal forecast of a daily sine after a
// week of history, replicas one lead time ahead, the reactive floor.
#include "replica_autoscaling/predictive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace as = gpufleet::replica_autoscaling;

namespace {

constexpr double kPi = 3.14159265358979323846;

// 100 +- 50 requests/s, period one day.
double daily_sine(double t) { return 100.0 + 50.0 * std::sin(2 * kPi * t / as::kSecondsPerDay); }

class FixedAutoscaler : public as::ReplicaAutoscaler {
 public:
  explicit FixedAutoscaler(int32_t answer) : answer_(answer) {}
  std::vector<std::string> metrics() const override { return {"vllm:num_requests_waiting"}; }
  double first_evaluation_s() const override { return 0; }
  double next_evaluation_s(double t) const override { return t + 15; }
  using as::ReplicaAutoscaler::evaluate;
  int32_t evaluate(double, const as::ScaleStatus&, const as::MetricSnapshot&) override { return answer_; }

 private:
  int32_t answer_;
};

}  // namespace

TEST(RateForecaster, DailySineAfterOneWeek) {
  as::RateForecaster f;
  for (double t = 0; t < as::kSecondsPerWeek; t += 60) f.observe(t, daily_sine(t));
  const double now = as::kSecondsPerWeek - 60;
  // Stated error: within 0.5 requests/s (1 % of the 50 requests/s amplitude) at every horizon up
  // to 2 h, sampled every 10 min.
  double worst = 0;
  for (double h = 0; h <= 7200; h += 600) {
    const std::optional<double> got = f.forecast(now, h);
    ASSERT_TRUE(got.has_value());
    worst = std::max(worst, std::abs(*got - daily_sine(now + h)));
  }
  EXPECT_LT(worst, 0.5);
  // Also at a rising and a falling point of a later day (feeding on).
  for (double t = as::kSecondsPerWeek; t < as::kSecondsPerWeek + 0.75 * as::kSecondsPerDay; t += 60) f.observe(t, daily_sine(t));
  const double later = as::kSecondsPerWeek + 0.75 * as::kSecondsPerDay - 60;
  EXPECT_NEAR(*f.forecast(later, 1800), daily_sine(later + 1800), 0.5);
}

TEST(RateForecaster, PersistenceBeforeOneDay) {
  as::RateForecaster f;
  EXPECT_FALSE(f.forecast(0, 60).has_value());
  for (double t = 0; t < 3600; t += 60) f.observe(t, t < 1800 ? 10.0 : 40.0);
  // Less than a day of history: the mean of the last 30 min (all 40).
  EXPECT_DOUBLE_EQ(*f.forecast(3540, 1800), 40.0);
}

TEST(RateForecaster, LevelCorrectionFollowsAShift) {
  // A week of the sine, then today runs 20 requests/s above it: the forecast carries the +20.
  as::RateForecaster f;
  for (double t = 0; t < as::kSecondsPerWeek; t += 60) f.observe(t, daily_sine(t));
  for (double t = as::kSecondsPerWeek; t < as::kSecondsPerWeek + 3600; t += 60) f.observe(t, daily_sine(t) + 20);
  const double now = as::kSecondsPerWeek + 3540;
  EXPECT_NEAR(*f.forecast(now, 1800), daily_sine(now + 1800) + 20, 0.5);
}

TEST(Predictive, ReplicasForRate) {
  as::PredictiveSpec s;
  s.rate_metric = "gateway:request_rate";
  s.capacity_rps_per_replica = 5;
  s.headroom = 1.2;
  s.min_replicas = 1;
  s.max_replicas = 30;
  // ceil(50 x 1.2 / 5) = 12; ceil(51 x 1.2 / 5) = ceil(12.24) = 13; 0 -> min 1; 1000 -> max 30.
  EXPECT_EQ(as::replicas_for_rate(50, s), 12);
  EXPECT_EQ(as::replicas_for_rate(51, s), 13);
  EXPECT_EQ(as::replicas_for_rate(0, s), 1);
  EXPECT_EQ(as::replicas_for_rate(1000, s), 30);
}

TEST(Predictive, ScalesAheadByTheLeadTime) {
  as::PredictiveSpec s;
  s.rate_metric = "gateway:request_rate";
  s.capacity_rps_per_replica = 5;
  s.headroom = 1.0;
  s.lead_time_s = 1800;  // node provisioning + cold start, measured
  s.min_replicas = 1;
  s.max_replicas = 100;
  as::PredictiveAutoscaler p(s);
  EXPECT_EQ(p.metrics(), std::vector<std::string>{"gateway:request_rate"});
  const double t0 = as::kSecondsPerWeek + 3600;  // rising: 112.9 requests/s now, 119.1 in 30 min
  int32_t r = 1;
  for (double t = p.first_evaluation_s(); t <= t0; t = p.next_evaluation_s(t)) {
    r = p.evaluate(t, r, r, {{"gateway:request_rate", as::MetricSample{daily_sine(t), r}}});
  }
  // What the rate needs now: ceil(112.94 / 5) = 23; at t0 + lead: ceil(119.13 / 5) = 24.
  EXPECT_EQ(static_cast<int32_t>(std::ceil(daily_sine(t0) / 5)), 23);
  EXPECT_EQ(r, 24);
  EXPECT_EQ(*p.last_predictive(), 24);
}

TEST(Predictive, ReactiveIsTheFloor) {
  as::PredictiveSpec s;
  s.rate_metric = "gateway:request_rate";
  s.capacity_rps_per_replica = 10;
  s.min_replicas = 0;
  s.forecast.level_window_s = 10;  // the level is the last sample
  as::PredictiveAutoscaler p(s, std::make_unique<FixedAutoscaler>(7));
  EXPECT_EQ(p.next_evaluation_s(0), 15);  // the reactive one's grid
  EXPECT_EQ(p.metrics(), (std::vector<std::string>{"gateway:request_rate", "vllm:num_requests_waiting"}));
  // Rate 10: predictive ceil(10 x 1.2 / 10) = 2, reactive 7 -> 7.
  EXPECT_EQ(p.evaluate(0, 1, 1, {{"gateway:request_rate", as::MetricSample{10, 1}}}), 7);
  EXPECT_EQ(*p.last_predictive(), 2);
  // Rate 100: predictive 12 > 7.
  EXPECT_EQ(p.evaluate(15, 7, 7, {{"gateway:request_rate", as::MetricSample{100, 7}}}), 12);
}
