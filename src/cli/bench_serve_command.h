// `gpufleet bench-serve`: vLLM's serving benchmark (`vllm bench serve`) against one simulated vLLM
// replica or a deployment of several (inference/bench_serve.h); prints vLLM's result block
// (report/bench_serve_output.h). docs/bench-serve.md.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace gpufleet::cli {

struct BenchServeCommandOptions {
  // The server (vllm serve's engine arguments, inference/engine_args.h).
  std::string model;
  std::string gpu;
  int32_t tensor_parallel_size = 1;
  std::string dtype = "auto";            ///< auto (= bf16), bf16, bfloat16, fp16, float16, half, fp8
  std::string kv_cache_dtype = "auto";   ///< auto (the activations' dtype: bf16 for fp8 weights), bf16, fp16, fp8
  double gpu_memory_utilization = 0.9;
  int32_t max_num_seqs = 0;              ///< 0 = vLLM's default for the GPU
  int32_t max_num_batched_tokens = 0;    ///< 0 = vLLM's default for the GPU
  int32_t max_model_len = 0;             ///< 0 = the model's context
  int32_t num_replicas = 1;
  std::string serving_catalog_path;      ///< empty = built in
  std::string step_profile_path;         ///< a measured step-time table instead of the roofline (readers/serving/step_profile.h)
  // The client (vllm bench serve).
  int64_t num_prompts = 1000;
  double request_rate = std::numeric_limits<double>::infinity();
  double burstiness = 1;
  int32_t max_concurrency = 0;           ///< 0 = none
  int32_t random_input_len = 1024;
  int32_t random_output_len = 128;
  double random_range_ratio = 0;
  std::string trace_path;                ///< Azure CSV or Mooncake JSONL instead of the random dataset
  double time_scale = 1;
  int64_t seed = 0;
  std::string json_path;
  // The router (docs/inference-routing.md).
  /// Comma-separated routing policies (inference::routing_policy_name): one runs vLLM's result
  /// block; several run the same load once per policy and print one comparison table.
  std::string routing = "least-outstanding";
  /// EndpointPickerConfig / InferencePool / InferenceObjective YAML for endpoint-picker (empty: the
  /// EPP's default configuration, priority 0).
  std::string endpoint_picker_config_path;
  std::string inference_objective;       ///< the InferenceObjective the requests name; "" = the file's only one
  double usd_per_gpu_hour = 0;           ///< the comparison table's cost columns (0: not shown)
};

/// Runs the command: the result block on stdout, the JSON written atomically. Returns 0. Throws
/// UsageError / InputError (exit 2) for bad arguments, an unknown model or GPU (listing the known
/// ones), a replica that cannot start (the KV budget's message) and bad trace or catalog files.
int run_bench_serve_command(const BenchServeCommandOptions& options);

}  // namespace gpufleet::cli
