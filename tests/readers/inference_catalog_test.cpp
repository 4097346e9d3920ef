// The serving catalog: the built-in data/inference/catalog.yaml (readers/serving/inference_catalog.h) and the
// reader's validation (file, line, column and field of each error), plus inference/catalog.h's
// lookups and per-token sizes.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "support/expect_input_error.h"
#include "inference/catalog.h"
#include "readers/serving/inference_catalog.h"
#include "model/gpu_catalog.h"
#include "util/input_error.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using inference::Precision;
using inference::ServingCatalog;

TEST(InferenceCatalog, BuiltinParsesWithEveryModelAndGpu) {
  const ServingCatalog& c = io::builtin_serving_catalog();
  ASSERT_EQ(c.models.size(), 14u);
  for (const char* name : {"Llama-3.1-8B", "Llama-3.1-70B", "Llama-2-70B", "Mistral-7B-v0.3", "Qwen2.5-7B", "Qwen2.5-72B",
                           "Mixtral-8x7B", "Llama-3.2-1B", "Qwen2-7B", "Qwen2.5-0.5B", "Qwen3-1.7B", "Qwen3-8B", "Qwen3-14B",
                           "Qwen3-32B"})
    EXPECT_NE(c.find_model(name), nullptr) << name;
  // Every GPU of the GPU catalog has its performance figures, under the same name.
  ASSERT_EQ(c.gpus.size(), gpu_catalog().size());
  for (const GpuModelInfo& g : gpu_catalog()) {
    const inference::GpuPerformance* p = c.find_gpu(g.name);
    ASSERT_NE(p, nullptr) << g.name;
    EXPECT_EQ(p->name, g.name);
    EXPECT_GT(p->memory_bandwidth_gb_s, 0);
    EXPECT_FALSE(p->source.empty());
  }
  EXPECT_FALSE(c.find_gpu("T4")->bf16_supported);
  EXPECT_EQ(c.find_gpu("A100-80GB")->fp8_tflops, 0);
  EXPECT_EQ(c.find_gpu("H100-80GB")->bf16_tflops, 989);
  // Constants as the file states them.
  EXPECT_DOUBLE_EQ(c.memory.activation_bytes_per_token_hidden, 2.69);
  EXPECT_DOUBLE_EQ(c.memory.non_torch_bytes, 0.13 * 1073741824.0);
  // Engine versions: vllm-v1 first and in force, then the 2024 set.
  ASSERT_EQ(c.engine_versions.size(), 2u);
  EXPECT_EQ(c.latency.engine_version, "vllm-v1");
  EXPECT_DOUBLE_EQ(c.latency.decode_bandwidth_efficiency, 0.7254);
  EXPECT_DOUBLE_EQ(c.latency.prefill_efficiency("H100-80GB"), 0.601);
  EXPECT_DOUBLE_EQ(c.latency.frontend_per_request_s, 0.00001);
  EXPECT_DOUBLE_EQ(c.latency.frontend_chat_request_s, 0.03638);
  EXPECT_DOUBLE_EQ(c.latency.frontend_per_output_token_s, 0);
  EXPECT_EQ(c.engine_versions[1].engine_version, "vllm-v0-2024");
  EXPECT_DOUBLE_EQ(c.engine_versions[1].decode_bandwidth_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.engine_versions[1].prefill_efficiency("H100-80GB"), 0.333);
  EXPECT_DOUBLE_EQ(c.cold_start.snapshot_restore_s, 10);
}

TEST(InferenceCatalog, FileOnDiskIsTheBuiltin) {
  const ServingCatalog file = io::load_serving_catalog(GPUFLEET_SOURCE_DIR "/data/inference/catalog.yaml");
  const ServingCatalog& builtin = io::builtin_serving_catalog();
  ASSERT_EQ(file.models.size(), builtin.models.size());
  for (size_t i = 0; i < file.models.size(); ++i) {
    EXPECT_EQ(file.models[i].name, builtin.models[i].name);
    EXPECT_EQ(file.models[i].params, builtin.models[i].params);
  }
  EXPECT_EQ(file.latency.step_overhead_s, builtin.latency.step_overhead_s);
}

