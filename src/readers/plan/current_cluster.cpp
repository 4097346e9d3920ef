#include "readers/plan/current_cluster.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/pool_file.h"
#include "readers/formats/text_file.h"
#include "readers/sim/sim_pools.h"
#include "util/input_error.h"

namespace gpufleet::io {

namespace {

// Well-known labels (kubernetes.io/docs/reference/labels-annotations-taints/, karpenter.sh, EKS).
constexpr const char* kInstanceType = "node.kubernetes.io/instance-type";
constexpr const char* kInstanceTypeBeta = "beta.kubernetes.io/instance-type";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kZoneBeta = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kKarpenterCapacity = "karpenter.sh/capacity-type";
constexpr const char* kEksCapacity = "eks.amazonaws.com/capacityType";

const std::string* label(const Labels& labels, std::string_view key, std::string_view fallback = {}) {
  if (const std::string* v = find_label(labels, key)) return v;
  return fallback.empty() ? nullptr : find_label(labels, fallback);
}

struct Capacity {
  sim::CapacityType type = sim::CapacityType::kOnDemand;
  bool committed = false;
};

// The capacity-type label's value, or an InputError at it.
std::optional<Capacity> capacity_of(const Labels& labels, const std::map<std::string, SourcePosition>& positions,
                                    const std::string& fallback_file) {
  for (const char* key : {kKarpenterCapacity, kEksCapacity}) {
    const std::string* v = find_label(labels, key);
    if (v == nullptr) continue;
    const bool karpenter = std::string_view(key) == kKarpenterCapacity;
    if (*v == (karpenter ? "on-demand" : "ON_DEMAND")) return Capacity{sim::CapacityType::kOnDemand, false};
    if (*v == (karpenter ? "spot" : "SPOT")) return Capacity{sim::CapacityType::kSpot, false};
    if (*v == (karpenter ? "reserved" : "CAPACITY_BLOCK")) return Capacity{sim::CapacityType::kOnDemand, true};
    const std::string what = fmt::format("capacity type '{}' is not one of {}", *v,
                                         karpenter ? "on-demand, spot, reserved" : "ON_DEMAND, SPOT, CAPACITY_BLOCK");
    const auto at = positions.find(key);
    if (at != positions.end()) throw InputError(at->second.file, at->second.line, at->second.field, what, at->second.column);
    throw InputError(fallback_file, 0, fmt::format("labels.{}", key), what);
  }
  return std::nullopt;
}

sim::FieldOrigin origin_of(const SourcePosition& p) { return {p.file, p.line, p.column, p.field}; }

// The current cluster from the objects read from `path` (a file or folder, or a text named so); the
// text of each node-pool file among them comes from `pool_text` (the file itself, or the text).
plan::CurrentCluster current_cluster_of(const K8sObjects& objects, const std::string& path,
                                        const std::function<std::string(const std::string&)>& pool_text,
                                        std::vector<std::string>& warnings) {
  plan::CurrentCluster out;
  out.source = path;
  // The simulator's documents of a pool file are read below (read_sim_cluster_file), not skipped.
  std::vector<std::string> read_below;
  if (!objects.pool_files.empty())
    for (const char* kind : {"Autoscaling", "FaultSchedule"})
      if (const auto n = objects.skipped_kinds.find(kind); n != objects.skipped_kinds.end())
        read_below.push_back(fmt::format("skipped {} {} object(s): ", n->second, kind));
  for (const std::string& w : objects.warnings) {
    bool drop = false;
    for (const std::string& prefix : read_below) drop = drop || w.rfind(prefix, 0) == 0;
    if (!drop) warnings.push_back(w);
  }
  if (!objects.pods.empty())
    warnings.push_back(fmt::format("{}: {} pods not read: --current counts the nodes only", path, objects.pods.size()));

  for (size_t i = 0; i < objects.nodes.size(); ++i) {
    const Node& node = objects.nodes[i];
    static const K8sNodeSource kNoSource;
    const K8sNodeSource& source = i < objects.node_sources.size() ? objects.node_sources[i] : kNoSource;
    plan::CurrentNodes e;
    e.name = node.name;
    if (const std::string* v = label(node.labels, kInstanceType, kInstanceTypeBeta)) e.instance_type = *v;
    if (const std::string* v = label(node.labels, kZone, kZoneBeta)) e.zone = *v;
    if (const std::optional<Capacity> c = capacity_of(node.labels, source.labels, path)) {
      e.capacity = c->type;
      e.committed = c->committed ? 1 : 0;
      e.capacity_labelled = true;
    }
    e.origin = origin_of(source.name);
    out.entries.push_back(std::move(e));
  }

  for (const std::string& file : objects.pool_files) {
    std::vector<K8sNodeSource> sources;
    const std::string text = pool_text(file);
    const std::vector<NodePool> read = parse_pool_text(text, file, &sources);
    std::map<std::string, const K8sNodeSource*> source_of;
    for (size_t i = 0; i < read.size() && i < sources.size(); ++i) source_of[read[i].name] = &sources[i];
    // The pools with the simulator's settings (capacityType, reservedNodes), when the file has them.
    const sim::ClusterConfig cluster = parse_sim_cluster_text(text, file);
    for (const sim::SimPool& sp : cluster.pools) {
      const NodePool& pool = sp.pool;
      // A Karpenter NodePool's offerings (readers/karpenter/) are what it may launch, not nodes.
      if (!sp.settings.karpenter_node_pool.empty() && pool.node_count == 0 && sp.settings.reserved_nodes == 0) continue;
      static const K8sNodeSource kNoSource;
      const auto s = source_of.find(pool.name);
      const K8sNodeSource& source = s != source_of.end() ? *s->second : kNoSource;
      plan::CurrentNodes e;
      e.name = pool.name;
      e.pool = true;
      e.nodes = pool.node_count;
      e.instance_type = pool.instance_type;
      if (const std::string* v = label(pool.labels, kZone, kZoneBeta)) e.zone = *v;
      e.capacity = sp.settings.capacity_type;
      e.capacity_labelled = true;  // the file's capacityType, on-demand by default (docs/simulate.md)
      if (const std::optional<Capacity> c = capacity_of(pool.labels, source.labels, file)) {
        e.capacity = c->type;
        if (c->committed) e.committed = pool.node_count;
      }
      if (e.capacity == sim::CapacityType::kOnDemand) e.committed = std::max(e.committed, sp.settings.reserved_nodes);
      e.on_demand_usd_per_hour = pool.on_demand_usd_per_hour;
      e.spot_usd_per_hour = pool.spot_usd_per_hour;
      e.reserved_usd_per_hour = pool.reserved_usd_per_hour;
      e.origin = s != source_of.end() ? origin_of(source.name) : sp.origin;
      out.entries.push_back(std::move(e));
    }
  }
  if (out.entries.empty())
    throw InputError(path, 0, "", "no nodes (no Node, nor a pool of a NodePoolSet): --current takes `kubectl get nodes -o json` or a node-pool file (docs/node-pools.md)");
  return out;
}

}  // namespace

plan::CurrentCluster read_current_cluster(const std::string& path, std::vector<std::string>& warnings) {
  return current_cluster_of(read_k8s_inputs({path}), path, [](const std::string& file) { return read_yaml_file(file); }, warnings);
}

plan::CurrentCluster parse_current_cluster_text(std::string_view text, const std::string& source_name,
                                                std::vector<std::string>& warnings) {
  return current_cluster_of(parse_k8s_text(text, source_name), source_name, [&](const std::string&) { return std::string(text); },
                            warnings);
}

}  // namespace gpufleet::io
