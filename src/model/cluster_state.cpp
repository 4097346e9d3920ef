#include "model/cluster_state.h"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "model/mig.h"

namespace gpufleet {
namespace {

// Versions are drawn from one process-wide sequence, so two states never share one unless one is a
// copy of the other with the same anti-affinity pods (then whatever the version keys is the same).
uint64_t next_anti_affinity_version() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

ClusterState::ClusterState(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
  usage_.resize(nodes_.size());
  bound_.resize(nodes_.size());
  anti_pos_.assign(nodes_.size(), 0);
  anti_version_ = next_anti_affinity_version();
  gpu_offset_.reserve(nodes_.size());
  model_id_.reserve(nodes_.size());
  size_t offset = 0;
  for (const Node& node : nodes_) {
    if (node.cpu_milli < 0 || node.memory_bytes < 0 || node.gpu_count < 0 || node.max_pods < 0)
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

  // GPU sharing set-up: kinds, replica counters and MIG instance slots.
  sharing_.assign(nodes_.size(), 0);
  gpu_kind_.assign(offset, static_cast<uint8_t>(GpuKind::kPlain));
  replicas_used_.assign(offset, 0);
  mig_first_.assign(offset, 0);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    if (node.time_slicing && node.time_slicing->replicas < 1)
      throw std::invalid_argument(
          fmt::format("node {}: time-slicing replicas {} is below 1", node.name, node.time_slicing->replicas));
    if (!node.mig.empty() && node.mig.size() != static_cast<size_t>(node.gpu_count))
      throw std::invalid_argument(
          fmt::format("node {}: MIG set-up for {} GPUs, the node has {}", node.name, node.mig.size(), node.gpu_count));
    sharing_[n] = node.has_gpu_sharing() ? 1 : 0;
    const GpuModelInfo* model = nullptr;
    for (size_t g = 0; g < node.mig.size(); ++g) {
      const GpuMig& gm = node.mig[g];
      const size_t at = gpu_offset_[n] + g;
      mig_first_[at] = static_cast<uint32_t>(mig_taken_.size());
      if (!gm.enabled) {
        if (!gm.instances.empty())
          throw std::invalid_argument(fmt::format("node {}: GPU {} has MIG instances but MIG is not enabled", node.name, g));
        continue;
      }
      if (model == nullptr) {
        model = find_gpu_model(node.gpu_model);
        if (model == nullptr || !model->mig_capable)
          throw std::invalid_argument(fmt::format("node {}: GPU model '{}' is {}", node.name, node.gpu_model,
                                                  model == nullptr ? "unknown, MIG needs a catalog model" : "not MIG-capable"));
      }
      MigLayout layout(*model);
      for (const MigInstance& i : gm.instances) {
        if (!layout.place_at(i.profile, i.start))
          throw std::invalid_argument(fmt::format("node {}: GPU {}: MIG instance {} at memory slice {} does not fit the "
                                                  "{} placement rules",
                                                  node.name, g, i.profile, i.start, model->name));
        mig_taken_.push_back(0);
        mig_milli_.push_back(mig_device_gpu_milli(model->find_mig_profile(i.profile)->compute_slices));
      }
      gpu_kind_[at] = static_cast<uint8_t>(GpuKind::kMig);
    }
    if (node.time_slicing)
      for (int32_t g = 0; g < node.gpu_count; ++g) {
        uint8_t& kind = gpu_kind_[gpu_offset_[n] + static_cast<size_t>(g)];
        if (kind == static_cast<uint8_t>(GpuKind::kPlain)) kind = static_cast<uint8_t>(GpuKind::kTimeSliced);
      }
  }
}

int32_t ClusterState::replicas_free(NodeId n) const {
  const Node& node = nodes_[n];
  if (!node.time_slicing) return 0;
  int32_t free = 0;
  for (int32_t g = 0; g < node.gpu_count; ++g)
    if (gpu_kind(n, g) == GpuKind::kTimeSliced) free += node.time_slicing->replicas - replicas_used(n, g);
  return free;
}

int32_t ClusterState::mig_free_count(NodeId n, std::string_view profile) const {
  const Node& node = nodes_[n];
  int32_t free = 0;
  for (size_t g = 0; g < node.mig.size(); ++g) {
    const auto& instances = node.mig[g].instances;
    for (size_t i = 0; i < instances.size(); ++i)
      if (instances[i].profile == profile && !mig_device_taken(n, static_cast<int32_t>(g), i)) ++free;
  }
  return free;
}

int64_t ClusterState::mig_slot(NodeId n, const MigDevice& d) const {
  const Node& node = nodes_[n];
  if (d.gpu < 0 || static_cast<size_t>(d.gpu) >= node.mig.size()) return -1;
  const auto& instances = node.mig[static_cast<size_t>(d.gpu)].instances;
  for (size_t i = 0; i < instances.size(); ++i)
    if (instances[i].start == d.start && instances[i].profile == d.profile)
      return static_cast<int64_t>(mig_first_[gpu_offset_[n] + static_cast<size_t>(d.gpu)] + i);
  return -1;
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

std::string ClusterState::check_plain_gpus(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  auto free = gpu_free_milli(n);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int32_t g = gpus[i];
    if (g < 0 || g >= nodes_[n].gpu_count) return fmt::format("GPU index {} out of range", g);
    for (size_t j = 0; j < i; ++j)
      if (gpus[j] == g) return fmt::format("GPU index {} given twice", g);
    if (gpu_kind(n, g) != GpuKind::kPlain) return fmt::format("GPU {} has MIG enabled", g);
    if (free[static_cast<size_t>(g)] < pod.gpu_milli)
      return fmt::format("GPU {} has only {} milli free", g, free[static_cast<size_t>(g)]);
  }
  return {};
}

std::string ClusterState::check(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                                std::span<const MigDevice> mig) const {
  if (n >= nodes_.size()) return fmt::format("node id {} out of range", n);
  const Node& node = nodes_[n];
  if (pod.cpu_milli < 0 || pod.memory_bytes < 0 || pod.gpu_milli < 0 || pod.gpu_milli > kGpuMilliPerGpu)
    return "pod request out of range";
  if (pod.cpu_milli > cpu_free_milli(n)) return "insufficient cpu";
  if (pod.memory_bytes > memory_free_bytes(n)) return "insufficient memory";
  if (usage_[n].pods >= node.max_pods) return "too many pods";
  const size_t want = pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0;
  if (gpus.size() != want) return fmt::format("{} GPU indices given, pod needs {}", gpus.size(), want);
  if (sharing_[n] != 0 || !shared.empty() || !mig.empty() || pod.has_device_requests())
    return check_sharing(n, pod, gpus, shared, mig);
  if (std::string why = check_plain_gpus(n, pod, gpus); !why.empty()) return why;
  return {};
}

// The device part of check() when the node shares GPUs or the pod asks for shared devices.
std::string ClusterState::check_sharing(NodeId n, const Pod& pod, std::span<const int32_t> gpus,
                                        std::span<const int32_t> shared, std::span<const MigDevice> mig) const {
  const Node& node = nodes_[n];
  if (pod.shared_replicas < 0) return "pod request out of range";
  if (shared.size() != static_cast<size_t>(pod.shared_replicas))
    return fmt::format("{} shared replicas given, pod needs {}", shared.size(), pod.shared_replicas);
  int64_t mig_wanted = 0;
  for (const MigRequest& r : pod.mig_requests) {
    if (r.count < 1) return "pod request out of range";
    mig_wanted += r.count;
  }
  if (static_cast<int64_t>(mig.size()) != mig_wanted)
    return fmt::format("{} MIG devices given, pod needs {}", mig.size(), mig_wanted);

  const bool sliced = node.time_slicing.has_value();
  const bool renamed = sliced && node.time_slicing->renamed;
  // Replicas: count per GPU, each a time-sliced GPU with room (R - used) for its count.
  auto check_replicas = [&](std::span<const int32_t> list) -> std::string {
    std::array<int32_t, kMaxGpusPerNode> taking{};
    for (const int32_t g : list) {
      if (g < 0 || g >= node.gpu_count) return fmt::format("GPU index {} out of range", g);
      if (gpu_kind(n, g) != GpuKind::kTimeSliced) return fmt::format("GPU {} is not time-sliced", g);
      if (++taking[static_cast<size_t>(g)] + replicas_used(n, g) > node.time_slicing->replicas)
        return fmt::format("GPU {} has only {} of {} replicas free", g, node.time_slicing->replicas - replicas_used(n, g),
                           node.time_slicing->replicas);
    }
    return {};
  };

  if (!gpus.empty()) {
    if (sliced && renamed)
      return "nvidia.com/gpu is not advertised: the node's time-sliced GPUs are renamed nvidia.com/gpu.shared";
    if (sliced) {
      if (pod.gpu_milli != kGpuMilliPerGpu) return "a fraction of a GPU on a time-sliced node";
      if (std::string why = check_replicas(gpus); !why.empty()) return why;
    } else {
      if (std::string why = check_plain_gpus(n, pod, gpus); !why.empty()) return why;
    }
  }
  if (!shared.empty()) {
    if (!renamed) return "nvidia.com/gpu.shared is not advertised: the node has no renamed time-sliced GPUs";
    if (std::string why = check_replicas(shared); !why.empty()) return why;
  }
  for (size_t i = 0; i < mig.size(); ++i) {
    const MigDevice& d = mig[i];
    const int64_t slot = mig_slot(n, d);
    if (slot < 0) return fmt::format("GPU {} has no MIG instance {} at memory slice {}", d.gpu, d.profile, d.start);
    if (mig_taken_[static_cast<size_t>(slot)] != 0)
      return fmt::format("MIG device {} at GPU {} slice {} is taken", d.profile, d.gpu, d.start);
    for (size_t j = 0; j < i; ++j)
      if (mig[j].gpu == d.gpu && mig[j].start == d.start)
        return fmt::format("MIG device at GPU {} slice {} given twice", d.gpu, d.start);
  }
  for (const MigRequest& r : pod.mig_requests) {
    const auto given = std::count_if(mig.begin(), mig.end(), [&](const MigDevice& d) { return d.profile == r.profile; });
    if (given != r.count) return fmt::format("{} MIG devices {} given, pod needs {}", given, r.profile, r.count);
  }
  return {};
}

bool ClusterState::can_allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  return check(n, pod, gpus, {}, {}).empty();
}

bool ClusterState::can_allocate_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices) const {
  return check(n, pod, devices.gpus, devices.shared_replicas, devices.mig).empty();
}

