#include "sim/controllers/cluster_autoscaler.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/rules/cluster_autoscaler.h"
#include "sim/rules/cost.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

ClusterAutoscaler::ClusterAutoscaler(const AutoscalerSettings& settings, const SimulationModules& m)
    : settings_(settings),
      loop_(m.events),
      fleet_(m.fleet),
      placement_(m.placement),
      pending_(m.pending),
      units_(m.units),
      billing_(m.billing) {
  tick_ = loop_.register_event("autoscaler-tick", [this](const Event& e) { on_tick(e.time_s); });
  backoff_.resize(fleet_.pool_count());
  fleet_.add_listener(*this);
}

bool ClusterAutoscaler::in_backoff(size_t p, double t) const { return t < backoff_[p].until_s; }

void ClusterAutoscaler::scale_up_failed(size_t p, double t) {
  Backoff& b = backoff_[p];
  // utils/backoff/exponential_backoff.go: the first failure (or one after the reset timeout) backs
  // off the initial duration, each further one twice the last, capped.
  if (b.duration_s <= 0 || t - b.last_failure_s >= settings_.backoff_reset_s) b.duration_s = settings_.initial_backoff_s;
  else b.duration_s = std::min(2 * b.duration_s, settings_.max_backoff_s);
  b.last_failure_s = t;
  b.until_s = t + b.duration_s;
  ++failed_scale_ups_;
}

void ClusterAutoscaler::on_launch_failed(NodeId n, double t, const std::string& /*reason*/) {
  const size_t p = fleet_.pool_of(n);
  if (managed(p)) scale_up_failed(p, t);
}

bool ClusterAutoscaler::upcoming(NodeId n) const {
  const NodePhase phase = fleet_.phase(n);
  return phase == NodePhase::kProvisioning ||
         (phase == NodePhase::kReady && fleet_.withheld_gpus(n, GpuWithheld::kNotAdvertised) > 0);
}

// CA --max-node-provision-time: a node of a managed pool still provisioning, or Ready without its
// GPUs, that long after its launch is given up. A refused launch is not waited for here: the fleet
// reports it (on_launch_failed).
void ClusterAutoscaler::give_up_late_nodes(double t) {
  if (fleet_.provisioning_total() == 0 && fleet_.withheld_gpu_count() == 0) return;  // no node is upcoming
  for (NodeId n = 0; n < fleet_.node_count(); ++n) {
    if (!upcoming(n) || !managed(fleet_.pool_of(n))) continue;
    if (t - fleet_.launched_at_s(n) < settings_.max_node_provision_s) continue;
    if (fleet_.phase(n) == NodePhase::kReady && !fleet_.pods_on(n).empty()) units_.evict_node(n, t);
    const size_t p = fleet_.pool_of(n);
    fleet_.remove(n, t, NodeRemoval::kNotReadyInTime);
    scale_up_failed(p, t);
  }
}

void ClusterAutoscaler::start() { loop_.schedule(0, tick_); }

void ClusterAutoscaler::report(SimResult& result) const {
  result.nodes_scaled_up = scaled_up_;
  result.nodes_scaled_down = scaled_down_;
  result.failed_scale_ups = failed_scale_ups_;
}

ClusterAutoscaler::NodeTimers& ClusterAutoscaler::timers(NodeId n) {
  if (n >= timers_.size()) timers_.resize(fleet_.node_count());
  NodeTimers& timers = timers_[n];
  if (timers.incarnation != fleet_.incarnation(n)) timers = NodeTimers{fleet_.incarnation(n), -1, 0};
  return timers;
}

void ClusterAutoscaler::on_tick(double t) {
  if (t + settings_.scan_interval_s <= loop_.horizon_s()) loop_.schedule(t + settings_.scan_interval_s, tick_);
  give_up_late_nodes(t);
  scale_up(t);
  if (settings_.scale_down) scale_down(t);
}

