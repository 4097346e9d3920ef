#include "model/cluster_state.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpufleet {

ClusterState::ClusterState(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
  usage_.resize(nodes_.size());
  bound_.resize(nodes_.size());
  gpu_offset_.reserve(nodes_.size());
  model_id_.reserve(nodes_.size());
  size_t offset = 0;
  for (const Node& node : nodes_) {
    if (node.cpu_milli < 0 || node.memory_mib < 0 || node.gpu_count < 0 || node.max_pods < 0)
      throw std::invalid_argument(fmt::format("node {}: negative capacity", node.name));
    if (node.gpu_count > kMaxGpusPerNode)
      throw std::invalid_argument(
          fmt::format("node {}: {} GPUs, more than {} per node", node.name, node.gpu_count, kMaxGpusPerNode));
    gpu_offset_.push_back(offset);
    offset += static_cast<size_t>(node.gpu_count);
    auto it = std::find(models_.begin(), models_.end(), node.gpu_model);
    if (it == models_.end()) {
      models_.push_back(node.gpu_model);
      it = models_.end() - 1;
    }
    model_id_.push_back(static_cast<int32_t>(it - models_.begin()));
  }
  gpu_free_.assign(offset, kGpuMilliPerGpu);
  for (size_t n = 0; n < nodes_.size(); ++n) usage_[n].gpu_free_total_milli = nodes_[n].gpu_count * kGpuMilliPerGpu;
  gpu_capacity_milli_ = static_cast<int64_t>(offset) * kGpuMilliPerGpu;
}

int32_t ClusterState::gpu_fully_free_count(NodeId n) const {
  int32_t count = 0;
  for (int32_t left : gpu_free_milli(n)) count += left == kGpuMilliPerGpu;
  return count;
}

int ClusterState::kind_index(const Pod& pod) {
  if (!pod.is_gpu_pod()) return -1;
  if (pod.gpu_milli < kGpuMilliPerGpu) return 0;
  return std::clamp(pod.num_gpu, 1, kMaxGpusPerPod);
}

std::string ClusterState::check(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  if (n >= nodes_.size()) return fmt::format("node id {} out of range", n);
  const Node& node = nodes_[n];
  if (pod.cpu_milli < 0 || pod.memory_mib < 0 || pod.gpu_milli < 0 || pod.gpu_milli > kGpuMilliPerGpu)
    return "pod request out of range";
  if (pod.cpu_milli > cpu_free_milli(n)) return "insufficient cpu";
  if (pod.memory_mib > memory_free_mib(n)) return "insufficient memory";
  if (usage_[n].pods >= node.max_pods) return "too many pods";
  const size_t want = pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0;
  if (gpus.size() != want) return fmt::format("{} GPU indices given, pod needs {}", gpus.size(), want);
  auto free = gpu_free_milli(n);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int32_t g = gpus[i];
    if (g < 0 || g >= node.gpu_count) return fmt::format("GPU index {} out of range", g);
    for (size_t j = 0; j < i; ++j)
      if (gpus[j] == g) return fmt::format("GPU index {} given twice", g);
    if (free[static_cast<size_t>(g)] < pod.gpu_milli) return fmt::format("GPU {} has only {} milli free", g, free[static_cast<size_t>(g)]);
  }
  return {};
}

bool ClusterState::can_allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  return check(n, pod, gpus).empty();
}

void ClusterState::allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus) {
  bind(n, pod, gpus, last_bind_seq_ + 1);
  last_bind_seq_ += 1;
}

void ClusterState::rebind(NodeId n, const BoundPod& bound) {
  const uint64_t seq = bound.bind_seq;
  bool ok = seq >= 1 && seq <= last_bind_seq_;
  if (ok && n < nodes_.size())
    for (const BoundPod& b : bound_[n]) ok = ok && b.bind_seq != seq;
  if (!ok) throw InvariantViolation(fmt::format("rebind {}: bind_seq {} was not released from this state", bound.pod.name, seq));
  bind(n, bound.pod, bound.gpus, seq);
}

