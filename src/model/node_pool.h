// NodePool: a group of identical nodes (one instance type, one GPU model), as a cloud node group /
// Karpenter NodePool / GKE node pool describes it, with its size bounds and prices. Plain data, no
// I/O; the file format is in readers/k8s/pool_file.h and docs/node-pools.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

struct NodePool {
  std::string name;               ///< DNS label; nodes are named <name>-<i>
  std::string instance_type;      ///< e.g. "g6.xlarge"; empty = unknown (no instance-type label)
  std::string gpu_model;          ///< catalog name or product label ("L4", "H100-80GB"); empty = CPU-only pool
  int32_t gpus_per_node = 0;      ///< physical GPUs per node (0 for a CPU-only pool)
  int64_t cpu_milli = 0;          ///< allocatable CPU per node, milli-cores
  int64_t memory_bytes = 0;         ///< allocatable memory per node, MiB
  int32_t node_count = 0;         ///< current size
  int32_t min_nodes = 0;          ///< autoscaling lower bound
  int32_t max_nodes = 0;          ///< autoscaling upper bound
  Labels labels;                  ///< extra node labels
  std::vector<Taint> taints;
  double on_demand_usd_per_hour = 0;                  ///< USD per node-hour
  std::optional<double> spot_usd_per_hour;            ///< USD per node-hour
  std::optional<double> reserved_usd_per_hour;        ///< USD per node-hour (reserved / committed use)
  /// MIG devices per GPU (mig-parted `mig-devices`, profile -> count), applied to every GPU of every
  /// node; nullopt = MIG disabled. Must fit one GPU of the model (layout_for_counts).
  std::optional<std::map<std::string, int>> mig_devices;
  /// Device-plugin replicas per GPU (>= 1) under gpu_sharing_strategy (pool key `timeSlicing` or
  /// `mps`); nullopt = no sharing. The name is historical: it counts MPS replicas too.
  std::optional<int32_t> time_slicing_replicas;
  /// How the replicas share a GPU: time-slicing (the default) or MPS (Node's TimeSlicing::strategy).
  /// MPS and mig_devices together are invalid (the device plugin refuses MPS on MIG devices).
  GpuSharingStrategy gpu_sharing_strategy = GpuSharingStrategy::kTimeSlicing;
  /// Memory-based sharing by HAMi (pool key `hami`, model/gpu_memory_share.h): the nodes are
  /// HAMi-managed (Node::hami) with this many vGPUs per card (deviceSplitCount, default 10), each
  /// card's memory the model's (devmem). nullopt = not HAMi (KAI-Scheduler shares any other GPU node
  /// by the model's memory, floored to 100 MiB). Not with mig_devices or time_slicing_replicas.
  std::optional<int32_t> hami_split_count;
  /// Topology domains: (node label key, nodes per domain > 0). Node i of the pool gets the label with
  /// the value "<name>-<i / nodes per domain>", e.g. {nvidia.com/gpu.clique, 4} puts nodes 0-3 in the
  /// NVLink domain "<name>-0" (an NVL72-style rack shares one clique), {example.com/rack, 8} nodes 0-7
  /// in rack "<name>-0". Empty = none.
  std::vector<std::pair<std::string, int32_t>> topology_domains;
  /// NUMA nodes per node (pool key `numa.nodes`): the GPUs split evenly, GPU g on NUMA node
  /// g / (gpus_per_node / numa_nodes) (Node::gpu_numa_node). 0 = layout unknown (one NUMA node).
  /// gpus_per_node must be a multiple; at most kMaxNumaNodesPerNode.
  int32_t numa_nodes = 0;
  /// The kubelet's Topology Manager on every node (pool keys `numa.policy`, `numa.scope`).
  TopologyManagerPolicy topology_manager_policy = TopologyManagerPolicy::kNone;
  TopologyManagerScope topology_manager_scope = TopologyManagerScope::kContainer;
};

