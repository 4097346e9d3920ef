#include "model/dra_gpu_share.h"

#include <limits>
#include <set>
#include <tuple>

namespace gpufleet {
namespace {

std::string device_type(const ResourceSlice& slice, const DraDevice& device) {
  const DraAttribute* type = dra_lookup_attribute(device, slice.driver, std::string(kNvidiaDraDriver) + "/type");
  return type != nullptr && type->kind == DraAttribute::Kind::kString ? type->string_value : std::string();
}

int64_t int_attribute(const ResourceSlice& slice, const DraDevice& device, const char* name, int64_t missing) {
  const DraAttribute* a = dra_lookup_attribute(device, slice.driver, std::string(kNvidiaDraDriver) + "/" + name);
  return a != nullptr && a->kind == DraAttribute::Kind::kInt ? a->int_value : missing;
}

int64_t memory_of(const std::map<std::string, Quantity>& quantities) {
  auto it = quantities.find("memory");
  return it == quantities.end() ? -1 : it->second.value();
}

int32_t milli_of(int64_t part, int64_t whole) {
  if (part <= 0 || whole <= 0) return 0;
  if (part >= whole) return 1000;
  if (part <= std::numeric_limits<int64_t>::max() / 1000) return static_cast<int32_t>(part * 1000 / whole);
  return static_cast<int32_t>(1000.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

int32_t dra_device_gpu_milli(const ResourceSlice& slice, const DraDevice& device) {
  if (slice.driver != kNvidiaDraDriver) return 0;
  const std::string type = device_type(slice, device);
  if (type != "gpu" && type != "mig") return 0;
  for (const DraCounterConsumption& c : device.consumes_counters)
    for (const DraCounterSet& set : slice.shared_counters)
      if (set.name == c.counter_set) {
        const int64_t total = memory_of(set.counters);
        const int64_t used = memory_of(c.counters);
        if (total > 0 && used >= 0) return milli_of(used, total);
      }
  if (type == "gpu") return 1000;
  const int64_t parent = int_attribute(slice, device, "parentIndex", -1);
  for (const DraDevice& d : slice.devices)
    if (device_type(slice, d) == "gpu" && int_attribute(slice, d, "index", -2) == parent)
      return milli_of(memory_of(device.capacity), memory_of(d.capacity));
  return 0;
}

std::map<std::string, int32_t> dra_gpus_by_node(const DraCatalog& catalog) {
  std::set<std::tuple<std::string, std::string, std::string>> seen;  // (node, pool, GPU)
  std::map<std::string, int32_t> out;
  for (const ResourceSlice& slice : catalog.slices) {
    if (slice.driver != kNvidiaDraDriver || slice.node_name.empty()) continue;
    for (const DraDevice& d : slice.devices) {
      const std::string type = device_type(slice, d);
      const int64_t index = type == "gpu" ? int_attribute(slice, d, "index", -1) : type == "mig" ? int_attribute(slice, d, "parentIndex", -1) : -1;
      if (type != "gpu" && type != "mig") continue;
      // A GPU without an index is its own GPU (keyed by its name, which no "#index" key equals).
      const std::string key = index >= 0 ? "#" + std::to_string(index) : d.name;
      if (seen.emplace(slice.node_name, slice.pool, key).second) ++out[slice.node_name];
    }
  }
  return out;
}

DraGpuShares::DraGpuShares(const DraCatalog& catalog) {
  for (const ResourceSlice& slice : catalog.slices)
    if (slice.driver == kNvidiaDraDriver)
      for (const DraDevice& d : slice.devices)
        if (const int32_t m = dra_device_gpu_milli(slice, d); m > 0) {
          const std::string id = dra_device_id(slice.driver, slice.pool, d.name);
          milli_[id] = m;
          if (d.allow_multiple_allocations)
            if (auto it = d.capacity.find("memory"); it != d.capacity.end() && it->second.magnitude_units() < INT64_MAX / 1000)
              memory_milli_[id] = it->second.milli();
        }
}

int32_t DraGpuShares::device_milli(const DraDeviceResult& device) const {
  const std::string id = dra_device_id(device.driver, device.pool, device.device);
  auto it = milli_.find(id);
  if (it == milli_.end()) return 0;
  if (!device.shared()) return it->second;
  auto memory = memory_milli_.find(id);
  if (memory == memory_milli_.end()) return it->second;
  auto used = device.consumed_capacity_milli.find("memory");
  if (used == device.consumed_capacity_milli.end()) used = device.consumed_capacity_milli.find(device.driver + "/memory");
  const int64_t consumed = used == device.consumed_capacity_milli.end() ? 0 : used->second;
  return static_cast<int32_t>(static_cast<int64_t>(it->second) * milli_of(consumed, memory->second) / 1000);
}

int64_t DraGpuShares::allocation_milli(const DraAllocation& allocation) const {
  int64_t sum = 0;
  for (const DraDeviceResult& d : allocation.devices) sum += device_milli(d);
  return sum;
}

}  // namespace gpufleet
