// `gpufleet bench-serve`: vLLM's serving benchmark (`vllm bench serve`) against one simulated vLLM
// replica or a deployment of several (inference/bench_serve.h); prints vLLM's result block
// (report/bench_serve_output.h). docs/bench-serve.md.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
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
  std::string engine_version;            ///< --engine-version; empty = the catalog's default set
  std::string step_profile_path;         ///< a measured step-time table instead of the roofline (readers/serving/step_profile.h)
  // The client (vllm bench serve).
  std::string backend = "vllm";          ///< vllm, openai (/v1/completions) or openai-chat (/v1/chat/completions)
  std::string endpoint = "/v1/completions";  ///< the URL path (vllm bench serve's default)
  int64_t num_prompts = 1000;
  double request_rate = std::numeric_limits<double>::infinity();
  double burstiness = 1;
  int32_t max_concurrency = 0;           ///< 0 = none
  std::string dataset_name = "random";    ///< random, sharegpt or sonnet (inference/dataset_lengths.h)
  int32_t random_input_len = 1024;
  int32_t random_output_len = 128;
  double random_range_ratio = 0;
  int32_t sonnet_input_len = 550;
  int32_t sonnet_output_len = 150;
  int32_t sonnet_prefix_len = 200;
  std::string trace_path;                ///< Azure CSV or Mooncake JSONL instead of a dataset
  double time_scale = 1;
  int64_t seed = 0;
  std::string json_path;
  // Disaggregated prefill/decode (inference/disaggregated_deployment.h, docs/disaggregated-serving.md):
  // on when prefill_replicas > 0. Each pool's GPU and TP default to --gpu / --tensor-parallel-size.
  int32_t prefill_replicas = 0;
  std::string prefill_gpu;
  int32_t prefill_tensor_parallel_size = 0;  ///< 0 = --tensor-parallel-size
  int32_t decode_replicas = 0;               ///< 0 = --num-replicas
  std::string decode_gpu;
  int32_t decode_tensor_parallel_size = 0;   ///< 0 = --tensor-parallel-size
  std::string kv_transfer_link = "rdma";     ///< nvlink, rdma, tcp (inference::kv_transfer_link)
  std::optional<double> kv_transfer_gbps;        ///< the link's bandwidth in Gb/s instead of the preset's, [0.001, 1e6]
  std::optional<double> kv_transfer_latency_ms;  ///< the fixed cost per transfer instead of the preset's, [0, 1e6] ms
  int32_t max_local_prefill_length = 0;      ///< Dynamo's: prompts up to this are prefilled by the decode pool
  std::string first_token_from = "prefill";  ///< prefill, decode (inference::FirstTokenFrom)
  // Cost: a price catalog (docs/plan.md, kind PriceCatalog) gives each GPU's on-demand price.
  std::string price_catalog_path;
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
/// ones), a replica that cannot start (the KV budget's message), an unknown --dataset-name and bad
/// trace or catalog files.
int run_bench_serve_command(const BenchServeCommandOptions& options);

}  // namespace gpufleet::cli
