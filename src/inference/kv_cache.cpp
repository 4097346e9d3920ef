#include "inference/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace gpufleet::inference {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr int32_t kMaxSuggestedTp = 8;  // GPUs in one node: the largest TP the suggestions try

double gib(double bytes) { return bytes / kGiB; }

// The arithmetic of the budget (top of kv_cache.h), without the start-up checks and suggestions.
KvCacheBudget compute(const ServingCatalog& catalog, const LlmModel& model, const EngineArgs& args,
                      const ReplicaHardware& hw) {
  const MemoryConstants& mem = catalog.memory;
  const int32_t tp = args.tensor_parallel_size;
  KvCacheBudget b;
  const double memory =
      static_cast<double>(device_memory_mib(hw)) * kMiB * (1 - mem.cuda_reserved_fraction) / hw.time_slice_replicas;
  b.usable_bytes = memory * args.gpu_memory_utilization;
  b.weight_bytes = weight_bytes(model, args.dtype) / tp;
  b.max_num_batched_tokens = effective_max_num_batched_tokens(args, hw);
  const double tokens = b.max_num_batched_tokens;
  const double seqs = std::min<double>(args.max_num_seqs, tokens);
  b.activation_bytes = mem.activation_bytes_per_token_hidden * tokens * model.hidden +
                       mem.activation_bytes_per_seq_vocab * seqs * model.vocab;
  b.non_torch_bytes = mem.non_torch_bytes + (tp > 1 ? mem.non_torch_tensor_parallel_bytes : 0);
  b.kv_bytes = b.usable_bytes - b.weight_bytes - b.activation_bytes - b.non_torch_bytes;
  const double kv_heads_per_gpu = std::max(1.0, static_cast<double>(model.kv_heads) / tp);
  b.kv_bytes_per_token = 2.0 * model.layers * kv_heads_per_gpu * model.head_dim * precision_bytes(args.kv_cache_dtype);
  b.num_blocks = b.kv_bytes > 0 ? static_cast<int64_t>(std::floor(b.kv_bytes / (args.block_size * b.kv_bytes_per_token))) : 0;
  b.num_tokens = b.num_blocks * args.block_size;
  b.max_model_len = args.max_model_len > 0 ? args.max_model_len : model.max_context_tokens;
  return b;
}

// The bytes missing for max_model_len tokens of KV cache (<= 0: it fits).
double missing_bytes(const KvCacheBudget& b) {
  return static_cast<double>(b.max_model_len) * b.kv_bytes_per_token - b.kv_bytes;
}

bool fits(const KvCacheBudget& b) { return missing_bytes(b) <= 0; }

}  // namespace

