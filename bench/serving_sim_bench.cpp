// An inference service through the whole simulator (sim::simulate, as `gpufleet simulate` runs it):
// examples/serving/chat-day.yaml, 24 simulated hours of Llama-3.1-8B at a mean 50 requests/s (peak
// 1.5 x trough, about 4.3 million requests), replicas scaled by KEDA on vllm:num_requests_waiting and
// vllm:num_requests_running between 2 and 32, on the L40S nodes of examples/serving/pools.yaml that the
// Cluster Autoscaler adds.
// Target: at most 30 s and 1 GB on one core. Counters: requests, finished, timed_out,
// cold_starts, requests_per_s (of wall time), requests_per_cpu_s (of the process's CPU time, the
// figure to read on a loaded machine), peak_rss_mib (getrusage). Measured (docs/performance.md):
// about 4.1 s of CPU, 1,065,000 requests per CPU second (709,000 before the fast path took
// admissions and finishes, 430,000 before that), 115 MiB peak.
//   build/bench/gpufleet_bench --benchmark_filter=ServingChatDay --benchmark_repetitions=3
// The same run from the command line:
//   /usr/bin/time -f '%M KB %U s' build/gpufleet simulate --pools examples/serving/pools.yaml
//     --workload examples/serving/chat-day.yaml -q   (one line)
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <string>
#include <vector>

#include "readers/serving/inference_catalog.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/simulator.h"

namespace {

using namespace gpufleet;

void BM_ServingChatDay(benchmark::State& state) {
  const std::string dir = GPUFLEET_SOURCE_DIR "/examples/serving/";
  const sim::ClusterConfig cluster = io::read_sim_cluster_file(dir + "pools.yaml");
  std::vector<std::string> pools;
  for (const sim::SimPool& p : cluster.pools) pools.push_back(p.pool.name);
  const sim::Workload workload = io::read_sim_workload_file(dir + "chat-day.yaml", pools).workload;
  sim::SimOptions options;
  options.seed = 42;
  options.serving_catalog = &io::builtin_serving_catalog();
  int64_t arrived = 0, finished = 0, timed_out = 0, cold_starts = 0;
  double wall_s = 0, cpu_s = 0;
  auto process_cpu_s = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_s();
    const sim::SimResult r = sim::simulate(cluster, workload, options);
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_s = process_cpu_s() - c0;
    const sim::InferenceServiceResult& s = r.inference.at(0);
    arrived = s.requests;
    finished = s.finished;
    timed_out = s.timed_out;
    cold_starts = s.cold_starts;
    benchmark::DoNotOptimize(r.cost_usd);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["requests"] = static_cast<double>(arrived);
  state.counters["finished"] = static_cast<double>(finished);
  state.counters["timed_out"] = static_cast<double>(timed_out);
  state.counters["cold_starts"] = static_cast<double>(cold_starts);
  state.counters["requests_per_s"] = static_cast<double>(arrived) / wall_s;
  state.counters["requests_per_cpu_s"] = static_cast<double>(arrived) / cpu_s;
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}
BENCHMARK(BM_ServingChatDay)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
