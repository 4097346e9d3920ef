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
// "tensor_parallel_size", "num_replicas", "kv_cache_tokens", "preemptions").
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "inference/bench_serve.h"

namespace gpufleet::io {

/// The run's settings echoed in the outputs.
struct BenchServeSettings {
  std::string model;
  std::string gpu;
  int32_t tensor_parallel_size = 1;
  int32_t num_replicas = 1;
  int64_t num_prompts = 0;
  double request_rate = 0;   ///< +inf = all at once
  double burstiness = 1;
  int32_t max_concurrency = 0;  ///< 0 = none
  int64_t kv_cache_tokens = 0;  ///< per replica
};

/// The result block, ending with a newline.
std::string bench_serve_text(const BenchServeSettings& settings, const inference::BenchServeResult& result);
/// The result JSON object.
nlohmann::ordered_json bench_serve_json(const BenchServeSettings& settings, const inference::BenchServeResult& result);

}  // namespace gpufleet::io
