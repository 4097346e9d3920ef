// Topology domains: the groups of nodes that share a value of a topology label (a zone, a rack or
// block, an NVLink domain such as nvidia.com/gpu.clique, a host), as Kueue's Topology levels define
// them (kueue site/content/en/docs/concepts/topology_aware_scheduling.md). Read-only views of a
// ClusterState.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"

namespace gpufleet::sched {

/// The hostname label; a node without it is its own domain of this level, named by the node's name
/// (the kubelet sets kubernetes.io/hostname on every node).
inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

/// The domain of node n at `level` (a node label key): the label's value, the node's name for
/// kHostnameLabel without the label, empty when the node has no such label (in no domain of the level).
std::string_view domain_of(const ClusterState& state, NodeId n, std::string_view level);

/// One domain of a level and its free capacity (schedulable live nodes only).
struct DomainCapacity {
  std::string value;
  int64_t free_gpu_milli = 0;  ///< sum of ClusterState::gpu_free_milli_total over its nodes
  int32_t nodes = 0;
};

/// The domains of `level` that have at least `needed_gpu_milli` free, best fit first: the least free
/// GPU first (whole domains stay whole, as gpufleet's policy keeps whole GPUs whole), then value.
/// Cordoned nodes do not count.
std::vector<DomainCapacity> rank_domains(const ClusterState& state, std::string_view level, int64_t needed_gpu_milli);

}  // namespace gpufleet::sched
