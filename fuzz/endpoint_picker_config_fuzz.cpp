// libFuzzer target: the inference routing objects reader (io::parse_endpoint_picker_text):
// EndpointPickerConfig, InferencePool, InferenceObjective (readers/serving/endpoint_picker_config.h).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/serving/endpoint_picker_config.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { io::parse_endpoint_picker_text(text, "fuzz.yaml"); });
  return 0;
}
