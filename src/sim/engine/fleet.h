// The simulated cluster's nodes: each node pool's nodes and their lifecycle
//   absent -> provisioning -> ready -> [cordoned] -> absent
// (launch, Ready provision_s later, cordon on a spot notice or for a dry run, removal), the spot
// interruption timing of ready nodes, the pods bound to each node, and the ClusterState the
// scheduler works on. The fleet owns node ids and lifecycle; other modules ask it (queries, launch,
// remove, interrupt, bind) and hear of changes through NodeListener.
//
// Node ids. Each pool has max_nodes slots (ClusterState NodeIds), pools in file order (pool-major:
// pool p's node i is slot <first slot of p> + i), named <pool>-<index> (zero-padded as expand_pool
// pads for max_nodes nodes). A node enters the ClusterState when it becomes Ready (add_node in its
// slot) and leaves it when removed (remove_node): kube schedules nothing onto a node that is not
// Ready, so provisioning and absent nodes are not in the state. A cordoned node stays, with
// Node::unschedulable set (ClusterState::set_unschedulable), which the NodeUnschedulable filter
// reads. The GPU models are registered in pool order at the start (pools with max_nodes > 0), so
// model ids are fixed whatever comes and goes. The scheduler's node ranks are the slots: score ties
// go to the first node. outlook() lists every slot with its pool's node shape, for policies that plan
// for the capacity still to come (model/capacity_outlook.h).
//
// Labels: a node's pool labels (expand_pool), its topology domains, kubernetes.io/hostname = its
// name (as the kubelet sets it) and karpenter.sh/capacity-type.
//
// DaemonSets (ClusterConfig::daemon_sets): when a node becomes Ready (the initial ones at 0 too), each
// DaemonSet that should run there (sched/daemon_set.h) gets its pod bound on it, in the state but
// not among pods_on(): they hold CPU and memory until the node is removed, block nothing (the
// autoscalers drain a node without them) and are no unit's. One that does not fit the node stays
// pending (daemon_pods_pending()).
//
// Spot: each node of a spot pool draws its time to interruption when it becomes Ready: exponential
// with the pool's rate per node-hour, from the fleet's generator (seeded by the caller). At the
// notice the node is cordoned, listeners stop its pods (on_node_interrupted), and it is removed
// spot_notice_s later.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/capacity_outlook.h"
#include "model/cluster_state.h"
#include "model/dra_gpu_share.h"
#include "model/dra_utilization.h"
#include "sched/framework/profile.h"
#include "sched/scheduler.h"
#include "inputs/sim/cluster_config.h"
#include "sim/engine/event_loop.h"
#include "sim/results/sim_result.h"
#include "util/go_rand.h"