TEST(InferenceCatalog, AliasesAndCaseFindTheModel) {
  const ServingCatalog& c = io::builtin_serving_catalog();
  EXPECT_EQ(c.find_model("meta-llama/Llama-3.1-8B-Instruct")->name, "Llama-3.1-8B");
  EXPECT_EQ(c.find_model("META-LLAMA/llama-3.1-8b-INSTRUCT")->name, "Llama-3.1-8B");
  EXPECT_EQ(c.find_model("mistralai/Mistral-7B-Instruct-v0.3")->name, "Mistral-7B-v0.3");
  EXPECT_EQ(c.find_model("Qwen/Qwen2.5-7B-Instruct")->name, "Qwen2.5-7B");
  EXPECT_EQ(c.find_model("llama-3.2-1b")->name, "Llama-3.2-1B");
  EXPECT_EQ(c.find_model("Llama-3.1-8"), nullptr);
  EXPECT_EQ(c.find_gpu("h100-80gb")->name, "H100-80GB");
  EXPECT_EQ(c.find_gpu("NVIDIA-H100-80GB-HBM3"), nullptr);  // product labels are the GPU catalog's business
}

TEST(InferenceCatalog, ModelShapesAndSizes) {
  const ServingCatalog& c = io::builtin_serving_catalog();
  const inference::LlmModel& l8 = *c.find_model("Llama-3.1-8B");
  // 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 B = 128 KiB per token; 16 tokens = 2 MiB,
  // as vLLM issue 10517's 3.81 GiB -> 1,952 blocks.
  EXPECT_EQ(inference::kv_bytes_per_token(l8, Precision::kBf16), 131072);
  EXPECT_EQ(inference::kv_bytes_per_token(l8, Precision::kFp8), 65536);
  EXPECT_DOUBLE_EQ(inference::weight_bytes(l8, Precision::kBf16), 16.06e9);
  // Llama-3.1-70B: 2 x 80 x 8 x 128 x 2 = 327,680 B; Qwen2.5-7B: 2 x 28 x 4 x 128 x 2 = 57,344 B;
  // Llama-3.2-1B (head_dim 64): 2 x 16 x 8 x 64 x 2 = 32,768 B.
  EXPECT_EQ(inference::kv_bytes_per_token(*c.find_model("Llama-3.1-70B"), Precision::kBf16), 327680);
  EXPECT_EQ(inference::kv_bytes_per_token(*c.find_model("Qwen2.5-7B"), Precision::kBf16), 57344);
  EXPECT_EQ(inference::kv_bytes_per_token(*c.find_model("Llama-3.2-1B"), Precision::kBf16), 32768);
  const inference::LlmModel& mx = *c.find_model("Mixtral-8x7B");
  EXPECT_EQ(mx.params, 46.7e9);
  EXPECT_EQ(mx.active_params, 12.9e9);
  EXPECT_EQ(mx.experts, 8);
  EXPECT_EQ(mx.experts_per_token, 2);
  EXPECT_EQ(l8.active_params, l8.params);  // dense: default params
  EXPECT_EQ(l8.head_dim, 128);             // derived hidden / heads
  EXPECT_STREQ(inference::precision_name(Precision::kFp8), "fp8");
  EXPECT_EQ(inference::precision_bytes(Precision::kFp16), 2);
}

// A minimal valid catalog; lines are 1-based as in error positions.
const char* const kMinimal =
    "apiVersion: gpufleet.io/v1\n"      // 1
    "kind: ServingCatalog\n"            // 2
    "models:\n"                         // 3
    "- name: M\n"                       // 4
    "  aliases: [org/M]\n"              // 5
    "  params: 1e9\n"                   // 6
    "  layers: 2\n"                     // 7
    "  hidden: 64\n"                    // 8
    "  heads: 4\n"                      // 9
    "  kvHeads: 2\n"                    // 10
    "  vocab: 100\n"                    // 11
    "  maxContextTokens: 4096\n"        // 12
    "  source: test\n"                  // 13
    "gpus:\n"                           // 14
    "- name: L4\n"                      // 15
    "  memoryBandwidthGBps: 300\n"      // 16
    "  bf16Tflops: 121\n"               // 17
    "  interconnectGBps: 32\n"          // 18
    "  source: test\n"                  // 19
    "memory:\n"                         // 20
    "  activationBytesPerTokenHidden: 2\n"  // 21
    "  activationBytesPerSeqVocab: 40\n"    // 22
    "  nonTorchGiB: 0.1\n"                  // 23
    "  nonTorchTensorParallelGiB: 0.4\n"    // 24
    "  cudaReservedFraction: 0.01\n";       // 25

