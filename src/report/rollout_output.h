// Writers for a `simulate` run's rollouts and service autoscalers (SimResult::rollouts,
// SimResult::service_scaling; sim/controllers/rolling_update.h, sim/controllers/service_autoscaling.h):
// their arrays in the result JSON (report/sim_output.h) and summary lines. Pure functions of the result.
//
// JSON "rollouts" (present when the workload has rollouts):
//   [{"service", "revision", "started_s", "completed_s" (null: not by the horizon), "superseded_s"
//     (null: not), "duration_s" (null when not completed), "max_surge", "max_unavailable",
//     "replicas_created", "replicas_removed", "max_pods", "min_available"}]
// JSON "service_autoscalers" (present when the workload has service autoscalers):
//   [{"service", "autoscaler", "min_desired", "max_desired",
//     "evaluations": [{"time_s", "spec_replicas", "status_replicas", "ready", "desired"}]}]
// Seconds rounded to 1e-3.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/results/sim_result.h"

namespace gpufleet::io {

nlohmann::ordered_json rollouts_json(const sim::SimResult& result);
nlohmann::ordered_json service_autoscalers_json(const sim::SimResult& result);
/// One line per rollout (start, end or "not complete", surge and unavailable, replicas created and
/// removed, the most pods and fewest available) and per service autoscaler (evaluations, the wanted
/// count's range). Empty without either.
std::string rollouts_summary_text(const sim::SimResult& result);

}  // namespace gpufleet::io
