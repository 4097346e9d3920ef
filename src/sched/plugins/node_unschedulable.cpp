#include "sched/plugins/node_unschedulable.h"

#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {

FilterCode NodeUnschedulable::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  if (!state.node(n).unschedulable) return FilterCode::kFits;
  static const Taint kUnschedulable{std::string(kTaintNodeUnschedulable), "", "NoSchedule"};
  return tolerations_tolerate_taint(pod.constraints.tolerations, kUnschedulable) ? FilterCode::kFits
                                                                                 : kNodeUnschedulable;
}

}  // namespace gpufleet::sched
