// PrioritySort QueueSort plugin (kube-scheduler pkg/scheduler/framework/plugins/queuesort/
// priority_sort.go): higher priority first, then the earlier queue timestamp.
#pragma once

#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class PrioritySort final : public QueueSortPlugin, public NamedPlugin<"PrioritySort"> {
 public:
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    const int32_t p1 = a.pod->priority, p2 = b.pod->priority;
    return p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp);
  }
};

}  // namespace gpufleet::sched
