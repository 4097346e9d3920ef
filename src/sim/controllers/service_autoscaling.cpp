#include "sim/controllers/service_autoscaling.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {

std::optional<double> external_metric_at(const ExternalMetricSeries& series, double t) {
  const auto it = std::upper_bound(series.points.begin(), series.points.end(), t,
                                   [](double x, const std::pair<double, double>& p) { return x < p.first; });
  if (it == series.points.begin()) return std::nullopt;
  return std::prev(it)->second;
}

ServiceAutoscalers::ServiceAutoscalers(const Workload& workload, const SimulationModules& modules) : workload_(workload), m_(modules) {
  for (const ServiceAutoscalerSpec& spec : workload.service_autoscalers) {
    Scaler s;
    s.spec = &spec;
    s.item = *m_.units.service_item(spec.service);
    s.autoscaler = replica_autoscaling::make_replica_autoscaler(spec.autoscaler);
    s.result.service = spec.service;
    s.result.autoscaler = spec.description;
    scalers_.push_back(std::move(s));
  }
  kind_ = m_.events.register_event("service-autoscale", [this](const Event& e) { evaluate(e.subject, e.time_s); },
                                   [this](uint32_t s) { return scalers_[s].spec->service; }, /*traced=*/false);
}

ServiceAutoscalers::~ServiceAutoscalers() = default;

void ServiceAutoscalers::start() {
  for (size_t s = 0; s < scalers_.size(); ++s) {
    const double first = scalers_[s].autoscaler->first_evaluation_s();
    if (first <= m_.events.horizon_s()) m_.events.schedule(first, kind_, static_cast<uint32_t>(s));
  }
}

void ServiceAutoscalers::evaluate(uint32_t si, double t) {
  Scaler& s = scalers_[si];
  replica_autoscaling::MetricSnapshot snapshot;
  for (const std::string& name : s.autoscaler->metrics())
    for (const ExternalMetricSeries& series : workload_.external_metrics)
      if (series.name == name)
        if (const std::optional<double> v = external_metric_at(series, t)) snapshot[name] = replica_autoscaling::MetricSample{*v, 1};
  replica_autoscaling::ScaleStatus scale;
  scale.spec_replicas = m_.units.replicas(s.spec->service);
  scale.status_replicas = m_.units.live_replicas(s.item);
  scale.ready = m_.units.ready_replicas(s.item);
  const int32_t desired = std::max(0, s.autoscaler->evaluate(t, scale, snapshot));
  if (desired != scale.spec_replicas) m_.units.scale(s.spec->service, desired, t);
  s.result.evaluations.push_back({t, scale.spec_replicas, scale.status_replicas, scale.ready, desired});
  s.result.min_desired = s.result.evaluations.size() == 1 ? desired : std::min(s.result.min_desired, desired);
  s.result.max_desired = std::max(s.result.max_desired, desired);
  const double next = s.autoscaler->next_evaluation_s(t);
  if (next > t && next <= m_.events.horizon_s()) m_.events.schedule(next, kind_, si);
}

void ServiceAutoscalers::report(SimResult& result) const {
  for (const Scaler& s : scalers_) result.service_scaling.push_back(s.result);
}

}  // namespace gpufleet::sim
