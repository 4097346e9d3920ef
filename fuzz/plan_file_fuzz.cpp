// libFuzzer target: plan files (io::parse_plan_text), the price catalog and the constraints of
// `gpufleet plan`, alone and in one file. Build and run: scripts/fuzz (fuzz/CMakeLists.txt).
// InputError is the expected rejection; anything else is a finding. What is read must hold what the
// reader promises (plan/plan_inputs.h): a finding otherwise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "readers/plan/plan_file.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

// The promises of a catalog that was read: types and offerings present, GPUs with a model or none (a
// CPU-only type), prices positive and none above on-demand.
void check(const io::PlanFile& file) {
  if (file.has_catalog && file.catalog.instance_types.empty()) gpufleet::fuzz::invariant_failed("a catalog without instance types");
  for (const gpufleet::plan::InstanceType& t : file.catalog.instance_types) {
    if (t.offerings.empty()) gpufleet::fuzz::invariant_failed("an instance type without offerings");
    if (t.gpus < 0 || t.cpu_milli <= 0 || t.memory_bytes <= 0) gpufleet::fuzz::invariant_failed("an instance type without resources");
    // A GPU type has a model; a CPU-only type (no `gpu`) has none.
    if ((t.gpus > 0) == t.gpu_model.empty()) gpufleet::fuzz::invariant_failed("a GPU count without a model, or a model without GPUs");
    for (const gpufleet::plan::Offering& o : t.offerings) {
      if (!(o.on_demand_usd_per_hour > 0)) gpufleet::fuzz::invariant_failed("an on-demand price that is not positive");
      for (const auto& p : {o.spot_usd_per_hour, o.reserved_1y_usd_per_hour, o.reserved_3y_usd_per_hour, o.capacity_block_usd_per_hour})
        if (p && !(*p > 0 && *p <= o.on_demand_usd_per_hour)) gpufleet::fuzz::invariant_failed("a price outside (0, onDemand]");
    }
  }
  const double share = file.constraints.max_spot_share;
  if (!(share >= 0 && share <= 1)) gpufleet::fuzz::invariant_failed("maxSpotShare outside [0, 1]");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { check(io::parse_plan_text(text, "fuzz.yaml")); });
  return 0;
}
