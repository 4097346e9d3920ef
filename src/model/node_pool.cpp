#include "model/node_pool.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "model/resources.h"

namespace gpufleet {
namespace {

[[noreturn]] void invalid(const NodePool& pool, const std::string& message) {
  throw std::invalid_argument(fmt::format("node pool '{}': {}", pool.name, message));
}

std::string profile_list(const std::map<std::string, int>& counts) {
  std::string s;
  for (const auto& [profile, n] : counts) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{}x {}", n, profile);
  }
  return s.empty() ? "nothing" : s;
}

void set_label(Labels& labels, const std::string& key, const std::string& value) {
  for (auto& [k, v] : labels)
    if (k == key) {
      v = value;
      return;
    }
  labels.emplace_back(key, value);
}

}  // namespace

void validate_pool(const NodePool& pool) {
  if (pool.name.empty()) invalid(pool, "the name is empty");
  if (pool.min_nodes < 0) invalid(pool, fmt::format("min {} is negative", pool.min_nodes));
  for (const auto& [key, size] : pool.topology_domains)
    if (key.empty() || size < 1) invalid(pool, fmt::format("topology domain {}: nodes per domain {} is below 1 or the label is empty", key, size));
  if (pool.min_nodes > pool.max_nodes) invalid(pool, fmt::format("min {} is above max {}", pool.min_nodes, pool.max_nodes));
  if (pool.node_count < pool.min_nodes || pool.node_count > pool.max_nodes)
    invalid(pool, fmt::format("node count {} is outside [min, max] = [{}, {}]", pool.node_count, pool.min_nodes,
                              pool.max_nodes));
  if (pool.cpu_milli < 0 || pool.memory_bytes < 0) invalid(pool, "CPU and memory must not be negative");
  if (pool.gpus_per_node < 0 || pool.gpus_per_node > kMaxGpusPerNode)
    invalid(pool, fmt::format("{} GPUs per node is outside [0, {}]", pool.gpus_per_node, kMaxGpusPerNode));
  const GpuModelInfo* model = nullptr;
  if (!pool.gpu_model.empty()) {
    model = find_gpu_model(pool.gpu_model);
    if (model == nullptr) invalid(pool, fmt::format("unknown GPU model '{}'", pool.gpu_model));
    if (pool.gpus_per_node == 0) invalid(pool, fmt::format("GPU model '{}' with 0 GPUs per node", pool.gpu_model));
  } else if (pool.gpus_per_node > 0) {
    invalid(pool, fmt::format("{} GPUs per node without a GPU model", pool.gpus_per_node));
  }
  for (const double p : {pool.on_demand_usd_per_hour, pool.spot_usd_per_hour.value_or(0),
                         pool.reserved_usd_per_hour.value_or(0)})
    if (!std::isfinite(p) || p < 0) invalid(pool, fmt::format("price {} is negative or not finite", p));
  if (pool.mig_devices) {
    if (model == nullptr) invalid(pool, "MIG devices on a pool without GPUs");
    if (!model->mig_capable) invalid(pool, fmt::format("GPU model {} is not MIG-capable", model->name));
    for (const auto& [profile, n] : *pool.mig_devices) {
      if (n < 0) invalid(pool, fmt::format("MIG profile {} count {} is negative", profile, n));
      if (model->find_mig_profile(profile) == nullptr)
        invalid(pool, fmt::format("GPU model {} has no MIG profile '{}'", model->name, profile));
    }
    if (!layout_for_counts(*model, *pool.mig_devices))
      invalid(pool, fmt::format("MIG devices {} do not fit on one {} GPU", profile_list(*pool.mig_devices), model->name));
  }
  if (pool.hami_split_count && (*pool.hami_split_count < 1 || pool.mig_devices || pool.time_slicing_replicas || pool.gpus_per_node < 1))
    invalid(pool, "HAMi sharing needs GPUs, a split count of at least 1, and no MIG, time-slicing or MPS");
  if (pool.time_slicing_replicas) {
    if (*pool.time_slicing_replicas < 1)
      invalid(pool, fmt::format("time-slicing replicas {} is below 1", *pool.time_slicing_replicas));
    if (model == nullptr) invalid(pool, "time-slicing on a pool without GPUs");
    if (pool.gpu_sharing_strategy == GpuSharingStrategy::kMps && pool.mig_devices)
      invalid(pool, "sharing using MPS is not supported for MIG devices");
  }
  if (pool.numa_nodes < 0 || pool.numa_nodes > kMaxNumaNodesPerNode)
    invalid(pool, fmt::format("{} NUMA nodes, outside 0..{}", pool.numa_nodes, kMaxNumaNodesPerNode));
  if (pool.numa_nodes > 0 && pool.gpus_per_node % pool.numa_nodes != 0)
    invalid(pool, fmt::format("{} GPUs per node do not split evenly over {} NUMA nodes", pool.gpus_per_node, pool.numa_nodes));
  for (const auto& [k, v] : pool.labels)
    if (k == kPoolLabel || k == kInstanceTypeLabel || k == kGpuProductLabel || k == kGpuCountLabel ||
        k == kGpuReplicasLabel || k == kNodeHostnameLabel)
      invalid(pool, fmt::format("label {} is set by gpufleet and must not be given", k));
}

