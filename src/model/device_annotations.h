// gpufleet's device annotations: the devices a bind chose for a pod, written on the pod before it is
// bound (the live extender's bind, docs/live.md) and read back from it (readers/k8s/k8s_yaml.h). The contract
// with a device plugin is the one Alibaba's gpushare-scheduler-extender and gpushare-device-plugin
// keep with their ALIYUN_COM_GPU_MEM_IDX / ALIYUN_COM_GPU_MEM_ASSUME_TIME annotations
// (AliyunContainerService/gpushare-scheduler-extender docs/designs/designs.md): at Allocate, the
// plugin on the node takes the pending pod on that node whose annotations name devices of its
// request, the oldest assume time first, and hands exactly those devices to the container.
//
// Values (GPU indices are the node's GPU indices, 0-based, as nvidia-smi numbers them):
//   gpufleet.io/gpu-index         "0,1"            nvidia.com/gpu: one index per device, ascending
//                                                   (a time-sliced GPU repeats per replica)
//   gpufleet.io/gpu-shared-index  "2,2"            nvidia.com/gpu.shared: one index per replica
//   gpufleet.io/mig-devices       "0:4:3g.40gb"    nvidia.com/mig-<profile>: gpu:start:profile per
//                                                   device, comma-separated, start = first memory slice
//   gpufleet.io/assume-time       "1764650000000000000"  nanoseconds since the epoch of the bind
// A pod without GPUs gets none of the three device keys.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/device_assignment.h"

namespace gpufleet {

inline constexpr std::string_view kGpuIndexAnnotation = "gpufleet.io/gpu-index";
inline constexpr std::string_view kSharedGpuIndexAnnotation = "gpufleet.io/gpu-shared-index";
inline constexpr std::string_view kMigDevicesAnnotation = "gpufleet.io/mig-devices";
inline constexpr std::string_view kAssumeTimeAnnotation = "gpufleet.io/assume-time";

/// The three device keys' values for `devices` (keys with nothing to say are left out).
std::map<std::string, std::string> device_annotation_values(const DeviceAssignment& devices);

/// The devices a pod's annotations name; nullopt when it has none of the three keys. Throws
/// std::invalid_argument naming the key for a malformed value (an index outside 0..1023, an empty
/// entry, a MIG entry that is not gpu:start:profile).
std::optional<DeviceAssignment> parse_device_annotations(const std::map<std::string, std::string>& annotations);

}  // namespace gpufleet
