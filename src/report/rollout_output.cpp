#include "report/rollout_output.h"

#include <fmt/format.h>

#include "report/json_values.h"

namespace gpufleet::io {
namespace {

nlohmann::ordered_json seconds_or_null(double s) { return s < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(round_to(s, 1e3)); }

}  // namespace

nlohmann::ordered_json rollouts_json(const sim::SimResult& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const sim::RolloutResult& x : r.rollouts) {
    nlohmann::ordered_json o;
    o["service"] = x.service;
    o["revision"] = x.revision;
    o["started_s"] = round_to(x.started_s, 1e3);
    o["completed_s"] = seconds_or_null(x.completed_s);
    o["superseded_s"] = seconds_or_null(x.superseded_s);
    o["duration_s"] = seconds_or_null(x.completed_s < 0 ? -1 : x.completed_s - x.started_s);
    o["max_surge"] = x.max_surge;
    o["max_unavailable"] = x.max_unavailable;
    o["replicas_created"] = x.replicas_created;
    o["replicas_removed"] = x.replicas_removed;
    o["max_pods"] = x.max_pods;
    o["min_available"] = x.min_available;
    out.push_back(std::move(o));
  }
  return out;
}

nlohmann::ordered_json service_autoscalers_json(const sim::SimResult& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const sim::ServiceScalingResult& s : r.service_scaling) {
    nlohmann::ordered_json o;
    o["service"] = s.service;
    o["autoscaler"] = s.autoscaler;
    o["min_desired"] = s.min_desired;
    o["max_desired"] = s.max_desired;
    nlohmann::ordered_json evals = nlohmann::ordered_json::array();
    for (const sim::ServiceScalingResult::Evaluation& e : s.evaluations)
      evals.push_back({{"time_s", round_to(e.time_s, 1e3)},
                       {"spec_replicas", e.spec_replicas},
                       {"status_replicas", e.status_replicas},
                       {"ready", e.ready},
                       {"desired", e.desired}});
    o["evaluations"] = std::move(evals);
    out.push_back(std::move(o));
  }
  return out;
}

std::string rollouts_summary_text(const sim::SimResult& r) {
  std::string out;
  for (const sim::RolloutResult& x : r.rollouts) {
    const std::string end = x.completed_s >= 0   ? fmt::format("complete at {:g} s ({:g} s)", x.completed_s, x.completed_s - x.started_s)
                            : x.superseded_s >= 0 ? fmt::format("superseded at {:g} s", x.superseded_s)
                                                  : std::string("not complete by the horizon");
    out += fmt::format("rollout {} revision {}: started at {:g} s, {}; maxSurge {}, maxUnavailable {}; {} replicas created, {} removed; "
                       "at most {} pods, at least {} available\n",
                       x.service, x.revision, x.started_s, end, x.max_surge, x.max_unavailable, x.replicas_created,
                       x.replicas_removed, x.max_pods, x.min_available);
  }
  for (const sim::ServiceScalingResult& s : r.service_scaling)
    out += fmt::format("autoscaler of {} ({}): {} evaluations, wanted replicas {}..{}\n", s.service, s.autoscaler,
                       s.evaluations.size(), s.min_desired, s.max_desired);
  return out;
}

}  // namespace gpufleet::io