std::string pool_node_name(std::string_view pool_name, int32_t index, int32_t node_count) {
  const size_t width = node_count > 1 ? std::to_string(node_count - 1).size() : 1;
  return fmt::format("{}-{:0{}}", pool_name, index, width);
}

void set_topology_labels(const NodePool& pool, int32_t index, Labels& labels) {
  for (const auto& [key, size] : pool.topology_domains) set_label(labels, key, fmt::format("{}-{}", pool.name, index / size));
}

std::vector<Node> expand_pool(const NodePool& pool) {
  validate_pool(pool);
  const GpuModelInfo* model = pool.gpu_model.empty() ? nullptr : find_gpu_model(pool.gpu_model);
  Labels labels = pool.labels;
  if (model != nullptr) {
    set_label(labels, kGpuProductLabel, model->product_labels.front());
    set_label(labels, kGpuCountLabel, std::to_string(pool.gpus_per_node));
    if (pool.time_slicing_replicas) set_label(labels, kGpuReplicasLabel, std::to_string(*pool.time_slicing_replicas));
    if (pool.time_slicing_replicas && pool.gpu_sharing_strategy == GpuSharingStrategy::kMps) {
      set_label(labels, kGpuSharingStrategyLabel, "mps");
      set_label(labels, kMpsCapableLabel, "true");
    }
  }
  if (!pool.instance_type.empty()) set_label(labels, kInstanceTypeLabel, pool.instance_type);
  set_label(labels, kPoolLabel, pool.name);

  // Device set-up: every GPU gets the pool's MIG layout (the lowest-start placement that
  // layout_for_counts finds; validate_pool checked that it exists); time-slicing applies to the GPUs
  // without MIG, advertised as nvidia.com/gpu (the device plugin's default: no rename,
  // failRequestsGreaterThanOne false).
  std::vector<GpuMig> mig;
  if (pool.mig_devices) mig.assign(static_cast<size_t>(pool.gpus_per_node), GpuMig{true, *layout_for_counts(*model, *pool.mig_devices)});
  std::optional<TimeSlicing> time_slicing;
  if (pool.time_slicing_replicas) {
    const bool mps = pool.gpu_sharing_strategy == GpuSharingStrategy::kMps;
    time_slicing = TimeSlicing{*pool.time_slicing_replicas, false, mps, pool.gpu_sharing_strategy};
  }

  std::vector<Node> nodes;
  nodes.reserve(static_cast<size_t>(pool.node_count));
  for (int32_t i = 0; i < pool.node_count; ++i) {
    Node n;
    n.name = pool_node_name(pool.name, i, pool.node_count);
    n.cpu_milli = pool.cpu_milli;
    n.memory_bytes = pool.memory_bytes;
    n.gpu_count = pool.gpus_per_node;
    n.gpu_model = model != nullptr ? model->name : std::string();
    n.max_pods = kKubeletDefaultMaxPods;
    n.labels = labels;
    set_topology_labels(pool, i, n.labels);
    set_label(n.labels, kNodeHostnameLabel, n.name);
    n.taints = pool.taints;
    n.mig = mig;
    n.time_slicing = time_slicing;
    // The GPU memory KAI-Scheduler counts from GFD's nvidia.com/gpu.memory label (model/gpu_memory_share.h).
    if (model != nullptr && pool.gpus_per_node > 0) n.gpu_memory_mib = kai_gpu_memory_mib(model->memory_mib);
    if (pool.hami_split_count && model != nullptr && pool.gpus_per_node > 0) {  // HAMi registers the card's whole memory
      n.hami = HamiDevices{*pool.hami_split_count, 100};
      n.gpu_memory_mib = model->memory_mib;
    }
    if (pool.numa_nodes > 0)
      for (int32_t g = 0; g < pool.gpus_per_node; ++g)
        n.gpu_numa_node.push_back(static_cast<int8_t>(g / (pool.gpus_per_node / pool.numa_nodes)));
    n.topology_manager_policy = pool.topology_manager_policy;
    n.topology_manager_scope = pool.topology_manager_scope;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace gpufleet