void ClusterState::allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus) {
  do_allocate(n, pod, gpus, {}, {}, last_bind_seq_ + 1);
  last_bind_seq_ += 1;
}

void ClusterState::allocate_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices) {
  do_allocate(n, pod, devices.gpus, devices.shared_replicas, devices.mig, last_bind_seq_ + 1);
  last_bind_seq_ += 1;
}

void ClusterState::rebind(NodeId n, const BoundPod& bound) {
  const uint64_t seq = bound.bind_seq;
  bool ok = seq >= 1 && seq <= last_bind_seq_;
  if (ok && n < nodes_.size())
    for (const BoundPod& b : bound_[n]) ok = ok && b.bind_seq != seq;
  if (!ok) throw InvariantViolation(fmt::format("rebind {}: bind_seq {} was not released from this state", bound.pod.name, seq));
  do_allocate(n, bound.pod, bound.gpus, bound.shared_replicas, bound.mig, seq);
}

void ClusterState::release(NodeId n, const Pod& pod, std::span<const int32_t> gpus) { do_release(n, pod, gpus, {}, {}); }

void ClusterState::release_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices) {
  do_release(n, pod, devices.gpus, devices.shared_replicas, devices.mig);
}

void ClusterState::apply_devices(NodeId n, const Pod& pod, std::span<const int32_t> gpus,
                                 std::span<const int32_t> shared, std::span<const MigDevice> mig, int sign) {
  Usage& u = usage_[n];
  auto take = [&](size_t at, int32_t milli) {
    gpu_free_[at] -= sign * milli;
    u.gpu_free_total_milli -= sign * milli;
    gpu_used_milli_ += sign * milli;
  };
  const int32_t replica_milli = nodes_[n].time_slicing ? replica_gpu_milli(nodes_[n].time_slicing->replicas) : 0;
  for (int32_t g : gpus) {
    const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
    if (gpu_kind_[at] == static_cast<uint8_t>(GpuKind::kTimeSliced)) {
      replicas_used_[at] += sign;
      take(at, replica_milli);
    } else {
      take(at, pod.gpu_milli);
    }
  }
  for (int32_t g : shared) {
    const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
    replicas_used_[at] += sign;
    take(at, replica_milli);
  }
  for (const MigDevice& d : mig) {
    const auto slot = static_cast<size_t>(mig_slot(n, d));
    mig_taken_[slot] = sign > 0 ? 1 : 0;
    take(gpu_offset_[n] + static_cast<size_t>(d.gpu), mig_milli_[slot]);
  }
}