KvCacheBudget kv_cache_budget(const ServingCatalog& catalog, const EngineArgs& args, const ReplicaHardware& hw) {
  validate_engine_args(args);
  validate_replica_hardware(hw);
  const LlmModel* model = &catalog.model(args.model);
  const GpuPerformance* gpu = &catalog.gpu(hw.gpu);

  KvCacheBudget b = compute(catalog, *model, args, hw);
  const int32_t tp = args.tensor_parallel_size;

  // vLLM's refusals before memory (vllm/v1/worker/gpu_worker.py _check_if_gpu_supports_dtype;
  // vllm/config/parallel.py verify_with_model_config; vllm/config/model.py max_model_len check).
  if (!gpu->bf16_supported) {
    for (const Precision p : {args.dtype, args.kv_cache_dtype}) {
      if (p == Precision::kBf16) {
        b.error = fmt::format("{} does not support bf16 (compute capability below 8.0, which vLLM refuses); "
                              "use dtype fp16", gpu->name);
        return b;
      }
      if (p == Precision::kFp8) {
        b.error = fmt::format("{} cannot run fp8 (vLLM's FP8 kernels need compute capability 8.0 or above); "
                              "use dtype fp16", gpu->name);
        return b;
      }
    }
  }
  if (model->heads % tp != 0) {
    b.error = fmt::format("{} has {} attention heads, not a multiple of tensor_parallel_size {}", model->name,
                          model->heads, tp);
    return b;
  }
  if (b.max_model_len > model->max_context_tokens) {
    b.error = fmt::format("max_model_len {} is above {}'s max_context_tokens {} (max_position_embeddings)",
                          b.max_model_len, model->name, model->max_context_tokens);
    return b;
  }
  if (fits(b)) return b;

  // What is missing, and what would fit.
  const double kv_needed = static_cast<double>(b.max_model_len) * b.kv_bytes_per_token;
  const double need = b.weight_bytes + b.activation_bytes + b.non_torch_bytes + kv_needed;
  std::vector<std::string> would_fit;
  for (int32_t t = tp + 1; t <= kMaxSuggestedTp; ++t) {
    if ((t & (t - 1)) != 0 || model->heads % t != 0) continue;  // powers of two dividing the heads
    EngineArgs a = args;
    a.tensor_parallel_size = t;
    if (fits(compute(catalog, *model, a, hw))) {
      would_fit.push_back(fmt::format("tensor_parallel_size {}", t));
      break;
    }
  }
  // fp8 is no way out on a GPU that vLLM refuses it on (the refusals above).
  if (args.dtype != Precision::kFp8 && gpu->bf16_supported) {
    EngineArgs a = args;
    a.dtype = Precision::kFp8;
    if (fits(compute(catalog, *model, a, hw))) would_fit.push_back("dtype fp8");
  }
  if (args.kv_cache_dtype != Precision::kFp8 && b.kv_bytes > 0 && gpu->bf16_supported) {
    EngineArgs a = args;
    a.kv_cache_dtype = Precision::kFp8;
    if (fits(compute(catalog, *model, a, hw))) would_fit.push_back("kv_cache_dtype fp8");
  }
  if (b.kv_bytes > 0) {
    const int64_t len = static_cast<int64_t>(std::floor(b.kv_bytes / b.kv_bytes_per_token));
    if (len >= args.block_size) would_fit.push_back(fmt::format("max_model_len {}", len));
  }
  std::string what;
  if (b.kv_bytes <= 0) {
    what = fmt::format("{} {} needs {:.1f} GiB of weights per GPU at tensor_parallel_size {} (+ {:.1f} GiB activation "
                       "peak, {:.2f} GiB non-torch, {:.1f} GiB KV cache for max_model_len {}), {:.1f} GiB more than "
                       "the {:.1f} GiB usable on {} at gpu_memory_utilization {}",
                       model->name, precision_name(args.dtype), gib(b.weight_bytes), tp, gib(b.activation_bytes),
                       gib(b.non_torch_bytes), gib(kv_needed), b.max_model_len, gib(need - b.usable_bytes),
                       gib(b.usable_bytes), gpu->name, args.gpu_memory_utilization);
  } else {
    what = fmt::format("{} {} at tensor_parallel_size {} on {} leaves {:.2f} GiB per GPU for KV cache, {} tokens, "
                       "fewer than max_model_len {} ({:.2f} GiB, {:.2f} GiB more than the {:.1f} GiB usable at "
                       "gpu_memory_utilization {})",
                       model->name, precision_name(args.dtype), tp, gpu->name, gib(b.kv_bytes),
                       static_cast<int64_t>(std::floor(b.kv_bytes / b.kv_bytes_per_token)), b.max_model_len,
                       gib(kv_needed), gib(missing_bytes(b)), gib(b.usable_bytes), args.gpu_memory_utilization);
  }
  if (would_fit.empty()) {
    b.error = fmt::format("{}; nothing fits on {}: no tensor_parallel_size up to {}, fp8 or shorter max_model_len",
                          what, gpu->name, kMaxSuggestedTp);
  } else {
    std::string list;
    for (size_t i = 0; i < would_fit.size(); ++i)
      list += (i == 0 ? "" : (i + 1 == would_fit.size() ? " or " : ", ")) + would_fit[i];
    b.error = fmt::format("{}; {} would fit", what, list);
  }
  return b;
}

}  // namespace gpufleet::inference
