// Pod: one schedulable unit's resource request. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/device_assignment.h"
#include "model/dra.h"
#include "model/gpu_memory_share.h"

#include "model/resources.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// Kubernetes/Alibaba QoS class of a pod (informational in the FGD experiments).
enum class QosClass { kUnspecified, kLS, kBE, kBurstable, kGuaranteed };

/// A request for MIG devices of one profile: the extended resource `nvidia.com/mig-<profile>` that
/// the NVIDIA device plugin advertises with migStrategy mixed (gpu-sharing.md s.2).
struct MigRequest {
  std::string profile;  ///< e.g. "3g.40gb" (a catalog profile name, see gpu_catalog.h)
  int32_t count = 0;    ///< MIG devices of that profile, >= 1
  bool operator==(const MigRequest&) const = default;
};

/// A pod's request. A GPU pod asks for num_gpu GPUs with gpu_milli of each:
///  - CPU-only: num_gpu == 0, gpu_milli == 0
///  - sharing:  num_gpu == 1, 0 < gpu_milli < 1000 (fits on one GPU with that much free)
///  - whole:    num_gpu >= 1, gpu_milli == 1000 (takes num_gpu fully free GPUs of one node). This is
///              the resource nvidia.com/gpu: N. On a node whose GPUs are time-sliced and not renamed
///              (Node::time_slicing), the device plugin advertises replicas under that name, so the
///              pod takes N replicas there, exactly as kube-scheduler counts the advertised resource.
/// Independently of these, a pod may ask for MIG devices (mig_requests) and for renamed
/// time-slicing replicas (shared_replicas); num_gpu/gpu_milli do not include them.
struct Pod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;       ///< per GPU, 0..1000
  std::string gpu_spec;        ///< allowed GPU models joined by '|' (openb gpu_spec); empty = any
  QosClass qos = QosClass::kUnspecified;
  int32_t priority = 0;          ///< resolved PriorityClass value (kube: spec.priority)

  // Kubernetes identity and constraints (empty for the openb trace).
  std::string namespace_name;    ///< metadata.namespace ("default" when read from YAML without one)
  Labels labels;                 ///< metadata.labels
  std::string priority_class_name;
  bool preempt_lower_priority = true;  ///< preemptionPolicy: PreemptLowerPriority (true) or Never
  PodConstraints constraints;
  std::string node_name;         ///< spec.nodeName: the node it is already bound to; empty = to schedule
  std::string uid;               ///< metadata.uid ("" when the input gives none)
  /// The devices a bind chose for it on node_name (gpufleet's device annotations, docs/live.md:
  /// gpufleet.io/gpu-index, gpufleet.io/gpu-shared-index, gpufleet.io/mig-devices); nullopt = none
  /// recorded, the pod takes the lowest free devices (Scheduler::bind_node_name).
  std::optional<DeviceAssignment> assigned_devices;

  // Device-plugin resources besides nvidia.com/gpu (empty/0 for the openb trace).
  /// nvidia.com/mig-<profile> requests, one entry per profile, sorted by profile, counts >= 1.
  std::vector<MigRequest> mig_requests;
  /// nvidia.com/gpu.shared: time-slicing replicas under the renamed resource (0 = none).
  int32_t shared_replicas = 0;

  // Dynamic Resource Allocation (resource.k8s.io; model/dra.h).
  /// spec.resourceClaims, in order; empty for a pod without claims (the DynamicResources filter then
  /// skips it at no cost).
  std::vector<PodResourceClaim> resource_claims;
  // Memory-based GPU sharing (model/gpu_memory_share.h): HAMi's nvidia.com/gpumem & co. or
  // KAI-Scheduler's gpu-memory / gpu-fraction. When set, num_gpu and gpu_milli are 0 and the cards
  // are DeviceAssignment::gpus.
  std::optional<GpuMemoryShare> gpu_memory_share;

  /// Total GPU request in gpu_milli (num_gpu * gpu_milli).
  int64_t gpu_request_milli() const { return int64_t{num_gpu} * gpu_milli; }
  bool is_gpu_pod() const { return num_gpu > 0 && gpu_milli > 0; }
  /// A sharing pod takes a fraction of one GPU.
  bool is_share_pod() const { return num_gpu == 1 && gpu_milli < kGpuMilliPerGpu && gpu_milli > 0; }
  /// Whether the pod asks for MIG devices or renamed time-slicing replicas.
  bool has_device_requests() const { return shared_replicas > 0 || !mig_requests.empty(); }
  /// CPU request as kube-scheduler scores it: 0 counts as 100m (see kDefaultNonZeroCpuMilli).
  int64_t nonzero_cpu_milli() const { return cpu_milli == 0 ? kDefaultNonZeroCpuMilli : cpu_milli; }

  /// kube-scheduler's non-zero requests, per container (pkg/scheduler/util/non_zero.go
  /// GetNonzeroRequests): a container that does not name cpu (memory) in its requests counts
  /// 100m (200 MiB); an explicit 0 stays 0; summed over the containers, then the max with each init
  /// container's. What NodeResourcesFit's and v1.20's BalancedAllocation scores count, for the
  /// incoming pod and for the pods on a node (NodeInfo.NonZeroRequested). The Kubernetes reader sets
  /// them; -1 (traces, tests): derived from the totals, a 0 total counting as the default.
  int64_t scoring_cpu_milli = -1;
  int64_t scoring_memory_bytes = -1;
  int64_t nonzero_cpu_request_milli() const { return scoring_cpu_milli >= 0 ? scoring_cpu_milli : nonzero_cpu_milli(); }
  int64_t nonzero_memory_request_bytes() const {
    return scoring_memory_bytes >= 0 ? scoring_memory_bytes : memory_bytes == 0 ? kDefaultNonZeroMemoryBytes : memory_bytes;
  }
  /// Whether the pod has preferred pod (anti-)affinity or required pod affinity terms: what
  /// InterPodAffinity's Score reads of the pods already on nodes (kube NodeInfo.PodsWithAffinity).
  bool has_scored_affinity() const {
    return !constraints.required_affinity.empty() || !constraints.preferred_affinity.empty() ||
           !constraints.preferred_anti_affinity.empty();
  }
};

}  // namespace gpufleet
