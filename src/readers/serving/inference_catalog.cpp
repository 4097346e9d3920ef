#include "readers/serving/inference_catalog.h"

#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "readers/formats/document_kinds.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "model/gpu_catalog.h"
#include "serving_catalog_yaml.h"
#include "util/ascii.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

constexpr const char* kApiVersion = "gpufleet.io/v1";
constexpr const char* kKind = "ServingCatalog";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using detail::Field;
using detail::Source;

// A number in [min, max] (closed unless open_min: (min, max]).
double number_in(const Field& f, double min, double max, bool open_min = false) {
  const double v = f.number();
  if (v < min || v > max || (open_min && v == min))
    f.fail(fmt::format("{} is out of range {}{}, {}]", f.scalar(), open_min ? "(" : "[", min, max));
  return v;
}

int32_t int_in(const Field& f, int64_t min, int64_t max) { return static_cast<int32_t>(f.integer(min, max)); }

std::string lower(std::string_view s) { return ascii_lower(s); }

inference::LlmModel parse_model(const Field& m, std::map<std::string, std::string>& names) {
  m.require_map();
  m.only_keys({"name", "aliases", "params", "activeParams", "experts", "expertsPerToken", "layers", "hidden", "heads",
               "kvHeads", "headDim", "vocab", "maxContextTokens", "source"});
  inference::LlmModel model;
  const auto claim = [&](const Field& f, const std::string& name) {
    const auto [it, added] = names.emplace(lower(name), name);
    if (!added) f.fail(fmt::format("name '{}' is already used (by '{}'; names and aliases are unique ignoring case)", name, it->second));
  };
  const Field name = m["name"];
  model.name = name.required_str();
  claim(name, model.name);
  const Field aliases = m["aliases"];
  if (aliases.present() && !aliases.is_seq()) aliases.fail(fmt::format("expected a list, got {}", aliases.type()));
  for (size_t i = 0, n = aliases.size(); i < n; ++i) {
    const Field a = aliases.at(i);
    model.aliases.push_back(a.required_str());
    claim(a, model.aliases.back());
  }
  model.params = number_in(m["params"], 1e6, 1e13);
  const Field active = m["activeParams"];
  model.active_params = active.present() ? number_in(active, 1e6, model.params) : model.params;
  const Field experts = m["experts"];
  model.experts = experts.present() ? int_in(experts, 1, 1024) : 1;
  const Field per_token = m["expertsPerToken"];
  model.experts_per_token = per_token.present() ? int_in(per_token, 1, model.experts) : 1;
  if (model.experts > 1 && model.experts_per_token < model.experts && !(model.active_params < model.params))
    (active.present() ? active : m["params"]).fail("an MoE model (experts > expertsPerToken) needs activeParams below params");
  model.layers = int_in(m["layers"], 1, 1024);
  const Field hidden = m["hidden"];
  model.hidden = int_in(hidden, 1, 1 << 20);
  const Field heads = m["heads"];
  model.heads = int_in(heads, 1, 4096);
  const Field kv_heads = m["kvHeads"];
  model.kv_heads = int_in(kv_heads, 1, model.heads);
  if (model.heads % model.kv_heads != 0)
    kv_heads.fail(fmt::format("heads {} is not a multiple of kvHeads {}", model.heads, model.kv_heads));
  const Field head_dim = m["headDim"];
  if (head_dim.present()) {
    model.head_dim = int_in(head_dim, 1, 4096);
  } else {
    if (model.hidden % model.heads != 0)
      heads.fail(fmt::format("hidden {} is not a multiple of heads {}: give headDim", model.hidden, model.heads));
    model.head_dim = model.hidden / model.heads;
  }
  model.vocab = int_in(m["vocab"], 1, 1 << 24);
  model.max_context_tokens = int_in(m["maxContextTokens"], 1, 1 << 24);
  model.source = m["source"].required_str();
  return model;
}

inference::GpuPerformance parse_gpu(const Field& g) {
  g.require_map();
  g.only_keys({"name", "memoryBandwidthGBps", "bf16Tflops", "fp8Tflops", "bf16Supported", "interconnectGBps", "source"});
  inference::GpuPerformance gpu;
  const Field name = g["name"];
  const std::string given = name.required_str();
  const GpuModelInfo* info = find_gpu_model(given);
  if (info == nullptr || lower(info->name) != lower(given)) {
    std::string known;
    for (const GpuModelInfo& m : gpu_catalog()) known += known.empty() ? m.name : ", " + m.name;
    name.fail(fmt::format("unknown GPU '{}' (the GPU catalog's names: {})", given, known));
  }
  gpu.name = info->name;
  gpu.memory_bandwidth_gb_s = number_in(g["memoryBandwidthGBps"], 0, 1e5, true);
  gpu.bf16_tflops = number_in(g["bf16Tflops"], 0, 1e5, true);
  const Field fp8 = g["fp8Tflops"];
  gpu.fp8_tflops = fp8.present() ? number_in(fp8, 0, 1e5) : 0;
  gpu.bf16_supported = g["bf16Supported"].boolean(true);
  gpu.interconnect_gb_s = number_in(g["interconnectGBps"], 0, 1e5, true);
  gpu.source = g["source"].required_str();
  return gpu;
}

