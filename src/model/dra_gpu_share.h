// How much of a physical GPU a Dynamic Resource Allocation device is, for the GPU allocation figures
// (`gpufleet place`'s summary, simulate's utilization) and chargeback by device. docs/dra.md ("GPU
// allocation and chargeback of DRA devices") gives the reasoning.
//
// GPU devices are those of NVIDIA's DRA driver (driver gpu.nvidia.com, github.com/NVIDIA/k8s-dra-driver-gpu,
// whose ResourceSlices carry the attribute `type`: "gpu" for a whole GPU, "mig" for a MIG device with
// `parentIndex` naming its GPU's `index`). Devices of other drivers or types count 0.
//
// A device's share of its GPU, in gpu_milli (1000 = one GPU):
//  - a device that consumes counters from a counter set with a `memory` counter (partitionable
//    devices, KEP-4815: the driver publishes one counter set per physical GPU, and every MIG placement
//    consumes the memory it covers): floor(1000 x memory consumed / the set's memory). The counters
//    are what an allocated device takes away from every other device of its GPU, so the share is what
//    the others lose: a 3g.40gb instance of an A100-SXM4-80GB is 40Gi of 80Gi, 500; a 1g.10gb 125; the
//    whole GPU 1000;
//  - otherwise a "gpu" device is 1000, and a "mig" device its capacity `memory` over that of the
//    "gpu" device of the same pool whose `index` is its `parentIndex` (the same memory share), 0 when
//    the parent is not published.
// This differs from the device-plugin MIG rule of simulate's chargeback (compute slices, g/7 of a GPU,
// sim/rules/cost.h): with DRA the driver publishes the memory each partition takes, not its compute.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/dra.h"

namespace gpufleet {

/// NVIDIA's DRA driver name.
inline constexpr const char* kNvidiaDraDriver = "gpu.nvidia.com";

/// The share (see above) of `device` of `slice`, in gpu_milli, 0..1000; `slice` is the one holding the
/// device (its pool gives the parent of a MIG device without counters and the counter sets).
int32_t dra_device_gpu_milli(const ResourceSlice& slice, const DraDevice& device);

/// Physical GPUs published in node-local slices (spec.nodeName) of the NVIDIA driver, per node name:
/// the distinct `index` of "gpu" devices and `parentIndex` of "mig" devices of each pool (a GPU
/// published as partitions only still counts once). Slices of node selectors or allNodes are not
/// counted (no node owns them).
std::map<std::string, int32_t> dra_gpus_by_node(const DraCatalog& catalog);

/// The share (dra_device_gpu_milli) of every allocated device, for device ids dra_device_id(driver,
/// pool, device); looks devices up in `catalog`. A lookup table built once per catalog.
class DraGpuShares {
 public:
  explicit DraGpuShares(const DraCatalog& catalog);
  /// gpu_milli of one allocated device (0 for a device the catalog does not publish). A shared
  /// allocation (consumable capacity, DraDeviceResult::shared()) counts the device's share times the
  /// `memory` it consumes over the device's `memory` capacity (floor), or the whole share when the
  /// device publishes no memory capacity.
  int32_t device_milli(const DraDeviceResult& device) const;
  /// Sum over an allocation's devices.
  int64_t allocation_milli(const DraAllocation& allocation) const;

 private:
  std::map<std::string, int32_t> milli_;  // by device id
  std::map<std::string, int64_t> memory_milli_;  // by device id: its memory capacity, when published
};

}  // namespace gpufleet
