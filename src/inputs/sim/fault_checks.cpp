#include "inputs/sim/fault_checks.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/scheduling_constraints.h"
#include "model/xid.h"

namespace gpufleet::sim {
namespace {

std::string pool_names(const std::vector<SimPool>& pools) {
  std::string out;
  for (const SimPool& p : pools) out += (out.empty() ? "" : ", ") + p.pool.name;
  return out;
}

std::vector<std::string> zones(const std::vector<SimPool>& pools) {
  std::vector<std::string> out;
  for (const SimPool& p : pools)
    for (int32_t i = 0; i < p.pool.max_nodes; ++i) {
      std::string z = node_zone(p.pool, i);
      if (!z.empty() && std::find(out.begin(), out.end(), z) == out.end()) out.push_back(std::move(z));
    }
  return out;
}

}  // namespace


std::optional<std::pair<size_t, int32_t>> find_pool_node(const std::vector<SimPool>& pools, const std::string& name) {
  for (size_t p = 0; p < pools.size(); ++p) {
    const NodePool& pool = pools[p].pool;
    if (name.size() <= pool.name.size() + 1 || name.compare(0, pool.name.size(), pool.name) != 0 || name[pool.name.size()] != '-')
      continue;
    const std::string digits = name.substr(pool.name.size() + 1);
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const auto index = static_cast<int32_t>(std::stol(digits));
    if (index < pool.max_nodes && pool_node_name(pool.name, index, pool.max_nodes) == name) return std::pair{p, index};
  }
  return std::nullopt;
}

std::optional<std::string> fault_error(const Fault& f, const std::vector<SimPool>& pools) {
  const FaultTarget& t = f.target;
  const int targets = !t.node.empty() + !t.pool.empty() + !t.zone.empty();
  if (targets != 1) return std::string("node, pool, zone: exactly one of them names the target");
  // The pools the target can hit.
  std::vector<size_t> hit;
  int32_t gpus = 0;
  if (!t.node.empty()) {
    const auto found = find_pool_node(pools, t.node);
    if (!found)
      return fmt::format("node: no node '{}' (nodes are <pool>-<index> below the pool's maxNodes; pools: {})", t.node,
                         pool_names(pools));
    hit.push_back(found->first);
  } else if (!t.pool.empty()) {
    for (size_t p = 0; p < pools.size(); ++p)
      if (pools[p].pool.name == t.pool) hit.push_back(p);
    if (hit.empty()) return fmt::format("pool: no pool '{}' (pools: {})", t.pool, pool_names(pools));
  } else {
    for (size_t p = 0; p < pools.size(); ++p)
      for (int32_t i = 0; i < pools[p].pool.max_nodes; ++i)
        if (node_zone(pools[p].pool, i) == t.zone) {
          hit.push_back(p);
          break;
        }
    if (hit.empty()) {
      std::string known;
      for (const std::string& z : zones(pools)) known += (known.empty() ? "" : ", ") + z;
      return fmt::format("zone: no node is in zone '{}' (zones: {})", t.zone, known.empty() ? "none" : known);
    }
  }
  for (size_t p : hit) gpus = std::max(gpus, pools[p].pool.gpus_per_node);
  if (f.kind == FaultKind::kXid) {
    if (!find_xid(f.xid)) return fmt::format("xid.code: unknown XID {} (known: {})", f.xid, known_xid_codes());
    if (gpus == 0) return std::string("xid: the target has no GPUs");
    if (f.gpu < -1 || f.gpu >= gpus) return fmt::format("xid.gpu: {} is not a GPU of the target (0..{})", f.gpu, gpus - 1);
  }
  if (f.kind == FaultKind::kDevicePluginFailure && gpus == 0) return std::string("kind: the target has no GPUs (no device plugin)");
  if (f.kind == FaultKind::kSpotInterruption &&
      std::none_of(hit.begin(), hit.end(), [&](size_t p) { return pools[p].settings.capacity_type == CapacityType::kSpot; }))
    return std::string("kind: spot-interruption needs a spot pool (capacityType: spot in the Autoscaling document)");
  const bool rate = f.rate_per_node_hour > 0;
  if (!rate && !(std::isfinite(f.at_s) && f.at_s >= 0)) return std::string("at: a time >= 0 (or a rate) is needed");
  if (rate) {
    if (!std::isfinite(f.rate_per_node_hour)) return std::string("rate.perNodeHour: must be finite");
    if (!std::isfinite(f.from_s) || f.from_s < 0) return std::string("rate.from: must be >= 0");
    if (!std::isfinite(f.to_s)) return std::string("rate.to: must be finite");
    if (f.to_s >= 0 && f.to_s < f.from_s) return fmt::format("rate.to: {:g} is before rate.from {:g}", f.to_s, f.from_s);
  }
  if (std::isnan(f.recover_after_s)) return std::string("recoverAfterSeconds: not a number");
  return std::nullopt;
}

double expected_rate_faults(const Fault& f, const std::vector<SimPool>& pools, double horizon_s) {
  if (f.rate_per_node_hour <= 0) return 0;
  const double to = f.to_s < 0 ? horizon_s : std::min(f.to_s, horizon_s);
  if (to <= f.from_s) return 0;
  double nodes = 0;
  if (!f.target.node.empty()) {
    nodes = 1;
  } else {
    for (const SimPool& p : pools)
      for (int32_t i = 0; i < p.pool.max_nodes; ++i)
        if (f.target.pool.empty() ? node_zone(p.pool, i) == f.target.zone : p.pool.name == f.target.pool) nodes += 1;
  }
  return f.rate_per_node_hour * nodes * (to - f.from_s) / 3600.0;
}

}  // namespace gpufleet::sim
