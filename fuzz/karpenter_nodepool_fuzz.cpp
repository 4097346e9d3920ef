// libFuzzer target: Karpenter NodePools and InstanceTypes documents (io::read_karpenter_documents),
// read straight from the YAML documents so that inputs need no NodePoolSet. Build and run:
// scripts/fuzz (fuzz/CMakeLists.txt). InputError is the expected rejection; anything else is a
// finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "readers/karpenter/karpenter_nodepool.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    io::detail::Source src;
    src.file = "fuzz.yaml";
    const std::vector<io::detail::YamlNode> docs = io::detail::load_documents(io::detail::strip_bom(text), src);
    gpufleet::sim::ClusterConfig config;
    io::read_karpenter_documents(docs, src, config);
  });
  return 0;
}
