#include "cli/compare_command.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "report/sim_output.h"
#include "readers/sim/sim_pools.h"
#include "report/sim_report.h"
#include "sim/simulator.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/progress.h"

namespace gpufleet::cli {

CompareConfig parse_compare_config(const std::string& text) {
  CompareConfig c;
  std::string rest = text;
  if (const size_t eq = rest.find('='); eq != std::string::npos) {
    c.label = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
  }
  c.policy = "gpufleet";
  if (const size_t comma = rest.find(','); comma != std::string::npos) {
    std::string tail = rest.substr(comma + 1);
    rest = rest.substr(0, comma);
    if (const size_t second = tail.find(','); second != std::string::npos) {
      c.workload_path = tail.substr(second + 1);
      tail = tail.substr(0, second);
      if (c.workload_path.empty()) throw UsageError(fmt::format("--config '{}': empty workload path", text));
    }
    if (!tail.empty()) c.policy = tail;
  }
  c.pools_path = rest;
  if (c.pools_path.empty()) throw UsageError(fmt::format("--config '{}': no pools file (want [LABEL=]POOLS[,POLICY])", text));
  const std::string option = fmt::format("--config '{}'", text);  // the user wrote no --policy
  c.policy = one_policy(c.policy, option, option + ": one policy per configuration");
  if (c.label.empty()) c.label = std::filesystem::path(c.pools_path).stem().string();
  return c;
}

int run_compare_command(const CompareCommandOptions& o) {
  if (o.configs.empty()) throw UsageError("give at least one --config [LABEL=]POOLS[,POLICY[,WORKLOAD]]");
  std::vector<CompareConfig> configs;
  std::set<std::string> labels;
  bool every_config_has_workload = true;
  for (const std::string& text : o.configs) {
    configs.push_back(parse_compare_config(text));
    every_config_has_workload = every_config_has_workload && !configs.back().workload_path.empty();
    if (!labels.insert(configs.back().label).second)
      throw UsageError(fmt::format("--config: label '{}' appears twice (name them LABEL=POOLS)", configs.back().label));
  }
  // The command's workload is needed unless every configuration names its own.
  if (!every_config_has_workload || !workload_source_file(o.workload).empty() || !o.workload.history_path.empty())
    check_workload_source(o.workload);
  std::vector<InputArg> inputs = {{"--workload", o.workload.workload_path},
                                  {"--openb-pods", o.workload.openb_pods_path},
                                  {"--snapshot", o.workload.snapshot_path},
                                  {"--history", o.workload.history_path},
                                  {"--serving-catalog", o.workload.serving_catalog_path},
                                  {"--faults", o.faults_path}};
  for (const CompareConfig& c : configs) {
    inputs.push_back({"--config", c.pools_path});
    if (!c.workload_path.empty()) inputs.push_back({"--config", c.workload_path});
  }
  check_output_paths({{"--json", o.json_path}, {"--report", o.report_path}}, inputs);
  // Read and check every input before the first run, so bad input fails fast.
  const inference::ServingCatalog catalog = load_serving_catalog(o.workload);
  std::vector<sim::ClusterConfig> clusters;
  std::vector<sim::Workload> workloads;
  for (const CompareConfig& c : configs) {
    clusters.push_back(load_cluster(c.pools_path, o.faults_path));
    WorkloadSource source = o.workload;
    if (!c.workload_path.empty()) {
      source = WorkloadSource{};
      source.workload_path = c.workload_path;
      source.serving_catalog_path = o.workload.serving_catalog_path;
    }
    workloads.push_back(load_workload(source, clusters.back(), o.seed, catalog));
    sim::check_work_budget(clusters.back(), workloads.back(), sim::SimOptions{}, o.budget);
  }

  Progress progress("compare", static_cast<int64_t>(configs.size()) * 100, !o.quiet);
  std::vector<io::CompareEntry> entries;
  for (size_t i = 0; i < configs.size(); ++i) {
    sim::SimOptions options;
    options.policy = configs[i].policy;
    options.seed = o.seed;
    options.production_priority = o.production_priority;
    options.serving_catalog = &catalog;
    options.progress = progress.fraction_callback(100);
    io::CompareEntry e;
    e.label = configs[i].label;
    e.pools_path = configs[i].pools_path;
    try {
      e.result = sim::simulate(clusters[i], workloads[i], options);
    } catch (const std::invalid_argument& err) {
      throw InputError(configs[i].workload_path.empty() ? configs[i].pools_path : configs[i].workload_path, 0, "", err.what());
    }
    entries.push_back(std::move(e));
  }
  progress.finish();

  std::string workload = every_config_has_workload && workload_source_file(o.workload).empty()
                             ? std::string("per configuration")
                             : describe_workload_source(o.workload);
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!o.json_path.empty()) outputs.emplace_back(o.json_path, io::sim_compare_json(workload, entries));
  if (!o.report_path.empty()) outputs.emplace_back(o.report_path, io::sim_report_html(workload, entries));
  if (!outputs.empty()) write_files_atomically(outputs);
  std::string text = fmt::format("workload: {}, seed {}\n", workload, o.seed) + io::sim_compare_table(entries);
  if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
  if (!o.report_path.empty()) text += fmt::format("report: {}\n", o.report_path);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace gpufleet::cli