/// Pod capacity of every node expand_pool makes: kubelet's default --max-pods (KubeletConfiguration
/// maxPods, 110). Also the cap of the autoscaler's scale-up estimate (sim/rules/cluster_autoscaler.h NodeBin) and
/// of a Kubernetes Node without status.allocatable.pods (readers/k8s/k8s_yaml.h).
inline constexpr int32_t kKubeletDefaultMaxPods = 110;

/// Label keys that expand_pool sets on every node.
inline constexpr const char* kPoolLabel = "gpufleet.io/pool";
inline constexpr const char* kInstanceTypeLabel = "node.kubernetes.io/instance-type";
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGpuCountLabel = "nvidia.com/gpu.count";
inline constexpr const char* kGpuReplicasLabel = "nvidia.com/gpu.replicas";
/// The kubelet's hostname label: expand_pool sets it to each node's name (kubelet sets the node's
/// hostname, which is its name unless --hostname-override says otherwise), and so does the simulator
/// for each node it makes Ready (sim/engine/fleet.h).
inline constexpr const char* kNodeHostnameLabel = "kubernetes.io/hostname";
/// GPU feature discovery's sharing labels (k8s-device-plugin docs/gpu-feature-discovery/README.md),
/// set by expand_pool on MPS pools only: nvidia.com/gpu.sharing-strategy=mps, nvidia.com/mps.capable=true.
inline constexpr const char* kGpuSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
inline constexpr const char* kMpsCapableLabel = "nvidia.com/mps.capable";

/// Checks a pool; throws std::invalid_argument naming the problem: min_nodes > max_nodes, negative
/// bounds, node_count outside [min_nodes, max_nodes], GPUs without a model or a model without GPUs,
/// an unknown model, more than kMaxGpusPerNode GPUs, negative CPU/memory/prices, MIG on a model that
/// is not MIG-capable, a MIG layout that does not fit one GPU (naming the profiles), time-slicing
/// replicas < 1, MPS with MIG devices, or a pool label that conflicts with a label expand_pool sets.
void validate_pool(const NodePool& pool);

/// The pool's node_count nodes, after validate_pool (which may throw std::invalid_argument):
///  - name `<pool>-<i>`, i from 0, zero-padded to the number of digits of node_count-1
///    (10 nodes: -0..-9; 11 nodes: -00..-10);
///  - cpu_milli, memory_bytes, gpu_count = gpus_per_node, gpu_model = the catalog's canonical name,
///    max_pods = kKubeletDefaultMaxPods (110, kubelet's default);
///  - labels: the pool's labels, then nvidia.com/gpu.product (the catalog's first product label) and
///    nvidia.com/gpu.count (GPU pools only), nvidia.com/gpu.replicas (time-sliced pools only),
///    node.kubernetes.io/instance-type (when instance_type is set) and gpufleet.io/pool, then the
///    topology domain labels and kubernetes.io/hostname = the node's name;
///  - taints copied;
///  - devices: with mig_devices, every GPU has MIG enabled with the layout layout_for_counts() returns
///    (Node::mig); with time_slicing_replicas, Node::time_slicing = {replicas, not renamed,
///    failRequestsGreaterThanOne false under time-slicing and true under MPS, the strategy}, the
///    device plugin's defaults (time-slicing then applies only to GPUs without MIG, i.e. to none when
///    both are set); MPS pools also get the labels nvidia.com/gpu.sharing-strategy=mps and
///    nvidia.com/mps.capable=true, as GPU feature discovery sets them. A device-plugin config selected by the node's
///    labels can change these later (readers/k8s/device_setup.h).
std::vector<Node> expand_pool(const NodePool& pool);

/// The name expand_pool gives node `index` of a pool named `pool_name` with `node_count` nodes:
/// <pool_name>-<index>, zero-padded to the width of node_count - 1 (e.g. "a100-07" of 11 nodes).
std::string pool_node_name(std::string_view pool_name, int32_t index, int32_t node_count);

/// Sets node `index`'s topology domain labels (NodePool::topology_domains) in `labels`.
void set_topology_labels(const NodePool& pool, int32_t index, Labels& labels);

}  // namespace gpufleet
