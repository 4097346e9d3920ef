// ClusterState: the mutable allocation state of a set of nodes. No I/O.
//
// Invariants kept by allocate()/release() (a violating call throws InvariantViolation and leaves the
// state unchanged):
//  - no GPU above 1000 gpu_milli used, none below 0;
//  - no node above its allocatable CPU (cpu_milli), memory (memory_mib) or pod capacity (max_pods);
//  - a pod takes exactly num_gpu distinct GPUs of one node, each with gpu_milli free;
//    a multi-GPU pod therefore takes whole free GPUs (its gpu_milli is 1000).
// Every change bumps the node's version(), so schedulers can cache per-node results.
// The state also keeps a copy of every bound pod (kube's NodeInfo.Pods), for plugins that look at
// the pods already on a node (inter-pod anti-affinity) and for preemption.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet {

using NodeId = uint32_t;

/// A pod bound to a node and the devices it holds there.
struct BoundPod {
  Pod pod;
  std::vector<int32_t> gpus;  ///< GPU indices, as given to allocate()
  /// Cluster-wide binding order: 1 for the state's first allocate(), then 2, 3, ... (never reused).
  /// Stands in for the pod's start time (kube status.startTime) in preemption's orderings.
  uint64_t bind_seq = 0;
};

/// Thrown when an allocate/release would break a ClusterState invariant (a programming error in
/// a caller: schedulers only allocate what their filters admitted).
class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class ClusterState {
 public:
  /// Takes the nodes. Throws std::invalid_argument for a node with negative capacity or more than
  /// kMaxGpusPerNode GPUs.
  explicit ClusterState(std::vector<Node> nodes);

  size_t node_count() const { return nodes_.size(); }
  const Node& node(NodeId n) const { return nodes_[n]; }
  const std::vector<Node>& nodes() const { return nodes_; }

  int64_t cpu_free_milli(NodeId n) const { return nodes_[n].cpu_milli - usage_[n].cpu_used_milli; }
  int64_t cpu_used_milli(NodeId n) const { return usage_[n].cpu_used_milli; }
  int64_t memory_free_mib(NodeId n) const { return nodes_[n].memory_mib - usage_[n].memory_used_mib; }
  int32_t pod_count(NodeId n) const { return usage_[n].pods; }
  /// Free gpu_milli of each GPU of the node (index = device id), 0..1000.
  std::span<const int32_t> gpu_free_milli(NodeId n) const {
    return {gpu_free_.data() + gpu_offset_[n], static_cast<size_t>(nodes_[n].gpu_count)};
  }
  /// Used gpu_milli of GPU g on node n.
  int32_t gpu_used_milli(NodeId n, int32_t g) const { return 1000 - gpu_free_[gpu_offset_[n] + g]; }
  /// Sum of free gpu_milli over the node's GPUs.
  int32_t gpu_free_milli_total(NodeId n) const { return usage_[n].gpu_free_total_milli; }
  /// Number of the node's GPUs with all 1000 gpu_milli free.
  int32_t gpu_fully_free_count(NodeId n) const;
  /// GPU pods on the node by kind: [0] sharing pods, [k] pods holding k whole GPUs (1..kMaxGpusPerPod).
  const std::array<int32_t, kMaxGpusPerPod + 1>& gpu_pod_kinds(NodeId n) const { return usage_[n].gpu_pod_kinds; }
  /// Incremented on every allocate/release of the node; starts at 1.
  uint32_t version(NodeId n) const { return usage_[n].version; }

  /// Dense id of the node's GPU model among gpu_models() (the empty model, a CPU-only node, included).
  int32_t gpu_model_id(NodeId n) const { return model_id_[n]; }
  const std::vector<std::string>& gpu_models() const { return models_; }

  int64_t gpu_capacity_milli() const { return gpu_capacity_milli_; }
  int64_t gpu_used_milli() const { return gpu_used_milli_; }
  int64_t gpu_count() const { return gpu_capacity_milli_ / 1000; }

  /// Whether allocate(n, pod, gpus) would succeed (same checks, no change).
  bool can_allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const;
  /// Reserves the pod's resources on node n, gpu_milli on each GPU index in `gpus`
  /// (empty for a CPU-only pod). Throws InvariantViolation (state unchanged) if it does not fit.
  void allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus);
  /// Returns what allocate() reserved: the bound pod with the same namespace and name and the same
  /// GPU indices. Throws InvariantViolation (state unchanged) if there is none.
  void release(NodeId n, const Pod& pod, std::span<const int32_t> gpus);

  /// The pods bound to node n, in binding order (ascending bind_seq).
  const std::vector<BoundPod>& pods_on(NodeId n) const { return bound_[n]; }

  /// Binds again, with its original bind_seq, a pod that release() took off node n, so pods_on(n) and
  /// the binding order are as before the release (preemption's dry run releases victims, then
  /// restores them). Same checks as allocate(); also throws InvariantViolation (state unchanged) when
  /// bound.bind_seq was never handed out by this state or a pod with that bind_seq is on node n.
  void rebind(NodeId n, const BoundPod& bound);

  /// Bound pods with required pod anti-affinity terms on node n (kube's
  /// NodeInfo.PodsWithRequiredAntiAffinity), and in the whole state: InterPodAffinity skips its
  /// work when the total is 0 and the incoming pod has no terms.
  int32_t anti_affinity_pod_count(NodeId n) const { return usage_[n].anti_affinity_pods; }
  int64_t anti_affinity_pod_count() const { return anti_affinity_pods_; }

 private:
  struct Usage {
    int64_t cpu_used_milli = 0;
    int64_t memory_used_mib = 0;
    int32_t pods = 0;
    int32_t gpu_free_total_milli = 0;
    uint32_t version = 1;
    std::array<int32_t, kMaxGpusPerPod + 1> gpu_pod_kinds{};
    int32_t anti_affinity_pods = 0;
  };
  std::string check(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const;
  void bind(NodeId n, const Pod& pod, std::span<const int32_t> gpus, uint64_t bind_seq);
  static int kind_index(const Pod& pod);

  std::vector<Node> nodes_;
  std::vector<Usage> usage_;
  std::vector<std::vector<BoundPod>> bound_;
  std::vector<int32_t> gpu_free_;
  std::vector<size_t> gpu_offset_;
  std::vector<int32_t> model_id_;
  std::vector<std::string> models_;
  int64_t gpu_capacity_milli_ = 0;
  int64_t gpu_used_milli_ = 0;
  uint64_t last_bind_seq_ = 0;
  int64_t anti_affinity_pods_ = 0;
};

}  // namespace gpufleet
