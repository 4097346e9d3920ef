#include "sim/controllers/karpenter_provisioner.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "sim/rules/cluster_autoscaler.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {
namespace {

// The capacity one node of `pool` adds to a NodePool's usage for a limit's resource name.
int64_t node_capacity(const NodePool& pool, const std::string& resource) {
  if (resource == "cpu") return pool.cpu_milli;
  if (resource == "memory") return pool.memory_bytes;
  if (resource == "nvidia.com/gpu") return pool.gpus_per_node;
  return 0;
}

double offering_price(const SimPool& p) {
  return p.settings.capacity_type == CapacityType::kSpot ? p.pool.spot_usd_per_hour.value_or(p.pool.on_demand_usd_per_hour)
                                                         : p.pool.on_demand_usd_per_hour;
}

}  // namespace

KarpenterProvisioner::KarpenterProvisioner(const ClusterConfig& cluster, const SimulationModules& m)
    : cluster_(cluster), loop_(m.events), fleet_(m.fleet), placement_(m.placement), pending_(m.pending), units_(m.units) {
  tick_ = loop_.register_event("karpenter-tick", [this](const Event& e) { on_tick(e.time_s); }, {}, false);
  limits_ = loop_.register_event("nodepool-limits", [this](const Event& e) {
    const LimitChange& c = cluster_.faults.limit_changes[e.subject];
    for (size_t np = 0; np < cluster_.node_pools.size(); ++np) {
      if (cluster_.node_pools[np].name != c.node_pool) continue;
      for (const auto& limit : c.limits) {  // not a structured binding: clang 14 does not capture one
        auto& limits = limits_now_[np];
        auto it = std::find_if(limits.begin(), limits.end(), [&](const auto& l) { return l.first == limit.first; });
        if (it == limits.end()) limits.emplace_back(limit.first, limit.second);
        else it->second = limit.second;
      }
    }
  });
  node_pool_of_.assign(fleet_.pool_count(), -1);
  for (size_t p = 0; p < fleet_.pool_count(); ++p) {
    const std::string& name = fleet_.pool(p).settings.karpenter_node_pool;
    for (size_t np = 0; np < cluster_.node_pools.size(); ++np)
      if (!name.empty() && cluster_.node_pools[np].name == name) node_pool_of_[p] = static_cast<int32_t>(np);
  }
  for (const KarpenterNodePool& np : cluster_.node_pools) limits_now_.push_back(np.limits);
  node_pool_order_.resize(cluster_.node_pools.size());
  std::iota(node_pool_order_.begin(), node_pool_order_.end(), size_t{0});
  std::stable_sort(node_pool_order_.begin(), node_pool_order_.end(), [&](size_t a, size_t b) {
    const KarpenterNodePool& x = cluster_.node_pools[a];
    const KarpenterNodePool& y = cluster_.node_pools[b];
    return x.weight != y.weight ? x.weight > y.weight : x.name < y.name;
  });
  unavailable_until_s_.assign(fleet_.pool_count(), -1);
  claim_of_node_.assign(fleet_.node_count(), -1);
  fleet_.add_listener(*this);
}

void KarpenterProvisioner::start() {
  loop_.schedule(0, tick_);
  for (uint32_t i = 0; i < cluster_.faults.limit_changes.size(); ++i)
    if (cluster_.faults.limit_changes[i].at_s <= loop_.horizon_s()) loop_.schedule(cluster_.faults.limit_changes[i].at_s, limits_, i);
}

void KarpenterProvisioner::report(SimResult& result) const {
  result.karpenter_nodes_launched = launched_;
  result.node_claims = claims_;
}

int64_t KarpenterProvisioner::limit(size_t np, const std::string& resource) const {
  for (const auto& [name, value] : limits_now_[np])
    if (name == resource) return value;
  return -1;
}

void KarpenterProvisioner::on_launch_failed(NodeId n, double t, const std::string& /*reason*/) {
  const size_t p = fleet_.pool_of(n);
  if (node_pool_of_[p] < 0) return;
  unavailable_until_s_[p] = t + cluster_.karpenter.unavailable_offerings_ttl_s;
  if (claim_of_node_[n] >= 0) claims_[static_cast<size_t>(claim_of_node_[n])].failed_s = t;
}