void ClusterAutoscaler::scale_up(double t) {
  std::vector<const Pod*> pods;
  std::vector<uint32_t> shapes;
  std::vector<uint32_t> units;  // the unit of each pod
  for (const PendingUnit& entry : pending_.units()) {
    const Units::Unit& unit = units_.unit(entry.unit);
    if (unit.pending_since_s > t - settings_.scale_up_delay_s) continue;
    bool any_managed = false;
    for (size_t p = 0; p < fleet_.pool_count() && !any_managed; ++p) any_managed = managed(p) && placement_.pool_admits(unit.shape, p);
    if (!any_managed) continue;  // only Karpenter's pools (or none) could take it
    for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) {
      pods.push_back(&units_.pod(p));
      shapes.push_back(unit.shape);
      units.push_back(entry.unit);
    }
  }
  if (pods.empty()) return;

  // Pods that fit the free room of ready nodes do not need new ones (CA's FilterOutSchedulable: a
  // gang job's pods wait for each other, so some of them may fit today's nodes).
  {
    const std::vector<uint8_t> fits = placement_.fits_ready_nodes(pods);
    std::vector<const Pod*> left;
    std::vector<uint32_t> left_shapes, left_units;
    for (size_t i = 0; i < pods.size(); ++i)
      if (!fits[i]) {
        left.push_back(pods[i]);
        left_shapes.push_back(shapes[i]);
        left_units.push_back(units[i]);
      }
    pods = std::move(left);
    shapes = std::move(left_shapes);
    units = std::move(left_units);
  }
  if (pods.empty()) return;

  // Pods that fit a node already being provisioned, or a Ready node whose GPUs are not advertised
  // yet, do not count again (CA's upcoming nodes; the GPU processor's unready nodes).
  const size_t pool_count = fleet_.pool_count();
  std::vector<int32_t> upcoming_nodes(pool_count, 0);
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (upcoming(n)) ++upcoming_nodes[fleet_.pool_of(n)];
  std::vector<TemplateNodes> upcoming;
  upcoming.reserve(pool_count);
  for (size_t p = 0; p < pool_count; ++p) upcoming.emplace_back(fleet_.template_nodes()[p], fleet_.template_daemon_pods(p), fleet_.dra_catalog());
  std::vector<const Pod*> rest;
  std::vector<uint32_t> rest_shapes, rest_units;
  for (size_t i = 0; i < pods.size(); ++i) {
    bool helped = false;
    for (size_t p = 0; p < pool_count && !helped; ++p) {
      if (!managed(p) || upcoming_nodes[p] == 0 || !placement_.pool_admits(shapes[i], p)) continue;
      helped = upcoming[p].add_first_fit(*pods[i], upcoming_nodes[p]);
    }
    if (!helped) {
      rest.push_back(pods[i]);
      rest_shapes.push_back(shapes[i]);
      rest_units.push_back(units[i]);
    }
  }
  if (rest.empty()) return;

  // Why the units no managed pool can grow for wait (the pending list's reasons).
  for (size_t i = 0; i < rest.size(); ++i) {
    if (i > 0 && rest_units[i] == rest_units[i - 1]) continue;
    bool growable = false, backoff = false, at_max = false;
    std::string pool_name;
    for (size_t p = 0; p < pool_count; ++p) {
      if (!managed(p) || !placement_.pool_admits(rest_shapes[i], p)) continue;
      if (fleet_.live(p) >= fleet_.pool(p).pool.max_nodes) {
        at_max = true;
        if (pool_name.empty()) pool_name = fleet_.pool(p).pool.name;
      } else if (in_backoff(p, t)) {
        backoff = true;
        pool_name = fleet_.pool(p).pool.name;
      } else {
        growable = true;
      }
    }
    if (growable) pending_.set_provisioning_reason(rest_units[i], "");
    else if (backoff) pending_.set_provisioning_reason(rest_units[i], "node group in backoff (" + pool_name + ")");
    else if (at_max) pending_.set_provisioning_reason(rest_units[i], "max nodes reached (" + pool_name + ")");
  }

  std::vector<ScaleUpOption> options;
  for (size_t p = 0; p < pool_count; ++p) {
    const SimPool& sp = fleet_.pool(p);
    if (!managed(p) || in_backoff(p, t)) continue;
    const int32_t room = sp.pool.max_nodes - fleet_.live(p);
    if (room <= 0) continue;
    std::vector<const Pod*> fitting;
    for (size_t i = 0; i < rest.size(); ++i)
      if (placement_.pool_admits(rest_shapes[i], p)) fitting.push_back(rest[i]);
    if (fitting.empty()) continue;
    ScaleUpOption o = estimate_scale_up(p, fleet_.template_nodes()[p], fitting, room, fleet_.template_daemon_pods(p), fleet_.dra_catalog());
    if (o.nodes == 0) continue;
    o.price_usd_per_hour = billing_.added_price_usd_per_hour(p, o.nodes);
    options.push_back(o);
  }
  const int chosen = choose_option(options, settings_.expander);
  if (chosen < 0) return;
  const ScaleUpOption& o = options[static_cast<size_t>(chosen)];
  scaled_up_ += fleet_.launch(o.pool, o.nodes, t);
  last_scale_up_s_ = t;
}