void ClusterState::bind(NodeId n, const Pod& pod, std::span<const int32_t> gpus, uint64_t bind_seq) {
  if (std::string why = check(n, pod, gpus); !why.empty())
    throw InvariantViolation(fmt::format("allocate {} on {}: {}", pod.name, n < nodes_.size() ? nodes_[n].name : "?", why));
  Usage& u = usage_[n];
  u.cpu_used_milli += pod.cpu_milli;
  u.memory_used_mib += pod.memory_mib;
  u.pods += 1;
  for (int32_t g : gpus) {
    gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] -= pod.gpu_milli;
    u.gpu_free_total_milli -= pod.gpu_milli;
    gpu_used_milli_ += pod.gpu_milli;
  }
  if (int k = kind_index(pod); k >= 0) ++u.gpu_pod_kinds[static_cast<size_t>(k)];
  if (!pod.constraints.required_anti_affinity.empty()) {
    ++u.anti_affinity_pods;
    ++anti_affinity_pods_;
  }
  ++u.version;
  // Keep pods_on(n) in binding order: a new pod goes last, a rebound one back to its place.
  auto& bound = bound_[n];
  auto at = bound.end();
  if (!bound.empty() && bound.back().bind_seq > bind_seq)
    at = std::upper_bound(bound.begin(), bound.end(), bind_seq,
                          [](uint64_t seq, const BoundPod& b) { return seq < b.bind_seq; });
  bound.insert(at, BoundPod{pod, std::vector<int32_t>(gpus.begin(), gpus.end()), bind_seq});
}

void ClusterState::release(NodeId n, const Pod& pod, std::span<const int32_t> gpus) {
  if (n >= nodes_.size()) throw InvariantViolation("release: node id out of range");
  Usage& u = usage_[n];
  const size_t want = pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0;
  bool ok = u.pods > 0 && u.cpu_used_milli >= pod.cpu_milli && u.memory_used_mib >= pod.memory_mib &&
            gpus.size() == want;
  for (int32_t g : gpus) {
    ok = ok && g >= 0 && g < nodes_[n].gpu_count &&
         gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] + pod.gpu_milli <= kGpuMilliPerGpu;
  }
  const int k = kind_index(pod);
  ok = ok && (k < 0 || u.gpu_pod_kinds[static_cast<size_t>(k)] > 0);
  auto& bound = bound_[n];
  auto it = std::find_if(bound.begin(), bound.end(), [&](const BoundPod& b) {
    return b.pod.name == pod.name && b.pod.namespace_name == pod.namespace_name &&
           b.pod.cpu_milli == pod.cpu_milli && b.pod.memory_mib == pod.memory_mib &&
           b.pod.num_gpu == pod.num_gpu && b.pod.gpu_milli == pod.gpu_milli &&
           std::equal(b.gpus.begin(), b.gpus.end(), gpus.begin(), gpus.end());
  });
  ok = ok && it != bound.end();
  if (!ok) throw InvariantViolation(fmt::format("release {} from {}: not reserved there", pod.name, nodes_[n].name));
  if (!it->pod.constraints.required_anti_affinity.empty()) {
    --u.anti_affinity_pods;
    --anti_affinity_pods_;
  }
  bound.erase(it);
  u.cpu_used_milli -= pod.cpu_milli;
  u.memory_used_mib -= pod.memory_mib;
  u.pods -= 1;
  for (int32_t g : gpus) {
    gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] += pod.gpu_milli;
    u.gpu_free_total_milli += pod.gpu_milli;
    gpu_used_milli_ -= pod.gpu_milli;
  }
  if (k >= 0) --u.gpu_pod_kinds[static_cast<size_t>(k)];
  ++u.version;
}

}  // namespace gpufleet
