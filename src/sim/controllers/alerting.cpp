#include "sim/controllers/alerting.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpufleet::sim {

Alerting::Alerting(const SimulationModules& modules)
    : loop_(modules.events), fleet_(modules.fleet), pending_(modules.pending), units_(modules.units) {
  failures_.assign(fleet_.node_count(), 0);
  not_ready_ = loop_.register_event("alert-node-not-ready", [this](const Event& e) { on_not_ready_check(e); }, {}, false);
  evaluation_ = loop_.register_event("alert-evaluation", [this](const Event& e) { on_evaluation(e); }, {}, false);
  fleet_.add_listener(*this);
}

void Alerting::start() {
  if (kEvaluationIntervalS <= loop_.horizon_s()) loop_.schedule(kEvaluationIntervalS, evaluation_);
}

void Alerting::fire(double t, const char* alert, const char* severity, std::string subject, std::string message) {
  alerts_.push_back(Alert{t, alert, severity, std::move(subject), std::move(message)});
}

void Alerting::on_xid(NodeId n, int32_t g, const XidInfo& xid, double t) {
  const bool reset = xid.effect == XidEffect::kResetGpu;
  fire(t, "DCGMXidError", reset ? "critical" : "warning", fmt::format("{}/gpu{}", fleet_.name(n), g),
       fmt::format("XID {} ({}) on GPU {} of {}: {}", xid.code, xid.description, g, fleet_.name(n), xid_action(xid.effect)));
}

void Alerting::on_node_interrupted(NodeId n, double t) {
  if (fleet_.phase(n) == NodePhase::kNotReady) {
    ++failures_[n];
    const double at = t + kNodeNotReadyForS;
    if (at <= loop_.horizon_s()) loop_.schedule(at, not_ready_, n, failures_[n]);
  }
}

void Alerting::on_spot_notice(NodeId n, double t, double /*reclaim_at_s*/) {
  const SimPool& pool = fleet_.pool(fleet_.pool_of(n));
  if (pool.settings.capacity_type != CapacityType::kSpot) return;
  std::vector<double>& times = storm_[fleet_.pool_of(n)];
  std::erase_if(times, [t](double s) { return s <= t - kStormWindowS; });
  bool& firing = storm_firing_[fleet_.pool_of(n)];
  if (times.empty()) firing = false;
  times.push_back(t);
  if (!firing && static_cast<int32_t>(times.size()) >= kStormCount) {
    firing = true;
    fire(t, "SpotInterruptionStorm", "critical", pool.pool.name,
         fmt::format("{} spot interruptions in pool {} within {:g} min", times.size(), pool.pool.name, kStormWindowS / 60));
  }
}

void Alerting::on_not_ready_check(const Event& e) {
  if (fleet_.phase(e.subject) != NodePhase::kNotReady || failures_[e.subject] != e.generation) return;
  fire(e.time_s, "KubeNodeNotReady", "warning", fleet_.name(e.subject),
       fmt::format("node {} has been NotReady for {:g} min", fleet_.name(e.subject), kNodeNotReadyForS / 60));
}

void Alerting::on_evaluation(const Event& e) {
  for (const PendingUnit& p : pending_.units()) {
    if (e.time_s - p.since_s < kPodPendingForS) continue;
    if (!pending_alerted_.insert({p.unit, p.since_s}).second) continue;
    const std::string name = units_.unit_name(p.unit);
    fire(e.time_s, "KubePodPendingTooLong", "warning", name,
         fmt::format("{} has been pending for longer than {:g} min", name, kPodPendingForS / 60));
  }
  const double next = e.time_s + kEvaluationIntervalS;
  if (next <= loop_.horizon_s()) loop_.schedule(next, evaluation_);
}

void Alerting::report(SimResult& result) const {
  result.alerts = alerts_;
  // Fired in event order already; a stable sort keeps equal times in firing order.
  std::stable_sort(result.alerts.begin(), result.alerts.end(), [](const Alert& a, const Alert& b) { return a.time_s < b.time_s; });
}

}  // namespace gpufleet::sim
