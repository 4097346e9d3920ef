// The plan against the cluster running today (`gpufleet plan --current FILE`, docs/plan.md "Planning
// from the current cluster"). It does not change the plan: it is computed at the end, from the plan's
// cluster (plan/candidate.h candidate_cluster, plus the inference services' pools).
//
// Contract:
//  - group_current: the current nodes (inputs/plan/current_cluster.h) counted per (instance type,
//    zone, capacity type); committed nodes count as on-demand. Nodes without an instance type are in
//    no group: they are named in `unlabelled` and in a warning, never dropped silently. Nodes without
//    a capacity-type label are taken as on-demand, with one warning naming them.
//  - current_diff: one row per (instance type, zone, capacity type) in either side, sorted by instance
//    type, zone, then on-demand before spot. Kinds: "add" (only in the plan), "remove" (only in the
//    current cluster), "keep" (the current node count lies within the plan's [min, max] and the
//    committed nodes are the same), "change" (otherwise).
//  - Units: node counts are nodes; costs are USD per hour. The current cost is each group at its
//    node count: committed nodes at the reserved price (else on-demand), spot nodes at the spot price,
//    the others at on-demand; known only when every entry carries its prices (node-pool files do,
//    Kubernetes Nodes do not). The plan's is its mean: cost over the horizon / horizon hours.
//  - Errors: std::invalid_argument for a negative node count or a horizon <= 0 (the readers refuse
//    bad input before).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/plan/current_cluster.h"
#include "inputs/sim/cluster_config.h"

namespace gpufleet::plan {

/// The current nodes of one (instance type, zone, capacity type).
struct CurrentGroup {
  std::string instance_type;
  std::string zone;                    ///< "" = not labelled
  sim::CapacityType capacity = sim::CapacityType::kOnDemand;
  int32_t nodes = 0;
  int32_t committed = 0;               ///< of them (or beyond them, for reservations not running), committed
};

struct CurrentGroups {
  std::string source;                  ///< the file read
  std::vector<CurrentGroup> groups;    ///< sorted as the diff's rows
  int32_t nodes = 0;                   ///< every node, the unlabelled ones too
  std::vector<std::string> unlabelled; ///< Nodes and pools without an instance type, in file order
  std::optional<double> usd_per_hour;  ///< every node at its price; nullopt when some entry has none
  std::vector<std::string> warnings;   ///< one line each
};

/// Groups the current cluster (see the contract above).
CurrentGroups group_current(const CurrentCluster& cluster);

enum class DiffKind { kAdd, kRemove, kChange, kKeep };

/// "add", "remove", "change", "keep".
std::string_view diff_kind_name(DiffKind kind);

struct DiffRow {
  std::string instance_type, zone;
  sim::CapacityType capacity = sim::CapacityType::kOnDemand;
  DiffKind kind = DiffKind::kKeep;
  int32_t current_nodes = 0, current_committed = 0;  ///< 0 when only in the plan
  bool in_plan = false;
  int32_t plan_min = 0, plan_max = 0, plan_committed = 0;  ///< the plan's pools of this key summed; 0 when not in it
};

struct CurrentDiff {
  CurrentGroups current;
  std::vector<DiffRow> rows;
  std::optional<double> plan_usd_per_hour;  ///< the plan's mean hourly cost
  /// What the plan needs beyond node counts, one sentence each: when its GPU pools are dedicated to
  /// GPU pods (ClusterConfig::extended_resource_toleration), their taint and the admission plugin
  /// (the current nodes' taints and the API server's plugins are not read, so a "keep" row may still
  /// need them).
  std::vector<std::string> notes;
};

/// The diff of the current groups against the plan's cluster, whose pools give instance type,
/// zone (label topology.kubernetes.io/zone), capacity type, min, max and reserved nodes.
/// plan_cost_usd over horizon_s seconds gives the plan's mean hourly cost.
CurrentDiff current_diff(const CurrentGroups& current, const sim::ClusterConfig& plan, double plan_cost_usd, double horizon_s);

}  // namespace gpufleet::plan
