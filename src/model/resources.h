// Resource units used throughout gpufleet. Integers in the hot path, units in every name:
//   cpu_milli   1000 = one vCPU (Kubernetes "500m" = 500)
//   memory_bytes bytes (Kubernetes "16Gi" = 17179869184), compared exactly as kube-scheduler's
//               NodeResourcesFit does; the openb trace's memory_mib columns are converted on reading
//   gpu_milli   1000 = one whole GPU; a sharing pod asks for a fraction of one GPU
#pragma once

#include <cstdint>
#include <string_view>

namespace gpufleet {

/// Bytes in one MiB (2^20), for inputs and outputs that count memory in MiB (the openb trace).
inline constexpr int64_t kBytesPerMib = int64_t{1} << 20;

/// One whole GPU in gpu_milli.
inline constexpr int32_t kGpuMilliPerGpu = 1000;

/// Largest number of GPUs a single pod may request. Eight is the largest GPU server in the openb
/// trace and in current HGX/DGX systems (8x H100/H200/B200); a request above it is bad input.
inline constexpr int32_t kMaxGpusPerPod = 8;

/// Largest number of GPUs a node may carry (HGX-2 class systems have 16).
inline constexpr int32_t kMaxGpusPerNode = 16;

/// Extended-resource names of the NVIDIA device plugin (gpu-sharing.md s.2-3): whole GPUs (or their
/// time-slicing replicas when not renamed), renamed time-slicing replicas, and, with migStrategy
/// mixed, one resource per MIG profile, `nvidia.com/mig-<profile>` (e.g. nvidia.com/mig-3g.40gb).
inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kGpuSharedResource = "nvidia.com/gpu.shared";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

/// Kubernetes counts a container without a CPU request as 100m when scoring ("non-zero" request,
/// k8s.io/kubernetes pkg/scheduler/util/non_zero.go DefaultMilliCPURequest).
inline constexpr int64_t kDefaultNonZeroCpuMilli = 100;
/// ... and a container without a memory request as 200 MiB (DefaultMemoryRequest, same file).
inline constexpr int64_t kDefaultNonZeroMemoryBytes = 200LL * 1024 * 1024;

}  // namespace gpufleet
