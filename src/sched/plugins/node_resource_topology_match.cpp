#include "sched/plugins/node_resource_topology_match.h"

#include "sched/gpu/device_select.h"

namespace gpufleet::sched {

FilterCode NodeResourceTopologyMatch::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return single_numa_node_admits(pod, state, n) ? FilterCode::kFits : kCannotAlign;
}

std::vector<std::string> NodeResourceTopologyMatch::node_reasons(FilterCode code, const Pod& pod, const ClusterState& state,
                                                                 NodeId n) const {
  if (code == kCannotAlign) return {std::string(cannot_align_reason(state.node(n)))};
  return FilterPlugin::node_reasons(code, pod, state, n);
}

std::string_view cannot_align_reason(const Node& node) {
  return node.topology_manager_scope == TopologyManagerScope::kContainer ? "cannot align container" : "cannot align pod";
}

}  // namespace gpufleet::sched
