// bench-serve's load generator and metrics (src/inference/bench_serve.h) on hand-computed cases:
// every step takes 10 ms (constant step time), prompts of 10 tokens, 3 output tokens, so a request
// alone takes one prefill step (its first token) and two decode steps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "inference/bench_serve.h"
#include "inference/deployment.h"
#include "report/bench_serve_output.h"
#include "readers/serving/inference_catalog.h"

namespace gpufleet::inference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

EngineLimits limits() {
  EngineLimits lim;
  lim.num_blocks = 1000;
  return lim;
}

std::vector<Request> two(int32_t prompt = 10, int32_t output = 3) {
  std::vector<Request> r(2);
  for (size_t i = 0; i < 2; ++i) {
    r[i].id = i;
    r[i].prompt_tokens = prompt;
    r[i].output_tokens = output;
  }
  return r;
}

TEST(BenchServe, TwoRequestsAtOnceConstantStep) {
  // Step 1 [0, 10 ms]: both prompts (20 tokens), first tokens at 10 ms; steps 2 and 3 decode both;
  // both finish at 30 ms. TTFT 10 ms, TPOT (30 - 10) / 2 = 10 ms, four ITL gaps of 10 ms.
  const auto step = make_constant_step_time(0.01);
  const BenchServeResult r = run_bench_serve(two(), *step, limits());
  EXPECT_EQ(r.completed, 2);
  EXPECT_EQ(r.failed, 0);
  EXPECT_NEAR(r.duration_s, 0.03, 1e-12);
  EXPECT_EQ(r.total_input_tokens, 20);
  EXPECT_EQ(r.total_output_tokens, 6);
  EXPECT_NEAR(r.request_throughput, 2 / 0.03, 1e-9);        // 66.67 req/s
  EXPECT_NEAR(r.output_throughput, 6 / 0.03, 1e-9);         // 200 tok/s
  EXPECT_NEAR(r.total_token_throughput, 26 / 0.03, 1e-9);   // 866.67 tok/s
  EXPECT_NEAR(r.ttft.mean_ms, 10, 1e-9);
  EXPECT_NEAR(r.ttft.p99_ms, 10, 1e-9);
  EXPECT_NEAR(r.tpot.median_ms, 10, 1e-9);
  EXPECT_EQ(r.itl.samples, 4);
  EXPECT_NEAR(r.itl.mean_ms, 10, 1e-9);
  EXPECT_NEAR(r.itl.std_ms, 0, 1e-9);
  EXPECT_NEAR(r.e2el.mean_ms, 30, 1e-9);
  EXPECT_EQ(r.max_concurrent_requests, 2);
}

TEST(BenchServe, MaxConcurrencyOneRunsThemInTurn) {
  // The second request is sent when the first finishes (30 ms); its clock starts then: TTFT 10 ms,
  // it finishes at 60 ms. Throughput 2 / 0.06 s.
  const auto step = make_constant_step_time(0.01);
  const BenchServeResult r = run_bench_serve(two(), *step, limits(), 1, 1);
  EXPECT_EQ(r.completed, 2);
  EXPECT_NEAR(r.duration_s, 0.06, 1e-12);
  EXPECT_NEAR(r.request_throughput, 2 / 0.06, 1e-9);
  EXPECT_NEAR(r.ttft.mean_ms, 10, 1e-9);
  EXPECT_NEAR(r.e2el.mean_ms, 30, 1e-9);
  EXPECT_EQ(r.max_concurrent_requests, 1);
}

TEST(BenchServe, UnequalOutputsGiveUnequalTpotAndExactItl) {
  // Outputs 2 and 4, both sent at 0: first tokens at 10 ms; the first finishes at 20 ms (TPOT 10),
  // the second at 40 ms (TPOT 10); ITL: 1 + 3 gaps of 10 ms. With a second request of 5 prompt
  // tokens sent at 15 ms it joins the step [20, 30] (prefill) and finishes at 40: TTFT 15 ms.
  const auto step = make_constant_step_time(0.01);
  std::vector<Request> q = two();
  q[0].output_tokens = 2;
  q[1].output_tokens = 4;
  Request late;
  late.id = 2;
  late.arrival_s = 0.015;
  late.prompt_tokens = 5;
  late.output_tokens = 2;
  q.push_back(late);
  const BenchServeResult r = run_bench_serve(q, *step, limits());
  EXPECT_EQ(r.completed, 3);
  EXPECT_NEAR(r.duration_s, 0.04, 1e-12);
  EXPECT_NEAR(r.ttft.mean_ms, (10 + 10 + 15) / 3.0, 1e-9);
  EXPECT_EQ(r.itl.samples, 1 + 3 + 1);
  EXPECT_NEAR(r.itl.mean_ms, 10, 1e-9);
  EXPECT_NEAR(r.tpot.mean_ms, 10, 1e-9);
}

