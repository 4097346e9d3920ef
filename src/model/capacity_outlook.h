// CapacityOutlook: the nodes a cluster may hold, slot by slot (ClusterState's NodeIds), whether or
// not they exist now. A policy that plans for the capacity still to come (gpufleet's pressure terms,
// sched/plugins/gpufleet_score.h) reads it instead of the live nodes alone.
//  - pack and place: the state's own nodes (of(state)); nothing comes or goes.
//  - simulate: every pool's slots up to max_nodes (pool-major, the fleet's node ids), each with its
//    pool's node shape; a slot whose node is absent or provisioning counts as an empty node of that
//    shape, as it would be when launched.
// Plain data, no I/O.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cluster_state.h"

namespace gpufleet {

struct CapacityOutlook {
  /// Consecutive slots first .. first + count - 1 whose nodes share one shape.
  struct SlotRange {
    NodeId first = 0;
    uint32_t count = 0;
    int32_t gpu_model_id = 0;   ///< ClusterState::gpu_model_id of such a node (register models up front)
    int32_t gpu_count = 0;      ///< physical GPUs per node
    int64_t cpu_milli = 0;      ///< allocatable CPU per node
    int64_t memory_bytes = 0;   ///< allocatable memory per node
  };
  /// Ascending by first, disjoint. Slots in no range may never hold a node.
  std::vector<SlotRange> ranges;

  /// One past the highest slot of a range (0 when there is none).
  size_t slot_count() const { return ranges.empty() ? 0 : ranges.back().first + ranges.back().count; }
  /// GPU capacity of every slot's node, milli-GPUs.
  int64_t gpu_capacity_milli() const {
    int64_t total = 0;
    for (const SlotRange& r : ranges) total += int64_t{r.count} * r.gpu_count * 1000;
    return total;
  }
  /// Calls f(slot, range) for every slot of every range, in slot order.
  template <typename F>
  void for_each_slot(F&& f) const {
    for (const SlotRange& r : ranges)
      for (uint32_t i = 0; i < r.count; ++i) f(static_cast<NodeId>(r.first + i), r);
  }
  /// The state's nodes as they are (empty slots left out), consecutive equal shapes merged.
  static CapacityOutlook of(const ClusterState& state) {
    CapacityOutlook o;
    for (NodeId n = 0; n < state.node_count(); ++n) {
      if (!state.has_node(n)) continue;
      const Node& node = state.node(n);
      SlotRange r{n, 1, state.gpu_model_id(n), node.gpu_count, node.cpu_milli, node.memory_bytes};
      if (!o.ranges.empty()) {
        SlotRange& b = o.ranges.back();
        if (b.first + b.count == n && b.gpu_model_id == r.gpu_model_id && b.gpu_count == r.gpu_count &&
            b.cpu_milli == r.cpu_milli && b.memory_bytes == r.memory_bytes) {
          ++b.count;
          continue;
        }
      }
      o.ranges.push_back(r);
    }
    return o;
  }
};

}  // namespace gpufleet
