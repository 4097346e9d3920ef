#include "cli/place_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "report/place_output.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {

int run_place_command(const PlaceCommandOptions& o) {
  const std::string policy = one_policy(o.policy, "--policy", fmt::format("--policy: place takes one policy, got '{}'", o.policy));
  if (o.cluster_paths.empty()) throw UsageError("--cluster: at least one file or directory is required");
  std::vector<InputArg> input_paths;
  for (const std::string& p : o.cluster_paths) input_paths.push_back({"--cluster", p, true});
  for (const std::string& p : o.workload_paths) input_paths.push_back({"--workload", p, true});
  check_output_paths({{"--json", o.json_path}}, input_paths);
  const FeatureGates gates = parse_feature_gates(o.feature_gates);

  io::PlaceInputs inputs = io::read_place_inputs(o.cluster_paths, o.workload_paths);
  inputs.input.dra.consumable_capacity = gates.dra_consumable_capacity;
  for (std::string& w : io::dra_feature_warnings(inputs.input.dra)) inputs.warnings.push_back(std::move(w));
  if (!o.admission.empty()) inputs.input.kueue.configuration.placement_aware = o.admission == "placement";
  // Each says where gpufleet decides differently from Kubernetes or leaves something out, which the
  // results depend on: on stderr unless --quiet, and always in the JSON (`warnings`).
  if (!o.quiet)
    for (const std::string& w : inputs.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());

  place::PlaceOptions options;
  options.policy = policy;
  options.seed = o.seed;
  options.percentage_of_nodes_to_score = o.percentage_of_nodes_to_score;
  const place::PlaceResult result = place::place_workload(inputs.input, options);

  if (!o.json_path.empty()) write_file_atomically(o.json_path, io::place_result_json(result, inputs.warnings, inputs.node_warnings, inputs.objects.not_modelled));
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
