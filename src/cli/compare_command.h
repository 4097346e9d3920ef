// `gpufleet compare`: several configurations (a pools file and a policy each) simulated on the same
// workload and seed, side by side in one table (stdout), one JSON and one HTML report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/workload_source.h"
#include "inputs/sim/work_estimate.h"

namespace gpufleet::cli {

struct CompareCommandOptions {
  WorkloadSource workload;
  /// "[LABEL=]POOLS[,POLICY[,WORKLOAD]]" each, at least one; the first is the baseline the savings
  /// refer to. LABEL defaults to the pools file name without directory and extension, POLICY (may be
  /// empty) to gpufleet, WORKLOAD to --workload (a workload file for this configuration alone, e.g.
  /// the same services with another autoscaler).
  std::vector<std::string> configs;
  /// --faults: a FaultSchedule file (readers/sim/fault_schedule.h) applied to every configuration; empty = none.
  std::string faults_path;
  uint64_t seed = 42;
  int32_t production_priority = 1000;
  std::string json_path;    ///< empty = none
  std::string report_path;  ///< empty = none
  bool quiet = false;
  /// The work budget each run must fit, checked for every configuration before the first run
  /// (inputs/sim/work_estimate.h).
  sim::WorkBudget budget;
};

/// One parsed --config value.
struct CompareConfig {
  std::string label;
  std::string pools_path;
  std::string policy;
  std::string workload_path;  ///< empty = the command's workload
};

/// Parses "[LABEL=]POOLS[,POLICY[,WORKLOAD]]"; throws UsageError for an empty pools path or an unknown policy,
/// naming the --config value ("--config 'POOLS,x': unknown policy 'x' (valid: ...)").
CompareConfig parse_compare_config(const std::string& text);

/// Runs every configuration; table on stdout; outputs written all or nothing after the last run.
/// Returns 0. Throws InputError / UsageError before any output is written; duplicate labels are a
/// UsageError.
int run_compare_command(const CompareCommandOptions& options);

}  // namespace gpufleet::cli
