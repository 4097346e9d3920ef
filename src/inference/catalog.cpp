#include "inference/catalog.h"

namespace gpufleet::inference {
namespace {

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

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

}  // namespace gpufleet::inference
