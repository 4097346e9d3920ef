// Disaggregated prefill/decode (src/inference/disaggregated_deployment.h): the KV transfer time by
// hand, one request through prefill -> transfer -> decode against the hand sum of its steps, local
// prefill of short prompts, a decode replica short of KV blocks, a decode replica leaving mid-request
// (as simulate removes a pod), and invariants over a random load
// (every request reported once, tokens conserved).
//
// Step time here: 0.1 s + 0.004 s per prefill token (a decode-only step: 0.1 s).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "inference/bench_serve.h"
#include "inference/catalog.h"
#include "inference/disaggregated_deployment.h"
#include "util/go_rand.h"

namespace gpufleet::inference {
namespace {

class LinearStepTime final : public StepTimeModel {
 public:
  double step_seconds(const StepBatch& b) const override { return 0.1 + 0.004 * b.prefill_tokens; }
};

Request req(uint64_t id, double t, int32_t prompt, int32_t output) {
  Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

EngineLimits limits(int64_t blocks = 1000) {
  EngineLimits lim;
  lim.num_blocks = blocks;
  return lim;
}

/// 1000 bytes per token on one decode GPU over a 1e6 B/s link with 0.05 s latency: 100 tokens take
/// 100 x 1000 / 1e6 + 0.05 = 0.15 s.
DisaggregationConfig slow_link() {
  DisaggregationConfig c;
  c.link = {"custom", 1e-3, true, 0.05};
  c.decode_kv_bytes_per_token_per_gpu = 1000;
  return c;
}

struct Fixture {
  LinearStepTime st;
  std::map<uint64_t, RequestOutcome> out;
  int reports = 0;
  DisaggregatedDeployment dep;
  explicit Fixture(const DisaggregationConfig& c, RouterConfig rc = {})
      : dep(c, rc, DisaggregatedDeployment::Observer{[this](const RequestOutcome& o) {
                                                       out[o.id] = o;
                                                       ++reports;
                                                     },
                                                     nullptr, nullptr}) {}
};

TEST(KvTransfer, SecondsByHand) {
  const ServingCatalog cat = [] {
    ServingCatalog c;
    LlmModel m;
    m.name = "Llama-3.1-8B";
    m.layers = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    c.models.push_back(m);
    return c;
  }();
  // Llama-3.1-8B bf16: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131072 B per token (TP1).
  const double per_token = kv_bytes_per_token(cat.models[0], Precision::kBf16);
  ASSERT_DOUBLE_EQ(per_token, 131072);
  // 8000 tokens = 1.048576e9 B over one 50 GB/s RDMA link: 0.02097152 s + 1 ms.
  EXPECT_NEAR(kv_transfer_seconds(8000, per_token, 1, 1, kv_transfer_link("rdma")), 0.02197152, 1e-12);
  // TP2 on both sides: each GPU holds half (65536 B/token) and moves it over its own NIC.
  EXPECT_NEAR(kv_transfer_seconds(8000, per_token / 2, 2, 2, kv_transfer_link("rdma")), 0.01048576 + 0.001, 1e-12);
  // Prefill TP1 -> decode TP4: one prefill GPU sends everything (links = min(1, 4)).
  EXPECT_NEAR(kv_transfer_seconds(8000, per_token / 4, 1, 4, kv_transfer_link("rdma")), 0.02097152 + 0.001, 1e-12);
  // TCP: one 3 GB/s path per replica pair whatever the TP: 1.048576e9 / 3e9 + 5 ms.
  EXPECT_NEAR(kv_transfer_seconds(8000, per_token / 2, 2, 2, kv_transfer_link("tcp")), 0.349525333333 + 0.005, 1e-9);
  // NVLink 450 GB/s: 1.048576e9 / 450e9 + 0.1 ms.
  EXPECT_NEAR(kv_transfer_seconds(8000, per_token, 1, 1, kv_transfer_link("nvlink")), 0.00233016888889 + 0.0001, 1e-12);
  EXPECT_DOUBLE_EQ(kv_transfer_seconds(0, per_token, 1, 1, kv_transfer_link("rdma")), 0.001);
  EXPECT_THROW(kv_transfer_link("ethernet"), std::invalid_argument);
  EXPECT_THROW(kv_transfer_seconds(-1, per_token, 1, 1, kv_transfer_link("rdma")), std::invalid_argument);
  EXPECT_THROW(kv_transfer_seconds(1, per_token, 0, 1, kv_transfer_link("rdma")), std::invalid_argument);
  EXPECT_THROW(kv_transfer_seconds(1, per_token, 1, 1, KvTransferLink{"x", 0, true, 0}), std::invalid_argument);
  EXPECT_THROW(kv_transfer_seconds(1, per_token, 1, 1, KvTransferLink{"x", 1, true, -1}), std::invalid_argument);
}

TEST(DisaggregatedDeployment, OneRequestIsTheSumOfItsSteps) {
  Fixture f(slow_link());
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits());
  f.dep.submit(req(7, 1.0, 100, 4), 1.0);
  f.dep.finish(100);
  ASSERT_EQ(f.reports, 1);
  const RequestOutcome& o = f.out.at(7);
  EXPECT_EQ(o.status, RequestStatus::kFinished);
  // Prefill: one step of 100 tokens, 0.1 + 0.4 = 0.5 s: the first token at 1.5.
  EXPECT_DOUBLE_EQ(o.first_token_s, 1.5);
  EXPECT_DOUBLE_EQ(o.ttft_s(), 0.5);
  // Transfer 0.15 s: lands at 1.65; then three decode steps of 0.1 s: tokens 2, 3, 4 at 1.75, 1.85, 1.95.
  EXPECT_NEAR(o.finish_s, 1.95, 1e-12);
  EXPECT_NEAR(o.tpot_s(), (1.95 - 1.5) / 3, 1e-12);
  EXPECT_EQ(o.generated_tokens, 4);
  EXPECT_EQ(o.replica, 0);
  EXPECT_EQ(f.dep.remote_prefills(), 1);
  EXPECT_EQ(f.dep.local_prefills(), 0);
  EXPECT_EQ(f.dep.transfers(), 1);
  EXPECT_DOUBLE_EQ(f.dep.kv_bytes_transferred(), 100'000);
  EXPECT_NEAR(f.dep.transfer_seconds(), 0.15, 1e-12);
  EXPECT_NEAR(f.dep.prefill_busy_seconds(100), 0.5, 1e-12);
  EXPECT_NEAR(f.dep.decode_busy_seconds(100), 0.3, 1e-12);
}

TEST(DisaggregatedDeployment, RoleReplicasComeAndGo) {
  // simulate's calls: replicas join and leave each pool as their pods do. The request of
  // OneRequestIsTheSumOfItsSteps with 10 output tokens lands at 1.65 on decode replica 0 (a second
  // decode replica joined at 1.0; both idle, the lowest id wins); tokens 2 at 1.75. Replica 0's pod
  // is deleted at 1.8 with no shutdown timeout: the request goes back to the decode router with its
  // KV transferred and starts over on replica 1, decoding tokens 2..10 in 9 steps of 0.1 s from 1.8.
  Fixture f(slow_link());
  using Role = DisaggregatedDeployment::Role;
  EXPECT_EQ(f.dep.add_replica(Role::kPrefill, 0, f.st, limits()), 0);
  EXPECT_EQ(f.dep.add_replica(Role::kDecode, 0, f.st, limits()), 0);
  f.dep.submit(req(7, 1.0, 100, 10), 1.0);
  EXPECT_EQ(f.dep.add_replica(Role::kDecode, 1.0, f.st, limits()), 1);
  EXPECT_EQ(f.dep.pool(Role::kDecode).ready_replicas(), 2);
  EXPECT_EQ(f.dep.pool(Role::kPrefill).ready_replicas(), 1);
  f.dep.advance_to(1.8);
  EXPECT_EQ(f.dep.pool(Role::kDecode).num_requests_running(), 1);
  f.dep.drain_replica(Role::kDecode, 0, 1.8, 0);
  EXPECT_EQ(f.dep.pool(Role::kDecode).ready_replicas(), 1);
  f.dep.finish(100);
  ASSERT_EQ(f.reports, 1);
  const RequestOutcome& o = f.out.at(7);
  EXPECT_EQ(o.status, RequestStatus::kFinished);
  EXPECT_EQ(o.replica, 1);
  EXPECT_DOUBLE_EQ(o.first_token_s, 1.5);
  EXPECT_NEAR(o.finish_s, 2.7, 1e-12);
  EXPECT_EQ(f.dep.transfers(), 1);
  EXPECT_THROW(f.dep.drain_replica(Role::kDecode, 0, 100, 0), std::invalid_argument);  // gone already
}

TEST(DisaggregatedDeployment, FirstTokenFromTheDecodeReplica) {
  DisaggregationConfig c = slow_link();
  c.first_token = FirstTokenFrom::kDecode;
  Fixture f(c);
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits());
  f.dep.submit(req(7, 1.0, 100, 4), 1.0);
  f.dep.finish(100);
  const RequestOutcome& o = f.out.at(7);
  // Prefill 0.5 s (to 1.5), transfer 0.15 s (to 1.65); the decode recomputes the last prompt token
  // (one prefill token: 0.104 s) and samples the first token at 1.754; tokens 2-4 every 0.1 s.
  EXPECT_NEAR(o.first_token_s, 1.754, 1e-12);
  EXPECT_NEAR(o.ttft_s(), 0.754, 1e-12);
  EXPECT_NEAR(o.finish_s, 2.054, 1e-12);
  EXPECT_NEAR(o.tpot_s(), 0.1, 1e-12);
  EXPECT_EQ(o.generated_tokens, 4);
}

TEST(DisaggregatedDeployment, ShortPromptsArePrefilledByTheDecodeReplica) {
  DisaggregationConfig c = slow_link();
  c.max_local_prefill_tokens = 100;  // Dynamo: remote only when the prompt exceeds it
  Fixture f(c);
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits());
  f.dep.submit(req(1, 1.0, 100, 4), 1.0);   // local: prefill 0.5 s on the decode replica, then 3 x 0.1 s
  f.dep.submit(req(2, 10.0, 101, 2), 10.0);  // remote: 0.504 s prefill, 0.151 s transfer, one 0.1 s step
  f.dep.finish(100);
  EXPECT_DOUBLE_EQ(f.out.at(1).first_token_s, 1.5);
  EXPECT_NEAR(f.out.at(1).finish_s, 1.8, 1e-12);
  EXPECT_NEAR(f.out.at(2).first_token_s, 10.504, 1e-12);
  EXPECT_NEAR(f.out.at(2).finish_s, 10.504 + 0.151 + 0.1, 1e-12);
  EXPECT_EQ(f.dep.local_prefills(), 1);
  EXPECT_EQ(f.dep.remote_prefills(), 1);
  EXPECT_EQ(f.dep.transfers(), 1);
}

TEST(DisaggregatedDeployment, OneOutputTokenFinishesOnThePrefillReplica) {
  Fixture f(slow_link());
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits());
  f.dep.submit(req(3, 0, 100, 1), 0);
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(3).status, RequestStatus::kFinished);
  EXPECT_DOUBLE_EQ(f.out.at(3).finish_s, 0.5);
  EXPECT_EQ(f.out.at(3).output_tokens, 1);
  EXPECT_EQ(f.dep.transfers(), 0);
}

