// The HorizontalPodAutoscaler's arithmetic (replica_autoscaling/hpa.h) against hand-computed cases that
// follow kubernetes/kubernetes pkg/controller/podautoscaler/{horizontal,replica_calculator}.go.
#include "replica_autoscaling/hpa.h"

#include <gtest/gtest.h>

#include <limits>

namespace as = gpufleet::replica_autoscaling;
using as::MetricSourceType;
using as::MetricTargetType;
using as::ScalingPolicyType;
using as::SelectPolicy;

namespace {

const as::Tolerances kTol{0.1, 0.1};

as::HpaSpec external_spec(int32_t min, int32_t max, double target) {
  as::HpaSpec s;
  s.name = "h";
  s.min_replicas = min;
  s.max_replicas = max;
  s.metrics.push_back({MetricSourceType::kExternal, "queue", MetricTargetType::kAverageValue, target});
  return s;
}

as::MetricSnapshot queue(double sum, int32_t pods) { return {{"queue", as::MetricSample{sum, pods}}}; }

}  // namespace

TEST(HpaDefaults, MinReplicasMetricsAndNoBehavior) {
  const as::HpaSpec s = as::with_api_defaults(as::HpaSpec{});
  EXPECT_EQ(*s.min_replicas, 1);
  ASSERT_EQ(s.metrics.size(), 1u);
  EXPECT_EQ(s.metrics[0].type, MetricSourceType::kResource);
  EXPECT_EQ(s.metrics[0].name, "cpu");
  EXPECT_EQ(s.metrics[0].target_type, MetricTargetType::kUtilization);
  EXPECT_EQ(s.metrics[0].target, 80);
  EXPECT_FALSE(s.behavior.has_value());  // no behavior: the legacy normalization, not defaults
}

TEST(HpaDefaults, BehaviorDirectionsFilled) {
  as::ScalingRules up;
  up.select_policy = SelectPolicy::kMin;
  as::HpaBehavior b;
  b.scale_up = up;
  as::HpaSpec in;
  in.behavior.emplace(b);
  const as::HpaSpec s = as::with_api_defaults(in);
  const as::ScalingRules& u = *s.behavior->scale_up;
  EXPECT_EQ(*u.stabilization_window_seconds, 0);
  EXPECT_EQ(*u.select_policy, SelectPolicy::kMin);  // the set field is kept
  ASSERT_EQ(u.policies->size(), 2u);
  EXPECT_EQ((*u.policies)[0].type, ScalingPolicyType::kPods);
  EXPECT_EQ((*u.policies)[0].value, 4);
  EXPECT_EQ((*u.policies)[0].period_seconds, 15);
  EXPECT_EQ((*u.policies)[1].type, ScalingPolicyType::kPercent);
  EXPECT_EQ((*u.policies)[1].value, 100);
  EXPECT_EQ((*u.policies)[1].period_seconds, 15);
  const as::ScalingRules& d = *s.behavior->scale_down;
  EXPECT_FALSE(d.stabilization_window_seconds.has_value());  // the controller flag fills it
  EXPECT_EQ(*d.select_policy, SelectPolicy::kMax);
  ASSERT_EQ(d.policies->size(), 1u);
  EXPECT_EQ((*d.policies)[0].type, ScalingPolicyType::kPercent);
  EXPECT_EQ((*d.policies)[0].value, 100);
  // The controller's downscale flag (300 s) fills the window.
  as::HpaSpec h = external_spec(1, 10, 5);
  h.behavior = as::HpaBehavior{};
  const as::HpaAutoscaler a(h);
  EXPECT_EQ(*a.spec().behavior->scale_down->stabilization_window_seconds, 300);
  as::HpaControllerOptions o;
  o.downscale_stabilization_s = 120;
  EXPECT_EQ(*as::HpaAutoscaler(h, o).spec().behavior->scale_down->stabilization_window_seconds, 120);
}

