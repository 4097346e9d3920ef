// ClusterState: the mutable allocation state of a set of nodes. No I/O.
//
// Nodes and ids. A NodeId is a slot. node_count() is the number of slots, the bound of the ids; a
// slot is empty or holds one node (has_node). The constructor fills slots 0..N-1 with its N nodes.
// add_node(node, slot) puts a node in the given empty slot (an id at or beyond node_count() adds
// slots up to it, those between staying empty) or, without a slot, in the lowest empty one (a new
// slot when none is). remove_node(n) takes out a node without pods and empties its slot, which a
// later add_node may fill with another node. node_count() never shrinks (only Fork::discard takes
// back the slots that the undone changes added). So an id names one node from its add_node to its
// remove_node; version() tells the nodes (and the moments) of one slot apart.
// Accessors taking a NodeId need n < node_count(); on an empty slot they describe no node: node(n)
// is a default Node (no name, no capacity, no GPUs), usage and pods_on() are empty, and
// gpu_model_id() is -1. Cost: an empty slot keeps only fixed-size per-slot records, about 290 bytes
// (a default Node object, the usage record, an empty pod list; no Node contents, no per-GPU or
// per-MIG-device arrays); a node's per-GPU and per-MIG-device arrays are taken on add_node from
// blocks freed by earlier remove_node calls of the same size, else appended.
//
// Invariants kept by allocate()/release()/rebind() (a violating call throws InvariantViolation and
// leaves the state unchanged):
//  - no GPU above 1000 gpu_milli used, none below 0;
//  - no node above its allocatable CPU (cpu_milli), memory (memory_bytes) or pod capacity (max_pods);
//  - a pod takes exactly num_gpu distinct GPUs of one node, each with gpu_milli free;
//    a multi-GPU pod therefore takes whole free GPUs (its gpu_milli is 1000);
//  - GPU sharing (Node::time_slicing, Node::mig; the NVIDIA device plugin's sharing.timeSlicing and
//    migStrategy mixed). Each GPU is of one kind (GpuKind): plain, time-sliced or MIG.
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
//  - the totals (gpu_capacity_milli, gpu_used_milli, anti-affinity counts) are sums over the nodes
//    the slots hold.
//
// Versions. version(n) changes on every change of slot n (allocate, release, rebind, add_node,
// remove_node, set_unschedulable, and Fork::discard undoing any of them) and never takes a value it had before: each
// change adds 1, and a node added to a slot starts above every version the state has handed out to
// any slot. So a cache entry keyed by (slot, version) is never served for another node of the slot
// or another moment of it, for the state's whole life (schedulers cache per-node results this way).
// Constructor nodes start at 1.
//
// Forks (dry runs). fork() opens a Fork: every later change (allocate, release, rebind, add_node,
// remove_node, set_unschedulable, register_gpu_model) goes to an undo journal the state owns. Fork::commit() keeps the
// changes; Fork::discard(), and the destructor of a fork neither committed nor discarded, undoes
// them in reverse order, so that everything observable is as at fork(): the nodes and slots, free
// and used resources, pods_on() with each pod's devices, order and bind_seq, the next bind_seq,
// the anti-affinity counts and node list (same order), the totals and gpu_models(). Only versions
// (version(), anti_affinity_version(), node_set_version()) move on, so caches stay right. Forks nest:
// a fork opened inside another ends first (commit or discard only the innermost open fork); its
// committed changes are undone if the outer one is discarded. Cost: O(1) to open; each change while
// a fork is open also records its undo (a copy of the released pod or removed node); commit frees
// the records and discard undoes them, O(changes) each, an undo costing what its change cost. A copy
// of the state has no open fork; the state must not be moved or destroyed while a fork of it is open.
//
// The state also keeps a copy of every bound pod (kube's NodeInfo.Pods), for plugins that look at
// the pods already on a node (inter-pod anti-affinity) and for preemption.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <unordered_map>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "model/device_assignment.h"
#include "model/dra.h"
#include "model/gpu_catalog.h"
#include "model/node.h"
#include "model/pod.h"

