// Argument checks shared by the gpufleet commands (pack, place, simulate, compare). CLI only: they
// speak in flags and throw UsageError (util/input_error.h), so that a bad argument fails before any
// input is read or any work is done.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gpufleet::cli {

/// A path given on the command line: (flag, path), e.g. ("--json", "out/run.json").
using PathArg = std::pair<std::string_view, std::string_view>;

/// Checks the requested outputs, each (flag, path) with an empty path meaning "not asked for", and
/// throws UsageError for the first problem:
///  1. in order, one that cannot be written (output_path_problem, util/atomic_file.h):
///     "<flag> <path>: cannot write there: <why>";
///  2. two outputs that are the same file (only the last would be kept):
///     "<flag> <path> and <flag2> <path2> are the same file: give each output its own path".
/// Two paths are the same file when std::filesystem::equivalent says so (both exist), else when their
/// absolute forms are equal once normalized (weakly_canonical: symbolic links of the existing part
/// resolved, "." and ".." removed).
void check_output_paths(std::initializer_list<PathArg> outputs);

/// The one policy that `text` names (sched::parse_policy_list: a name, a comma list or "all"; an
/// unknown name throws its UsageError). Throws UsageError(`error`) unless it names exactly one.
std::string one_policy(std::string_view text, const std::string& error);

}  // namespace gpufleet::cli
