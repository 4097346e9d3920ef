// libFuzzer target: measured step-time table (io::parse_step_profile).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding. An accepted table has rows within the limits, and the profile step-time model
// built from it predicts a positive, finite time for any batch.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "inference/step_time.h"
#include "readers/serving/step_profile.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  std::vector<gpufleet::inference::StepProfileRow> rows;
  if (!gpufleet::fuzz::reader_accepts([&] { rows = io::parse_step_profile(text, "fuzz.csv"); })) return 0;
  if (rows.empty()) gpufleet::fuzz::invariant_failed("accepted an empty table");
  for (const auto& r : rows) {
    if (r.num_seqs < 1 || r.tokens < 0 || !(r.step_s > 0) || r.step_s > io::kStepProfileLimits.max_step_s)
      gpufleet::fuzz::invariant_failed("row outside the limits");
  }
  const auto model = gpufleet::inference::make_profile_step_time(rows);
  gpufleet::inference::StepBatch b;
  b.num_seqs = 3;
  b.decode_tokens = 3;
  b.prefill_tokens = 100;
  const double s = model->step_seconds(b);
  if (!(s > 0) || !std::isfinite(s)) gpufleet::fuzz::invariant_failed("non-positive or infinite step time");
  return 0;
}
