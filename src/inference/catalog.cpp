#include "inference/catalog.h"

#include <stdexcept>

#include <fmt/format.h>

#include "util/ascii.h"

namespace gpufleet::inference {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

int32_t precision_bytes(Precision p) { return p == Precision::kFp8 ? 1 : 2; }

const LlmModel* ServingCatalog::find_model(std::string_view name) const {
  for (const LlmModel& m : models) {
    if (iequals_ascii(m.name, name)) return &m;
    for (const std::string& a : m.aliases)
      if (iequals_ascii(a, name)) return &m;
  }
  return nullptr;
}

const GpuPerformance* ServingCatalog::find_gpu(std::string_view name) const {
  for (const GpuPerformance& g : gpus)
    if (iequals_ascii(g.name, name)) return &g;
  return nullptr;
}

double kv_bytes_per_token(const LlmModel& model, Precision kv_dtype) {
  return 2.0 * model.layers * model.kv_heads * model.head_dim * precision_bytes(kv_dtype);
}

double weight_bytes(const LlmModel& model, Precision dtype) { return model.params * precision_bytes(dtype); }

const LlmModel& ServingCatalog::model(std::string_view name) const {
  if (const LlmModel* m = find_model(name)) return *m;
  throw std::invalid_argument(fmt::format("model '{}' is not in the serving catalog", name));
}

const GpuPerformance& ServingCatalog::gpu(std::string_view name) const {
  if (const GpuPerformance* g = find_gpu(name)) return *g;
  throw std::invalid_argument(fmt::format("GPU '{}' is not in the serving catalog", name));
}

double LatencyConstants::prefill_efficiency(std::string_view gpu) const {
  for (const auto& [name, mfu] : prefill_compute_efficiency_by_gpu)
    if (iequals_ascii(name, gpu)) return mfu;
  return prefill_compute_efficiency;
}

void ServingCatalog::select_engine_version(std::string_view name) {
  std::string known;
  for (const LatencyConstants& set : engine_versions) {
    if (iequals_ascii(set.engine_version, name)) {
      latency = set;
      return;
    }
    known += (known.empty() ? "" : ", ") + set.engine_version;
  }
  throw std::invalid_argument(fmt::format("engine version '{}' is not in the serving catalog (it has: {})", name, known));
}

}  // namespace gpufleet::inference
