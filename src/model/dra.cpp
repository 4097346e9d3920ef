#include "model/dra.h"

namespace gpufleet {

std::string dra_device_id(const std::string& driver, const std::string& pool, const std::string& device) {
  return driver + "/" + pool + "/" + device;
}

std::string dra_claim_key(const std::string& pod_namespace, const std::string& pod_name, const PodResourceClaim& pc) {
  if (!pc.resource_claim_name.empty()) return pod_namespace + "/" + pc.resource_claim_name;
  if (!pc.generated_claim_name.empty()) return pod_namespace + "/" + pc.generated_claim_name;
  return pod_namespace + "/" + pod_name + "-" + pc.name;
}

std::string dra_generated_claim_name(const std::string& pod_name, const std::string& claim_name, const std::string& suffix) {
  constexpr size_t kMaxBaseLen = 57;  // controller.go: room for "-" and 5 generated characters in 63
  std::string base = pod_name + "-" + claim_name;
  if (base.size() > kMaxBaseLen)
    base = pod_name.substr(0, pod_name.size() * kMaxBaseLen / base.size()) + "-" +
           claim_name.substr(0, claim_name.size() * kMaxBaseLen / base.size());
  return base + "-" + suffix;
}

const DraAttribute* dra_lookup_attribute(const DraDevice& device, const std::string& driver, const std::string& qualified_name) {
  if (auto it = device.attributes.find(qualified_name); it != device.attributes.end()) return &it->second;
  const size_t slash = qualified_name.find('/');
  if (slash == std::string::npos || qualified_name.compare(0, slash, driver) != 0) return nullptr;
  if (auto it = device.attributes.find(qualified_name.substr(slash + 1)); it != device.attributes.end()) return &it->second;
  return nullptr;
}

}  // namespace gpufleet
