// libFuzzer target: the serving catalog (io::parse_serving_catalog_text). Build and run: scripts/fuzz
// (fuzz/CMakeLists.txt). InputError is the expected rejection; anything else is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "readers/serving/inference_catalog.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    const auto catalog = io::parse_serving_catalog_text(text, "fuzz.yaml");
    if (catalog.models.empty() || catalog.gpus.empty()) gpufleet::fuzz::invariant_failed("a catalog has models and GPUs");
    for (const auto& m : catalog.models)
      if (!(m.params > 0) || m.head_dim < 1 || m.kv_heads < 1 || m.heads % m.kv_heads != 0 || m.active_params > m.params)
        gpufleet::fuzz::invariant_failed("model figures validated");
    for (const auto& g : catalog.gpus)
      if (!(g.memory_bandwidth_gb_s > 0) || !(g.bf16_tflops > 0) || !std::isfinite(g.fp8_tflops))
        gpufleet::fuzz::invariant_failed("GPU figures validated");
    if (catalog.engine_versions.empty() || catalog.latency.engine_version != catalog.engine_versions.front().engine_version)
      gpufleet::fuzz::invariant_failed("the first engine version is in force");
    for (const auto& v : catalog.engine_versions) {
      if (!(v.decode_bandwidth_efficiency > 0 && v.decode_bandwidth_efficiency <= 1) || !(v.frontend_s >= 0) ||
          !(v.frontend_per_request_s >= 0) || !(v.frontend_chat_request_s >= 0 && v.frontend_chat_request_s <= 1) ||
          !(v.frontend_per_output_token_s >= 0 && v.frontend_per_output_token_s <= 1))
        gpufleet::fuzz::invariant_failed("latency constants validated");
      for (const auto& [gpu, mfu] : v.prefill_compute_efficiency_by_gpu)
        if (catalog.find_gpu(gpu) == nullptr || !(mfu > 0 && mfu <= 1)) gpufleet::fuzz::invariant_failed("per-GPU MFU validated");
    }
  });
  return 0;
}
