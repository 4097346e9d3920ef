// ClusterState: the mutable allocation state of a set of nodes. No I/O.
//
// Invariants kept by allocate()/allocate_devices()/release() (a violating call throws
// InvariantViolation and leaves the state unchanged):
//  - no GPU above 1000 gpu_milli used, none below 0;
//  - no node above its allocatable CPU (cpu_milli), memory (memory_bytes) or pod capacity (max_pods);
//  - a pod takes exactly num_gpu distinct GPUs of one node, each with gpu_milli free;
//    a multi-GPU pod therefore takes whole free GPUs (its gpu_milli is 1000);
//  - GPU sharing (Node::time_slicing, Node::mig; gpu-sharing.md s.1-3). Each GPU is of one kind
//    (GpuKind): plain, time-sliced or MIG.
//    * Plain GPUs are the only ones given as whole or fractional GPUs.
//    * A time-sliced GPU of a node with R replicas never has more than R replicas in use. Its
//      replicas are what nvidia.com/gpu requests take when the node's time-slicing is not renamed
//      (num_gpu replicas, gpu_milli must be 1000), and what nvidia.com/gpu.shared requests take when
//      it is renamed.
//    * A MIG device (one GPU instance of a MIG GPU) is held by at most one pod, and only by a pod
//      requesting its profile.
//  - Allocation metrics stay in gpu_milli with at most 1000 per GPU: a time-sliced replica counts
//    floor(1000 / R) gpu_milli used (R = 3: 333 each, 999 when full; R > 1000 counts 0), and a MIG
//    device floor(1000 * compute_slices / 7) (1g: 142, 2g: 285, 3g: 428, 4g: 571, 7g: 1000; 7x 1g =
//    994). The floors keep a GPU's sum at or below 1000 (the compute slices of a layout sum to at most
//    7). gpu_free_milli(), gpu_used_milli() and gpu_free_milli_total() include these amounts; they are
//    the accounting view, not what a plain pod could get: use gpu_kind() to tell the GPUs apart.
// Every change bumps the node's version(), so schedulers can cache per-node results.
// The state also keeps a copy of every bound pod (kube's NodeInfo.Pods), for plugins that look at
// the pods already on a node (inter-pod anti-affinity) and for preemption.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_catalog.h"
#include "model/node.h"
#include "model/pod.h"

namespace gpufleet {

using NodeId = uint32_t;

/// One MIG device of a node: the GPU instance of `profile` starting at memory slice `start` on GPU
/// `gpu` (an entry of Node::mig[gpu].instances).
struct MigDevice {
  int32_t gpu = 0;
  int32_t start = 0;
  std::string profile;  ///< e.g. "3g.40gb"
  bool operator==(const MigDevice&) const = default;
};

/// The devices a pod takes on a node (the argument of allocate_devices / release_devices).
struct DeviceAssignment {
  /// nvidia.com/gpu, num_gpu entries (none for a pod without GPUs): on plain GPUs, distinct GPU
  /// indices each given gpu_milli; on a node time-sliced without renaming, the GPU index of each
  /// replica (an index repeats when a GPU gives the pod several replicas).
  std::vector<int32_t> gpus;
  /// nvidia.com/gpu.shared, shared_replicas entries: the GPU index of each replica (may repeat).
  std::vector<int32_t> shared_replicas;
  /// nvidia.com/mig-<profile>: one entry per device, as many per profile as the pod requests.
  std::vector<MigDevice> mig;
  bool operator==(const DeviceAssignment&) const = default;
};

/// A pod bound to a node and the devices it holds there.
struct BoundPod {
  Pod pod;
  std::vector<int32_t> gpus;             ///< GPU indices, as given to allocate() (DeviceAssignment::gpus)
  std::vector<int32_t> shared_replicas;  ///< DeviceAssignment::shared_replicas
  std::vector<MigDevice> mig;            ///< the MIG devices held (DeviceAssignment::mig)
  DeviceAssignment devices() const { return {gpus, shared_replicas, mig}; }
  /// Cluster-wide binding order: 1 for the state's first allocate(), then 2, 3, ... (never reused).
  /// Stands in for the pod's start time (kube status.startTime) in preemption's orderings.
  uint64_t bind_seq = 0;
};

/// What a GPU of a node is (see the file comment).
enum class GpuKind : uint8_t { kPlain, kTimeSliced, kMig };

/// gpu_milli that one time-slicing replica counts as used: floor(1000 / replicas).
constexpr int32_t replica_gpu_milli(int32_t replicas) { return replicas > 0 ? kGpuMilliPerGpu / replicas : 0; }
/// gpu_milli that one MIG device counts as used: floor(1000 * compute_slices / 7).
constexpr int32_t mig_device_gpu_milli(int compute_slices) {
  return kGpuMilliPerGpu * compute_slices / kMigComputeSlices;
}

/// Thrown when an allocate/release would break a ClusterState invariant (a programming error in
/// a caller: schedulers only allocate what their filters admitted).
class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class ClusterState {
 public:
  /// Takes the nodes. Throws std::invalid_argument for a node with negative capacity or more than
  /// kMaxGpusPerNode GPUs, or a bad GPU sharing set-up: time-slicing replicas below 1, a `mig` list
  /// whose size is neither 0 nor gpu_count, MIG instances on a GPU without MIG enabled, MIG on a
  /// model that find_gpu_model() does not know or that is not MIG-capable, or instances that break the
  /// MIG placement rules (mig.h; replayed with MigLayout::place_at).
  explicit ClusterState(std::vector<Node> nodes);

