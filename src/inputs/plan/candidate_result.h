// What one simulation of a planner's candidate gave: the figures a plan is judged by. Plain data. The
// planner (plan/search.h) makes them; a shard of a sharded plan writes them to a file
// (report/plan_output.h) and the merge step reads them back (readers/plan/plan_shard.h), so they are
// an input of the merge as much as an output of the race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpufleet::plan {

/// What one simulation of a candidate gave, the figures a plan is judged by.
struct CandidateResult {
  size_t index = 0;                 ///< the candidate's number in plan_candidates' list
  std::string label;
  double horizon_s = 0;
  double cost_usd = 0;
  double on_demand_usd = 0, spot_usd = 0, reserved_usd = 0;
  double gpu_allocated_hours = 0;   ///< SimResult::gpu_allocated_hours
  double gpu_billed_hours = 0;
  double spot_billed_gpu_hours = 0; ///< of gpu_billed_hours, on spot nodes
  double lost_gpu_hours = 0;        ///< work lost to restarts, evictions and consolidation moves
  /// (allocated - lost) / billed x 100: only work that is kept counts. 0 without billed GPU-hours.
  double kept_allocation_pct = 0;
  std::optional<double> pending_p99_s;
  std::optional<double> production_pending_p99_s;
  int64_t pods_completed = 0, pods_failed = 0, pods_pending = 0;
  int64_t restarts = 0;             ///< SimResult::evictions (spot, scale-down moves, consolidation)
  double spot_share() const { return gpu_billed_hours > 0 ? spot_billed_gpu_hours / gpu_billed_hours : 0; }
};

}  // namespace gpufleet::plan
