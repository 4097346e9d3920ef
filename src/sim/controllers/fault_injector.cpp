#include "sim/controllers/fault_injector.h"

#include <algorithm>
#include <cmath>

#include "model/xid.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

bool in_state(NodePhase phase) { return phase != NodePhase::kAbsent && phase != NodePhase::kProvisioning; }

}  // namespace

FaultInjector::FaultInjector(const FaultSchedule& schedule, uint64_t run_seed, Alerting& alerting, const SimulationModules& modules)
    : schedule_(schedule),
      alerting_(alerting),
      loop_(modules.events),
      fleet_(modules.fleet),
      units_(modules.units),
      rng_(static_cast<int64_t>(schedule.seed ? *schedule.seed : run_seed ^ kFaultSeedSalt)) {
  zones_.resize(fleet_.node_count());
  for (size_t p = 0; p < fleet_.pool_count(); ++p) {
    const std::span<const NodeId> nodes = fleet_.pool_nodes(p);
    for (size_t i = 0; i < nodes.size(); ++i) zones_[nodes[i]] = node_zone(fleet_.pool(p).pool, static_cast<int32_t>(i));
  }
  plugin_down_count_.assign(fleet_.node_count(), 0);
  fault_ = loop_.register_event("fault", [this](const Event& e) { on_fault(e); });
  recovery_ = loop_.register_event("fault-recovery", [this](const Event& e) { on_recovery(e); });
  rate_ = loop_.register_event("fault-rate", [this](const Event& e) { on_rate(e); });
  fleet_.add_listener(*this);
}

void FaultInjector::start() {
  for (size_t f = 0; f < schedule_.faults.size(); ++f) {
    const Fault& fault = schedule_.faults[f];
    if (fault.rate_per_node_hour <= 0 && fault.at_s <= loop_.horizon_s()) loop_.schedule(fault.at_s, fault_, static_cast<uint32_t>(f));
  }
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (in_state(fleet_.phase(n))) start_rate_draws(n, 0);
}

bool FaultInjector::targets(const Fault& f, NodeId n) const {
  if (!f.target.node.empty()) return fleet_.name(n) == f.target.node;
  if (!f.target.pool.empty()) return fleet_.pool(fleet_.pool_of(n)).pool.name == f.target.pool;
  return zones_[n] == f.target.zone;
}

std::vector<NodeId> FaultInjector::target_nodes(const Fault& f) const {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (targets(f, n)) out.push_back(n);
  return out;
}

void FaultInjector::start_rate_draws(NodeId n, double t) {
  for (size_t f = 0; f < schedule_.faults.size(); ++f) {
    const Fault& fault = schedule_.faults[f];
    if (fault.rate_per_node_hour > 0 && targets(fault, n)) draw_rate(f, n, std::max(t, fault.from_s));
  }
}

void FaultInjector::draw_rate(size_t f, NodeId n, double from) {
  const Fault& fault = schedule_.faults[f];
  const double end = fault.to_s < 0 ? loop_.horizon_s() : std::min(fault.to_s, loop_.horizon_s());
  // Exponential time to the next hit by inversion: -ln(1 - U) / rate, U uniform in [0, 1).
  const double at = from + -std::log(1.0 - rng_.float64()) / fault.rate_per_node_hour * kSecondsPerHour;
  if (at > end) return;
  draws_.push_back({f, n, fleet_.incarnation(n)});
  loop_.schedule(at, rate_, static_cast<uint32_t>(draws_.size() - 1));
}

void FaultInjector::on_node_ready(NodeId n, double t) {
  start_rate_draws(n, t);
  for (PluginWindow& w : windows_) {
    if (!w.active || !targets(schedule_.faults[w.fault], n)) continue;
    plugin_down(n, t);
    w.nodes.emplace_back(n, fleet_.incarnation(n));
    ++counts_.device_plugin_failures;
  }
}

void FaultInjector::on_node_removed(NodeId n, double /*t*/) { plugin_down_count_[n] = 0; }

void FaultInjector::on_rate(const Event& e) {
  const RateDraw d = draws_[e.subject];
  if (fleet_.incarnation(d.node) != d.incarnation || !in_state(fleet_.phase(d.node))) return;  // the node left
  apply(d.fault, d.node, e.time_s);
  draw_rate(d.fault, d.node, e.time_s);
}

void FaultInjector::on_fault(const Event& e) {
  const size_t f = e.subject;
  const Fault& fault = schedule_.faults[f];
  const double t = e.time_s;
  if (!fault.target.node.empty()) {
    const std::vector<NodeId> nodes = target_nodes(fault);
    if (nodes.empty() || !in_state(fleet_.phase(nodes.front()))) {
      ++counts_.skipped;
      return;
    }
    apply(f, nodes.front(), t);
    return;
  }
  if (fault.kind == FaultKind::kDevicePluginFailure) {  // pool- or zone-wide
    PluginWindow w;
    w.fault = f;
    w.active = true;
    for (NodeId n : target_nodes(fault)) {
      if (!in_state(fleet_.phase(n))) continue;
      plugin_down(n, t);
      w.nodes.emplace_back(n, fleet_.incarnation(n));
      ++counts_.device_plugin_failures;
    }
    windows_.push_back(std::move(w));
    if (fault.recover_after_s >= 0 && t + fault.recover_after_s <= loop_.horizon_s()) {
      recoveries_.push_back({fault.kind, 0, 0, -1, static_cast<int32_t>(windows_.size() - 1)});
      loop_.schedule(t + fault.recover_after_s, recovery_, static_cast<uint32_t>(recoveries_.size() - 1));
    }
    return;
  }
  std::vector<NodeId> ready;
  for (NodeId n : target_nodes(fault)) {
    if (fleet_.phase(n) != NodePhase::kReady) continue;
    if (fault.kind == FaultKind::kSpotInterruption && fleet_.pool(fleet_.pool_of(n)).settings.capacity_type != CapacityType::kSpot)
      continue;
    ready.push_back(n);
  }
  if (ready.empty()) {
    ++counts_.skipped;
    return;
  }
  apply(f, ready[static_cast<size_t>(rng_.intn(static_cast<int64_t>(ready.size())))], t);
}

