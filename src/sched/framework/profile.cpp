#include "sched/framework/profile.h"

#include <map>

#include <fmt/format.h>

#include "sched/framework/node_to_status.h"
#include "sched/framework/registry.h"
#include "sched/framework/validation.h"

namespace gpufleet::sched {
namespace {

// The plugin named `ref`, as interface T; a ProfileError naming the field when it does not implement T.
template <class T>
std::shared_ptr<T> as_point(const std::map<std::string, std::shared_ptr<Plugin>>& plugins, ExtensionPoint point,
                            size_t i, const std::string& name) {
  auto p = std::dynamic_pointer_cast<T>(plugins.at(name));
  if (!p)
    throw ProfileError({{FieldError::Type::kInvalid, fmt::format("plugins.{}.enabled[{}].name", extension_point_name(point), i),
                         fmt::format("\"{}\"", name), fmt::format("plugin does not extend the {} extension point", extension_point_name(point))}});
  return p;
}

}  // namespace


Profile build_profile(const ProfileConfig& config, const Registry& registry, const PolicyContext& context) {
  if (FieldErrors errs = validate_profile(config, registry); !errs.empty()) throw ProfileError(std::move(errs));
  std::map<std::string, const PluginArgs*> args;
  for (const PluginConfig& pc : config.plugin_config) args[pc.name] = pc.args.get();
  // Each plugin named anywhere, created once (in order of first mention).
  std::map<std::string, std::shared_ptr<Plugin>> plugins;
  std::vector<std::string> mentioned;
  for (const PluginSet& set : config.plugins)
    for (const PluginRef& ref : set.enabled) {
      if (plugins.count(ref.name) != 0) continue;
      const auto it = args.find(ref.name);
      plugins[ref.name] = (*registry.find(ref.name))(it == args.end() ? nullptr : it->second, context);
      mentioned.push_back(ref.name);
    }

  Profile profile;
  profile.name = config.scheduler_name;
  profile.score_combination = config.score_combination;
  profile.tie_break = config.tie_break;
  profile.percentage_of_nodes_to_score = config.percentage_of_nodes_to_score;
  for (size_t p = 0; p < kExtensionPointCount; ++p) {
    const auto point = static_cast<ExtensionPoint>(p);
    const auto& enabled = config.at(point).enabled;
    for (size_t i = 0; i < enabled.size(); ++i) {
      const std::string& name = enabled[i].name;
      switch (point) {
        case ExtensionPoint::kQueueSort: profile.queue_sort = as_point<const QueueSortPlugin>(plugins, point, i, name); break;
        case ExtensionPoint::kPreFilter: profile.pre_filters.push_back(as_point<const PreFilterPlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kFilter: profile.filters.push_back(as_point<const FilterPlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kPostFilter: profile.post_filters.push_back(as_point<const PostFilterPlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kPreScore: profile.pre_scores.push_back(as_point<const PreScorePlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kScore:
          profile.scores.push_back({as_point<ScorePlugin>(plugins, point, i, name), enabled[i].weight == 0 ? 1 : enabled[i].weight});
          break;
        case ExtensionPoint::kSelectGpu: profile.gpu_selector = as_point<const GpuSelector>(plugins, point, i, name); break;
        case ExtensionPoint::kReserve: profile.reserves.push_back(as_point<ReservePlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kPermit: profile.permits.push_back(as_point<PermitPlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kBind: profile.binds.push_back(as_point<BindPlugin>(plugins, point, i, name)); break;
        case ExtensionPoint::kCount: break;
      }
    }
  }
  for (const std::string& name : mentioned)
    if (auto observer = std::dynamic_pointer_cast<ObserverPlugin>(plugins.at(name))) profile.observers.push_back(std::move(observer));
  try {
    FilterReasonTable{profile.filters};
  } catch (const std::invalid_argument& e) {
    throw ProfileError({{FieldError::Type::kInvalid, "plugins.filter.enabled", fmt::format("{} plugins", profile.filters.size()), e.what()}});
  }
  return profile;
}

}  // namespace gpufleet::sched
