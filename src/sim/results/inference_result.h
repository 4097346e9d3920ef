// What `simulate` reports for each inference service (inputs/sim/inference_service.h): latency, SLO
// attainment, requests, replicas over time, cold starts, GPU-hours and cost per token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpufleet::sim {

/// Percentiles by nearest rank over a set of samples, seconds; all 0 with no sample.
struct LatencySummary {
  int64_t samples = 0;
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

/// One simulated minute (sample interval) of a service: counts over the interval that ends at
/// time_s, gauges at time_s.
struct InferenceSample {
  double time_s = 0;
  int64_t arrivals = 0;             ///< requests that arrived in the interval
  int64_t finished = 0;             ///< requests that finished in it
  int64_t timed_out = 0;            ///< requests that timed out or were dropped in it
  std::optional<double> ttft_p99_s; ///< over requests that got their first token in it
  int32_t desired_replicas = 0;     ///< the Deployment's replica count (spec.replicas)
  int32_t ready_replicas = 0;       ///< serving
  int32_t starting_replicas = 0;    ///< bound, in their cold start
  int64_t router_waiting = 0;       ///< requests held at the router
  int64_t engine_waiting = 0;       ///< vllm:num_requests_waiting, summed over replicas
  int64_t engine_running = 0;       ///< vllm:num_requests_running, summed
  double kv_cache_usage = 0;        ///< mean over ready replicas, 0..1
  double cost_usd_per_hour = 0;     ///< the service's pods' charge rate
  /// A disaggregated service's roles (the counts above are their sums); -1 for an aggregated service.
  int32_t prefill_desired_replicas = -1, prefill_ready_replicas = -1;
  int32_t decode_desired_replicas = -1, decode_ready_replicas = -1;
};

/// One cold start: a replica's pod from creation to serving.
struct ColdStart {
  std::string replica;              ///< <service>-<ordinal>
  std::string node;
  double created_s = 0;             ///< the pod was created (the replica count was raised) or requeued
  double bound_s = 0;               ///< bound to a node (created..bound = waiting for a node)
  double image_pull_s = 0, weight_load_s = 0, engine_start_s = 0;
  double ready_s = -1;              ///< serving from; -1: stopped before it was ready
};

/// One role of a disaggregated service (inputs/sim/inference_service.h DisaggregatedRoleSpec).
struct DisaggregatedRoleResult {
  std::string item;                 ///< the role's pods' service item, <service>-prefill / -decode
  std::string autoscaler;           ///< its autoscaler's description ("" = none)
  int32_t tensor_parallel_size = 1;
  int32_t max_ready_replicas = 0;
  int64_t cold_starts = 0;
  double gpu_hours = 0;             ///< as InferenceServiceResult::gpu_hours, its pods only
  double cost_usd = 0;              ///< its pods' chargeback
};

/// What the disaggregated deployment counted (inference/disaggregated_deployment.h).
struct DisaggregationResult {
  std::string link;                 ///< e.g. "rdma 50 GB/s per GPU, 1 ms"
  std::string first_token_from;     ///< "prefill" | "decode"
  int32_t max_local_prefill_tokens = 0;
  int64_t remote_prefills = 0, local_prefills = 0, kv_transfers = 0;
  double kv_bytes_transferred = 0;
  double kv_transfer_mean_s = 0;    ///< over the transfers; 0 without any
  DisaggregatedRoleResult prefill, decode;
};

struct InferenceServiceResult {
  std::string service;
  std::string model;
  std::string traffic;              ///< InferenceServiceSpec::traffic_description
  std::string autoscaler;           ///< InferenceServiceSpec::autoscaler_description ("" = none)
  std::optional<double> slo_ttft_p99_s, slo_tpot_p99_s;
  std::vector<std::string> notes;   ///< InferenceServiceSpec::notes

  int64_t requests = 0;             ///< arrived within the horizon
  int64_t finished = 0;
  int64_t timed_out = 0;
  int64_t dropped = 0;              ///< longer than max_model_len, or no replica could ever serve
  int64_t unfinished = 0;           ///< still in flight at the horizon (not in the latency figures)
  int64_t preemptions = 0;          ///< engine preemptions (recompute), over all requests
  int64_t prompt_tokens = 0;        ///< of finished requests
  int64_t output_tokens = 0;        ///< of finished requests
  LatencySummary ttft, tpot, e2e;   ///< over finished requests (vLLM benchmark definitions)
  /// Requests that met the SLO / requests that ended (finished, timed out or dropped) or are still in
  /// flight at the horizon already past the TTFT limit; 1 without any; with no SLO, the finished
  /// fraction.
  double slo_attainment = 1;

  int64_t cold_starts = 0;          ///< replicas that became ready
  /// Replica pods bound where the engine cannot start (the model does not fit that pool's GPUs: a
  /// CrashLoopBackOff); the first one's reason is in notes.
  int64_t replicas_not_started = 0;
  LatencySummary cold_start;        ///< created -> ready, seconds
  std::vector<ColdStart> cold_start_log;
  int32_t max_ready_replicas = 0;
  double gpu_hours = 0;             ///< GPUs its pods held (sim/rules/cost.h pod_gpus_held) x hours bound
  double cost_usd = 0;              ///< its pods' chargeback (sim/rules/cost.h) over the horizon
  double usd_per_million_tokens = 0;         ///< cost / (prompt + output tokens of finished requests) x 1e6
  double usd_per_million_output_tokens = 0;  ///< cost / output tokens x 1e6
  std::vector<InferenceSample> timeseries;
  /// Set for a disaggregated service: its roles and KV transfers (the figures above are the service's).
  std::optional<DisaggregationResult> disaggregation;
};

}  // namespace gpufleet::sim
