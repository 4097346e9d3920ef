// libFuzzer target: the current cluster `gpufleet plan --current` reads (io::parse_current_cluster_text):
// `kubectl get nodes -o json` or a node-pool file. Build and run: scripts/fuzz (fuzz/CMakeLists.txt).
// InputError is the expected rejection; anything else is a finding, and so is an accepted cluster that
// breaks what the reader promises (readers/plan/current_cluster.h, inputs/plan/current_cluster.h): at
// least one entry, node and committed counts >= 0, prices (when given) finite and >= 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "readers/plan/current_cluster.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

void check(const gpufleet::plan::CurrentCluster& c) {
  if (c.entries.empty()) gpufleet::fuzz::invariant_failed("an accepted cluster without entries");
  for (const gpufleet::plan::CurrentNodes& e : c.entries) {
    if (e.nodes < 0 || e.committed < 0) gpufleet::fuzz::invariant_failed("a negative node count");
    for (const auto& p : {e.on_demand_usd_per_hour, e.spot_usd_per_hour, e.reserved_usd_per_hour})
      if (p && !(std::isfinite(*p) && *p >= 0)) gpufleet::fuzz::invariant_failed("a price that is not finite and >= 0");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    std::vector<std::string> warnings;
    check(io::parse_current_cluster_text(text, "fuzz.yaml", warnings));
  });
  return 0;
}
