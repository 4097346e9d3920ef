// Fault and capacity events for `simulate`: what goes wrong with the nodes, the GPUs and the cloud's
// capacity, at given times or at seeded random times. Plain data, no I/O (the reader is
// readers/sim/fault_schedule.h, the file format docs/faults.md); the fault injector
// (sim/controllers/fault_injector.h) and the driver upgrade controller
// (sim/controllers/driver_upgrade.h) carry it out, the fleet and the provisioners consult the capacity
// outages.
//
// Targets. A fault names exactly one of: a node (by its simulated name <pool>-<index>), a pool, or a
// zone (the value of the node label topology.kubernetes.io/zone a pool's nodes carry). A timed fault
// on a pool or zone hits one of its Ready nodes, chosen by the schedule's generator among the Ready
// nodes at that time (none Ready: nothing happens, counted as skipped). A
// rate fault (rate_per_node_hour > 0) hits every Ready node of its target independently, exponential
// times between hits, from the schedule's generator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node_pool.h"
#include "model/resources.h"
#include "model/pod_disruption_budget.h"

namespace gpufleet::sim {

enum class FaultKind {
  /// The node goes NotReady (kubelet stops reporting: hardware or kernel failure). Its pods stop as
  /// on a spot reclaim (jobs keep their last checkpoint); it takes no pods until it recovers
  /// recover_after_s later (< 0: never; it stays billed until the autoscaler or the horizon removes it).
  kNodeFailure,
  /// A GPU reports an XID error (model/xid.h gives the effect per code from NVIDIA's XID catalog):
  /// application-level codes restart the pods on that GPU and the GPU stays; device-level codes take
  /// the GPU out of allocatable until the node is reset (recover_after_s later; < 0: until drained
  /// and removed).
  kXid,
  /// The NVIDIA device plugin stops advertising the node's GPUs: the node stays Ready, its GPU
  /// allocatable is 0 (pods already bound keep running) until recover_after_s later (< 0: never).
  kDevicePluginFailure,
  /// A spot interruption notice now (the node is reclaimed spot_notice_s later), whatever the pool's
  /// random interruption rate. Spot nodes only.
  kSpotInterruption,
};

/// "node-failure", "xid", "device-plugin-failure", "spot-interruption".
const char* fault_kind_name(FaultKind kind);

/// What a fault hits: exactly one field is non-empty.
struct FaultTarget {
  std::string node;  ///< a simulated node name, <pool>-<index>
  std::string pool;  ///< a pool name (one Ready node of it, or each at a rate)
  std::string zone;  ///< a zone (topology.kubernetes.io/zone of a pool's nodes)
};

/// One fault: at a fixed time, or at a seeded rate over [from_s, to_s].
struct Fault {
  FaultKind kind = FaultKind::kNodeFailure;
  FaultTarget target;
  /// Fixed time, seconds from the start (>= 0); < 0 when rate_per_node_hour is used.
  double at_s = -1;
  /// Random faults per node-hour of each Ready node of the target (> 0), instead of at_s.
  double rate_per_node_hour = 0;
  double from_s = 0;   ///< rate faults: window start
  double to_s = -1;    ///< rate faults: window end (< 0: the horizon)
  /// kXid: the XID code (must be in model/xid.h's catalog) and the GPU index on the node (-1: one
  /// drawn by the generator).
  int32_t xid = 0;
  int32_t gpu = -1;
  /// kNodeFailure, kDevicePluginFailure, device-level kXid: seconds until the node / plugin / GPU is
  /// back; < 0 never.
  double recover_after_s = -1;
};

/// A window in which launches fail for lack of capacity (EC2's InsufficientInstanceCapacity). Empty
/// pool, zone or capacity type match every value.
struct CapacityOutage {
  std::string pool;           ///< a pool name (a Karpenter NodePool offering's pool included)
  std::string zone;           ///< topology.kubernetes.io/zone
  std::string capacity_type;  ///< "spot" or "on-demand"
  double from_s = 0;          ///< launches at t in [from_s, to_s) fail
  double to_s = 0;
};

/// A change of a Karpenter NodePool's spec.limits at a time (a user raising or lowering them).
struct LimitChange {
  double at_s = 0;
  std::string node_pool;
  /// Resource name ("cpu", "memory", "nvidia.com/gpu") -> new limit in the unit of
  /// model/resources.h (milli-cores, bytes, GPUs); names absent keep their limit.
  std::vector<std::pair<std::string, int64_t>> limits;
};

/// A rolling driver upgrade of one pool, as the NVIDIA GPU Operator's upgrade controller does it:
/// nodes in batches of at most max_unavailable at a time are cordoned, drained (evictions respect
/// PodDisruptionBudgets, up to drain_timeout_s, then the pods are deleted), upgraded for upgrade_s,
/// and made schedulable again. Defaults: ClusterPolicy driver.upgradePolicy (maxUnavailable 25%,
/// maxParallelUpgrades 1, drain.timeoutSeconds 300); upgrade_s is gpufleet's choice (driver pod
/// restart and reload). Semantics: sim/controllers/driver_upgrade.h.
struct DriverUpgrade {
  std::string pool;
  double at_s = 0;
  /// Nodes of the pool unavailable (cordoned or NotReady, for any reason) at once: a count >= 0 or a
  /// percentage 0..100 of the pool's nodes, rounded up (NVIDIA/k8s-operator-libs: intstr
  /// GetScaledValueFromIntOrPercent(maxUnavailable, totalNodes, true)).
  IntOrPercent max_unavailable{25, true};
  /// Nodes upgrading at once, >= 0; 0 = no limit but max_unavailable (upgradePolicy
  /// maxParallelUpgrades, default 1).
  int32_t max_parallel_upgrades = 1;
  double upgrade_s = 600;          ///< seconds a drained node stays out for the upgrade, >= 0
  double drain_timeout_s = 300;    ///< seconds evictions are retried before the pods are deleted, >= 0
};

/// Everything of a run's faults. Empty = none (the run is as without a schedule).
struct FaultSchedule {
  /// Seeds the schedule's generator (random targets, rate times, GPU indices); nullopt: derived from
  /// the run's seed.
  std::optional<uint64_t> seed;
  std::vector<Fault> faults;
  std::vector<CapacityOutage> outages;
  std::vector<LimitChange> limit_changes;
  std::vector<DriverUpgrade> upgrades;
  bool empty() const { return faults.empty() && outages.empty() && limit_changes.empty() && upgrades.empty(); }
};

/// The label that names a node's zone: topology.kubernetes.io/zone.
inline constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";

/// The zone of node `index` of `pool` (its labels or topology domains, as the fleet labels it;
/// model/node_pool.h set_topology_labels), "" when it has none.
std::string node_zone(const NodePool& pool, int32_t index);

/// Whether a launch in `pool` (its zone and capacity type) at t falls in an outage window.
bool launch_blocked(const FaultSchedule& schedule, const std::string& pool, const std::string& zone,
                    const std::string& capacity_type, double t);

}  // namespace gpufleet::sim