namespace gpufleet::sim {

/// kNotReady: a failed node (Fleet::fail_node): still billed, in the state but unschedulable, no
/// pods, until recover_node.
enum class NodePhase : uint8_t { kAbsent, kProvisioning, kReady, kCordoned, kNotReady };

/// Why a node is removed (Fleet::remove); SimResult::nodes_removed counts each.
enum class NodeRemoval : uint8_t {
  kScaleDown,       ///< the Cluster Autoscaler's scale-down
  kConsolidation,   ///< consolidation
  kSpotReclaim,     ///< the end of a spot interruption notice (the fleet's own)
  kNotReadyInTime,  ///< given up: not Ready with its GPUs by the provisioner's deadline
  kOther,           ///< a controller added to the run
};

/// Why a GPU of a node in the state is out of its allocatable (Fleet::withhold_gpu).
enum class GpuWithheld : uint8_t {
  kNone,
  kNotAdvertised,  ///< the device plugin does not (yet) advertise it: booting, or the plugin failed
  kUnhealthy,      ///< the device plugin marked it unhealthy (an XID that needs a GPU reset)
};

/// Hears of node lifecycle changes; the default does nothing. Listeners run in the order added.
class NodeListener {
 public:
  virtual ~NodeListener() = default;
  /// Node n was requested at t: provisioning, or Ready at once for a pool's initial nodes.
  virtual void on_node_launched(NodeId /*n*/, double /*t*/) {}
  /// A provisioned node n became Ready at t (new capacity). Not called for the initial nodes.
  virtual void on_node_ready(NodeId /*n*/, double /*t*/) {}
  /// Ready node n got an interruption notice at t and is cordoned: its pods must stop now.
  virtual void on_node_interrupted(NodeId /*n*/, double /*t*/) {}
  /// Ready node n got an interruption notice at t (Fleet::interrupt), once per notice, before
  /// on_node_interrupted; it is reclaimed at reclaim_at_s (t + the pool's spot_notice_s).
  virtual void on_spot_notice(NodeId /*n*/, double /*t*/, double /*reclaim_at_s*/) {}
  /// Node n was removed at t; it is already absent (and had no pods).
  virtual void on_node_removed(NodeId /*n*/, double /*t*/) {}
  /// A launch of node n failed at t (the cloud had no capacity: `reason`, e.g. EC2's
  /// "InsufficientInstanceCapacity"); n is absent again and was never billed.
  virtual void on_launch_failed(NodeId /*n*/, double /*t*/, const std::string& /*reason*/) {}
  /// GPU g of node n is about to leave allocatable at t: the pods holding it must stop now (the
  /// workloads do). Called before the GPU is withheld.
  virtual void on_gpu_lost(NodeId /*n*/, int32_t /*g*/, double /*t*/) {}
  /// Capacity came back on node n at t (a GPU restored or advertised, a node recovered or
  /// uncordoned): pending pods may fit now.
  virtual void on_capacity_returned(NodeId /*n*/, double /*t*/) {}
};

class Fleet {
 public:
  /// Makes every pool's slots (all absent; the state holds no node) and registers the events "node-ready", "spot-notice"
  /// and "spot-reclaim" on `loop`. `spot_seed` seeds the interruption draws. The pools must be valid
  /// (validate_pool, validate_pool_settings).
  Fleet(const ClusterConfig& cluster, EventLoop& loop, uint64_t spot_seed);
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
  ~Fleet();

  /// Adds a listener (not owned; it must outlive the run).
  void add_listener(NodeListener& listener) { listeners_.push_back(&listener); }
  /// Launches each pool's initial nodes (node_count), Ready at time 0.
  void start();

  // ---- pools and nodes
  size_t pool_count() const { return pools_.size(); }
  const SimPool& pool(size_t p) const { return cluster_.pools[p]; }
  /// Node ids (slots) of pool p in node order, max_nodes of them (absent ones included).
  std::span<const NodeId> pool_nodes(size_t p) const { return pools_[p].nodes; }
  /// Live nodes of pool p: provisioning, ready or cordoned (the billed ones).
  int32_t live(size_t p) const { return pools_[p].live; }
  int32_t provisioning(size_t p) const { return pools_[p].provisioning; }
  /// GPU capacity of the live nodes, milli-GPUs.
  int64_t live_gpu_capacity_milli() const { return live_gpu_capacity_milli_; }

  /// Node ids are 0 .. node_count() - 1, every pool's max_nodes slots; absent nodes included.
  size_t node_count() const { return nodes_.size(); }
  NodePhase phase(NodeId n) const { return nodes_[n].phase; }
  uint32_t pool_of(NodeId n) const { return nodes_[n].pool; }
  /// Changes at every launch and removal: an event or record carrying an older value is stale.
  uint32_t incarnation(NodeId n) const { return nodes_[n].incarnation; }
  /// <pool>-<index> (see the top of this file), whatever the node's phase.
  std::string name(NodeId n) const;
  /// Pod ids (the caller's) bound to node n, in binding order.
  std::span<const uint32_t> pods_on(NodeId n) const { return nodes_[n].pods; }
  /// Pods on node n bound with not_safe_to_evict (Cluster Autoscaler's
  /// cluster-autoscaler.kubernetes.io/safe-to-evict: "false").
  int32_t not_safe_to_evict_pods(NodeId n) const { return nodes_[n].not_safe_to_evict; }
  /// Last bind or unbind on node n, or when it became Ready (Karpenter's consolidateAfter clock).
  double last_pod_change_s(NodeId n) const { return nodes_[n].last_pod_change_s; }

