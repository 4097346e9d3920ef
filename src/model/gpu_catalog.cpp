#include "model/gpu_catalog.h"

#include <string>
#include <vector>

#include "util/ascii.h"

namespace gpufleet {
namespace {

// The seven GI profiles of an A100/H100-class GPU, named for one model. Geometry, GI profile ids and
// max counts: gpu-sharing.md s.1 table (NVIDIA MIG User Guide "Supported MIG Profiles"; the
// `nvidia-smi mig -lgipp` placements {0..6}:1, {0,2,4,6}:2, {0,2,4}:2, {0,4}:4, {0}:4, {0}:8).
// The same shape and ids hold on A100, H100-80GB and H100 NVL [lgipp]; for H200 and B200 the
// reference states they are *expected* to be the same (assumption, confirm with `-lgipp`).
std::vector<MigProfile> mig_profiles(const std::string& small_1g, const std::string& large_1g,
                                     const std::string& g2, const std::string& g3, const std::string& g4,
                                     const std::string& g7) {
  return {
      {small_1g, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 19, 7, false},
      {small_1g + "+me", 1, 1, {0, 1, 2, 3, 4, 5, 6}, 20, 1, true},
      {large_1g, 1, 2, {0, 2, 4, 6}, 15, 4, false},
      {g2, 2, 2, {0, 2, 4}, 14, 3, false},
      {g3, 3, 4, {0, 4}, 9, 2, false},
      {g4, 4, 4, {0}, 5, 1, false},
      {g7, 7, 8, {0}, 0, 1, false},
  };
}

std::vector<GpuModelInfo> build_catalog() {
  std::vector<GpuModelInfo> c;
  // Not MIG-capable: MIG exists on A100/A30/H100/H200/B200-class data-center GPUs only
  // ([mig-doc] "Supported GPUs"); T4 (Turing), L4/L40S (Ada) and A10G (GA102) are not listed.
  // memory_mib from nvidia-smi / GFD nvidia.com/gpu.memory: T4 15360, L4 23034, L40S 46068, A10G 23028.
  c.push_back({"T4", 15360, {"Tesla-T4"}, false, {}});
  c.push_back({"L4", 23034, {"NVIDIA-L4"}, false, {}});
  c.push_back({"L40S", 46068, {"NVIDIA-L40S"}, false, {}});
  c.push_back({"A10G", 23028, {"NVIDIA-A10G"}, false, {}});
  // A100 40GB: 40960 MiB. "A100-SXM4-40GB" is the label from drivers whose device name lacks the
  // "NVIDIA " prefix (gpu-sharing.md s.5 example); the PCIe card is "NVIDIA A100-PCIE-40GB".
  c.push_back({"A100-40GB",
               40960,
               {"NVIDIA-A100-SXM4-40GB", "A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB", "A100-PCIE-40GB"},
               true,
               mig_profiles("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")});
  // A100 80GB: 81920 MiB; SXM4 and PCIe share the profile names (gpu-sharing.md s.1).
  c.push_back({"A100-80GB",
               81920,
               {"NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe"},
               true,
               mig_profiles("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")});
  // H100 80GB: 81559 MiB (SXM5 HBM3 and PCIe alike); same profile names as A100-80GB (s.1).
  c.push_back({"H100-80GB",
               81559,
               {"NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-PCIe"},
               true,
               mig_profiles("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")});
  // H200 141GB: 143771 MiB; SXM ("NVIDIA H200") and NVL ("NVIDIA H200 NVL") share profiles (s.1).
  c.push_back({"H200-141GB",
               143771,
               {"NVIDIA-H200", "NVIDIA-H200-NVL"},
               true,
               mig_profiles("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")});
  // B200 180GB: 183359 MiB (nvidia-smi "NVIDIA B200"); profiles [parted][hyperpod] (s.1).
  c.push_back({"B200-180GB",
               183359,
               {"NVIDIA-B200"},
               true,
               mig_profiles("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb")});
  // Not MIG-capable either: V100 (Volta) and A40 (GA102) are not in [mig-doc] "Supported GPUs".
  // V100 SXM2, as AWS p3.2xlarge/8xlarge/16xlarge (16 GB) and p3dn.24xlarge (32 GB) have it: nvidia-smi
  // shows "Tesla V100-SXM2-16GB" with 16160 MiB and "Tesla V100-SXM2-32GB" with 32510 MiB.
  c.push_back({"V100-16GB", 16160, {"Tesla-V100-SXM2-16GB"}, false, {}});
  c.push_back({"V100-32GB", 32510, {"Tesla-V100-SXM2-32GB"}, false, {}});
  // A40: "NVIDIA A40", 46068 MiB (48 GB GDDR6 with ECC on, as the L40S). No AWS instance type has it.
  c.push_back({"A40", 46068, {"NVIDIA-A40"}, false, {}});
  return c;
}


}  // namespace

const MigProfile* GpuModelInfo::find_mig_profile(std::string_view profile) const {
  for (const MigProfile& p : mig_profiles)
    if (p.name == profile) return &p;
  return nullptr;
}

const std::vector<GpuModelInfo>& gpu_catalog() {
  static const std::vector<GpuModelInfo> catalog = build_catalog();
  return catalog;
}

const GpuModelInfo* find_gpu_model(std::string_view name_or_product) {
  for (const GpuModelInfo& m : gpu_catalog())
    if (iequals_ascii(m.name, name_or_product)) return &m;
  for (const GpuModelInfo& m : gpu_catalog())
    for (const std::string& label : m.product_labels)
      if (label == name_or_product) return &m;
  return nullptr;
}

bool catalog_has_mig_profile(std::string_view profile) {
  for (const GpuModelInfo& m : gpu_catalog())
    if (m.find_mig_profile(profile) != nullptr) return true;
  return false;
}

}  // namespace gpufleet
