#include "sim/controllers/consolidation.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "sim/rules/cluster_autoscaler.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

// Karpenter's EvictionCost for a pod without a deletion-cost annotation
// (pkg/utils/disruption: 1 + priority / 2^25, clamped to [-10, 10]).
double eviction_cost(int32_t priority) { return std::clamp(1.0 + static_cast<double>(priority) / 33554432.0, -10.0, 10.0); }

}  // namespace

Consolidation::Consolidation(const ClusterConfig& cluster, const SimulationModules& m)
    : settings_(cluster.consolidation),
      node_pools_(cluster.node_pools),
      loop_(m.events),
      fleet_(m.fleet),
      placement_(m.placement),
      pending_(m.pending),
      units_(m.units),
      billing_(m.billing) {
  tick_ = loop_.register_event("consolidation-tick", [this](const Event& e) { on_tick(e.time_s); });
  node_pool_of_.assign(cluster.pools.size(), -1);
  for (size_t p = 0; p < cluster.pools.size(); ++p)
    for (size_t k = 0; k < node_pools_.size(); ++k)
      if (node_pools_[k].name == cluster.pools[p].settings.karpenter_node_pool) node_pool_of_[p] = static_cast<int32_t>(k);
}

void Consolidation::start() { loop_.schedule(0, tick_); }

void Consolidation::report(SimResult& result) const {
  result.nodes_consolidated = consolidated_;
  result.consolidation_restarts = restarts_;
  result.consolidation_moved_pods = moved_pods_;
  result.consolidation_lost_gpu_hours = lost_gpu_milli_s_ / kGpuMilliPerGpu / kSecondsPerHour;
}

void Consolidation::on_tick(double t) {
  if (t + settings_.interval_s <= loop_.horizon_s()) loop_.schedule(t + settings_.interval_s, tick_);
  if (pending_.retry_due()) pending_.retry(t);
  consolidate(t);
}

void Consolidation::consolidate(double t) {
  const size_t pool_count = fleet_.pool_count();
  // A pool is left alone while a pending pod could run on its nodes: it waits for room there (a gang
  // for its last nodes, a pod for a node being provisioned).
  std::vector<uint8_t> wanted(pool_count, 0);
  {
    std::vector<uint8_t> seen(placement_.shape_count(), 0);
    for (const PendingUnit& entry : pending_.units()) {
      if (seen[entry.shape]) continue;
      seen[entry.shape] = 1;
      for (size_t p = 0; p < pool_count; ++p)
        if (!wanted[p] && placement_.pool_admits(entry.shape, p)) wanted[p] = 1;
    }
  }
  // Karpenter's budgets, per NodePool: its Ready nodes as the tick starts, and the nodes this tick
  // already disrupted (removal is instant, so no node is still being disrupted from an earlier tick).
  std::vector<int32_t> ready(node_pools_.size(), 0), disrupted(node_pools_.size(), 0);
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (const int32_t np = node_pool_of_[fleet_.pool_of(n)]; np >= 0 && fleet_.phase(n) == NodePhase::kReady) ++ready[np];
  const auto budget_allows = [&](int32_t np, KarpenterDisruptionReason reason) {
    return np < 0 || disrupted[np] < allowed_disruptions(node_pools_[np], ready[np], reason);
  };
  // (Karpenter disruption cost, job GPU-milli-seconds lost, node): the order candidates are tried in.
  std::vector<std::tuple<double, double, NodeId>> candidates;
  for (NodeId n = 0; n < fleet_.node_count(); ++n) {
    const size_t pool = fleet_.pool_of(n);
    const int32_t np = node_pool_of_[pool];
    if (np < 0 && !settings_.enabled) continue;  // only the NodePools' nodes
    const double after_s = np < 0 ? settings_.consolidate_after_s : node_pools_[np].consolidate_after_s;
    if (fleet_.phase(n) != NodePhase::kReady || wanted[pool] || !(t - fleet_.last_pod_change_s(n) >= after_s)) continue;
    if (fleet_.live(pool) <= fleet_.pool(pool).pool.min_nodes) continue;
    const bool empty = fleet_.pods_on(n).empty();
    // Karpenter's emptiness needs no threshold.
    if (!((np >= 0 && empty) || node_utilization(fleet_.state(), n, 0, 0, fleet_.dra_node_slices()) < settings_.threshold) || !billing_.removal_saves_money(n)) continue;
    if (empty) {  // emptiness: nothing to move, any number per tick within the NodePool's budget
      if (!budget_allows(np, KarpenterDisruptionReason::kEmpty)) continue;
      fleet_.remove(n, t, NodeRemoval::kConsolidation);
      ++consolidated_;
      if (np >= 0) ++disrupted[np];
      continue;
    }
    if (np >= 0 && node_pools_[np].consolidate_when_empty_only) continue;
    double cost = 0, lost = 0;
    for (uint32_t u : units_.units_on(n)) {
      const Units::Unit& unit = units_.unit(u);
      const WorkloadSpec& spec = units_.spec(u);
      cost += eviction_cost(spec.priority) * unit.pod_count;  // a gang restarts whole
      if (spec.kind == WorkloadKind::kJob) lost += units_.work_lost_if_restarted(u, t);
    }
    candidates.emplace_back(cost, lost, n);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [cost, lost, n] : candidates) {
    const size_t pool = fleet_.pool_of(n);
    if (fleet_.live(pool) <= fleet_.pool(pool).pool.min_nodes) continue;
    if (!budget_allows(node_pool_of_[pool], KarpenterDisruptionReason::kUnderutilized)) continue;
    if (try_consolidate(n, t)) return;  // single-node consolidation: one node per tick
  }
}

// Every pod of the units on node n (a job's pods on other nodes too) through the dry run
// (Placement::dry_run_moves). If all fit and the budgets allow it, the units restart where the dry
// run put them and n is removed; otherwise nothing changes.
bool Consolidation::try_consolidate(NodeId n, double t) {
  const std::vector<uint32_t> units = units_.units_on(n);
  if (!units_.budgets_allow(units)) return false;
  const std::vector<uint32_t> moving = units_.bound_pods(units);
  std::optional<Placements> placed = placement_.dry_run_moves(n, units_.bound(moving));
  if (!placed) return false;
  const auto moved_here = static_cast<int64_t>(fleet_.pods_on(n).size());
  for (double lost : units_.restart(units, moving, std::move(*placed), t)) lost_gpu_milli_s_ += lost;
  restarts_ += static_cast<int64_t>(moving.size());
  moved_pods_ += moved_here;
  fleet_.remove(n, t, NodeRemoval::kConsolidation);
  ++consolidated_;
  return true;
}

}  // namespace gpufleet::sim