TEST(BenchServe, PreemptedRequestsKeepOutputMinusOneGapsSummingToTheirDecodeTime) {
  // A KV cache of 6 blocks of 16 tokens and 8 requests of 30 + 40 tokens: the engine must preempt.
  // Whatever the schedule, each request contributes output - 1 gaps and they sum to its finish -
  // first token, so the mean ITL is the token-weighted mean TPOT.
  const auto step = make_constant_step_time(0.01);
  EngineLimits lim = limits();
  lim.num_blocks = 6;
  std::vector<Request> q(8);
  for (size_t i = 0; i < q.size(); ++i) {
    q[i].id = i;
    q[i].prompt_tokens = 30;
    q[i].output_tokens = 40;
  }
  const BenchServeResult r = run_bench_serve(q, *step, lim);
  EXPECT_EQ(r.completed, 8);
  EXPECT_GT(r.preemptions, 0);
  EXPECT_EQ(r.itl.samples, 8 * 39);
  EXPECT_NEAR(r.itl.mean_ms, r.tpot.mean_ms, 1e-6);  // equal output lengths: the same weights
}

TEST(BenchServe, SendTimesFollowVllm) {
  std::vector<Request> q = two();
  assign_send_times(q, kInf, 1, 0);
  EXPECT_EQ(q[0].arrival_s, 0);
  EXPECT_EQ(q[1].arrival_s, 0);
  // burstiness inf: constant gaps 1 / rate; request i at (i + 1) / rate (the first waits its gap).
  assign_send_times(q, 10, kInf, 0);
  EXPECT_NEAR(q[0].arrival_s, 0.1, 1e-12);
  EXPECT_NEAR(q[1].arrival_s, 0.2, 1e-12);
  // Gamma gaps: the last request is sent at N / rate exactly, and the gaps' coefficient of
  // variation is 1 / sqrt(burstiness).
  for (double b : {0.5, 1.0, 4.0}) {
    std::vector<Request> many(20000);
    assign_send_times(many, 50, b, 7);
    EXPECT_NEAR(many.back().arrival_s, 20000 / 50.0, 1e-9);
    double sum = 0, sq = 0;
    double prev = 0;
    for (const Request& x : many) {
      const double g = x.arrival_s - prev;
      ASSERT_GE(g, 0);
      sum += g;
      sq += g * g;
      prev = x.arrival_s;
    }
    const double mean = sum / 20000;
    const double cv = std::sqrt(sq / 20000 - mean * mean) / mean;
    EXPECT_NEAR(cv, 1 / std::sqrt(b), 0.03) << "burstiness " << b;
  }
  // Same seed, same times; another seed, other times.
  std::vector<Request> a(5), b(5), c(5);
  assign_send_times(a, 2, 1, 3);
  assign_send_times(b, 2, 1, 3);
  assign_send_times(c, 2, 1, 4);
  EXPECT_EQ(a[2].arrival_s, b[2].arrival_s);
  EXPECT_NE(a[2].arrival_s, c[2].arrival_s);
  EXPECT_THROW(assign_send_times(a, 0, 1, 0), std::invalid_argument);
  EXPECT_THROW(assign_send_times(a, 1, -1, 0), std::invalid_argument);
}