// kMinimal with line `line` (1-based) replaced by `text`.
std::string edit(int line, const std::string& text) {
  std::string out;
  std::string src = kMinimal;
  int n = 1;
  size_t pos = 0;
  while (pos < src.size()) {
    const size_t end = src.find('\n', pos);
    const std::string l = src.substr(pos, end - pos);
    out += (n == line ? text : l) + "\n";
    pos = end + 1;
    ++n;
  }
  return out;
}

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
  testing::expect_input_error([&] { io::parse_serving_catalog_text(text, "cat.yaml"); }, "cat.yaml", line, column, field, fragment);
}

TEST(InferenceCatalog, MinimalFileAndDefaults) {
  const ServingCatalog c = io::parse_serving_catalog_text(kMinimal, "cat.yaml");
  ASSERT_EQ(c.models.size(), 1u);
  EXPECT_EQ(c.models[0].head_dim, 16);  // 64 / 4
  EXPECT_EQ(c.models[0].active_params, 1e9);
  EXPECT_EQ(c.gpus[0].fp8_tflops, 0);
  EXPECT_TRUE(c.gpus[0].bf16_supported);
  EXPECT_DOUBLE_EQ(c.memory.non_torch_tensor_parallel_bytes, 0.4 * 1073741824.0);
  EXPECT_DOUBLE_EQ(c.latency.step_overhead_s, inference::LatencyConstants{}.step_overhead_s);  // absent: defaults
  EXPECT_DOUBLE_EQ(c.cold_start.image_pull_s, inference::ColdStartDefaults{}.image_pull_s);
}

TEST(InferenceCatalog, BadFilesNameFileLineColumnAndField) {
  expect_error(edit(7, "  layer: 2"), 7, 3, "models[0].layer", "unknown key 'layer'");
  expect_error(edit(6, "  params: 12 billion"), 6, 11, "models[0].params", "'12 billion' is not a number");
  expect_error(edit(6, "  params: -1e9"), 6, 11, "models[0].params", "out of range");
  expect_error(edit(10, "  kvHeads: 3"), 10, 12, "models[0].kvHeads", "heads 4 is not a multiple of kvHeads 3");
  expect_error(edit(10, "  kvHeads: 8"), 10, 12, "models[0].kvHeads", "out of range");
  expect_error(edit(12, "  maxContextTokens: 0"), 12, 21, "models[0].maxContextTokens", "out of range");
  expect_error(edit(5, "  aliases: [org/M, m]"), 5, 20, "models[0].aliases[1]", "name 'm' is already used");
  expect_error(edit(13, "  source: \"\""), 13, 11, "models[0].source", "must not be empty");
  expect_error(edit(13, "  expertsPerToken: 1"), 4, 3, "models[0].source", "required field is missing");
  expect_error(edit(15, "- name: V100"), 15, 9, "gpus[0].name", "unknown GPU 'V100'");
  expect_error(edit(15, "- name: NVIDIA-L4"), 15, 9, "gpus[0].name", "unknown GPU");  // a product label is not a name
  expect_error(edit(16, "  memoryBandwidthGBps: 0"), 16, 24, "gpus[0].memoryBandwidthGBps", "out of range (0");
  expect_error(edit(17, "  bf16Tflops: lots"), 17, 15, "gpus[0].bf16Tflops", "is not a number");
  expect_error(edit(25, "  cudaReservedFraction: 0.5"), 25, 25, "memory.cudaReservedFraction", "out of range");
  expect_error(edit(25, "  cudaReserved: 0.01"), 25, 3, "memory.cudaReserved", "unknown key");
  expect_error(std::string(kMinimal) + "latency: {decodeBandwidthEfficiency: 1.5}\n", 26, 38, "latency.decodeBandwidthEfficiency", "out of range");
  expect_error(std::string(kMinimal) + "coldStart: {imagePullSeconds: -5}\n", 26, 31, "coldStart.imagePullSeconds", "negative");
  expect_error(edit(2, "kind: NodePoolSet"), 2, 7, "kind", "kind 'NodePoolSet' is not supported");
  expect_error(edit(1, "apiVersion: v1"), 1, 13, "apiVersion", "not supported");
  expect_error(edit(1, "extra: 1"), 1, 1, "extra", "unknown key 'extra'");
  expect_error(edit(4, "- name: M\n  experts: 8\n  expertsPerToken: 2"), 8, 11, "models[0].params",
               "needs activeParams below params");
  expect_error(std::string(kMinimal) + "---\nkind: ServingCatalog\n", 27, 1, "", "one YAML document");
  expect_error("", 0, 0, "kind", "the file is empty: expected a ServingCatalog (gpufleet.io/v1)");
  expect_error("models: [\n", 2, 1, "", "YAML syntax error");
}