void KarpenterProvisioner::on_node_ready(NodeId n, double t) {
  if (node_pool_of_[fleet_.pool_of(n)] >= 0 && claim_of_node_[n] >= 0) claims_[static_cast<size_t>(claim_of_node_[n])].ready_s = t;
}

bool KarpenterProvisioner::in_flight(NodeId n) const {
  const NodePhase phase = fleet_.phase(n);
  return phase == NodePhase::kProvisioning ||
         (phase == NodePhase::kReady && fleet_.withheld_gpus(n, GpuWithheld::kNotAdvertised) > 0);
}

bool KarpenterProvisioner::within_limits(size_t p, const std::vector<int32_t>& planned, std::string* exceeded) const {
  const size_t np = static_cast<size_t>(node_pool_of_[p]);
  for (const auto& [resource, value] : limits_now_[np]) {
    int64_t usage = node_capacity(fleet_.pool(p).pool, resource);  // the node to add
    for (size_t q = 0; q < fleet_.pool_count(); ++q)
      if (node_pool_of_[q] == static_cast<int32_t>(np))
        usage += int64_t{fleet_.live(q) + planned[q]} * node_capacity(fleet_.pool(q).pool, resource);
    if (usage > value) {
      if (exceeded) *exceeded = resource;
      return false;
    }
  }
  return true;
}

// The pending units with a pod that needs a new node of a NodePool (see the top of the header).
std::vector<uint32_t> KarpenterProvisioner::needing_nodes(double /*t*/) {
  std::vector<uint32_t> units;
  std::vector<const Pod*> pods;
  std::vector<uint32_t> pod_units, shapes;
  for (const PendingUnit& entry : pending_.units()) {
    bool admitted = false;
    for (size_t p = 0; p < fleet_.pool_count() && !admitted; ++p)
      admitted = node_pool_of_[p] >= 0 && placement_.pool_admits(entry.shape, p);
    if (!admitted) continue;
    const Units::Unit& unit = units_.unit(entry.unit);
    for (uint32_t q = unit.first_pod; q < unit.first_pod + unit.pod_count; ++q) {
      pods.push_back(&units_.pod(q));
      pod_units.push_back(entry.unit);
      shapes.push_back(entry.shape);
    }
  }
  if (pods.empty()) return units;
  const std::vector<uint8_t> fits = placement_.fits_ready_nodes(pods);
  std::vector<int32_t> flying(fleet_.pool_count(), 0);
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (node_pool_of_[fleet_.pool_of(n)] >= 0 && in_flight(n)) ++flying[fleet_.pool_of(n)];
  std::vector<TemplateNodes> bins;
  bins.reserve(fleet_.pool_count());
  for (size_t p = 0; p < fleet_.pool_count(); ++p) bins.emplace_back(fleet_.template_nodes()[p], fleet_.template_daemon_pods(p), fleet_.dra_catalog());
  for (size_t i = 0; i < pods.size(); ++i) {
    if (fits[i]) continue;
    bool helped = false;
    for (size_t p = 0; p < fleet_.pool_count() && !helped; ++p)
      if (flying[p] > 0 && placement_.pool_admits(shapes[i], p)) helped = bins[p].add_first_fit(*pods[i], flying[p]);
    if (!helped && (units.empty() || units.back() != pod_units[i])) units.push_back(pod_units[i]);
  }
  return units;
}

void KarpenterProvisioner::on_tick(double t) {
  if (t + cluster_.karpenter.batch_idle_s <= loop_.horizon_s()) loop_.schedule(t + cluster_.karpenter.batch_idle_s, tick_);
  const std::vector<uint32_t> units = needing_nodes(t);
  if (units.empty()) {
    batch_open_ = false;
    return;
  }
  if (!batch_open_) {
    batch_open_ = true;
    batch_opened_s_ = t;
    batch_grew_s_ = t;
    batch_pods_ = units.size();
    return;
  }
  if (units.size() > batch_pods_) batch_grew_s_ = t;
  batch_pods_ = units.size();
  if (t - batch_grew_s_ < cluster_.karpenter.batch_idle_s && t - batch_opened_s_ < cluster_.karpenter.batch_max_s) return;
  batch_open_ = false;
  provision(t, units);
}

