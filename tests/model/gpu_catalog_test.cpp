// GPU catalog: the twelve models, their memory and labels, lookup rules, and the MIG profile tables
// checked row by row against the NVIDIA MIG User Guide, "Supported MIG Profiles"
// (docs.nvidia.com/datacenter/tesla/mig-user-guide).
#include "model/gpu_catalog.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gpufleet {
namespace {

TEST(GpuCatalog, ModelsInOrderWithMemory) {
  struct Expected {
    std::string name;
    int64_t memory_mib;
    bool mig;
  };
  const std::vector<Expected> expected = {
      {"T4", 15360, false},         {"L4", 23034, false},          {"L40S", 46068, false},
      {"A10G", 23028, false},       {"A100-40GB", 40960, true},    {"A100-80GB", 81920, true},
      {"H100-80GB", 81559, true},   {"H200-141GB", 143771, true},  {"B200-180GB", 183359, true},
      {"V100-16GB", 16160, false},  {"V100-32GB", 32510, false},   {"A40", 46068, false},
  };
  const auto& catalog = gpu_catalog();
  ASSERT_EQ(catalog.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(catalog[i].name, expected[i].name);
    EXPECT_EQ(catalog[i].memory_mib, expected[i].memory_mib);
    EXPECT_EQ(catalog[i].mig_capable, expected[i].mig);
    EXPECT_EQ(catalog[i].mig_profiles.empty(), !expected[i].mig);
    EXPECT_FALSE(catalog[i].product_labels.empty());
  }
}

TEST(GpuCatalog, FindsByProductLabelExactly) {
  const std::vector<std::pair<std::string, std::string>> labels = {
      {"Tesla-T4", "T4"},
      {"NVIDIA-L4", "L4"},
      {"NVIDIA-L40S", "L40S"},
      {"NVIDIA-A10G", "A10G"},
      {"NVIDIA-A100-SXM4-40GB", "A100-40GB"},
      {"A100-SXM4-40GB", "A100-40GB"},
      {"NVIDIA-A100-PCIE-40GB", "A100-40GB"},
      {"NVIDIA-A100-SXM4-80GB", "A100-80GB"},
      {"NVIDIA-A100-80GB-PCIe", "A100-80GB"},
      {"NVIDIA-H100-80GB-HBM3", "H100-80GB"},
      {"NVIDIA-H100-PCIe", "H100-80GB"},
      {"NVIDIA-H200", "H200-141GB"},
      {"NVIDIA-H200-NVL", "H200-141GB"},
      {"NVIDIA-B200", "B200-180GB"},
      {"Tesla-V100-SXM2-16GB", "V100-16GB"},
      {"Tesla-V100-SXM2-32GB", "V100-32GB"},
      {"NVIDIA-A40", "A40"},
  };
  for (const auto& [label, model] : labels) {
    const GpuModelInfo* m = find_gpu_model(label);
    ASSERT_NE(m, nullptr) << label;
    EXPECT_EQ(m->name, model) << label;
  }
  // Product labels are exact: another case or GFD's derived suffixes do not match.
  EXPECT_EQ(find_gpu_model("nvidia-l4"), nullptr);
  EXPECT_EQ(find_gpu_model("NVIDIA-A10g"), nullptr);
  EXPECT_EQ(find_gpu_model("Tesla-T4-SHARED"), nullptr);
  EXPECT_EQ(find_gpu_model("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"), nullptr);
}

TEST(GpuCatalog, FindsByCanonicalNameIgnoringCase) {
  for (const GpuModelInfo& m : gpu_catalog()) {
    EXPECT_EQ(find_gpu_model(m.name), &m);
    std::string lower = m.name;
    for (char& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    EXPECT_EQ(find_gpu_model(lower), &m) << lower;
  }
  EXPECT_EQ(find_gpu_model("h200-141GB")->name, "H200-141GB");
}

TEST(GpuCatalog, UnknownModelIsNull) {
  for (const char* name : {"", "V100", "A100", "H100", "B200", "G2", "T4 ", " T4", "A100-80", "NVIDIA-H100"})
    EXPECT_EQ(find_gpu_model(name), nullptr) << '"' << name << '"';
}

TEST(GpuCatalog, LabelsAndNamesAreUnambiguous) {
  std::set<std::string> seen;
  for (const GpuModelInfo& m : gpu_catalog()) {
    EXPECT_TRUE(seen.insert(m.name).second) << m.name;
    for (const std::string& label : m.product_labels) EXPECT_TRUE(seen.insert(label).second) << label;
  }
}

// gpu-sharing.md s.1, "Profile names per model": 1g small, 1g large, 2g, 3g, 4g, 7g.
TEST(GpuCatalog, MigProfileNamesPerModel) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> names = {
      {"A100-40GB", {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}},
      {"A100-80GB", {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
      {"H100-80GB", {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
      {"H200-141GB", {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}},
      {"B200-180GB", {"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"}},
  };
  for (const auto& [model, profiles] : names) {
    const GpuModelInfo* m = find_gpu_model(model);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->mig_profiles.size(), profiles.size()) << model;
    for (size_t i = 0; i < profiles.size(); ++i) {
      EXPECT_EQ(m->mig_profiles[i].name, profiles[i]) << model;
      EXPECT_EQ(m->find_mig_profile(profiles[i]), &m->mig_profiles[i]) << model << ' ' << profiles[i];
    }
  }
  // Profile names are exact and per model.
  EXPECT_EQ(find_gpu_model("A100-80GB")->find_mig_profile("1g.5gb"), nullptr);
  EXPECT_EQ(find_gpu_model("A100-80GB")->find_mig_profile("1G.10GB"), nullptr);
  EXPECT_EQ(find_gpu_model("A100-80GB")->find_mig_profile("mig-1g.10gb"), nullptr);
  EXPECT_EQ(find_gpu_model("T4")->find_mig_profile("1g.10gb"), nullptr);
}

// gpu-sharing.md s.1 geometry table: GI id, memory slices, allowed starts, max count; compute = g.
TEST(GpuCatalog, MigGeometryMatchesReferenceTable) {
  struct Row {
    int gi_id;
    int compute;
    int memory;
    std::vector<int> starts;
    int max_count;
    bool media;
  };
  const std::vector<Row> rows = {
      {19, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 7, false},  // 1g small
      {20, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 1, true},   // 1g small +me
      {15, 1, 2, {0, 2, 4, 6}, 4, false},           // 1g large
      {14, 2, 2, {0, 2, 4}, 3, false},              // 2g
      {9, 3, 4, {0, 4}, 2, false},                  // 3g
      {5, 4, 4, {0}, 1, false},                     // 4g
      {0, 7, 8, {0}, 1, false},                     // 7g
  };
  for (const GpuModelInfo& m : gpu_catalog()) {
    if (!m.mig_capable) continue;
    ASSERT_EQ(m.mig_profiles.size(), rows.size()) << m.name;
    for (size_t i = 0; i < rows.size(); ++i) {
      const MigProfile& p = m.mig_profiles[i];
      SCOPED_TRACE(m.name + " " + p.name);
      EXPECT_EQ(p.gi_profile_id, rows[i].gi_id);
      EXPECT_EQ(p.compute_slices, rows[i].compute);
      EXPECT_EQ(p.memory_slices, rows[i].memory);
      EXPECT_EQ(p.starts, rows[i].starts);
      EXPECT_EQ(p.max_count, rows[i].max_count);
      EXPECT_EQ(p.media_extensions, rows[i].media);
      // The name's "<g>g." prefix is the compute slice count.
      EXPECT_EQ(p.name.substr(0, p.name.find('g')), std::to_string(p.compute_slices));
      for (int s : p.starts) EXPECT_LE(s + p.memory_slices, kMigMemorySlices);
    }
  }
}

}  // namespace
}  // namespace gpufleet
