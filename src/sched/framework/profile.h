// A profile: which plugins run at each extension point, in which order, with which Score weights
// and arguments, as one profile of a KubeSchedulerConfiguration (kube-scheduler
// pkg/scheduler/apis/config/types.go KubeSchedulerProfile, Plugins, PluginSet, PluginConfig).
// ProfileConfig is that description (data); build_profile() instantiates it through a Registry into
// a Profile, the plugins the Scheduler runs (kube's NewFramework, runtime/framework.go): each
// plugin named anywhere is created once, so one object serves every point it is listed at. Every
// plugin that implements ObserverPlugin is also listed as an observer, and the Filter plugins'
// reasons are numbered (FilterReasonTable, node_to_status.h), which fails for too many.
//
// Scores. kube combines the Score plugins by a weighted sum of their normalized scores. gpufleet's
// policies need an exact lexicographic order instead, which no finite weights give over unbounded
// raw scores: a profile says which (ScoreCombination):
//  - kWeightedSum (kube): every Score plugin's raw scores go through its NormalizeScore, must then
//    lie in [0, 100] (else the cycle fails, as kube's "returns an invalid score"), and the node's
//    score is the sum of weight x normalized score; the highest wins, ties to the lowest node rank
//    or, with ScoreTieBreak::kRandom (kube's selectHost), to a seeded random one of the tied nodes.
//  - kLexicographic (gpufleet): nodes are compared by the first Score plugin's raw score, ties by
//    the second's, and so on, then by node rank. NormalizeScore and weights are not used (a
//    lexicographic order needs no common scale, and kube's integer normalizations can merge
//    distinct scores, e.g. 100 * 150 / 200 == 100 * 151 / 200).
// A plugin whose PreScore returned Skip takes no part (it scores every node alike).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"
#include "sched/framework/profile_config.h"

namespace gpufleet::sched {

/// A Score plugin with its effective weight (>= 1).
struct WeightedScorePlugin {
  std::shared_ptr<ScorePlugin> plugin;
  int64_t weight = 1;
};

/// A profile instantiated: the plugins the Scheduler runs at each point, in order.
/// A Scheduler numbers the filters' reasons (FilterReasonTable) when it is built from it.
struct Profile {
  std::string name;
  std::shared_ptr<const QueueSortPlugin> queue_sort;  ///< exactly one (kube)
  std::vector<std::shared_ptr<const PreFilterPlugin>> pre_filters;
  std::vector<std::shared_ptr<const FilterPlugin>> filters;
  std::vector<std::shared_ptr<const PostFilterPlugin>> post_filters;
  std::vector<std::shared_ptr<const PreScorePlugin>> pre_scores;
  std::vector<WeightedScorePlugin> scores;
  ScoreCombination score_combination = ScoreCombination::kWeightedSum;
  ScoreTieBreak tie_break = ScoreTieBreak::kNodeRank;
  /// ProfileConfig::percentage_of_nodes_to_score (nullopt: every node, no sampling).
  std::optional<int32_t> percentage_of_nodes_to_score;
  std::shared_ptr<const GpuSelector> gpu_selector;  ///< the sharing pods' GPU choice (required)
  std::vector<std::shared_ptr<ReservePlugin>> reserves;
  std::vector<std::shared_ptr<PermitPlugin>> permits;
  std::vector<std::shared_ptr<BindPlugin>> binds;  ///< at least one (kube)
  /// The plugins told of every arriving pod (ObserverPlugin), in order of first mention.
  std::vector<std::shared_ptr<ObserverPlugin>> observers;
};

class Registry;
struct PolicyContext;

/// Instantiates `config` (kube NewFramework): validates it (validate_profile; ProfileError when
/// invalid), creates each named plugin once with its factory and arguments, lists it at every point
/// it is enabled at, and as an observer when it is one. Throws ProfileError when a plugin does not
/// implement a point it is listed at or the filters register more reasons than a FilterReasonTable
/// holds, and whatever a factory throws (std::invalid_argument when `context` lacks what it needs).
Profile build_profile(const ProfileConfig& config, const Registry& registry, const PolicyContext& context);

}  // namespace gpufleet::sched
