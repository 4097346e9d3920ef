#include "sim/controllers/driver_upgrade.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "model/resources.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

size_t pool_index(const ClusterConfig& cluster, const std::string& name) {
  for (size_t p = 0; p < cluster.pools.size(); ++p)
    if (cluster.pools[p].pool.name == name) return p;
  return cluster.pools.size();
}

}  // namespace

void validate_driver_upgrades(const ClusterConfig& cluster) {
  for (const DriverUpgrade& u : cluster.faults.upgrades) {
    if (pool_index(cluster, u.pool) == cluster.pools.size())
      throw std::invalid_argument(fmt::format("driver upgrade: pool '{}' is not in the pools", u.pool));
    for (const auto& [name, v] : {std::pair{"at", u.at_s}, std::pair{"upgrade time", u.upgrade_s}, std::pair{"drain timeout", u.drain_timeout_s}})
      if (!std::isfinite(v) || v < 0) throw std::invalid_argument(fmt::format("driver upgrade of pool {}: {} {} s is negative", u.pool, name, v));
    if (u.max_unavailable.value < 0 || (u.max_unavailable.percent && u.max_unavailable.value > 100))
      throw std::invalid_argument(fmt::format("driver upgrade of pool {}: maxUnavailable {}{} is out of range", u.pool,
                                              u.max_unavailable.value, u.max_unavailable.percent ? "%" : ""));
    if (u.max_parallel_upgrades < 0)
      throw std::invalid_argument(fmt::format("driver upgrade of pool {}: maxParallelUpgrades {} is negative", u.pool, u.max_parallel_upgrades));
  }
}

DriverUpgradeController::DriverUpgradeController(const ClusterConfig& cluster, const SimulationModules& m)
    : loop_(m.events), fleet_(m.fleet), units_(m.units), pending_(m.pending) {
  for (const DriverUpgrade& u : cluster.faults.upgrades) {
    Run run;
    run.spec = &u;
    run.pool = pool_index(cluster, u.pool);
    run.result.pool = u.pool;
    run.result.start_s = u.at_s;
    runs_.push_back(std::move(run));
  }
  auto upgrade_name = [this](uint32_t r) { return runs_[r].spec->pool; };
  start_ = loop_.register_event("driver-upgrade-start", [this](const Event& e) { on_start(e.subject, e.time_s); }, upgrade_name);
  step_ = loop_.register_event(
      "driver-upgrade-step",
      [this](const Event& e) {
        if (e.generation == runs_[e.subject].step_generation) step(e.subject, e.time_s);
      },
      upgrade_name);
  fleet_.add_listener(*this);
}

void DriverUpgradeController::start() {
  for (uint32_t r = 0; r < runs_.size(); ++r)
    if (runs_[r].spec->at_s <= loop_.horizon_s()) loop_.schedule(runs_[r].spec->at_s, start_, r);
}

void DriverUpgradeController::report(SimResult& result) const {
  for (const Run& run : runs_) {
    DriverUpgradeResult r = run.result;
    for (const NodeUpgrade& n : run.nodes)  // still cordoned at the horizon: capacity lost up to it
      if (n.stage == Stage::kDraining || n.stage == Stage::kUpgrading)
        r.capacity_lost_gpu_hours += fleet_.pool(run.pool).pool.gpus_per_node * (loop_.horizon_s() - n.cordoned_s) / kSecondsPerHour;
    result.driver_upgrades.push_back(std::move(r));
  }
}

int32_t DriverUpgradeController::unavailable(size_t pool) const {
  int32_t count = 0;
  for (NodeId n : fleet_.pool_nodes(pool)) count += fleet_.phase(n) == NodePhase::kCordoned || fleet_.phase(n) == NodePhase::kNotReady;
  return count;
}

int32_t DriverUpgradeController::nodes_in_state(size_t pool) const {
  int32_t count = 0;
  for (NodeId n : fleet_.pool_nodes(pool)) {
    const NodePhase phase = fleet_.phase(n);
    count += phase == NodePhase::kReady || phase == NodePhase::kCordoned || phase == NodePhase::kNotReady;
  }
  return count;
}

void DriverUpgradeController::on_start(uint32_t r, double t) {
  Run& run = runs_[r];
  run.started = true;
  for (NodeId n : fleet_.pool_nodes(run.pool))
    if (fleet_.phase(n) == NodePhase::kReady) run.nodes.push_back(NodeUpgrade{n, fleet_.incarnation(n), Stage::kWaiting, 0, 0});
  run.result.max_unavailable = scaled_value_round_up(run.spec->max_unavailable, nodes_in_state(run.pool));
  step(r, t);
}

void DriverUpgradeController::end_capacity_loss(Run& run, const NodeUpgrade& node, double t) {
  run.result.capacity_lost_gpu_hours += fleet_.pool(run.pool).pool.gpus_per_node * (t - node.cordoned_s) / kSecondsPerHour;
}

