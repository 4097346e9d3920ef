// KEDA ScaledObject decisions (replica_autoscaling/keda.h): activation strictly above activationThreshold,
// 0 -> 1 at a poll, 1 -> 0 only after cooldownPeriod of inactivity, the HPA KEDA creates.
#include "replica_autoscaling/keda.h"

#include <gtest/gtest.h>

namespace as = gpufleet::replica_autoscaling;

namespace {

as::ScaledObjectSpec queue_so(double threshold, double activation) {
  as::ScaledObjectSpec so;
  so.name = "llm";
  so.scale_target_name = "llm";
  so.max_replica_count = 5;
  as::PrometheusTrigger t;
  t.query = "sum(vllm:num_requests_waiting{service=\"llm\"})";
  t.metric = "vllm:num_requests_waiting";
  t.threshold = threshold;
  t.activation_threshold = activation;
  so.triggers.push_back(t);
  return so;
}

as::MetricSnapshot waiting(double v, int32_t pods) { return {{"vllm:num_requests_waiting", as::MetricSample{v, pods}}}; }

}  // namespace

TEST(KedaActivation, StrictlyAboveThreshold) {
  as::PrometheusTrigger t;
  t.activation_threshold = 50;
  EXPECT_FALSE(as::trigger_active(t, 50.0));
  EXPECT_TRUE(as::trigger_active(t, 50.5));
  EXPECT_FALSE(as::trigger_active(t, 40.0));
  // An empty result is 0 (ignoreNullValues true), an error otherwise: inactive both ways.
  t.activation_threshold = 0;
  EXPECT_FALSE(as::trigger_active(t, std::nullopt));
  t.ignore_null_values = false;
  EXPECT_FALSE(as::trigger_active(t, std::nullopt));
  t.activation_threshold = -1;
  t.ignore_null_values = true;
  EXPECT_TRUE(as::trigger_active(t, std::nullopt));
}

TEST(KedaActivation, ActivationOverridesTheHpa) {
  // threshold 10, activation 50, metric 40: the HPA alone would want 4, but KEDA keeps 0
  // (keda-docs concepts/scaling-deployments.md).
  as::KedaAutoscaler k(queue_so(10, 50));
  for (double t = 0; t <= 300; t = k.next_evaluation_s(t)) EXPECT_EQ(k.evaluate(t, 0, 0, waiting(40, 0)), 0) << t;
  EXPECT_EQ(k.evaluate(330, 0, 0, waiting(51, 0)), 1);
}

TEST(KedaHpaSpec, WhatKedaCreates) {
  as::ScaledObjectSpec so = queue_so(5, 0);
  so.triggers[0].metric_type = as::KedaMetricType::kValue;
  const as::HpaSpec h = as::keda_hpa_spec(so);
  EXPECT_EQ(h.name, "keda-hpa-llm");
  EXPECT_EQ(*h.min_replicas, 1);  // minReplicaCount 0 -> the HPA's 1
  EXPECT_EQ(h.max_replicas, 5);
  ASSERT_EQ(h.metrics.size(), 1u);
  EXPECT_EQ(h.metrics[0].type, as::MetricSourceType::kExternal);
  EXPECT_EQ(h.metrics[0].name, "s0-prometheus");
  EXPECT_EQ(h.metrics[0].target_type, as::MetricTargetType::kValue);
  EXPECT_EQ(h.metrics[0].target, 5);
  so.min_replica_count = 2;
  EXPECT_EQ(*as::keda_hpa_spec(so).min_replicas, 2);
  EXPECT_EQ(as::ScaledObjectSpec{}.max_replica_count, 100);
  EXPECT_EQ(as::ScaledObjectSpec{}.polling_interval_s, 30);
  EXPECT_EQ(as::ScaledObjectSpec{}.cooldown_period_s, 300);
}

TEST(KedaScale, FromZeroAtAPollAndToZeroAfterCooldown) {
  as::KedaAutoscaler k(queue_so(5, 0));
  EXPECT_EQ(k.first_evaluation_s(), 0);
  EXPECT_EQ(k.next_evaluation_s(0), 15);   // HPA sync
  EXPECT_EQ(k.next_evaluation_s(15), 30);  // poll and sync
  // 3 waiting at t=15 (an HPA sync, not a poll): nothing while at 0.
  EXPECT_EQ(k.evaluate(15, 0, 0, waiting(3, 0)), 0);
  // Poll at 30: active -> 1.
  EXPECT_EQ(k.evaluate(30, 0, 0, waiting(3, 0)), 1);
  EXPECT_EQ(*k.last_active_s(), 30);
  // Inactive from 60 on: stays 1 (HPA min 1) until lastActive 30 + 300 < t: the poll at 360.
  int32_t r = 1;
  for (double t = 45; t < 360; t = k.next_evaluation_s(t)) {
    r = k.evaluate(t, r, r, waiting(0, r));
    EXPECT_EQ(r, 1) << "t=" << t;
  }
  EXPECT_EQ(k.evaluate(360, r, r, waiting(0, r)), 0);
}

TEST(KedaScale, MinReplicaCountAndIdle) {
  as::ScaledObjectSpec so = queue_so(5, 0);
  so.min_replica_count = 2;
  as::KedaAutoscaler k(so);
  // Inactive below min (no idle count): set to min at the poll.
  EXPECT_EQ(k.evaluate(0, 0, 0, waiting(0, 0)), 2);
  // idleReplicaCount 0 with min 2: active from idle goes to min.
  so.idle_replica_count = 0;
  as::KedaAutoscaler i(so);
  EXPECT_EQ(i.evaluate(0, 0, 0, waiting(1, 0)), 2);
  // Inactive above idle, no lastActive... it was active at 0: cooldown from 0, idle at the poll after 300.
  EXPECT_EQ(i.evaluate(300, 2, 2, waiting(0, 2)), 2);
  EXPECT_EQ(i.evaluate(330, 2, 2, waiting(0, 2)), 0);
}

TEST(KedaScale, InitialCooldownWithoutActivity) {
  as::ScaledObjectSpec so = queue_so(5, 0);
  so.initial_cooldown_period_s = 120;
  as::KedaAutoscaler k(so);
  // Replicas set outside KEDA, never active: scaled to 0 once creation + 120 s has passed.
  EXPECT_EQ(k.evaluate(90, 3, 3, waiting(0, 3)), 3);
  EXPECT_EQ(k.evaluate(120, 3, 3, waiting(0, 3)), 3);
  EXPECT_EQ(k.evaluate(150, 3, 3, waiting(0, 3)), 0);
}