// An optional number: `def` when absent.
double opt_number(const Field& f, double def, double min, double max, bool open_min = false) {
  return f.present() ? number_in(f, min, max, open_min) : def;
}

// One set of latency constants: an engineVersions entry (`named`: name and source required) or the
// single `latency` block (optional; every key optional).
inference::LatencyConstants parse_latency(const Field& f, const inference::ServingCatalog& catalog, bool named) {
  inference::LatencyConstants lc;
  if (f.present() || named) {
    f.require_map();
    if (named)
      f.only_keys({"name", "source", "decodeBandwidthEfficiency", "prefillComputeEfficiency", "prefillComputeEfficiencyByGpu",
                   "stepOverheadSeconds", "perSequenceOverheadSeconds", "allreduceLatencySeconds", "timeSliceSwitchFraction",
                   "frontendSeconds", "frontendPerRequestSeconds", "frontendChatRequestSeconds", "frontendPerOutputTokenSeconds"});
    else
      f.only_keys({"decodeBandwidthEfficiency", "prefillComputeEfficiency", "prefillComputeEfficiencyByGpu",
                   "stepOverheadSeconds", "perSequenceOverheadSeconds", "allreduceLatencySeconds", "timeSliceSwitchFraction",
                   "frontendSeconds", "frontendPerRequestSeconds", "frontendChatRequestSeconds", "frontendPerOutputTokenSeconds"});
  }
  if (named) {
    // A named set states every constant of the roofline (a default would hide in it); the front end
    // and the time-slicing switch may be left out (0 and 0.05).
    for (const char* k : {"decodeBandwidthEfficiency", "prefillComputeEfficiency", "stepOverheadSeconds", "perSequenceOverheadSeconds",
                          "allreduceLatencySeconds"})
      if (!f[k].present()) f[k].fail("required field is missing");
    const Field name = f["name"];
    lc.engine_version = name.required_str();
    if (lc.engine_version.empty() || lc.engine_version.size() > 64) name.fail("expected a name of 1 to 64 characters");
    lc.source = f["source"].required_str();
  }
  lc.decode_bandwidth_efficiency = opt_number(f["decodeBandwidthEfficiency"], lc.decode_bandwidth_efficiency, 0, 1, true);
  lc.prefill_compute_efficiency = opt_number(f["prefillComputeEfficiency"], lc.prefill_compute_efficiency, 0, 1, true);
  if (const Field by_gpu = f["prefillComputeEfficiencyByGpu"]; by_gpu.present()) {
    by_gpu.require_map();
    by_gpu.each_entry([&](const std::string& gpu, const Field& v) {
      const inference::GpuPerformance* g = catalog.find_gpu(gpu);
      if (g == nullptr) v.fail(fmt::format("GPU '{}' is not in the catalog's gpus", gpu));
      lc.prefill_compute_efficiency_by_gpu.emplace_back(g->name, number_in(v, 0, 1, true));
    });
  }
  lc.step_overhead_s = opt_number(f["stepOverheadSeconds"], lc.step_overhead_s, 0, 10);
  lc.per_sequence_overhead_s = opt_number(f["perSequenceOverheadSeconds"], lc.per_sequence_overhead_s, 0, 1);
  lc.allreduce_latency_s = opt_number(f["allreduceLatencySeconds"], lc.allreduce_latency_s, 0, 1);
  lc.time_slice_switch_fraction = opt_number(f["timeSliceSwitchFraction"], lc.time_slice_switch_fraction, 0, 10);
  lc.frontend_s = opt_number(f["frontendSeconds"], lc.frontend_s, 0, 10);
  lc.frontend_per_request_s = opt_number(f["frontendPerRequestSeconds"], lc.frontend_per_request_s, 0, 1);
  lc.frontend_chat_request_s = opt_number(f["frontendChatRequestSeconds"], lc.frontend_chat_request_s, 0, 1);
  lc.frontend_per_output_token_s = opt_number(f["frontendPerOutputTokenSeconds"], lc.frontend_per_output_token_s, 0, 1);
  return lc;
}

}  // namespace

