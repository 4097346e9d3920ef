// PrioritySort QueueSort plugin (kube-scheduler pkg/scheduler/framework/plugins/queuesort/
// priority_sort.go): higher priority first, then the earlier queue timestamp.
#pragma once

#include <cstdint>
#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class PrioritySort final : public QueueSortPlugin, public NamedPlugin<"PrioritySort"> {
 public:
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return before(a.pod->priority, a.timestamp, b.pod->priority, b.timestamp);
  }
  /// less() on a pod's priority and queue timestamp alone (a queue that keeps them beside its
  /// entries compares without reading the pods).
  static bool before(int32_t priority_a, uint64_t timestamp_a, int32_t priority_b, uint64_t timestamp_b) {
    return priority_a > priority_b || (priority_a == priority_b && timestamp_a < timestamp_b);
  }
};

}  // namespace gpufleet::sched
