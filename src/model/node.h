// Node: a Kubernetes node as the engine sees it. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/gpu_memory_share.h"
#include "model/mig.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// A Kubernetes taint (key=value:effect). Effects: NoSchedule, PreferNoSchedule, NoExecute.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

/// The NVIDIA device plugin's GPU sharing strategy (k8s-device-plugin api/config/v1/sharing.go,
/// SharingStrategy; the value of GPU feature discovery's label nvidia.com/gpu.sharing-strategy).
///  - kTimeSlicing (sharing.timeSlicing): CUDA time-slices the GPU among its clients; no memory or
///    fault isolation.
///  - kMps (sharing.mps): the MPS control daemon (cmd/mps-control-daemon/mps/daemon.go) starts one
///    MPS server per GPU and limits each client to 1/replicas of the GPU's memory
///    (set_default_device_pinned_mem_limit, see mps_pinned_device_mem_limit_mib) and of its SMs
///    (set_default_active_thread_percentage, mps_active_thread_percentage). Only full GPUs:
///    "sharing using MPS is not supported for MIG devices" (cmd/nvidia-device-plugin/plugin-manager
///    getMPSOptions) and "--mig-strategy=mixed is not supported with MPS" (main.go validateFlags).
enum class GpuSharingStrategy : uint8_t { kTimeSlicing, kMps };

/// "time-slicing", "mps" (the label's and the device plugin's spelling).
std::string_view gpu_sharing_strategy_name(GpuSharingStrategy strategy);

/// The device plugin's replicated GPUs (ReplicatedResources, api/config/v1/replicas.go), under either
/// sharing strategy: one replica accounting for time-slicing and MPS. It applies to every GPU of the
/// node that has no MIG enabled (sharing MIG devices and a subset of the GPUs is not modelled). The
/// name is historical: `strategy` says whether the replicas are time-slices or MPS clients.
struct TimeSlicing {
  int32_t replicas = 1;  ///< R >= 1: each GPU is advertised R times
  /// The replicas are advertised as nvidia.com/gpu.shared (renameByDefault, or rename) instead of
  /// nvidia.com/gpu; the node then advertises no nvidia.com/gpu for these GPUs.
  bool renamed = false;
  /// failRequestsGreaterThanOne: a request for more than one replica is refused (see GpuShareFit).
  /// The device plugin defaults it to true under MPS (api/config/v1/config.go NewConfig: "Preserve
  /// the historical MPS behavior unless the config explicitly relaxes it"), false under time-slicing.
  bool fail_requests_greater_than_one = false;
  GpuSharingStrategy strategy = GpuSharingStrategy::kTimeSlicing;
  bool operator==(const TimeSlicing&) const = default;
  bool mps() const { return strategy == GpuSharingStrategy::kMps; }
};

/// The device memory one MPS client may pin on a GPU of `gpu_memory_mib` MiB shared `replicas` ways:
/// floor(gpu_memory_mib / replicas), the limit the device plugin's MPS control daemon sets per GPU
/// (`set_default_device_pinned_mem_limit <gpu> <limit>M`, cmd/mps-control-daemon/mps/daemon.go).
/// A client allocating more gets a CUDA out-of-memory error. 0 when either argument is below 1.
inline int64_t mps_pinned_device_mem_limit_mib(int64_t gpu_memory_mib, int32_t replicas) {
  return gpu_memory_mib < 1 || replicas < 1 ? 0 : gpu_memory_mib / replicas;
}
/// The share of a GPU's SMs one MPS client may use, percent: floor(100 / replicas), as the daemon's
/// `set_default_active_thread_percentage` (same source). 0 when replicas is below 1.
inline int32_t mps_active_thread_percentage(int32_t replicas) { return replicas < 1 ? 0 : 100 / replicas; }

/// MIG mode of one GPU and its GPU instances, as the mig-parted config applied by the MIG manager
/// left it. With the device plugin's migStrategy mixed (the one gpufleet models), each instance is
/// one device of the resource nvidia.com/mig-<profile> (gpu-sharing.md s.2).
struct GpuMig {
  bool enabled = false;                ///< MIG mode on: the GPU is never a plain or time-sliced GPU
  std::vector<MigInstance> instances;  ///< ordered by start; a valid layout for the node's model (mig.h)
  bool operator==(const GpuMig&) const = default;
};

/// The kubelet's Topology Manager policy (KubeletConfiguration topologyManagerPolicy, flag
/// --topology-manager-policy). Kubernetes docs, "Control Topology Management Policies on a node"
/// (kubernetes.io/docs/tasks/administer-cluster/topology-manager/):
///  - none: no alignment (the kubelet's default).
///  - best-effort: the kubelet prefers resources of the narrowest set of NUMA nodes and admits the pod
///    even when that preference cannot be met.
///  - restricted: as best-effort, but the pod is rejected at admission (TopologyAffinityError) when
///    the preferred (narrowest possible) NUMA affinity cannot be met.
///  - single-numa-node: the pod is admitted only if all its aligned resources come from one NUMA node.
/// gpufleet aligns only whole GPUs (nvidia.com/gpu through the device manager's topology hints), not
/// CPUs or memory; see sched/plugins/node_resource_topology_match.h for what is enforced.
enum class TopologyManagerPolicy : uint8_t { kNone, kBestEffort, kRestricted, kSingleNumaNode };

