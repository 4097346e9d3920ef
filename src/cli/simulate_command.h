// `gpufleet simulate`: runs a workload over time on autoscaled node pools (sim/simulator.h) and
// reports cost, chargeback, allocation, pending times and spot losses.
#pragma once

#include <cstdint>
#include <string>

#include "cli/workload_source.h"
#include "inputs/sim/work_estimate.h"

namespace gpufleet::cli {

struct SimulateCommandOptions {
  std::string pools_path;
  std::string faults_path;       ///< --faults: a FaultSchedule file (readers/sim/fault_schedule.h); empty = none       ///< node-pool file, optionally with an Autoscaling document (readers/sim/sim_pools.h)
  WorkloadSource workload;      ///< workload file or openb trace
  std::string policy = "gpufleet";
  uint64_t seed = 42;
  std::string json_path;        ///< empty = none
  std::string timeseries_path;  ///< empty = none
  std::string serving_timeseries_path;  ///< inference services' per-minute CSV; empty = none
  std::string report_path;      ///< self-contained HTML report; empty = none
  int32_t production_priority = 1000;  ///< pods at or above it are "production" in the summary
  bool quiet = false;           ///< no progress on stderr
  std::string feature_gates;    ///< --feature-gates (cli/command_checks.h parse_feature_gates); empty = defaults
  /// The work budget the run must fit (--max-requests, --max-events, --max-pods, --max-node-checks),
  /// checked before it starts (inputs/sim/work_estimate.h).
  sim::WorkBudget budget;
};

/// Runs the command: summary on stdout, progress on stderr unless quiet, outputs written all or
/// nothing. Returns the exit status (0). Throws InputError / UsageError for bad input before any
/// output is written.
int run_simulate_command(const SimulateCommandOptions& options);

}  // namespace gpufleet::cli
