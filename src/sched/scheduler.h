// Scheduler: runs kube-scheduler's cycle (pkg/scheduler/schedule_one.go) for one pod at a time over a
// ClusterState, with the plugins of a Profile (sched/framework/profile.h):
//
//   decide():        PreFilter, Filter (every node), PreScore and Score (the feasible nodes), the
//                    node choice, then the GPU choice on that node. Changes nothing.
//   schedule_one():  observe() (the profile's observers), decide(), then, when no node fits,
//                    PostFilter (e.g. preemption);
//                    when one does: the ClusterState allocation (kube's assume), Reserve, Permit and
//                    Bind. A Reserve or Permit rejection, a Permit Wait that times out or is
//                    rejected, or a Bind failure runs Unreserve on every Reserve plugin in reverse
//                    order and releases the allocation, leaving the state's usage and pods as before.
//
// Node choice: the profile's Score combination (profile.h: a weighted sum as kube, or gpufleet's
// lexicographic order), then the node with the lowest rank. The FGD simulator breaks ties by the
// lexicographically smallest node name after prefixing each name with a random permutation index
// ("%04d-" + name, its fork of generic_scheduler.go selectHost), i.e. by a random per-run node rank;
// callers pass that rank (see pack_experiment.h). Identity ranks give "first node wins".
// Unlike kube, PreScore and Score also run when a single node is feasible (the random policy draws
// its node in PreScore, as the FGD simulator's does), so a plugin that must act only from two
// feasible nodes on (kube's NodeAffinity PreScore error) checks the count itself.
//
// Memo. Cacheable Filter results (FilterPlugin::filter_cacheable) and the first Score plugin whose
// caching() is kNodeVersion are memoized per (pod request shape and node constraints: nodeSelector,
// node affinity, tolerations; not the pod's namespace, labels or pod (anti-)affinity, which only
// non-cacheable plugins may read: interface.h; node)
// and reused until the node's ClusterState::version() changes (or an observer's generation()
// moves; a slot's versions never repeat, so a node added to a reused slot is evaluated afresh;
// empty slots are skipped): the results are pure functions of both, so this changes nothing but speed (the first cycle
// of each shape evaluates every node; later cycles re-evaluate only the nodes that changed since).
// The request shape includes the MIG and nvidia.com/gpu.shared requests. kNodeStatic Score plugins
// (labels and taints only) are computed once per shape and node (again when
// ClusterState::node_set_version() moves), and only for pods whose cycle does
// not skip them. Non-cacheable filters (e.g. InterPodAffinity, whose answer for a node depends on the
// pods of other nodes in its zone) are never memoized: their PreFilter runs each cycle and, unless it
// returns Skip, their Filter on the nodes that passed the cached filters. Other Score plugins run each
// cycle on the feasible nodes.
//
// Best-node index. In a lexicographic profile with a memoized Score plugin (every policy but the
// default-scheduler and random ones), a cycle whose PreScore plugins all skip whatever the feasible
// nodes (PreScorePlugin::skips_pre_score: no preferred node affinity, no PreferNoSchedule taint in
// the cluster) leaves the choice to the memoized score: the feasible node with the highest, then the
// lowest rank. So does a cycle whose other PreScore plugins succeed whatever the feasible nodes and
// score only columns of the node set (PreScorePlugin::static_pre_score, ScoreCaching::kNodeStatic:
// a pod's preferred node affinity, PreferNoSchedule taints): the index then compares those columns
// and the memoized score in profile order, as the lexicographic choice does (no NormalizeScore). Such a cycle reads it from a per-shape tournament tree over the slots instead of
// passing over every node. The tree's leaves are the nodes the cached filters pass; it follows the
// state through ClusterState::changes_since (each changed node's entry is re-evaluated, then its
// path to the root), so a cycle costs O(nodes changed since the shape's last cycle x log nodes),
// not O(nodes). A shape whose last cycle is more than node_count() / 16 changes old passes over
// every node instead, and gets its tree (in one pass) when its next cycle comes sooner. Non-cacheable filters run on the best node, then the next best (a rejected node
// leaves the tree for the cycle), up to 64 nodes; beyond that the cycle passes over every node as
// before. A pod no node fits gets its NodeToStatus from the entries, which the sync made current.
// The choice, the score, the NodeToStatus and the GPUs are exactly those of the pass over every node
// (set_best_node_index(false); Scheduler.BestNodeIndexChangesNoDecision); not used with sampling
// or by evaluate().
//
// Sampling. With Profile::percentage_of_nodes_to_score set, decide() runs kube's sampled Filter step
// (schedule_one.go findNodesThatPassFilters; sched/framework/node_sampling.h): the live nodes in
// kube's node-tree order (node_tree_order, nodes arriving in node-rank order), starting at the
// position where the previous cycle stopped (kube nextStartNodeIndex), until
// num_feasible_nodes_to_find(percentage, live nodes) feasible nodes are found; the start then moves
// on by the number of nodes checked, modulo the live node count. PreScore, Score and the node choice
// see those feasible nodes only, in the order they were found. A cycle that finds none has checked
// every node (its NodeToStatus is complete, as without sampling). Not applied by evaluate() (an
// extender answers for every node it is sent; kube-scheduler sampled them before) nor to a
// nominated node that fits (kube checks only that node and does not move the start). The order is
// rebuilt when the node set or a node rank changes, keeping the start position. Unset (the default):
// every node in NodeId order, exactly as before the setting existed.
//
// Permit. A pod a Permit plugin holds (Wait) stays reserved in ClusterState and is listed among the
// waiting pods (Handle::iterate_over_waiting_pods). It is bound once every waiting plugin allowed it
// and rolled back (Unreserve, release) when one rejects it or its timeout passes on the scheduler's
// clock (advance_clock). Both happen at the end of the call in which they occur; their outcomes are
// collected by take_permit_outcomes().
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/framework/cycle_state.h"
#include "sched/framework/interface.h"
#include "sched/framework/node_to_status.h"
#include "sched/framework/profile.h"
#include "sched/framework/status.h"

