// Node: a Kubernetes node as the engine sees it. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/mig.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// A Kubernetes taint (key=value:effect). Effects: NoSchedule, PreferNoSchedule, NoExecute.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

/// Time-slicing of a node's GPUs by the NVIDIA device plugin (sharing.timeSlicing, gpu-sharing.md
/// s.3). It applies to every GPU of the node that has no MIG enabled (time-slicing of MIG devices and
/// of a subset of the GPUs is not modelled).
struct TimeSlicing {
  int32_t replicas = 1;  ///< R >= 1: each GPU is advertised R times
  /// The replicas are advertised as nvidia.com/gpu.shared (renameByDefault, or rename) instead of
  /// nvidia.com/gpu; the node then advertises no nvidia.com/gpu for these GPUs.
  bool renamed = false;
  /// failRequestsGreaterThanOne: a request for more than one replica is refused (see GpuShareFit).
  bool fail_requests_greater_than_one = false;
  bool operator==(const TimeSlicing&) const = default;
};

/// MIG mode of one GPU and its GPU instances, as the mig-parted config applied by the MIG manager
/// left it. With the device plugin's migStrategy mixed (the one gpufleet models), each instance is
/// one device of the resource nvidia.com/mig-<profile> (gpu-sharing.md s.2).
struct GpuMig {
  bool enabled = false;                ///< MIG mode on: the GPU is never a plain or time-sliced GPU
  std::vector<MigInstance> instances;  ///< ordered by start; a valid layout for the node's model (mig.h)
  bool operator==(const GpuMig&) const = default;
};

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
  // (mig[g].enabled), a time-sliced GPU (time_slicing set, no MIG), or a plain GPU.
  /// Device-plugin time-slicing of the GPUs without MIG; nullopt = not time-sliced.
  std::optional<TimeSlicing> time_slicing;
  /// Per GPU index: empty = no GPU has MIG enabled; otherwise exactly gpu_count entries. A node with
  /// MIG needs a gpu_model that find_gpu_model() knows and that is MIG-capable.
  std::vector<GpuMig> mig;

  /// Whether any GPU is time-sliced or has MIG enabled.
  bool has_gpu_sharing() const {
    if (time_slicing) return true;
    for (const GpuMig& g : mig)
      if (g.enabled) return true;
    return false;
  }
};

}  // namespace gpufleet
