#include "sched/daemon_set.h"

#include <fmt/format.h>

#include "sched/plugins/node_affinity.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {

bool daemon_set_should_run(const DaemonSet& ds, const Node& node) {
  if (!ds.pod.node_name.empty() && ds.pod.node_name != node.name) return false;
  if (!pod_matches_node_required_affinity(ds.pod, node)) return false;
  return find_untolerated_taint(node.taints, ds.pod.constraints.tolerations) == nullptr;
}

Pod daemon_set_pod(const DaemonSet& ds, const std::string& node_name) {
  Pod pod = ds.pod;
  pod.name = fmt::format("{}-{}", ds.name, node_name);
  pod.namespace_name = ds.namespace_name;
  NodeSelectorTerm term;
  term.match_fields.push_back({"metadata.name", "In", {node_name}});
  pod.constraints.required_node_affinity = {std::move(term)};
  return pod;
}

std::vector<Pod> daemon_set_pods(std::span<const DaemonSet> daemon_sets, std::span<const Node> nodes) {
  std::vector<Pod> out;
  for (const DaemonSet& ds : daemon_sets)
    for (const Node& node : nodes)
      if (daemon_set_should_run(ds, node)) out.push_back(daemon_set_pod(ds, node.name));
  return out;
}

}  // namespace gpufleet::sched
