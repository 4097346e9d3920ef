#include "sim/rules/cluster_autoscaler.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/dynamic_resources.h"

namespace gpufleet::sim {

double node_utilization(const ClusterState& state, NodeId n, int64_t skipped_cpu_milli, int64_t skipped_memory_bytes,
                        const DraNodeSlices* dra) {
  const Node& node = state.node(n);
  if (node.gpu_count > 0) {
    const int64_t capacity = int64_t{node.gpu_count} * kGpuMilliPerGpu;
    return static_cast<double>(capacity - state.gpu_free_milli_total(n)) / static_cast<double>(capacity);
  }
  if (dra != nullptr)
    if (const std::optional<DraNodeUtilization> u = dra->utilization(state, n)) return u->measured ? u->utilization : 1.0;
  const auto share = [](int64_t requested, int64_t allocatable) {
    return allocatable > 0 && requested > 0 ? static_cast<double>(requested) / static_cast<double>(allocatable) : 0.0;
  };
  const double cpu = share(state.cpu_used_milli(n) - skipped_cpu_milli, node.cpu_milli - skipped_cpu_milli);
  const double mem = share(node.memory_bytes - state.memory_free_bytes(n) - skipped_memory_bytes, node.memory_bytes - skipped_memory_bytes);
  return std::max(cpu, mem);
}

namespace {

// The estimate's one fit check: the devices a scheduling cycle would choose for the pod on node n and
// whether ClusterState takes them there (and, on a single-numa-node node, from one NUMA node, as the
// NodeResourceTopologyMatch filter requires). nullopt when the pod does not fit.
std::optional<DeviceAssignment> fit(const Pod& pod, const ClusterState& state, NodeId n) {
  if (!sched::single_numa_node_admits(pod, state, n)) return std::nullopt;
  DeviceAssignment devices = sched::select_devices(pod, state, n);
  if (!pod.resource_claims.empty()) {  // the DynamicResources plugin's devices on this node's slices
    std::optional<std::vector<DraClaimAllocation>> claims = sched::dra_assign_claims(pod, state, n);
    if (!claims) return std::nullopt;
    devices.claims = std::move(*claims);
  }
  if (!state.can_allocate(n, pod, devices)) return std::nullopt;
  return devices;
}

// Reserves the pod on the single node of a scratch state if it fits there.
bool reserve(ClusterState& node, const Pod& pod) {
  std::optional<DeviceAssignment> devices = fit(pod, node, 0);
  if (devices) node.allocate(0, pod, *devices);
  return devices.has_value();
}

// What a scratch node keeps of a pod: its request. The name and constraints would only be copied.
Pod request_of(const Pod& pod) {
  Pod r;
  r.cpu_milli = pod.cpu_milli;
  r.memory_bytes = pod.memory_bytes;
  r.num_gpu = pod.num_gpu;
  r.gpu_milli = pod.gpu_milli;
  r.mig_requests = pod.mig_requests;
  r.shared_replicas = pod.shared_replicas;
  r.gpu_memory_share = pod.gpu_memory_share;
  if (!pod.resource_claims.empty()) {  // a template claim's key is the pod's: keep what names it
    r.name = pod.name;
    r.namespace_name = pod.namespace_name;
    r.resource_claims = pod.resource_claims;
  }
  return r;
}

// gpu_milli the pod takes on an empty node like `node` as ClusterState counts it: num_gpu x gpu_milli
// on plain GPUs, floor(1000 / R) per replica on a time-sliced node, floor(1000 x g / 7) per MIG device.
int64_t gpu_milli_on(const Node& node, const GpuModelInfo* model, const Pod& pod) {
  int64_t milli = 0;
  if (node.time_slicing && node.mig.empty())
    milli = int64_t{pod.num_gpu + pod.shared_replicas} * replica_gpu_milli(node.time_slicing->replicas);
  else
    milli = pod.gpu_request_milli();
  if (model != nullptr)
    for (const MigRequest& r : pod.mig_requests)
      if (const MigProfile* profile = model->find_mig_profile(r.profile))
        milli += int64_t{r.count} * mig_device_gpu_milli(profile->compute_slices);
  return milli;
}

}  // namespace

TemplateNodes::TemplateNodes(const Node& template_node, std::span<const Pod> daemon_pods, std::shared_ptr<const DraCatalog> dra)
    : dra_(std::move(dra)) {
  for (const Pod& pod : daemon_pods) daemon_pods_.push_back(request_of(pod));
  // What the fit check reads: capacity and devices (labels and taints are the caller's filters).
  template_.name = template_node.name;
  template_.cpu_milli = template_node.cpu_milli;
  template_.memory_bytes = template_node.memory_bytes;
  template_.gpu_count = template_node.gpu_count;
  template_.gpu_model = template_node.gpu_model;
  template_.max_pods = template_node.max_pods;
  template_.time_slicing = template_node.time_slicing;
  template_.mig = template_node.mig;
  template_.gpu_numa_node = template_node.gpu_numa_node;
  template_.topology_manager_policy = template_node.topology_manager_policy;
  template_.topology_manager_scope = template_node.topology_manager_scope;
}

bool TemplateNodes::add_first_fit(const Pod& pod, int32_t max_nodes) {
  const Pod request = request_of(pod);
  for (ClusterState& node : nodes_)
    if (reserve(node, request)) return true;
  if (size() >= max_nodes) return false;
  ClusterState& node = nodes_.emplace_back(std::vector<Node>{template_});
  if (dra_) node.set_dra_catalog(dra_);
  for (const Pod& daemon : daemon_pods_) reserve(node, daemon);
  return reserve(node, request);
}

ScaleUpOption estimate_scale_up(size_t pool_index, const Node& template_node, std::span<const Pod* const> pods,
                                int32_t max_nodes, std::span<const Pod> daemon_pods, std::shared_ptr<const DraCatalog> dra) {
  ScaleUpOption option;
  option.pool = pool_index;
  const GpuModelInfo* model = template_node.mig.empty() ? nullptr : find_gpu_model(template_node.gpu_model);
  std::vector<int64_t> size(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) size[i] = gpu_milli_on(template_node, model, *pods[i]);
  std::vector<size_t> order(pods.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Pod& x = *pods[a];
    const Pod& y = *pods[b];
    if (size[a] != size[b]) return size[a] > size[b];
    if (x.cpu_milli != y.cpu_milli) return x.cpu_milli > y.cpu_milli;
    return x.memory_bytes > y.memory_bytes;
  });
  TemplateNodes nodes(template_node, daemon_pods, std::move(dra));
  for (size_t i : order) {
    const Pod& pod = *pods[i];
    if (!nodes.add_first_fit(pod, max_nodes)) continue;
    ++option.pods_helped;
    option.cpu_requested_milli += pod.cpu_milli;
    option.memory_requested_bytes += pod.memory_bytes;
    option.gpu_requested_milli += size[i];
  }
  option.nodes = nodes.size();
  option.cpu_capacity_milli = template_node.cpu_milli * option.nodes;
  option.memory_capacity_bytes = template_node.memory_bytes * option.nodes;
  option.gpu_capacity_milli = int64_t{template_node.gpu_count} * kGpuMilliPerGpu * option.nodes;
  return option;
}