  /// The cluster as the scheduler sees it: the ready and cordoned nodes, each in its slot.
  const ClusterState& state() const { return *state_; }
  /// The same state, writable, for dry runs inside a ClusterState::Fork that they discard.
  ClusterState& dry_run_state() { return *state_; }
  /// One empty node per pool, as a new node of the pool would be (name <pool>-template).
  const std::vector<Node>& template_nodes() const { return templates_; }
  /// The DaemonSets' pods a new node of pool p runs (ClusterConfig::daemon_sets that should run on
  /// its template node, sched/daemon_set.h): what the autoscalers' estimates reserve on each new node.
  std::span<const Pod> template_daemon_pods(size_t p) const { return template_daemon_pods_[p]; }
  /// CPU and memory the DaemonSets' pods hold on node n (0 when none, or when n is not in the state).
  int64_t daemon_cpu_milli(NodeId n) const { return nodes_[n].daemon_cpu_milli; }
  int64_t daemon_memory_bytes(NodeId n) const { return nodes_[n].daemon_memory_bytes; }
  /// DaemonSet pods that did not fit the node they were made for (pending for ever), so far.
  int64_t daemon_pods_pending() const { return daemon_pods_pending_; }
  /// Every slot up to each pool's max_nodes with its pool's node shape (model ids as in state()).
  const CapacityOutlook& outlook() const { return outlook_; }

  // ---- lifecycle
  /// Requests up to `count` nodes of pool p at t (the lowest absent ones): provisioning, Ready
  /// provision_s later. Returns how many were launched (fewer when the pool reaches max_nodes).
  int32_t launch(size_t p, int32_t count, double t);
  /// Removes node n at t (billing stops), counted under `cause`. Throws std::logic_error if pods
  /// are still bound to it.
  void remove(NodeId n, double t, NodeRemoval cause);
  /// Gives ready node n an interruption notice at t: cordoned, listeners stop its pods, removed the
  /// pool's spot_notice_s later. Spot nodes get it from their draw; callable by a fault injector.
  /// Ignored unless n is Ready.
  void interrupt(NodeId n, double t);
  /// Cordons ready node n (no new pods; kubectl cordon: Node::unschedulable in state()), or makes a
  /// cordoned node Ready again.
  void cordon(NodeId n);
  void uncordon(NodeId n);

  // ---- health: faults and late devices (inputs/sim/faults.h; the fault injector drives them)
  /// Takes GPU g of node n (in the state: ready, cordoned or not ready) out of allocatable at t:
  /// listeners stop the pods holding it (on_gpu_lost), then a placeholder reservation holds the whole
  /// GPU (all its replicas or MIG devices) so that nothing binds to it. The placeholder is not a pod:
  /// it counts in withheld_gpu_milli(), not in allocation or chargeback. Already withheld: only
  /// `why` is updated (kUnhealthy wins over kNotAdvertised).
  void withhold_gpu(NodeId n, int32_t g, GpuWithheld why, double t);
  /// Puts GPU g of node n back into allocatable at t (listeners: on_capacity_returned). Ignored when
  /// it is not withheld.
  void restore_gpu(NodeId n, int32_t g, double t);
  GpuWithheld gpu_withheld(NodeId n, int32_t g) const;
  /// GPUs of node n withheld for `why` (kNone: for any reason).
  int32_t withheld_gpus(NodeId n, GpuWithheld why = GpuWithheld::kNone) const;
  /// Milli-GPUs withheld over all nodes (capacity billed but not allocatable).
  int64_t withheld_gpu_milli() const { return withheld_gpu_milli_; }
  /// GPUs withheld over all nodes, for any reason (0: withheld_gpus(n) is 0 for every node).
  int64_t withheld_gpu_count() const { return withheld_gpu_count_; }
  /// Nodes provisioning over all pools (0: no node is kProvisioning).
  int32_t provisioning_total() const;
  /// Milli-GPUs held by pods (the state's usage without the withheld GPUs' placeholders), plus the
  /// DRA devices of allocated claims by their GPU share (model/dra_gpu_share.h).
  int64_t gpu_allocated_milli() const { return state_->gpu_used_milli() - withheld_gpu_milli_ + dra_used_milli_; }

