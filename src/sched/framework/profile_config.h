// A profile as configuration: which plugins run at each extension point, in which order, with which
// Score weights and arguments, and how the scores combine (kube-scheduler
// pkg/scheduler/apis/config/types.go KubeSchedulerProfile, Plugins, PluginSet, PluginConfig). Plain
// data, validated by validation.h and built into plugins by profile.h's build_profile().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

/// The extension points a profile lists plugins for, in cycle order. kSelectGpu is gpufleet's own
/// (GpuSelector; one plugin).
enum class ExtensionPoint : uint8_t {
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kSelectGpu,
  kReserve,
  kPermit,
  kBind,
  kCount
};
inline constexpr size_t kExtensionPointCount = static_cast<size_t>(ExtensionPoint::kCount);

/// The configuration name of a point: "queueSort", "preFilter", "filter", "postFilter", "preScore",
/// "score", "selectGpu", "reserve", "permit", "bind" (kube's JSON field names).
std::string_view extension_point_name(ExtensionPoint point);

/// One enabled plugin (kube config.Plugin).
struct PluginRef {
  std::string name;
  /// Score only: the plugin's weight in a weighted sum, >= 0; 0 means 1 (kube's default). Unused in a
  /// lexicographic profile.
  int64_t weight = 0;
};

/// The plugins of one extension point, in the order they run (kube config.PluginSet's enabled list).
struct PluginSet {
  std::vector<PluginRef> enabled;
};

/// A plugin's arguments (kube config.PluginConfig). nullptr args: the plugin's defaults.
struct PluginConfig {
  std::string name;
  std::shared_ptr<const PluginArgs> args;
};

/// How the Score plugins' results combine into one order of the nodes (see the file comment).
enum class ScoreCombination : uint8_t { kWeightedSum, kLexicographic };

/// How the node is chosen among those with the best score.
enum class ScoreTieBreak : uint8_t {
  kNodeRank,  ///< the lowest node rank (gpufleet's policies: the input order of the nodes)
  kRandom,    ///< uniformly at random from the run's seeded generator (kube selectHost: reservoir
              ///< sampling over the nodes with the top score)
};

/// A profile as configuration (kube KubeSchedulerProfile).
struct ProfileConfig {
  std::string scheduler_name;  ///< the profile's name (a policy's name)
  std::array<PluginSet, kExtensionPointCount> plugins;
  std::vector<PluginConfig> plugin_config;
  ScoreCombination score_combination = ScoreCombination::kWeightedSum;
  ScoreTieBreak tie_break = ScoreTieBreak::kNodeRank;
  /// kube's percentageOfNodesToScore (KubeSchedulerProfile.percentageOfNodesToScore; semantics in
  /// node_sampling.h): 0..100, 0 = kube's adaptive default (50 - nodes/125 percent, at least 5 %, at
  /// least 100 nodes), 100 = every node (still from kube's rotating start). nullopt (gpufleet's
  /// default, unlike kube where it falls back to the global setting, itself adaptive): no sampling,
  /// every node in NodeId order, as before the setting existed. validate_profile refuses values
  /// outside 0..100.
  std::optional<int32_t> percentage_of_nodes_to_score;

  PluginSet& at(ExtensionPoint point) { return plugins[static_cast<size_t>(point)]; }
  const PluginSet& at(ExtensionPoint point) const { return plugins[static_cast<size_t>(point)]; }
  /// Appends `name` to the point's enabled list (weight: Score only).
  ProfileConfig& enable(ExtensionPoint point, std::string name, int64_t weight = 0) {
    at(point).enabled.push_back({std::move(name), weight});
    return *this;
  }
};

}  // namespace gpufleet::sched