TEST(HpaDefaults, PoliciesReplacedAsAWhole) {
  as::ScalingRules up;
  up.policies = std::vector<as::ScalingPolicy>{{ScalingPolicyType::kPods, 1, 120}};
  as::HpaBehavior b;
  b.scale_up = up;
  as::HpaSpec in;
  in.behavior.emplace(b);
  const as::HpaSpec s = as::with_api_defaults(in);
  ASSERT_EQ(s.behavior->scale_up->policies->size(), 1u);
  EXPECT_EQ((*s.behavior->scale_up->policies)[0].period_seconds, 120);
}

TEST(HpaArithmetic, CeilOfCurrentTimesRatio) {
  // 3 pods at 60 against 50: ratio 1.2, ceil(3.6) = 4.
  EXPECT_EQ(as::plain_metric_replicas(3, 180, 3, 0, 50, kTol), 4);
  // 10 pods at 44 against 50: ratio 0.88, ceil(8.8) = 9.
  EXPECT_EQ(as::plain_metric_replicas(10, 440, 10, 0, 50, kTol), 9);
  // 4 pods at 150 against 50: ratio 3, 12.
  EXPECT_EQ(as::plain_metric_replicas(4, 600, 4, 0, 50, kTol), 12);
  EXPECT_EQ(as::ceil_replicas(1.2, 3), 4);
  EXPECT_FALSE(as::plain_metric_replicas(3, 0, 0, 3, 50, kTol).has_value());  // no pod reported
}

TEST(HpaArithmetic, ToleranceBothSides) {
  // ratios 1.09 and 0.91 are within 0.1: no change.
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 54.5, 10, 0, 50, kTol), 10);
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 45.5, 10, 0, 50, kTol), 10);
  // 1.11 and 0.89 are not: ceil(11.1) = 12, ceil(8.9) = 9.
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 55.5, 10, 0, 50, kTol), 12);
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 44.5, 10, 0, 50, kTol), 9);
  // Asymmetric tolerances (KEP-4951): 1.15 inside a 0.2 scale-up band, 0.85 outside a 0.1 down band.
  const as::Tolerances asym{0.1, 0.2};
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 57.5, 10, 0, 50, asym), 10);
  EXPECT_EQ(as::plain_metric_replicas(10, 10 * 42.5, 10, 0, 50, asym), 9);
}

TEST(HpaArithmetic, MissingPods) {
  // Scale-up: 3 of 4 ready pods report 100 each (target 50, ratio 2); the missing one counts 0:
  // 300 / 4 / 50 = 1.5, ceil(1.5 x 4) = 6.
  EXPECT_EQ(as::plain_metric_replicas(4, 300, 3, 1, 50, kTol), 6);
  // Scale-down: 3 report 20 (ratio 0.4); the missing one counts as the target: (60 + 50) / 4 / 50 =
  // 0.55, ceil(2.2) = 3.
  EXPECT_EQ(as::plain_metric_replicas(4, 60, 3, 1, 50, kTol), 3);
  // 3 report 60 (ratio 1.2, a scale-up); with the missing pod at 0 the ratio is 0.9, within
  // tolerance: no change.
  EXPECT_EQ(as::plain_metric_replicas(4, 180, 3, 1, 50, kTol), 4);
  // 3 report 70 (1.4); with the missing pod 210 / 4 / 50 = 1.05, within tolerance: no change.
  EXPECT_EQ(as::plain_metric_replicas(4, 210, 3, 1, 50, kTol), 4);
}

TEST(HpaArithmetic, ValueAndPerPodTotals) {
  // External Value: ratio 2.5 with 2 ready pods -> 5; at 0 replicas ceil(2.5) = 3; within tolerance -> current.
  EXPECT_EQ(as::usage_ratio_replicas(2, 2.5, 2, kTol), 5);
  EXPECT_EQ(as::usage_ratio_replicas(0, 2.5, 0, kTol), 3);
  EXPECT_EQ(as::usage_ratio_replicas(4, 1.05, 4, kTol), 4);
  // External AverageValue: total 1000, target 150, 5 replicas: ratio 1.33 -> ceil(1000/150) = 7.
  EXPECT_EQ(as::per_pod_total_replicas(5, 5, 1000, 150, kTol), 7);
  // total 700: ratio 0.933, within -> 5.
  EXPECT_EQ(as::per_pod_total_replicas(5, 5, 700, 150, kTol), 5);
  // ceil(7 / 5) = 2 (KEDA's queue of 7 against 5 per replica, from 1 replica).
  EXPECT_EQ(as::per_pod_total_replicas(1, 1, 7, 5, kTol), 2);
  EXPECT_EQ(as::per_pod_total_replicas(2, 2, 0, 5, kTol), 0);
}