void ClusterAutoscaler::scale_down(double t) {
  const size_t node_count = fleet_.node_count();
  std::vector<NodeId> unneeded_nodes;  // the nodes unneeded after this pass, in node order
  for (NodeId n = 0; n < node_count; ++n) {
    if (fleet_.phase(n) != NodePhase::kReady || !managed(fleet_.pool_of(n)) || upcoming(n)) continue;
    NodeTimers& node = timers(n);
    // CA lists a node as unneeded only while it could be removed: utilization below the threshold,
    // no pod that blocks eviction (job pods, as safe-to-evict "false"), and not inside the recheck
    // period after a failed removal. A node that drops off the list loses its unneeded time.
    // The cheap conditions first: most nodes hold job pods, and their utilization is not needed.
    const bool skip_daemon_sets = settings_.ignore_daemon_sets_utilization;
    const bool unneeded = fleet_.not_safe_to_evict_pods(n) == 0 && t >= node.recheck_after_s &&
                          node_utilization(fleet_.state(), n, skip_daemon_sets ? fleet_.daemon_cpu_milli(n) : 0,
                                           skip_daemon_sets ? fleet_.daemon_memory_bytes(n) : 0, fleet_.dra_node_slices()) <
                                              settings_.utilization_threshold;
    if (!unneeded) node.unneeded_since_s = -1;
    else if (node.unneeded_since_s < 0) node.unneeded_since_s = t;
    if (node.unneeded_since_s >= 0) unneeded_nodes.push_back(n);
  }
  if (t < last_scale_up_s_ + settings_.scale_down_delay_after_add_s) return;
  int moved_nodes = 0;
  // Only the nodes unneeded now can go (removing or emptying one changes no other node's timers).
  for (const NodeId n : unneeded_nodes) {
    if (fleet_.phase(n) != NodePhase::kReady || !managed(fleet_.pool_of(n)) || upcoming(n)) continue;
    NodeTimers& node = timers(n);
    if (node.unneeded_since_s < 0 || t - node.unneeded_since_s < settings_.scale_down_unneeded_s) continue;
    const size_t pool = fleet_.pool_of(n);
    if (fleet_.live(pool) <= fleet_.pool(pool).pool.min_nodes) continue;
    if (fleet_.pods_on(n).empty()) {
      fleet_.remove(n, t, NodeRemoval::kScaleDown);
      ++scaled_down_;
      continue;
    }
    if (moved_nodes > 0) continue;
    if (try_move_pods(n, t)) {
      fleet_.remove(n, t, NodeRemoval::kScaleDown);
      ++scaled_down_;
      ++moved_nodes;
    } else {
      NodeTimers& again = timers(n);  // the dry run left the node as it was
      again.recheck_after_s = t + settings_.unremovable_recheck_s;
      again.unneeded_since_s = -1;
    }
  }
}

// Scale-down of a node with pods: if the budgets allow it and the dry run places all of them on
// other nodes, they move there (the caller removes n); otherwise nothing changes.
bool ClusterAutoscaler::try_move_pods(NodeId n, double t) {
  if (!units_.budgets_allow(units_.units_on(n))) return false;
  const std::vector<uint32_t> moving(fleet_.pods_on(n).begin(), fleet_.pods_on(n).end());
  std::optional<Placements> placed = placement_.dry_run_moves(n, units_.bound(moving));
  if (!placed) return false;
  units_.move_pods(moving, std::move(*placed), t);
  return true;
}

}  // namespace gpufleet::sim
