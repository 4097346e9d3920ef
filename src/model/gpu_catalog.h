// The GPU catalog: the data-center GPU models gpufleet knows, their memory, the node labels that name
// them and, for MIG-capable models, the MIG GPU-instance profiles. Plain data, no I/O.
//
// Sources:
//  - MIG geometry and GPU-instance (GI) profile ids: the NVIDIA MIG User Guide, "Supported MIG
//    Profiles" (docs.nvidia.com/datacenter/tesla/mig-user-guide), and `nvidia-smi mig -lgipp` outputs.
//  - Profile names per model: the same guide and NVIDIA/mig-parted's example configs.
//  - Product labels: GPU Feature Discovery (NVIDIA/k8s-device-plugin, gpu-feature-discovery) sets
//    `nvidia.com/gpu.product` to the NVML device name with spaces replaced by '-' (e.g.
//    "NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3").
//  - memory_mib: the total framebuffer as NVML reports it, which is what nvidia-smi prints and GFD puts
//    in the `nvidia.com/gpu.memory` label (MiB). Values observed in public nvidia-smi outputs and GFD
//    label dumps; they are below the marketing size (an "80GB" H100 reports 81559 MiB).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet {

/// A full MIG-capable GPU has 7 compute slices and 8 memory slices ([mig-doc], gpu-sharing.md s.1).
inline constexpr int kMigComputeSlices = 7;
inline constexpr int kMigMemorySlices = 8;
/// At most 7 MIG instances per GPU on A100/H100/H200/B200 ([mig-doc] "Supported GPUs").
inline constexpr int kMigMaxInstances = 7;

/// One MIG GPU-instance profile of a model (a row of `nvidia-smi mig -lgip` / `-lgipp`).
struct MigProfile {
  std::string name;           ///< "<g>g.<mem>gb", "+me" for the media-engine variant, e.g. "1g.10gb+me"
  int compute_slices = 0;     ///< g, out of kMigComputeSlices
  int memory_slices = 0;      ///< width on the 8-slice memory axis
  std::vector<int> starts;    ///< allowed start indices on the memory axis (ascending)
  int gi_profile_id = 0;      ///< GPU-instance profile id (19, 20, 15, 14, 9, 5, 0)
  int max_count = 0;          ///< most instances of this profile alone on one GPU
  bool media_extensions = false;  ///< the "+me" variant: takes the media engines, one per GPU
};

/// One GPU model.
struct GpuModelInfo {
  std::string name;                          ///< canonical, e.g. "A100-80GB"
  int64_t memory_mib = 0;                    ///< framebuffer per GPU, MiB, as NVML/GFD report it
  std::vector<std::string> product_labels;   ///< `nvidia.com/gpu.product` values naming this model
  bool mig_capable = false;
  std::vector<MigProfile> mig_profiles;      ///< empty unless mig_capable; ordered by GI profile table row

  /// The profile named `profile` (exact, case-sensitive, as in mig-parted and resource names), or nullptr.
  const MigProfile* find_mig_profile(std::string_view profile) const;
};

/// Every model, in this order: T4, L4, L40S, A10G, A100-40GB, A100-80GB, H100-80GB, H200-141GB,
/// B200-180GB, V100-16GB, V100-32GB, A40. The references returned by this and find_gpu_model stay valid for the program's life.
const std::vector<GpuModelInfo>& gpu_catalog();

/// The model whose canonical name equals `name_or_product` ignoring ASCII case ("a100-80gb"), or one
/// of whose product labels equals it exactly ("NVIDIA-A100-SXM4-80GB"); nullptr when none does (the
/// caller reports an input error). GFD's derived labels are not recognized here: strip a "-SHARED"
/// (sharing) or "-MIG-<profile>" (single MIG strategy) suffix first (gpu-sharing.md s.5).
const GpuModelInfo* find_gpu_model(std::string_view name_or_product);

/// Whether some catalog model has the MIG profile `profile` (exact, as find_mig_profile): the
/// profiles a pod may request as nvidia.com/mig-<profile>.
bool catalog_has_mig_profile(std::string_view profile);

}  // namespace gpufleet
