#include "sched/plugins/node_resource_topology_match.h"

#include "sched/gpu/device_select.h"

namespace gpufleet::sched {

FilterCode NodeResourceTopologyMatch::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return single_numa_node_admits(pod, state, n) ? FilterCode::kFits : FilterCode::kCannotAlign;
}

std::string_view cannot_align_reason(const Node& node) {
  return node.topology_manager_scope == TopologyManagerScope::kContainer ? "cannot align container" : "cannot align pod";
}

}  // namespace gpufleet::sched