namespace gpufleet {

using NodeId = uint32_t;

/// A pod bound to a node and the devices it holds there.
struct BoundPod {
  Pod pod;
  std::vector<int32_t> gpus;             ///< GPU indices, as given to allocate() (DeviceAssignment::gpus)
  std::vector<int32_t> shared_replicas;  ///< DeviceAssignment::shared_replicas
  std::vector<MigDevice> mig;            ///< the MIG devices held (DeviceAssignment::mig)
  DeviceAssignment devices() const { return {gpus, shared_replicas, mig, claims}; }
  /// Cluster-wide binding order: 1 for the state's first allocate(), then 2, 3, ... (never reused).
  /// Stands in for the pod's start time (kube status.startTime) in preemption's orderings.
  uint64_t bind_seq = 0;
  /// DeviceAssignment::claims: the pod's ResourceClaims with their allocations (empty without claims).
  std::vector<DraClaimAllocation> claims;
  DeviceAssignment devices_with_claims() const { return {gpus, shared_replicas, mig, claims}; }
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
  /// No slots (add nodes with add_node).
  ClusterState();
  /// Slots 0..N-1 hold the nodes, in order; GPU models are registered in first-seen order. Throws
  /// std::invalid_argument for a node with negative capacity or more than kMaxGpusPerNode GPUs, or
  /// a bad GPU sharing set-up: time-slicing replicas below 1, MPS on a node with a MIG-enabled GPU, a `mig` list whose size is neither 0
  /// nor gpu_count, MIG instances on a GPU without MIG enabled, MIG on a model that
  /// find_gpu_model() does not know or that is not MIG-capable, or instances that break the MIG
  /// placement rules (mig.h; replayed with MigLayout::place_at).
  explicit ClusterState(std::vector<Node> nodes);

  // ---- Nodes and slots (see the file comment) ----
  /// Number of slots, the bound of the ids (empty slots included).
  size_t node_count() const { return nodes_.size(); }
  /// Number of slots holding a node.
  size_t live_node_count() const { return live_count_; }
  /// Whether slot n holds a node (false for n >= node_count()).
  bool has_node(NodeId n) const { return n < nodes_.size() && (live_[n >> 6] >> (n & 63) & 1) != 0; }
  /// The node of slot n; a default Node for an empty slot.
  const Node& node(NodeId n) const { return nodes_[n]; }
  /// One entry per slot, as node().
  const std::vector<Node>& nodes() const { return nodes_; }
  /// Puts `node` in slot `slot` (empty, or >= node_count(): the slots grow to slot + 1, those
  /// between stay empty) or, without a slot, in the lowest empty slot (node_count() when none).
  /// Registers its GPU model (register_gpu_model). Returns the slot. Throws std::invalid_argument
  /// for a bad node (as the constructor) and InvariantViolation for a slot that holds a node or is
  /// kNoNode (UINT32_MAX); the state is then unchanged. O(GPUs + MIG devices) plus, for a new
  /// slot, O(slots added); O(node_count() / 64) to find the lowest empty slot.
  NodeId add_node(Node node, std::optional<NodeId> slot = {});
  /// Takes the node out of slot n, which becomes empty, and returns it. The node must have no
  /// pods: throws InvariantViolation (state unchanged) for an empty slot or a node with pods.
  Node remove_node(NodeId n);
  /// Changes whenever a node is added or removed (also by Fork::discard), to a value no other
  /// ClusterState has had (copies excepted: they share it until either changes). A memo key for
  /// what depends only on the nodes' labels and taints.
  uint64_t node_set_version() const { return node_set_version_; }
  /// Cordons node n (`kubectl cordon`: Node::unschedulable, which the NodeUnschedulable filter
  /// reads) or, with false, uncordons it. Changes version(n) when the flag changes (not
  /// node_set_version(): labels and taints stay). Journaled like add_node, so a fork's discard
  /// restores the flag. Throws InvariantViolation (state unchanged) for an empty slot.
  void set_unschedulable(NodeId n, bool unschedulable);

  /// Dense id of the GPU model among gpu_models() (the empty model, a CPU-only node, included):
  /// the existing id, or a new one (the next index). An id never changes or goes away, even when
  /// the last node of the model is removed, so registering the models up front fixes their ids.
  int32_t register_gpu_model(std::string_view model);
  /// Dense id of the node's GPU model among gpu_models(); -1 for an empty slot.
  int32_t gpu_model_id(NodeId n) const { return model_id_[n]; }
  const std::vector<std::string>& gpu_models() const { return models_; }

