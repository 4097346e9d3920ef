#include "readers/k8s/node_resource_topology.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "readers/formats/yaml_field.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using Val = detail::Field;

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// The NUMA ID of a zone named node-<ID> (the topology-updater's naming; scheduler-plugins
// createNUMANodeList parses it with "node-%d"); nullopt for any other name.
std::optional<int32_t> numa_id(std::string_view name) {
  constexpr std::string_view kPrefix = "node-";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  int32_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id < 0 || id >= kMaxNumaNodesPerNode)
    return std::nullopt;
  return id;
}

// The deprecated topologyPolicies values (noderesourcetopology-api v1alpha2 TopologyManagerPolicy).
bool legacy_policy(std::string_view v, TopologyManagerPolicy& policy, TopologyManagerScope& scope) {
  static const std::map<std::string_view, std::pair<TopologyManagerPolicy, TopologyManagerScope>> kLegacy = {
      {"None", {TopologyManagerPolicy::kNone, TopologyManagerScope::kContainer}},
      {"SingleNUMANodePodLevel", {TopologyManagerPolicy::kSingleNumaNode, TopologyManagerScope::kPod}},
      {"SingleNUMANodeContainerLevel", {TopologyManagerPolicy::kSingleNumaNode, TopologyManagerScope::kContainer}},
      {"BestEffortPodLevel", {TopologyManagerPolicy::kBestEffort, TopologyManagerScope::kPod}},
      {"BestEffortContainerLevel", {TopologyManagerPolicy::kBestEffort, TopologyManagerScope::kContainer}},
      {"RestrictedPodLevel", {TopologyManagerPolicy::kRestricted, TopologyManagerScope::kPod}},
      {"RestrictedContainerLevel", {TopologyManagerPolicy::kRestricted, TopologyManagerScope::kContainer}},
  };
  const auto it = kLegacy.find(v);
  if (it == kLegacy.end()) return false;
  policy = it->second.first;
  scope = it->second.second;
  return true;
}

}  // namespace

NodeResourceTopologySpec read_node_resource_topology(const Val& v) {
  NodeResourceTopologySpec out;
  out.file = v.source().file;
  std::tie(out.line, out.column) = v.position();
  const Val api = v["apiVersion"];
  const std::string api_version = api.required_str();
  if (api_version != "topology.node.k8s.io/v1alpha2" && api_version != "topology.node.k8s.io/v1alpha1")
    api.fail(fmt::format("unsupported apiVersion '{}' for NodeResourceTopology (expected topology.node.k8s.io/v1alpha2 "
                         "or v1alpha1)",
                         api_version));
  out.node_name = v["metadata"]["name"].required_str();

  const Val legacy = v["topologyPolicies"];
  if (legacy.size() > 0) {
    const Val first = legacy.at(0);
    if (!legacy_policy(first.scalar(), out.policy, out.scope))
      first.fail(fmt::format("unknown topology policy '{}' (expected None, SingleNUMANodePodLevel, "
                             "SingleNUMANodeContainerLevel, BestEffortPodLevel, BestEffortContainerLevel, "
                             "RestrictedPodLevel, RestrictedContainerLevel)",
                             first.scalar()));
  }

  const Val attributes = v["attributes"];
  for (size_t i = 0, n = attributes.size(); i < n; ++i) {
    const Val a = attributes.at(i);
    const std::string name = a["name"].required_str();
    const Val value = a["value"];
    if (name == "topologyManagerPolicy") {
      const auto p = parse_topology_manager_policy(value.scalar());
      if (!p)
        value.fail(fmt::format("unknown topologyManagerPolicy '{}' (expected none, best-effort, restricted, "
                               "single-numa-node)",
                               value.scalar()));
      out.policy = *p;
    } else if (name == "topologyManagerScope") {
      const auto s = parse_topology_manager_scope(value.scalar());
      if (!s) value.fail(fmt::format("unknown topologyManagerScope '{}' (expected container, pod)", value.scalar()));
      out.scope = *s;
    }
  }

  const Val zones = v["zones"];
  std::set<int32_t> ids;
  for (size_t i = 0, n = zones.size(); i < n; ++i) {
    const Val z = zones.at(i);
    z.require_map();
    if (z["type"].str() != "Node") continue;  // e.g. a Socket or cache zone: no NUMA node of its own
    const Val name_v = z["name"];
    const std::string name = name_v.required_str();
    const auto id = numa_id(name);
    if (!id) name_v.fail(fmt::format("zone name '{}' is not node-<NUMA ID> with an ID in 0..{}", name, kMaxNumaNodesPerNode - 1));
    if (!ids.insert(*id).second) name_v.fail(fmt::format("NUMA node {} appears twice", *id));
    const Val resources = z["resources"];
    int64_t gpus = 0;
    for (size_t r = 0, rn = resources.size(); r < rn; ++r) {
      const Val res = resources.at(r);
      if (res["name"].required_str() != kGpuResource) continue;
      const Val cap = res["capacity"];
      const Quantity q = cap.quantity();
      int64_t count = -1;
      try {
        count = q.whole();
      } catch (const std::invalid_argument&) {
        cap.fail(fmt::format("'{}' is not a whole number of GPUs", cap.scalar()));
      }
      if (count > kMaxGpusPerNode) cap.fail(fmt::format("{} GPUs, more than {} per node", count, kMaxGpusPerNode));
      gpus = count;
    }
    if (static_cast<int64_t>(out.gpu_numa_node.size()) + gpus > kMaxGpusPerNode)
      resources.fail(fmt::format("the zones hold more than {} GPUs", kMaxGpusPerNode));
    out.gpu_numa_node.insert(out.gpu_numa_node.end(), static_cast<size_t>(gpus), static_cast<int8_t>(*id));
  }
  return out;
}

void apply_node_resource_topologies(const std::vector<NodeResourceTopologySpec>& topologies, std::vector<Node>& nodes,
                                    std::vector<std::string>& warnings) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].name, i);
  std::set<std::string> seen;
  for (const NodeResourceTopologySpec& t : topologies) {
    if (!seen.insert(t.node_name).second)
      throw InputError(t.file, t.line, "metadata.name",
                       fmt::format("a second NodeResourceTopology for node '{}'", t.node_name), t.column);
    const auto it = index.find(t.node_name);
    if (it == index.end()) {
      warnings.push_back(fmt::format("{}:{}:{}: NodeResourceTopology '{}' names no Node among the inputs: ignored",
                                     t.file, t.line, t.column, t.node_name));
      continue;
    }
    Node& node = nodes[it->second];
    node.topology_manager_policy = t.policy;
    node.topology_manager_scope = t.scope;
    // No zone reports nvidia.com/gpu: the GPUs expose no NUMA affinity (upstream then treats them as
    // host-level resources), so the layout stays unknown.
    if (t.gpu_numa_node.empty()) continue;
    if (static_cast<int32_t>(t.gpu_numa_node.size()) != node.gpu_count)
      throw InputError(t.file, t.line, "zones",
                       fmt::format("the zones hold {} nvidia.com/gpu, node '{}' has {}", t.gpu_numa_node.size(),
                                   t.node_name, node.gpu_count),
                       t.column);
    node.gpu_numa_node = t.gpu_numa_node;
  }
}

}  // namespace gpufleet::io
