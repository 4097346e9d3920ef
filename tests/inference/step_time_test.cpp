// Step-time models (inference/step_time.h): the roofline on the built-in catalog, hand-computed for a
// decode batch, a prefill chunk, tensor parallelism, MoE and a MIG slice; the profile table's
// interpolation; the constant model.
//
// Catalog figures used (data/inference/catalog.yaml): H100-80GB 3,350 GB/s, 989 bf16 TFLOPS,
// NVLink 450 GB/s; MBU 0.7 -> 2.345e12 B/s; MFU 0.5 -> 494.5e12 FLOP/s; step overhead 1.5 ms,
// per sequence 20 us, all-reduce latency 25 us. Llama-3.1-8B: 8.030e9 params, 32 layers, 32 heads,
// head_dim 128, 131,072 KV B/token. Llama-3.1-70B: 70.55e9, 80 layers, 64 heads, hidden 8,192.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "inference/step_time.h"
#include "readers/serving/inference_catalog.h"

namespace gpufleet {
namespace {

using inference::EngineArgs;
using inference::ReplicaHardware;
using inference::StepBatch;

// The hand-computed cases below use the 2024 constant set (decodeBandwidthEfficiency 0.7, MFU 0.333,
// 1.538 ms + 12.5 us per sequence, no front end), which stays as it is; vllm-v1 is the default.
const inference::ServingCatalog& cat() {
  static const inference::ServingCatalog c = [] {
    inference::ServingCatalog x = io::builtin_serving_catalog();
    x.select_engine_version("vllm-v0-2024");
    return x;
  }();
  return c;
}

double roofline(const std::string& model, int32_t tp, const std::string& gpu, const StepBatch& b,
                inference::Precision dtype = inference::Precision::kBf16, double compute_fraction = 1,
                double bandwidth_fraction = 1) {
  EngineArgs a;
  a.model = model;
  a.tensor_parallel_size = tp;
  a.dtype = dtype;
  ReplicaHardware hw;
  hw.gpu = gpu;
  hw.compute_fraction = compute_fraction;
  hw.bandwidth_fraction = bandwidth_fraction;
  return inference::make_roofline_step_time(cat(), a, hw)->step_seconds(b);
}

// 8 decoding requests with 1,000 tokens of context each, Llama-3.1-8B on one H100:
//   bytes = 16.06e9 (weights) + (8,000 context + 8 new) x 131,072 = 17,109,624,576 B
//           -> 17,109,624,576 / 2.345e12 = 7.29621 ms
//   flops = 2 x 8.03e9 x 8 + 4 x 32 x 32 x 128 x 8,000 = 128.48e9 + 4.194e9 = 132.67e9 -> 0.268 ms
//   step  = max(7.29621, 0.268) + 1.538 + 8 x 0.0125 = 8.93421 ms (memory-bound)
TEST(StepTime, RooflineDecodeBatch) {
  StepBatch b;
  b.num_seqs = 8;
  b.decode_tokens = 8;
  b.context_tokens = 8000;
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "H100-80GB", b), 8.93421e-3, 1e-8);
}

// A 2,048-token prefill chunk of a new prompt (no context), Llama-3.1-8B on one H100:
//   pairs = 2,048 x (0 + 2,048 / 2) = 2,097,152
//   flops = 2 x 8.03e9 x 2,048 + 4 x 32 x 32 x 128 x 2,097,152 = 32.89088e12 + 1.09951e12 = 33.99039e12
//           -> 33.99039e12 / (989e12 x 0.333 = 329.337e12) = 103.20854 ms
//   bytes = 16.06e9 + 2,048 x 131,072 = 16.328e9 -> 6.963 ms
//   step  = 103.20854 + 1.538 + 0.0125 = 104.75904 ms (compute-bound)
TEST(StepTime, RooflinePrefillChunk) {
  StepBatch b;
  b.num_seqs = 1;
  b.prefill_tokens = 2048;
  b.prefill_attention_token_pairs = 2048.0 * 1024;
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "H100-80GB", b), 104.75904e-3, 1e-8);
  // fp8 on H100 doubles the peak: flops / (1,979e12 x 0.333) = 51.57820 ms; bytes 8.03e9 + 2,048 x
  // 131,072 = 8.298e9 -> 3.539 ms; step 51.57820 + 1.5505 = 53.12870 ms.
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "H100-80GB", b, inference::Precision::kFp8), 53.12870e-3, 1e-8);
  // A100 has no FP8: fp8 weights compute at the bf16 peak, 312e12 x 0.333: 33.99039e12 / 103.896e12 = 327.15785 ms.
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "A100-80GB", b, inference::Precision::kFp8), 327.15785e-3 + 1.5505e-3, 1e-8);
}

