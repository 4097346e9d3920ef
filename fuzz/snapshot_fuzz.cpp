// libFuzzer target: the live server's POST /snapshot body (a `kubectl get nodes,pods -o json` List):
// io::parse_json_request within kSnapshotRequestLimits, io::k8s_list_items, then each Node or Pod
// through the Kubernetes reader on its own, as the cluster cache checks every object it keeps
// (live/cluster_cache.h). Build and run: scripts/fuzz (fuzz/CMakeLists.txt). InputError is the
// expected rejection; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "readers/formats/json_request.h"
#include "readers/kube_api/k8s_json.h"
#include "readers/k8s/k8s_yaml.h"

namespace io = gpufleet::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] {
    for (nlohmann::json& item : io::k8s_list_items(io::parse_json_request(text, "snapshot.json", io::kSnapshotRequestLimits), "snapshot.json")) {
      item["apiVersion"] = "v1";
      gpufleet::fuzz::reader_accepts([&] { io::parse_k8s_text(item.dump(), "object"); });
    }
  });
  return 0;
}
