// Reader for the FGD artifact's cached results (experiments/analysis/expected_results/
// analysis_allo_discrete.csv and friends, shipped in ../shared/traces/alibaba-gpu-v2023/
// fgd_expected_results/): one row per (workload, sc_policy, tune, seed) with columns "0".."130".
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::io {

/// One reference curve.
struct ReferenceRun {
  std::string workload;  ///< e.g. "openb_pod_list_default"
  std::string policy;    ///< gpufleet name: random, dotprod, clustering, packing, bestfit, fgd
  double tune = 0;
  int64_t seed = 0;
  std::vector<double> curve;  ///< 131 values, NaN where the cell is empty
};

/// The artifact's policy label ("06-FGD") as a gpufleet policy name ("fgd"); empty if unknown.
std::string policy_from_artifact_label(const std::string& label);

/// Parses every row of the CSV text (header workload,sc_policy,tune,seed,...,"0".."130"); `source`
/// names it in errors. tune is a number, seed an integer, curve cells numbers or empty. The limits of
/// io/input_limits.h (CsvLimits) apply. Throws InputError naming source, line and field on a
/// malformed row.
std::vector<ReferenceRun> parse_fgd_reference(std::string_view text, const std::string& source);

/// Reads a file with parse_fgd_reference. Throws InputError (line 0) when it cannot be read.
std::vector<ReferenceRun> read_fgd_reference(const std::string& path);

}  // namespace gpufleet::io
