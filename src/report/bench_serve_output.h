// Writers for `gpufleet bench-serve` (inference/bench_serve.h): the result block as vLLM's
// `vllm bench serve` prints it, and its result JSON. Pure functions of the result.
//
// Text (vllm-project/vllm vllm/benchmarks/serve.py benchmark(): "{:<40} {:<10}" lines between
// 50-character rules): Successful requests, Failed requests, Maximum request concurrency (when
// set), Request rate configured (RPS) (when finite), Benchmark duration (s), Total input tokens,
// Total generated tokens, Request throughput (req/s), Output token throughput (tok/s), Peak
// concurrent requests, Total token throughput (tok/s); then Mean / Median / P99 of TTFT, TPOT (excl.
// 1st token) and ITL in ms. Figures with two decimals as vLLM prints them.
//
// JSON: vLLM's saved result keys (serve.py result dict): "duration", "completed", "failed",
// "total_input_tokens", "total_output_tokens", "request_throughput", "output_throughput",
// "total_token_throughput", "max_concurrent_requests", "{mean,median,std,p99}_{ttft,tpot,itl,e2el}_ms",
// plus the run's settings under their vLLM names ("model_id", "num_prompts", "request_rate" (null
// for inf), "burstiness" (null for inf), "max_concurrency" (null: none)) and gpufleet's ("gpu",
// "tensor_parallel_size", "num_replicas", "kv_cache_tokens", "preemptions", "dropped" (failed requests
// refused: longer than max_model_len, or shed by the endpoint picker), "cached_prompt_tokens" (prefix-cache
// hits of the completed requests)).
//
// Disaggregated runs add a "Disaggregated Prefill/Decode" section (pools, link, remote and local
// prefills, KV transfers and their mean time) and the JSON keys "prefill_gpu",
// "prefill_tensor_parallel_size", "prefill_replicas", "prefill_kv_cache_tokens", "kv_transfer_link",
// "kv_transfer_gb_s", "max_local_prefill_length", "first_token_from", "remote_prefills",
// "local_prefills", "kv_transfers", "kv_bytes_transferred", "mean_kv_transfer_ms". A priced run
// (--price-catalog) adds a "Cost" section and "gpus", "gpu_hours", "cost_usd",
// "usd_per_million_tokens".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inference/bench_serve.h"

namespace gpufleet::io {

/// The run's settings echoed in the outputs.
struct BenchServeSettings {
  std::string backend = "vllm";             ///< vllm bench serve's --backend (inference::BenchBackend)
  std::string endpoint = "/v1/completions";  ///< its --endpoint
  std::string model;
  std::string gpu;
  int32_t tensor_parallel_size = 1;
  int32_t num_replicas = 1;
  int64_t num_prompts = 0;
  double request_rate = 0;   ///< +inf = all at once
  double burstiness = 1;
  int32_t max_concurrency = 0;  ///< 0 = none
  int64_t kv_cache_tokens = 0;  ///< per replica (disaggregated: per decode replica)
  // Disaggregated runs (gpu, tensor_parallel_size, num_replicas, kv_cache_tokens: the decode pool's).
  bool disaggregated = false;
  std::string prefill_gpu;
  int32_t prefill_tensor_parallel_size = 1;
  int32_t prefill_replicas = 0;
  int64_t prefill_kv_cache_tokens = 0;
  std::string decode_gpu;
  int32_t decode_tensor_parallel_size = 1;
  std::string kv_transfer_link;
  double kv_transfer_gb_s = 0;
  int32_t max_local_prefill_length = 0;
  std::string first_token_from;
  // Cost (--price-catalog): GPUs x duration, at each GPU's cheapest on-demand price per GPU-hour.
  bool priced = false;
  int32_t gpus = 0;
  double gpu_hours = 0;
  double cost_usd = 0;
  double usd_per_million_tokens = 0;  ///< cost / (input + output tokens of the completed requests) x 1e6
};

/// One run of a routing comparison (`bench-serve --routing a,b,...`).
struct BenchServeRoutingRow {
  std::string routing;  ///< inference::routing_policy_name
  inference::BenchServeResult result;
};

/// GPU-hours of a run: replicas x tensor parallel size x duration (the replicas are up for the whole
/// benchmark).
double bench_serve_gpu_hours(const BenchServeSettings& settings, const inference::BenchServeResult& result);

/// The comparison table, one line per run: routing, completed, failed (of which shed/dropped), TTFT
/// p50 and p99 (ms), prefix-cache hit rate (cached prompt tokens / prompt tokens of the completed
/// requests, %), GPU-hours, and with usd_per_gpu_hour > 0 the cost (GPU-hours x price, USD) and USD per
/// million tokens (input + output of the completed requests). A heading line names the setup.
std::string bench_serve_routing_table(const BenchServeSettings& settings, const std::vector<BenchServeRoutingRow>& rows,
                                      double usd_per_gpu_hour);

/// The result block, ending with a newline.
std::string bench_serve_text(const BenchServeSettings& settings, const inference::BenchServeResult& result);
/// The result JSON object.
nlohmann::ordered_json bench_serve_json(const BenchServeSettings& settings, const inference::BenchServeResult& result);

}  // namespace gpufleet::io
