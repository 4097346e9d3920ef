#include "plan/candidate.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "model/resources.h"

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

std::string mig_pool_name(const std::string& instance_type) { return pool_stem(instance_type) + "-mig"; }

std::string PlanCandidate::label() const {
  std::string s;
  for (const PoolChoice& p : pools) {
    if (!s.empty()) s += " + ";
    s += fmt::format("{} {}", p.option.instance_type, p.option.zone);
    std::string extra;
    if (!p.mig_devices.empty()) {
      extra = "MIG";
      bool first = true;
      for (const auto& [profile, count] : p.mig_devices) {
        extra += fmt::format("{}{} x{}", first ? " " : ", ", profile, count);
        first = false;
      }
    }
    if (p.reserved_nodes > 0) extra += extra.empty() ? "" : ", ";
    if (p.reserved_nodes > 0) extra += fmt::format("{} {}", p.reserved_nodes, p.option.commitment);
    if (p.spot) extra += extra.empty() ? "spot" : ", spot";
    if (p.option.gpus == 0) extra += extra.empty() ? "pods without GPUs" : ", pods without GPUs";
    if (!extra.empty()) s += " (" + extra + ")";
  }
  s += fmt::format(", scale-down {} s", scale_down_unneeded_s);
  if (scale_up_delay_s != 0) s += fmt::format(", scale-up delay {} s", scale_up_delay_s);
  if (consolidation) s += fmt::format(", consolidation {}", consolidation_threshold);
  s += ", " + policy;
  return s;
}

int32_t PlanCandidate::max_nodes() const {
  int32_t n = 0;
  for (const PoolChoice& p : pools) n += p.max_nodes * (p.spot ? 2 : 1);
  return n;
}

int32_t PlanCandidate::reserved_nodes() const {
  int32_t n = 0;
  for (const PoolChoice& p : pools) n += p.reserved_nodes;
  return n;
}

bool PlanCandidate::dedicated_gpu_nodes() const {
  return std::any_of(pools.begin(), pools.end(), [](const PoolChoice& p) { return p.option.gpus == 0; }) &&
         std::any_of(pools.begin(), pools.end(), [](const PoolChoice& p) { return p.option.gpus > 0; });
}

Taint dedicated_gpu_taint() { return Taint{std::string(kGpuResource), "", "NoSchedule"}; }

bool PlanCandidate::any_spot() const {
  for (const PoolChoice& p : pools)
    if (p.spot) return true;
  return false;
}

sim::ClusterConfig candidate_cluster(const PlanCandidate& c) {
  if (c.pools.empty()) throw std::invalid_argument("a candidate without pools");
  sim::ClusterConfig cluster;
  const bool dedicated = c.dedicated_gpu_nodes();
  cluster.extended_resource_toleration = dedicated;
  std::set<std::string> stems;
  for (const PoolChoice& p : c.pools) {
    const bool mig = !p.mig_devices.empty();
    const std::string stem = mig ? mig_pool_name(p.option.instance_type) : pool_stem(p.option.instance_type);
    if (!stems.insert(stem).second || (p.spot && !stems.insert(stem + "-spot").second))
      throw std::invalid_argument(fmt::format("candidate {}: instance type {} twice", c.label(), p.option.instance_type));
    if (p.max_nodes < 1 || p.reserved_nodes < 0 || p.reserved_nodes > p.max_nodes)
      throw std::invalid_argument(
          fmt::format("candidate {}: reserved nodes {} outside 0..max nodes {}", c.label(), p.reserved_nodes, p.max_nodes));
    if (p.reserved_nodes > 0 && !p.option.committed_usd_per_hour)
      throw std::invalid_argument(fmt::format("candidate {}: reserved nodes without a committed price", c.label()));
    if (p.spot && !p.option.spot_usd_per_hour)
      throw std::invalid_argument(fmt::format("candidate {}: a spot pool without a spot price", c.label()));
    if (mig) {
      const GpuModelInfo* model = find_gpu_model(p.option.gpu_model);
      if (p.option.gpus < 1 || model == nullptr || !layout_for_counts(*model, p.mig_devices))
        throw std::invalid_argument(fmt::format("candidate {}: the MIG layout does not fit one {} GPU of {}", c.label(),
                                                p.option.gpu_model, p.option.instance_type));
    }
    // A MIG pool: its layout and the label that names its mig-parted config (the same for its spot pool).
    auto set_mig = [&](NodePool& pool) {
      if (!mig) return;
      pool.mig_devices = p.mig_devices;
      pool.labels.emplace_back(kMigConfigLabel, stem);
    };
    sim::SimPool od;
    od.pool = node_pool(p.option, stem, p.reserved_nodes, p.reserved_nodes, p.max_nodes);
    set_mig(od.pool);
    if (dedicated && p.option.gpus > 0 && !mig) od.pool.taints.push_back(dedicated_gpu_taint());
    if (p.reserved_nodes > 0) od.pool.reserved_usd_per_hour = p.option.committed_usd_per_hour;
    od.settings.provision_s = sim::kProvisionKarpenterS;
    od.settings.reserved_nodes = p.reserved_nodes;
    cluster.pools.push_back(od);
    if (p.spot) {
      sim::SimPool spot;
      spot.pool = node_pool(p.option, stem + "-spot", 0, 0, p.max_nodes);
      set_mig(spot.pool);
      if (dedicated && p.option.gpus > 0 && !mig) spot.pool.taints.push_back(dedicated_gpu_taint());
      spot.pool.spot_usd_per_hour = p.option.spot_usd_per_hour;
      spot.settings.capacity_type = sim::CapacityType::kSpot;
      spot.settings.provision_s = sim::kProvisionKarpenterS;
      spot.settings.spot_interruptions_per_hour = p.option.spot_interruptions_per_hour;
      cluster.pools.push_back(spot);
    }
  }
  cluster.autoscaler.expander = sim::Expander::kPrice;
  cluster.autoscaler.scale_down_unneeded_s = c.scale_down_unneeded_s;
  cluster.autoscaler.scale_down_delay_after_add_s = c.scale_down_unneeded_s;
  cluster.autoscaler.scale_up_delay_s = c.scale_up_delay_s;
  cluster.consolidation.enabled = c.consolidation;
  cluster.consolidation.threshold = c.consolidation_threshold;
  return cluster;
}

sim::ClusterConfig baseline_cluster(const std::vector<CostBoundOption>& options, int32_t max_nodes_per_pool,
                                    const std::vector<PoolChoice>& mig_pools) {
  sim::ClusterConfig cluster;
  for (const CostBoundOption& o : options) {
    std::string name = pool_stem(o.instance_type);
    if (!o.zone.empty()) name += "-" + pool_stem(o.zone);
    sim::SimPool p;
    p.pool = node_pool(o, name, 0, 0, max_nodes_per_pool);
    cluster.pools.push_back(p);
  }
  for (const PoolChoice& m : mig_pools) {
    if (m.mig_devices.empty()) continue;
    sim::SimPool p;
    p.pool = node_pool(m.option, mig_pool_name(m.option.instance_type), 0, 0, max_nodes_per_pool);
    p.pool.mig_devices = m.mig_devices;
    p.pool.labels.emplace_back(kMigConfigLabel, p.pool.name);
    cluster.pools.push_back(p);
  }
  cluster.autoscaler.scale_up_delay_s = 0;  // CA's --new-pod-scale-up-delay default
  return cluster;
}

}  // namespace gpufleet::plan
