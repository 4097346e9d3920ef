// Reader for the fault schedule of `gpufleet simulate` and `compare` (inputs/sim/faults.h): one document
//
//   apiVersion: sim.gpufleet.io/v1
//   kind: FaultSchedule
//   seed: 7                            # optional; default: derived from the run's --seed
//   faults:                            # node failures, XIDs, device-plugin failures, spot notices
//     - kind: xid                      # node-failure | xid | device-plugin-failure | spot-interruption
//       node: h100-0                   # exactly one of node (<pool>-<index>), pool, zone
//       at: 0                          # seconds from the start; or rate: {perNodeHour, from, to}
//       xid: {code: 94, gpu: 3}        # xid only; gpu optional (default: one drawn)
//       recoverAfterSeconds: 3600      # optional; default: never
//   capacityOutages: [{pool, zone, capacityType, from, to}]
//   limitChanges: [{at, nodePool, limits: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 8}}]
//   driverUpgrades: [{pool, at, maxUnavailable: 25%, upgradeSeconds: 600, drainTimeoutSeconds: 300}]
//
// in the pools file (beside the NodePoolSet and Autoscaling documents; readers/sim/sim_pools.h reads it) or
// in a file of its own (`--faults FILE`). Every key, default and source: docs/faults.md.
//
// Errors throw InputError with file, line, column and field: unknown keys or kinds, a fault on a
// node, pool or zone the pools do not have (the message lists the pools or zones), an XID outside
// model/xid.h's catalog (the message lists the known codes), a GPU index outside the node's GPUs,
// a spot interruption on a pool that is not spot, both or neither of at and rate, negative or
// non-numeric times, a rate above kMaxFaultsPerNodeHour, an outage or rate window that ends before
// it starts, an unknown capacity type, an unknown resource in limits (known: cpu, memory,
// nvidia.com/gpu) or a negative quantity, a driver upgrade of an unknown pool, a second
// FaultSchedule document in a file, more entries than FaultScheduleLimits allows
// (readers/formats/input_limits.h). Times beyond the horizon are accepted (they never happen).
//
// NodePool names in limitChanges are checked against the run's Karpenter NodePools when the caller
// gives them (`node_pools`; readers/karpenter/karpenter_nodepool.h reads them first).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "inputs/sim/faults.h"

namespace gpufleet::io {

/// The highest fault rate, per node-hour: one a minute, as inputs/sim/cluster_config.h's spot interruption rate.
inline constexpr double kMaxFaultsPerNodeHour = 60;

/// The kind of the document.
inline constexpr const char* kFaultScheduleKind = "FaultSchedule";

/// Reads the FaultSchedule document of `text` for `pools`; `source_name` names it in errors.
/// standalone (a `--faults` file): every document must be a FaultSchedule and there must be one;
/// otherwise (a pools file) other documents are skipped and none gives nullopt. `node_pools`: the
/// names of the run's Karpenter NodePools, which limitChanges[i].nodePool must be one of (nullptr:
/// not checked). Throws InputError.
std::optional<sim::FaultSchedule> parse_fault_schedule_text(std::string_view text, const std::string& source_name,
                                                            const std::vector<sim::SimPool>& pools, bool standalone,
                                                            const std::vector<std::string>* node_pools = nullptr);

/// Reads a `--faults` file (standalone). Throws InputError.
sim::FaultSchedule read_fault_schedule_file(const std::string& path, const std::vector<sim::SimPool>& pools,
                                            const std::vector<std::string>* node_pools = nullptr);

/// The names of the Karpenter NodePools of a cluster (ClusterConfig::node_pools), for the check above.
std::vector<std::string> node_pool_names(const sim::ClusterConfig& cluster);

}  // namespace gpufleet::io
