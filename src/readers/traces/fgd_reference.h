// Reader for the FGD artifact's cached results (hkust-adsl/kubernetes-scheduler-simulator,
// experiments/analysis/expected_results/analysis_allo_discrete.csv and friends): one row per
// (workload, sc_policy, tune, seed) with columns "0".."130", each row a pack::ReferenceRun
// (inputs/pack/reference_run.h).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/pack/reference_run.h"

namespace gpufleet::io {

/// The artifact's policy label ("06-FGD") as a gpufleet policy name ("fgd"); empty if unknown.
std::string policy_from_artifact_label(const std::string& label);

/// Parses every row of the CSV text (header workload,sc_policy,tune,seed,...,"0".."130"); `source`
/// names it in errors. tune is a number, seed an integer, curve cells numbers or empty. The limits of
/// readers/formats/input_limits.h (CsvLimits) apply. Throws InputError naming source, line and field on a
/// malformed row.
std::vector<pack::ReferenceRun> parse_fgd_reference(std::string_view text, const std::string& source);

/// Reads a file with parse_fgd_reference. Throws InputError (line 0) when it cannot be read.
std::vector<pack::ReferenceRun> read_fgd_reference(const std::string& path);

}  // namespace gpufleet::io
