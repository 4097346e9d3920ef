// A vLLM engine's configuration, with vLLM's argument names (vllm/engine/arg_utils.py EngineArgs;
// `vllm serve --help`), and where it runs: which GPU, how many, and what share of one.
#pragma once

#include <cstdint>
#include <string>

#include "inference/catalog.h"

namespace gpufleet::inference {

struct EngineArgs {
  std::string model;                       ///< a catalog model name or alias
  int32_t tensor_parallel_size = 1;        ///< --tensor-parallel-size: GPUs per replica
  Precision dtype = Precision::kBf16;      ///< --dtype / --quantization fp8: the weights
  Precision kv_cache_dtype = Precision::kBf16;  ///< --kv-cache-dtype (auto = dtype; fp8)
  double gpu_memory_utilization = 0.9;     ///< --gpu-memory-utilization (0, 1]; vLLM 0.9 (0.92 in recent releases)
  int32_t max_num_seqs = 256;              ///< --max-num-seqs: most requests in a running batch
  /// --max-num-batched-tokens: token budget per step; 0 = vLLM's default for the GPU
  /// (default_max_num_batched_tokens).
  int32_t max_num_batched_tokens = 0;
  int32_t max_model_len = 0;               ///< --max-model-len; 0 = the model's max_context_tokens
  int32_t block_size = 16;                 ///< --block-size (vllm/config/cache.py DEFAULT_BLOCK_SIZE)
  bool enable_prefix_caching = true;       ///< --enable-prefix-caching (V1 default on)
  /// --shutdown-timeout, seconds: on SIGTERM (a pod deleted: scale-down, eviction) the engine takes no
  /// new request and finishes its in-flight ones for up to this long; 0 (vLLM's default) aborts them
  /// at once (vllm-project/vllm#34730). Kubernetes kills the pod after terminationGracePeriodSeconds
  /// (30 s by default), so a useful value is below it.
  double shutdown_timeout_s = 0;
};

/// What a replica runs on: a whole GPU (or tensor_parallel_size of them), a MIG device, or a
/// time-sliced replica of a GPU.
struct ReplicaHardware {
  std::string gpu;              ///< catalog GPU name (model/gpu_catalog.h), e.g. "H100-80GB"
  /// MIG: the fraction of compute (compute slices / 7) and of memory bandwidth (memory slices / 8)
  /// the device has, and its memory; 1 and 0 (= the whole GPU's) otherwise.
  double compute_fraction = 1;
  double bandwidth_fraction = 1;
  int64_t memory_mib = 0;       ///< per GPU; 0 = the GPU's memory_mib
  /// Time slicing (NVIDIA device plugin `sharing.timeSlicing.replicas`): replicas that share this GPU.
  /// Memory is not partitioned by the device plugin; each replica gets memory_mib / time_slice_replicas.
  int32_t time_slice_replicas = 1;
};

/// vLLM's default max_num_batched_tokens for the OpenAI server: 8,192 on GPUs with >= 70 GiB that
/// are not A100, else 2,048 (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, usage context
/// OPENAI_API_SERVER).
int32_t default_max_num_batched_tokens(const std::string& gpu, int64_t memory_mib);

/// Checks ranges, throwing std::invalid_argument naming the field: tensor_parallel_size >= 1,
/// gpu_memory_utilization in (0, 1], max_num_seqs >= 1, max_num_batched_tokens >= 0, max_model_len
/// >= 0, block_size >= 1. (Added beside the interface; kv_cache_budget and the step-time models use it.)
void validate_engine_args(const EngineArgs& args);
/// Checks ranges: compute and bandwidth fractions in (0, 1], memory_mib >= 0, time_slice_replicas >= 1.
void validate_replica_hardware(const ReplicaHardware& hw);
/// The memory of one GPU (or MIG device) as nvidia-smi reports it, MiB: hw.memory_mib, or the GPU
/// catalog's memory_mib (model/gpu_catalog.h) when 0. Not divided among time-sliced replicas. Throws
/// std::invalid_argument for a GPU the GPU catalog lacks.
int64_t device_memory_mib(const ReplicaHardware& hw);
/// max_num_batched_tokens in force: args' when > 0, else default_max_num_batched_tokens(hw.gpu,
/// device_memory_mib(hw)).
int32_t effective_max_num_batched_tokens(const EngineArgs& args, const ReplicaHardware& hw);

/// vLLM's default max_num_seqs for the OpenAI server, same split: 1,024 on GPUs with >= 70 GiB that
/// are not A100, else 256 (get_batch_defaults, as above). EngineArgs keeps 256 as its default; a
/// caller that wants vLLM's per-GPU default sets it from here. (Added beside the interface.)
int32_t default_max_num_seqs(const std::string& gpu, int64_t memory_mib);

}  // namespace gpufleet::inference
