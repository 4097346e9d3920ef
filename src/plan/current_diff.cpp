#include "plan/current_diff.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace gpufleet::plan {

namespace {

constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";  // as plan/candidate.cpp sets it
constexpr size_t kNamesShown = 10;                                // names in one warning, then "and N more"

using Key = std::tuple<std::string, std::string, int>;  // instance type, zone, capacity (on-demand first)

Key key_of(const std::string& instance_type, const std::string& zone, sim::CapacityType capacity) {
  return {instance_type, zone, capacity == sim::CapacityType::kOnDemand ? 0 : 1};
}

std::string names_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) s += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kNamesShown) s += fmt::format(" and {} more", names.size() - kNamesShown);
  return s;
}

// One entry's hourly cost at its node count; nullopt without the price it needs.
std::optional<double> entry_usd_per_hour(const CurrentNodes& e) {
  if (e.nodes == 0 && e.committed == 0) return 0.0;
  if (!e.on_demand_usd_per_hour) return std::nullopt;
  if (e.capacity == sim::CapacityType::kSpot) {
    if (!e.spot_usd_per_hour) return std::nullopt;
    return e.nodes * *e.spot_usd_per_hour;
  }
  const double committed_price = e.reserved_usd_per_hour.value_or(*e.on_demand_usd_per_hour);
  return e.committed * committed_price + std::max(0, e.nodes - e.committed) * *e.on_demand_usd_per_hour;
}

}  // namespace

std::string_view diff_kind_name(DiffKind kind) {
  switch (kind) {
    case DiffKind::kAdd: return "add";
    case DiffKind::kRemove: return "remove";
    case DiffKind::kChange: return "change";
    case DiffKind::kKeep: return "keep";
  }
  return "keep";
}

CurrentGroups group_current(const CurrentCluster& cluster) {
  CurrentGroups out;
  out.source = cluster.source;
  std::map<Key, CurrentGroup> groups;
  std::vector<std::string> no_capacity;
  double usd = 0;
  bool priced = true;
  for (const CurrentNodes& e : cluster.entries) {
    if (e.nodes < 0 || e.committed < 0) throw std::invalid_argument(fmt::format("'{}': a negative node count", e.name));
    out.nodes += e.nodes;
    if (const std::optional<double> c = entry_usd_per_hour(e)) usd += *c;
    else priced = false;
    const std::string what = e.pool ? fmt::format("pool {}", e.name) : e.name;
    if (e.instance_type.empty()) {
      out.unlabelled.push_back(what);
      continue;
    }
    if (!e.capacity_labelled && e.nodes > 0) no_capacity.push_back(what);
    CurrentGroup& g = groups[key_of(e.instance_type, e.zone, e.capacity)];
    g.instance_type = e.instance_type;
    g.zone = e.zone;
    g.capacity = e.capacity;
    g.nodes += e.nodes;
    g.committed += e.committed;
  }
  for (auto& [key, g] : groups) out.groups.push_back(std::move(g));
  if (priced) out.usd_per_hour = usd;
  if (!out.unlabelled.empty())
    out.warnings.push_back(fmt::format("{}: {} without an instance type (label node.kubernetes.io/instance-type, a pool's instanceType) "
                                       "left out of the diff: {}",
                                       cluster.source, out.unlabelled.size() == 1 ? "1 node" : fmt::format("{} nodes", out.unlabelled.size()),
                                       names_list(out.unlabelled)));
  if (!no_capacity.empty())
    out.warnings.push_back(fmt::format("{}: {} without a capacity-type label (karpenter.sh/capacity-type, eks.amazonaws.com/capacityType) "
                                       "taken as on-demand: {}",
                                       cluster.source, no_capacity.size() == 1 ? "1 node" : fmt::format("{} nodes", no_capacity.size()),
                                       names_list(no_capacity)));
  return out;
}

CurrentDiff current_diff(const CurrentGroups& current, const sim::ClusterConfig& plan, double plan_cost_usd, double horizon_s) {
  if (!(horizon_s > 0)) throw std::invalid_argument(fmt::format("the plan's horizon {} s is not > 0", horizon_s));
  std::map<Key, DiffRow> rows;
  for (const CurrentGroup& g : current.groups) {
    DiffRow& r = rows[key_of(g.instance_type, g.zone, g.capacity)];
    r.instance_type = g.instance_type;
    r.zone = g.zone;
    r.capacity = g.capacity;
    r.current_nodes = g.nodes;
    r.current_committed = g.committed;
  }
  std::map<Key, bool> in_current;
  for (const auto& [key, r] : rows) in_current[key] = true;
  for (const sim::SimPool& p : plan.pools) {
    std::string zone;
    for (const auto& [k, v] : p.pool.labels)
      if (k == kZoneLabel) zone = v;
    const Key key = key_of(p.pool.instance_type, zone, p.settings.capacity_type);
    DiffRow& r = rows[key];
    r.instance_type = p.pool.instance_type;
    r.zone = zone;
    r.capacity = p.settings.capacity_type;
    r.in_plan = true;
    r.plan_min += p.pool.min_nodes;
    r.plan_max += p.pool.max_nodes;
    r.plan_committed += p.settings.reserved_nodes;
  }
  CurrentDiff out;
  out.current = current;
  for (auto& [key, r] : rows) {
    const bool was = in_current.count(key) > 0;
    if (!was) r.kind = DiffKind::kAdd;
    else if (!r.in_plan) r.kind = DiffKind::kRemove;
    else if (r.current_nodes >= r.plan_min && r.current_nodes <= r.plan_max && r.current_committed == r.plan_committed) r.kind = DiffKind::kKeep;
    else r.kind = DiffKind::kChange;
    out.rows.push_back(std::move(r));
  }
  out.plan_usd_per_hour = plan_cost_usd / (horizon_s / 3600.0);
  if (plan.extended_resource_toleration) {
    std::string tainted;
    for (const sim::SimPool& p : plan.pools)
      if (!p.pool.taints.empty()) tainted += (tainted.empty() ? "" : ", ") + p.pool.name;
    out.notes.push_back(
        "the plan dedicates its GPU nodes to GPU pods: taint the nodes of " + tainted +
        " nvidia.com/gpu:NoSchedule and run kube-apiserver with --enable-admission-plugins=...,ExtendedResourceToleration "
        "(GKE and EKS do both); the current nodes' taints are not read, so a 'keep' row may still need the taint");
  }
  return out;
}

}  // namespace gpufleet::plan
