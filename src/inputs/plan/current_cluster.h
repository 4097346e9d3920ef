// The cluster running today, as `gpufleet plan --current FILE` reads it (readers/plan/current_cluster.h):
// one entry per Kubernetes Node, or per pool of a gpufleet node-pool file, with what the plan's diff
// groups by (plan/current_diff.h). Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "inputs/sim/field_origin.h"

namespace gpufleet::plan {

/// A Node (nodes = 1) or a node pool (nodes = its current count) of the current cluster.
struct CurrentNodes {
  std::string name;                 ///< the Node's metadata.name, or the pool's name
  bool pool = false;                ///< read from a NodePoolSet
  int32_t nodes = 1;                ///< >= 0
  /// Nodes bought under a commitment: a pool's reservedNodes (the Autoscaling document,
  /// readers/sim/sim_pools.h; paid whether they run or not, so it may exceed `nodes`), or all its
  /// nodes when labelled as below; a Node whose capacity type is Karpenter's `reserved` or EKS's
  /// CAPACITY_BLOCK: 1. >= 0; 0 for spot.
  int32_t committed = 0;
  std::string instance_type;        ///< node.kubernetes.io/instance-type; "" = not labelled
  std::string zone;                 ///< topology.kubernetes.io/zone; "" = not labelled
  sim::CapacityType capacity = sim::CapacityType::kOnDemand;  ///< committed nodes count as on-demand
  bool capacity_labelled = false;   ///< false: no capacity-type label (nor a pool's capacityType), taken as on-demand
  /// USD per node-hour, as the node-pool file gives them; Kubernetes Nodes carry none (nullopt).
  std::optional<double> on_demand_usd_per_hour, spot_usd_per_hour, reserved_usd_per_hour;
  sim::FieldOrigin origin;          ///< where the name was read (metadata.name, pools[i].name)
};

struct CurrentCluster {
  std::string source;                 ///< the file it was read from
  std::vector<CurrentNodes> entries;  ///< in file order: the Nodes, then the pools
};

}  // namespace gpufleet::plan
