#include "cli/simulate_command.h"

#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "report/inference_output.h"
#include "report/sim_output.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/sim/sim_pools.h"
#include "report/sim_report.h"
#include "sim/simulator.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/progress.h"

namespace gpufleet::cli {

int run_simulate_command(const SimulateCommandOptions& o) {
  const std::string policy = one_policy(o.policy, "--policy", fmt::format("--policy: simulate takes one policy, got '{}'", o.policy));
  check_output_paths({{"--json", o.json_path},
                      {"--timeseries", o.timeseries_path},
                      {"--serving-timeseries", o.serving_timeseries_path},
                      {"--report", o.report_path}},
                     {{"--pools", o.pools_path},
                      {"--faults", o.faults_path},
                      {"--workload", o.workload.workload_path},
                      {"--openb-pods", o.workload.openb_pods_path},
                      {"--snapshot", o.workload.snapshot_path},
                      {"--history", o.workload.history_path},
                      {"--serving-catalog", o.workload.serving_catalog_path}});

  check_workload_source(o.workload);
  const FeatureGates gates = parse_feature_gates(o.feature_gates);
  sim::ClusterConfig cluster = load_cluster(o.pools_path, o.faults_path);
  cluster.dra.consumable_capacity = gates.dra_consumable_capacity;
  DraCatalog published = cluster.dra;  // with the pools' template slices (readers/sim/sim_pools.h)
  for (const sim::SimPool& p : cluster.pools)
    published.slices.insert(published.slices.end(), p.settings.resource_slices.begin(), p.settings.resource_slices.end());
  for (const std::string& w : io::dra_feature_warnings(published)) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  const inference::ServingCatalog catalog = load_serving_catalog(o.workload);
  const sim::Workload workload = load_workload(o.workload, cluster, o.seed, catalog);
  if (!o.serving_timeseries_path.empty() && workload.inference.empty())
    throw UsageError("--serving-timeseries: the workload has no inference services");

  sim::SimOptions options;
  options.policy = policy;
  options.seed = o.seed;
  options.production_priority = o.production_priority;
  options.serving_catalog = &catalog;
  sim::check_work_budget(cluster, workload, options, o.budget);
  Progress progress("simulate", 100, !o.quiet);
  options.progress = progress.fraction_callback(100);
  sim::SimResult result;
  try {
    result = sim::simulate(cluster, workload, options);
  } catch (const std::invalid_argument& e) {  // the readers check everything with positions first
    throw InputError(workload_source_file(o.workload), 0, "", e.what());
  }
  progress.finish();

  std::vector<std::pair<std::string, std::string>> outputs;
  if (!o.json_path.empty()) outputs.emplace_back(o.json_path, io::sim_result_json(result));
  if (!o.timeseries_path.empty()) outputs.emplace_back(o.timeseries_path, io::sim_timeseries_csv(result));
  if (!o.serving_timeseries_path.empty())
    outputs.emplace_back(o.serving_timeseries_path, io::inference_timeseries_csv(result.inference));
  if (!o.report_path.empty()) {
    std::vector<io::CompareEntry> one(1);
    one[0].label = "simulate";
    one[0].pools_path = o.pools_path;
    one[0].result = result;
    outputs.emplace_back(o.report_path, io::sim_report_html(describe_workload_source(o.workload), one));
  }
  if (!outputs.empty()) write_files_atomically(outputs);
  std::string text = fmt::format("workload: {}\n", describe_workload_source(o.workload)) + io::sim_summary_text(result);
  if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
  if (!o.timeseries_path.empty()) text += fmt::format("timeseries: {}\n", o.timeseries_path);
  if (!o.serving_timeseries_path.empty()) text += fmt::format("serving timeseries: {}\n", o.serving_timeseries_path);
  if (!o.report_path.empty()) text += fmt::format("report: {}\n", o.report_path);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace gpufleet::cli
