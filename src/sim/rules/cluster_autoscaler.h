// The Cluster Autoscaler's decision rules, as pure functions (the simulator drives them from its
// autoscaler tick; sim/simulator.h). Source: kubernetes/autoscaler cluster-autoscaler (config/flags/
// flags.go, FAQ.md, estimator/binpacking_estimator.go,
// expander/waste/waste.go, simulator/utilization). Differences are listed per function and in
// docs/simulate.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/cluster_state.h"
#include "model/dra_utilization.h"
#include "model/node_pool.h"
#include "model/pod.h"
#include "inputs/sim/cluster_config.h"

namespace gpufleet::sim {

/// A node's utilization as the scale-down rule measures it (cluster-autoscaler
/// simulator/utilization/info.go Calculate), in [0, 1]:
///  1. a node with device-plugin GPUs (gpu_count > 0; CA's GpuConfig, not exposed via DRA): requested
///     GPU milli / GPU capacity, CPU and memory not looked at;
///  2. else, when `dra` is given and the node has node-local ResourceSlices: the highest utilization
///     of its DRA pools (model/dra_utilization.h; CPU and memory not looked at). A pool that cannot be
///     measured (incomplete newest generation) gives 1: CA marks the node unremovable
///     (core/scaledown/eligibility/eligibility.go: a Calculate error is UnexpectedError). CA does this
///     with --enable-dynamic-resource-allocation; simulate's autoscalers always model DRA;
///  3. else max(requested CPU / allocatable CPU, requested memory / allocatable memory).
/// The threshold compared with it: CA takes --scale-down-gpu-utilization-threshold for a node with a
/// GpuConfig and --scale-down-utilization-threshold otherwise, DRA nodes included
/// (eligibility.go isNodeAtOrBelowUtilizationThreshold); simulate has one threshold for both
/// (AutoscalerSettings::utilization_threshold).
/// Requested GPU milli is ClusterState's accounting (gpu_free_milli_total): a whole GPU 1000, a
/// fraction its gpu_milli, a time-sliced replica floor(1000 / replicas), a MIG device
/// floor(1000 x compute slices / 7) (3g.40gb: 428). So a node's MIG devices and replicas count as the
/// slices of the GPUs they hold, as chargeback counts them (sim/rules/cost.h, which uses the exact fractions);
/// a node whose MIG layout leaves compute slices unassigned (2x 3g.40gb: 6 of 7) never reaches 1.
/// `skipped_cpu_milli` and `skipped_memory_bytes`: requests of pods on the node that do not count
/// (CA's skipDaemonSetPods / skipMirrorPods, simulator/utilization/info.go): left out of both the
/// requests and the allocatable of a node without GPUs, (requested - skipped) / (allocatable -
/// skipped), 0 when nothing else is left. GPU and DRA nodes ignore them.
double node_utilization(const ClusterState& state, NodeId n, int64_t skipped_cpu_milli = 0, int64_t skipped_memory_bytes = 0,
                        const DraNodeSlices* dra = nullptr);

/// Empty nodes of one pool that the scale-up estimate packs pods onto, opened one at a time: the
/// nodes a scale-up would add, or the nodes being provisioned. Each is a copy of the pool's template
/// node in a scratch ClusterState (a state per node, as a ClusterState cannot add nodes): its CPU,
/// memory, pod capacity (kKubeletDefaultMaxPods, 110, the kubelet --max-pods default that
/// expand_pool gives every node, model/node_pool.h) and GPUs with their MIG layout, time-slicing and NUMA layout. A pod fits a node when the engine's fit check takes it there:
/// the devices a scheduling cycle would choose (sched::select_devices: the lowest fully free GPUs,
/// the best-fit GPU for a fraction, the time-sliced GPUs with the most free replicas, the lowest free
/// MIG devices of each profile; whole GPUs of one NUMA node on a single-numa-node node,
/// sched/gpu/device_select.h single_numa_node_admits), then ClusterState::can_allocate (CPU, memory, pod
/// count, devices). Scheduling constraints (taints, affinity, GPU model) are the caller's check, against the
/// template node with the policy's filters; CA's binpacking estimator likewise runs the scheduler's
/// filters on the template node (cluster-autoscaler estimator/binpacking_estimator.go).
class TemplateNodes {
 public:
  /// `template_node`: an empty node of the pool (its labels and taints are not used).
  /// `daemon_pods`: the DaemonSets' pods every new node runs (Fleet::template_daemon_pods), reserved
  /// on each node when it is opened, before any pod (CA's template NodeInfo holds them; Karpenter
  /// counts their overhead). One that does not fit is left out.
  /// `dra`: the catalog holding the template node's ResourceSlices (Fleet::dra_catalog; nullptr: none):
  /// each open node allocates pods' claims from its own copy of them (the DynamicResources plugin's
  /// devices, dra_assign_claims), as CA's estimator runs DRA on its template node's slices
  /// (kubernetes/autoscaler cluster-autoscaler/simulator/dynamicresources).
  explicit TemplateNodes(const Node& template_node, std::span<const Pod> daemon_pods = {},
                         std::shared_ptr<const DraCatalog> dra = nullptr);
  /// Nodes opened so far.
  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  /// First fit: reserves the pod on the first open node that takes it; when none does and fewer than
  /// `max_nodes` are open, opens a node and tries the pod there (the node stays open even if the pod
  /// does not fit it). Returns whether the pod was placed.
  bool add_first_fit(const Pod& pod, int32_t max_nodes);

