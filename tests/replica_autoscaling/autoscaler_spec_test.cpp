// The replica autoscaler as data (replica_autoscaling/autoscaler_spec.h): the one function that builds
// an autoscaler from its spec.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "replica_autoscaling/autoscaler_spec.h"

namespace gpufleet::replica_autoscaling {
namespace {

// The autoscaler as data: none builds nothing; a ScaledObject builds KEDA's scaler, reading its
// trigger's metric; with a predictive spec the predictive scaler wraps it (the rate metric first,
// then KEDA's), each call a fresh one.
TEST(ReplicaAutoscalerSpec, BuildsWhatItDescribes) {
  ReplicaAutoscalerSpec spec;
  EXPECT_EQ(make_replica_autoscaler(spec), nullptr);
  ScaledObjectSpec so;
  so.name = "chat";
  so.scale_target_name = "chat";
  PrometheusTrigger trigger;
  trigger.metric = "vllm:num_requests_waiting";
  trigger.query = "sum(vllm:num_requests_waiting)";
  trigger.threshold = 5;
  so.triggers = {trigger};
  spec.keda = so;
  const auto keda = make_replica_autoscaler(spec);
  ASSERT_NE(keda, nullptr);
  EXPECT_EQ(keda->metrics(), std::vector<std::string>{"vllm:num_requests_waiting"});
  spec.predictive = PredictiveSpec{};
  spec.predictive->rate_metric = "gpufleet:request_arrival_rate";
  spec.predictive->capacity_rps_per_replica = 2.9;
  const auto predictive = make_replica_autoscaler(spec);
  ASSERT_NE(predictive, nullptr);
  EXPECT_EQ(predictive->metrics(), (std::vector<std::string>{"gpufleet:request_arrival_rate", "vllm:num_requests_waiting"}));
  EXPECT_NE(make_replica_autoscaler(spec), predictive);
}

}  // namespace
}  // namespace gpufleet::replica_autoscaling