TEST(DisaggregatedDeployment, ATransferWaitsForDecodeBlocks) {
  // The decode replica holds 8 blocks of 16 tokens; each request needs 7 (101 tokens at admission).
  Fixture f(slow_link());
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits(8));
  f.dep.submit(req(1, 1.0, 100, 4), 1.0);
  f.dep.submit(req(2, 1.0, 100, 4), 1.0);
  f.dep.finish(100);
  // One prefill step of 200 tokens (0.9 s): both first tokens at 1.9; both land at 2.05.
  EXPECT_NEAR(f.out.at(1).first_token_s, 1.9, 1e-12);
  EXPECT_NEAR(f.out.at(2).first_token_s, 1.9, 1e-12);
  // Request 1 decodes at once (2.15, 2.25, 2.35); request 2 waits for its blocks until then.
  EXPECT_NEAR(f.out.at(1).finish_s, 2.35, 1e-12);
  EXPECT_NEAR(f.out.at(2).finish_s, 2.65, 1e-12);
  EXPECT_EQ(f.out.at(2).preemptions, 0);
}

TEST(DisaggregatedDeployment, TransfersInFlightAtTheEndTimeOut) {
  Fixture f(slow_link());
  f.dep.add_prefill_replica(0, f.st, limits());
  f.dep.add_decode_replica(0, f.st, limits());
  f.dep.submit(req(1, 0, 100, 4), 0);
  f.dep.finish(0.6);  // prefilled at 0.5, landing at 0.65
  ASSERT_EQ(f.reports, 1);
  EXPECT_EQ(f.out.at(1).status, RequestStatus::kTimedOut);
  EXPECT_DOUBLE_EQ(f.out.at(1).first_token_s, 0.5);
  EXPECT_EQ(f.out.at(1).generated_tokens, 1);
}

