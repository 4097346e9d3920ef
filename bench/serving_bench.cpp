// The vLLM replica engine and the deployment at scale (the speed goal: 24 simulated hours of
// one service at a mean 50 requests/s in at most 30 s on one core).
//  - ReplicaEngine/1: one replica, constant 10 ms steps, Poisson arrivals at 8 requests/s for one
//    simulated hour, prompts 200-2,000 and outputs 50-450 tokens (uniform; batches of ~20).
//  - Deployment/24: 24 simulated hours at 50 requests/s over 10 replicas (least outstanding), same
//    lengths, an affine step time shaped like Llama-3.1-8B on one H100 (6 ms + 30 us per prefill
//    token + 40 ns per context token read + 20 us per sequence): about 4.3 million requests.
// Counters: requests, steps (summed over replicas), steps_per_s and requests_per_s of wall time,
// mean_batch (sequences per step), peak_rss_mib.
//   build/bench/gpufleet_bench --benchmark_filter='ReplicaEngine|Deployment'
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "inference/deployment.h"
#include "inference/replica_engine.h"

namespace {

using namespace gpufleet::inference;

class AffineStepTime final : public StepTimeModel {
 public:
  double step_seconds(const StepBatch& b) const override {
    return 0.006 + 30e-6 * b.prefill_tokens + 40e-9 * static_cast<double>(b.context_tokens) + 20e-6 * b.num_seqs;
  }
};

struct Load {
  std::mt19937_64 g;
  double rate;
  double t = 0;
  uint64_t id = 0;
  explicit Load(double r, uint64_t seed) : g(seed), rate(r) {}
  double uniform() { return static_cast<double>(g() >> 11) * 0x1.0p-53; }
  Request next() {
    t += -std::log1p(-uniform()) / rate;
    Request r;
    r.id = id++;
    r.arrival_s = t;
    r.prompt_tokens = 200 + static_cast<int32_t>(uniform() * 1800);
    r.output_tokens = 50 + static_cast<int32_t>(uniform() * 400);
    return r;
  }
};

EngineLimits h100_8b() {
  EngineLimits lim;
  lim.max_num_seqs = 256;
  lim.max_num_batched_tokens = 8192;
  lim.max_model_len = 8192;
  lim.num_blocks = 26'000;  // ~51 GiB of KV at 128 KiB per token, blocks of 16
  return lim;
}

void report(benchmark::State& state, double wall_s, int64_t requests, int64_t steps, int64_t seqs) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["requests"] = static_cast<double>(requests);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["steps_per_s"] = static_cast<double>(steps) / wall_s;
  state.counters["requests_per_s"] = static_cast<double>(requests) / wall_s;
  state.counters["mean_batch"] = static_cast<double>(seqs) / static_cast<double>(steps);
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void BM_ReplicaEngine(benchmark::State& state) {
  const double horizon_s = 3600.0 * static_cast<double>(state.range(0));
  auto st = make_constant_step_time(0.010);
  int64_t finished = 0, steps = 0, seqs = 0;
  double wall = 0;
  for (auto _ : state) {
    finished = steps = seqs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    ReplicaEngine::Observer obs;
    obs.on_outcome = [&](const RequestOutcome&) { ++finished; };
    obs.on_step = [&](const StepRecord& s) { ++steps, seqs += s.batch.num_seqs; };
    ReplicaEngine e(0, *st, h100_8b(), obs);
    Load load(8.0, 7);
    for (Request r = load.next(); r.arrival_s < horizon_s; r = load.next()) e.add_request(r, r.arrival_s);
    e.run_until(horizon_s + 3600);
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  report(state, wall, finished, steps, seqs);
}
BENCHMARK(BM_ReplicaEngine)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_Deployment(benchmark::State& state) {
  const double horizon_s = 3600.0 * static_cast<double>(state.range(0));
  AffineStepTime st;
  int64_t finished = 0, steps = 0, seqs = 0;
  double wall = 0;
  for (auto _ : state) {
    finished = steps = seqs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    Deployment::Observer obs;
    obs.on_outcome = [&](const RequestOutcome&) { ++finished; };
    obs.on_step = [&](int32_t, const StepRecord& s) { ++steps, seqs += s.batch.num_seqs; };
    Deployment d({}, obs);
    for (int i = 0; i < 10; ++i) d.add_replica(0, st, h100_8b());
    Load load(50.0, 11);
    for (Request r = load.next(); r.arrival_s < horizon_s; r = load.next()) d.submit(r, r.arrival_s);
    d.advance_to(horizon_s + 3600);
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  report(state, wall, finished, steps, seqs);
}
BENCHMARK(BM_Deployment)->Arg(1)->Arg(24)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
