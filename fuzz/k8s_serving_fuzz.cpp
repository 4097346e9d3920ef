// libFuzzer target: the serving objects reader (io::parse_k8s_serving_text): vLLM Deployments,
// autoscaling/v2 HorizontalPodAutoscalers, KEDA ScaledObjects.
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/serving/k8s_serving.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { io::parse_k8s_serving_text(text, "fuzz.yaml"); });
  return 0;
}