// Llama-3.1-70B TP 4 on H100, the decode batch above:
//   bytes = 70.55e9 x 2 / 4 + 8,008 x 81,920 (2 x 80 x 2 heads x 128 x 2) = 35.275e9 + 0.65602e9
//           = 35.93102e9 -> 15.32239 ms
//   flops = 2 x 70.55e9 x 8 / 4 + 4 x 80 x 64 x 128 / 4 x 8,000 = 282.2e9 + 5.243e9 -> 0.58 ms
//   all-reduce = 2 x 80 x (25 us + 8 x 8,192 x 2 B x 2 x 3/4 / 450e9) = 160 x 25.43691 us = 4.06991 ms
//   step  = 15.32239 + 1.538 + 0.1 + 4.06991 = 21.03030 ms
TEST(StepTime, RooflineTensorParallel) {
  StepBatch b;
  b.num_seqs = 8;
  b.decode_tokens = 8;
  b.context_tokens = 8000;
  EXPECT_NEAR(roofline("Llama-3.1-70B", 4, "H100-80GB", b), 21.03030e-3, 1e-8);
}

// Mixtral-8x7B: experts X = (46.7e9 - 12.9e9) / (1 - 2/8) = 45.0667e9, shared 1.6333e9. One decode token
// reads the shared weights and each expert with probability 1/4: (1.6333e9 + 45.0667e9 / 4) x 2 B =
// 25.8e9 B (= 2 x 12.9e9, the active weights); 64 tokens read 1 - 0.75^64 = all but 1e-8 of them.
TEST(StepTime, RooflineMoeReadsTheExpertsItRoutesTo) {
  StepBatch one;
  one.num_seqs = 1;
  one.decode_tokens = 1;
  // bytes = 25.8e9 + 1 x 131,072 -> / (4,800e9 x 0.7) = 7.67861 ms; + 1.538 + 0.0125 = 9.22911 ms
  EXPECT_NEAR(roofline("Mixtral-8x7B", 1, "H200-141GB", one), 9.22911e-3, 1e-8);
  StepBatch many;
  many.num_seqs = 64;
  many.decode_tokens = 64;
  const double weights = 2 * (1.6333333333e9 + 45.0666666667e9 * (1 - std::pow(0.75, 64)));
  EXPECT_NEAR(roofline("Mixtral-8x7B", 1, "H200-141GB", many), (weights + 64 * 131072) / 3.36e12 + 1.538e-3 + 64 * 1.25e-5, 1e-8);
}

// A MIG 3g.40gb slice (3 of 7 compute slices, 4 of 8 memory slices): bandwidth x 0.5, peak x 3/7.
TEST(StepTime, RooflineMigSliceScalesBandwidthAndPeak) {
  StepBatch d;
  d.num_seqs = 8;
  d.decode_tokens = 8;
  d.context_tokens = 8000;
  // 17,109,624,576 B / (2.345e12 x 0.5) = 14.59243 ms; + 1.638 ms = 16.23043 ms
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "H100-80GB", d, inference::Precision::kBf16, 3.0 / 7, 0.5), 16.23043e-3, 1e-8);
  StepBatch p;
  p.num_seqs = 1;
  p.prefill_tokens = 2048;
  p.prefill_attention_token_pairs = 2048.0 * 1024;
  // 103.20854 ms x 7/3 = 240.81993 ms; + 1.5505 ms = 242.37043 ms
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "H100-80GB", p, inference::Precision::kBf16, 3.0 / 7, 0.5), 242.37043e-3, 1e-8);
}

