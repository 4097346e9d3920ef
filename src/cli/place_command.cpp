#include "cli/place_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "io/place_inputs.h"
#include "io/place_output.h"
#include "sched/policy_registry.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {

int run_place_command(const PlaceCommandOptions& o) {
  const std::vector<std::string> policies = sched::parse_policy_list(o.policy);
  if (policies.size() != 1) throw UsageError(fmt::format("--policy: place takes one policy, got '{}'", o.policy));
  if (o.cluster_paths.empty()) throw UsageError("--cluster: at least one file or directory is required");
  if (!o.json_path.empty())
    if (const std::string why = output_path_problem(o.json_path); !why.empty()) throw UsageError(fmt::format("--json: {}", why));

  const io::PlaceInputs inputs = io::read_place_inputs(o.cluster_paths, o.workload_paths);
  if (!o.quiet)
    for (const std::string& w : inputs.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());

  place::PlaceOptions options;
  options.policy = policies.front();
  options.seed = o.seed;
  const place::PlaceResult result = place::place_workload(inputs.input, options);

  if (!o.json_path.empty()) write_file_atomically(o.json_path, io::place_result_json(result));
  std::string text = io::place_result_text(result);
  if (!inputs.objects.skipped_kinds.empty()) {
    int skipped = 0;
    for (const auto& [kind, count] : inputs.objects.skipped_kinds) skipped += count;
    text += fmt::format("skipped {} object(s) of {} unmodelled kind(s)\n", skipped, inputs.objects.skipped_kinds.size());
  }
  if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
  std::fwrite(text.data(), 1, text.size(), stdout);  // not fputs: a name may hold a NUL byte
  return 0;
}

}  // namespace gpufleet::cli
