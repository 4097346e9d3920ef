#include "sched/plugins/node_preference.h"

#include "sched/plugins/node_affinity.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {

bool NodePreference::any_prefer_no_schedule(std::span<const Node> nodes) { return any_prefer_no_schedule_taint(nodes); }

int64_t NodePreference::preference(const Pod& pod, const Node& node) {
  const int64_t taints = count_intolerable_prefer_no_schedule_taints(node.taints, pod.constraints.tolerations);
  return -taints * (int64_t{1} << 32) + preferred_node_affinity_score(pod, node);
}

}  // namespace gpufleet::sched