namespace gpufleet::sched {

/// The outcome of one cycle.
///
/// Devices (DeviceAssignment's fields; schedule_one reserves exactly these):
///  - gpus: nvidia.com/gpu. Plain GPUs: num_gpu distinct indices (whole GPUs: the lowest-index fully
///    free plain GPUs, of one NUMA node on a node whose kubelet aligns devices (select_whole_gpus in
///    sched/gpu/device_select.h); a fraction: the profile's GpuSelector, or the best-fit plain GPU on a node that
///    also has MIG or time-sliced GPUs). On a node time-sliced without renaming: one GPU index per
///    replica, ascending (an index repeats when a GPU gives several replicas).
///  - shared_replicas: nvidia.com/gpu.shared, one GPU index per replica, ascending.
///    Replicas (of either resource) are picked one at a time on the time-sliced GPU with the most
///    free replicas, lowest index on ties (spreading; the device plugin leaves the choice to the
///    kubelet, which gpufleet does not model).
///  - mig: per MIG request in the pod's order, the free devices of its profile with the lowest
///    (GPU index, start).
/// For output, gpu_indices() gives the distinct GPUs touched and mig_profiles() the profile(s), e.g.
/// "gpus": [2], "mig": "3g.40gb".
struct ScheduleResult {
  NodeId node = kNoNode;                 ///< chosen node, kNoNode if the pod is not placed
  std::vector<int32_t> gpus;             ///< GPU indices on that node (num_gpu of them; see above)
  std::vector<int32_t> shared_replicas;  ///< GPU index per nvidia.com/gpu.shared replica (see above)
  std::vector<MigDevice> mig;            ///< MIG devices (GPU, start, profile) (see above)
  /// Dynamic Resource Allocation: the pod's ResourceClaims with their devices on that node
  /// (sched/plugins/dynamic_resources.h dra_assign_claims); empty for a pod without claims.
  std::vector<DraClaimAllocation> claims;
  /// The winning node's score: the weighted sum in a weighted-sum profile; in a lexicographic one, the
  /// last Score plugin's raw score (a policy's own score; 0 when that plugin was skipped). 0 for a
  /// nominated node (no scoring).
  int64_t score = 0;
  /// Success: a node was chosen (schedule_one: the pod is bound there). Wait (schedule_one only):
  /// reserved on `node` and held by Permit. Unschedulable / UnschedulableAndUnresolvable: no node
  /// fits (node_to_status says why), or Reserve or Permit rejected the pod (node is then kNoNode,
  /// node_to_status empty). Error: kube's Error status (the pod is not placed although nodes may fit;
  /// PostFilter does not run), e.g. `running PreScore plugin "NodeAffinity": ...`.
  Status status;
  /// For a pod no node fits: which plugin rejected each node and why (kube's Diagnosis.NodeToStatus;
  /// an empty slot is not rejected). Empty otherwise, and when Scheduler::set_node_to_status(false)
  /// left it out.
  NodeToStatus node_to_status;
  /// schedule_one, when no node fit and the profile has PostFilter plugins: what they found
  /// (post_filter.nominated_node: the node preemption made room on; the pod's next cycle,
  /// schedule_cycle with that node nominated, goes there) and their status (its message is kube's
  /// PostFilter message, e.g. "preemption: 0/3 nodes are available: ...").
  PostFilterResult post_filter;
  Status post_filter_status;
  bool scheduled() const { return node != kNoNode; }
  /// The devices, as ClusterState::allocate takes them.
  DeviceAssignment devices() const { return {gpus, shared_replicas, mig, claims}; }
  /// The distinct GPU indices the pod uses (gpus, shared_replicas and MIG devices), ascending.
  std::vector<int32_t> gpu_indices() const;
  /// The distinct profiles of `mig`, in order, joined by ','; empty without MIG devices.
  std::string mig_profiles() const;
};

/// A waiting pod's end (Scheduler::take_permit_outcomes): bound (status Success) or rolled back
/// (a rejection: the plugin's message, or kube's "rejected due to timeout after waiting <t>s at
/// plugin <name>").
struct PermitOutcome {
  Pod pod;
  NodeId node = kNoNode;
  DeviceAssignment devices;
  Status status;
};

/// Every node's answer for one pod (Scheduler::evaluate).
struct NodeEvaluation {
  /// Per node: not rejected when every filter admits the pod (and for an empty slot), else the first
  /// rejecting filter and its code.
  NodeToStatus node_to_status;
  /// The feasible nodes, best first (score ties broken by the node rank).
  std::vector<NodeId> ranked;
  /// How many of `ranked`, from the first, share the best score: the nodes decide() chooses among
  /// (the first of them by node rank, or one at random with ScoreTieBreak::kRandom).
  size_t top_count = 0;
};

class Scheduler final : public Handle {
 public:
  /// `node_rank[n]` breaks score ties (lower wins) for slot n; it must have one entry per slot of
  /// the states this scheduler will see (decide() throws std::invalid_argument otherwise: give the
  /// slots that nodes added later take a rank with set_node_rank). Empty = every slot ranks as its
  /// NodeId ("first node wins"), however many slots. Throws std::invalid_argument if the profile
  /// lacks a Score plugin or a GPU selector.
  Scheduler(Profile profile, std::vector<uint32_t> node_rank);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  /// Sets slot n's tie-break rank; the slots between the last ranked one and n rank as their NodeId
  /// (with empty ranks, every slot below n).
  void set_node_rank(NodeId n, uint32_t rank);
  /// The node set of `state` changed (nodes added or removed, or resized) and `node_rank` ranks its
  /// slots now (as the constructor's). Keeps what the observers learnt and has them re-read the node
  /// set (ObserverPlugin::nodes_changed); the memos that follow the node set (node_set_version()) are
  /// rebuilt at the next cycle. Costs O(slots) plus the observers' re-reads.
  void nodes_changed(const ClusterState& state, std::vector<uint32_t> node_rank);
  Scheduler& operator=(const Scheduler&) = delete;

