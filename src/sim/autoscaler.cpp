#include "sim/autoscaler.h"

#include <algorithm>
#include <numeric>

#include "model/resources.h"
#include "sched/device_select.h"

namespace gpufleet::sim {

double node_utilization(const ClusterState& state, NodeId n) {
  const Node& node = state.node(n);
  if (node.gpu_count > 0) {
    const int64_t capacity = int64_t{node.gpu_count} * kGpuMilliPerGpu;
    return static_cast<double>(capacity - state.gpu_free_milli_total(n)) / static_cast<double>(capacity);
  }
  const double cpu = node.cpu_milli > 0 ? static_cast<double>(state.cpu_used_milli(n)) / static_cast<double>(node.cpu_milli) : 0.0;
  const double mem = node.memory_bytes > 0
                         ? static_cast<double>(node.memory_bytes - state.memory_free_bytes(n)) / static_cast<double>(node.memory_bytes)
                         : 0.0;
  return std::max(cpu, mem);
}

NodeBin::NodeBin(const NodePool& pool)
    : cpu_free_milli_(pool.cpu_milli),
      memory_free_bytes_(pool.memory_bytes),
      pods_free_(kKubeletDefaultMaxPods),  // expand_pool's max_pods
      gpu_free_milli_(static_cast<size_t>(pool.gpus_per_node), kGpuMilliPerGpu) {}

bool NodeBin::try_add(const Pod& pod) {
  if (pod.cpu_milli > cpu_free_milli_ || pod.memory_bytes > memory_free_bytes_ || pods_free_ < 1) return false;
  if (pod.is_share_pod()) {
    const int32_t g = sched::best_fit_gpu(gpu_free_milli_, pod.gpu_milli);
    if (g < 0) return false;
    gpu_free_milli_[static_cast<size_t>(g)] -= pod.gpu_milli;
  } else if (pod.is_gpu_pod()) {
    const auto whole = std::count(gpu_free_milli_.begin(), gpu_free_milli_.end(), kGpuMilliPerGpu);
    if (whole < pod.num_gpu) return false;
    int32_t left = pod.num_gpu;
    for (int32_t& f : gpu_free_milli_)
      if (left > 0 && f == kGpuMilliPerGpu) {
        f = 0;
        --left;
      }
  }
  cpu_free_milli_ -= pod.cpu_milli;
  memory_free_bytes_ -= pod.memory_bytes;
  --pods_free_;
  return true;
}

ScaleUpOption estimate_scale_up(size_t pool_index, const NodePool& pool, std::span<const Pod* const> pods,
                                int32_t max_nodes) {
  ScaleUpOption option;
  option.pool = pool_index;
  std::vector<size_t> order(pods.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Pod& x = *pods[a];
    const Pod& y = *pods[b];
    if (x.gpu_request_milli() != y.gpu_request_milli()) return x.gpu_request_milli() > y.gpu_request_milli();
    if (x.cpu_milli != y.cpu_milli) return x.cpu_milli > y.cpu_milli;
    return x.memory_bytes > y.memory_bytes;
  });
  std::vector<NodeBin> bins;
  for (size_t i : order) {
    const Pod& pod = *pods[i];
    bool placed = false;
    for (NodeBin& bin : bins)
      if (bin.try_add(pod)) {
        placed = true;
        break;
      }
    if (!placed && static_cast<int32_t>(bins.size()) < max_nodes) {
      bins.emplace_back(pool);
      placed = bins.back().try_add(pod);
    }
    if (!placed) continue;
    ++option.pods_helped;
    option.cpu_requested_milli += pod.cpu_milli;
    option.memory_requested_bytes += pod.memory_bytes;
    option.gpu_requested_milli += pod.gpu_request_milli();
  }
  option.nodes = static_cast<int32_t>(bins.size());
  option.cpu_capacity_milli = pool.cpu_milli * option.nodes;
  option.memory_capacity_bytes = pool.memory_bytes * option.nodes;
  option.gpu_capacity_milli = int64_t{pool.gpus_per_node} * kGpuMilliPerGpu * option.nodes;
  return option;
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