void KarpenterProvisioner::provision(double t, const std::vector<uint32_t>& units) {
  const size_t pool_count = fleet_.pool_count();
  std::vector<int32_t> planned(pool_count, 0);
  std::vector<TemplateNodes> bins;
  bins.reserve(pool_count);
  for (size_t p = 0; p < pool_count; ++p) bins.emplace_back(fleet_.template_nodes()[p], fleet_.template_daemon_pods(p), fleet_.dra_catalog());
  std::vector<size_t> opened;  // pools in the order their first new node was opened
  std::vector<int32_t> free_slots(pool_count, 0);  // absent slots (a refused launch holds its slot until known)
  for (size_t p = 0; p < pool_count; ++p)
    for (NodeId n : fleet_.pool_nodes(p)) free_slots[p] += fleet_.phase(n) == NodePhase::kAbsent ? 1 : 0;
  for (uint32_t u : units) {
    const Units::Unit& unit = units_.unit(u);
    std::string reason;
    for (uint32_t q = unit.first_pod; q < unit.first_pod + unit.pod_count; ++q) {
      const Pod& pod = units_.pod(q);
      bool placed = false;
      for (size_t p : opened)
        if (placement_.pool_admits(unit.shape, p) && bins[p].add_first_fit(pod, planned[p])) {
          placed = true;
          break;
        }
      if (placed) continue;
      bool limited = false, unavailable = false, full = false;
      std::string limited_pool, limited_resource, full_pool;
      for (size_t np : node_pool_order_) {
        int best = -1;
        bool best_spot = false;
        double best_price = 0;
        for (size_t p = 0; p < pool_count; ++p) {
          if (node_pool_of_[p] != static_cast<int32_t>(np) || !placement_.pool_admits(unit.shape, p)) continue;
          const SimPool& sp = fleet_.pool(p);
          if (free_slots[p] - planned[p] <= 0) {
            full = true;
            full_pool = cluster_.node_pools[np].name;
            continue;
          }
          if (t < unavailable_until_s_[p]) {
            unavailable = true;
            continue;
          }
          std::string resource;
          if (!within_limits(p, planned, &resource)) {
            limited = true;
            limited_pool = cluster_.node_pools[np].name;
            limited_resource = resource;
            continue;
          }
          const bool spot = sp.settings.capacity_type == CapacityType::kSpot;
          const double price = offering_price(sp);
          if (best < 0 || (spot && !best_spot) || (spot == best_spot && price < best_price)) {
            best = static_cast<int>(p);
            best_spot = spot;
            best_price = price;
          }
        }
        if (best < 0) continue;
        const auto p = static_cast<size_t>(best);
        if (!bins[p].add_first_fit(pod, planned[p] + 1)) continue;  // the pod does not fit this node shape
        if (std::find(opened.begin(), opened.end(), p) == opened.end()) opened.push_back(p);
        ++planned[p];
        placed = true;
        break;
      }
      if (placed) continue;
      if (limited) reason = fmt::format("pool limit reached (NodePool {}: {})", limited_pool, limited_resource);
      else if (unavailable) reason = "no offering available (insufficient capacity)";
      else if (full) reason = fmt::format("max nodes reached (NodePool {})", full_pool);
    }
    pending_.set_provisioning_reason(u, reason);
  }
  for (size_t p : opened) {
    for (int32_t i = 0; i < planned[p]; ++i) {
      NodeId node = sched::kNoNode;
      for (NodeId n : fleet_.pool_nodes(p))
        if (fleet_.phase(n) == NodePhase::kAbsent) {
          node = n;
          break;
        }
      if (node == sched::kNoNode || fleet_.launch(p, 1, t) == 0) break;
      ++launched_;
      const SimPool& sp = fleet_.pool(p);
      claim_of_node_[node] = static_cast<int64_t>(claims_.size());
      claims_.push_back({fleet_.name(node), sp.settings.karpenter_node_pool, sp.pool.name,
                         std::string(capacity_type_name(sp.settings.capacity_type)), t, -1, -1});
    }
  }
}

}  // namespace gpufleet::sim