TEST(HpaArithmetic, PerPodTotalDuringARolloutKeepsSpecReplicas) {
  // A rollout with maxSurge 1: spec 10, status 11 (the surge pod), queue total 100 at 10 per pod.
  // ratio 100 / (10 x 11) = 0.909, within the 10% tolerance: spec.replicas stays 10 (the
  // controller since kubernetes/kubernetes pull request 141134); before it, status.replicas 11.
  EXPECT_EQ(as::per_pod_total_replicas(10, 11, 100, 10, kTol), 10);
  EXPECT_EQ(as::per_pod_total_replicas(10, 11, 100, 10, kTol, /*keep_status_within_tolerance=*/true), 11);
  // Outside tolerance both give ceil(total / target): 130 / 10 = 13.
  EXPECT_EQ(as::per_pod_total_replicas(10, 11, 130, 10, kTol), 13);
  EXPECT_EQ(as::per_pod_total_replicas(10, 11, 130, 10, kTol, true), 13);
  // Status below spec (pods not created yet) within tolerance: spec again, not the lower status.
  EXPECT_EQ(as::per_pod_total_replicas(10, 9, 95, 10, kTol), 10);
  // Through the HPA: an External AverageValue metric evaluated on scale {spec 10, status 11}.
  as::HpaSpec spec;
  spec.name = "queue";
  spec.scale_target_name = "api";
  spec.min_replicas = 1;
  spec.max_replicas = 20;
  spec.metrics = {{MetricSourceType::kExternal, "queue_depth", MetricTargetType::kAverageValue, 10}};
  const as::MetricSnapshot m = {{"queue_depth", as::MetricSample{100, 1}}};
  as::HpaAutoscaler fixed(spec);
  EXPECT_EQ(fixed.evaluate(0, as::ScaleStatus{10, 11, 11}, m), 10);
  as::HpaControllerOptions before;
  before.keep_status_within_tolerance = true;
  as::HpaAutoscaler drifting(spec, before);
  EXPECT_EQ(drifting.evaluate(0, as::ScaleStatus{10, 11, 11}, m), 11);
}

TEST(HpaArithmetic, MetricReplicasPerSourceType) {
  const as::MetricSample s{300, 3};
  // Pods AverageValue 50: 3 ready pods at 100 -> 6.
  EXPECT_EQ(as::metric_replicas({MetricSourceType::kPods, "m", MetricTargetType::kAverageValue, 50}, s, {3, 3, 3}, kTol), 6);
  // A 4th ready pod without a sample is missing: 300 / 4 / 50 = 1.5 -> 6.
  EXPECT_EQ(as::metric_replicas({MetricSourceType::kPods, "m", MetricTargetType::kAverageValue, 50}, s, {4, 4, 4}, kTol), 6);
  // Pods with a Value target is invalid.
  EXPECT_FALSE(as::metric_replicas({MetricSourceType::kPods, "m", MetricTargetType::kValue, 50}, s, {3, 3, 3}, kTol));
  // Resource Utilization 50 %: pods at 100 % average -> 6.
  EXPECT_EQ(as::metric_replicas({MetricSourceType::kResource, "DCGM_FI_DEV_GPU_UTIL", MetricTargetType::kUtilization, 50}, s, {3, 3, 3}, kTol), 6);
  // Object Value 100: 300 / 100 = 3 x ready 3 = 9.
  EXPECT_EQ(as::metric_replicas({MetricSourceType::kObject, "m", MetricTargetType::kValue, 100}, s, {3, 3, 3}, kTol), 9);
  // External AverageValue 50: ceil(300 / 50) = 6.
  EXPECT_EQ(as::metric_replicas({MetricSourceType::kExternal, "m", MetricTargetType::kAverageValue, 50}, s, {3, 3, 3}, kTol), 6);
  // No sample: invalid.
  EXPECT_FALSE(as::metric_replicas({MetricSourceType::kExternal, "m", MetricTargetType::kAverageValue, 50}, std::nullopt, {3, 3, 3}, kTol));
}

