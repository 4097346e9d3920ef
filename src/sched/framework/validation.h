// Validation of profiles and plugin arguments, apart from the plugins (kube-scheduler
// pkg/scheduler/apis/config/validation: validation.go, validation_pluginargs.go). Every error names
// the field, as k8s.io/apimachinery field.Error does: "<path>: Invalid value: <value>: <detail>",
// "<path>: Required value: <detail>", "<path>: Duplicate value: <value>",
// "<path>: Unsupported value: <value>: supported values: ...", "<path>: Forbidden: <detail>".
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sched/framework/plugin_args.h"
#include "sched/framework/profile_config.h"

namespace gpufleet::sched {

class Registry;

/// One invalid field (kube field.Error).
struct FieldError {
  enum class Type { kInvalid, kRequired, kDuplicate, kNotSupported, kForbidden };
  Type type = Type::kInvalid;
  std::string field;   ///< the path, e.g. "pluginConfig[0].args.mixCoverage"
  std::string value;   ///< the offending value as written ("" for kRequired)
  std::string detail;  ///< why (kInvalid, kRequired) or the supported values (kNotSupported)
  /// kube's Error(): see the file comment.
  std::string to_string() const;
  bool operator==(const FieldError&) const = default;
};
using FieldErrors = std::vector<FieldError>;

/// A profile or arguments that failed validation; what() joins the errors' to_string() with "; ".
class ProfileError : public std::invalid_argument {
 public:
  explicit ProfileError(FieldErrors errors);
  const FieldErrors& errors() const { return errors_; }

 private:
  FieldErrors errors_;
};

/// LeastAllocated / MostAllocated: `resources` not empty; each name one of cpu, memory,
/// nvidia.com/gpu, not repeated; each weight in [1, 100] (kube validateResources).
FieldErrors validate_resource_allocation_args(const ResourceAllocationArgs& args, const std::string& path);
/// OnlineFGDScore: mixCoverage in (0, 1], sigmoidScaleMilli > 0.
/// hardPodAffinityWeight in [0, 100] (kube ValidateInterPodAffinityArgs).
FieldErrors validate_inter_pod_affinity_args(const InterPodAffinityArgs& args, const std::string& path);

FieldErrors validate_online_fgd_args(const OnlineFgdParams& params, const std::string& path);
/// GpufleetScore: mixCoverage in (0, 1], sigmoidScaleMilli > 0, strandWeight, modelPressureWeight
/// and classPressureWeight >= 0, modelPressureThreshold in [0, 1).
FieldErrors validate_gpufleet_params(const GpufleetParams& params, const std::string& path);
/// PodTopologySpread (kube ValidatePodTopologySpreadArgs): defaultConstraints empty with
/// defaultingType System; each default constraint with maxSkew > 0, a topologyKey that is a valid
/// label key, no labelSelector, and no earlier one with the same topologyKey and whenUnsatisfiable.
FieldErrors validate_pod_topology_spread_args(const PodTopologySpreadArgs& args, const std::string& path);
/// Any plugin's arguments, by their type (no errors for a type without rules).
FieldErrors validate_plugin_args(const PluginArgs& args, const std::string& path);

/// A profile (kube ValidateKubeSchedulerConfiguration for one profile, and the checks of
/// NewFramework that need no plugin instance): schedulerName set; percentageOfNodesToScore, when
/// set, in [0, 100] ("not in valid range [0-100]"); exactly one queueSort plugin; at
/// least one bind plugin; exactly one selectGpu plugin; every name registered (Unsupported value
/// otherwise) and not repeated within a point; score weights >= 0 and their total x 100 within
/// int64 (kube: "total score of Score plugins could overflow"); weights only at score; pluginConfig
/// names registered, not repeated, and their arguments valid. Paths start at the profile, e.g.
/// "plugins.score.enabled[2].weight".
FieldErrors validate_profile(const ProfileConfig& config, const Registry& registry);

}  // namespace gpufleet::sched