// The constants an engineVersions entry must state besides decodeBandwidthEfficiency.
const std::string kRest =
    "prefillComputeEfficiency: 0.5, stepOverheadSeconds: 0.001, perSequenceOverheadSeconds: 0.00001, allreduceLatencySeconds: 0.00002";

TEST(InferenceCatalog, EngineVersionsAreNamedSetsTheFirstInForce) {
  const std::string text = std::string(kMinimal) +
                           "engineVersions:\n"                                                  // 26
                           "- {name: new, source: s, decodeBandwidthEfficiency: 0.8, frontendSeconds: 0.004,\n"  // 27
                           "   frontendPerRequestSeconds: 0.002, prefillComputeEfficiencyByGpu: {l4: 0.6}, " + kRest + "}\n"  // 28
                           "- {name: old, source: s, decodeBandwidthEfficiency: 0.7, " + kRest + "}\n";  // 29
  ServingCatalog c = io::parse_serving_catalog_text(text, "cat.yaml");
  ASSERT_EQ(c.engine_versions.size(), 2u);
  EXPECT_EQ(c.latency.engine_version, "new");
  EXPECT_DOUBLE_EQ(c.latency.decode_bandwidth_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(c.latency.prefill_efficiency("L4"), 0.6);   // the GPU's figure, its name as the catalog spells it
  EXPECT_DOUBLE_EQ(c.latency.prefill_efficiency("H100-80GB"), 0.5);
  EXPECT_DOUBLE_EQ(c.latency.frontend_s, 0.004);
  c.select_engine_version("OLD");  // ASCII case ignored
  EXPECT_DOUBLE_EQ(c.latency.decode_bandwidth_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.latency.frontend_s, 0);
  try {
    c.select_engine_version("v2");
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "engine version 'v2' is not in the serving catalog (it has: new, old)");
  }
  // A single latency block is one set, "custom".
  EXPECT_EQ(io::parse_serving_catalog_text(kMinimal, "cat.yaml").latency.engine_version, "custom");

  const std::string head = std::string(kMinimal) + "engineVersions:\n";
  expect_error(head + "- {name: a, source: s, prefillComputeEfficiencyByGpu: {H100-80GB: 0.6}, " + kRest + ", decodeBandwidthEfficiency: 0.7}\n", 27, 67,
               "engineVersions[0].prefillComputeEfficiencyByGpu.H100-80GB", "GPU 'H100-80GB' is not in the catalog's gpus");
  expect_error(head + "- {name: a, source: s, frontendSeconds: -1, " + kRest + ", decodeBandwidthEfficiency: 0.7}\n", 27, 41,
               "engineVersions[0].frontendSeconds", "out of range");
  expect_error(head + "- {name: a, source: s, decodeBandwidthEfficiency: 0.7, " + kRest + "}\n- {name: A, source: s, decodeBandwidthEfficiency: 0.7, " +
                   kRest + "}\n",
               28, 10, "engineVersions[1].name", "listed twice");
  expect_error(head + "- {name: a, source: s, " + kRest + "}\n", 27, 3, "engineVersions[0].decodeBandwidthEfficiency",
               "required field is missing");
  expect_error(head + "- {name: a, source: s, mbu: 0.7}\n", 27, 24, "engineVersions[0].mbu", "unknown key 'mbu'");
  expect_error(std::string(kMinimal) + "engineVersions: []\n", 26, 17, "engineVersions", "non-empty list");
  expect_error(std::string(kMinimal) + "latency: {}\nengineVersions: [{name: a, source: s}]\n", 27, 17, "engineVersions",
               "either one latency block or engineVersions");
}

TEST(InferenceCatalog, UnreadableFileIsAnInputError) {
  EXPECT_THROW(io::load_serving_catalog("/nonexistent/catalog.yaml"), InputError);
}

}  // namespace
}  // namespace gpufleet
