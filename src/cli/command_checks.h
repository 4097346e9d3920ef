// Argument checks shared by the gpufleet commands (pack, place, simulate, compare). CLI only: they
// speak in flags and throw UsageError (util/input_error.h), so that a bad argument fails before any
// input is read or any work is done.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpufleet::cli {

/// A path given on the command line: (flag, path), e.g. ("--json", "out/run.json").
using PathArg = std::pair<std::string_view, std::string_view>;

/// An input path that the outputs must leave alone; `reads_directory`: a directory given there is
/// read for its *.yaml, *.yml and *.json files (place's --cluster and --workload, readers/k8s/k8s_yaml.h).
struct InputArg {
  std::string_view flag;
  std::string_view path;
  bool reads_directory = false;
};

/// Checks the requested outputs, each (flag, path) with an empty path meaning "not asked for",
/// against each other and against the command's inputs, and throws UsageError for the first problem:
///  1. in order, one that cannot be written (output_path_problem, util/atomic_file.h):
///     "<flag> <path>: cannot write there: <why>";
///  2. two outputs that are the same file (only the last would be kept):
///     "<flag> <path> and <flag2> <path2> are the same file: give each output its own path";
///  3. an output that is an input file (it would be overwritten):
///     "<flag> <path>: would overwrite the <input flag> input <input path>";
///  4. an output directly in a `reads_directory` input directory, with a name the directory reader
///     reads (*.yaml, *.yml, *.json: readers/k8s/k8s_yaml.h is_k8s_input_name; the next run would read it):
///     "<flag> <path>: is in the <input flag> directory <dir>, whose *.yaml, *.yml and *.json
///     files are read as input".
/// Two paths are the same file when std::filesystem::equivalent says so (both exist), else when their
/// absolute forms are equal once normalized (weakly_canonical: symbolic links of the existing part
/// resolved, "." and ".." removed). Empty input paths are ignored.
void check_output_paths(std::initializer_list<PathArg> outputs, const std::vector<InputArg>& inputs = {});

/// Every command's rule for a seed: a decimal integer from 0 to kMaxSeed (2^63 - 1, so that every
/// generator takes it as is, Go's int64 seeds of util/go_rand.h included). Returns "" when `text`
/// is one, else the problem in words: "-5 is negative (a seed is an integer from 0 to ...)" or
/// "'x' is not an integer from 0 to ...".
inline constexpr int64_t kMaxSeed = INT64_MAX;
std::string seed_problem(std::string_view text);
/// The seed `text` holds; throws UsageError("<option>: <seed_problem>") otherwise.
int64_t parse_seed(std::string_view text, std::string_view option);

/// The one policy that `text` names (sched::parse_policy_list: a name, a comma list or "all"; an
/// unknown name throws its UsageError, "<option>: unknown policy ..."). Throws UsageError(`error`)
/// unless it names exactly one.
std::string one_policy(std::string_view text, std::string_view option, const std::string& error);

/// The Kubernetes feature gates gpufleet models that are off by default, as `--feature-gates` of
/// place and simulate gives them (kube's flag syntax, k8s.io/component-base/featuregate:
/// "Name=true,Other=false", names case-sensitive, values true/false in any case).
/// DRAConsumableCapacity (KEP-5075, alpha in Kubernetes 1.34): DraCatalog::consumable_capacity.
/// DRADeviceTaints (KEP-5055) is GA and locked on since Kubernetes 1.37: `=true` is accepted and
/// changes nothing, `=false` is refused as kube refuses a locked gate (k8s.io/component-base/
/// featuregate Set: "cannot set feature gate X to false, feature is locked to true").
struct FeatureGates {
  bool dra_consumable_capacity = false;
};
/// Throws UsageError "--feature-gates: unrecognized feature gate: X" (kube's words; a gate gpufleet
/// does not model is unrecognized too), or for a malformed entry or value.
FeatureGates parse_feature_gates(std::string_view text);

}  // namespace gpufleet::cli