/// The Topology Manager's scope (topologyManagerScope): container (the default: each container is
/// aligned on its own) or pod (all containers of a pod together). gpufleet models a pod's request as
/// one container, so the scopes differ only in the rejection reason they report.
enum class TopologyManagerScope : uint8_t { kContainer, kPod };

/// "none", "best-effort", "restricted", "single-numa-node" (the kubelet's spelling).
std::string_view topology_manager_policy_name(TopologyManagerPolicy policy);
/// "container", "pod".
std::string_view topology_manager_scope_name(TopologyManagerScope scope);
/// The policy spelled as the kubelet spells it; nullopt for any other text.
std::optional<TopologyManagerPolicy> parse_topology_manager_policy(std::string_view text);
/// The scope spelled as the kubelet spells it; nullopt for any other text.
std::optional<TopologyManagerScope> parse_topology_manager_scope(std::string_view text);

/// The most NUMA nodes gpufleet reads per Kubernetes node: the Topology Manager's default limit
/// (topologyManagerMaxNUMANodes 8, kubelet topologymanager defaultMaxAllowableNUMANodes).
inline constexpr int32_t kMaxNumaNodesPerNode = 8;

/// A node's allocatable resources and identity.
struct Node {
  std::string name;
  int64_t cpu_milli = 0;       ///< allocatable CPU, milli-cores
  int64_t memory_bytes = 0;      ///< allocatable memory, MiB
  int32_t gpu_count = 0;       ///< physical GPUs (each 1000 gpu_milli)
  std::string gpu_model;       ///< GPU model, the value of nvidia.com/gpu.product (openb: "model" column)
  int32_t max_pods = 1001;     ///< pod capacity; the FGD simulator sets 1001, kubelet's default is 110
  Labels labels;               ///< e.g. nvidia.com/gpu.product, topology.kubernetes.io/zone
  std::vector<Taint> taints;
  bool unschedulable = false;  ///< spec.unschedulable (cordoned): see sched/plugins/node_unschedulable.h

  // GPU sharing set-up (none for the openb trace). Each GPU is exactly one of: a MIG GPU
  // (mig[g].enabled), a time-sliced GPU (time_slicing set, no MIG), or a plain GPU. "Time-sliced"
  // covers both sharing strategies (TimeSlicing::strategy): a replicated GPU.
  /// Device-plugin replicas (time-slicing or MPS) of the GPUs without MIG; nullopt = not shared.
  std::optional<TimeSlicing> time_slicing;
  /// Per GPU index: empty = no GPU has MIG enabled; otherwise exactly gpu_count entries. A node with
  /// MIG needs a gpu_model that find_gpu_model() knows and that is MIG-capable.
  std::vector<GpuMig> mig;

  // Memory-based GPU sharing (model/gpu_memory_share.h).
  /// Memory of each GPU as the memory-sharing scheduler counts it, MiB: a HAMi node's registered
  /// devmem, else KAI-Scheduler's kai_gpu_memory_mib of the label nvidia.com/gpu.memory; 0 = unknown
  /// (no memory-share pod fits).
  int64_t gpu_memory_mib = 0;
  /// Set on a HAMi-managed node (hami.io/node-nvidia-register): only HAMi pods share its cards, and
  /// HAMi pods go nowhere else. A HAMi node has no MIG or time-slicing set-up.
  std::optional<HamiDevices> hami;

  // NUMA layout and the kubelet's Topology Manager (none for the openb trace). Sources: the NFD
  // topology-updater's NodeResourceTopology object (readers/k8s/node_resource_topology.h) or a pool's `numa` key.
  /// Per GPU index: the NUMA node (0 .. kMaxNumaNodesPerNode-1) the GPU is attached to. Empty = the
  /// layout is unknown and the node counts as one NUMA node (no alignment constraint); otherwise
  /// exactly gpu_count entries.
  std::vector<int8_t> gpu_numa_node;
  TopologyManagerPolicy topology_manager_policy = TopologyManagerPolicy::kNone;  ///< kubelet default: none
  TopologyManagerScope topology_manager_scope = TopologyManagerScope::kContainer;  ///< kubelet default: container

  /// Whether whole GPUs of this node must come from one NUMA node for the kubelet to admit a pod:
  /// policy single-numa-node and a known NUMA layout.
  bool requires_single_numa_node() const {
    return topology_manager_policy == TopologyManagerPolicy::kSingleNumaNode && !gpu_numa_node.empty();
  }

  /// Whether any GPU is time-sliced or has MIG enabled.
  bool has_gpu_sharing() const {
    if (time_slicing) return true;
    for (const GpuMig& g : mig)
      if (g.enabled) return true;
    return false;
  }
};

}  // namespace gpufleet