TEST(HpaPolicies, ScaleUpLimit) {
  as::ScalingRules r;
  r.select_policy = SelectPolicy::kMax;
  r.policies = std::vector<as::ScalingPolicy>{{ScalingPolicyType::kPods, 4, 15}, {ScalingPolicyType::kPercent, 100, 15}};
  // From 10: Pods -> 14, Percent -> 20; Max picks 20, Min 14.
  EXPECT_EQ(as::scale_up_limit(10, {}, {}, r, 100), 20);
  r.select_policy = SelectPolicy::kMin;
  EXPECT_EQ(as::scale_up_limit(10, {}, {}, r, 100), 14);
  r.select_policy = SelectPolicy::kDisabled;
  EXPECT_EQ(as::scale_up_limit(10, {}, {}, r, 100), 10);
  // 6 pods added at t=90 count within the 15 s period at t=100: start 4 -> Pods 8, Percent 8.
  r.select_policy = SelectPolicy::kMax;
  EXPECT_EQ(as::scale_up_limit(10, {{6, 90}}, {}, r, 100), 8);
  // At t=105 the event is exactly 15 s old: no longer in the period (strictly after the cutoff).
  EXPECT_EQ(as::scale_up_limit(10, {{6, 90}}, {}, r, 105), 20);
  // Percent rounds up: 3 x 1.1 = 3.3 -> 4.
  as::ScalingRules p;
  p.select_policy = SelectPolicy::kMax;
  p.policies = std::vector<as::ScalingPolicy>{{ScalingPolicyType::kPercent, 10, 60}};
  EXPECT_EQ(as::scale_up_limit(3, {}, {}, p, 0), 4);
}

TEST(HpaPolicies, ScaleDownLimit) {
  as::ScalingRules r;
  r.select_policy = SelectPolicy::kMax;
  r.policies = std::vector<as::ScalingPolicy>{{ScalingPolicyType::kPods, 2, 60}, {ScalingPolicyType::kPercent, 50, 60}};
  // From 10: Pods -> 8, Percent -> 5; Max (largest change) = 5, Min = 8.
  EXPECT_EQ(as::scale_down_limit(10, {}, {}, r, 0), 5);
  r.select_policy = SelectPolicy::kMin;
  EXPECT_EQ(as::scale_down_limit(10, {}, {}, r, 0), 8);
  // Percent truncates: 5 x 0.5 = 2.5 -> 2.
  r.select_policy = SelectPolicy::kMax;
  EXPECT_EQ(as::scale_down_limit(5, {}, {}, r, 0), 2);
  // 3 removed 30 s ago: start 13 -> Pods 11, Percent 6 -> 6.
  EXPECT_EQ(as::scale_down_limit(10, {}, {{3, 70}}, r, 100), 6);
}

TEST(HpaStabilization, WindowsHoldTheRightWay) {
  std::vector<as::TimedRecommendation> h{{2, 0}};
  // Scale-up window 300: the lowest recent recommendation (2) holds the count at 2.
  EXPECT_EQ(as::stabilize_with_behaviors(h, 60, 2, 3, 300, 300), 2);
  // Scale-down window 300: the highest recent (3) bounds a scale-down; current 2 stays.
  EXPECT_EQ(as::stabilize_with_behaviors(h, 120, 2, 1, 300, 300), 2);
  EXPECT_EQ(h.size(), 3u);
  // No windows: the recommendation itself.
  std::vector<as::TimedRecommendation> z{{5, 0}};
  EXPECT_EQ(as::stabilize_with_behaviors(z, 60, 5, 1, 0, 0), 1);
  EXPECT_EQ(z.size(), 1u);  // the old entry was reused
  EXPECT_EQ(z[0].replicas, 1);
  // Legacy: the max over the window, inclusive of its start.
  std::vector<as::TimedRecommendation> l{{4, 0}};
  EXPECT_EQ(as::stabilize_legacy(l, 300, 1, 300), 4);
  EXPECT_EQ(as::stabilize_legacy(l, 301, 1, 300), 1);
}