  size_t node_count() const { return nodes_.size(); }
  const Node& node(NodeId n) const { return nodes_[n]; }
  const std::vector<Node>& nodes() const { return nodes_; }

  int64_t cpu_free_milli(NodeId n) const { return nodes_[n].cpu_milli - usage_[n].cpu_used_milli; }
  int64_t cpu_used_milli(NodeId n) const { return usage_[n].cpu_used_milli; }
  int64_t memory_free_bytes(NodeId n) const { return nodes_[n].memory_bytes - usage_[n].memory_used_bytes; }
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
  /// Same as allocate_devices(n, pod, {gpus}): a pod with MIG or nvidia.com/gpu.shared requests
  /// needs allocate_devices.
  void allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus);
  /// Returns what allocate() reserved: the bound pod with the same namespace and name and the same
  /// GPU indices. Throws InvariantViolation (state unchanged) if there is none.
  void release(NodeId n, const Pod& pod, std::span<const int32_t> gpus);

  /// Whether allocate_devices(n, pod, devices) would succeed (same checks, no change).
  bool can_allocate_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices) const;
  /// Reserves the pod's CPU, memory and devices on node n (see DeviceAssignment and the invariants
  /// above): devices.gpus as allocate() does on plain GPUs, or as replicas on a time-sliced node
  /// that is not renamed; devices.shared_replicas on a renamed time-sliced node; devices.mig must
  /// name free instances of the node's layout, exactly pod.mig_requests' counts per profile.
  /// Throws InvariantViolation (state unchanged) if it does not fit.
  void allocate_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices);
  /// Returns what allocate_devices() reserved: the bound pod with the same namespace, name, request
  /// and devices. Throws InvariantViolation (state unchanged) if there is none.
  void release_devices(NodeId n, const Pod& pod, const DeviceAssignment& devices);

  // GPU sharing (all O(1) unless noted).
  /// Whether node n has a time-sliced or MIG GPU (Node::has_gpu_sharing()).
  bool has_gpu_sharing(NodeId n) const { return sharing_[n] != 0; }
  GpuKind gpu_kind(NodeId n, int32_t g) const { return static_cast<GpuKind>(gpu_kind_[gpu_offset_[n] + static_cast<size_t>(g)]); }
  /// Replicas of time-sliced GPU g in use (0 for other GPUs).
  int32_t replicas_used(NodeId n, int32_t g) const { return replicas_used_[gpu_offset_[n] + static_cast<size_t>(g)]; }
  /// Free replicas over the node's time-sliced GPUs (0 when not time-sliced). O(GPUs).
  int32_t replicas_free(NodeId n) const;
  /// Whether instance i of Node::mig[g].instances is held by a pod.
  bool mig_device_taken(NodeId n, int32_t g, size_t i) const { return mig_taken_[mig_first_[gpu_offset_[n] + static_cast<size_t>(g)] + i] != 0; }
  /// Free MIG devices of `profile` on the node. O(instances).
  int32_t mig_free_count(NodeId n, std::string_view profile) const;

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
  /// The nodes holding at least one pod with required anti-affinity terms, in no particular order
  /// (kube's NodeInfo list HavePodsWithRequiredAntiAffinityList).
  std::span<const NodeId> anti_affinity_nodes() const { return anti_nodes_; }
  /// Changes whenever a pod with required anti-affinity terms is bound or released, to a value no
  /// other ClusterState has had (copies excepted: they share it until either changes). A memo key
  /// for what depends only on those pods (InterPodAffinity).
  uint64_t anti_affinity_version() const { return anti_version_; }

 private:
  struct Usage {
    int64_t cpu_used_milli = 0;
    int64_t memory_used_bytes = 0;
    int32_t pods = 0;
    int32_t gpu_free_total_milli = 0;
    uint32_t version = 1;
    std::array<int32_t, kMaxGpusPerPod + 1> gpu_pod_kinds{};
    int32_t anti_affinity_pods = 0;
  };
  std::string check(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                    std::span<const MigDevice> mig) const;
  // Distinct, in-range, plain (not MIG, not time-sliced) GPUs, each with pod.gpu_milli free.
  std::string check_plain_gpus(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const;
  std::string check_sharing(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                            std::span<const MigDevice> mig) const;
  // Index into mig_taken_ of the instance (gpu, start, profile) of node n, or -1.
  int64_t mig_slot(NodeId n, const MigDevice& d) const;
  void do_allocate(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                   std::span<const MigDevice> mig, uint64_t bind_seq);
  void do_release(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                  std::span<const MigDevice> mig);
  // Adds sign * the pod's device usage (gpus, replicas, MIG devices) to the node's GPUs.
  void apply_devices(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                     std::span<const MigDevice> mig, int sign);
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
  // GPU sharing: per node, per GPU (indexed like gpu_free_), per MIG instance.
  std::vector<uint8_t> sharing_;        // per node: has_gpu_sharing
  std::vector<uint8_t> gpu_kind_;       // per GPU: GpuKind
  std::vector<int32_t> replicas_used_;  // per GPU
  std::vector<uint32_t> mig_first_;     // per GPU: index of its first instance in mig_taken_
  std::vector<uint8_t> mig_taken_;      // per MIG instance
  std::vector<int32_t> mig_milli_;      // per MIG instance: mig_device_gpu_milli
  uint64_t last_bind_seq_ = 0;
  int64_t anti_affinity_pods_ = 0;
  std::vector<NodeId> anti_nodes_;     // nodes with anti_affinity_pods > 0
  uint64_t anti_version_ = 0;
  std::vector<uint32_t> anti_pos_;     // per node: index in anti_nodes_ + 1, 0 when absent
};

}  // namespace gpufleet