TEST(BenchServe, RandomDatasetRangesAreVllms) {
  // input 100, ratio 0.5: [50, 150]; output 3, ratio 0.5: [max(1, floor 1.5) = 1, ceil 4.5 = 5].
  const std::vector<Request> q = random_dataset_requests({100, 3, 0.5}, 20000, 1);
  int32_t in_lo = 1000, in_hi = 0, out_lo = 1000, out_hi = 0;
  double in_sum = 0;
  for (const Request& x : q) {
    in_lo = std::min(in_lo, x.prompt_tokens);
    in_hi = std::max(in_hi, x.prompt_tokens);
    out_lo = std::min(out_lo, x.output_tokens);
    out_hi = std::max(out_hi, x.output_tokens);
    in_sum += x.prompt_tokens;
  }
  EXPECT_EQ(in_lo, 50);
  EXPECT_EQ(in_hi, 150);
  EXPECT_EQ(out_lo, 1);
  EXPECT_EQ(out_hi, 5);
  EXPECT_NEAR(in_sum / 20000, 100, 1);
  for (const Request& x : random_dataset_requests({7, 9, 0}, 3, 1)) {
    EXPECT_EQ(x.prompt_tokens, 7);
    EXPECT_EQ(x.output_tokens, 9);
  }
  EXPECT_THROW(random_dataset_requests({-3, 9, 0}, 3, 1), std::invalid_argument);
  EXPECT_THROW(random_dataset_requests({3, 0, 0}, 3, 1), std::invalid_argument);
  EXPECT_THROW(random_dataset_requests({3, 3, 1.0}, 3, 1), std::invalid_argument);
  EXPECT_THROW(random_dataset_requests({3, 3, 0}, 0, 1), std::invalid_argument);
  EXPECT_THROW(random_dataset_requests({1 << 30, 3, 0}, 1, 1), std::invalid_argument);
}

TEST(BenchServe, WeightedStatsAreNumpysOverTheExpandedList) {
  // [1, 1, 1, 2] s: mean 1.25, median (rank 1.5) 1, p99 (rank 2.97) 1.97, std sqrt(0.75 / 4) = 0.4330.
  const LatencyStats s = weighted_stats_ms({{2, 1}, {1, 3}, {5, 0}});
  EXPECT_EQ(s.samples, 4);
  EXPECT_NEAR(s.mean_ms, 1250, 1e-9);
  EXPECT_NEAR(s.median_ms, 1000, 1e-9);
  EXPECT_NEAR(s.p99_ms, 1970, 1e-9);
  EXPECT_NEAR(s.std_ms, 1000 * std::sqrt(0.1875), 1e-9);
  EXPECT_EQ(weighted_stats_ms({}).samples, 0);
}

TEST(BenchServe, TooLongRequestFails) {
  const auto step = make_constant_step_time(0.01);
  EngineLimits lim = limits();
  lim.max_model_len = 12;
  const BenchServeResult r = run_bench_serve(two(10, 3), *step, lim);  // 13 tokens > 12
  EXPECT_EQ(r.completed, 0);
  EXPECT_EQ(r.failed, 2);
}

TEST(BenchServe, ReplicaErrorsNameWhatFits) {
  const ServingCatalog& cat = io::builtin_serving_catalog();
  EngineArgs a;
  a.model = "Llama-3.1-70B";
  a.max_model_len = 4096;  // at the model's 131,072 nothing fits 8 L4s
  ReplicaHardware hw;
  hw.gpu = "L4";
  try {
    make_bench_replica(cat, a, hw);
    FAIL() << "70B fits one L4?";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GiB more than"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor_parallel_size 8 would fit"), std::string::npos) << e.what();
  }
  a.model = "no-such-model";
  try {
    make_bench_replica(cat, a, hw);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Llama-3.1-8B"), std::string::npos) << e.what();
  }
  a.model = "Llama-3.1-8B";
  hw.gpu = "no-such-gpu";
  try {
    make_bench_replica(cat, a, hw);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("H100-80GB"), std::string::npos) << e.what();
  }
  // 8B on H100: vLLM's H100 defaults (1,024 sequences, 8,192 tokens per step) and 421,216 KV tokens
  // (docs/inference-model.md).
  hw.gpu = "H100-80GB";
  a.max_num_seqs = 0;
  a.max_model_len = 16000;
  const BenchReplica r = make_bench_replica(cat, a, hw);
  EXPECT_EQ(r.limits.max_num_seqs, 1024);
  EXPECT_EQ(r.limits.max_num_batched_tokens, 8192);
  EXPECT_EQ(r.kv_cache_tokens, 421216);
}

