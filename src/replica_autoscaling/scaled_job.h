// A KEDA ScaledJob's decision at one polling interval: how many Jobs to create from its trigger's
// queue length and the Jobs it has now. Pure arithmetic, no clock; the simulator's controller is
// sim/controllers/scaled_job.h.
//
// Upstream (kedacore/keda):
//   pkg/scaling/scaledjob/metrics.go  CalculateQueueLengthAndMaxValue, IsScaledJobActive:
//       maxValue = min(queueLength / targetAverageValue, maxReplicaCount);
//       scaleTo = ceil(queueLength), maxScale = ceil(maxValue)
//   pkg/scaling/executor/scale_jobs.go  RequestJobScale, getScalingDecision, createJobs and the
//       scaling strategies' GetEffectiveMaxScale(maxScale, running, pending, maxReplicaCount, scaleTo):
//       default:  effectiveMaxScale = maxScale - running
//       accurate: maxScale + running > maxReplicaCount ? maxReplicaCount - running
//                                                       : maxScale - pending
//       eager:    effectiveMaxScale = min(maxReplicaCount - running - pending, maxScale),
//                 scaleTo = maxReplicaCount
//     running < minReplicaCount: scaleTo = effectiveMaxScale = minReplicaCount - running; otherwise
//     the strategy gets running - minReplicaCount. effectiveMaxScale < 0 counts as 0. Jobs are
//     created only while the trigger is active (queueLength > activation value 0, or
//     minReplicaCount > 0): min(scaleTo, effectiveMaxScale) of them.
//   "running" is KEDA's getRunningJobCount: every Job not finished (Complete or Failed), pending
//   ones included; "pending" is getPendingJobCount: a Job not finished whose pods are not all
//   through scalingStrategy.pendingPodConditions, or, without conditions, none of whose pods is
//   Running or Succeeded.
//   keda-docs content/docs/2.x/concepts/scaling-jobs.md ("Scaling strategy") and
//   reference/scaledjob-spec.md for the defaults (pollingInterval 30, maxReplicaCount 100,
//   successful/failedJobsHistoryLimit 100, strategy default).
// The custom strategy is not modelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpufleet::replica_autoscaling {

/// scalingStrategy.strategy.
enum class ScaledJobStrategy { kDefault, kAccurate, kEager };

/// "default", "accurate", "eager"; nullopt for anything else.
std::optional<ScaledJobStrategy> parse_scaled_job_strategy(std::string_view name);
std::string_view scaled_job_strategy_name(ScaledJobStrategy strategy);

/// What KEDA reads at a poll.
struct ScaledJobInputs {
  double queue_length = 0;          ///< the trigger's metric (messages), >= 0
  double target_value = 1;          ///< messages per job (the trigger's target), > 0
  int64_t max_replica_count = 100;  ///< maxReplicaCount
  int64_t min_replica_count = 0;    ///< minReplicaCount
  int64_t running_jobs = 0;         ///< Jobs not finished (pending ones included), as KEDA counts
  int64_t pending_jobs = 0;         ///< of those, the pending ones
};

/// The decision, with its intermediate values (for the poll log).
struct ScaledJobDecision {
  bool active = false;              ///< the trigger is active (queue > 0) or minReplicaCount > 0
  int64_t scale_to = 0;             ///< scaleTo after the strategy
  int64_t max_scale = 0;            ///< ceil(min(queue / target, maxReplicaCount))
  int64_t effective_max_scale = 0;  ///< after the strategy, at least 0
  int64_t jobs_to_create = 0;       ///< min(scaleTo, effectiveMaxScale) when active, else 0
};

/// KEDA's decision (see above). Throws std::invalid_argument for target_value <= 0 or a negative
/// count.
ScaledJobDecision scaled_job_decision(ScaledJobStrategy strategy, const ScaledJobInputs& in);

}  // namespace gpufleet::replica_autoscaling
