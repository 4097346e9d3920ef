// libFuzzer target: the body of POST /v1/services/<ns>/<name>/observations
// (io::parse_scaler_observations). Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the
// expected rejection; anything else is a finding, and so is an accepted observation outside the limits.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "readers/kube_api/scaler_observation.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    for (const io::ScalerObservation& o : io::parse_scaler_observations(text, "fuzz.json")) {
      if (!(o.time_s >= 0 && o.time_s <= io::kScalerObservationLimits.max_time_s) ||
          !(o.request_rate_rps >= 0 && std::isfinite(o.request_rate_rps)) ||
          !(o.num_requests_waiting >= 0 && o.num_requests_running >= 0) ||
          (o.current_replicas && *o.current_replicas < 0))
        gpufleet::fuzz::invariant_failed("observation outside its limits");
    }
  });
  return 0;
}
