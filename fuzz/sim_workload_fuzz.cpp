// libFuzzer target: simulator workload (io::parse_sim_workload_text).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
//
// A workload's inference block names files by path (a request trace, a Kubernetes autoscaler file),
// resolved against the workload file's folder. The source name is in an empty folder of its own, so
// a relative path resolves to nothing; and the readers of the fuzz build read no file at all
// (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, readers/formats/text_file.h), so an absolute one (/dev/zero,
// /proc/...) is refused too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>
#include <string>
#include <vector>

#include "readers/sim/workload_file.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

// "<empty temporary folder>/fuzz.yaml", the folder made once per process (removed at exit).
const std::string& source_name() {
  static const std::string name = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sim_workload_fuzz.XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) return std::string("/nonexistent-sim-workload-fuzz/fuzz.yaml");
    static const std::string made = dir;
    std::atexit([] { ::rmdir(made.c_str()); });
    return dir + "/fuzz.yaml";
  }();
  return name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  // The pools of examples/simulate/pools.yaml, sharing-pools.yaml and examples/serving/pools.yaml (so
  // their workloads' seeds go deep), plus the names the hand-made seeds in fuzz/corpus/sim_workload_fuzz use.
  static const std::vector<std::string> kPools = {"inference-l4", "training-h100", "training-h100-spot",
                                                  "dev-a10g", "h100-mig", "l4-shared", "gpu-pool", "cpu",
                                                  "l4", "l40s", "h100"};
  gpufleet::fuzz::reader_accepts([&] { io::parse_sim_workload_text(text, source_name(), kPools); });
  return 0;
}
