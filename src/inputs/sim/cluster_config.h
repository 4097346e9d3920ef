// Simulation configuration: node pools with their autoscaling and capacity settings, and the
// cluster autoscaler's parameters. Plain data, no I/O (the reader is readers/sim/sim_pools.h; the file
// format is in docs/simulate.md).
//
// Defaults and their sources (Cluster Autoscaler kubernetes/autoscaler cluster-autoscaler/config/
// flags/flags.go and FAQ.md; Karpenter kubernetes-sigs/karpenter docs "Disruption"; the AWS EC2
// documentation "Spot Instance interruption notices" for the spot notice):
//   scan_interval_s                 10   --scan-interval
//   scale_up_delay_s                30   gpufleet's choice (a pod must stay unschedulable this long;
//                                        CA's --new-pod-scale-up-delay defaults to 0, see docs/simulate.md)
//   provision_s                    180   gpufleet's choice for a Cluster Autoscaler node group; 60 for
//                                        a Karpenter-like pool (kProvisionKarpenterS)
//   scale_down_unneeded_s          600   --scale-down-unneeded-time 10m
//   scale_down_delay_after_add_s   600   --scale-down-delay-after-add 10m
//   unremovable_recheck_s          300   --unremovable-node-recheck-timeout 5m
//   utilization_threshold          0.5   --scale-down-utilization-threshold and
//                                        --scale-down-gpu-utilization-threshold
//   expander                least-waste  --expander (current flags.go default)
//   spot notice_s                  120   AWS Spot interruption warning, 2 minutes
//   max_node_provision_s           900   --max-node-provision-time 15m
//   initial_backoff_s              300   clusterstate InitialNodeGroupBackoffDuration 5m
//   max_backoff_s                 1800   clusterstate MaxNodeGroupBackoffDuration 30m
//   backoff_reset_s              10800   clusterstate NodeGroupBackoffResetTimeout 3h
//   launch_failure_s                60   gpufleet's choice (AWS early abort, kubernetes/autoscaler#4489)
//   gpu_advertise_delay_s            0   gpufleet's choice (GPUs advertised when the node is Ready)
// Consolidation (section 4; kubernetes-sigs/karpenter pkg/controllers/disruption):
//   enabled                      false   off unless the Autoscaling document turns it on
//   threshold                      0.4   gpufleet's choice: nodes below 40% of their GPUs requested
//   interval_s                      10   Karpenter's disruption controller pollingPeriod (10 s)
//   consolidate_after_s              0   NodePool spec.disruption.consolidateAfter default 0s
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/daemon_set.h"
#include "model/dra.h"
#include "model/node_pool.h"
#include "model/pod_disruption_budget.h"
#include "inputs/sim/faults.h"
#include "inputs/sim/field_origin.h"

