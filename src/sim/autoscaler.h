// The Cluster Autoscaler's decision rules, as pure functions (the simulator drives them from its
// autoscaler tick; sim/simulator.h). Source: kubernetes/autoscaler cluster-autoscaler (config/flags/
// flags.go, FAQ.md, estimator/binpacking_estimator.go,
// expander/waste/waste.go, simulator/utilization). Differences are listed per function and in
// docs/simulate.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "model/pod.h"
#include "sim/config.h"

namespace gpufleet::sim {

/// A node's utilization as the scale-down rule measures it: for a node with GPUs, requested GPU
/// milli / GPU capacity (--scale-down-gpu-utilization-threshold counts only GPUs on GPU nodes);
/// otherwise max(requested CPU / allocatable CPU, requested memory / allocatable memory). In [0, 1].
double node_utilization(const ClusterState& state, NodeId n);

/// An empty node of a pool during the scale-up estimate, tracking what the pods packed on it take.
/// Fit: CPU, memory and pod count; a sharing pod needs one GPU with gpu_milli free (best fit, as the
/// framework's "best" selection), a whole-GPU pod num_gpu fully free GPUs (lowest first). Scheduling
/// constraints (taints, affinity) are checked by the caller against the pool's template node.
/// Pod cap: kKubeletDefaultMaxPods (110) per node, the kubelet --max-pods default that expand_pool
/// gives every node of a pool (model/node_pool.h), so a bin holds what a real node of the pool would;
/// CA's binpacking estimator likewise runs the scheduler's filters, pod count included, on the
/// template node.
class NodeBin {
 public:
  explicit NodeBin(const NodePool& pool);
  /// Reserves the pod's request and returns true if it fits; false (unchanged) otherwise.
  bool try_add(const Pod& pod);

 private:
  int64_t cpu_free_milli_;
  int64_t memory_free_bytes_;
  int32_t pods_free_;
  std::vector<int32_t> gpu_free_milli_;
};

/// What scaling one pool up would do.
struct ScaleUpOption {
  size_t pool = 0;                   ///< index of the pool
  int32_t nodes = 0;                 ///< new nodes needed
  int32_t pods_helped = 0;           ///< pending pods that fit on them
  int64_t cpu_requested_milli = 0;   ///< summed over the helped pods
  int64_t memory_requested_bytes = 0;
  int64_t gpu_requested_milli = 0;
  int64_t cpu_capacity_milli = 0;    ///< summed over the new nodes
  int64_t memory_capacity_bytes = 0;
  int64_t gpu_capacity_milli = 0;
  double price_usd_per_hour = 0;     ///< marginal price of the new nodes (covered reserved nodes: 0)
};

/// The binpacking estimator: packs `pods` (all known to fit the pool's template node) onto at most
/// `max_nodes` new nodes, first-fit decreasing (pods sorted by GPU request, then CPU, then memory,
/// descending; ties keep their order), opening a node when a pod fits no open one. The option's
/// price is left 0.
ScaleUpOption estimate_scale_up(size_t pool_index, const NodePool& pool, std::span<const Pod* const> pods,
                                int32_t max_nodes);

/// least-waste score, lower is better (expander/waste/waste.go): (1 - cpu_req/cpu_cap) +
/// (1 - mem_req/mem_cap), plus (1 - gpu_req/gpu_cap) when the nodes have GPUs (gpufleet's
/// addition: CA ignores GPUs here, which would let CPU pods pick GPU pools).
double waste_score(const ScaleUpOption& option);

/// price score, lower is better: USD per hour of the new nodes per helped pod. (CA's price expander
/// is GCE-only and compares against a "preferred node"; this is the simple cost-per-pod reading.)
double price_score(const ScaleUpOption& option);

/// The expander: the option with the best score among those that help a pod; ties go to the other
/// score (least-waste then price, or price then least-waste), then to the lower pool index (CA breaks
/// ties at random; gpufleet is deterministic). Returns an index into options, or -1 if none helps.
int choose_option(std::span<const ScaleUpOption> options, Expander expander);

}  // namespace gpufleet::sim