 private:
  Node template_;
  std::vector<Pod> daemon_pods_;     // their requests
  std::vector<ClusterState> nodes_;  // one single-node state per open node
  std::shared_ptr<const DraCatalog> dra_;
};

/// What scaling one pool up would do.
struct ScaleUpOption {
  size_t pool = 0;                   ///< index of the pool
  int32_t nodes = 0;                 ///< new nodes needed
  int32_t pods_helped = 0;           ///< pending pods that fit on them
  int64_t cpu_requested_milli = 0;   ///< summed over the helped pods
  int64_t memory_requested_bytes = 0;
  int64_t gpu_requested_milli = 0;
  int64_t cpu_capacity_milli = 0;    ///< summed over the new nodes
  int64_t memory_capacity_bytes = 0;
  int64_t gpu_capacity_milli = 0;
  double price_usd_per_hour = 0;     ///< marginal price of the new nodes (covered reserved nodes: 0)
};

/// The binpacking estimator: packs `pods` (all known to fit the pool's template node) onto at most
/// `max_nodes` new nodes (TemplateNodes), first-fit decreasing: pods sorted by the gpu_milli they take
/// on the template node as ClusterState counts it (num_gpu x gpu_milli on plain GPUs, floor(1000 / R)
/// per time-slicing replica, floor(1000 x compute slices / 7) per MIG device), then CPU, then memory,
/// descending; ties keep their order. A node is opened when a pod fits no open one. The option's
/// price is left 0; its capacities are the template node's times the nodes; gpu_requested_milli sums
/// that gpu_milli over the helped pods. Each new node holds `daemon_pods` first (TemplateNodes).
ScaleUpOption estimate_scale_up(size_t pool_index, const Node& template_node, std::span<const Pod* const> pods,
                                int32_t max_nodes, std::span<const Pod> daemon_pods = {},
                                std::shared_ptr<const DraCatalog> dra = nullptr);
/// The same on a node of the pool as expand_pool makes it.
ScaleUpOption estimate_scale_up(size_t pool_index, const NodePool& pool, std::span<const Pod* const> pods,
                                int32_t max_nodes);

/// least-waste score, lower is better (expander/waste/waste.go): (1 - cpu_req/cpu_cap) +
/// (1 - mem_req/mem_cap), plus (1 - gpu_req/gpu_cap) when the nodes have GPUs (gpufleet's
/// addition: CA ignores GPUs here, which would let CPU pods pick GPU pools).
double waste_score(const ScaleUpOption& option);

/// price score, lower is better: USD per hour of the new nodes per helped pod. (CA's price expander
/// is GCE-only and compares against a "preferred node"; this is the simple cost-per-pod reading.)
double price_score(const ScaleUpOption& option);

/// The expander: the option with the best score among those that help a pod; ties go to the other
/// score (least-waste then price, or price then least-waste), then to the lower pool index (CA breaks
/// ties at random; gpufleet is deterministic). Returns an index into options, or -1 if none helps.
int choose_option(std::span<const ScaleUpOption> options, Expander expander);

}  // namespace gpufleet::sim
