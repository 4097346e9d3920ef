// libFuzzer target: simulator workload (io::parse_sim_workload_text).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/sim_workload.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  // The pools of examples/simulate/pools.yaml and sharing-pools.yaml (so their workloads' seeds go
  // deep), plus the names the hand-made seeds in fuzz/corpus/sim_workload_fuzz use.
  static const std::vector<std::string> kPools = {"inference-l4", "training-h100", "training-h100-spot",
                                                  "dev-a10g", "h100-mig", "l4-shared", "gpu-pool", "cpu"};
  gpufleet::fuzz::reader_accepts([&] { io::parse_sim_workload_text(text, "fuzz.yaml", kPools); });
  return 0;
}
