// The KV-cache capacity of one vLLM replica: what is left of GPU memory x gpu_memory_utilization
// after weights, the activation peak and non-torch allocations, in blocks of block_size tokens
// (vllm/v1/worker/gpu_worker.py determine_available_memory; vllm/v1/core/kv_cache_utils.py).
//
// Per GPU of the replica, with the catalog's MemoryConstants (data/inference/catalog.yaml):
//   memory     = (hw.memory_mib or the GPU catalog's memory_mib) x 2^20 x (1 - cuda_reserved_fraction)
//                / time_slice_replicas                 (what torch.cuda.mem_get_info calls total)
//   usable     = memory x gpu_memory_utilization
//   weights    = params x bytes(dtype) / tensor_parallel_size
//   activation = activation_bytes_per_token_hidden x T x hidden
//                + activation_bytes_per_seq_vocab x min(max_num_seqs, T) x vocab,
//                T = max_num_batched_tokens in force (EngineArgs' or default_max_num_batched_tokens
//                of the device: the profile run's token count)
//   non_torch  = non_torch_bytes (+ non_torch_tensor_parallel_bytes when tensor_parallel_size > 1)
//   kv         = usable - weights - activation - non_torch
//   per token  = 2 x layers x max(1, kv_heads / TP) x head_dim x bytes(kv_cache_dtype): KV heads shard
//                over TP and are replicated when TP exceeds them (vLLM's get_num_kv_heads)
// The figures are checked against vLLM's own split on H100 in tests/inference/kv_cache_test.cpp and
// docs/inference-model.md.
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
  // Added beside the interface: the settings the budget used, for the engine's limits.
  double kv_bytes_per_token = 0;       ///< per GPU (see the top of this file)
  int32_t max_model_len = 0;           ///< in force: EngineArgs' or the model's max_context_tokens
  int32_t max_num_batched_tokens = 0;  ///< in force: EngineArgs' or vLLM's default for the device
  /// Empty when the replica can start; else why not, as one sentence with the figures (memory
  /// missing, and what would fit: a larger TP, fp8, a lower max_model_len), in GiB as vLLM logs, e.g.
  /// "Llama-3.1-70B bf16 needs 131.4 GiB of weights per GPU at tensor_parallel_size 1 (+ 4.8 GiB
  /// activation peak, 0.13 GiB non-torch, 0.3 GiB KV cache for max_model_len 1024), 65.4 GiB more than
  /// the 71.3 GiB usable on H100-80GB at gpu_memory_utilization 0.9; tensor_parallel_size 2 or dtype
  /// fp8 would fit", or, when the weights fit: "Llama-3.1-8B bf16 at tensor_parallel_size 1 on A10G
  /// leaves 3.84 GiB per GPU for KV cache, 31494 tokens, fewer than max_model_len 131072 (16.00 GiB,
  /// 12.16 GiB more than the 20.1 GiB usable at gpu_memory_utilization 0.9); tensor_parallel_size 2 or
  /// max_model_len 31494 would fit".
  std::string error;
};

/// The budget for `args` on `hw`. The replica cannot start (error set) when kv_bytes holds fewer
/// tokens than max_model_len (vLLM's "max_model_len ... larger than the maximum number of tokens that
/// can be stored in KV cache"), and also, as vLLM refuses them, when: the GPU lacks bf16 (T4) and
/// dtype or kv_cache_dtype is bf16, or fp8 is asked of such a GPU; num_attention_heads is not a
/// multiple of tensor_parallel_size; max_model_len exceeds the model's max_context_tokens. Memory
/// errors say how many GiB are missing and which of tensor_parallel_size 2/4/8, dtype fp8,
/// kv_cache_dtype fp8 or a lower max_model_len would fit. Throws std::invalid_argument for a model
/// or GPU not in `catalog` (or not in the GPU catalog, model/gpu_catalog.h) and for arguments out of
/// range (tensor_parallel_size < 1, gpu_memory_utilization outside (0, 1], block_size < 1,
/// max_num_seqs < 1, max_num_batched_tokens or max_model_len < 0, MIG fractions outside (0, 1],
/// time_slice_replicas < 1, memory_mib < 0).
KvCacheBudget kv_cache_budget(const ServingCatalog& catalog, const EngineArgs& args, const ReplicaHardware& hw);

}  // namespace gpufleet::inference