namespace gpufleet::sim {

inline constexpr double kProvisionClusterAutoscalerS = 180;  ///< gpufleet's choice: CA node group
inline constexpr double kProvisionKarpenterS = 60;           ///< gpufleet's choice: Karpenter-like pool
inline constexpr double kSpotNoticeS = 120;                  ///< AWS Spot: 2-minute warning

/// How the nodes of a pool beyond its reserved commitment are bought.
enum class CapacityType { kOnDemand, kSpot };

/// "on-demand" or "spot".
std::string_view capacity_type_name(CapacityType type);

/// A pool's simulation settings (everything the node-pool file does not say).
struct PoolSettings {
  CapacityType capacity_type = CapacityType::kOnDemand;
  /// Seconds from a node's request (launch) to Ready. >= 0.
  double provision_s = kProvisionClusterAutoscalerS;
  /// Nodes covered by a reservation (reserved instances / committed use), paid every hour of the
  /// horizon at the pool's reserved price whether they run or not. 0..max_nodes; needs a reserved
  /// price; only for on-demand pools.
  int32_t reserved_nodes = 0;
  /// Spot pools: expected interruptions per node-hour (exponential time to interruption). >= 0.
  double spot_interruptions_per_hour = 0;
  /// Spot pools: seconds between the interruption notice and the reclaim. >= 0.
  double spot_notice_s = kSpotNoticeS;
  /// Seconds from Ready until the device plugin advertises the node's GPUs (GPU allocatable 0 in
  /// between: the NVIDIA device plugin and driver start after the kubelet; kubernetes/autoscaler
  /// cluster-autoscaler/cloudprovider/aws/README.md "GPU node groups"). >= 0; 0 = at once.
  double gpu_advertise_delay_s = 0;
  /// The Karpenter NodePool (ClusterConfig::node_pools) this pool is one offering of (an instance
  /// type in a zone with a capacity type); empty = a Cluster Autoscaler node group. The Cluster
  /// Autoscaler leaves Karpenter's pools alone; the Karpenter provisioner
  /// (sim/controllers/karpenter_provisioner.h) launches their nodes.
  std::string karpenter_node_pool;
  /// Dynamic Resource Allocation (docs/dra.md): the node-local ResourceSlices every node of the pool
  /// publishes, as read (the pool's template; the settings' `resourceSlices` names them among the
  /// file's slices). Each node, the initial ones and those an autoscaler adds, gets copies
  /// (pool_node_slices). Non-empty: the pool's GPUs are its DRA driver's devices, so its nodes
  /// advertise no nvidia.com/gpu (the device plugin does not run beside the DRA driver); the pool's
  /// `gpu` still gives the GPU model and count its price is split by.
  std::vector<ResourceSlice> resource_slices;
};

/// A node pool as the simulator uses it: the pool-file data plus the settings.
struct SimPool {
  NodePool pool;  ///< node_count = nodes Ready at time 0
  PoolSettings settings;
  /// Where its most nodes were read (`max`, else `nodes`; a Karpenter offering: its NodePool's name),
  /// for the work budget (inputs/sim/work_estimate.h). Empty: built in code.
  FieldOrigin origin;
};

/// Cluster Autoscaler expanders implemented (autoscaling.md section 3).
enum class Expander { kLeastWaste, kPrice };

/// "least-waste" or "price".
std::string_view expander_name(Expander expander);

/// Cluster-wide autoscaler parameters, modelled on Cluster Autoscaler flags (defaults and sources: the
/// top of this file).
struct AutoscalerSettings {
  /// false: no autoscaler at all (as not deploying Cluster Autoscaler); pools keep their initial size.
  bool enabled = true;
  /// false: never remove nodes; CA --scale-down-enabled (default true).
  bool scale_down = true;
  /// Which pool a scale-up grows; CA --expander (least-waste or price).
  Expander expander = Expander::kLeastWaste;
  /// Seconds between autoscaler passes (> 0); CA --scan-interval (10s).
  double scan_interval_s = 10;
  /// Seconds a pod must have been pending before it counts for a scale-up (>= 0); CA
  /// --new-pod-scale-up-delay (CA default 0; 30 here, gpufleet's choice).
  double scale_up_delay_s = 30;
  /// Seconds a node must stay below utilization_threshold before it is removed (>= 0); CA
  /// --scale-down-unneeded-time (10m).
  double scale_down_unneeded_s = 600;
  /// Seconds after a scale-up during which nothing is scaled down (>= 0); CA
  /// --scale-down-delay-after-add (10m).
  double scale_down_delay_after_add_s = 600;
  /// Seconds before a node whose pods could not be moved is considered again (>= 0); CA
  /// --unremovable-node-recheck-timeout (5m).
  double unremovable_recheck_s = 300;
  /// Fraction of a node requested (node_utilization, 0..1) below which it is unneeded; CA
  /// --scale-down-utilization-threshold (CPU/memory nodes, and DRA nodes without a GpuConfig) and
  /// --scale-down-gpu-utilization-threshold (GPU nodes), both 0.5.
  double utilization_threshold = 0.5;
  /// CA --ignore-daemonsets-utilization (default false): the CPU and memory utilization of a node
  /// without GPUs leaves its DaemonSet pods out of the requests and of the allocatable
  /// (simulator/utilization/info.go CalculateUtilizationOfResource). GPU nodes are measured by their
  /// GPUs only, so their DaemonSet pods never count.
  bool ignore_daemon_sets_utilization = false;
  /// Seconds from a node's launch until it must be Ready with its GPUs advertised; a node not there
  /// by then is given up: removed, and its node group's scale-up counts as failed (backoff). CA
  /// --max-node-provision-time (15m). > 0.
  double max_node_provision_s = 900;
  /// Backoff of a node group after a failed scale-up (a launch the cloud refused, or a node given up
  /// at max_node_provision_s): no scale-up of the group for initial_backoff_s, doubled at each
  /// further failure up to max_backoff_s, back to initial_backoff_s after backoff_reset_s without a
  /// failure. CA's exponential backoff (kubernetes/autoscaler cluster-autoscaler/utils/backoff/
  /// exponential_backoff.go; clusterstate InitialNodeGroupBackoffDuration 5m,
  /// MaxNodeGroupBackoffDuration 30m, NodeGroupBackoffResetTimeout 3h). >= 0.
  double initial_backoff_s = 300;
  double max_backoff_s = 1800;
  double backoff_reset_s = 10800;
  /// Seconds from a launch the cloud refuses (a capacity outage, inputs/sim/faults.h) until the Cluster
  /// Autoscaler knows it failed: the AWS provider polls the Auto Scaling group's scaling activities
  /// and aborts early on a "Failed" one (kubernetes/autoscaler#4489) instead of waiting
  /// max_node_provision_s. 60 is gpufleet's choice (the activity fails within about a minute; the
  /// next scan sees it). >= 0.
  double launch_failure_s = 60;
};

/// Karpenter's provisioner (sim/controllers/karpenter_provisioner.h): batching, the
/// unavailable-offerings cache and how fast a refused launch is known.
struct KarpenterSettings {
  /// A batch of pending pods closes when no new pod came for batch_idle_s, or batch_max_s after it
  /// opened (kubernetes-sigs/karpenter settings BATCH_IDLE_DURATION 1s, BATCH_MAX_DURATION 10s).
  double batch_idle_s = 1;
  double batch_max_s = 10;
  /// An offering whose launch failed for lack of capacity is skipped this long
  /// (aws/karpenter-provider-aws pkg/cache/cache.go UnavailableOfferingsTTL = 3 * time.Minute).
  double unavailable_offerings_ttl_s = 180;
  /// Seconds from a refused launch until Karpenter knows: EC2 CreateFleet returns the
  /// InsufficientInstanceCapacity error in its response, so the NodeClaim fails at once; 5 s is
  /// gpufleet's allowance for the call and the NodeClaim's deletion.
  double launch_failure_s = 5;
};

/// Why Karpenter disrupts a node (karpenter.sh/v1 DisruptionReason). Drifted is read (a budget may
/// name it) but nothing drifts in the simulation.
enum class KarpenterDisruptionReason { kEmpty, kUnderutilized, kDrifted };

/// One entry of a NodePool's spec.disruption.budgets.
struct KarpenterDisruptionBudget {
  /// nodes: "N" or "N%" (0..100%) of the NodePool's nodes that may be disrupted at once.
  IntOrPercent nodes{10, true};
  /// reasons: the disruption reasons it applies to; empty = all.
  std::vector<KarpenterDisruptionReason> reasons;
  /// Whether it had a schedule (cron) and duration; read, treated as always active.
  bool scheduled = false;
};

/// A Karpenter NodePool as the simulator uses it (karpenter.sh/v1 NodePool; the reader is
/// readers/karpenter/karpenter_nodepool.h, the format docs/karpenter.md). Its offerings are pools of
/// ClusterConfig::pools whose PoolSettings::karpenter_node_pool names it.
struct KarpenterNodePool {
  std::string name;
  /// spec.weight: NodePools with a higher weight are tried first (0..100; default 0).
  int32_t weight = 0;
  /// spec.limits: resource name ("cpu", "memory", "nvidia.com/gpu") -> the most capacity (not
  /// requests) all the NodePool's nodes may have together, in model/resources.h units (milli-cores,
  /// bytes, GPUs). Absent = no limit.
  std::vector<std::pair<std::string, int64_t>> limits;
  /// spec.disruption.consolidationPolicy: true for WhenEmpty (only empty nodes are consolidated),
  /// false for WhenEmptyOrUnderutilized (the default).
  bool consolidate_when_empty_only = false;
  /// spec.disruption.consolidateAfter, seconds (default 0): a node is a consolidation candidate this
  /// long after its last pod change. "Never" = +infinity (no consolidation, not even of empty nodes).
  double consolidate_after_s = 0;
  /// spec.disruption.budgets; none = Karpenter's implicit {nodes: "10%"}. The most restrictive
  /// budget that applies to a disruption's reason wins (allowed_disruptions).
  std::vector<KarpenterDisruptionBudget> budgets;
};

/// How many nodes of a NodePool with `nodes` Ready nodes may be disrupted at once for `reason`:
/// the smallest scaled budget among those whose reasons include it (or list none; INT32_MAX when
/// none does), a percentage rounded up (intstr.GetScaledValueFromIntOrPercent with roundUp = true: 10% of 3 nodes is 1);
/// without budgets the implicit "10%". Source: kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go
/// GetAllowedDisruptionsByReason and Budget.GetAllowedDisruptions. Budgets with a schedule count as
/// always active (gpufleet reads no cron schedule; the fail-safe direction).
int32_t allowed_disruptions(const KarpenterNodePool& node_pool, int32_t nodes, KarpenterDisruptionReason reason);

/// Karpenter-style consolidation (WhenUnderutilized), driven by its own tick; independent of the
/// Cluster Autoscaler settings (sim/simulator.h and docs/simulate.md give the rules).
struct ConsolidationSettings {
  /// Consolidation of the Cluster Autoscaler's pools. The nodes of Karpenter NodePools are
  /// consolidated whenever the cluster has NodePools, by their spec.disruption
  /// (sim/controllers/consolidation.h).
  bool enabled = false;
  /// A ready node is a candidate while its utilization (node_utilization: GPUs requested / GPUs on
  /// a GPU node, its DRA pools' on a node with ResourceSlices) is strictly below this. 0..1.
  double threshold = 0.4;
  /// Seconds between consolidation ticks (the first at 0). > 0.
  double interval_s = 10;
  /// A node is a candidate only this many seconds after a pod was last bound to or removed from
  /// it, or after it became ready (Karpenter's consolidateAfter). >= 0.
  double consolidate_after_s = 0;
};

/// Everything about the cluster a simulation needs.
struct ClusterConfig {
  std::vector<SimPool> pools;
  AutoscalerSettings autoscaler;
  ConsolidationSettings consolidation;
  /// Faults, capacity outages, NodePool limit changes and driver upgrades (inputs/sim/faults.h); empty = none.
  FaultSchedule faults;
  /// DaemonSets (apps/v1) in the pools file: each new Ready node runs their pods (sim/engine/fleet.h).
  /// None asks for GPUs or other devices.
  std::vector<DaemonSet> daemon_sets;
  /// What the readers read but the simulation does not model, one line each (said on stderr).
  std::vector<std::string> warnings;
  /// Karpenter NodePools (empty: none; then no Karpenter provisioner runs).
  std::vector<KarpenterNodePool> node_pools;
  KarpenterSettings karpenter;
  /// kube-apiserver runs the ExtendedResourceToleration admission plugin
  /// (model/extended_resource_toleration.h): every pod that requests nvidia.com/gpu, .../gpu.shared
  /// or a MIG device gets a toleration for the taint of that name, so pools tainted
  /// `nvidia.com/gpu:NoSchedule` take only GPU pods. Default false (upstream's default: the plugin is
  /// off unless --enable-admission-plugins names it).
  bool extended_resource_toleration = false;
  /// Dynamic Resource Allocation objects of the pools file (model/dra.h): DeviceClasses,
  /// ResourceClaimTemplates, shared ResourceClaims, and the ResourceSlices that no pool takes as its
  /// template (slices of nodes named in them, or of node selectors). Empty = none.
  DraCatalog dra;
};

/// The slices node `node_name` of `pool` publishes: a copy of each of PoolSettings::resource_slices
/// with name "<slice>-<node>", pool name "<pool name>-<node>" and nodeName `node_name`, as the Cluster
/// Autoscaler duplicates a node's slices for a template node (kubernetes/autoscaler
/// cluster-autoscaler/simulator/dynamicresources/utils/sanitize.go SanitizedNodeResourceSlices, with
/// the node's name as the suffix: pool names stay unique per driver).
std::vector<ResourceSlice> pool_node_slices(const SimPool& pool, const std::string& node_name);

/// The DRA catalog of a fleet: ClusterConfig::dra plus, for every node of every pool (names
/// pool_node_name(pool, i, max_nodes), i < max_nodes), pool_node_slices; and, when `template_names`
/// is given, for pool p the slices of a node named template_names[p] (the autoscalers' template
/// nodes). nullptr when there is nothing DRA.
std::shared_ptr<const DraCatalog> fleet_dra_catalog(const ClusterConfig& cluster, const std::vector<std::string>* template_names = nullptr);

/// The longest simulated horizon, seconds: 1e8 s (about 3.2 years). The run keeps one time-series row
/// per simulated minute and one autoscaler tick per scan interval, so the horizon bounds its time and
/// memory (1e8 s: about 1.7 million rows). Checked by the simulator and, with positions, the readers.
inline constexpr double kMaxHorizonSeconds = 1e8;

/// The shortest autoscaler scan and consolidation interval, seconds. Each interval is a tick over
/// every node, so 1e-6 s made a day's run last for ever; CA (--scan-interval) and Karpenter poll
/// every 10 s.
inline constexpr double kMinTickIntervalSeconds = 1;

/// The highest spot interruption rate, per node-hour: one event a minute on every node. Far above
/// any spot market (AWS's highest interruption band is "more than 20%" a month); it only catches
/// absurd values that would flood the event queue.
inline constexpr double kMaxSpotInterruptionsPerNodeHour = 60;

/// Checks settings against their pool; throws std::invalid_argument naming the pool and the
/// problem: negative times or rates, a spot interruption rate above kMaxSpotInterruptionsPerNodeHour,
/// reserved_nodes outside [0, max_nodes] or without a reserved price, reserved nodes on a spot pool,
/// a spot pool without a spot price, a negative GPU advertise delay.
void validate_pool_settings(const SimPool& pool);

/// Checks the autoscaler parameters (scan interval at least kMinTickIntervalSeconds, non-negative
/// delays and backoffs, max_backoff_s >= initial_backoff_s, a positive max_node_provision_s,
/// threshold in [0, 1]); throws std::invalid_argument.
void validate_autoscaler_settings(const AutoscalerSettings& settings);

/// Checks the consolidation parameters (threshold in [0, 1], interval at least
/// kMinTickIntervalSeconds, non-negative consolidate-after); throws std::invalid_argument.
void validate_consolidation_settings(const ConsolidationSettings& settings);

}  // namespace gpufleet::sim
