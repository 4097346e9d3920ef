// `gpufleet place`: places a Kubernetes workload on a cluster (place/place_workload.h) and says, per
// pod, where it runs or why it stays pending.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct PlaceCommandOptions {
  std::vector<std::string> cluster_paths;   ///< Node YAML/JSON, node-pool files, device configs
  std::vector<std::string> workload_paths;  ///< Pods, controllers, PriorityClasses, ResourceQuotas
  std::string policy = "gpufleet";
  uint64_t seed = 42;
  std::string json_path;
  bool quiet = false;  ///< no warnings on stderr
  std::string feature_gates;  ///< --feature-gates (cli/command_checks.h parse_feature_gates); empty = defaults
  /// Kueue admission mode, "quota" or "placement"; empty = the Kueue Configuration's (else quota).
  std::string admission;
  /// --percentage-of-nodes-to-score: kube's percentageOfNodesToScore for the profile, 0..100 (0 =
  /// kube's adaptive default); nullopt (default) = every node (place::PlaceOptions).
  std::optional<int32_t> percentage_of_nodes_to_score;
};

/// Runs the command: the per-pod listing and a summary on stdout, reader warnings on stderr. Returns
/// the exit status (0). Throws InputError / UsageError for bad input before writing anything.
int run_place_command(const PlaceCommandOptions& options);

}  // namespace gpufleet::cli