inference::ServingCatalog parse_serving_catalog_text(std::string_view text, const std::string& file_name) {
  Source src;
  src.file = file_name;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  const detail::YamlNode* doc = nullptr;
  for (const detail::YamlNode& d : docs) {
    if (d.type == detail::YamlType::kNull) continue;
    if (doc != nullptr) Field(d, "", src).fail("a serving catalog is one YAML document (found a second)");
    doc = &d;
  }
  if (doc == nullptr) detail::fail_without_kind(file_name, docs, kKind, kApiVersion);
  const Field root(*doc, "", src);
  root.require_map();
  root.only_keys({"apiVersion", "kind", "models", "gpus", "latency", "engineVersions", "memory", "coldStart"});
  const Field api = root["apiVersion"];
  if (api.str() != kApiVersion)
    api.fail(fmt::format("apiVersion '{}' is not supported (expected {})", api.str(), kApiVersion));
  const Field kind = root["kind"];
  if (kind.str() != kKind) kind.fail(fmt::format("kind '{}' is not supported (expected {})", kind.str(), kKind));

  inference::ServingCatalog catalog;
  const Field models = root["models"];
  if (!models.is_seq() || models.size() == 0)
    models.fail(models.present() ? "expected a non-empty list of models" : "required field is missing");
  std::map<std::string, std::string> names;
  for (size_t i = 0, n = models.size(); i < n; ++i) catalog.models.push_back(parse_model(models.at(i), names));

  const Field gpus = root["gpus"];
  if (!gpus.is_seq() || gpus.size() == 0)
    gpus.fail(gpus.present() ? "expected a non-empty list of GPUs" : "required field is missing");
  for (size_t i = 0, n = gpus.size(); i < n; ++i) {
    const Field g = gpus.at(i);
    inference::GpuPerformance gpu = parse_gpu(g);
    if (catalog.find_gpu(gpu.name) != nullptr) g["name"].fail(fmt::format("GPU '{}' is listed twice", gpu.name));
    catalog.gpus.push_back(std::move(gpu));
  }

  const Field latency = root["latency"];
  const Field versions = root["engineVersions"];
  if (latency.present() && versions.present())
    versions.fail("give either one latency block or engineVersions, not both");
  if (versions.present()) {
    if (!versions.is_seq() || versions.size() == 0) versions.fail("expected a non-empty list of engine versions");
    for (size_t i = 0, n = versions.size(); i < n; ++i) {
      const Field v = versions.at(i);
      inference::LatencyConstants set = parse_latency(v, catalog, true);
      for (const inference::LatencyConstants& other : catalog.engine_versions)
        if (iequals_ascii(other.engine_version, set.engine_version))
          v["name"].fail(fmt::format("engine version '{}' is listed twice", set.engine_version));
      catalog.engine_versions.push_back(std::move(set));
    }
  } else {
    catalog.engine_versions.push_back(parse_latency(latency, catalog, false));
  }
  catalog.latency = catalog.engine_versions.front();

  const Field memory = root["memory"];
  memory.require_map();
  memory.only_keys({"activationBytesPerTokenHidden", "activationBytesPerSeqVocab", "nonTorchGiB",
                    "nonTorchTensorParallelGiB", "cudaReservedFraction"});
  inference::MemoryConstants& mc = catalog.memory;
  mc.activation_bytes_per_token_hidden = number_in(memory["activationBytesPerTokenHidden"], 0, 1e4);
  mc.activation_bytes_per_seq_vocab = number_in(memory["activationBytesPerSeqVocab"], 0, 1e4);
  mc.non_torch_bytes = number_in(memory["nonTorchGiB"], 0, 1024) * kGiB;
  mc.non_torch_tensor_parallel_bytes = number_in(memory["nonTorchTensorParallelGiB"], 0, 1024) * kGiB;
  const Field reserved = memory["cudaReservedFraction"];
  mc.cuda_reserved_fraction = number_in(reserved, 0, 0.5);
  if (mc.cuda_reserved_fraction == 0.5) reserved.fail("0.5 is out of range [0, 0.5)");

  const Field cold = root["coldStart"];
  if (cold.present()) {
    cold.require_map();
    cold.only_keys({"imagePullSeconds", "weightLoadBandwidthGBps", "cachedWeightLoadBandwidthGBps", "engineStartSeconds",
                    "snapshotRestoreSeconds"});
  }
  inference::ColdStartDefaults& cs = catalog.cold_start;
  if (const Field f = cold["imagePullSeconds"]; f.present()) cs.image_pull_s = detail::seconds(f);
  cs.weight_load_bandwidth_gb_s = opt_number(cold["weightLoadBandwidthGBps"], cs.weight_load_bandwidth_gb_s, 0, 1e5, true);
  cs.cached_weight_load_bandwidth_gb_s =
      opt_number(cold["cachedWeightLoadBandwidthGBps"], cs.cached_weight_load_bandwidth_gb_s, 0, 1e5, true);
  if (const Field f = cold["engineStartSeconds"]; f.present()) cs.engine_start_s = detail::seconds(f);
  if (const Field f = cold["snapshotRestoreSeconds"]; f.present()) cs.snapshot_restore_s = detail::seconds(f);
  return catalog;
}

inference::ServingCatalog load_serving_catalog(const std::string& path) {
  return parse_serving_catalog_text(read_yaml_file(path), path);
}

const inference::ServingCatalog& builtin_serving_catalog() {
  static const inference::ServingCatalog catalog =
      parse_serving_catalog_text(generated::kServingCatalogYaml, std::string(generated::kServingCatalogFile));
  return catalog;
}

}  // namespace gpufleet::io
