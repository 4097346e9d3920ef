// `gpufleet simulate` at scale (issue 5's speed goal): 30 simulated days of a 1,000-node cluster
// with 1,000,000 jobs, target at most 60 s on one core and at most 2 GB. The cluster has two
// autoscaled pools up to 1,000 nodes together (600 8-GPU H100 nodes, 200 of them reserved, and 400
// 1-GPU L4 nodes on spot) and the workload is the seeded generator's diurnal stream with bounded-Pareto
// durations (10 min to 1 day, shape 1.2; mean about 38 min) over four job templates (whole GPUs,
// shares of a GPU, 8-GPU gangs of 2, spot-ok inference tests). Counters: jobs, simulated_days,
// peak_rss_mib (the process's peak resident set, getrusage), pods_pending_at_end. BM_SimulateSummary
// runs the same with SimOptions::summary_only (a planner's run: no per-unit outcomes); run each case
// in a process of its own for its peak (the counter is the process's, so the largest case run so far).
//   build/bench/gpufleet_bench --benchmark_filter=Simulate
//   build/bench/gpufleet_bench --benchmark_filter=Simulate/3   # 3 days, 100,000 jobs (quick)
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <string>
#include <utility>

#include "model/node_pool.h"
#include "sim/simulator.h"
#include "inputs/sim/job_generator.h"
#include "util/go_rand.h"

namespace {

using namespace gpufleet;

sim::SimPool make_pool(std::string name, std::string model, int32_t gpus, int64_t cpu_milli, int64_t memory_mib, int32_t nodes,
                      int32_t max_nodes, double on_demand_usd_per_hour) {
  sim::SimPool p;
  p.pool.name = std::move(name);
  p.pool.gpu_model = std::move(model);
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = cpu_milli;
  p.pool.memory_bytes = memory_mib * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = nodes;
  p.pool.max_nodes = max_nodes;
  p.pool.on_demand_usd_per_hour = on_demand_usd_per_hour;
  return p;
}

sim::ClusterConfig cluster() {
  sim::ClusterConfig c;
  sim::SimPool h100 = make_pool("h100", "H100-80GB", 8, 191450, 1990 * 1024, 200, 600, 98.32);
  h100.pool.reserved_usd_per_hour = 39.33;
  h100.settings.reserved_nodes = 200;
  sim::SimPool l4 = make_pool("l4-spot", "L4", 1, 3920, 14 * 1024, 0, 400, 0.8048);
  l4.pool.spot_usd_per_hour = 0.35;
  l4.settings.capacity_type = sim::CapacityType::kSpot;
  l4.settings.provision_s = sim::kProvisionKarpenterS;
  l4.settings.spot_interruptions_per_hour = 0.002;
  c.pools = {h100, l4};
  return c;
}

sim::Workload workload(int days, int64_t jobs) {
  sim::GeneratorParams g;
  g.jobs_per_hour = static_cast<double>(jobs) / (days * 24.0) * 1.02;  // a little over, capped by max_jobs
  g.diurnal_amplitude = 0.5;
  g.end_s = days * 86400.0;
  g.duration_min_s = 600;
  g.duration_max_s = 86400;
  g.pareto_shape = 1.2;
  g.max_jobs = jobs;
  auto templ = [](double weight, const char* ns, int32_t pods, int32_t gpus, int32_t milli, int64_t cpu_milli, int64_t mem_mib,
                  sim::CapacityPreference cap, double checkpoint_s) {
    sim::JobTemplate t;
    t.weight = weight;
    t.spec.namespace_name = ns;
    t.spec.pods = pods;
    t.spec.num_gpu = gpus;
    t.spec.gpu_milli = milli;
    t.spec.cpu_milli = cpu_milli;
    t.spec.memory_bytes = mem_mib * kBytesPerMib;
    t.spec.capacity = cap;
    t.spec.checkpoint_interval_s = checkpoint_s;
    return t;
  };
  g.templates = {templ(5, "team-a", 1, 1, 1000, 12000, 64 * 1024, sim::CapacityPreference::kOnDemand, 0),
                 templ(3, "team-b", 1, 1, 500, 3000, 8 * 1024, sim::CapacityPreference::kSpotOk, 600),
                 templ(1, "research", 2, 8, 1000, 90000, 900 * 1024, sim::CapacityPreference::kOnDemand, 1800),
                 templ(1, "serving", 1, 1, 1000, 3000, 12 * 1024, sim::CapacityPreference::kSpotOk, 300)};
  GoRand rng(42);
  sim::Workload w;
  w.horizon_s = days * 86400.0;
  w.items = sim::generate_jobs(g, rng);
  return w;
}

void simulate_case(benchmark::State& state, bool summary_only) {
  const int days = static_cast<int>(state.range(0));
  const int64_t jobs = state.range(1);
  const sim::ClusterConfig c = cluster();
  const sim::Workload w = workload(days, jobs);
  sim::SimOptions options;
  options.summary_only = summary_only;
  int64_t pending = 0;
  for (auto _ : state) {
    const sim::SimResult r = sim::simulate(c, w, options);
    pending = r.pods_pending;
    benchmark::DoNotOptimize(r.cost_usd);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["jobs"] = static_cast<double>(w.items.size());
  state.counters["simulated_days"] = days;
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["pods_pending_at_end"] = static_cast<double>(pending);
}

void BM_Simulate(benchmark::State& state) { simulate_case(state, false); }
BENCHMARK(BM_Simulate)->Args({3, 100'000})->Args({30, 1'000'000})->Iterations(1)->Unit(benchmark::kSecond);

// The same run as a planner makes it (SimOptions::summary_only): no per-unit outcomes.
void BM_SimulateSummary(benchmark::State& state) { simulate_case(state, true); }
BENCHMARK(BM_SimulateSummary)->Args({3, 100'000})->Args({30, 1'000'000})->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
