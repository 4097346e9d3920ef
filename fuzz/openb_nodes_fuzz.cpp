// libFuzzer target: openb node list CSV (io::parse_openb_nodes).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/traces/openb_csv.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { io::parse_openb_nodes(text, "fuzz.csv"); });
  return 0;
}
