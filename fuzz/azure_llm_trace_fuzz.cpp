// libFuzzer target: Azure LLM inference trace CSV (io::parse_azure_llm_trace).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding. An accepted trace must have ids 0.. in order, arrivals from 0 and non-decreasing,
// and token counts within the limits.
#include <cstddef>
#include <cstdint>

#include "readers/traces/request_trace.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  std::vector<gpufleet::inference::Request> requests;
  if (!gpufleet::fuzz::reader_accepts([&] { requests = io::parse_azure_llm_trace(text, "fuzz.csv"); })) return 0;
  if (requests.empty() || requests[0].arrival_s != 0) gpufleet::fuzz::invariant_failed("first arrival is not 0");
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& r = requests[i];
    if (r.id != i) gpufleet::fuzz::invariant_failed("ids not in order");
    if (i > 0 && r.arrival_s < requests[i - 1].arrival_s) gpufleet::fuzz::invariant_failed("arrivals out of order");
    if (r.prompt_tokens < 1 || r.prompt_tokens > io::kRequestTraceLimits.max_prompt_tokens ||
        r.output_tokens < 1 || r.output_tokens > io::kRequestTraceLimits.max_output_tokens)
      gpufleet::fuzz::invariant_failed("token count outside [1, limit]");
  }
  return 0;
}
