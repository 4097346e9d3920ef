// libFuzzer target: kubeconfig files (readers/kube_api/kubeconfig.h parse_kubeconfig_text; no file is read).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/kube_api/kubeconfig.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    const io::KubeRestConfig c = io::parse_kubeconfig_text(text, "fuzz.yaml", "");
    if (c.url.port < 1 || c.url.port > 65535 || c.url.host.empty()) gpufleet::fuzz::invariant_failed("a server URL without host or port was accepted");
  });
  return 0;
}
