#include "replica_autoscaling/scaled_job.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpufleet::replica_autoscaling {

std::optional<ScaledJobStrategy> parse_scaled_job_strategy(std::string_view name) {
  if (name == "default") return ScaledJobStrategy::kDefault;
  if (name == "accurate") return ScaledJobStrategy::kAccurate;
  if (name == "eager") return ScaledJobStrategy::kEager;
  return std::nullopt;
}

std::string_view scaled_job_strategy_name(ScaledJobStrategy strategy) {
  switch (strategy) {
    case ScaledJobStrategy::kAccurate: return "accurate";
    case ScaledJobStrategy::kEager: return "eager";
    default: return "default";
  }
}

ScaledJobDecision scaled_job_decision(ScaledJobStrategy strategy, const ScaledJobInputs& in) {
  if (!(in.target_value > 0)) throw std::invalid_argument("ScaledJob: the trigger's target value must be positive");
  if (in.queue_length < 0 || in.running_jobs < 0 || in.pending_jobs < 0 || in.max_replica_count < 0 || in.min_replica_count < 0)
    throw std::invalid_argument("ScaledJob: negative queue length or count");
  ScaledJobDecision d;
  // metrics.go: active when the queue is above the activation value (0), or minReplicaCount > 0.
  d.active = in.queue_length > 0 || in.min_replica_count > 0;
  const double max_value = std::min(in.queue_length / in.target_value, static_cast<double>(in.max_replica_count));
  d.max_scale = static_cast<int64_t>(std::ceil(max_value));
  int64_t scale_to = static_cast<int64_t>(std::ceil(in.queue_length));
  int64_t effective = 0;
  // scale_jobs.go getScalingDecision.
  if (in.running_jobs < in.min_replica_count) {
    scale_to = effective = in.min_replica_count - in.running_jobs;
  } else {
    const int64_t running = in.running_jobs - in.min_replica_count;
    switch (strategy) {
      case ScaledJobStrategy::kDefault:
        effective = d.max_scale - running;
        break;
      case ScaledJobStrategy::kAccurate:
        effective = d.max_scale + running > in.max_replica_count ? in.max_replica_count - running : d.max_scale - in.pending_jobs;
        break;
      case ScaledJobStrategy::kEager:
        effective = std::min(in.max_replica_count - running - in.pending_jobs, d.max_scale);
        scale_to = in.max_replica_count;
        break;
    }
  }
  d.effective_max_scale = std::max<int64_t>(effective, 0);
  d.scale_to = scale_to;
  // createJobs: nothing when effectiveMaxScale <= 0; else min(scaleTo, effectiveMaxScale).
  if (d.active && d.effective_max_scale > 0) d.jobs_to_create = std::min(scale_to, d.effective_max_scale);
  return d;
}

}  // namespace gpufleet::replica_autoscaling
