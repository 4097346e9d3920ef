// libFuzzer target: Kubernetes objects in YAML or JSON (io::parse_k8s_text), then the DRA checks
// `place` makes on them (dra_feature_warnings, check_dra_claim_references).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/k8s/dra_yaml.h"
#include "readers/k8s/k8s_yaml.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

// Object limits far below the real ones (readers/formats/input_limits.h): a few bytes can ask for a Job of
// 150,000 pods, which is legitimate input but only costs memory; the fuzzer looks for wrong answers
// and crashes, and this keeps each input within its 512 MB under AddressSanitizer.
constexpr io::ObjectLimits kFuzzObjectLimits{1'000, 10'000};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    const io::K8sObjects objects = io::parse_k8s_text(text, "fuzz.yaml", kFuzzObjectLimits);
    io::dra_feature_warnings(objects.dra);                                        // readers/k8s/dra_yaml.h
    io::check_dra_claim_references(objects.dra, objects.dra_claim_references);  // what place checks next
  });
  return 0;
}
