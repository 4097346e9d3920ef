// `gpufleet plan`'s search end to end on a generated workload: the bounds (two LPs), the candidates,
// the race, the finalists, the local search and the waterfall, on one thread, over a catalog of four
// instance types built in code (8-GPU A100 and L4 nodes, 4-GPU and 1-GPU T4 nodes, AWS us-east-1 list
// prices as examples/plan/catalog.yaml). The workload is the seeded generator's diurnal stream over
// `days` days with `jobs` jobs (whole GPUs, shares of a GPU, 8-GPU jobs; production, batch on spot).
// Counters: candidates, simulations (race + finalists + baseline + waterfall), plan_usd.
//   build/bench/gpufleet_bench --benchmark_filter=Plan
#include <benchmark/benchmark.h>

#include <string>
#include <utility>

#include "inputs/sim/job_generator.h"
#include "model/resources.h"
#include "plan/cost_bound.h"
#include "plan/search.h"
#include "util/go_rand.h"

namespace {

using namespace gpufleet;

plan::CostBoundOption option(std::string type, std::string model, int32_t gpus, int64_t cpu_milli, int64_t memory_gib,
                             double on_demand, double spot, double reserved) {
  plan::CostBoundOption o;
  o.instance_type = std::move(type);
  o.zone = "us-east-1a";
  o.gpu_model = std::move(model);
  o.gpus = gpus;
  o.cpu_milli = cpu_milli;
  o.memory_bytes = memory_gib * kBytesPerMib * 1024;
  o.on_demand_usd_per_hour = on_demand;
  o.spot_usd_per_hour = spot;
  o.committed_usd_per_hour = reserved;
  o.commitment = "reserved1y";
  o.spot_interruptions_per_hour = 0.0002;
  return o;
}

sim::Workload workload(int days, int64_t jobs) {
  sim::GeneratorParams g;
  g.jobs_per_hour = static_cast<double>(jobs) / (days * 24.0) * 1.02;
  g.diurnal_amplitude = 0.5;
  g.end_s = days * 86400.0;
  g.duration_min_s = 600;
  g.duration_max_s = 43200;
  g.pareto_shape = 1.2;
  g.max_jobs = jobs;
  auto templ = [](double weight, const char* ns, int32_t gpus, int32_t milli, int64_t cpu_milli, int64_t mem_gib, int32_t priority,
                  sim::CapacityPreference cap) {
    sim::JobTemplate t;
    t.weight = weight;
    t.spec.namespace_name = ns;
    t.spec.num_gpu = gpus;
    t.spec.gpu_milli = milli;
    t.spec.cpu_milli = cpu_milli;
    t.spec.memory_bytes = mem_gib * kBytesPerMib * 1024;
    t.spec.priority = priority;
    t.spec.capacity = cap;
    t.spec.checkpoint_interval_s = cap == sim::CapacityPreference::kSpotOk ? 600 : 0;
    return t;
  };
  g.templates = {templ(5, "prod", 1, 1000, 8000, 32, 1000, sim::CapacityPreference::kOnDemand),
                 templ(3, "batch", 1, 500, 4000, 16, 0, sim::CapacityPreference::kSpotOk),
                 templ(1, "train", 8, 1000, 64000, 512, 100, sim::CapacityPreference::kOnDemand)};
  GoRand rng(42);
  sim::Workload w;
  w.horizon_s = days * 86400.0;
  w.items = sim::generate_jobs(g, rng);
  return w;
}

void BM_Plan(benchmark::State& state) {
  const sim::Workload w = workload(static_cast<int>(state.range(0)), state.range(1));
  const std::vector<plan::CostBoundOption> options = {
      option("p4d.24xlarge", "A100-40GB", 8, 95690, 1122, 32.77, 13.11, 19.22),
      option("g6.48xlarge", "L4", 8, 191450, 754, 13.3504, 5.34, 7.8302),
      option("g4dn.12xlarge", "T4", 4, 47810, 184, 3.912, 1.5648, 2.2944),
      option("g4dn.xlarge", "T4", 1, 3920, 14, 0.526, 0.2104, 0.3085)};
  plan::PlanConstraints constraints;
  constraints.max_spot_share = 0.5;
  plan::PlanSearchOptions search;
  search.threads = 1;
  size_t candidates = 0, simulations = 0;
  double plan_usd = 0;
  for (auto _ : state) {
    simulations = 0;
    search.on_simulation_done = [&] { ++simulations; };
    const plan::PlanBounds bounds = plan::plan_bounds(w, options, constraints, search);
    const std::vector<plan::PlanCandidate> cands = plan::plan_candidates(bounds, options, constraints, w);
    candidates = cands.size();
    const plan::PlanOutcome out =
        plan::finish_plan(bounds, cands, plan::race_shard(cands, w, search, 0, 1), w, options, constraints, search);
    plan_usd = out.recommended ? out.finalists[*out.recommended].cost_usd : 0;
    benchmark::DoNotOptimize(plan_usd);
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["simulations"] = static_cast<double>(simulations);
  state.counters["plan_usd"] = plan_usd;
}
BENCHMARK(BM_Plan)->Args({2, 2'000})->Args({7, 20'000})->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
