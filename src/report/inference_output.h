// Writers for the inference services of a `simulate` run (sim/results/inference_result.h): their JSON
// objects (the "inference" list of the result JSON, report/sim_output.h), the per-minute time series CSV
// and the summary lines. Pure functions of the result.
//
// JSON, one object per service:
//   {"service", "model", "traffic", "autoscaler", "notes": ["..."], "slo": {"ttft_p99_s", "tpot_p99_s"} (null = none),
//    "requests": {"arrived", "finished", "timed_out", "dropped", "unfinished"}, "preemptions",
//    "tokens": {"prompt", "output"},
//    "ttft_s" / "tpot_s" / "e2e_s": {"mean", "p50", "p90", "p99", "max", "samples"},
//    "slo_attainment", "max_ready_replicas",
//    "cold_starts": {"count", "not_started", "created_to_ready_s": {...same stats...},
//                    "log": [{"replica", "node", "created_s", "bound_s", "image_pull_s", "weight_load_s",
//                             "engine_start_s", "ready_s" (null: never ready)}]},
//    "gpu_hours", "cost_usd", "usd_per_million_tokens", "usd_per_million_output_tokens"}
// Seconds rounded to 1e-6, money to 1e-6 USD.
//
// CSV: header `service,time_s,arrivals,finished,timed_out,ttft_p99_s,desired_replicas,ready_replicas,
// starting_replicas,router_waiting,engine_waiting,engine_running,kv_cache_usage,cost_usd_per_hour`,
// one row per service and sample (simulated minute); ttft_p99_s empty when no first token came in it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/results/inference_result.h"

namespace gpufleet::io {

/// The JSON list above, one object per service in result order.
nlohmann::ordered_json inference_results_json(const std::vector<sim::InferenceServiceResult>& services);
/// The CSV above: header, then every service's rows in result order, each in time order.
std::string inference_timeseries_csv(const std::vector<sim::InferenceServiceResult>& services);
/// Lines per service: requests, TTFT/TPOT percentiles, SLO attainment, replicas, cold starts, cost.
std::string inference_summary_text(const std::vector<sim::InferenceServiceResult>& services);

/// `gpufleet compare`'s table of inference services: one row per configuration and service (config,
/// service, autoscaler, TTFT p50 / p99 and TPOT p99 in seconds, SLO met, timed out + dropped, max
/// ready replicas, cold starts, GPU-hours, cost, USD per million tokens), columns aligned; "" when no
/// configuration has services. `labels` and `results` are parallel.
std::string inference_compare_table(const std::vector<std::string>& labels,
                                    const std::vector<const std::vector<sim::InferenceServiceResult>*>& results);

}  // namespace gpufleet::io
