#include "sched/framework/validation.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/framework/registry.h"

namespace gpufleet::sched {
namespace {

std::string quoted(std::string_view s) { return fmt::format("\"{}\"", s); }
std::string number(double v) { return fmt::format("{}", v); }

FieldError invalid(std::string field, std::string value, std::string detail) {
  return {FieldError::Type::kInvalid, std::move(field), std::move(value), std::move(detail)};
}

}  // namespace

std::string FieldError::to_string() const {
  switch (type) {
    case Type::kInvalid: return fmt::format("{}: Invalid value: {}: {}", field, value, detail);
    case Type::kRequired: return fmt::format("{}: Required value: {}", field, detail);
    case Type::kDuplicate: return fmt::format("{}: Duplicate value: {}", field, value);
    case Type::kNotSupported: return fmt::format("{}: Unsupported value: {}: supported values: {}", field, value, detail);
    case Type::kForbidden: return fmt::format("{}: Forbidden: {}", field, detail);
  }
  return field;
}

ProfileError::ProfileError(FieldErrors errors)
    : std::invalid_argument([&] {
        std::string out;
        for (const FieldError& e : errors) {
          if (!out.empty()) out += "; ";
          out += e.to_string();
        }
        return out;
      }()),
      errors_(std::move(errors)) {}

FieldErrors validate_resource_allocation_args(const ResourceAllocationArgs& args, const std::string& path) {
  FieldErrors errs;
  const std::string resources = path + ".resources";
  if (args.resources.empty()) errs.push_back({FieldError::Type::kRequired, resources, "", "at least one resource"});
  static constexpr std::string_view kNames[] = {"cpu", "memory", "nvidia.com/gpu"};
  std::set<std::string> seen;
  for (size_t i = 0; i < args.resources.size(); ++i) {
    const ResourceSpec& r = args.resources[i];
    const std::string at = fmt::format("{}[{}]", resources, i);
    if (std::find(std::begin(kNames), std::end(kNames), r.name) == std::end(kNames))
      errs.push_back({FieldError::Type::kNotSupported, at + ".name", quoted(r.name),
                      fmt::format("{}", fmt::join(std::begin(kNames), std::end(kNames), ", "))});
    else if (!seen.insert(r.name).second)
      errs.push_back({FieldError::Type::kDuplicate, at + ".name", quoted(r.name), ""});
    if (r.weight < 1 || r.weight > 100)
      errs.push_back(invalid(at + ".weight", std::to_string(r.weight), "resource weight of " + r.name + " not in valid range [1, 100]"));
  }
  return errs;
}

FieldErrors validate_inter_pod_affinity_args(const InterPodAffinityArgs& args, const std::string& path) {
  FieldErrors errs;
  if (args.hard_pod_affinity_weight < 0 || args.hard_pod_affinity_weight > 100)
    errs.push_back(invalid(path + ".hardPodAffinityWeight", std::to_string(args.hard_pod_affinity_weight), "not in valid range [0, 100]"));
  return errs;
}

FieldErrors validate_online_fgd_args(const OnlineFgdParams& p, const std::string& path) {
  FieldErrors errs;
  if (!(p.mix_coverage > 0 && p.mix_coverage <= 1))
    errs.push_back(invalid(path + ".mixCoverage", number(p.mix_coverage), "must be in (0, 1]"));
  if (!(p.sigmoid_scale_milli > 0))
    errs.push_back(invalid(path + ".sigmoidScaleMilli", number(p.sigmoid_scale_milli), "must be greater than 0"));
  return errs;
}

FieldErrors validate_gpufleet_params(const GpufleetParams& p, const std::string& path) {
  FieldErrors errs = validate_online_fgd_args(OnlineFgdParams{p.mix_coverage, p.sigmoid_scale_milli}, path);
  const auto non_negative = [&](double v, std::string_view field) {
    if (!(v >= 0)) errs.push_back(invalid(fmt::format("{}.{}", path, field), number(v), "must be greater than or equal to 0"));
  };
  non_negative(p.strand_weight, "strandWeight");
  non_negative(p.model_pressure_weight, "modelPressureWeight");
  if (!(p.model_pressure_threshold >= 0 && p.model_pressure_threshold < 1))
    errs.push_back(invalid(path + ".modelPressureThreshold", number(p.model_pressure_threshold), "must be in [0, 1)"));
  non_negative(p.class_pressure_weight, "classPressureWeight");
  return errs;
}

FieldErrors validate_pod_topology_spread_args(const PodTopologySpreadArgs& args, const std::string& path) {
  FieldErrors errs;
  using Defaulting = PodTopologySpreadArgs::Defaulting;
  if (args.defaulting_type == Defaulting::kSystem && !args.default_constraints.empty())
    errs.push_back(invalid(path + ".defaultingType", quoted("System"), "when .defaultConstraints are not empty"));
  const auto action = [](UnsatisfiableAction a) { return a == UnsatisfiableAction::kDoNotSchedule ? "DoNotSchedule" : "ScheduleAnyway"; };
  for (size_t i = 0; i < args.default_constraints.size(); ++i) {
    const TopologySpreadConstraint& c = args.default_constraints[i];
    const std::string at = fmt::format("{}.defaultConstraints[{}]", path, i);
    if (c.max_skew <= 0) errs.push_back(invalid(at + ".maxSkew", std::to_string(c.max_skew), "not in valid range (0, inf)"));
    if (c.topology_key.empty())
      errs.push_back({FieldError::Type::kRequired, at + ".topologyKey", "", "can not be empty"});
    else if (const auto e = label_key_error(c.topology_key))
      errs.push_back(invalid(at + ".topologyKey", quoted(c.topology_key), *e));
    if (c.has_label_selector)
      errs.push_back({FieldError::Type::kForbidden, at + ".labelSelector", "",
                      "constraint must not define a selector, as they deduced for each pod"});
    for (size_t j = 0; j < i; ++j) {
      const TopologySpreadConstraint& other = args.default_constraints[j];
      if (other.topology_key == c.topology_key && other.when_unsatisfiable == c.when_unsatisfiable) {
        errs.push_back({FieldError::Type::kDuplicate, at, quoted(fmt::format("{{{}, {}}}", c.topology_key, action(c.when_unsatisfiable))), ""});
        break;
      }
    }
  }
  return errs;
}

FieldErrors validate_plugin_args(const PluginArgs& args, const std::string& path) {
  if (const auto* a = dynamic_cast<const PodTopologySpreadArgs*>(&args)) return validate_pod_topology_spread_args(*a, path);
  if (const auto* a = dynamic_cast<const ResourceAllocationArgs*>(&args)) return validate_resource_allocation_args(*a, path);
  if (const auto* a = dynamic_cast<const NodeResourcesFitArgs*>(&args)) {
    ResourceAllocationArgs strategy;
    strategy.resources = a->resources;
    return validate_resource_allocation_args(strategy, path + ".scoringStrategy");
  }
  if (const auto* a = dynamic_cast<const InterPodAffinityArgs*>(&args)) return validate_inter_pod_affinity_args(*a, path);
  if (const auto* a = dynamic_cast<const OnlineFgdScoreArgs*>(&args)) return validate_online_fgd_args(a->params, path);
  if (const auto* a = dynamic_cast<const GpufleetScoreArgs*>(&args)) return validate_gpufleet_params(a->params, path);
  return {};
}

FieldErrors validate_profile(const ProfileConfig& config, const Registry& registry) {
  FieldErrors errs;
  if (config.scheduler_name.empty()) errs.push_back({FieldError::Type::kRequired, "schedulerName", "", "name is required"});
  // kube validateKubeSchedulerProfile.
  if (const auto& p = config.percentage_of_nodes_to_score; p && (*p < 0 || *p > 100))
    errs.push_back({FieldError::Type::kInvalid, "percentageOfNodesToScore", std::to_string(*p), "not in valid range [0-100]"});
  const std::string supported = [&] {
    std::string out;
    for (std::string_view n : registry.names()) out += (out.empty() ? "" : ", ") + quoted(n);
    return out;
  }();
  for (size_t p = 0; p < kExtensionPointCount; ++p) {
    const auto point = static_cast<ExtensionPoint>(p);
    const auto& enabled = config.at(point).enabled;
    const std::string base = fmt::format("plugins.{}.enabled", extension_point_name(point));
    std::set<std::string> seen;
    for (size_t i = 0; i < enabled.size(); ++i) {
      const PluginRef& ref = enabled[i];
      const std::string at = fmt::format("{}[{}]", base, i);
      if (registry.find(ref.name) == nullptr)
        errs.push_back({FieldError::Type::kNotSupported, at + ".name", quoted(ref.name), supported});
      else if (!seen.insert(ref.name).second)
        errs.push_back({FieldError::Type::kDuplicate, at + ".name", quoted(ref.name), ""});
      if (point == ExtensionPoint::kScore) {
        if (ref.weight < 0) errs.push_back(invalid(at + ".weight", std::to_string(ref.weight), "must be greater than or equal to 0"));
      } else if (ref.weight != 0) {
        errs.push_back(invalid(at + ".weight", std::to_string(ref.weight), "a weight applies to score plugins only"));
      }
    }
  }
  // kube getScoreWeights: sum of weight x MaxNodeScore must stay within int64.
  int64_t total = 0;
  const auto& scores = config.at(ExtensionPoint::kScore).enabled;
  for (size_t i = 0; i < scores.size(); ++i) {
    const int64_t weight = scores[i].weight == 0 ? 1 : scores[i].weight;
    if (weight < 0) continue;
    if (weight > (std::numeric_limits<int64_t>::max() - total) / kMaxNodeScore) {
      errs.push_back(invalid(fmt::format("plugins.score.enabled[{}].weight", i), std::to_string(scores[i].weight),
                             "total score of Score plugins could overflow"));
      break;
    }
    total += weight * kMaxNodeScore;
  }
  const auto count = [&](ExtensionPoint point) { return config.at(point).enabled.size(); };
  if (count(ExtensionPoint::kQueueSort) != 1)
    errs.push_back(invalid("plugins.queueSort.enabled", std::to_string(count(ExtensionPoint::kQueueSort)) + " plugins",
                           "exactly one queue sort plugin is required"));
  if (count(ExtensionPoint::kBind) == 0)
    errs.push_back({FieldError::Type::kRequired, "plugins.bind.enabled", "", "at least one bind plugin is needed"});
  if (count(ExtensionPoint::kSelectGpu) != 1)
    errs.push_back(invalid("plugins.selectGpu.enabled", std::to_string(count(ExtensionPoint::kSelectGpu)) + " plugins",
                           "exactly one GPU selection plugin is required"));
  std::set<std::string> configured;
  for (size_t i = 0; i < config.plugin_config.size(); ++i) {
    const PluginConfig& pc = config.plugin_config[i];
    const std::string at = fmt::format("pluginConfig[{}]", i);
    if (registry.find(pc.name) == nullptr) errs.push_back({FieldError::Type::kNotSupported, at + ".name", quoted(pc.name), supported});
    else if (!configured.insert(pc.name).second) errs.push_back({FieldError::Type::kDuplicate, at + ".name", quoted(pc.name), ""});
    if (pc.args) {
      FieldErrors args = validate_plugin_args(*pc.args, at + ".args");
      errs.insert(errs.end(), args.begin(), args.end());
    }
  }
  return errs;
}

}  // namespace gpufleet::sched
