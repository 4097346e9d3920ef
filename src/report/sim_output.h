// Writers for `gpufleet simulate`: the JSON result, the per-minute time series CSV and the summary
// text. Pure functions of the result (the CLI writes the files with write_file_atomically).
//
// JSON (stable keys; new keys may be added):
//   {"policy": "gpufleet", "seed": 42, "horizon_s": 86400,
//    "cost_usd": x, "cost_by_pool": {"<pool>": x}, "cost_by_capacity_type": {"on-demand": x, "spot": x, "reserved": x},
//    "chargeback": {"<namespace>": x}, "idle_cost_usd": x, "reserved_unused_usd": x,
//    "gpu_allocation_pct_mean": x,
//    "pending_s": {"p50": x, "p95": x, "p99": x, "samples": n,
//                  "by_priority": {"<priority>": {"p50": x, "p95": x, "p99": x, "samples": n}},
//                  "production": {"p50": x, "p95": x, "p99": x, "samples": n, "min_priority": 1000}},
//    "spot_interruptions": n, "lost_gpu_hours": x, "evictions": n,
//    "nodes_scaled_up": n, "nodes_scaled_down": n,
//    "nodes_removed": {"total": n, "scale_down": n, "consolidation": n, "spot_reclaim": n, "not_ready_in_time": n, "other": n},
//    "nodes_consolidated": n,
//    "consolidation_restarts": n, "consolidation_moved_pods": n, "consolidation_lost_gpu_hours": x,
//    "pods": {"completed": n, "running": n, "pending": n, "failed": n},
//    "failed": [{"name": "<job or service-replica>", "pods": n, "reason": "..."}]}
// Money in USD rounded to 1e-6, percentages and hours to 1e-6, seconds to 1e-3; a percentile without
// samples is null. cost_by_capacity_type always has the three keys.
//
// CSV: header `time_s,nodes_<pool>...,gpus_allocated,gpus_billed,pending_pods,cost_usd_per_hour`,
// then `queue_<name>...` per KEDA ScaledJob (only with them: the queue length at the row's time), one
// row per sample (simulated minute), GPUs in whole GPUs with 3 decimals.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/results/sim_result.h"

namespace gpufleet::io {

/// The JSON document above (2-space indent, trailing newline; names that are not UTF-8 get U+FFFD).
std::string sim_result_json(const sim::SimResult& result);
/// The CSV above, header first, one row per simulated minute.
std::string sim_timeseries_csv(const sim::SimResult& result);
/// The human summary printed on stdout: cost by pool, capacity type and namespace, allocation,
/// pending percentiles, nodes scaled up and removed (by cause: SimResult::nodes_removed), spot and
/// consolidation figures and pod outcomes. Runs with a provisioning
/// report (SimResult::provisioning_report) add a provisioning line and, when pods are pending at the
/// horizon, one line per reason (pending_by_reason).
std::string sim_summary_text(const sim::SimResult& result);

/// Pending pods of one reason (SimResult::pending_at_horizon grouped by PendingPod::reason).
struct PendingReasonCount {
  std::string reason;  ///< "" when none was recorded
  int64_t units = 0;
  int64_t pods = 0;
};

/// `pending` grouped by reason: most pods first, then reason.
std::vector<PendingReasonCount> pending_by_reason(const std::vector<sim::PendingPod>& pending);

/// One configuration of `gpufleet compare`: its label, the pools file it came from and its run.
struct CompareEntry {
  std::string label;
  std::string pools_path;
  sim::SimResult result;
};

/// (baseline cost - cost) / baseline cost x 100; 0 when the baseline costs nothing.
double saving_pct(const sim::SimResult& baseline, const sim::SimResult& result);

/// `gpufleet compare --json`: {"workload": "...", "configs": [{"label", "pools", "saving_pct_vs_first",
/// "result": <the sim_result_json object>}]}, configurations in the order given.
std::string sim_compare_json(const std::string& workload, const std::vector<CompareEntry>& entries);

/// The side-by-side table on stdout: one row per configuration (cost, saving against the first,
/// cost by capacity type, idle, GPU allocation, p99 pending overall and for production pods, spot
/// interruptions, lost GPU-hours, nodes removed for any cause, nodes removed and pods restarted by
/// consolidation, pod outcomes),
/// columns aligned.
std::string sim_compare_table(const std::vector<CompareEntry>& entries);

}  // namespace gpufleet::io