void FaultInjector::apply(size_t f, NodeId n, double t) {
  const Fault& fault = schedule_.faults[f];
  const bool recover = fault.recover_after_s >= 0 && t + fault.recover_after_s <= loop_.horizon_s();
  const auto schedule_recovery = [&](int32_t gpu) {
    if (!recover) return;
    recoveries_.push_back({fault.kind, n, fleet_.incarnation(n), gpu, -1});
    loop_.schedule(t + fault.recover_after_s, recovery_, static_cast<uint32_t>(recoveries_.size() - 1));
  };
  const NodePhase phase = fleet_.phase(n);
  switch (fault.kind) {
    case FaultKind::kNodeFailure:
      if (phase != NodePhase::kReady && phase != NodePhase::kCordoned) {
        ++counts_.skipped;
        return;
      }
      fleet_.fail_node(n, t);
      ++counts_.node_failures;
      schedule_recovery(-1);
      return;
    case FaultKind::kXid: {
      const int32_t gpus = fleet_.pool(fleet_.pool_of(n)).pool.gpus_per_node;
      const int32_t g = fault.gpu >= 0 ? fault.gpu : (gpus > 0 ? static_cast<int32_t>(rng_.intn(gpus)) : -1);
      if (!in_state(phase) || g < 0 || g >= gpus) {
        ++counts_.skipped;
        return;
      }
      const XidInfo xid = *find_xid(fault.xid);
      ++counts_.xid_errors;
      alerting_.on_xid(n, g, xid, t);
      if (xid.effect == XidEffect::kRestartApplication) {
        counts_.container_restarts += static_cast<int64_t>(units_.restart_in_place(n, g, t).size());
        return;
      }
      if (fleet_.gpu_withheld(n, g) != GpuWithheld::kUnhealthy) ++counts_.gpus_reset;
      fleet_.withhold_gpu(n, g, GpuWithheld::kUnhealthy, t);
      schedule_recovery(g);
      return;
    }
    case FaultKind::kDevicePluginFailure:
      if (!in_state(phase) || fleet_.pool(fleet_.pool_of(n)).pool.gpus_per_node == 0) {
        ++counts_.skipped;
        return;
      }
      plugin_down(n, t);
      ++counts_.device_plugin_failures;
      schedule_recovery(-1);
      return;
    case FaultKind::kSpotInterruption:
      if (phase != NodePhase::kReady || fleet_.pool(fleet_.pool_of(n)).settings.capacity_type != CapacityType::kSpot) {
        ++counts_.skipped;
        return;
      }
      fleet_.interrupt(n, t);
      ++counts_.spot_interruptions;
      return;
  }
}

void FaultInjector::plugin_down(NodeId n, double t) {
  if (plugin_down_count_[n]++ == 0) fleet_.set_device_plugin_down(n, true, t);
}

void FaultInjector::plugin_up(NodeId n, double t) {
  if (plugin_down_count_[n] > 0 && --plugin_down_count_[n] == 0) fleet_.set_device_plugin_down(n, false, t);
}

void FaultInjector::on_recovery(const Event& e) {
  const Recovery r = recoveries_[e.subject];
  const double t = e.time_s;
  if (r.window >= 0) {
    PluginWindow& w = windows_[static_cast<size_t>(r.window)];
    w.active = false;
    for (const auto& [n, incarnation] : w.nodes)
      if (fleet_.incarnation(n) == incarnation) plugin_up(n, t);
    return;
  }
  if (fleet_.incarnation(r.node) != r.incarnation) return;  // the node was removed meanwhile
  switch (r.kind) {
    case FaultKind::kNodeFailure: fleet_.recover_node(r.node, t); return;
    case FaultKind::kXid:
      if (fleet_.gpu_withheld(r.node, r.gpu) != GpuWithheld::kUnhealthy) return;
      fleet_.restore_gpu(r.node, r.gpu, t);  // reset done
      // Still without a device plugin: the GPU stays unadvertised.
      if (fleet_.device_plugin_down(r.node)) fleet_.withhold_gpu(r.node, r.gpu, GpuWithheld::kNotAdvertised, t);
      return;
    case FaultKind::kDevicePluginFailure: plugin_up(r.node, t); return;
    case FaultKind::kSpotInterruption: return;
  }
}

void FaultInjector::report(SimResult& result) const {
  result.faults_enabled = true;
  result.faults = counts_;
}

}  // namespace gpufleet::sim
