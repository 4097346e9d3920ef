// KV-cache capacity of one vLLM replica (inference/kv_cache.h) on the built-in catalog, against
// hand-computed budgets and vLLM's own memory split on H100.
//
// Constants used below (data/inference/catalog.yaml): cudaReservedFraction 0.00587,
// activationBytesPerTokenHidden 2.69, activationBytesPerSeqVocab 38.2, nonTorchGiB 0.13,
// nonTorchTensorParallelGiB 0.42. GiB = 2^30 bytes. GPU memory (model/gpu_catalog.h):
// H100-80GB 81,559 MiB, A100-80GB 81,920 MiB, A10G 23,028 MiB, V100-16GB 16,160 MiB, A40 46,068 MiB.
#include <string>

#include <gtest/gtest.h>

#include "inference/engine_args.h"
#include "inference/kv_cache.h"
#include "readers/serving/inference_catalog.h"

namespace gpufleet {
namespace {

using inference::EngineArgs;
using inference::KvCacheBudget;
using inference::Precision;
using inference::ReplicaHardware;

constexpr double kGiB = 1073741824.0;

const inference::ServingCatalog& cat() { return io::builtin_serving_catalog(); }

EngineArgs args_for(const std::string& model, int32_t tp) {
  EngineArgs a;
  a.model = model;
  a.tensor_parallel_size = tp;
  return a;
}

ReplicaHardware on(const std::string& gpu) {
  ReplicaHardware hw;
  hw.gpu = gpu;
  return hw;
}

// vLLM's measured split (llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md):
// Llama-3.1-8B-Instruct on one H100, gpu_memory_utilization 0.9, max-model-len 16,000, vLLM's H100
// defaults max_num_batched_tokens 8,192 and max_num_seqs 1,024: total 79.18 GiB, weights 14.99,
// activation 4.76, non-torch 0.13, KV cache 51.38 GiB.
TEST(KvCache, Llama8bOnH100ReproducesVllmsSplit) {
  EngineArgs a = args_for("meta-llama/Llama-3.1-8B-Instruct", 1);
  a.max_model_len = 16000;
  a.max_num_seqs = inference::default_max_num_seqs("H100-80GB", 81559);  // 1,024
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("H100-80GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  // memory = 81,559 MiB x (1 - 0.00587) = 81,080.25 MiB = 79.1799 GiB (vLLM: 79.18)
  // usable = 0.9 x 79.1799 = 71.2619 GiB (vLLM: 71.26)
  EXPECT_NEAR(b.usable_bytes / kGiB, 71.2619, 0.0005);
  // weights = 8.030e9 x 2 B = 16.06e9 B = 14.9570 GiB (vLLM: 14.99; 0.2% below: buffers not counted)
  EXPECT_NEAR(b.weight_bytes / kGiB, 14.9570, 0.0005);
  // activation = 2.69 x 8,192 x 4,096 + 38.2 x 1,024 x 128,256 = 90.26e6 + 5,016.9e6 B = 4.7565 GiB (vLLM: 4.76)
  EXPECT_EQ(b.max_num_batched_tokens, 8192);
  EXPECT_NEAR(b.activation_bytes / kGiB, 4.7565, 0.0005);
  EXPECT_NEAR(b.non_torch_bytes / kGiB, 0.13, 1e-9);
  // kv = 71.2619 - 14.9570 - 4.7565 - 0.13 = 51.4184 GiB; vLLM measured 51.38: within 0.1%.
  EXPECT_NEAR(b.kv_bytes / kGiB, 51.4184, 0.0005);
  EXPECT_NEAR(b.kv_bytes / kGiB, 51.38, 0.001 * 51.38);
  // blocks = floor(55,210,110,386 B / (16 x 131,072 B)) = floor(26,326.5) = 26,326; 421,216 tokens.
  EXPECT_EQ(b.kv_bytes_per_token, 131072);
  EXPECT_EQ(b.num_blocks, 26326);
  EXPECT_EQ(b.num_tokens, 26326 * 16);
  EXPECT_EQ(b.max_model_len, 16000);
}

// Llama-3.1-70B bf16, TP 4 on H100-80GB (defaults of the H100: 8,192 tokens, max_num_seqs 1,024):
//   usable     = 71.2619 GiB (as above)
//   weights    = 70.55e9 x 2 / 4 = 35.275e9 B = 32.8524 GiB
//   activation = 2.69 x 8,192 x 8,192 + 38.2 x 1,024 x 128,256 = 180.5e6 + 5,016.9e6 B = 4.8405 GiB
//   non-torch  = 0.13 + 0.42 = 0.55 GiB
//   kv         = 71.2619 - 32.8524 - 4.8405 - 0.55 = 33.0190 GiB = 35,453,877,398 B
//   per token  = 2 x 80 x (8 / 4) x 128 x 2 B = 81,920 B; blocks = floor(35,453,877,398 / 1,310,720) = 27,049
TEST(KvCache, Llama70bTp4OnH100) {
  EngineArgs a = args_for("Llama-3.1-70B", 4);
  a.max_num_seqs = 1024;
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("H100-80GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_NEAR(b.weight_bytes / kGiB, 32.8524, 0.0005);
  EXPECT_NEAR(b.activation_bytes / kGiB, 4.8405, 0.0005);
  EXPECT_NEAR(b.non_torch_bytes / kGiB, 0.55, 1e-9);
  EXPECT_NEAR(b.kv_bytes / kGiB, 33.0190, 0.0005);
  EXPECT_EQ(b.kv_bytes_per_token, 81920);
  EXPECT_EQ(b.num_blocks, 27049);
  EXPECT_EQ(b.num_tokens, 432784);
  EXPECT_EQ(b.max_model_len, 131072);  // the model's max_context_tokens; 432,784 >= 131,072
}

// The same on A100-80GB: vLLM keeps the small defaults on A100 (2,048 tokens, 256 sequences).
//   memory     = 81,920 MiB x (1 - 0.00587) = 81,439.1 MiB = 79.5304 GiB; usable 71.5774 GiB
//   activation = 2.69 x 2,048 x 8,192 + 38.2 x 256 x 128,256 = 45.13e6 + 1,254.2e6 B = 1.2101 GiB
//   kv         = 71.5774 - 32.8524 - 1.2101 - 0.55 = 36.9648 GiB = 39,690,675,294 B
//   blocks     = floor(39,690,675,294 / 1,310,720) = 30,281
TEST(KvCache, Llama70bTp4OnA100) {
  const KvCacheBudget b = inference::kv_cache_budget(cat(), args_for("Llama-3.1-70B", 4), on("A100-80GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.max_num_batched_tokens, 2048);
  EXPECT_NEAR(b.usable_bytes / kGiB, 71.5774, 0.0005);
  EXPECT_NEAR(b.activation_bytes / kGiB, 1.2101, 0.0005);
  EXPECT_NEAR(b.kv_bytes / kGiB, 36.9648, 0.0005);
  EXPECT_EQ(b.num_blocks, 30281);
}

// The measured FP8 TP 2 row of the same llm-d file: Llama-3.3-70B-FP8 on 2 x H100, KV 32.00 GiB per
// GPU. The model says 71.2619 - 70.55e9 / 2 B (32.8524 GiB) - 4.8405 - 0.55 = 33.019 GiB: 3.2% high,
// because the FP8 checkpoint keeps embeddings and lm_head in bf16 (vLLM loaded 33.88 GiB of weights,
// 1.03 more), which weight_bytes ignores.
TEST(KvCache, Llama70bFp8Tp2AgainstVllm) {
  EngineArgs a = args_for("meta-llama/Llama-3.3-70B-Instruct", 2);
  a.dtype = Precision::kFp8;
  a.max_num_seqs = 1024;
  a.max_model_len = 16000;
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("H100-80GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_NEAR(b.kv_bytes / kGiB, 33.019, 0.001);
  EXPECT_NEAR(b.kv_bytes / kGiB, 32.0, 0.035 * 32.0);
}

// Llama-3.1-70B bf16 on one H100: 131.4 GiB of weights against 71.3 usable.
//   need = 131.4096 (70.55e9 x 2 B) + 4.8405 + 0.13 + 40.0 (131,072 x 327,680 B) = 176.38 GiB;
//   missing = 176.38 - 71.26 = 105.1 GiB. TP 2 leaves 71.2619 - 65.7048 - 4.8405 - 0.55 = 0.167 GiB,
//   1,091 tokens: too few for 131,072; TP 4 fits (above). fp8 at TP 1 leaves 0.587 GiB: too few.
TEST(KvCache, ModelThatDoesNotFitSaysWhatIsMissingAndWhatWouldFit) {
  EngineArgs a = args_for("Llama-3.1-70B", 1);
  a.max_num_seqs = 1024;
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("H100-80GB"));
  EXPECT_LT(b.kv_bytes, 0);
  EXPECT_EQ(b.num_blocks, 0);
  EXPECT_EQ(b.num_tokens, 0);
  EXPECT_EQ(b.error,
            "Llama-3.1-70B bf16 needs 131.4 GiB of weights per GPU at tensor_parallel_size 1 (+ 4.8 GiB activation "
            "peak, 0.13 GiB non-torch, 40.0 GiB KV cache for max_model_len 131072), 105.1 GiB more than the 71.3 GiB "
            "usable on H100-80GB at gpu_memory_utilization 0.9; tensor_parallel_size 4 would fit");
  // With max_model_len 1,024, TP 2 (1,091 tokens) and fp8 (0.587 GiB = 1,922 tokens) both fit.
  a.max_model_len = 1024;
  EXPECT_EQ(inference::kv_cache_budget(cat(), a, on("H100-80GB")).error,
            "Llama-3.1-70B bf16 needs 131.4 GiB of weights per GPU at tensor_parallel_size 1 (+ 4.8 GiB activation "
            "peak, 0.13 GiB non-torch, 0.3 GiB KV cache for max_model_len 1024), 65.4 GiB more than the 71.3 GiB "
            "usable on H100-80GB at gpu_memory_utilization 0.9; tensor_parallel_size 2 or dtype fp8 would fit");
}

// Llama-3.1-8B bf16 on A10G (2,048 tokens, 256 sequences):
//   memory     = 23,028 MiB x (1 - 0.00587) = 22,892.8 MiB = 22.3563 GiB; usable = 20.1206 GiB
//   activation = 2.69 x 2,048 x 4,096 + 38.2 x 256 x 128,256 = 22.57e6 + 1,254.2e6 B = 1.1891 GiB
//   kv         = 20.1206 - 14.9570 - 1.1891 - 0.13 = 3.8445 GiB = 4,127,987,917 B -> 31,494 tokens of
//                131,072 B, fewer than max_model_len 131,072 (16.00 GiB, 12.16 GiB missing)
//   TP 2: 20.1206 - 7.4785 - 1.1891 - 0.55 = 10.903 GiB = 178,634 tokens of 65,536 B per GPU:
//         >= 131,072 fits; fp8 weights: 11.32 GiB / 131,072 B = 92,758 tokens: no;
//   fp8 KV: 3.8445 GiB / 65,536 B = 62,988 tokens: no; max_model_len 31,494 fits.
TEST(KvCache, KvShortOfMaxModelLenSuggestsTpAndShorterLength) {
  const KvCacheBudget b = inference::kv_cache_budget(cat(), args_for("Llama-3.1-8B", 1), on("A10G"));
  EXPECT_NEAR(b.kv_bytes / kGiB, 3.8445, 0.0005);
  EXPECT_EQ(b.error,
            "Llama-3.1-8B bf16 at tensor_parallel_size 1 on A10G leaves 3.84 GiB per GPU for KV cache, 31494 tokens, "
            "fewer than max_model_len 131072 (16.00 GiB, 12.16 GiB more than the 20.1 GiB usable at "
            "gpu_memory_utilization 0.9); tensor_parallel_size 2 or max_model_len 31494 would fit");
  EngineArgs a = args_for("Llama-3.1-8B", 1);
  a.max_model_len = 31494;
  EXPECT_TRUE(inference::kv_cache_budget(cat(), a, on("A10G")).error.empty());
  a.max_model_len = 31495;
  EXPECT_FALSE(inference::kv_cache_budget(cat(), a, on("A10G")).error.empty());
}

// Llama-3.2-1B fp16 on one V100-16GB (AWS p3.2xlarge), vLLM's small defaults (below 70 GiB: 2,048
// tokens, 256 sequences):
//   memory     = 16,160 MiB x (1 - 0.00587) = 16,065.14 MiB = 15.6886 GiB; usable 14.1198 GiB
//   weights    = 1.236e9 x 2 B = 2.472e9 B = 2.3022 GiB
//   activation = 2.69 x 2,048 x 2,048 + 38.2 x 256 x 128,256 = 11.28e6 + 1,254.2e6 B = 1.1786 GiB
//   kv         = 14.1198 - 2.3022 - 1.1786 - 0.13 = 10.5089 GiB = 11,283,858,781 B
//   per token  = 2 x 16 x 8 x 64 x 2 B = 32,768 B; blocks = floor(11,283,858,781 / 524,288) = 21,522
TEST(KvCache, Llama1bFp16OnV100) {
  EngineArgs a = args_for("Llama-3.2-1B", 1);
  a.dtype = Precision::kFp16;
  a.kv_cache_dtype = Precision::kFp16;
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("V100-16GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.max_num_batched_tokens, 2048);
  EXPECT_NEAR(b.usable_bytes / kGiB, 14.1198, 0.0005);
  EXPECT_NEAR(b.weight_bytes / kGiB, 2.3022, 0.0005);
  EXPECT_NEAR(b.activation_bytes / kGiB, 1.1786, 0.0005);
  EXPECT_NEAR(b.kv_bytes / kGiB, 10.5089, 0.0005);
  EXPECT_EQ(b.kv_bytes_per_token, 32768);
  EXPECT_EQ(b.num_blocks, 21522);
  EXPECT_EQ(b.num_tokens, 344352);
}

// Llama-3.1-8B fp16 does not fit one V100-16GB: 14.957 GiB of weights + 1.189 activation + 0.13
// against 14.120 usable. On the four of an AWS p3.8xlarge (TP 4):
//   weights    = 8.030e9 x 2 / 4 = 4.015e9 B = 3.7393 GiB
//   activation = 2.69 x 2,048 x 4,096 + 38.2 x 256 x 128,256 = 22.57e6 + 1,254.2e6 B = 1.1891 GiB
//   kv         = 14.1198 - 3.7393 - 1.1891 - 0.55 = 8.6414 GiB = 9,278,604,537 B
//   per token  = 2 x 32 x (8 / 4) x 128 x 2 B = 32,768 B; blocks = floor(9,278,604,537 / 524,288) = 17,697
//   (283,152 tokens >= the model's 131,072)
TEST(KvCache, Llama8bOnFourV100s) {
  EngineArgs a = args_for("Llama-3.1-8B", 1);
  a.dtype = Precision::kFp16;
  a.kv_cache_dtype = Precision::kFp16;
  const KvCacheBudget one = inference::kv_cache_budget(cat(), a, on("V100-16GB"));
  EXPECT_LT(one.kv_bytes, 0);
  EXPECT_NE(one.error.find("more than the 14.1 GiB usable on V100-16GB"), std::string::npos) << one.error;
  // With max_model_len 4,096, TP 2 fits (kv 14.1198 - 7.4785 - 1.1891 - 0.55 = 4.9021 GiB, 80,315
  // tokens); fp8 weights would too by memory, but vLLM refuses fp8 on V100, so it is not suggested.
  a.max_model_len = 4096;
  const std::string short_len = inference::kv_cache_budget(cat(), a, on("V100-16GB")).error;
  EXPECT_TRUE(short_len.ends_with("; tensor_parallel_size 2 would fit")) << short_len;
  a.max_model_len = 0;
  a.tensor_parallel_size = 4;
  const KvCacheBudget b = inference::kv_cache_budget(cat(), a, on("V100-16GB"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_NEAR(b.weight_bytes / kGiB, 3.7393, 0.0005);
  EXPECT_NEAR(b.activation_bytes / kGiB, 1.1891, 0.0005);
  EXPECT_NEAR(b.kv_bytes / kGiB, 8.6414, 0.0005);
  EXPECT_EQ(b.kv_bytes_per_token, 32768);
  EXPECT_EQ(b.num_blocks, 17697);
  EXPECT_EQ(b.max_model_len, 131072);
}

// Llama-3.1-8B bf16 on one A40 (48 GB GDDR6, 46,068 MiB; Ampere, so bf16 runs):
//   memory = 46,068 MiB x (1 - 0.00587) = 44.7242 GiB; usable 40.2518 GiB
//   kv     = 40.2518 - 14.9570 - 1.1891 - 0.13 = 23.9756 GiB = 25,743,626,846 B
//   blocks = floor(25,743,626,846 / (16 x 131,072)) = 12,275 (196,400 tokens)
TEST(KvCache, Llama8bBf16OnA40) {
  const KvCacheBudget b = inference::kv_cache_budget(cat(), args_for("Llama-3.1-8B", 1), on("A40"));
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.max_num_batched_tokens, 2048);
  EXPECT_NEAR(b.usable_bytes / kGiB, 40.2518, 0.0005);
  EXPECT_NEAR(b.kv_bytes / kGiB, 23.9756, 0.0005);
  EXPECT_EQ(b.num_blocks, 12275);
  EXPECT_EQ(b.num_tokens, 196400);
}

TEST(KvCache, VllmRefusalsBeforeMemory) {
  // T4 has no bf16; fp16 runs.
  EngineArgs a = args_for("Llama-3.2-1B", 1);
  a.max_model_len = 8192;
  EXPECT_EQ(inference::kv_cache_budget(cat(), a, on("T4")).error,
            "T4 does not support bf16 (compute capability below 8.0, which vLLM refuses); use dtype fp16");
  a.dtype = Precision::kFp16;
  a.kv_cache_dtype = Precision::kFp16;
  EXPECT_TRUE(inference::kv_cache_budget(cat(), a, on("T4")).error.empty());
  a.dtype = Precision::kFp8;
  EXPECT_NE(inference::kv_cache_budget(cat(), a, on("T4")).error.find("T4 cannot run fp8"), std::string::npos);
  // V100 (compute capability 7.0) likewise, both memory sizes; A40 (8.6) runs bf16.
  EngineArgs v = args_for("Llama-3.2-1B", 1);
  for (const char* gpu : {"V100-16GB", "V100-32GB"}) {
    v.dtype = Precision::kBf16;
    v.kv_cache_dtype = Precision::kBf16;
    EXPECT_EQ(inference::kv_cache_budget(cat(), v, on(gpu)).error,
              std::string(gpu) + " does not support bf16 (compute capability below 8.0, which vLLM refuses); use dtype fp16");
    v.dtype = Precision::kFp16;
    v.kv_cache_dtype = Precision::kFp16;
    EXPECT_TRUE(inference::kv_cache_budget(cat(), v, on(gpu)).error.empty()) << gpu;
    v.dtype = Precision::kFp8;
    EXPECT_NE(inference::kv_cache_budget(cat(), v, on(gpu)).error.find(std::string(gpu) + " cannot run fp8"), std::string::npos);
  }
  EXPECT_TRUE(inference::kv_cache_budget(cat(), args_for("Llama-3.2-1B", 1), on("A40")).error.empty());
  // 28 heads of Qwen2.5-7B do not split over 8 GPUs.
  EXPECT_EQ(inference::kv_cache_budget(cat(), args_for("Qwen2.5-7B", 8), on("H100-80GB")).error,
            "Qwen2.5-7B has 28 attention heads, not a multiple of tensor_parallel_size 8");
  EngineArgs m = args_for("Mistral-7B-v0.3", 1);
  m.max_model_len = 65536;
  EXPECT_EQ(inference::kv_cache_budget(cat(), m, on("H100-80GB")).error,
            "max_model_len 65536 is above Mistral-7B-v0.3's max_context_tokens 32768 (max_position_embeddings)");
}

TEST(KvCache, MigAndTimeSlicingShareMemory) {
  EngineArgs a = args_for("Llama-3.1-8B", 1);
  a.max_model_len = 16000;
  a.max_num_seqs = 1024;
  const KvCacheBudget whole = inference::kv_cache_budget(cat(), a, on("H100-80GB"));
  // Two time-sliced replicas: each 71.2619 / 2 = 35.6310 GiB usable; kv = 35.6310 - 14.9570 - 4.7565
  // - 0.13 = 15.7875 GiB (the activation peak and weights are not halved).
  ReplicaHardware ts = on("H100-80GB");
  ts.time_slice_replicas = 2;
  const KvCacheBudget half = inference::kv_cache_budget(cat(), a, ts);
  EXPECT_NEAR(half.usable_bytes, whole.usable_bytes / 2, 1);
  EXPECT_NEAR(half.kv_bytes / kGiB, 15.7875, 0.0005);
  EXPECT_EQ(half.max_num_batched_tokens, 8192);  // vLLM sees the whole GPU's memory
  // A MIG 3g.40gb device of 40,192 MiB: vLLM's small defaults (< 70 GiB): 2,048 tokens, and with
  // max_num_seqs 256: activation 2.69 x 2,048 x 4,096 + 38.2 x 256 x 128,256 = 1.1891 GiB;
  // usable = 40,192 MiB x 0.99413 x 0.9 = 35.1176 GiB; kv = 35.1176 - 14.9570 - 1.1891 - 0.13 = 18.8415 GiB.
  ReplicaHardware mig = on("H100-80GB");
  mig.memory_mib = 40192;
  mig.compute_fraction = 3.0 / 7;
  mig.bandwidth_fraction = 4.0 / 8;
  a.max_num_seqs = 256;
  const KvCacheBudget slice = inference::kv_cache_budget(cat(), a, mig);
  EXPECT_EQ(slice.max_num_batched_tokens, 2048);
  EXPECT_NEAR(slice.kv_bytes / kGiB, 18.8415, 0.0005);
}

TEST(KvCache, DefaultsAndBadArguments) {
  EXPECT_EQ(inference::default_max_num_batched_tokens("H100-80GB", 81559), 8192);
  EXPECT_EQ(inference::default_max_num_batched_tokens("H200-141GB", 143771), 8192);
  EXPECT_EQ(inference::default_max_num_batched_tokens("A100-80GB", 81920), 2048);  // A100 excluded by name
  EXPECT_EQ(inference::default_max_num_batched_tokens("L40S", 46068), 2048);
  EXPECT_EQ(inference::default_max_num_batched_tokens("H100-80GB", 40192), 2048);  // a MIG slice: < 70 GiB
  EXPECT_EQ(inference::default_max_num_seqs("B200-180GB", 183359), 1024);
  EXPECT_EQ(inference::default_max_num_seqs("A10G", 23028), 256);
  EXPECT_EQ(inference::default_max_num_seqs("V100-32GB", 32510), 256);
  EXPECT_EQ(inference::default_max_num_batched_tokens("A40", 46068), 2048);
  EXPECT_THROW(inference::kv_cache_budget(cat(), args_for("GPT-5", 1), on("H100-80GB")), std::invalid_argument);
  EXPECT_THROW(inference::kv_cache_budget(cat(), args_for("Llama-3.1-8B", 1), on("V100")), std::invalid_argument);
  EngineArgs a = args_for("Llama-3.1-8B", 0);
  EXPECT_THROW(inference::kv_cache_budget(cat(), a, on("H100-80GB")), std::invalid_argument);
  a.tensor_parallel_size = 1;
  a.gpu_memory_utilization = 1.5;
  EXPECT_THROW(inference::kv_cache_budget(cat(), a, on("H100-80GB")), std::invalid_argument);
  a.gpu_memory_utilization = 0.9;
  ReplicaHardware hw = on("H100-80GB");
  hw.compute_fraction = 0;
  EXPECT_THROW(inference::kv_cache_budget(cat(), a, hw), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet
