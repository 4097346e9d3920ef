// Reader of the file one shard of a sharded `gpufleet plan` writes (report/plan_output.h
// plan_shard_json): the race results of the candidates whose number is the shard's index modulo the
// shard count, read back by `plan --merge` (a Kubernetes Indexed Job's merge step).
//
// Format (JSON, one object):
//   {"apiVersion": "plan.gpufleet.io/v1", "kind": "PlanShard",
//    "fingerprint": "<hex>",     the inputs' fingerprint: every shard of one plan has the same
//    "shard": 0, "shards": 4,    0 <= shard < shards <= kMaxPlanShards
//    "candidates": 120,          the candidate count of the plan, <= kMaxPlanCandidates
//    "results": [{"index", "label", "horizon_s", "cost_usd", "on_demand_usd", "spot_usd",
//                 "reserved_usd", "gpu_allocated_hours", "gpu_billed_hours", "spot_billed_gpu_hours",
//                 "lost_gpu_hours", "kept_allocation_pct", "pending_p99_s" (number or null),
//                 "production_pending_p99_s" (number or null), "pods_completed", "pods_failed",
//                 "pods_pending", "restarts"}, ...]}
// Every key is required, no other key is allowed; numbers are finite and >= 0; a result's index is
// shard modulo shards and below candidates. Limits: JsonRequestLimits (readers/formats/input_limits.h).
// Errors: InputError naming the file and the field ("results[3].cost_usd: expected a number").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/plan/candidate_result.h"

namespace gpufleet::io {

inline constexpr size_t kMaxPlanShards = 10'000;       ///< an Indexed Job's completions, at most
inline constexpr size_t kMaxPlanCandidates = 1'000'000;

struct PlanShard {
  std::string fingerprint;
  size_t shard = 0, shards = 1, candidates = 0;
  std::vector<plan::CandidateResult> results;
};

/// Parses one shard file's text; `source` names it in errors. Throws InputError.
PlanShard parse_plan_shard(std::string_view text, const std::string& source);

/// read_yaml_file's size limit, then parse_plan_shard. Throws InputError.
PlanShard read_plan_shard(const std::string& path);

}  // namespace gpufleet::io
