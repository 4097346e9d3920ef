// libFuzzer target: the file one shard of a sharded `gpufleet plan` writes (io::parse_plan_shard), read
// back by `plan --merge`. Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected
// rejection; anything else is a finding, and so is an accepted shard that breaks what the reader
// promises (readers/plan/plan_shard.h): shard < shards <= kMaxPlanShards, candidates <=
// kMaxPlanCandidates, results' indexes shard, shard + shards, ... below candidates, every figure finite
// and >= 0.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "readers/plan/plan_shard.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

void check(const io::PlanShard& s) {
  if (s.shards < 1 || s.shards > io::kMaxPlanShards || s.shard >= s.shards) gpufleet::fuzz::invariant_failed("shard outside 0..shards-1");
  if (s.candidates > io::kMaxPlanCandidates) gpufleet::fuzz::invariant_failed("candidates above the limit");
  size_t want = s.shard;
  for (const gpufleet::plan::CandidateResult& r : s.results) {
    if (r.index != want || r.index >= s.candidates) gpufleet::fuzz::invariant_failed("a result index out of order or range");
    want += s.shards;
    for (double d : {r.horizon_s, r.cost_usd, r.on_demand_usd, r.spot_usd, r.reserved_usd, r.gpu_allocated_hours, r.gpu_billed_hours,
                     r.spot_billed_gpu_hours, r.lost_gpu_hours, r.kept_allocation_pct})
      if (!(std::isfinite(d) && d >= 0)) gpufleet::fuzz::invariant_failed("a figure that is not finite and >= 0");
    for (const auto& p : {r.pending_p99_s, r.production_pending_p99_s})
      if (p && !(std::isfinite(*p) && *p >= 0)) gpufleet::fuzz::invariant_failed("a pending p99 that is not finite and >= 0");
    if (r.pods_completed < 0 || r.pods_failed < 0 || r.pods_pending < 0 || r.restarts < 0)
      gpufleet::fuzz::invariant_failed("a negative count");
  }
  if (want < s.candidates) gpufleet::fuzz::invariant_failed("a shard missing some of its candidates");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { check(io::parse_plan_shard(text, "fuzz.json")); });
  return 0;
}
