// Node: a Kubernetes node as the engine sees it. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/scheduling_constraints.h"

namespace gpufleet {

/// A Kubernetes taint (key=value:effect). Effects: NoSchedule, PreferNoSchedule, NoExecute.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

/// A node's allocatable resources and identity.
struct Node {
  std::string name;
  int64_t cpu_milli = 0;       ///< allocatable CPU, milli-cores
  int64_t memory_mib = 0;      ///< allocatable memory, MiB
  int32_t gpu_count = 0;       ///< physical GPUs (each 1000 gpu_milli)
  std::string gpu_model;       ///< GPU model, the value of nvidia.com/gpu.product (openb: "model" column)
  int32_t max_pods = 1001;     ///< pod capacity; the FGD simulator sets 1001, kubelet's default is 110
  Labels labels;               ///< e.g. nvidia.com/gpu.product, topology.kubernetes.io/zone
  std::vector<Taint> taints;
};

}  // namespace gpufleet