TEST(DisaggregatedDeployment, RefusesBadConfig) {
  DisaggregationConfig c = slow_link();
  c.decode_kv_bytes_per_token_per_gpu = 0;
  EXPECT_THROW(DisaggregatedDeployment(c, {}, {}), std::invalid_argument);
  c = slow_link();
  c.max_local_prefill_tokens = -1;
  EXPECT_THROW(DisaggregatedDeployment(c, {}, {}), std::invalid_argument);
  c = slow_link();
  c.decode_tensor_parallel_size = 0;
  EXPECT_THROW(DisaggregatedDeployment(c, {}, {}), std::invalid_argument);
}

/// A random load on 2 prefill and 2 decode replicas short of blocks (preemptions), some prompts
/// local: every request is reported once, finished ones generated exactly their output, and the
/// finished tokens add up.
TEST(DisaggregatedDeployment, EveryRequestOnceAndTokensConserved) {
  for (FirstTokenFrom first : {FirstTokenFrom::kPrefill, FirstTokenFrom::kDecode}) {
    DisaggregationConfig c = slow_link();
    c.link.gb_s = 1;  // 1 ms per 1000 tokens
    c.max_local_prefill_tokens = 64;
    c.first_token = first;
    Fixture f(c);
    for (int i = 0; i < 2; ++i) f.dep.add_prefill_replica(0, f.st, limits());
    for (int i = 0; i < 2; ++i) f.dep.add_decode_replica(0, f.st, limits(60));  // 960 tokens each
    GoRand rng(42);
    double t = 0;
    int64_t want_tokens = 0, remote_multi = 0;
    const int n = 300;
    for (int i = 0; i < n; ++i) {
      t += rng.float64() * 0.2;
      const auto prompt = static_cast<int32_t>(1 + rng.int63n(600));
      const auto output = static_cast<int32_t>(1 + rng.int63n(60));
      want_tokens += prompt + output;
      if (prompt > 64 && output > 1) ++remote_multi;
      f.dep.submit(req(1000 + i, t, prompt, output), t);
    }
    f.dep.finish(1e6);
    ASSERT_EQ(f.reports, n);
    ASSERT_EQ(static_cast<int>(f.out.size()), n);
    int64_t got_tokens = 0, preemptions = 0;
    for (const auto& [id, o] : f.out) {
      ASSERT_EQ(o.status, RequestStatus::kFinished) << id;
      EXPECT_EQ(o.generated_tokens, o.output_tokens) << id;
      EXPECT_GE(o.first_token_s, o.arrival_s);
      EXPECT_GE(o.finish_s, o.first_token_s);
      got_tokens += o.prompt_tokens + o.generated_tokens;
      preemptions += o.preemptions;
    }
    EXPECT_EQ(got_tokens, want_tokens);
    EXPECT_GT(preemptions, 0);  // the decode replicas were short of blocks
    EXPECT_EQ(f.dep.remote_prefills() + f.dep.local_prefills(), n);
    EXPECT_EQ(f.dep.transfers(), remote_multi);
  }
}

