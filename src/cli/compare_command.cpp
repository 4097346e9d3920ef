#include "cli/compare_command.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "io/sim_output.h"
#include "io/sim_pools.h"
#include "io/sim_report.h"
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
  if (const size_t comma = rest.rfind(','); comma != std::string::npos) {
    c.policy = rest.substr(comma + 1);
    rest = rest.substr(0, comma);
  }
  c.pools_path = rest;
  if (c.pools_path.empty()) throw UsageError(fmt::format("--config '{}': no pools file (want [LABEL=]POOLS[,POLICY])", text));
  const std::string option = fmt::format("--config '{}'", text);  // the user wrote no --policy
  c.policy = one_policy(c.policy, option, option + ": one policy per configuration");
  if (c.label.empty()) c.label = std::filesystem::path(c.pools_path).stem().string();
  return c;
}

int run_compare_command(const CompareCommandOptions& o) {
  check_workload_source(o.workload);
  if (o.configs.empty()) throw UsageError("give at least one --config [LABEL=]POOLS[,POLICY]");
  std::vector<CompareConfig> configs;
  std::set<std::string> labels;
  for (const std::string& text : o.configs) {
    configs.push_back(parse_compare_config(text));
    if (!labels.insert(configs.back().label).second)
      throw UsageError(fmt::format("--config: label '{}' appears twice (name them LABEL=POOLS)", configs.back().label));
  }
  std::vector<InputArg> inputs = {{"--workload", o.workload.workload_path}, {"--openb-pods", o.workload.openb_pods_path}};
  for (const CompareConfig& c : configs) inputs.push_back({"--config", c.pools_path});
  check_output_paths({{"--json", o.json_path}, {"--report", o.report_path}}, inputs);
  // Read and check every input before the first run, so bad input fails fast.
  std::vector<sim::ClusterConfig> clusters;
  std::vector<sim::Workload> workloads;
  for (const CompareConfig& c : configs) {
    clusters.push_back(io::read_sim_cluster_file(c.pools_path));
    std::vector<std::string> pool_names;
    for (const sim::SimPool& p : clusters.back().pools) pool_names.push_back(p.pool.name);
    workloads.push_back(load_workload(o.workload, pool_names, o.seed));
  }

  Progress progress("compare", static_cast<int64_t>(configs.size()) * 100, !o.quiet);
  std::vector<io::CompareEntry> entries;
  for (size_t i = 0; i < configs.size(); ++i) {
    sim::SimOptions options;
    options.policy = configs[i].policy;
    options.seed = o.seed;
    options.production_priority = o.production_priority;
    options.progress = progress.fraction_callback(100);
    io::CompareEntry e;
    e.label = configs[i].label;
    e.pools_path = configs[i].pools_path;
    try {
      e.result = sim::simulate(clusters[i], workloads[i], options);
    } catch (const std::invalid_argument& err) {
      throw InputError(configs[i].pools_path, 0, "", err.what());
    }
    entries.push_back(std::move(e));
  }
  progress.finish();

  const std::string workload = describe_workload_source(o.workload);
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
