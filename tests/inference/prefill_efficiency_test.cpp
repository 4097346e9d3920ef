// The vllm-v1 prefill MFU per GPU in data/inference/catalog.yaml (prefillComputeEfficiencyByGpu),
// recomputed from Vidur's measured operator profiles (microsoft/vidur data/profiling/compute/<gpu>/
// */mlp.csv, read from ../shared/traces/vidur-profiling or $GPUFLEET_TRACES): per row with tensor
// parallel 1 and 512 to 4,096 tokens, the layer's linear FLOPs (2 x tokens x (hidden x (heads + 2 x
// kv_heads) x head_dim + hidden x hidden + (3 if gated else 2) x hidden x mlp_hidden)) over the
// summed median time of every non-attention operator of the layer, over the GPU's dense peak; the
// median over all rows of the GPU. Skips when the profiles are absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "readers/serving/inference_catalog.h"

namespace gpufleet::inference {
namespace {

namespace fs = std::filesystem;

fs::path vidur_dir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GPUFLEET_TRACES"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back(fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "traces");
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "vidur-profiling" / "compute", ec)) return c / "vidur-profiling" / "compute";
  }
  return {};
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

/// Every row's MFU of one GPU's profiles (peak in FLOP/s).
std::vector<double> row_mfus(const fs::path& gpu_dir, double peak) {
  std::vector<double> out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(gpu_dir)) {
    if (e.path().filename() != "mlp.csv") continue;
    std::ifstream in(e.path());
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = split(line);
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    while (std::getline(in, line)) {
      const std::vector<std::string> c = split(line);
      if (c.size() != header.size()) continue;
      auto num = [&](const std::string& k) { return std::stod(c.at(col.at(k))); };
      if (num("num_tensor_parallel_workers") != 1) continue;
      const double n = num("num_tokens");
      if (n < 512 || n > 4096) continue;
      const double h = num("n_embd"), heads = num("n_head"), kv = num("n_kv_head"), ff = num("n_expanded_embd");
      const std::string gated = c.at(col.at("use_gated_mlp"));
      const double head_dim = h / heads;
      const double linear = 2 * n * (h * (heads + 2 * kv) * head_dim + h * h + (gated == "True" || gated == "true" || gated == "1" ? 3 : 2) * h * ff);
      double t_ms = 0;
      for (const auto& [k, i] : col)
        if (k.size() > 7 && k.compare(k.size() - 7, 7, ".median") == 0 && k != "time_stats.emb.median") t_ms += std::stod(c.at(i));
      out.push_back(linear / (t_ms * 1e-3) / peak);
    }
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST(PrefillEfficiency, CatalogFiguresAreVidurMedians) {
  const fs::path dir = vidur_dir();
  if (dir.empty()) GTEST_SKIP() << "Vidur profiles not found (../shared/traces/vidur-profiling or $GPUFLEET_TRACES)";
  ServingCatalog cat = io::builtin_serving_catalog();
  cat.select_engine_version("vllm-v1");
  // Vidur's folder -> the serving catalog's GPU (its dense bf16 peak is the one the roofline uses).
  for (const auto& [folder, gpu] : {std::pair{"h100", "H100-80GB"}, std::pair{"a100", "A100-80GB"}, std::pair{"a40", "A40"}}) {
    const std::vector<double> mfu = row_mfus(dir / folder, cat.gpu(gpu).bf16_tflops * 1e12);
    ASSERT_GT(mfu.size(), 100u) << folder;
    EXPECT_NEAR(cat.latency.prefill_efficiency(gpu), median(mfu), 0.001) << gpu;
  }
  // H200 and A100-40GB have the H100's and the A100-80GB's compute.
  EXPECT_EQ(cat.latency.prefill_efficiency("H200-141GB"), cat.latency.prefill_efficiency("H100-80GB"));
  EXPECT_EQ(cat.latency.prefill_efficiency("A100-40GB"), cat.latency.prefill_efficiency("A100-80GB"));
  // A GPU Vidur did not profile: the median of the three profiled.
  EXPECT_EQ(cat.latency.prefill_efficiency("L4"), 0.652);
}

}  // namespace
}  // namespace gpufleet::inference
