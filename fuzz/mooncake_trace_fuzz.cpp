// libFuzzer target: Mooncake JSON Lines trace (io::parse_mooncake_trace).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding. An accepted trace must have ids 0.. in order, non-decreasing arrivals, token
// counts within the limits and at most ceil(prompt / 512) hash ids per request.
#include <cstddef>
#include <cstdint>

#include "readers/traces/request_trace.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  std::vector<gpufleet::inference::Request> requests;
  if (!gpufleet::fuzz::reader_accepts([&] { requests = io::parse_mooncake_trace(text, "fuzz.jsonl"); })) return 0;
  if (requests.empty()) gpufleet::fuzz::invariant_failed("accepted an empty trace");
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& r = requests[i];
    if (r.id != i) gpufleet::fuzz::invariant_failed("ids not in order");
    if (r.arrival_s < 0 || (i > 0 && r.arrival_s < requests[i - 1].arrival_s)) gpufleet::fuzz::invariant_failed("arrivals out of order");
    if (r.prompt_tokens < 1 || r.prompt_tokens > io::kRequestTraceLimits.max_prompt_tokens ||
        r.output_tokens < 1 || r.output_tokens > io::kRequestTraceLimits.max_output_tokens)
      gpufleet::fuzz::invariant_failed("token count outside [1, limit]");
    if (r.prefix_hashes.size() > static_cast<size_t>((r.prompt_tokens + 511) / 512)) gpufleet::fuzz::invariant_failed("too many hash ids");
  }
  return 0;
}
