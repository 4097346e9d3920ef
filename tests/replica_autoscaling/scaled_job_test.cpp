// KEDA ScaledJob's decision (replica_autoscaling/scaled_job.h) against kedacore/keda
// pkg/scaling/executor/scale_jobs.go and pkg/scaling/scaledjob/metrics.go, values by hand.
#include <gtest/gtest.h>

#include <stdexcept>

#include "replica_autoscaling/scaled_job.h"

namespace gpufleet::replica_autoscaling {
namespace {

ScaledJobInputs in(double queue, int64_t running, int64_t pending, int64_t max = 10, double target = 1) {
  ScaledJobInputs i;
  i.queue_length = queue;
  i.running_jobs = running;
  i.pending_jobs = pending;
  i.max_replica_count = max;
  i.target_value = target;
  return i;
}

int64_t create(ScaledJobStrategy s, const ScaledJobInputs& i) { return scaled_job_decision(s, i).jobs_to_create; }

TEST(ScaledJobDecision, DefaultSubtractsEveryUnfinishedJob) {
  // maxScale = min(3 / 1, 10) = 3; effective = 3 - running.
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(3, 0, 0)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(3, 3, 3)), 0);  // 3 pending jobs count as running
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(3, 3, 0)), 0);  // 3 running, 3 new messages: none (KEDA's default)
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(5, 2, 0)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(50, 0, 0)), 10);  // capped at maxReplicaCount
  // targetValue 2: maxScale = ceil(5 / 2) = 3, scaleTo = ceil(5) = 5: min(5, 3) = 3.
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(5, 0, 0, 10, 2)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kDefault, in(0, 0, 0)), 0);  // not active
}

TEST(ScaledJobDecision, AccurateSubtractsPendingJobs) {
  EXPECT_EQ(create(ScaledJobStrategy::kAccurate, in(3, 0, 0)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kAccurate, in(3, 3, 3)), 0);  // 3 + 3 <= 10: 3 - 3 pending
  EXPECT_EQ(create(ScaledJobStrategy::kAccurate, in(3, 3, 0)), 3);  // 3 running took their messages: 3 new
  // maxScale + running > max: max - running = 10 - 8 = 2.
  EXPECT_EQ(create(ScaledJobStrategy::kAccurate, in(5, 8, 1)), 2);
  EXPECT_EQ(create(ScaledJobStrategy::kAccurate, in(3, 10, 0)), 0);
}

TEST(ScaledJobDecision, EagerFillsUpToMax) {
  // min(max - running - pending, maxScale), scaleTo = max.
  EXPECT_EQ(create(ScaledJobStrategy::kEager, in(3, 0, 0)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kEager, in(3, 3, 0)), 3);
  EXPECT_EQ(create(ScaledJobStrategy::kEager, in(3, 6, 3)), 1);  // 10 - 6 - 3 = 1 (pending counted twice, as KEDA)
  EXPECT_EQ(create(ScaledJobStrategy::kEager, in(3, 7, 4)), 0);
  // targetValue 2: maxScale = ceil(5 / 2) = 3, scaleTo = 10: 3 (the default would create min(5, 3) = 3 too).
  EXPECT_EQ(create(ScaledJobStrategy::kEager, in(5, 0, 0, 10, 2)), 3);
}

TEST(ScaledJobDecision, MinReplicaCount) {
  ScaledJobInputs i = in(0, 1, 0);
  i.min_replica_count = 3;
  const ScaledJobDecision d = scaled_job_decision(ScaledJobStrategy::kDefault, i);
  EXPECT_TRUE(d.active);  // minReplicaCount > 0: active with an empty queue
  EXPECT_EQ(d.jobs_to_create, 2);  // min - running
}

TEST(ScaledJobDecision, Strategies) {
  EXPECT_EQ(parse_scaled_job_strategy("accurate"), ScaledJobStrategy::kAccurate);
  EXPECT_EQ(parse_scaled_job_strategy("eager"), ScaledJobStrategy::kEager);
  EXPECT_EQ(parse_scaled_job_strategy("default"), ScaledJobStrategy::kDefault);
  EXPECT_FALSE(parse_scaled_job_strategy("custom").has_value());
  EXPECT_EQ(scaled_job_strategy_name(ScaledJobStrategy::kEager), "eager");
  EXPECT_THROW(scaled_job_decision(ScaledJobStrategy::kDefault, in(3, 0, 0, 10, 0)), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::replica_autoscaling
