// libFuzzer target: the API server's watch streams and list pages (readers/kube_api/kube_watch.h). The input is
// read both ways: line by line as a watch stream, and whole as a list page.
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything
// else is a finding.
#include <cstddef>
#include <cstdint>

#include "readers/kube_api/kube_watch.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  int line_no = 0;
  for (size_t start = 0; start <= text.size();) {
    const size_t nl = text.find('\n', start);
    const std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    ++line_no;
    if (!line.empty()) {
      gpufleet::fuzz::reader_accepts([&] {
        const io::KubeWatchEvent e = io::parse_watch_event(line, "fuzz.jsonl", line_no);
        if (e.type != io::KubeWatchType::kError && e.resource_version.empty())
          gpufleet::fuzz::invariant_failed("an event without a resourceVersion was accepted");
      });
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  gpufleet::fuzz::reader_accepts([&] {
    const io::KubeListPage page = io::parse_list_page(text, "fuzz.json");
    for (const auto& item : page.items)
      if (io::kube_object_key(item).empty()) gpufleet::fuzz::invariant_failed("a list item without a key was accepted");
  });
  (void)io::parse_status_body(text, 500);
  return 0;
}