// V100 (AWS p3) and A40, from their catalog figures: V100-16GB 900 GB/s, 125 FP16 tensor TFLOPS,
// NVLink 150 GB/s per direction; A40 696 GB/s, 149.7 BF16 TFLOPS. The bytes and FLOPs are computed
// by hand; the efficiencies and overheads are the catalog's (L), so that a refit of the latency
// constants leaves these checks standing. With MBU 0.7, MFU 0.333, 1.538 ms per step, 12.5 us per
// sequence and 25 us per all-reduce the steps are 5.97833 ms, 683.40252 ms and 10.06948 ms.
TEST(StepTime, RooflineOnV100AndA40) {
  const inference::LatencyConstants& L = cat().latency;
  StepBatch d;
  d.num_seqs = 8;
  d.decode_tokens = 8;
  d.context_tokens = 8000;
  // Llama-3.2-1B fp16 on V100-16GB, the decode batch: bytes = 1.236e9 x 2 + 8,008 x 32,768 (2 x 16 x 8 x 64
  // x 2) = 2,734,406,144 B -> 4.34033 ms at 630e9 B/s; flops = 2 x 1.236e9 x 8 + 4 x 16 x 32 x 64 x 8,000
  // = 20.824576e9 -> 0.50029 ms at 41.625e12: memory-bound.
  const double v100 = std::max(2734406144.0 / (900e9 * L.decode_bandwidth_efficiency),
                               20.824576e9 / (125e12 * L.prefill_compute_efficiency)) +
                      L.step_overhead_s + 8 * L.per_sequence_overhead_s;
  EXPECT_NEAR(roofline("Llama-3.2-1B", 1, "V100-16GB", d, inference::Precision::kFp16), v100, 1e-9);
  EXPECT_NEAR(v100, 5.97833e-3, 2e-3);  // today's constants, loosely
  // Llama-3.1-8B fp16 TP 4 on a p3.8xlarge's four V100s, the same batch: bytes = 8.03e9 x 2 / 4 + 8,008 x
  // 32,768 = 4,277,406,144 B; flops = 2 x 8.03e9 x 8 / 4 + 4 x 32 x 32 x 128 / 4 x 8,000 = 33.168576e9;
  // all-reduce = 2 x 32 x (latency + 2 x 3/4 x 4,096 x 8 x 2 B / 150e9 = 0.65536 us).
  const double tp4 = std::max(4277406144.0 / (900e9 * L.decode_bandwidth_efficiency),
                              33.168576e9 / (125e12 * L.prefill_compute_efficiency)) +
                     L.step_overhead_s + 8 * L.per_sequence_overhead_s + 64 * (L.allreduce_latency_s + 0.65536e-6);
  EXPECT_NEAR(roofline("Llama-3.1-8B", 4, "V100-16GB", d, inference::Precision::kFp16), tp4, 1e-9);
  // Llama-3.1-8B bf16 on A40, a 2,048-token prefill chunk: flops = 33.99039e12 (as on H100 above) at
  // 149.7e12 x MFU; bytes = 16.328e9 at 696e9 x MBU (33.5 ms): compute-bound, 681.85 ms today.
  StepBatch p;
  p.num_seqs = 1;
  p.prefill_tokens = 2048;
  p.prefill_attention_token_pairs = 2048.0 * 1024;
  const double a40 = std::max(16.328435456e9 / (696e9 * L.decode_bandwidth_efficiency),
                              33.990391627776e12 / (149.7e12 * L.prefill_compute_efficiency)) +
                     L.step_overhead_s + L.per_sequence_overhead_s;
  EXPECT_NEAR(roofline("Llama-3.1-8B", 1, "A40", p), a40, 1e-9);
  EXPECT_NEAR(a40, 683.40252e-3, 0.1);  // today's constants, loosely
}

TEST(StepTime, RooflineEmptyBatchAndErrors) {
  EXPECT_EQ(roofline("Llama-3.1-8B", 1, "H100-80GB", StepBatch{}), 0);
  EngineArgs a;
  a.model = "nope";
  ReplicaHardware hw;
  hw.gpu = "H100-80GB";
  EXPECT_THROW(inference::make_roofline_step_time(cat(), a, hw), std::invalid_argument);
  a.model = "Llama-3.1-8B";
  hw.gpu = "V100";
  EXPECT_THROW(inference::make_roofline_step_time(cat(), a, hw), std::invalid_argument);
  hw.gpu = "H100-80GB";
  hw.bandwidth_fraction = 1.5;
  EXPECT_THROW(inference::make_roofline_step_time(cat(), a, hw), std::invalid_argument);
}

// Profile table: rows at num_seqs 1 and 8, tokens 1 and 1,001.
//   (s=1: 10 ms at 1 token, 30 ms at 1,001), (s=8: 12 ms, 40 ms)
TEST(StepTime, ProfileTableInterpolates) {
  const auto m = inference::make_profile_step_time({{1, 1, 0.010}, {1, 1001, 0.030}, {8, 1, 0.012}, {8, 1001, 0.040}});
  const auto at = [&](int32_t seqs, int32_t prefill, int32_t decode) {
    StepBatch b;
    b.num_seqs = seqs;
    b.prefill_tokens = prefill;
    b.decode_tokens = decode;
    return m->step_seconds(b);
  };
  // Grid points.
  EXPECT_DOUBLE_EQ(at(8, 0, 1), 0.012);
  EXPECT_DOUBLE_EQ(at(1, 1000, 1), 0.030);
  // (4 seqs, 501 tokens): s=1 line: 10 + 20 x 500/1000 = 20 ms; s=8 line: 12 + 28 x 0.5 = 26 ms;
  // across: 20 + 6 x (4 - 1)/(8 - 1) = 22.5714 ms.
  EXPECT_NEAR(at(4, 497, 4), 0.020 + 0.006 * 3 / 7, 1e-12);
  // Beyond the largest num_seqs: linear from the last two: 12 + 2 x (16 - 8)/7 = 14.2857 ms (1 token).
  EXPECT_NEAR(at(16, 0, 1), 0.012 + 0.002 * 8 / 7, 1e-12);
  // Beyond the largest tokens: 30 + 20 x 1000/1000 = 50 ms at s=1.
  EXPECT_NEAR(at(1, 2000, 1), 0.050, 1e-12);
  // Below the smallest tokens: clamped (0 tokens, 1 sequence is 10 ms).
  EXPECT_DOUBLE_EQ(at(1, 0, 0), 0.010);
  EXPECT_EQ(at(0, 0, 0), 0);  // empty
}

