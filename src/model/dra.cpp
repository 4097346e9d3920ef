#include "model/dra.h"

#include <fmt/format.h>

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

std::optional<int64_t> dra_consumed_capacity_milli(std::optional<int64_t> requested_milli, int64_t capacity_milli,
                                                   const DraCapacityRequestPolicy* policy) {
  if (!requested_milli) return policy != nullptr && policy->default_milli ? *policy->default_milli : capacity_milli;
  const int64_t requested = *requested_milli;
  if (policy == nullptr) return requested;
  if (policy->has_range) {
    int64_t consumed = requested;
    if (consumed < policy->range_min_milli) {
      consumed = policy->range_min_milli;
    } else if (policy->range_step_milli) {
      const int64_t step = *policy->range_step_milli;
      const int64_t above = consumed - policy->range_min_milli;
      const int64_t steps = above / step + (above % step != 0 ? 1 : 0);
      if (steps > (INT64_MAX - policy->range_min_milli) / step) return std::nullopt;
      consumed = policy->range_min_milli + steps * step;
    }
    if (policy->range_max_milli && consumed > *policy->range_max_milli) return std::nullopt;
    return consumed;
  }
  if (!policy->valid_values_milli.empty()) {
    for (int64_t v : policy->valid_values_milli)
      if (requested <= v) return v;
    return std::nullopt;
  }
  return requested;
}

std::string dra_share_id(const std::string& claim_key, size_t result_index) {
  // Two FNV-1a 64-bit hashes (different offsets) of "<claim>#<index>", laid out as a UUID with the
  // version (4) and variant (10xx) bits set.
  const std::string text = fmt::format("{}#{}", claim_key, result_index);
  auto fnv = [&](uint64_t h) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
    return h;
  };
  const uint64_t a = fnv(14695981039346656037ull), b = fnv(0x9e3779b97f4a7c15ull);
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", static_cast<uint32_t>(a >> 32), static_cast<uint32_t>((a >> 16) & 0xffff),
                     static_cast<uint32_t>(a & 0xfff), static_cast<uint32_t>(0x8000 | ((b >> 48) & 0x3fff)), b & 0xffffffffffffull);
}

}  // namespace gpufleet

namespace gpufleet {

bool DraDeviceTaintRule::matches(const ResourceSlice& slice, const DraDevice& d) const {
  return has_selector && (!driver || *driver == slice.driver) && (!pool || *pool == slice.pool || *pool == slice.written_pool) && (!device || *device == d.name);
}

std::vector<Taint> dra_device_taints(const DraCatalog& catalog, const ResourceSlice& slice, const DraDevice& d) {
  std::vector<Taint> out = d.taints;
  for (const auto& [name, rule] : catalog.taint_rules)
    if (rule.matches(slice, d)) out.push_back(rule.taint);
  return out;
}

std::pair<const ResourceSlice*, const DraDevice*> dra_find_device(const DraCatalog& catalog, const std::string& driver,
                                                                  const std::string& pool, const std::string& device) {
  std::pair<const ResourceSlice*, const DraDevice*> found{nullptr, nullptr};
  int64_t newest = INT64_MIN;
  for (const ResourceSlice& s : catalog.slices) {
    if (s.driver != driver || s.pool != pool || s.generation < newest) continue;
    if (s.generation > newest) found = {nullptr, nullptr};
    newest = s.generation;
    for (const DraDevice& d : s.devices)
      if (d.name == device) found = {&s, &d};
  }
  return found;
}

}  // namespace gpufleet
