// libFuzzer target: a cluster snapshot as a workload (io::parse_snapshot_workload_text, `--snapshot`):
// `kubectl get pods -A -o json` read by the Kubernetes reader, then its live pods converted to
// workload items. Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected
// rejection; anything else is a finding, and so is an accepted snapshot that breaks what the converter
// promises (readers/sim/snapshot_workload.h): every item passes sim::validate_spec, arrives at 0,
// names are unique, and the items' pods add up to live_pods.
#include <cstddef>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "readers/sim/snapshot_workload.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

void check(const io::SnapshotWorkload& s) {
  std::set<std::string> names;
  int64_t pods = 0;
  for (const gpufleet::sim::WorkloadSpec& item : s.items) {
    try {
      gpufleet::sim::validate_spec(item);
    } catch (const std::invalid_argument&) {
      gpufleet::fuzz::invariant_failed("an accepted item that validate_spec refuses");
    }
    if (item.arrival_s != 0) gpufleet::fuzz::invariant_failed("an item that does not arrive at 0");
    if (!names.insert(item.name).second) gpufleet::fuzz::invariant_failed("two items of one name");
    pods += item.pods;
  }
  if (pods != s.live_pods) gpufleet::fuzz::invariant_failed("the items' pods are not live_pods");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    io::SnapshotWorkloadOptions options;
    options.job_seconds = 3600;
    check(io::parse_snapshot_workload_text(text, "fuzz.json", options));
  });
  return 0;
}
