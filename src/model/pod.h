// Pod: one schedulable unit's resource request. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/resources.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// Kubernetes/Alibaba QoS class of a pod (informational in the FGD experiments).
enum class QosClass { kUnspecified, kLS, kBE, kBurstable, kGuaranteed };

/// A pod's request. A GPU pod asks for num_gpu GPUs with gpu_milli of each:
///  - CPU-only: num_gpu == 0, gpu_milli == 0
///  - sharing:  num_gpu == 1, 0 < gpu_milli < 1000 (fits on one GPU with that much free)
///  - whole:    num_gpu >= 1, gpu_milli == 1000 (takes num_gpu fully free GPUs of one node)
struct Pod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
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

  /// Total GPU request in gpu_milli (num_gpu * gpu_milli).
  int64_t gpu_request_milli() const { return int64_t{num_gpu} * gpu_milli; }
  bool is_gpu_pod() const { return num_gpu > 0 && gpu_milli > 0; }
  /// A sharing pod takes a fraction of one GPU.
  bool is_share_pod() const { return num_gpu == 1 && gpu_milli < kGpuMilliPerGpu && gpu_milli > 0; }
  /// CPU request as kube-scheduler scores it: 0 counts as 100m (see kDefaultNonZeroCpuMilli).
  int64_t nonzero_cpu_milli() const { return cpu_milli == 0 ? kDefaultNonZeroCpuMilli : cpu_milli; }
};

}  // namespace gpufleet
