// Reader for a measured step-time table (inference::make_profile_step_time, inference/step_time.h):
// what `bench-serve --step-profile FILE.csv` replays instead of the roofline.
//
// Format: CSV with a header (readers/formats/csv_table.h syntax: no quoting, trimmed cells, blank lines skipped)
// holding the columns num_seqs, tokens and step_s, found by name in any order, other columns ignored:
//
//   num_seqs,tokens,step_s
//   1,1,0.0071
//   64,64,0.0094
//   1,2048,0.0702
//
// num_seqs: requests in the step, an integer in [1, StepProfileLimits::max_num_seqs]; tokens: prefill +
// decode tokens, an integer in [0, max_tokens]; step_s: seconds, a number in (0, max_step_s].
// Errors throw InputError naming the file, the 1-based line, the column and the field: a missing
// column, a cell that is not a number or is out of range, a (num_seqs, tokens) pair given twice
// (naming the first line), an empty table, a file or table over the limits (readers/formats/input_limits.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "inference/step_time.h"
#include "readers/formats/input_limits.h"

namespace gpufleet::io {

/// Parses a table; `source` names it in errors. Throws InputError.
std::vector<inference::StepProfileRow> parse_step_profile(std::string_view text, const std::string& source,
                                                           const StepProfileLimits& limits = kStepProfileLimits);
/// Reads a file (at most StepProfileLimits::max_file_bytes) and parses it. Throws InputError.
std::vector<inference::StepProfileRow> read_step_profile(const std::string& path,
                                                          const StepProfileLimits& limits = kStepProfileLimits);

}  // namespace gpufleet::io
