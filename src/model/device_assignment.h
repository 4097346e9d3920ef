// The devices a pod holds on its node: GPU indices, time-slicing replicas, MIG devices. A plain
// value type shared by the pod (the devices a bind recorded for it) and the cluster state (what
// ClusterState::allocate takes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/dra.h"

namespace gpufleet {

/// One MIG device of a node: the GPU instance of `profile` starting at memory slice `start` on GPU
/// `gpu` (an entry of Node::mig[gpu].instances).
struct MigDevice {
  int32_t gpu = 0;
  int32_t start = 0;
  std::string profile;  ///< e.g. "3g.40gb"
  bool operator==(const MigDevice&) const = default;
};

/// The devices a pod takes on a node (the argument of allocate and can_allocate), e.g.
/// {.gpus = {2}} for a whole or fractional GPU, {.mig = {{0, 4, "3g.40gb"}}} for a MIG device,
/// {.shared_replicas = {1}} for one renamed time-slicing replica; {} for a pod without GPUs.
struct DeviceAssignment {
  /// nvidia.com/gpu, num_gpu entries (none for a pod without GPUs): on plain GPUs, distinct GPU
  /// indices each given gpu_milli; on a node time-sliced without renaming, the GPU index of each
  /// replica (an index repeats when a GPU gives the pod several replicas).
  /// For a memory-share pod (Pod::gpu_memory_share): its GpuMemoryShare::cards distinct cards.
  std::vector<int32_t> gpus{};
  /// nvidia.com/gpu.shared, shared_replicas entries: the GPU index of each replica (may repeat).
  std::vector<int32_t> shared_replicas{};
  /// nvidia.com/mig-<profile>: one entry per device, as many per profile as the pod requests.
  std::vector<MigDevice> mig{};
  /// Dynamic Resource Allocation: the pod's ResourceClaims with their allocations (model/dra.h), one
  /// entry per claim of Pod::resource_claims; empty for a pod without claims.
  std::vector<DraClaimAllocation> claims{};
  bool operator==(const DeviceAssignment&) const = default;
};

}  // namespace gpufleet
