#include "sched/plugins/balanced_allocation.h"

#include <algorithm>
#include <cmath>

namespace gpufleet::sched {

int64_t balanced_allocation_score(const Pod& pod, const ClusterState& state, NodeId n, KubeRelease release) {
  const Node& node = state.node(n);
  const double max_score = static_cast<double>(kMaxNodeScore);
  if (release == KubeRelease::kV1_20) {
    // balanced_allocation.go (v1.20) balancedResourceScorer with fractionOfCapacity.
    const auto fraction = [](int64_t requested, int64_t capacity) {
      return capacity == 0 ? 1.0 : static_cast<double>(requested) / static_cast<double>(capacity);
    };
    const double cpu = fraction(state.nonzero_cpu_requested_milli(n) + pod.nonzero_cpu_request_milli(), node.cpu_milli);
    const double memory =
        fraction(state.nonzero_memory_requested_bytes(n) + pod.nonzero_memory_request_bytes(), node.memory_bytes);
    if (cpu >= 1 || memory >= 1) return 0;
    return static_cast<int64_t>((1 - std::abs(cpu - memory)) * max_score);
  }
  // balancedResourceScorer (current): fractions capped at 1, resources with allocatable 0 left out.
  const int64_t requested[2] = {state.cpu_used_milli(n) + pod.cpu_milli,
                                node.memory_bytes - state.memory_free_bytes(n) + pod.memory_bytes};
  const int64_t allocatable[2] = {node.cpu_milli, node.memory_bytes};
  double fractions[2];
  size_t count = 0;
  for (size_t i = 0; i < 2; ++i) {
    if (allocatable[i] == 0) continue;
    fractions[count++] = std::min(1.0, static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]));
  }
  const double std_dev = count == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0.0;
  return static_cast<int64_t>((1 - std_dev) * max_score);
}

Status NodeResourcesBalancedAllocation::pre_score(const Pod& pod, const ClusterState&, std::span<const NodeId>, CycleState&,
                                                  GoRand&) const {
  if (release_ == KubeRelease::kCurrent && pod.cpu_milli == 0 && pod.memory_bytes == 0) return Status(Code::kSkip);
  return Status();
}

int64_t NodeResourcesBalancedAllocation::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return balanced_allocation_score(pod, state, n, release_);
}

}  // namespace gpufleet::sched