TEST(StepTime, ProfileTableWithOneRowPerBatchSize) {
  const auto m = inference::make_profile_step_time({{1, 1, 0.010}, {2, 2, 0.020}, {4, 4, 0.025}});
  StepBatch b;
  b.num_seqs = 3;
  b.decode_tokens = 3;
  EXPECT_NEAR(m->step_seconds(b), 0.0225, 1e-12);  // between s=2 (20 ms) and s=4 (25 ms)
  b.num_seqs = 6;
  b.decode_tokens = 6;
  EXPECT_NEAR(m->step_seconds(b), 0.030, 1e-12);  // 25 + 5 x (6 - 4)/2
  // A decreasing edge never extrapolates below the fastest row.
  const auto d = inference::make_profile_step_time({{1, 1, 0.010}, {2, 2, 0.002}});
  b.num_seqs = 10;
  EXPECT_DOUBLE_EQ(d->step_seconds(b), 0.002);
}

TEST(StepTime, ProfileTableRejectsBadRows) {
  EXPECT_THROW(inference::make_profile_step_time({}), std::invalid_argument);
  EXPECT_THROW(inference::make_profile_step_time({{1, 1, 0}}), std::invalid_argument);
  EXPECT_THROW(inference::make_profile_step_time({{1, 1, -0.1}}), std::invalid_argument);
  EXPECT_THROW(inference::make_profile_step_time({{0, 1, 0.1}}), std::invalid_argument);
  EXPECT_THROW(inference::make_profile_step_time({{1, 1, 0.1}, {1, 1, 0.2}}), std::invalid_argument);
}

TEST(StepTime, ConstantModel) {
  const auto m = inference::make_constant_step_time(0.25);
  StepBatch b;
  EXPECT_EQ(m->step_seconds(b), 0);
  b.num_seqs = 3;
  b.decode_tokens = 3;
  EXPECT_EQ(m->step_seconds(b), 0.25);
  EXPECT_THROW(inference::make_constant_step_time(0), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet

namespace gpufleet {
namespace {

// vLLM's CI latency benchmark on H200 (buildkite.com/vllm/performance-benchmark/builds/9515;
// data/inference/calibration.csv rows 1-3): `vllm bench latency` with batch 8, input 32, output 128,
// i.e. one prefill step of 8 x 32 tokens and 127 decode steps whose contexts grow from 33 to 159.
// Rows 1 and 2 fitted allreduceLatencySeconds and, with the ShareGPT rows 7 and 9, the four constants of
// bench-serve's calibration (docs/inference-calibration.md); row 3 (Mixtral) was not used for fitting.
double vllm_bench_latency(const std::string& model, int32_t tp, int32_t batch, int32_t input, int32_t output) {
  EngineArgs a;
  a.model = model;
  a.tensor_parallel_size = tp;
  ReplicaHardware hw;
  hw.gpu = "H200-141GB";
  const auto m = inference::make_roofline_step_time(cat(), a, hw);
  StepBatch prefill;
  prefill.num_seqs = batch;
  prefill.prefill_tokens = batch * input;
  prefill.prefill_attention_token_pairs = static_cast<double>(batch) * input * input / 2;
  double t = m->step_seconds(prefill);
  for (int32_t k = 1; k < output; ++k) {
    StepBatch d;
    d.num_seqs = batch;
    d.decode_tokens = batch;
    d.context_tokens = static_cast<int64_t>(batch) * (input + k);
    t += m->step_seconds(d);
  }
  return t;
}

TEST(StepTime, CalibrationReplayOfVllmCiLatency) {
  EXPECT_NEAR(vllm_bench_latency("Llama-3.1-8B", 1, 8, 32, 128), 0.833, 0.01 * 0.833);   // model 831.7 ms
  EXPECT_NEAR(vllm_bench_latency("Llama-3.1-70B", 4, 8, 32, 128), 2.078, 0.01 * 2.078);  // model 2,089.6 ms
  EXPECT_NEAR(vllm_bench_latency("Mixtral-8x7B", 2, 8, 32, 128), 2.0264, 0.0005);         // 1,917 measured: +5.7%
}

}  // namespace
}  // namespace gpufleet
