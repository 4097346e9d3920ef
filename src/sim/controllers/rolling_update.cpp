#include "sim/controllers/rolling_update.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {

RollingUpdates::RollingUpdates(const Workload& workload, const SimulationModules& modules) : workload_(workload), m_(modules) {
  // Rollouts start in time order (equal times: input order).
  std::vector<size_t> order(workload.rollouts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return workload.rollouts[a].at_s < workload.rollouts[b].at_s; });
  for (size_t i : order) {
    RolloutResult r;
    r.service = workload.rollouts[i].service;
    r.started_s = workload.rollouts[i].at_s;
    results_.push_back(std::move(r));
  }
  begin_kind_ = m_.events.register_event("rollout", [this](const Event& e) { begin(e.subject, e.time_s); },
                                         [this](uint32_t r) { return results_[r].service; });
  sync_kind_ = m_.events.register_event("rollout-sync", [this](const Event& e) { sync(e.subject, e.time_s); },
                                        [this](uint32_t item) { return workload_.items[item].name; }, /*traced=*/false);
  m_.units.add_replica_listener(*this);
}

void RollingUpdates::start() {
  for (size_t r = 0; r < results_.size(); ++r) m_.events.schedule(results_[r].started_s, begin_kind_, static_cast<uint32_t>(r));
}

void RollingUpdates::begin(uint32_t r, double t) {
  RolloutResult& res = results_[r];
  const uint32_t item = *m_.units.service_item(res.service);
  if (const auto it = active_.find(item); it != active_.end()) results_[it->second].superseded_s = t;
  res.revision = m_.units.new_revision(item);
  const auto [surge, unavailable] = resolve_fenceposts(workload_.items[item].rolling_update, m_.units.replicas(res.service));
  res.max_surge = surge;
  res.max_unavailable = unavailable;
  const Counts c = count(item, t);
  res.max_pods = c.existing;
  res.min_available = c.available;
  active_[item] = r;
  sync(item, t);
}

bool RollingUpdates::available(uint32_t unit, double t) const {
  const std::optional<double> ready = m_.units.ready_since(unit);
  return ready && *ready + m_.units.spec(unit).min_ready_s <= t + 1e-9;
}

RollingUpdates::Counts RollingUpdates::count(uint32_t item, double t) const {
  Counts c;
  const uint32_t revision = m_.units.revision(item);
  m_.units.for_each_unit_of(item, [&](uint32_t u) {
    if (m_.units.unit(u).state == UnitState::kRemoved) return;
    const bool fresh = m_.units.unit_revision(u) == revision;
    const bool avail = available(u, t);
    ++c.existing;
    c.fresh += fresh ? 1 : 0;
    c.available += avail ? 1 : 0;
    c.fresh_available += fresh && avail ? 1 : 0;
  });
  return c;
}

bool RollingUpdates::step(uint32_t item, double t) {
  RolloutResult& res = results_[active_.at(item)];
  const int32_t wanted = m_.units.replicas(workload_.items[item].name);
  const auto [surge, unavailable] = resolve_fenceposts(workload_.items[item].rolling_update, wanted);
  const uint32_t revision = m_.units.revision(item);
  Counts c = count(item, t);
  // Units of one revision side, in removal order: not available first, then the highest ordinals.
  const auto removal_order = [&](bool fresh) {
    std::vector<uint32_t> units;
    m_.units.for_each_unit_of(item, [&](uint32_t u) {
      if (m_.units.unit(u).state != UnitState::kRemoved && (m_.units.unit_revision(u) == revision) == fresh) units.push_back(u);
    });
    std::stable_sort(units.begin(), units.end(), [&](uint32_t a, uint32_t b) {
      const bool aa = available(a, t), ba = available(b, t);
      if (aa != ba) return !aa;
      return m_.units.unit(a).replica > m_.units.unit(b).replica;
    });
    return units;
  };
  bool changed = false;
  // reconcileNewReplicaSet
  if (c.fresh > wanted) {
    const std::vector<uint32_t> units = removal_order(true);
    for (int32_t k = 0; k < c.fresh - wanted; ++k) m_.units.remove_replica(units[static_cast<size_t>(k)], t);
    return true;
  }
  const int32_t room = std::min(wanted + surge - c.existing, wanted - c.fresh);
  for (int32_t k = 0; k < room; ++k) {
    m_.units.add_replica(item, t);
    ++res.replicas_created;
    changed = true;
  }
  if (changed) c = count(item, t);
  res.max_pods = std::max(res.max_pods, c.existing);
  // reconcileOldReplicaSets
  const int32_t old = c.existing - c.fresh;
  if (old > 0) {
    const int32_t min_available = wanted - unavailable;
    const int32_t max_scaled_down = c.existing - min_available - (c.fresh - c.fresh_available);
    if (max_scaled_down > 0) {
      const std::vector<uint32_t> units = removal_order(false);
      int32_t cleaned = 0;
      size_t k = 0;
      for (; k < units.size() && cleaned < max_scaled_down && !available(units[k], t); ++k, ++cleaned) m_.units.remove_replica(units[k], t);
      int32_t scale_down = c.available - min_available;
      for (; k < units.size() && scale_down > 0; ++k, --scale_down) {
        if (!available(units[k], t)) continue;
        m_.units.remove_replica(units[k], t);
        ++cleaned;
      }
      res.replicas_removed += cleaned;
      changed = changed || cleaned > 0;
    }
  }
  return changed;
}

void RollingUpdates::sync(uint32_t item, double t) {
  const auto it = active_.find(item);
  if (it == active_.end()) return;
  RolloutResult& res = results_[it->second];
  for (int pass = 0; pass < 1000 && step(item, t); ++pass) {
  }
  const Counts c = count(item, t);
  res.max_pods = std::max(res.max_pods, c.existing);
  res.min_available = std::min(res.min_available, c.available);
  const int32_t wanted = m_.units.replicas(workload_.items[item].name);
  if (c.existing == c.fresh && c.fresh == wanted && c.fresh_available == wanted) {
    res.completed_s = t;
    active_.erase(it);
  }
}

void RollingUpdates::on_replica_bound(uint32_t, uint32_t, uint32_t, NodeId, double) {}

void RollingUpdates::on_replica_unbound(uint32_t item, uint32_t, uint32_t, double t) {
  if (active_.count(item) != 0) m_.events.schedule(t, sync_kind_, item);
}

void RollingUpdates::on_replica_ready(uint32_t item, uint32_t, double t) {
  if (active_.count(item) != 0) m_.events.schedule(t + workload_.items[item].min_ready_s, sync_kind_, item);
}

void RollingUpdates::report(SimResult& result) const { result.rollouts = results_; }

}  // namespace gpufleet::sim