  // ---- Usage of one node ----
  int64_t cpu_free_milli(NodeId n) const { return nodes_[n].cpu_milli - usage_[n].cpu_used_milli; }
  int64_t cpu_used_milli(NodeId n) const { return usage_[n].cpu_used_milli; }
  int64_t memory_free_bytes(NodeId n) const { return nodes_[n].memory_bytes - usage_[n].memory_used_bytes; }
  int32_t pod_count(NodeId n) const { return usage_[n].pods; }
  /// Sums of the bound pods' non-zero requests (Pod::nonzero_cpu_request_milli,
  /// nonzero_memory_request_bytes): kube's NodeInfo.NonZeroRequested, what its scores count.
  int64_t nonzero_cpu_requested_milli(NodeId n) const { return usage_[n].nonzero_cpu_milli; }
  int64_t nonzero_memory_requested_bytes(NodeId n) const { return usage_[n].nonzero_memory_bytes; }
  /// Free gpu_milli of each GPU of the node (index = device id), 0..1000.
  std::span<const int32_t> gpu_free_milli(NodeId n) const {
    return {gpu_free_.data() + gpu_offset_[n], static_cast<size_t>(nodes_[n].gpu_count)};
  }
  /// Used gpu_milli of GPU g on node n.
  int32_t gpu_used_milli(NodeId n, int32_t g) const { return 1000 - gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)]; }
  /// Sum of free gpu_milli over the node's GPUs.
  int32_t gpu_free_milli_total(NodeId n) const { return usage_[n].gpu_free_total_milli; }
  /// Number of the node's GPUs with all 1000 gpu_milli free.
  int32_t gpu_fully_free_count(NodeId n) const;
  /// GPU pods on the node by kind: [0] sharing pods, [k] pods holding k whole GPUs (1..kMaxGpusPerPod).
  const std::array<int32_t, kMaxGpusPerPod + 1>& gpu_pod_kinds(NodeId n) const { return usage_[n].gpu_pod_kinds; }
  /// Slot n's version (see the file comment): starts at 1 for the constructor's nodes, changes on
  /// every change of the slot, never repeats.
  uint64_t version(NodeId n) const { return versions_[n]; }
  /// Moves on with every change of any slot's version() (never back, a fork's discard included):
  /// two equal values bracket no change of the state. For callers that memoize a result over the
  /// whole state (the simulator's failed placements).
  uint64_t change_count() const { return changes_; }
  /// The slots changed since change_count() was `since`: one entry per change, in order (a slot
  /// repeats when it changed more than once; kSlotCountChange for a change of the slot count,
  /// which add_node and Fork::discard may make). nullopt when `since` is ahead of change_count() or
  /// older than the log reaches: it keeps at least the last max(65536, 2 x node_count()) changes,
  /// and a copy of the state starts with none (its log begins at the copy). For indexes that follow
  /// the nodes' changes instead of reading every slot's version() (the scheduler's best-node index,
  /// scheduler.h), which then also compare identity().
  std::optional<std::span<const NodeId>> changes_since(uint64_t since) const;
  static constexpr NodeId kSlotCountChange = UINT32_MAX;
  /// A number unique to this object in the process: a copy (or an assignment) gets a new one, so
  /// that change_count() and changes_since() of two states are never taken for one history.
  uint64_t identity() const { return change_log_.identity; }

  // ---- Totals over the nodes ----
  int64_t gpu_capacity_milli() const { return gpu_capacity_milli_; }
  int64_t gpu_used_milli() const { return gpu_used_milli_; }
  int64_t gpu_count() const { return gpu_capacity_milli_ / 1000; }

  // ---- Devices: one API for whole GPUs, fractions, MIG devices and time-sliced replicas ----
  /// Whether allocate(n, pod, devices) would succeed (same checks, no change).
  bool can_allocate(NodeId n, const Pod& pod, const DeviceAssignment& devices) const;
  /// Binds the pod to node n: reserves its CPU, memory and `devices` (see DeviceAssignment and the
  /// invariants above): devices.gpus on plain GPUs (num_gpu distinct indices, gpu_milli each), or
  /// as replicas on a time-sliced node that is not renamed; devices.shared_replicas on a renamed
  /// time-sliced node; devices.mig must name free instances of the node's layout, exactly
  /// pod.mig_requests' counts per profile. The pod goes last in pods_on(n) with the next bind_seq,
  /// which is returned. Throws InvariantViolation (state unchanged) if it does not fit or slot n
  /// is empty.
  uint64_t allocate(NodeId n, const Pod& pod, const DeviceAssignment& devices);
  /// Unbinds the pod of node n with pod's namespace and name (the first in binding order if
  /// several) and returns it with what it held (its request as bound, devices and bind_seq): the
  /// pod's CPU, memory and devices are free again. Throws InvariantViolation (state unchanged) if
  /// no pod of that namespace and name is on n or the bound one has another request (cpu_milli,
  /// memory_bytes, num_gpu, gpu_milli, shared_replicas, mig_requests).
  BoundPod release(NodeId n, const Pod& pod);
  /// Binds again, with its original bind_seq, a pod that release() took off node n, so pods_on(n) and
  /// the binding order are as before the release. Same checks as allocate(); also throws
  /// InvariantViolation (state unchanged) when bound.bind_seq was never handed out by this state or a
  /// pod with that bind_seq is on node n.
  void rebind(NodeId n, const BoundPod& bound);

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

  // Memory-based GPU sharing (model/gpu_memory_share.h). Invariants kept by allocate/release: a
  // memory-share pod holds GpuMemoryShare::cards distinct plain cards of its scheduler's nodes (HAMi
  // pods: nodes with Node::hami; KAI pods: the others), each with memory_share_refusal kFits; so on
  // every card the pods' memory never exceeds card_memory_mib, and on a HAMi card their cores never
  // exceed HamiDevices::cores and their number never exceeds split_count. A card they hold counts
  // memory_share_gpu_milli(memory used, card memory) gpu_milli as used. All O(1).
  /// Memory of each GPU of node n for memory-share pods, MiB (Node::gpu_memory_mib).
  int64_t card_memory_mib(NodeId n) const { return nodes_[n].gpu_memory_mib; }
  /// Memory that memory-share pods hold on card g, MiB.
  int64_t card_memory_used_mib(NodeId n, int32_t g) const { return share_memory_used_[gpu_offset_[n] + static_cast<size_t>(g)]; }
  /// gpucores that HAMi pods hold on card g (percent of the card).
  int32_t card_cores_used(NodeId n, int32_t g) const { return share_cores_used_[gpu_offset_[n] + static_cast<size_t>(g)]; }
  /// Memory-share pods holding card g.
  int32_t card_share_pods(NodeId n, int32_t g) const { return share_pods_[gpu_offset_[n] + static_cast<size_t>(g)]; }
  /// Whether card g of node n can take one card of `request` now: the first of HAMi's checks that
  /// fails (CardRefusal, in gpu_memory_share.h's order), kFits when none does. KAI requests are
  /// checked for kNotShareable and kInsufficientMemory only. Does not check the node's scheduler
  /// (Node::hami) or card count: memory_share_node_fits does.
  CardRefusal memory_share_refusal(NodeId n, int32_t g, const GpuMemoryShare& request) const;
  /// Whether node n is one the request's scheduler shares: HAMi requests on nodes with Node::hami,
  /// KAI requests on GPU nodes without it.
  bool memory_share_node_fits(NodeId n, const GpuMemoryShare& request) const {
    return nodes_[n].gpu_count > 0 && nodes_[n].hami.has_value() == (request.scheduler == GpuMemoryScheduler::kHami);
  }

  /// The pods bound to node n, in binding order (ascending bind_seq).
  const std::vector<BoundPod>& pods_on(NodeId n) const { return bound_[n]; }

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
  /// Bound pods with Pod::has_scored_affinity() (kube's NodeInfo.PodsWithAffinity, counted over the
  /// state): InterPodAffinity's PreScore skips when 0 and the incoming pod has no preferred terms.
  int64_t scored_affinity_pod_count() const { return scored_affinity_pods_; }

  // ---- Dynamic Resource Allocation (model/dra.h) ----
  // The DRA objects (set once, before scheduling) and which claims are allocated. A claim is allocated
  // when the catalog says so (status.allocation: kept for the state's life) or while a bound pod holds
  // it (DeviceAssignment::claims): allocate() allocates a claim not yet allocated and counts one more
  // pod on one that is; release() counts one less, and the last pod's release deallocates it (as the
  // resourceclaim controller does once status.reservedFor is empty). Devices of allocated claims are
  // in use: no other claim may take them. Costs nothing for pods without claims.
  /// Sets the catalog (shared, read-only) and marks its allocated claims. Throws std::invalid_argument
  /// when two allocated claims hold one device.
  void set_dra_catalog(std::shared_ptr<const DraCatalog> catalog);
  /// The catalog; nullptr when none was set.
  const DraCatalog* dra_catalog() const { return dra_catalog_.get(); }
  /// One allocated claim: its allocation, the bound pods holding it, whether the catalog allocated it.
  struct DraClaimState {
    DraAllocation allocation;
    int32_t pods = 0;
    bool from_catalog = false;
  };
  /// The allocated claim `key` ("namespace/name"), or nullptr.
  const DraClaimState* dra_claim(const std::string& key) const {
    auto it = dra_claims_.find(key);
    return it == dra_claims_.end() ? nullptr : &it->second;
  }
  /// Every allocated claim, by key.
  const std::map<std::string, DraClaimState>& dra_claims() const { return dra_claims_; }
  /// The claim holding device dra_device_id(driver, pool, device), or nullptr when it is free.
  /// Shared allocations (DraDeviceResult::shared(), consumable capacity) do not hold a device.
  const std::string* dra_device_holder(const std::string& device_id) const {
    auto it = dra_devices_.find(device_id);
    return it == dra_devices_.end() ? nullptr : &it->second;
  }
  /// The capacity the shared allocations of a device consume together (capacity name -> milli-units),
  /// or nullptr when no shared allocation holds it. A device is held by one claim or by shares, never both.
  const std::map<std::string, int64_t>* dra_consumed_capacity(const std::string& device_id) const {
    auto it = dra_shares_.find(device_id);
    return it == dra_shares_.end() ? nullptr : &it->second.consumed_milli;
  }
  /// Changes whenever a claim is allocated or deallocated (never repeats within this state).
  uint64_t dra_version() const { return dra_version_; }
  /// Deallocates the allocated claim `key` that no bound pod holds (a claim the catalog allocated:
  /// kube's DynamicResources PostFilter clearing status.allocation of a claim reserved for no pod):
  /// its devices are free. Journaled like a release. Returns false (no change) when the claim is not
  /// allocated or a bound pod holds it.
  bool deallocate_dra_claim(const std::string& key);

  // ---- Forks (see the file comment) ----
  /// A dry run: the changes since fork() until commit() or discard(). Move-only; ends (discards)
  /// at destruction unless committed or discarded.
  class Fork {
   public:
    Fork(Fork&& other) noexcept : state_(other.state_), id_(other.id_) { other.state_ = nullptr; }
    Fork(const Fork&) = delete;
    Fork& operator=(const Fork&) = delete;
    Fork& operator=(Fork&&) = delete;
    /// Discards the changes unless committed or discarded (and the forks still open inside it).
    ~Fork();
    /// Keeps the changes (they stay undoable by an enclosing open fork). Throws std::logic_error
    /// when the fork has ended or a fork opened inside it is still open.
    void commit();
    /// Undoes the changes since fork(), newest first (see the file comment). Throws
    /// std::logic_error when the fork has ended or a fork opened inside it is still open.
    void discard();
    /// Whether the fork is open: neither committed nor discarded, nor ended with a fork it was
    /// opened in.
    bool open() const;

   private:
    friend class ClusterState;
    Fork(ClusterState* state, uint64_t id) : state_(state), id_(id) {}
    ClusterState* state_;
    uint64_t id_;
  };
  /// Opens a fork (nested when one is open). O(1).
  [[nodiscard]] Fork fork();
  /// Number of open forks.
  size_t open_fork_count() const { return journal_.marks.size(); }

 private:
  struct Usage {
    int64_t cpu_used_milli = 0;
    int64_t memory_used_bytes = 0;
    int32_t pods = 0;
    int32_t gpu_free_total_milli = 0;
    std::array<int32_t, kMaxGpusPerPod + 1> gpu_pod_kinds{};
    int32_t anti_affinity_pods = 0;
    int64_t nonzero_cpu_milli = 0;
    int64_t nonzero_memory_bytes = 0;
  };
  // Undo records of the journal (one per change while a fork is open).
  struct BindChange {  // allocate or rebind: undone by unbinding bind_seq
    NodeId n;
    uint64_t bind_seq;
  };
  struct UnbindChange {  // release: undone by binding `bound` again
    NodeId n;
    uint32_t anti_at;  // index + 1 in anti_nodes_ that n left, 0 if it stayed or was not there
    BoundPod bound;
  };
  struct AddNodeChange {  // undone by removing the node and dropping the slots it added
    NodeId n;
    size_t slots_before;
  };
  struct RemoveNodeChange {  // undone by adding the node back
    NodeId n;
    Node node;
  };
  struct RegisterModelChange {};  // undone by dropping the last model
  struct UnschedulableChange {  // undone by setting the flag back
    NodeId n;
    bool was;
  };
  struct DraDeallocateChange {  // undone by allocating the claim again
    std::string key;
    DraClaimState claim;
  };
  using Change = std::variant<BindChange, UnbindChange, AddNodeChange, RemoveNodeChange, RegisterModelChange, UnschedulableChange,
                              DraDeallocateChange>;
  struct Journal {
    struct Mark {
      uint64_t id;
      size_t start;  // changes.size() at fork()
      uint64_t last_bind_seq;
    };
    std::vector<Change> changes;
    std::vector<Mark> marks;  // open forks, outermost first
    uint64_t next_id = 1;
    Journal() = default;
    Journal(const Journal&) {}  // a copy of a state has no open fork
    Journal& operator=(const Journal&) {
      changes.clear();
      marks.clear();
      return *this;
    }
    Journal(Journal&&) = default;
    Journal& operator=(Journal&&) = default;
  };

  // Why `node` cannot be added ("" if it can); fills mig_milli with each MIG instance's gpu_milli.
  static std::string check_node(const Node& node, std::vector<int32_t>& mig_milli);
  static std::string check_capacity(const Node& node);
  // add_node after the checks; journals nothing.
  void install_node(NodeId n, Node node, const std::vector<int32_t>& mig_milli);
  // remove_node after the checks; journals nothing.
  Node uninstall_node(NodeId n);
  void grow_slots(size_t count);
  void shrink_slots(size_t count);
  NodeId lowest_free_slot() const;
  // Version bump of slot n.
  void touch(NodeId n) {
    if (++versions_[n] > version_high_) version_high_ = versions_[n];
    log_change(n);
  }
  // Counts a change of slot n (kSlotCountChange: of the slot count) in change_count() and the log.
  void log_change(NodeId n);
  // changes_since's log, and identity(). A copy starts an empty log at the source's change count,
  // under an identity of its own (copying the log would make every state copy cost its size).
  struct ChangeLog {
    uint64_t identity;
    uint64_t base = 0;         // change_count() before nodes[0]
    std::vector<NodeId> nodes;
    ChangeLog();
    ChangeLog(const ChangeLog& other);
    ChangeLog& operator=(const ChangeLog& other);
  };
  // Fork::commit / discard (keep false) of the open fork with this id, which must be the innermost
  // unless `from_destructor`: then the forks inside it end too, and an ended fork is no error.
  void end_fork(uint64_t id, bool keep, bool from_destructor);
  bool fork_open(uint64_t id) const;
  void undo(Change& change);
  template <typename C>
  void journal(C&& change) {
    if (!journal_.marks.empty()) journal_.changes.emplace_back(std::forward<C>(change));
  }

  std::string check(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                    std::span<const MigDevice> mig) const;
  // Distinct, in-range, plain (not MIG, not time-sliced) GPUs, each with pod.gpu_milli free.
  std::string check_plain_gpus(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const;
  // check() for a memory-share pod: distinct cards of a node its scheduler shares, each kFits.
  std::string check_memory_share(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const;
  // Adds sign * the memory-share pod's memory, cores and count to its cards (and their gpu_milli).
  void apply_memory_share(NodeId n, const Pod& pod, std::span<const int32_t> gpus, int sign);
  std::string check_sharing(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                            std::span<const MigDevice> mig) const;
  // Index into mig_taken_ of the instance (gpu, start, profile) of node n, or -1.
  int64_t mig_slot(NodeId n, const MigDevice& d) const;
  // Checks, then binds with `bind_seq`; journals a BindChange.
  void bind(NodeId n, const Pod& pod, const DeviceAssignment& devices, uint64_t bind_seq);
  // bind() after the checks; journals nothing.
  void do_bind(NodeId n, const Pod& pod, const DeviceAssignment& devices, uint64_t bind_seq);
  // Unbinds pods_on(n)[i]; returns it. Sets *anti_at (when given) as UnbindChange::anti_at. Journals nothing.
  BoundPod unbind(NodeId n, size_t i, uint32_t* anti_at);
  // Adds sign * the pod's device usage (gpus, replicas, MIG devices) to the node's GPUs.
  void apply_devices(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                     std::span<const MigDevice> mig, int sign);
  static int kind_index(const Pod& pod);
  // DRA: why `claims` cannot be bound ("" if they can); +1/-1 a pod on each claim.
  std::string check_claims(const std::vector<DraClaimAllocation>& claims) const;
  void apply_claims(const std::vector<DraClaimAllocation>& claims, int sign);

  // Per slot.
  std::vector<Node> nodes_;
  std::vector<Usage> usage_;
  std::vector<uint64_t> versions_;    // version(): dense, as the scheduler's per-node loop reads it
  std::vector<std::vector<BoundPod>> bound_;
  std::vector<uint32_t> gpu_offset_;  // index of the node's first GPU in the per-GPU arrays
  std::vector<int32_t> model_id_;
  std::vector<uint8_t> sharing_;      // has_gpu_sharing
  std::vector<uint32_t> anti_pos_;    // index in anti_nodes_ + 1, 0 when absent
  std::vector<uint64_t> live_;        // bit per slot: holds a node
  size_t live_count_ = 0;
  // Per GPU (indexed by gpu_offset_[n] + g), in blocks of a node's gpu_count.
  std::vector<int32_t> gpu_free_;
  std::vector<uint8_t> gpu_kind_;       // GpuKind
  std::vector<int32_t> replicas_used_;
  std::vector<uint32_t> mig_first_;     // index of the GPU's first instance in mig_taken_
  std::vector<int64_t> share_memory_used_;  // card_memory_used_mib
  std::vector<int32_t> share_cores_used_;   // card_cores_used
  std::vector<int32_t> share_pods_;         // card_share_pods
  // Per MIG instance, in blocks of a node's instance count.
  std::vector<uint8_t> mig_taken_;
  std::vector<int32_t> mig_milli_;      // mig_device_gpu_milli
  // Free blocks by size: offsets into the per-GPU / per-MIG-instance arrays.
  std::vector<std::vector<uint32_t>> free_gpu_blocks_;
  std::vector<std::vector<uint32_t>> free_mig_blocks_;

  std::vector<std::string> models_;
  int64_t gpu_capacity_milli_ = 0;
  int64_t gpu_used_milli_ = 0;
  uint64_t last_bind_seq_ = 0;
  uint64_t version_high_ = 1;  // the highest version() handed out
  uint64_t changes_ = 0;       // change_count()
  ChangeLog change_log_;       // changes_since(), identity(); changes_ == base + nodes.size()
  uint64_t node_set_version_ = 0;
  int64_t anti_affinity_pods_ = 0;
  int64_t scored_affinity_pods_ = 0;  // scored_affinity_pod_count()
  std::vector<NodeId> anti_nodes_;     // nodes with anti_affinity_pods > 0
  uint64_t anti_version_ = 0;
  Journal journal_;
  // DRA (see set_dra_catalog).
  std::shared_ptr<const DraCatalog> dra_catalog_;
  std::map<std::string, DraClaimState> dra_claims_;
  std::unordered_map<std::string, std::string> dra_devices_;  // device id -> claim key
  struct DraShares {
    int32_t allocations = 0;
    std::map<std::string, int64_t> consumed_milli;
  };
  std::unordered_map<std::string, DraShares> dra_shares_;  // device id -> its shared allocations
  void add_dra_shares(const DraAllocation& allocation, int sign);
  uint64_t dra_version_ = 0;
};

}  // namespace gpufleet
