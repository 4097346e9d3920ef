// libFuzzer target: the kube-scheduler extender's filter and prioritize request bodies (io::parse_extender_args).
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
//
// Each input is read twice. The first reading takes the full JSON parse and remembers the pod's
// text; the second may take the fast path (extender_args.h: a nodeCacheCapable body whose pod text
// was read before). Both must agree: the same node names, form and warnings, or the same error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "readers/kube_api/extender_args.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

struct Reading {
  std::optional<io::ExtenderArgs> args;
  std::string error;
};

Reading read(std::string_view text) {
  Reading r;
  try {
    r.args = io::parse_extender_args(text, "fuzz.json");
  } catch (const gpufleet::InputError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  const Reading first = read(text);
  const Reading second = read(text);
  if (first.args.has_value() != second.args.has_value() || first.error != second.error)
    gpufleet::fuzz::invariant_failed("a second reading (fast path) accepts or refuses as the first (full parse)");
  if (first.args && (first.args->node_names != second.args->node_names ||
                     first.args->node_cache_capable != second.args->node_cache_capable ||
                     first.args->warnings != second.args->warnings || first.args->node_items != second.args->node_items ||
                     first.args->pod.name != second.args->pod.name || first.args->pod.gpu_milli != second.args->pod.gpu_milli))
    gpufleet::fuzz::invariant_failed("a second reading (fast path) gives what the first (full parse) gave");
  return 0;
}