void DriverUpgradeController::on_capacity_returned(NodeId n, double t) {
  for (uint32_t r = 0; r < runs_.size(); ++r)
    if (runs_[r].blocked && runs_[r].pool == fleet_.pool_of(n)) loop_.schedule(t, step_, r, ++runs_[r].step_generation);
}

void DriverUpgradeController::on_node_removed(NodeId n, double t) {
  for (uint32_t r = 0; r < runs_.size(); ++r) {
    Run& run = runs_[r];
    if (run.blocked && run.pool == fleet_.pool_of(n)) {
      loop_.schedule(t, step_, r, ++run.step_generation);
      continue;
    }
    for (NodeUpgrade& node : run.nodes) {
      if (node.node != n || (node.stage != Stage::kDraining && node.stage != Stage::kUpgrading)) continue;
      end_capacity_loss(run, node, t);
      node.stage = Stage::kSkipped;
      ++run.result.nodes_skipped;
      loop_.schedule(t, step_, r, ++run.step_generation);  // a slot is free
    }
  }
}

// Evicts what the budgets allow on a draining node; at the timeout, deletes the rest.
void DriverUpgradeController::drain(Run& run, NodeUpgrade& node, double t) {
  const bool timed_out = t >= node.until_s;
  for (uint32_t u : units_.units_on(node.node)) {
    const uint32_t single[] = {u};
    const bool allowed = units_.budgets_allow(single);
    if (!allowed && !timed_out) continue;
    const auto pods = static_cast<int64_t>(units_.bound_pods(single).size());
    (allowed ? run.result.pods_evicted : run.result.pods_deleted) += pods;
    if (units_.spec(u).kind == WorkloadKind::kJob) ++run.result.jobs_interrupted;
    run.result.lost_gpu_hours += units_.evict(u, t) / kGpuMilliPerGpu / kSecondsPerHour;
  }
  if (fleet_.pods_on(node.node).empty()) {
    node.stage = Stage::kUpgrading;
    node.until_s = t + run.spec->upgrade_s;
  }
}

void DriverUpgradeController::step(uint32_t r, double t) {
  Run& run = runs_[r];
  // Nodes removed or no longer ours are skipped; upgrades that are over end; drains go on.
  for (NodeUpgrade& node : run.nodes) {
    const bool gone = fleet_.incarnation(node.node) != node.incarnation;
    if (node.stage == Stage::kUpgrading && !gone && t >= node.until_s) {
      if (fleet_.phase(node.node) == NodePhase::kCordoned) {  // a failed node stays NotReady
        fleet_.uncordon(node.node);
        pending_.request_retry(t);
      }
      end_capacity_loss(run, node, t);
      node.stage = Stage::kDone;
      ++run.result.nodes_upgraded;
    } else if (node.stage == Stage::kDraining && !gone) {
      drain(run, node, t);
    }
  }
  // Start as many as the policy allows, in node order (GetUpgradesAvailable).
  int32_t in_progress = 0;
  for (const NodeUpgrade& node : run.nodes) in_progress += node.stage == Stage::kDraining || node.stage == Stage::kUpgrading;
  const int32_t max_unavailable = scaled_value_round_up(run.spec->max_unavailable, nodes_in_state(run.pool));
  int32_t available = max_unavailable - unavailable(run.pool);
  if (run.spec->max_parallel_upgrades > 0) available = std::min(available, run.spec->max_parallel_upgrades - in_progress);
  for (NodeUpgrade& node : run.nodes) {
    if (node.stage != Stage::kWaiting) continue;
    if (fleet_.incarnation(node.node) != node.incarnation || fleet_.phase(node.node) != NodePhase::kReady) {
      node.stage = Stage::kSkipped;  // removed, interrupted or failed before its turn
      ++run.result.nodes_skipped;
      continue;
    }
    if (available <= 0) break;
    --available;
    fleet_.cordon(node.node);
    node.stage = Stage::kDraining;
    node.cordoned_s = t;
    node.until_s = t + run.spec->drain_timeout_s;
    drain(run, node, t);
  }
  // The next step: the earliest upgrade end or drain retry.
  double next = std::numeric_limits<double>::infinity();
  bool left = false;
  for (const NodeUpgrade& node : run.nodes) {
    if (node.stage == Stage::kWaiting) left = true;
    if (node.stage == Stage::kUpgrading) next = std::min(next, node.until_s);
    if (node.stage == Stage::kDraining) next = std::min(next, std::min(t + kDrainRetryS, node.until_s));
  }
  run.blocked = !std::isfinite(next) && left;
  if (run.blocked) next = t + kBlockedRecheckS;  // waiting for other unavailable nodes to come back
  if (std::isfinite(next)) {
    if (next <= loop_.horizon_s()) loop_.schedule(next, step_, r, ++run.step_generation);
  } else {
    run.result.finish_s = t;
  }
}

}  // namespace gpufleet::sim