void ClusterState::do_allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                               std::span<const MigDevice> mig, uint64_t bind_seq) {
  if (std::string why = check(n, pod, gpus, shared, mig); !why.empty())
    throw InvariantViolation(fmt::format("allocate {} on {}: {}", pod.name, n < nodes_.size() ? nodes_[n].name : "?", why));
  Usage& u = usage_[n];
  u.cpu_used_milli += pod.cpu_milli;
  u.memory_used_bytes += pod.memory_bytes;
  u.pods += 1;
  if (sharing_[n] == 0 && shared.empty() && mig.empty()) {
    for (int32_t g : gpus) {
      gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] -= pod.gpu_milli;
      u.gpu_free_total_milli -= pod.gpu_milli;
      gpu_used_milli_ += pod.gpu_milli;
    }
  } else {
    apply_devices(n, pod, gpus, shared, mig, +1);
  }
  if (int k = kind_index(pod); k >= 0) ++u.gpu_pod_kinds[static_cast<size_t>(k)];
  if (!pod.constraints.required_anti_affinity.empty()) {
    if (u.anti_affinity_pods++ == 0) {
      anti_nodes_.push_back(n);
      anti_pos_[n] = static_cast<uint32_t>(anti_nodes_.size());
    }
    ++anti_affinity_pods_;
    anti_version_ = next_anti_affinity_version();
  }
  ++u.version;
  // Keep pods_on(n) in binding order: a new pod goes last, a rebound one back to its place.
  auto& bound = bound_[n];
  auto at = bound.end();
  if (!bound.empty() && bound.back().bind_seq > bind_seq)
    at = std::upper_bound(bound.begin(), bound.end(), bind_seq,
                          [](uint64_t seq, const BoundPod& b) { return seq < b.bind_seq; });
  bound.insert(at, BoundPod{pod, std::vector<int32_t>(gpus.begin(), gpus.end()),
                            std::vector<int32_t>(shared.begin(), shared.end()),
                            std::vector<MigDevice>(mig.begin(), mig.end()), bind_seq});
}