  // ---- Dynamic Resource Allocation (docs/dra.md "simulate")
  /// The fleet's DRA catalog (fleet_dra_catalog with the template nodes' slices; set on state()), or
  /// nullptr when the cluster has nothing DRA.
  const std::shared_ptr<const DraCatalog>& dra_catalog() const { return dra_; }
  /// The catalog's node-local slices by node, for the autoscalers' DRA utilization
  /// (sim/rules/cluster_autoscaler.h node_utilization); nullptr when there is no catalog.
  const DraNodeSlices* dra_node_slices() const { return dra_node_slices_.get(); }
  /// gpu_milli of the devices of the pod's own claims (those from ResourceClaimTemplates) among
  /// `devices.claims`: what chargeback charges it by device. A shared ResourceClaim's devices are not
  /// a pod's: 0 for them.
  int64_t own_claims_gpu_milli(const Pod& pod, const DeviceAssignment& devices) const;
  /// Claims allocated and deallocated by binds and unbinds so far (dry runs excluded).
  int64_t dra_claims_allocated() const { return dra_claims_allocated_; }
  int64_t dra_claims_deallocated() const { return dra_claims_deallocated_; }
  /// Node n fails at t (NotReady: kubelet stopped reporting): listeners stop its pods
  /// (on_node_interrupted), it takes no pods (unschedulable in the state) and stays billed.
  /// Ignored unless n is Ready or cordoned.
  void fail_node(NodeId n, double t);
  /// Failed node n is Ready again at t (cordoned again if it was cordoned when it failed);
  /// listeners: on_capacity_returned. Ignored unless n is kNotReady.
  void recover_node(NodeId n, double t);
  /// Seconds since node n's launch (its current incarnation); for provisioning-time limits.
  double launched_at_s(NodeId n) const { return nodes_[n].launched_s; }
  /// Makes launches of pool p fail while `blocked(pool index, t)` says so: a launch at t that is
  /// blocked fails launch_failure_s later (the node goes provisioning, then absent, never billed;
  /// listeners: on_launch_failed with "InsufficientInstanceCapacity"). Default: no launch fails.
  void set_launch_gate(std::function<bool(size_t pool, double t)> blocked, double launch_failure_s);
  /// Pool p's refused launches fail launch_failure_s after the launch instead of the gate's delay
  /// (how soon a provisioner learns of it differs: inputs/sim/cluster_config.h AutoscalerSettings,
  /// KarpenterSettings). Call after set_launch_gate.
  void set_launch_failure_s(size_t p, double launch_failure_s);
  /// When node n, under an interruption notice, is reclaimed (seconds); < 0 when it has none.
  double reclaim_at_s(NodeId n) const { return nodes_[n].reclaim_at_s; }
  /// Interruption notices given to pool p's nodes so far (Fleet::interrupt).
  int64_t notices(size_t p) const { return pools_[p].notices; }
  /// Launches that failed so far.
  int64_t launch_failures() const { return launch_failures_; }
  /// The NVIDIA device plugin of node n (in the state) stops (down) or runs again (!down) at t.
  /// While it is down no new pod gets a GPU of n: each GPU no pod holds is withheld kNotAdvertised at
  /// once, and each GPU a pod holds is withheld when its last pod leaves it (kubelet keeps running
  /// containers that already hold devices: they do not stop). Back up: every GPU withheld
  /// kNotAdvertised is restored (kUnhealthy ones stay). A GPU shared by fractional pods keeps its
  /// free share until all of them leave (gpufleet's simplification). The flag is the node's
  /// incarnation's: removal clears it; the late advertisement of a new node's GPUs
  /// (gpu_advertise_delay_s) does not restore them while it is down, and a plugin back before that
  /// delay has passed leaves them to it. Ignored for a node not in the state.
  void set_device_plugin_down(NodeId n, bool down, double t);
  bool device_plugin_down(NodeId n) const { return nodes_[n].plugin_down; }

