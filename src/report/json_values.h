// Numbers as the JSON outputs and reports write them: rounded to a fixed unit, and pending-time
// percentiles. Shared by the writers of report/.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/results/sim_result.h"

namespace gpufleet::io {

/// `v` rounded to the nearest multiple of 1 / per_unit (per_unit 1e6: micro-units; halves away from
/// zero, std::round). Dividing by an exact power of ten keeps the shortest decimal form in JSON
/// (116.058867, not 116.05886699999999). For the numbers the JSON outputs and reports embed.
double round_to(double v, double per_unit);

/// {"p50", "p95", "p99" (seconds rounded to 1e-3, null without samples), "samples"}.
nlohmann::json pending_stats_json(const sim::PendingStats& stats);

}  // namespace gpufleet::io