ScaleUpOption estimate_scale_up(size_t pool_index, const NodePool& pool, std::span<const Pod* const> pods,
                                int32_t max_nodes) {
  NodePool one = pool;
  one.node_count = 1;
  one.min_nodes = 0;
  one.max_nodes = std::max(one.max_nodes, 1);
  return estimate_scale_up(pool_index, expand_pool(one).front(), pods, max_nodes);
}

double waste_score(const ScaleUpOption& o) {
  auto wasted = [](int64_t requested, int64_t capacity) {
    return capacity > 0 ? 1.0 - static_cast<double>(requested) / static_cast<double>(capacity) : 0.0;
  };
  double score = wasted(o.cpu_requested_milli, o.cpu_capacity_milli) + wasted(o.memory_requested_bytes, o.memory_capacity_bytes);
  if (o.gpu_capacity_milli > 0) score += wasted(o.gpu_requested_milli, o.gpu_capacity_milli);
  return score;
}

double price_score(const ScaleUpOption& o) {
  return o.pods_helped > 0 ? o.price_usd_per_hour / o.pods_helped : 0.0;
}

int choose_option(std::span<const ScaleUpOption> options, Expander expander) {
  int best = -1;
  auto key = [&](const ScaleUpOption& o) {
    const double w = waste_score(o), p = price_score(o);
    return expander == Expander::kPrice ? std::pair{p, w} : std::pair{w, p};
  };
  for (size_t i = 0; i < options.size(); ++i) {
    if (options[i].pods_helped == 0) continue;
    if (best < 0 || key(options[i]) < key(options[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace gpufleet::sim
