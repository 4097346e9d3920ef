#include "cli/simulate_command.h"

#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "io/sim_output.h"
#include "io/sim_pools.h"
#include "io/sim_workload.h"
#include "sched/policy_registry.h"
#include "sim/simulator.h"
#include "sim/workload_generator.h"
#include "util/atomic_file.h"
#include "util/go_rand.h"
#include "util/input_error.h"
#include "util/progress.h"

namespace gpufleet::cli {

int run_simulate_command(const SimulateCommandOptions& o) {
  const std::vector<std::string> policies = sched::parse_policy_list(o.policy);
  if (policies.size() != 1) throw UsageError(fmt::format("--policy: simulate takes one policy, got '{}'", o.policy));
  for (const auto& [flag, path] : {std::pair{"--json", o.json_path}, std::pair{"--timeseries", o.timeseries_path}})
    if (!path.empty())
      if (const std::string why = output_path_problem(path); !why.empty()) throw UsageError(fmt::format("{}: {}", flag, why));

  const sim::ClusterConfig cluster = io::read_sim_cluster_file(o.pools_path);
  std::vector<std::string> pool_names;
  for (const sim::SimPool& p : cluster.pools) pool_names.push_back(p.pool.name);
  io::SimWorkloadFile file = io::read_sim_workload_file(o.workload_path, pool_names);
  if (file.generator) {
    GoRand rng(static_cast<int64_t>(o.seed));  // the generator's own stream, seeded like the run
    for (sim::WorkloadSpec& job : sim::generate_jobs(*file.generator, rng)) file.workload.items.push_back(std::move(job));
  }

  sim::SimOptions options;
  options.policy = policies.front();
  options.seed = o.seed;
  Progress progress("simulate", 100, !o.quiet);
  int done = 0;
  options.progress = [&](double fraction) {
    const int now = static_cast<int>(fraction * 100 + 0.5);
    if (now > done) progress.advance(now - done);
    done = std::max(done, now);
  };
  sim::SimResult result;
  try {
    result = sim::simulate(cluster, file.workload, options);
  } catch (const std::invalid_argument& e) {  // the readers check everything with positions first
    throw InputError(o.workload_path, 0, "", e.what());
  }
  progress.finish();

  std::vector<std::pair<std::string, std::string>> outputs;
  if (!o.json_path.empty()) outputs.emplace_back(o.json_path, io::sim_result_json(result));
  if (!o.timeseries_path.empty()) outputs.emplace_back(o.timeseries_path, io::sim_timeseries_csv(result));
  if (!outputs.empty()) write_files_atomically(outputs);
  std::string text = io::sim_summary_text(result);
  if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
  if (!o.timeseries_path.empty()) text += fmt::format("timeseries: {}\n", o.timeseries_path);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace gpufleet::cli
