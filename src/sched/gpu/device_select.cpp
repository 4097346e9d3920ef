#include "sched/gpu/device_select.h"

#include <algorithm>
#include <array>

namespace gpufleet::sched {
namespace {

// `count` replicas on node n's time-sliced GPUs: each on the GPU with the most free replicas, lowest
// index on ties; ascending.
std::vector<int32_t> pick_replicas(const ClusterState& state, NodeId n, int32_t count) {
  const Node& node = state.node(n);
  std::array<int32_t, kMaxGpusPerNode> free{};
  for (int32_t g = 0; g < node.gpu_count; ++g)
    free[static_cast<size_t>(g)] =
        state.gpu_kind(n, g) == GpuKind::kTimeSliced ? node.time_slicing->replicas - state.replicas_used(n, g) : 0;
  std::vector<int32_t> out;
  for (int32_t k = 0; k < count; ++k) {
    int32_t best = -1;
    for (int32_t g = 0; g < node.gpu_count; ++g)
      if (free[static_cast<size_t>(g)] > 0 && (best < 0 || free[static_cast<size_t>(g)] > free[static_cast<size_t>(best)])) best = g;
    if (best < 0) break;  // fewer free replicas than asked: can_allocate refuses the list
    --free[static_cast<size_t>(best)];
    out.push_back(best);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

DeviceAssignment select_devices(const Pod& pod, const ClusterState& state, NodeId n) {
  DeviceAssignment out;
  if (pod.gpu_memory_share) {
    out.gpus = select_memory_share_cards(pod, state, n);
    return out;
  }
  const Node& node = state.node(n);
  if (pod.is_gpu_pod()) {
    if (node.time_slicing && !node.time_slicing->renamed) {
      out.gpus = pick_replicas(state, n, pod.num_gpu);
    } else if (pod.is_share_pod()) {
      // Best fit among the plain GPUs: the MIG and time-sliced GPUs' accounting
      // (ClusterState::gpu_free_milli) is not room for a fraction.
      std::array<int32_t, kMaxGpusPerNode> free{};
      const auto all = state.gpu_free_milli(n);
      for (int32_t g = 0; g < node.gpu_count; ++g)
        free[static_cast<size_t>(g)] = state.gpu_kind(n, g) == GpuKind::kPlain ? all[static_cast<size_t>(g)] : -1;
      out.gpus.push_back(best_fit_gpu(std::span<const int32_t>(free.data(), all.size()), pod.gpu_milli));
    } else {
      out.gpus = select_whole_gpus(state, n, pod.num_gpu);
    }
  }
  if (pod.shared_replicas > 0) out.shared_replicas = pick_replicas(state, n, pod.shared_replicas);
  for (const MigRequest& r : pod.mig_requests) {
    int32_t left = r.count;
    for (size_t g = 0; g < node.mig.size() && left > 0; ++g) {
      const auto& instances = node.mig[g].instances;  // ordered by start
      for (size_t i = 0; i < instances.size() && left > 0; ++i)
        if (instances[i].profile == r.profile && !state.mig_device_taken(n, static_cast<int32_t>(g), i)) {
          out.mig.push_back(MigDevice{static_cast<int32_t>(g), instances[i].start, r.profile});
          --left;
        }
    }
  }
  return out;
}

std::vector<int32_t> select_memory_share_cards(const Pod& pod, const ClusterState& state, NodeId n) {
  std::vector<int32_t> out;
  if (!pod.gpu_memory_share || !state.memory_share_node_fits(n, *pod.gpu_memory_share)) return out;
  const GpuMemoryShare& request = *pod.gpu_memory_share;
  std::vector<std::pair<int64_t, int32_t>> fitting;  // (free memory, card)
  for (int32_t g = 0; g < state.node(n).gpu_count; ++g)
    if (state.memory_share_refusal(n, g, request) == CardRefusal::kFits)
      fitting.emplace_back(state.card_memory_mib(n) - state.card_memory_used_mib(n, g), g);
  std::sort(fitting.begin(), fitting.end());
  for (size_t i = 0; i < fitting.size() && out.size() < static_cast<size_t>(request.cards); ++i) out.push_back(fitting[i].second);
  std::sort(out.begin(), out.end());
  return out;
}

int32_t BestFitGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return best_fit_gpu(state.gpu_free_milli(n), pod.gpu_milli);
}

int32_t RandomGpuSelector::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const {
  int32_t chosen = -1;
  int64_t seen = 0;
  const auto free = state.gpu_free_milli(n);
  for (size_t g = 0; g < free.size(); ++g) {
    if (free[g] < pod.gpu_milli) continue;
    ++seen;
    if (rng.intn(seen) == 0) chosen = static_cast<int32_t>(g);
  }
  return chosen;
}

}  // namespace gpufleet::sched

namespace gpufleet::sched {
namespace {

// Whether GPU g of node n can be given whole: all 1000 gpu_milli free and a plain GPU.
bool whole_gpu_free(const ClusterState& state, NodeId n, std::span<const int32_t> free_milli, bool sharing, size_t g) {
  return free_milli[g] == kGpuMilliPerGpu && (!sharing || state.gpu_kind(n, static_cast<int32_t>(g)) == GpuKind::kPlain);
}

}  // namespace

std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count) {
  std::vector<int32_t> out;
  auto free = state.gpu_free_milli(n);
  const bool sharing = state.has_gpu_sharing(n);
  for (size_t g = 0; g < free.size() && static_cast<int32_t>(out.size()) < count; ++g)
    if (whole_gpu_free(state, n, free, sharing, g)) out.push_back(static_cast<int32_t>(g));
  return out;
}

int32_t numa_node_for_whole_gpus(const ClusterState& state, NodeId n, int32_t count) {
  const Node& node = state.node(n);
  if (node.gpu_numa_node.empty()) return -1;
  std::array<int32_t, kMaxNumaNodesPerNode> free{};
  const auto milli = state.gpu_free_milli(n);
  const bool sharing = state.has_gpu_sharing(n);
  for (size_t g = 0; g < milli.size() && g < node.gpu_numa_node.size(); ++g)
    if (whole_gpu_free(state, n, milli, sharing, g)) ++free[static_cast<size_t>(node.gpu_numa_node[g])];
  int32_t best = -1;
  for (int32_t z = 0; z < kMaxNumaNodesPerNode; ++z) {
    const int32_t f = free[static_cast<size_t>(z)];
    if (f >= count && (best < 0 || f < free[static_cast<size_t>(best)])) best = z;
  }
  return best;
}

std::vector<int32_t> select_whole_gpus(const ClusterState& state, NodeId n, int32_t count) {
  const Node& node = state.node(n);
  if (node.gpu_numa_node.empty() || node.topology_manager_policy == TopologyManagerPolicy::kNone)
    return lowest_free_gpus(state, n, count);
  const int32_t zone = numa_node_for_whole_gpus(state, n, count);
  if (zone < 0) return lowest_free_gpus(state, n, count);
  std::vector<int32_t> out;
  const auto milli = state.gpu_free_milli(n);
  const bool sharing = state.has_gpu_sharing(n);
  for (size_t g = 0; g < milli.size() && static_cast<int32_t>(out.size()) < count; ++g)
    if (node.gpu_numa_node[g] == zone && whole_gpu_free(state, n, milli, sharing, g)) out.push_back(static_cast<int32_t>(g));
  return out;
}

bool single_numa_node_admits(const Pod& pod, const ClusterState& state, NodeId n) {
  const Node& node = state.node(n);
  if (!node.requires_single_numa_node()) return true;
  // Whole GPUs only: a fraction sits on one GPU, so on one NUMA node.
  if (pod.num_gpu < 1 || pod.gpu_milli != kGpuMilliPerGpu) return true;
  if (node.time_slicing && !node.time_slicing->renamed) return true;
  return numa_node_for_whole_gpus(state, n, pod.num_gpu) >= 0;
}

int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli) {
  int32_t best = -1;
  for (size_t g = 0; g < gpu_free_milli.size(); ++g) {
    const int32_t left = gpu_free_milli[g];
    if (left >= gpu_milli && (best < 0 || left < gpu_free_milli[static_cast<size_t>(best)])) best = static_cast<int32_t>(g);
  }
  return best;
}

}  // namespace gpufleet::sched