TEST(BenchServe, DeploymentNextEventIsTheNextStepEnd) {
  Deployment d(RouterConfig{}, {});
  const auto step = make_constant_step_time(0.01);
  d.add_replica(0, *step, limits());
  EXPECT_EQ(d.next_event_s(), kInf);
  Request q;
  q.prompt_tokens = 4;
  q.output_tokens = 2;
  d.submit(q, 0);
  EXPECT_EQ(d.next_event_s(), kInf);  // the step due at 0 starts once every request of 0 is in
  d.start_due_steps();
  EXPECT_NEAR(d.next_event_s(), 0.01, 1e-12);
  d.advance_to(0.01);
  d.start_due_steps();
  EXPECT_NEAR(d.next_event_s(), 0.02, 1e-12);
  d.advance_to(0.02);
  d.start_due_steps();
  EXPECT_EQ(d.next_event_s(), kInf);
  RouterConfig timed;
  timed.request_timeout_s = 0.005;
  Deployment t(timed, {});
  t.add_replica(0, *step, limits());
  t.submit(q, 0);
  t.start_due_steps();
  EXPECT_NEAR(t.next_event_s(), 0.005, 1e-12);
}

TEST(BenchServe, TextBlockHasVllmsNamesAndLayout) {
  const auto step = make_constant_step_time(0.01);
  const BenchServeResult r = run_bench_serve(two(), *step, limits());
  io::BenchServeSettings st;
  st.request_rate = kInf;
  const std::string text = io::bench_serve_text(st, r);
  EXPECT_EQ(text.substr(0, 51), "============ Serving Benchmark Result ============\n");
  EXPECT_NE(text.find("Successful requests:                     2         \n"), std::string::npos) << text;
  EXPECT_NE(text.find("Benchmark duration (s):                  0.03      \n"), std::string::npos) << text;
  EXPECT_NE(text.find("Request throughput (req/s):              66.67     \n"), std::string::npos) << text;
  EXPECT_NE(text.find("Output token throughput (tok/s):         200.00    \n"), std::string::npos) << text;
  EXPECT_NE(text.find("Total token throughput (tok/s):          866.67    \n"), std::string::npos) << text;
  EXPECT_NE(text.find("---------------Time to First Token----------------\n"), std::string::npos) << text;
  EXPECT_NE(text.find("-----Time per Output Token (excl. 1st token)------\n"), std::string::npos) << text;
  EXPECT_NE(text.find("---------------Inter-token Latency----------------\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Median TPOT (ms):                        10.00     \n"), std::string::npos) << text;
  EXPECT_NE(text.find("P99 ITL (ms):                            10.00     \n"), std::string::npos) << text;
  EXPECT_EQ(text.find("Request rate configured"), std::string::npos);
  const auto j = io::bench_serve_json(st, r);
  EXPECT_EQ(j["completed"], 2);
  EXPECT_NEAR(j["mean_ttft_ms"].get<double>(), 10, 1e-9);
  EXPECT_TRUE(j["request_rate"].is_null());
}

}  // namespace
}  // namespace gpufleet::inference

// vllm bench serve's --backend / --endpoint (vllm/benchmarks/lib/endpoint_request_func.py): the chat
// backend posts to a URL ending in chat/completions, the completions backends to one ending in
// completions; the default endpoint is /v1/completions.
TEST(BenchServe, BackendsAndTheirEndpoints) {
  const gpufleet::inference::BenchBackend vllm = gpufleet::inference::parse_bench_backend("vllm", "/v1/completions");
  EXPECT_EQ(vllm.endpoint, "/v1/completions");
  EXPECT_FALSE(vllm.chat);
  const gpufleet::inference::BenchBackend chat = gpufleet::inference::parse_bench_backend("openai-chat", "/v1/chat/completions");
  EXPECT_TRUE(chat.chat);
  EXPECT_EQ(chat.name, "openai-chat");
  EXPECT_FALSE(gpufleet::inference::parse_bench_backend("openai", "/proxy/v1/completions").chat);
  EXPECT_THROW(gpufleet::inference::parse_bench_backend("openai-chat", "/v1/completions"), std::invalid_argument);
  EXPECT_THROW(gpufleet::inference::parse_bench_backend("openai", "/v1/chat/completions"), std::invalid_argument);
  EXPECT_THROW(gpufleet::inference::parse_bench_backend("vllm", "/v1/embeddings"), std::invalid_argument);
  EXPECT_THROW(gpufleet::inference::parse_bench_backend("sglang", "/v1/completions"), std::invalid_argument);
  EXPECT_THROW(gpufleet::inference::parse_bench_backend("vllm", ""), std::invalid_argument);
}
