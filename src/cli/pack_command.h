// `gpufleet pack`: the FGD packing experiment over policies x seeds (pack/pack_experiment.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::cli {

struct PackCommandOptions {
  std::string nodes_path;      ///< openb node list; empty: the default trace, else a synthetic cluster
  std::string pods_path;       ///< openb pod list; empty: the default trace, else a synthetic workload
  std::string policies = "gpufleet";
  std::string seeds = "42-51";
  double tune = 1.3;
  int jobs = 0;                ///< parallel runs; 0 = number of cores
  std::string json_path;
  std::string csv_path;
  std::string report_path;     ///< self-contained HTML report (report/pack_report.h)
  std::string reference_path;  ///< FGD analysis_allo_discrete.csv to compare against
  bool quiet = false;
  bool timings = false;        ///< put wall times into the JSON (makes it non-reproducible)
  bool bound = true;           ///< compute the LP upper bound per run
};

/// Runs the command; prints the summary on stdout, progress on stderr. Returns the exit status.
/// Throws InputError / UsageError for bad input (the caller exits with 2) before writing anything.
int run_pack_command(const PackCommandOptions& options);

/// "42-51", "42,44", "42-45,50" -> seeds in order. Throws UsageError on anything else.
std::vector<int64_t> parse_seed_list(std::string_view text);

/// The folder with the public traces: $GPUFLEET_TRACES, else ../shared/traces from the working
/// directory, else the one beside the source checkout. Empty if none has the openb trace. Throws
/// UsageError when $GPUFLEET_TRACES is set but holds no openb trace.
std::string find_traces_dir();

}  // namespace gpufleet::cli