  /// decide() for an extender (kube-scheduler's filter and prioritize verbs), which answers for
  /// every node it is sent: also fills `evaluation` with every node's NodeToStatus entry and the feasible
  /// nodes ranked best first by the profile's node order (the order decide() takes the best of:
  /// ranked.front() is the returned node, or, with ScoreTieBreak::kRandom, one of the first
  /// evaluation.top_count). A pod decide() finds no node for has ranked empty; a
  /// PreFilter or PreScore error leaves both empty (result.status says why).
  /// With `rank` false, `ranked` is left empty and the cycle costs what decide() costs.
  ///
  /// `candidates` (nullptr: every node) restricts the cycle to the nodes an extender was sent, as
  /// kube-scheduler runs its own cycle (schedule_one.go): PreFilter runs as for every node (it reads
  /// the whole state, e.g. InterPodAffinity and PodTopologySpread count the pods of every node, as
  /// kube's PreFilter reads its snapshot); Filter runs on the candidates only; PreScore, Score and
  /// NormalizeScore over the feasible candidates (kube normalizes over the nodes it scores), so
  /// `ranked` and the returned node are the best of those. The candidates are visited in NodeId
  /// order whatever their order in the list, and a node listed twice counts once, so candidates
  /// holding every node give exactly the answers of nullptr. evaluation.node_to_status (and
  /// result.node_to_status when no candidate fits) still has one entry per slot: a candidate's is
  /// its Filter answer; every other slot's is "not rejected", meaning not evaluated (read only the
  /// candidates'). Throws std::invalid_argument for a candidate out of range (>= node_count()); an
  /// empty slot among them is, as in the pass over every node, never feasible and not rejected.
  ScheduleResult evaluate(const Pod& pod, const ClusterState& state, GoRand& rng, NodeEvaluation& evaluation, bool rank = true,
                          const std::vector<NodeId>* candidates = nullptr);
  /// Tells the profile's observers a pod arrived while the cluster is `state` (ObserverPlugin); drops
  /// memoized scores if that changed them.
  void observe(const Pod& pod, const ClusterState& state);
  /// PreFilter to the GPU choice (see the top of this file); does not change the state.
  /// `nominated_node` (kube's status.nominatedNodeName, set by preemption; kNoNode for none): when
  /// the pod passes every filter there, it goes there without scoring (score 0), as kube's
  /// evaluateNominatedNode; otherwise the cycle runs as usual. Throws std::invalid_argument for a
  /// nominated node out of range or an empty slot, or node ranks that do not cover the state's slots.
  ScheduleResult decide(const Pod& pod, const ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// observe(), then schedule_cycle().
  ScheduleResult schedule_one(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// One whole cycle for a pod observed before (e.g. its retry with the node preemption nominated):
  /// decide(), PostFilter when no node fits, else assume, Reserve, Permit and Bind (top of this file).
  ScheduleResult schedule_cycle(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// kube's assume: takes the devices `result` names on its node (ClusterState::allocate, which
  /// throws InvariantViolation if they are not free). No-op for a result without a node.
  static void assume(const Pod& pod, ClusterState& state, const ScheduleResult& result);
  /// A pod bound by spec.nodeName: observe() it and reserve it on node n with the devices its bind
  /// recorded (Pod::assigned_devices) when those are free there, else the devices a cycle would pick
  /// there (see ScheduleResult), running no plugin but the GPU choice (the scheduler never
  /// sees such a pod; the kubelet's own admission is the caller's check). Throws
  /// std::invalid_argument for n out of range or an empty slot, InvariantViolation when the pod's
  /// devices are not free on n.
  ScheduleResult bind_node_name(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng);
  /// bind_node_name without observe(): reserves a pod bound by spec.nodeName whose arrival the
  /// observers were already told of (the live cache re-admits a node's pods after one of them or the
  /// node changed, live/cluster_cache.h). Same devices and errors as bind_node_name.
  ScheduleResult admit_bound(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng);

  /// Moves the clock to `now_seconds` (never back) and rolls back every waiting pod whose Permit
  /// timeout has passed.
  void advance_clock(ClusterState& state, double now_seconds);
  /// kube RejectWaitingPod: rejects the waiting pod with pod_key() `key` and rolls it back. False
  /// when no such pod waits.
  bool reject_waiting_pod(ClusterState& state, std::string_view key, std::string message);
  /// The bound and rolled-back waiting pods since the last call, in the order they ended.
  std::vector<PermitOutcome> take_permit_outcomes();
  size_t waiting_pod_count() const { return waiting_.size(); }

  const Profile& profile() const { return profile_; }
  /// Turns the best-node index (see the top of this file) on (the default) or off. Off, every cycle
  /// passes over every node as before the index existed; the results are the same either way
  /// (Scheduler.BestNodeIndexChangesNoDecision checks it). For tests and benchmarks.
  void set_best_node_index(bool on) { best_node_index_ = on; }
  /// Turns the NodeToStatus of a pod no node fits (ScheduleResult::node_to_status) on (the default)
  /// or off. Off, such a pod gets Unschedulable with an empty node_to_status, which saves a pass over
  /// the nodes, unless the profile has PostFilter plugins (they read it) or the cycle is evaluate()'s;
  /// the chosen nodes are the same either way. For callers that never read it (`pack`).
  void set_node_to_status(bool on) { node_to_status_ = on; }

  // Handle.
  std::span<const std::shared_ptr<const PreFilterPlugin>> pre_filter_plugins() const override { return profile_.pre_filters; }
  std::span<const std::shared_ptr<const FilterPlugin>> filter_plugins() const override { return profile_.filters; }
  /// The tie-break ranks (lower wins), the constructor's as set_node_rank changed them; empty = by
  /// NodeId.
  std::span<const uint32_t> node_rank() const override { return node_rank_; }
  void iterate_over_waiting_pods(const std::function<void(WaitingPod&)>& fn) override;
  WaitingPod* get_waiting_pod(std::string_view key) override;
  double now_seconds() const override { return now_seconds_; }

 private:
  struct Entry {
    uint64_t version = 0;  // ClusterState version this entry was computed at (0 = never)
    int32_t value = 0;     // memoized score (or 0), or INT32_MIN + the rejection's number (filter_reasons_)
  };
  struct ShapeKey {
    int64_t cpu_milli, memory_bytes;
    int32_t num_gpu, gpu_milli;
    int32_t shared_replicas;
    std::string mig;  // mig_key(pod): the MIG requests; "" for none
    std::string gpu_spec;
    std::string constraints;  // constraints_key(pod): nodeSelector, node affinity, tolerations; "" for none
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeKeyHash {
    size_t operator()(const ShapeKey& k) const;
  };
  struct Waiting;  // a WaitingPod with what its rollback or binding needs
  // One column of scores per Score plugin taking part in a cycle: the memo, a static column (indexed
  // by node), or this cycle's scores (indexed by position in feasible_).
  struct Column {
    const int64_t* by_node = nullptr;      // kNodeStatic
    const int64_t* by_feasible = nullptr;  // computed this cycle
    bool memo = false;
    size_t plugin = 0;  // index in profile_.scores
  };

  // The number (filter_reasons_) of the first cacheable filter's rejection of node n, 0 when none.
  uint8_t run_cached_filters(const Pod& pod, const ClusterState& state, NodeId n) const;
  // The best node by the memoized score alone (kNoNode: none yet) and its score.
  struct MemoBest {
    NodeId node = kNoNode;
    int32_t value = 0;
  };
  // The nodes filter_pass visits: every slot in NodeId order, kube's sample (below), or evaluate()'s
  // candidates (candidate_order_, in NodeId order).
  enum class Pass : uint8_t { kEveryNode, kSampled, kCandidates };
  // The Filter pass over every node (kSampled: over scan_order_ from next_start_node_index_ until
  // `to_find` nodes fit, moving the start on; kCandidates: over candidate_order_): the memo
  // (evaluate() where a node's version moved), then the non-cacheable filters. Writes the feasible
  // nodes to `out` and returns their number; tracks the memo's best when kTrackMemo. Its own
  // function, so that its loop keeps its values in registers.
  template <bool kTrackMemo, Pass kPass>
  [[gnu::noinline]] size_t filter_pass(const Pod& pod, const ClusterState& state, Entry* entry, NodeId* out, MemoBest& best,
                                       size_t to_find);
  // The non-cacheable filters of this cycle on node n; a rejection goes to uncached_rejects_.
  [[gnu::noinline]] bool passes_uncached(const Pod& pod, const ClusterState& state, NodeId n);
  // Cached filters then, when the node fits, the memoized score: an Entry value. Out of line, so that
  // the per-node loop of decide() stays small.
  [[gnu::noinline]] int32_t evaluate(const Pod& pod, const ClusterState& state, NodeId n) const;
  size_t shape_for(const Pod& pod, size_t node_count);
  // The best-node index of one shape: a tournament tree over the slots. Leaf n (tree[width + n]) is
  // n when the cached filters pass node n (its Entry is feasible), else kNoNode; each inner entry is
  // the better of its two children: the higher memoized score, then the lower node rank, then the
  // lower slot (filter_pass's order). So tree[1] is the node filter_pass would pick when no
  // non-cacheable filter runs. Kept up to date from ClusterState::changes_since.
  struct BestIndex {
    std::vector<NodeId> tree;     // [1, 2 x width)
    size_t width = 0;             // a power of two, at least the slots
    size_t slots = 0;             // ClusterState::node_count() it covers
    uint64_t state_identity = 0;  // ClusterState::identity() it follows (0: not built)
    uint64_t synced_at = 0;       // ClusterState::change_count() it reflects
    uint64_t rank_epoch = 0;      // rank_epoch_ it was built at
    // The Score plugins it compares, in profile order (index_keys_ when built): empty for the
    // memoized one alone; else their columns, nullptr for the memoized one (the entries), the others
    // kNodeStatic columns of static_scores_ for the node set of node_set_version.
    std::vector<size_t> keys;
    std::vector<const int64_t*> key_columns;
    uint64_t node_set_version = 0;
  };
  // The better of two leaves or inner entries (kNoNode loses): the higher value at the first of the
  // index's key columns where they differ (the memoized score alone without keys), else the lower rank.
  NodeId better(const BestIndex& index, const Entry* entries, NodeId a, NodeId b) const;
  // The kNodeStatic column of Score plugin i for the shape, computed for every slot when the node set
  // changed since (static_scores_).
  const int64_t* static_column(size_t shape, size_t i, const Pod& pod, const ClusterState& state);
  // Sets slot n's leaf (present: n if its entry is feasible, else kNoNode) and its path to the root.
  void set_leaf(BestIndex& index, const Entry* entries, NodeId n, bool present);
  // Brings the shape's entries of the nodes changed since its index's last sync and the index up to
  // date, and returns true. When the index cannot follow (new, another state, the slot count, the
  // ranks, an observer's generation, more changes than slots / 16 + 16) it is rebuilt, in one pass,
  // only for a shape whose previous cycle came at most that many changes ago; for a rarer shape a
  // rebuild would cost more than the pass it saves: returns false (decide() passes over every node).
  bool sync_index(size_t shape, const Pod& pod, const ClusterState& state);
  // The cycle through the index, when it applies (decide()): fills result and returns true, or
  // returns false to run the pass over every node (too many nodes rejected by non-cacheable filters).
  bool decide_by_index(const Pod& pod, const ClusterState& state, size_t shape, GoRand& rng, ScheduleResult& result);
  // Whether the index may choose this cycle's node: every PreScore plugin skips whatever the
  // feasible nodes (PreScorePlugin::skips_pre_score), leaving only the memoized Score plugin; sets
  // score_skipped_ as those PreScore plugins would.
  bool index_applies(const Pod& pod, const ClusterState& state);
  // index_applies' findings for this cycle: the Score plugins scored (the memoized one and
  // kNodeStatic ones whose PreScore is static_pre_score), and which PreScore plugins skip.
  std::vector<size_t> index_keys_;
  std::vector<uint8_t> pre_score_skips_;
  // kube's NodeToStatus from the shape's entries (the cached filters) and uncached_rejects_; with
  // `only`, from the entries of those nodes (every other slot: not rejected).
  NodeToStatus node_statuses(const std::vector<Entry>& entries, size_t node_count, const std::vector<NodeId>* only = nullptr) const;
  // evaluate(): candidate_order_ = the distinct `candidates`, ascending (through candidate_bits_).
  void set_candidates(const std::vector<NodeId>& candidates, size_t node_count);
  void select_gpus(ScheduleResult& result, const Pod& pod, const ClusterState& state, GoRand& rng) const;
  // Picks the node among feasible_ after PreScore (the Score step); fills result.node and score.
  // With `ranked` set, also writes every feasible node to it, best first.
  void select_host(const Pod& pod, const ClusterState& state, size_t shape, GoRand& rng, ScheduleResult& result,
                   NodeEvaluation* evaluation = nullptr);
  // Unreserve on every Reserve plugin in reverse order, then releases the allocation.
  void roll_back(CycleState& cycle, const Pod& pod, ClusterState& state, NodeId n);
  // Binds or rolls back the waiting pods whose status is settled; repeats while that settles more.
  void settle_waiting(ClusterState& state);

  Profile profile_;
  std::vector<uint32_t> node_rank_;
  std::unordered_map<ShapeKey, size_t, ShapeKeyHash> shape_ids_;
  std::vector<std::vector<Entry>> cache_;
  /// Per shape, per Score plugin: the kNodeStatic scores of every node, empty until a pod of the
  /// shape needs them (node labels and taints never change: emptied only when the node set changes).
  std::vector<std::vector<std::vector<int64_t>>> static_scores_;
  std::vector<uint64_t> cache_generation_;  // per shape: the generation_ its entries were filled at
  uint64_t node_set_version_ = 0;           // ClusterState::node_set_version() static_scores_ hold for
  // Sampling (percentage_of_nodes_to_score): the live nodes in node-tree order, the node set they
  // are for (scan_order_valid_ false: rebuild), and kube's nextStartNodeIndex into them.
  std::vector<NodeId> scan_order_;
  uint64_t scan_order_node_set_ = 0;
  bool scan_order_valid_ = false;
  size_t next_start_node_index_ = 0;
  int memo_score_ = -1;                              // index in profile_.scores of the memoized plugin, -1 = none
  bool memo_lexicographic_ = false;                  // lexicographic profile with a memoized plugin
  const ScorePlugin* memo_plugin_ = nullptr;         // profile_.scores[memo_score_].plugin, or nullptr
  std::vector<std::vector<size_t>> pre_filter_targets_;  // per PreFilter plugin: the filters its Skip turns off
  std::vector<std::vector<size_t>> pre_score_targets_;   // per PreScore plugin: the Score plugins its Skip turns off
  std::vector<uint8_t> filter_skipped_;              // this cycle, per filter
  std::vector<uint8_t> score_skipped_;               // this cycle, per Score plugin
  // A filter with its index in profile_.filters (for filter_reasons_).
  struct IndexedFilter {
    const FilterPlugin* plugin;
    size_t index;
  };
  std::shared_ptr<const FilterReasonTable> filter_reasons_;  // the profile's filters' reasons, numbered
  std::vector<IndexedFilter> cached_filters_;        // the profile's cacheable filters, in order
  std::vector<IndexedFilter> uncached_;              // scratch: this cycle's non-cacheable, not skipped filters
  std::vector<NodeId> feasible_buffer_;              // scratch: at least one entry per node
  std::span<const NodeId> feasible_;                 // this cycle's feasible nodes (in feasible_buffer_)
  std::vector<std::pair<NodeId, uint8_t>> uncached_rejects_;  // scratch: this cycle's non-cached rejections (numbers)
  std::vector<std::vector<int64_t>> columns_;        // scratch: per-cycle scores, per Score plugin, per feasible node
  std::vector<NodeScore> normalized_;                // scratch
  std::vector<Column> score_columns_;                // scratch
  CycleState cycle_;                                 // this cycle's state
  uint64_t generation_ = 0;                          // sum of the observers' generations the memo was filled at
  double now_seconds_ = 0;
  NodeEvaluation* evaluation_ = nullptr;             // set during evaluate()
  bool rank_ = false;                                // evaluate(): rank the feasible nodes
  bool candidates_ = false;                          // evaluate(): Filter only candidate_order_
  std::vector<NodeId> candidate_order_;              // evaluate()'s candidates, distinct, ascending
  std::vector<uint64_t> candidate_bits_;             // scratch: one bit per slot, all 0 between cycles
  std::vector<std::unique_ptr<Waiting>> waiting_;    // in the order they started waiting
  std::vector<PermitOutcome> outcomes_;
  bool best_node_index_ = true;               // set_best_node_index
  bool node_to_status_ = true;                // set_node_to_status
  // Whether a pod no node fits gets its NodeToStatus: set_node_to_status, or PostFilter reads it.
  bool diagnosing() const { return node_to_status_ || !profile_.post_filters.empty(); }
  std::vector<BestIndex> best_index_;         // per shape
  uint64_t rank_epoch_ = 0;                   // moves on with set_node_rank
  std::vector<NodeId> index_excluded_;        // scratch: nodes a non-cacheable filter rejected
};

}  // namespace gpufleet::sched
