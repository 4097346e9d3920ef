// libFuzzer target: node-pool file, NodePoolSet (io::parse_pool_text), with the source positions.
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "readers/k8s/pool_file.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    std::vector<io::K8sNodeSource> sources;
    const auto pools = io::parse_pool_text(text, "fuzz.yaml", &sources);
    if (sources.size() != pools.size()) gpufleet::fuzz::invariant_failed("one source per pool");
  });
  return 0;
}
