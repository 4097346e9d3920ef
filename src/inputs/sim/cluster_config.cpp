#include "inputs/sim/cluster_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {
namespace {

[[noreturn]] void invalid(const SimPool& p, const std::string& what) {
  throw std::invalid_argument(fmt::format("pool {}: {}", p.pool.name, what));
}

bool bad_time(double s) { return !std::isfinite(s) || s < 0; }

}  // namespace

std::string_view capacity_type_name(CapacityType type) {
  return type == CapacityType::kSpot ? "spot" : "on-demand";
}

std::string_view expander_name(Expander expander) {
  return expander == Expander::kPrice ? "price" : "least-waste";
}

void validate_pool_settings(const SimPool& p) {
  const PoolSettings& s = p.settings;
  if (bad_time(s.provision_s)) invalid(p, fmt::format("provision time {} s is negative or not finite", s.provision_s));
  if (s.reserved_nodes < 0 || s.reserved_nodes > p.pool.max_nodes)
    invalid(p, fmt::format("reserved nodes {} outside [0, max] = [0, {}]", s.reserved_nodes, p.pool.max_nodes));
  if (s.reserved_nodes > 0 && !p.pool.reserved_usd_per_hour) invalid(p, "reserved nodes need prices.reserved");
  if (s.reserved_nodes > 0 && s.capacity_type == CapacityType::kSpot) invalid(p, "a spot pool cannot hold reserved nodes");
  if (s.capacity_type == CapacityType::kSpot && !p.pool.spot_usd_per_hour) invalid(p, "a spot pool needs prices.spot");
  if (bad_time(s.spot_interruptions_per_hour))
    invalid(p, fmt::format("spot interruption rate {} is negative or not finite", s.spot_interruptions_per_hour));
  if (s.spot_interruptions_per_hour > kMaxSpotInterruptionsPerNodeHour)
    invalid(p, fmt::format("spot interruption rate {} is above the maximum of {:g} per node-hour", s.spot_interruptions_per_hour,
                           kMaxSpotInterruptionsPerNodeHour));
  if (bad_time(s.spot_notice_s)) invalid(p, fmt::format("spot notice {} s is negative or not finite", s.spot_notice_s));
  if (bad_time(s.gpu_advertise_delay_s))
    invalid(p, fmt::format("GPU advertise delay {} s is negative or not finite", s.gpu_advertise_delay_s));
}

void validate_autoscaler_settings(const AutoscalerSettings& s) {
  if (!std::isfinite(s.scan_interval_s) || s.scan_interval_s <= 0)
    throw std::invalid_argument(fmt::format("autoscaler scan interval {} s must be positive", s.scan_interval_s));
  if (s.scan_interval_s < kMinTickIntervalSeconds)
    throw std::invalid_argument(fmt::format("autoscaler scan interval {} s is below the minimum of {:g} s", s.scan_interval_s,
                                            kMinTickIntervalSeconds));
  for (double v : {s.scale_up_delay_s, s.scale_down_unneeded_s, s.scale_down_delay_after_add_s, s.unremovable_recheck_s,
                   s.initial_backoff_s, s.max_backoff_s, s.backoff_reset_s, s.launch_failure_s})
    if (bad_time(v)) throw std::invalid_argument(fmt::format("autoscaler delay {} s is negative or not finite", v));
  if (!std::isfinite(s.max_node_provision_s) || s.max_node_provision_s <= 0)
    throw std::invalid_argument(fmt::format("max node provision time {} s must be positive", s.max_node_provision_s));
  if (s.max_backoff_s < s.initial_backoff_s)
    throw std::invalid_argument(fmt::format("max backoff {} s is below the initial backoff {} s", s.max_backoff_s, s.initial_backoff_s));
  if (!(s.utilization_threshold >= 0 && s.utilization_threshold <= 1))
    throw std::invalid_argument(fmt::format("utilization threshold {} is outside [0, 1]", s.utilization_threshold));
}

int32_t allowed_disruptions(const KarpenterNodePool& np, int32_t nodes, KarpenterDisruptionReason reason) {
  if (np.budgets.empty()) return scaled_value_round_up(IntOrPercent{10, true}, nodes);
  int32_t allowed = std::numeric_limits<int32_t>::max();
  for (const KarpenterDisruptionBudget& b : np.budgets)
    if (b.reasons.empty() || std::find(b.reasons.begin(), b.reasons.end(), reason) != b.reasons.end())
      allowed = std::min(allowed, scaled_value_round_up(b.nodes, nodes));
  return allowed;
}

void validate_consolidation_settings(const ConsolidationSettings& s) {
  if (!(s.threshold >= 0 && s.threshold <= 1))
    throw std::invalid_argument(fmt::format("consolidation threshold {} is outside [0, 1]", s.threshold));
  if (!std::isfinite(s.interval_s) || s.interval_s <= 0)
    throw std::invalid_argument(fmt::format("consolidation interval {} s must be positive", s.interval_s));
  if (s.interval_s < kMinTickIntervalSeconds)
    throw std::invalid_argument(fmt::format("consolidation interval {} s is below the minimum of {:g} s", s.interval_s,
                                            kMinTickIntervalSeconds));
  if (bad_time(s.consolidate_after_s))
    throw std::invalid_argument(fmt::format("consolidate-after {} s is negative or not finite", s.consolidate_after_s));
}

std::vector<ResourceSlice> pool_node_slices(const SimPool& pool, const std::string& node_name) {
  std::vector<ResourceSlice> out = pool.settings.resource_slices;
  for (ResourceSlice& s : out) {
    s.name += "-" + node_name;
    s.written_pool = s.pool;
    s.pool += "-" + node_name;
    s.node_name = node_name;
  }
  return out;
}

std::shared_ptr<const DraCatalog> fleet_dra_catalog(const ClusterConfig& cluster, const std::vector<std::string>* template_names) {
  bool any = !cluster.dra.empty();
  for (const SimPool& p : cluster.pools) any |= !p.settings.resource_slices.empty();
  if (!any) return nullptr;
  auto catalog = std::make_shared<DraCatalog>(cluster.dra);
  for (size_t p = 0; p < cluster.pools.size(); ++p) {
    const SimPool& sp = cluster.pools[p];
    if (sp.settings.resource_slices.empty()) continue;
    for (int32_t i = 0; i < sp.pool.max_nodes; ++i)
      for (ResourceSlice& s : pool_node_slices(sp, pool_node_name(sp.pool.name, i, sp.pool.max_nodes)))
        catalog->slices.push_back(std::move(s));
    if (template_names != nullptr)
      for (ResourceSlice& s : pool_node_slices(sp, (*template_names)[p])) catalog->slices.push_back(std::move(s));
  }
  return catalog;
}

}  // namespace gpufleet::sim
