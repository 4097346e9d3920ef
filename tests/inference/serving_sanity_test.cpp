// Physical sanity of the replica model, over the whole built-in serving catalog and every engine
// version's constants:
//  - TPOT at batch 1 is never below the weights' read time (the bytes of the weights one token uses,
//    per GPU, over peak bandwidth): no engine decodes faster than it can read them once per token;
//  - output throughput does not fall as concurrency rises, up to saturation (max_num_seqs);
//  - TTFT at low load (one request at a time) is linear in the prompt length while the prompt's
//    prefill dominates (the causal-attention term adds a small quadratic part): a line through the
//    points explains them (R^2 >= 0.99), its slope is the prefill time per token of the roofline
//    within 20%, and the shortest prompt's TTFT is at least the fixed overheads.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "inference/bench_serve.h"
#include "inference/kv_cache.h"
#include "readers/serving/inference_catalog.h"

namespace gpufleet::inference {
namespace {

/// The serving catalog with engine version `v` in force.
ServingCatalog with_version(const std::string& v) {
  ServingCatalog c = io::builtin_serving_catalog();
  c.select_engine_version(v);
  return c;
}

std::vector<std::string> versions() {
  std::vector<std::string> out;
  for (const LatencyConstants& set : io::builtin_serving_catalog().engine_versions) out.push_back(set.engine_version);
  return out;
}

BenchServeResult run(const BenchReplica& r, int32_t input, int32_t output, int64_t prompts, int32_t concurrency) {
  std::vector<Request> q = random_dataset_requests({input, output, 0}, prompts, 1);
  assign_send_times(q, INFINITY, 1, 1);
  return run_bench_serve(q, *r.step_time, r.limits, 1, concurrency);
}

TEST(ServingSanity, TpotAtBatchOneIsNeverBelowTheWeightReadTime) {
  ASSERT_GE(versions().size(), 2u);
  int checked = 0;
  for (const std::string& v : versions()) {
    const ServingCatalog cat = with_version(v);
    for (const LlmModel& m : cat.models) {
      for (const GpuPerformance& g : cat.gpus) {
        for (int32_t tp : {1, 2, 4, 8}) {
          EngineArgs a;
          a.model = m.name;
          a.tensor_parallel_size = tp;
          a.dtype = g.bf16_supported ? Precision::kBf16 : Precision::kFp16;
          ReplicaHardware hw;
          hw.gpu = g.name;
          if (m.heads % tp != 0 || !kv_cache_budget(cat, a, hw).error.empty()) continue;  // vLLM would not start it
          const auto st = make_roofline_step_time(cat, a, hw);
          StepBatch b;
          b.num_seqs = 1;
          b.decode_tokens = 1;
          b.context_tokens = 128;
          // One token reads every dense weight and, of an MoE model, its top-k experts only: the
          // active parameters.
          const double active = m.active_params > 0 ? m.active_params : m.params;
          const double floor_s = active * precision_bytes(a.dtype) / tp / (g.memory_bandwidth_gb_s * 1e9);
          EXPECT_GE(st->step_seconds(b), floor_s) << v << " " << m.name << " on " << g.name << " TP " << tp;
          ++checked;
          break;  // the smallest TP that starts
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(ServingSanity, ThroughputRisesWithConcurrencyToSaturation) {
  for (const std::string& v : versions()) {
    const ServingCatalog cat = with_version(v);
    for (const auto& [model, gpu] : {std::pair{"Llama-3.1-8B", "H100-80GB"}, std::pair{"Qwen2.5-7B", "L4"}, std::pair{"Qwen3-8B", "A100-80GB"}}) {
      EngineArgs a;
      a.model = model;
      ReplicaHardware hw;
      hw.gpu = gpu;
      const BenchReplica r = make_bench_replica(cat, a, hw);
      // Saturation: max_num_seqs, or the most requests whose KV the cache holds at once (beyond it
      // the engine preempts and recomputes, and throughput may fall, as vLLM's does).
      const int64_t fits = r.kv_cache_tokens / (512 + 128);
      double last = 0;
      for (int32_t c = 1; c <= r.limits.max_num_seqs && c <= fits; c *= 2) {
        const BenchServeResult res = run(r, 512, 128, std::max<int64_t>(256, 8 * c), c);
        ASSERT_EQ(res.failed, 0);
        // 1% slack: a closed loop's ramp-up and tail differ a little from one concurrency to the next.
        EXPECT_GE(res.output_throughput, last * 0.99) << v << " " << model << " on " << gpu << " at concurrency " << c;
        last = std::max(last, res.output_throughput);
      }
    }
  }
}

TEST(ServingSanity, TtftIsLinearInPromptLengthAtLowLoad) {
  for (const std::string& v : versions()) {
    const ServingCatalog cat = with_version(v);
    for (const auto& [model, gpu] : {std::pair{"Llama-3.1-8B", "H100-80GB"}, std::pair{"Qwen3-14B", "A100-80GB"}}) {
      EngineArgs a;
      a.model = model;
      ReplicaHardware hw;
      hw.gpu = gpu;
      const BenchReplica r = make_bench_replica(cat, a, hw);
      std::vector<double> xs, ys;
      for (int32_t n = 256; n <= 8192; n *= 2) {
        const BenchServeResult res = run(r, n, 2, 4, 1);
        xs.push_back(n);
        ys.push_back(res.ttft.mean_ms);
      }
      // Least squares y = a + b x.
      const double k = static_cast<double>(xs.size());
      double sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        sx += xs[i];
        sy += ys[i];
        sxx += xs[i] * xs[i];
        sxy += xs[i] * ys[i];
      }
      const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
      const double intercept = (sy - slope * sx) / k;
      double ss_res = 0, ss_tot = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        ss_res += std::pow(ys[i] - (intercept + slope * xs[i]), 2);
        ss_tot += std::pow(ys[i] - sy / k, 2);
      }
      EXPECT_GE(1 - ss_res / ss_tot, 0.99) << v << " " << model << " on " << gpu;
      // The shortest prompt's TTFT is at least the step overhead and the front end.
      EXPECT_GE(ys.front(), (cat.latency.step_overhead_s + cat.latency.frontend_s) * 1e3) << v << " " << model << " on " << gpu;
      // The roofline's prefill time per token: 2 x params / (peak x MFU), in ms.
      const LlmModel& m = cat.model(model);
      const double per_token_ms = 2 * m.params / (cat.gpu(gpu).bf16_tflops * 1e12 * cat.latency.prefill_efficiency(gpu)) * 1e3;
      EXPECT_NEAR(slope, per_token_ms, 0.2 * per_token_ms) << v << " " << model << " on " << gpu;
    }
  }
}

}  // namespace
}  // namespace gpufleet::inference
