#include "sched/framework/node_sampling.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gpufleet::sched {
namespace {

std::string_view label(const Labels& labels, std::string_view key, bool& found) {
  for (const auto& [k, v] : labels)
    if (k == key) {
      found = true;
      return v;
    }
  found = false;
  return {};
}

// kube GetZoneKey: "" without region and zone, else region + ":\x00:" + zone.
std::string zone_key(const Labels& labels) {
  bool found = false;
  std::string_view zone = label(labels, "topology.kubernetes.io/zone", found);
  if (!found) zone = label(labels, "failure-domain.beta.kubernetes.io/zone", found);
  std::string_view region = label(labels, "topology.kubernetes.io/region", found);
  if (!found) region = label(labels, "failure-domain.beta.kubernetes.io/region", found);
  if (region.empty() && zone.empty()) return {};
  std::string key(region);
  key.append(":\0:", 3);
  key.append(zone);
  return key;
}

}  // namespace

int32_t num_feasible_nodes_to_find(int32_t percentage, int32_t num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage == 0) percentage = std::max(50 - num_all_nodes / 125, kMinFeasibleNodesPercentageToFind);
  const auto num_nodes = static_cast<int32_t>(static_cast<int64_t>(num_all_nodes) * percentage / 100);
  return std::max(num_nodes, kMinFeasibleNodesToFind);
}

std::vector<NodeId> node_tree_order(const ClusterState& state, std::span<const uint32_t> rank) {
  std::vector<NodeId> arrival;
  for (NodeId n = 0; n < state.node_count(); ++n)
    if (state.has_node(n)) arrival.push_back(n);
  if (!rank.empty())
    std::stable_sort(arrival.begin(), arrival.end(), [&](NodeId a, NodeId b) { return rank[a] < rank[b]; });
  std::unordered_map<std::string, size_t> zone_of;
  std::vector<std::vector<NodeId>> zones;  // in order of first arrival
  for (const NodeId n : arrival) {
    const auto [it, inserted] = zone_of.try_emplace(zone_key(state.node(n).labels), zones.size());
    if (inserted) zones.emplace_back();
    zones[it->second].push_back(n);
  }
  std::vector<NodeId> out;
  out.reserve(arrival.size());
  for (size_t i = 0; out.size() < arrival.size(); ++i)
    for (const auto& zone : zones)
      if (i < zone.size()) out.push_back(zone[i]);
  return out;
}

}  // namespace gpufleet::sched