TEST(HpaController, MinMaxClampsAndDisabled) {
  as::HpaAutoscaler a(external_spec(2, 5, 1));
  // Below min -> min, whatever the metric.
  EXPECT_EQ(a.evaluate(0, 1, 1, queue(100, 1)), 2);
  // Above max -> max.
  EXPECT_EQ(a.evaluate(15, 7, 7, queue(0, 7)), 5);
  // At 0 with min > 0: scaling disabled.
  EXPECT_EQ(a.evaluate(30, 0, 0, queue(100, 0)), 0);
  // Legacy rules: from 3, the metric wants 10; max(2 x 3, 4) = 6 then max 5 -> 5.
  EXPECT_EQ(a.evaluate(45, 3, 3, queue(10, 3)), 5);
  // From 2 the metric wants 10: limit max(4, 4) = 4.
  as::HpaAutoscaler b(external_spec(1, 20, 1));
  EXPECT_EQ(b.evaluate(0, 2, 2, queue(10, 2)), 4);
  // Constructor rejects max < min.
  EXPECT_THROW(as::HpaAutoscaler(external_spec(3, 2, 1)), std::invalid_argument);
}

TEST(HpaController, SeveralMetricsTakeTheMax) {
  as::HpaSpec s = external_spec(1, 20, 5);
  s.metrics.push_back({MetricSourceType::kPods, "util", MetricTargetType::kAverageValue, 50});
  as::HpaAutoscaler a(s);
  as::MetricSnapshot m = queue(10, 2);        // ceil(10 / 5) = 2 (ratio 1: no change)
  m["util"] = as::MetricSample{2 * 100, 2};   // ratio 2 -> 4
  EXPECT_EQ(a.evaluate(0, 2, 2, m), 4);
  EXPECT_EQ(*a.last_recommendation(), 4);
  // One metric missing while the other would scale down: no scale-down on partial data.
  as::HpaAutoscaler b(s);
  EXPECT_EQ(b.evaluate(0, 4, 4, queue(0, 4)), 4);
  // All missing: no change.
  EXPECT_EQ(b.evaluate(15, 4, 4, {}), 4);
}

TEST(HpaController, LegacyDownscaleWindow) {
  as::HpaAutoscaler a(external_spec(1, 10, 1));
  int32_t r = 4;
  r = a.evaluate(0, r, r, queue(4, r));  // 4 (initial recommendation 4 at t=0)
  EXPECT_EQ(r, 4);
  // The metric drops to 1: held at 4 for the 300 s window (recommendations at 0 count until 300).
  for (double t = 15; t <= 300; t += 15) {
    r = a.evaluate(t, r, r, queue(1, r));
    EXPECT_EQ(r, 4) << "t=" << t;
  }
  r = a.evaluate(315, r, r, queue(1, r));
  EXPECT_EQ(r, 1);
}

TEST(HpaController, BehaviorRateLimitsAcrossSyncs) {
  as::HpaSpec s = external_spec(1, 100, 1);
  s.behavior = as::HpaBehavior{};  // the defaults: up 4 pods or 100 % per 15 s, Max
  as::HpaAutoscaler a(s);
  int32_t r = 1;
  // Wants 50. 1 -> max(1 + 4, 2) = 5 -> max(9, 10) = 10 -> max(14, 20) = 20 -> 40 -> 50.
  const int32_t expect[] = {5, 10, 20, 40, 50};
  for (int i = 0; i < 5; ++i) {
    r = a.evaluate(15.0 * i, r, r, queue(50, r));
    EXPECT_EQ(r, expect[i]) << "sync " << i;
  }
}

TEST(HpaGrid, NextOnGrid) {
  EXPECT_EQ(as::next_on_grid(0, 0, 15), 15);
  EXPECT_EQ(as::next_on_grid(14.9, 0, 15), 15);
  EXPECT_EQ(as::next_on_grid(-5, 0, 15), 0);
  EXPECT_EQ(as::next_on_grid(60, 60, 60), 120);
}