TEST(BenchServeDisaggregated, OneRequestMetricsAndItl) {
  LinearStepTime st;
  const BenchPool prefill{&st, limits(), 1};
  const BenchPool decode{&st, limits(), 1};
  std::vector<Request> requests{req(0, 1.0, 100, 4)};
  const BenchServeResult r = run_bench_serve_disaggregated(requests, prefill, decode, slow_link());
  EXPECT_EQ(r.completed, 1);
  EXPECT_NEAR(r.ttft.mean_ms, 500, 1e-9);
  EXPECT_NEAR(r.tpot.mean_ms, 150, 1e-9);
  // Gaps: 1.5 -> 1.75 (transfer and the first decode step), then 0.1 s twice.
  EXPECT_EQ(r.itl.samples, 3);
  EXPECT_NEAR(r.itl.mean_ms, 150, 1e-9);
  EXPECT_NEAR(r.itl.median_ms, 100, 1e-9);
  EXPECT_NEAR(r.duration_s, 1.95, 1e-12);
  EXPECT_EQ(r.remote_prefills, 1);
  EXPECT_EQ(r.kv_transfers, 1);
  EXPECT_NEAR(r.kv_transfer_mean_ms, 150, 1e-9);
  EXPECT_THROW(run_bench_serve_disaggregated(requests, BenchPool{&st, limits(), 0}, decode, slow_link()), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::inference
