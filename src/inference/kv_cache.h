// The KV-cache capacity of one vLLM replica: what is left of GPU memory x gpu_memory_utilization
// after weights, the activation peak and non-torch allocations, in blocks of block_size tokens
// (vllm/v1/worker/gpu_worker.py determine_available_memory; vllm/v1/core/kv_cache_utils.py).
#pragma once

#include <cstdint>
#include <string>

#include "inference/catalog.h"
#include "inference/engine_args.h"

namespace gpufleet::inference {

/// Per GPU of the replica (weights and KV shard by tensor_parallel_size), bytes.
struct KvCacheBudget {
  double usable_bytes = 0;       ///< memory x gpu_memory_utilization (a time slice: its share)
  double weight_bytes = 0;       ///< weights / TP
  double activation_bytes = 0;   ///< activation peak of the profile run
  double non_torch_bytes = 0;
  double kv_bytes = 0;           ///< usable - the three above (negative: the model does not fit)
  int64_t num_blocks = 0;        ///< floor(kv_bytes / (block_size x KV bytes per token per GPU)), >= 0
  int64_t num_tokens = 0;        ///< num_blocks x block_size ("GPU KV cache size: N tokens")
  /// Empty when the replica can start; else why not, as one sentence with the figures (memory
  /// missing, and what would fit: a larger TP, fp8, a lower max_model_len), e.g.
  /// "Llama-3.1-70B bf16 needs 141.1 GB of weights per GPU at TP 1, 69.8 GB more than the 72.0 GB
  /// usable on H100-80GB; tensor_parallel_size 2 or dtype fp8 would fit".
  std::string error;
};

/// The budget for `args` on `hw`. The replica cannot start (error set) when kv_bytes holds fewer
/// tokens than max_model_len (vLLM's "max_model_len ... larger than the maximum number of tokens that
/// can be stored in KV cache"). Throws std::invalid_argument for a model or GPU not in `catalog`.
KvCacheBudget kv_cache_budget(const ServingCatalog& catalog, const EngineArgs& args, const ReplicaHardware& hw);

}  // namespace gpufleet::inference
