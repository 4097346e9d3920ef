// Writers for the KEDA ScaledJobs of a `simulate` run (SimResult::scaled_jobs,
// sim/controllers/scaled_job.h): the "scaled_jobs" array of the result JSON (report/sim_output.h)
// and one summary line per ScaledJob. Pure functions of the result.
//
// JSON "scaled_jobs" (present when the workload has scaledJobs):
//   [{"name", "strategy", "jobs_created", "jobs_succeeded", "jobs_failed", "succeeded_kept",
//     "failed_kept", "jobs_deleted", "messages_arrived", "messages_taken", "queue_at_end",
//     "created_per_poll": [n, ...],
//     "polls": [{"time_s", "queue_length", "running", "pending", "created"}],
//     "queue": [{"time_s", "messages"}]}]
// Seconds and messages rounded to 1e-3.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/results/sim_result.h"

namespace gpufleet::io {

/// The "scaled_jobs" array above.
nlohmann::ordered_json scaled_jobs_json(const sim::SimResult& result);
/// One line per ScaledJob: strategy, jobs created in all and per poll (runs of equal counts as
/// "n xk"), succeeded, failed, messages arrived / taken / left. Empty without ScaledJobs.
std::string scaled_jobs_summary_text(const sim::SimResult& result);

}  // namespace gpufleet::io
