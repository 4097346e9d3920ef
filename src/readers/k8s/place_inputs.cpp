#include "readers/k8s/place_inputs.h"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "admit/resource_quota.h"
#include "model/extended_resource_toleration.h"
#include "readers/k8s/device_setup.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/formats/input_limits.h"
#include "readers/k8s/pool_file.h"
#include "util/input_error.h"

namespace gpufleet::io {

std::vector<std::string> place_input_paths(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths) {
  // A path given twice (e.g. one folder as both --cluster and --workload) is read once.
  std::vector<std::string> paths;
  std::set<std::filesystem::path> seen;
  for (const auto* list : {&cluster_paths, &workload_paths})
    for (const std::string& path : *list) {
      std::error_code ec;
      const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
      if (seen.insert(ec ? std::filesystem::path(path) : canonical).second) paths.push_back(path);
    }
  return paths;
}

PlaceInputs read_place_inputs(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths,
                              const std::string& cluster_option) {
  std::string given;  // what the user gave for the nodes, as typed: "--cluster a.yaml --cluster b/"
  for (const std::string& path : cluster_paths) given += fmt::format("{}{} {}", given.empty() ? "" : " ", cluster_option, path);
  K8sObjects objects = read_k8s_inputs(place_input_paths(cluster_paths, workload_paths));
  // Files, not the API server's objects: a claim or template they do not hold is an input error.
  check_dra_claim_references(objects.dra, objects.dra_claim_references);  // readers/k8s/dra_yaml.h
  return place_inputs_from_objects(std::move(objects), given.empty() ? cluster_option : given);
}

PlaceInputs place_inputs_from_objects(K8sObjects objects, const std::string& nodes_given) {
  PlaceInputs out;
  out.objects = std::move(objects);

  // GPU sharing of the YAML nodes (device-plugin and mig-parted configs by node label; unknown GPU
  // models are errors at the label), then of the pool nodes.
  DeviceSetupReport devices = apply_device_setup(out.objects);
  // A node name two pools share is an error at the pool name in the file that repeats it. Pool nodes
  // carry their pool's positions, so that device set-up errors name the pool file and line.
  std::vector<Node> pool_nodes;
  std::deque<std::vector<K8sNodeSource>> sources_by_file;   // one per pool, shared by its nodes (stable)
  std::vector<const K8sNodeSource*> pool_sources;           // one per pool node
  std::vector<std::string> defined_in;                      // "pool P in F", per pool
  std::map<std::string, size_t> names;                      // node name -> defined_in index (SIZE_MAX: a Node)
  for (const std::string& file : out.objects.pool_files) {
    std::vector<K8sNodeSource>& sources = sources_by_file.emplace_back();
    std::vector<NodePool> pools = read_pool_file(file, &sources);
    for (size_t i = 0; i < pools.size(); ++i) {
      NodePool& pool = pools[i];
      const SourcePosition& at = sources[i].name;
      defined_in.push_back(fmt::format("pool {} in {}", pool.name, file));
      if (out.objects.nodes.size() + pool_nodes.size() + static_cast<size_t>(pool.node_count) > kObjectLimits.max_nodes)
        throw InputError(at.file, at.line, at.field,
                         limit_message(kObjectLimits.max_nodes, "nodes, counting the pools'", "ObjectLimits::max_nodes"), at.column);
      std::vector<Node> nodes;
      try {
        nodes = expand_pool(pool);
      } catch (const std::invalid_argument& e) {
        throw InputError(at.file, at.line, at.field, e.what(), at.column);
      }
      for (Node& node : nodes) {
        const auto [it, fresh] = names.try_emplace(node.name, defined_in.size() - 1);
        if (!fresh)
          throw InputError(at.file, at.line, at.field,
                           fmt::format("node name '{}' of pool {} is already a node of {}", node.name, pool.name,
                                       defined_in[it->second]),
                           at.column);
        pool_sources.push_back(&sources[i]);
        pool_nodes.push_back(std::move(node));
      }
      out.pools.push_back(std::move(pool));
    }
  }
  DeviceSetupReport pool_devices =
      apply_device_setup(pool_nodes, out.objects.time_slicing_configs, out.objects.mig_parted_configs, {}, pool_sources);
  out.input.nodes = std::move(pool_nodes);
  out.warnings = out.objects.warnings;
  for (auto* report : {&devices, &pool_devices}) {
    out.warnings.insert(out.warnings.end(), report->warnings.begin(), report->warnings.end());
    out.node_warnings.insert(out.node_warnings.end(), report->count_mismatches.begin(), report->count_mismatches.end());
  }
  for (Node& node : out.objects.nodes) {
    if (!names.try_emplace(node.name, SIZE_MAX).second) {
      SourcePosition at{"", 0, 0, "metadata.name"};
      for (const K8sNodeSource& src : out.objects.node_sources)
        if (src.node == node.name) at = src.name;
      throw InputError(at.file, at.line, at.field, fmt::format("node '{}' is defined both by a node pool and as a Node", node.name),
                       at.column);
    }
    out.input.nodes.push_back(node);
  }
  if (out.input.nodes.empty())
    throw UsageError(fmt::format("{}: no nodes (give Node objects or a gpufleet NodePoolSet file)", nodes_given));
  out.input.pods = out.objects.pods;
  // kube-apiserver's ExtendedResourceToleration, when the pools file's settings name it (K8sObjects).
  if (out.objects.extended_resource_toleration) {
    for (Pod& pod : out.input.pods) add_extended_resource_tolerations(pod, pod.constraints.tolerations);
    for (queue::Workload& w : out.objects.queued_workloads)
      for (queue::PodSet& set : w.pod_sets) add_extended_resource_tolerations(set.pod_template, set.pod_template.constraints.tolerations);
  }
  out.input.daemon_sets = out.objects.daemon_sets;
  // A DaemonSet may make a pod per node: at most that many count toward ObjectLimits::max_pods.
  size_t pods = out.input.pods.size();
  for (size_t i = 0; i < out.input.daemon_sets.size(); ++i) {
    pods += out.input.nodes.size();
    if (pods > kObjectLimits.max_pods) {
      const SourcePosition& at = out.objects.daemon_set_sources.at(i);
      throw InputError(at.file, at.line, at.field,
                       limit_message(kObjectLimits.max_pods, "pods, counting every controller's replicas and a pod per node for each DaemonSet",
                                     "ObjectLimits::max_pods"),
                       at.column);
    }
  }
  out.input.quotas = admit::from_specs(out.objects.quotas);
  for (std::string& w : admit::quota_differences(out.input.quotas)) out.warnings.push_back(std::move(w));
  out.input.pdbs = out.objects.pod_disruption_budgets;
  out.input.kueue = out.objects.kueue;
  out.input.queued_workloads = out.objects.queued_workloads;
  out.input.pod_groups = out.objects.pod_groups;
  out.input.dra = out.objects.dra;
  return out;
}

}  // namespace gpufleet::io