  // ---- pods (ClusterState reservations and the per-node pod lists)
  /// Reserves `pod` with `devices` on node n (ClusterState::allocate: whole or fractional
  /// GPUs, time-slicing replicas, MIG devices, as the scheduler chose them) and records pod id `id`
  /// there. Throws InvariantViolation (nothing changed) if they are not free.
  void bind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t);
  /// Releases a bound pod (the devices given to bind()) and takes it off its node.
  void unbind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t);
  /// Undoes the last bind() on node n (a gang that did not fit): releases it and puts the node's last
  /// pod change back to `last_pod_change_s`. The DRA claims that bind allocated are not counted, as
  /// allocated or deallocated (dra_claims_allocated counts claims of pods that bound).
  void undo_bind(const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double last_pod_change_s);

  // ---- how the scheduler sees the fleet (see the top of this file)
  /// A scheduler running `policy` over state(), ties to the lower node id.
  std::unique_ptr<sched::Scheduler> make_scheduler(sched::Profile policy) const;

  /// Writes the fleet's counters (spot_interruptions, launch_failures, nodes_removed).
  void report(SimResult& result) const;

 private:
  struct NodeRecord {
    uint32_t pool = 0;
    NodePhase phase = NodePhase::kAbsent;
    uint32_t incarnation = 0;
    int32_t not_safe_to_evict = 0;
    double last_pod_change_s = 0;
    double launched_s = 0;
    double reclaim_at_s = -1;  // under a notice: the reclaim time
    bool cordoned_before_failure = false;
    bool plugin_down = false;
    bool gpus_advertised = true;  // false from Ready until gpu_advertise_delay_s has passed
    std::vector<uint32_t> pods;
    std::vector<GpuWithheld> withheld;  // per GPU; empty = none withheld
    std::vector<int32_t> withheld_milli;  // per GPU: what its placeholder counts as used
    std::vector<uint32_t> daemon_sets;    // ClusterConfig::daemon_sets whose pod is bound here
    int64_t daemon_cpu_milli = 0;
    int64_t daemon_memory_bytes = 0;
  };
  struct PoolRecord {
    std::vector<NodeId> nodes;
    int32_t live = 0;
    int32_t provisioning = 0;
    int64_t notices = 0;
  };
  void launch_node(NodeId n, double t, bool ready_now);
  // The one release of a bound pod's reservation (unbind and undo_bind). `undo`: a claim it
  // deallocates is taken off dra_claims_allocated_ instead of counted in dra_claims_deallocated_.
  void unreserve(const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, bool undo = false);
  void make_ready(NodeId n, double t);
  // The DaemonSets' pods of node n: bound when it becomes Ready, released when it is removed.
  void start_daemon_pods(NodeId n);
  void stop_daemon_pods(NodeId n);
  void on_ready_event(const Event& e);
  void on_notice_event(const Event& e);
  void on_reclaim_event(const Event& e);
  void on_launch_failed_event(const Event& e);
  void on_gpus_advertised_event(const Event& e);
  // The placeholder that holds GPU g of node n while it is withheld, and its devices.
  Pod withheld_placeholder(NodeId n, int32_t g, DeviceAssignment& devices) const;
  void notify_capacity(NodeId n, double t);
  // With the device plugin down: withholds every GPU of node n that no pod holds.
  void withhold_free_gpus(NodeId n, double t);

  const ClusterConfig& cluster_;
  EventLoop& loop_;
  std::unique_ptr<ClusterState> state_;
  std::vector<Node> templates_;
  std::shared_ptr<const DraCatalog> dra_;
  std::unique_ptr<DraGpuShares> dra_shares_;  // set with dra_
  std::unique_ptr<DraNodeSlices> dra_node_slices_;  // set with dra_
  int64_t dra_used_milli_ = 0;
  int64_t dra_claims_allocated_ = 0;
  int64_t dra_claims_deallocated_ = 0;
  std::vector<std::vector<Pod>> template_daemon_pods_;  // per pool
  CapacityOutlook outlook_;
  std::vector<NodeRecord> nodes_;
  std::vector<PoolRecord> pools_;
  std::vector<NodeListener*> listeners_;
  GoRand spot_rng_;
  int64_t live_gpu_capacity_milli_ = 0;
  int64_t interruptions_ = 0;
  int64_t withheld_gpu_milli_ = 0;
  int64_t withheld_gpu_count_ = 0;
  int64_t launch_failures_ = 0;
  int64_t daemon_pods_pending_ = 0;
  NodeRemovals removals_;
  std::function<bool(size_t, double)> launch_blocked_;
  double launch_failure_s_ = 0;
  std::vector<double> pool_launch_failure_s_;  // per pool; empty or < 0: launch_failure_s_
  EventKind node_ready_ = 0, spot_notice_ = 0, spot_reclaim_ = 0, launch_failed_ = 0, gpus_advertised_ = 0;
};

}  // namespace gpufleet::sim
