#include "sched/topology_domains.h"

#include <algorithm>
#include <map>

namespace gpufleet::sched {

std::string_view domain_of(const ClusterState& state, NodeId n, std::string_view level) {
  const Node& node = state.node(n);
  if (const std::string* value = find_label(node.labels, level); value != nullptr) return *value;
  return level == kHostnameLabel ? std::string_view(node.name) : std::string_view();
}

std::vector<DomainCapacity> rank_domains(const ClusterState& state, std::string_view level, int64_t needed_gpu_milli) {
  std::map<std::string_view, DomainCapacity> by_value;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n) || state.node(n).unschedulable) continue;
    const std::string_view d = domain_of(state, n, level);
    if (d.empty()) continue;
    DomainCapacity& c = by_value[d];
    c.value = std::string(d);
    c.free_gpu_milli += state.gpu_free_milli_total(n);
    ++c.nodes;
  }
  std::vector<DomainCapacity> out;
  for (auto& [value, c] : by_value)
    if (c.free_gpu_milli >= needed_gpu_milli) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const DomainCapacity& a, const DomainCapacity& b) { return a.free_gpu_milli < b.free_gpu_milli; });
  return out;
}

}  // namespace gpufleet::sched
