// Argument checks shared by the gpufleet commands (pack, place, simulate, compare). CLI only: they
// speak in flags and throw UsageError (util/input_error.h), so that a bad argument fails before any
// input is read or any work is done.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gpufleet::cli {

/// Checks each requested output, (flag, path) with an empty path meaning "not asked for", in order,
/// with output_path_problem (util/atomic_file.h). Throws UsageError
/// "<flag> <path>: cannot write there: <why>" for the first one that cannot be written.
void check_output_paths(std::initializer_list<std::pair<std::string_view, std::string_view>> outputs);

/// The one policy that `text` names (sched::parse_policy_list: a name, a comma list or "all"; an
/// unknown name throws its UsageError). Throws UsageError(`error`) unless it names exactly one.
std::string one_policy(std::string_view text, const std::string& error);

}  // namespace gpufleet::cli