void ClusterState::do_release(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                              std::span<const MigDevice> mig) {
  if (n >= nodes_.size()) throw InvariantViolation("release: node id out of range");
  Usage& u = usage_[n];
  const size_t want = pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0;
  bool ok = u.pods > 0 && u.cpu_used_milli >= pod.cpu_milli && u.memory_used_bytes >= pod.memory_bytes &&
            gpus.size() == want;
  for (int32_t g : gpus) {
    ok = ok && g >= 0 && g < nodes_[n].gpu_count &&
         (gpu_kind(n, g) == GpuKind::kTimeSliced ||
          gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] + pod.gpu_milli <= kGpuMilliPerGpu);
  }
  const int k = kind_index(pod);
  ok = ok && (k < 0 || u.gpu_pod_kinds[static_cast<size_t>(k)] > 0);
  auto& bound = bound_[n];
  // The bound record matches only devices that allocate() checked, so undoing them keeps every
  // invariant.
  auto it = std::find_if(bound.begin(), bound.end(), [&](const BoundPod& b) {
    return b.pod.name == pod.name && b.pod.namespace_name == pod.namespace_name &&
           b.pod.cpu_milli == pod.cpu_milli && b.pod.memory_bytes == pod.memory_bytes &&
           b.pod.num_gpu == pod.num_gpu && b.pod.gpu_milli == pod.gpu_milli &&
           b.pod.shared_replicas == pod.shared_replicas && b.pod.mig_requests == pod.mig_requests &&
           std::equal(b.gpus.begin(), b.gpus.end(), gpus.begin(), gpus.end()) &&
           std::equal(b.shared_replicas.begin(), b.shared_replicas.end(), shared.begin(), shared.end()) &&
           std::equal(b.mig.begin(), b.mig.end(), mig.begin(), mig.end());
  });
  ok = ok && it != bound.end();
  if (!ok) throw InvariantViolation(fmt::format("release {} from {}: not reserved there", pod.name, nodes_[n].name));
  if (!it->pod.constraints.required_anti_affinity.empty()) {
    if (--u.anti_affinity_pods == 0) {  // swap-remove n from anti_nodes_
      const uint32_t at = anti_pos_[n] - 1;
      anti_nodes_[at] = anti_nodes_.back();
      anti_pos_[anti_nodes_[at]] = at + 1;
      anti_nodes_.pop_back();
      anti_pos_[n] = 0;
    }
    --anti_affinity_pods_;
    anti_version_ = next_anti_affinity_version();
  }
  bound.erase(it);
  u.cpu_used_milli -= pod.cpu_milli;
  u.memory_used_bytes -= pod.memory_bytes;
  u.pods -= 1;
  if (sharing_[n] == 0 && shared.empty() && mig.empty()) {
    for (int32_t g : gpus) {
      gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] += pod.gpu_milli;
      u.gpu_free_total_milli += pod.gpu_milli;
      gpu_used_milli_ -= pod.gpu_milli;
    }
  } else {
    apply_devices(n, pod, gpus, shared, mig, -1);
  }
  if (k >= 0) --u.gpu_pod_kinds[static_cast<size_t>(k)];
  ++u.version;
}

}  // namespace gpufleet
