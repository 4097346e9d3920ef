// Upstream: kubernetes/autoscaler cluster-autoscaler/simulator/dynamicresources/utils/utilization.go.
// See dra_utilization.h.
#include "model/dra_utilization.h"

#include <algorithm>

namespace gpufleet {
namespace {

using CounterTotals = std::map<std::string, std::map<std::string, int64_t>>;  // set -> counter -> Value()

void add_counters(CounterTotals& totals, const std::string& set, const std::map<std::string, Quantity>& counters) {
  for (const auto& [name, q] : counters) totals[set][name] += q.value();
}

// calculatePartitionableDevicesPoolUtilization.
double partitionable_utilization(std::span<const ResourceSlice* const> slices, std::span<const DraDevice* const> allocated,
                                 size_t unique_sets) {
  if (unique_sets == 0) return 0;
  CounterTotals total, consumed;
  for (const ResourceSlice* s : slices)
    for (const DraCounterSet& set : s->shared_counters) add_counters(total, set.name, set.counters);
  for (const DraDevice* d : allocated)
    for (const DraCounterConsumption& c : d->consumes_counters) add_counters(consumed, c.counter_set, c.counters);
  double sum = 0;
  for (const auto& [set, counters] : total) {
    double highest = 0;
    const auto used = consumed.find(set);
    for (const auto& [name, value] : counters) {
      if (value == 0 || used == consumed.end()) continue;
      const auto u = used->second.find(name);
      if (u == used->second.end()) continue;
      highest = std::max(highest, static_cast<double>(u->second) / static_cast<double>(value));
    }
    sum += highest / static_cast<double>(unique_sets);
  }
  return sum;
}

}  // namespace

double dra_pool_utilization(std::span<const ResourceSlice* const> slices, const std::set<std::string>& allocated) {
  size_t atomic = 0, allocated_atomic = 0;
  std::vector<const DraDevice*> allocated_partitionable;
  std::set<std::string> counter_sets;  // consumed by the pool's partitionable devices
  for (const ResourceSlice* s : slices)
    for (const DraDevice& d : s->devices) {
      const bool taken = allocated.count(d.name) > 0;
      if (d.consumes_counters.empty()) {
        ++atomic;
        allocated_atomic += taken ? 1 : 0;
        continue;
      }
      for (const DraCounterConsumption& c : d.consumes_counters) counter_sets.insert(c.counter_set);
      if (taken) allocated_partitionable.push_back(&d);
    }
  const double atomic_utilization = atomic == 0 ? 0.0 : static_cast<double>(allocated_atomic) / static_cast<double>(atomic);
  if (allocated_partitionable.empty()) return atomic_utilization;  // every allocated device is atomic (or none is)
  const double partitionable = partitionable_utilization(slices, allocated_partitionable, counter_sets.size());
  if (allocated_atomic == 0) return partitionable;
  const double p = static_cast<double>(counter_sets.size()), a = static_cast<double>(atomic);
  return partitionable * p / (p + a) + atomic_utilization * a / (p + a);
}

DraNodeSlices::DraNodeSlices(const DraCatalog& catalog) {
  for (const ResourceSlice& s : catalog.slices)
    if (!s.node_name.empty()) by_node_[s.node_name][{s.driver, s.pool}].push_back(&s);
}

std::optional<DraNodeUtilization> DraNodeSlices::utilization(const ClusterState& state, NodeId n) const {
  const auto node = by_node_.find(state.node(n).name);
  if (node == by_node_.end()) return std::nullopt;
  // groupAllocatedReservedDevices: the devices of the claims of the node's pods, by driver and pool.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> allocated;
  for (const BoundPod& b : state.pods_on(n))
    for (const DraClaimAllocation& c : b.claims)
      for (const DraDeviceResult& d : c.allocation.devices) allocated[{d.driver, d.pool}].insert(d.device);
  static const std::set<std::string> kNone;
  DraNodeUtilization out;
  for (const auto& [pool, slices] : node->second) {
    // allCurrentGenSlices: the newest generation, all of its slices present.
    int64_t newest = 0;
    for (const ResourceSlice* s : slices) newest = std::max(newest, s->generation);
    std::vector<const ResourceSlice*> current;
    for (const ResourceSlice* s : slices)
      if (s->generation == newest) current.push_back(s);
    if (current.empty()) continue;  // no generation >= 0: no devices, 0
    if (static_cast<int64_t>(current.size()) != current.front()->resource_slice_count) return DraNodeUtilization{0, false};
    const auto taken = allocated.find(pool);
    out.utilization = std::max(out.utilization, dra_pool_utilization(current, taken == allocated.end() ? kNone : taken->second));
  }
  return out;
}

}  // namespace gpufleet
