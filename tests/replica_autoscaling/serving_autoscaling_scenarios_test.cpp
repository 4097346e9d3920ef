// The serving autoscaling scenarios: S24 (scale-to-zero Deployment must not wake on a zero metric;
// kedacore/keda#770) and S26 (HPA stabilization windows applied the right way round;
// kubernetes/kubernetes#96671). Each drives an autoscaler with the scenario's metric series and a
// replica count that follows its decisions (replicas become ready at once), and asserts the
// expected outcome at the times the scenario gives.
#include <gtest/gtest.h>

#include <map>

#include "replica_autoscaling/hpa.h"
#include "replica_autoscaling/keda.h"

namespace as = gpufleet::replica_autoscaling;

namespace {

// Runs `a` from t=0 to `end_s`, the metric at each evaluation from `metric(t)`; returns the replica
// count after each evaluation time.
template <class F>
std::map<double, int32_t> run(as::ReplicaAutoscaler& a, int32_t replicas, double end_s, const std::string& name, F metric) {
  std::map<double, int32_t> out;
  for (double t = a.first_evaluation_s(); t <= end_s; t = a.next_evaluation_s(t)) {
    as::MetricSnapshot m{{name, as::MetricSample{metric(t), replicas}}};
    replicas = a.evaluate(t, replicas, replicas, m);
    out[t] = replicas;
  }
  return out;
}

// The count in effect at time t (after the last evaluation at or before t).
int32_t at(const std::map<double, int32_t>& series, double t, int32_t initial) {
  auto it = series.upper_bound(t);
  if (it == series.begin()) return initial;
  return std::prev(it)->second;
}

}  // namespace

// S24: min 0, max 5, Prometheus queue depth, threshold 5 per replica, activation 0, cooldown 300 s;
// metric 0 before 10 min, 7 from 10 to 20 min, 0 after.
TEST(ServingScenarioS24, ScaleToZeroDoesNotWakeOnZero) {
  as::ScaledObjectSpec so;
  so.name = "llm";
  so.scale_target_name = "llm";
  so.min_replica_count = 0;
  so.max_replica_count = 5;
  so.cooldown_period_s = 300;
  as::PrometheusTrigger trig;
  trig.metric = "vllm:num_requests_waiting";
  trig.query = "sum(vllm:num_requests_waiting)";
  trig.threshold = 5;
  trig.activation_threshold = 0;
  so.triggers.push_back(trig);
  as::KedaAutoscaler k(so);
  auto metric = [](double t) { return (t >= 600 && t < 1200) ? 7.0 : 0.0; };
  const auto s = run(k, 0, 1800, trig.metric, metric);

  // 0 before 10 min, never 1.
  for (const auto& [t, r] : s)
    if (t < 600) {
      EXPECT_EQ(r, 0) << "t=" << t;
    }
  // The first poll at or after 10 min (t=600, polls every 30 s) takes it 0 -> 1 ...
  EXPECT_EQ(s.at(600), 1);
  // ... and the HPA's next sync (15 s later) to ceil(7 / 5) = 2.
  EXPECT_EQ(s.at(615), 2);
  EXPECT_EQ(at(s, 1199, 0), 2);
  // After the metric returns to 0 at 20 min: >= 1 until the trigger has been inactive for 300 s.
  // The last active poll was at 1170, so 1170 + 300 = 1470 < t first holds at the poll at 1500.
  for (const auto& [t, r] : s)
    if (t >= 1200 && t < 1500) {
      EXPECT_GE(r, 1) << "t=" << t;
    }
  EXPECT_EQ(*k.last_active_s(), 1170);
  EXPECT_EQ(s.at(1500), 0);  // t = 25 min
  for (const auto& [t, r] : s)
    if (t >= 1500) {
      EXPECT_EQ(r, 0) << "t=" << t;
    }
}

namespace {

// An HPA whose one metric makes its recommendation exactly `rec`: External AverageValue target 1,
// value rec (ceil(rec / 1) = rec whenever outside tolerance, which every step of S26 is).
as::HpaSpec s26_spec(int32_t min_replicas, int32_t up_window, std::optional<as::ScalingPolicy> up_policy) {
  as::HpaSpec h;
  h.name = "s26";
  h.min_replicas = min_replicas;
  h.max_replicas = 10;
  h.metrics.push_back({as::MetricSourceType::kExternal, "rec", as::MetricTargetType::kAverageValue, 1});
  h.behavior = as::HpaBehavior{};
  as::ScalingRules up;
  up.stabilization_window_seconds = up_window;
  if (up_policy) up.policies = std::vector<as::ScalingPolicy>{*up_policy};
  as::ScalingRules down;
  down.stabilization_window_seconds = 300;
  h.behavior->scale_up = up;
  h.behavior->scale_down = down;
  return h;
}

as::HpaControllerOptions every_60s() {
  as::HpaControllerOptions o;
  o.sync_period_s = 60;
  o.first_sync_s = 60;
  return o;
}

}  // namespace

// S26 A: replicas 2, min 2, max 10, both windows 300 s; recommendations 3, 1, 1, 1 at 60..240.
TEST(ServingScenarioS26, AWindowsDoNotFlap) {
  as::HpaAutoscaler h(s26_spec(2, 300, std::nullopt), every_60s());
  const std::map<double, double> recs{{60, 3}, {120, 1}, {180, 1}, {240, 1}, {300, 1}};
  const auto s = run(h, 2, 300, "rec", [&](double t) { return recs.at(t); });
  // The recommendations are what the scenario gives.
  EXPECT_EQ(s.size(), 5u);
  for (const auto& [t, r] : s) EXPECT_EQ(r, 2) << "t=" << t;
  for (double t = 0; t <= 300; t += 15) EXPECT_EQ(at(s, t, 2), 2) << "t=" << t;
}

// S26 B: replicas 2 (min 2); scale-up window 0 with at most 1 pod per 120 s; scale-down window
// 300 s. Recommendations 4 at 60, then 1.
TEST(ServingScenarioS26, BScaleDownWindowNeverDrivesAScaleUp) {
  as::HpaAutoscaler h(s26_spec(2, 0, as::ScalingPolicy{as::ScalingPolicyType::kPods, 1, 120}), every_60s());
  const auto s = run(h, 2, 600, "rec", [](double t) { return t == 60 ? 4.0 : 1.0; });
  EXPECT_EQ(s.at(60), 3);   // capped by the policy: 2 + 1
  EXPECT_EQ(*h.last_recommendation(), 1);
  EXPECT_EQ(s.at(120), 3);  // must NOT go to 4
  EXPECT_EQ(s.at(180), 3);
  EXPECT_EQ(s.at(240), 3);
  EXPECT_EQ(s.at(300), 3);  // the 4 recorded at 60 is still inside the 300 s window
  // 360: every recommendation in (60, 360] is 1 <= 2: down to 2 (min).
  EXPECT_EQ(s.at(360), 2);
  for (const auto& [t, r] : s)
    if (t > 360) {
      EXPECT_EQ(r, 2) << "t=" << t;
    }
}
