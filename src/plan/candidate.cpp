#include "plan/candidate.h"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>


namespace gpufleet::plan {

namespace {

constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";  // well-known label (kubernetes.io docs)

NodePool node_pool(const CostBoundOption& o, const std::string& name, int32_t nodes, int32_t min_nodes, int32_t max_nodes) {
  NodePool p;
  p.name = name;
  p.instance_type = o.instance_type;
  p.gpu_model = o.gpu_model;
  p.gpus_per_node = o.gpus;
  p.cpu_milli = o.cpu_milli;
  p.memory_bytes = o.memory_bytes;
  p.node_count = nodes;
  p.min_nodes = min_nodes;
  p.max_nodes = max_nodes;
  if (!o.zone.empty()) p.labels.emplace_back(kZoneLabel, o.zone);
  p.on_demand_usd_per_hour = o.on_demand_usd_per_hour;
  return p;
}

}  // namespace

std::string pool_stem(const std::string& instance_type) {
  std::string s;
  for (char c : instance_type) {
    if (c == '.' || c == '_') s += '-';
    else s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string PlanCandidate::label() const {
  std::string s = fmt::format("{} {}", option.instance_type, option.zone);
  if (secondary) s += fmt::format(" + {}", secondary->instance_type);
  if (reserved_nodes > 0) s += fmt::format(", {} {}", reserved_nodes, option.commitment);
  if (spot_pool) s += ", spot";
  s += fmt::format(", scale-down {} s", scale_down_unneeded_s);
  if (scale_up_delay_s != 30) s += fmt::format(", scale-up delay {} s", scale_up_delay_s);
  if (consolidation) s += fmt::format(", consolidation {}", consolidation_threshold);
  s += ", " + policy;
  return s;
}

sim::ClusterConfig candidate_cluster(const PlanCandidate& c) {
  if (c.max_nodes < 1 || c.reserved_nodes < 0 || c.reserved_nodes > c.max_nodes)
    throw std::invalid_argument(fmt::format("candidate {}: reserved nodes {} outside 0..max nodes {}", c.label(), c.reserved_nodes, c.max_nodes));
  if (c.reserved_nodes > 0 && !c.option.committed_usd_per_hour)
    throw std::invalid_argument(fmt::format("candidate {}: reserved nodes without a committed price", c.label()));
  if (c.spot_pool && !c.option.spot_usd_per_hour)
    throw std::invalid_argument(fmt::format("candidate {}: a spot pool without a spot price", c.label()));
  sim::ClusterConfig cluster;
  const std::string stem = pool_stem(c.option.instance_type);
  sim::SimPool od;
  od.pool = node_pool(c.option, stem, c.reserved_nodes, c.reserved_nodes, c.max_nodes);
  if (c.reserved_nodes > 0) od.pool.reserved_usd_per_hour = c.option.committed_usd_per_hour;
  od.settings.provision_s = sim::kProvisionKarpenterS;
  od.settings.reserved_nodes = c.reserved_nodes;
  cluster.pools.push_back(od);
  if (c.spot_pool) {
    sim::SimPool spot;
    spot.pool = node_pool(c.option, stem + "-spot", 0, 0, c.max_nodes);
    spot.pool.spot_usd_per_hour = c.option.spot_usd_per_hour;
    spot.settings.capacity_type = sim::CapacityType::kSpot;
    spot.settings.provision_s = sim::kProvisionKarpenterS;
    spot.settings.spot_interruptions_per_hour = c.spot_interruptions_per_hour;
    cluster.pools.push_back(spot);
  }
  if (c.secondary) {
    if (c.secondary_max_nodes < 1 || pool_stem(c.secondary->instance_type) == stem)
      throw std::invalid_argument(fmt::format("candidate {}: a secondary pool needs its own instance type and max nodes >= 1", c.label()));
    sim::SimPool small;
    small.pool = node_pool(*c.secondary, pool_stem(c.secondary->instance_type), 0, 0, c.secondary_max_nodes);
    small.settings.provision_s = sim::kProvisionKarpenterS;
    cluster.pools.push_back(small);
  }
  cluster.autoscaler.expander = sim::Expander::kPrice;
  cluster.autoscaler.scale_down_unneeded_s = c.scale_down_unneeded_s;
  cluster.autoscaler.scale_down_delay_after_add_s = c.scale_down_unneeded_s;
  cluster.autoscaler.scale_up_delay_s = c.scale_up_delay_s;
  cluster.consolidation.enabled = c.consolidation;
  cluster.consolidation.threshold = c.consolidation_threshold;
  return cluster;
}

sim::ClusterConfig baseline_cluster(const std::vector<CostBoundOption>& options, int32_t max_nodes_per_pool) {
  sim::ClusterConfig cluster;
  for (const CostBoundOption& o : options) {
    std::string name = pool_stem(o.instance_type);
    if (!o.zone.empty()) name += "-" + pool_stem(o.zone);
    sim::SimPool p;
    p.pool = node_pool(o, name, 0, 0, max_nodes_per_pool);
    cluster.pools.push_back(p);
  }
  return cluster;
}

}  // namespace gpufleet::plan
