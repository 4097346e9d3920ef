// The extension points of the scheduling framework, as kube-scheduler names them
// (kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/framework/interface.go; the cycle in
// pkg/scheduler/schedule_one.go). One pod's cycle:
//
//   QueueSort   orders the pending pods (the caller's queue; Profile::queue_sort)
//   PreFilter   once per cycle: per-cycle data into the CycleState, or Skip (the Filter is not needed)
//   Filter      per node: may the pod run there? (FilterCode: kFits or one of the plugin's reasons;
//               the framework records which plugin rejected each node, NodeToStatus)
//   PostFilter  when no node fits: e.g. preemption, which may nominate a node and evict victims
//   PreScore    once, with the feasible nodes: per-cycle data, Skip, or Error (the cycle fails)
//   Score       per feasible node, then NormalizeScore per plugin; combined per the profile
//   (select GPUs: gpufleet's step, the devices of a sharing pod on the chosen node; GpuSelector)
//   Reserve     after the ClusterState allocation (kube's "assume"); Unreserve undoes, in reverse
//   Permit      Success, Wait (with a timeout) or Reject; a waiting pod is allowed or rejected later
//   Bind        the pod's binding is final
//
// Besides the points, ObserverPlugin is told of every arriving pod (gpufleet's informer hook).
//
// A plugin implements the interfaces of the points it serves (a class may implement several, e.g.
// TaintToleration is a Filter and a Score plugin) and declares its name once, through
// NamedPlugin<"Name"> (which gives the `kName` constant and name()); a Registry (registry.h) maps
// names to factories and a Profile (profile.h) lists the plugins of each point.
// Node ids are ClusterState's. Plugins hold only their own parameters and caches; what they need
// from the scheduler comes through Handle.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/framework/cycle_state.h"
#include "sched/framework/status.h"
#include "util/go_rand.h"

namespace gpufleet::sched {

inline constexpr NodeId kNoNode = UINT32_MAX;

/// kube MaxNodeScore / MinNodeScore: the range of a normalized score in a weighted sum.
inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

/// Every plugin: a name, unique in a Registry (kube framework.Plugin.Name()).
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

/// A plugin name as a template argument (NamedPlugin's); built from a string literal.
template <size_t N>
struct PluginName {
  char chars[N];
  consteval PluginName(const char (&literal)[N]) { std::copy_n(literal, N, chars); }
};

/// The one way an in-tree plugin declares its name: derive from NamedPlugin<"Name"> besides its
/// extension points, e.g. `class NodeUnschedulable final : public FilterPlugin,
/// public NamedPlugin<"NodeUnschedulable">`. Gives kName (static storage, usable as a CycleState key)
/// and name(), in place of kube's `const Name = ...` and `func (pl *X) Name() string`.
template <PluginName kLiteral>
class NamedPlugin : public virtual Plugin {
 public:
  static constexpr std::string_view kName{kLiteral.chars, sizeof(kLiteral.chars) - 1};
  std::string_view name() const final { return kName; }
};

/// A pod in the scheduling queue (kube QueuedPodInfo): the pod and when it entered the queue
/// (any increasing counter; lower is earlier).
struct QueuedPodInfo {
  const Pod* pod = nullptr;
  uint64_t timestamp = 0;
};

/// QueueSort: the order in which pending pods are scheduled. A profile has exactly one.
class QueueSortPlugin : public virtual Plugin {
 public:
  /// Whether `a` is scheduled before `b` (a strict weak order).
  virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

/// PreFilter: once per cycle, before Filter.
class PreFilterPlugin : public virtual Plugin {
 public:
  /// Writes what this plugin's Filter reads into `cycle` (under its name). Returns Success, Skip
  /// (every node passes this plugin's Filter this cycle; its PreFilterExtensions are not called
  /// either), or a rejection (the pod fits no node; UnschedulableAndUnresolvable stops the cycle
  /// before Filter).
  virtual Status pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const = 0;
  /// PreFilterExtensions AddPod / RemovePod: `changed` was just bound to / released from node n
  /// (`state` already shows it), e.g. in preemption's dry run; update this plugin's data in `cycle`.
  virtual void add_pod(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId /*n*/, const BoundPod& /*changed*/,
                       CycleState& /*cycle*/) const {}
  virtual void remove_pod(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId /*n*/, const BoundPod& /*changed*/,
                          CycleState& /*cycle*/) const {}
};

/// FitError's counts (fit_error.h): kube's per-node reason -> number of nodes.
using ReasonHistogram = std::map<std::string, int32_t>;

class NodeToStatus;

/// Filter: may the pod run on node n?
///
/// Reasons. A Filter plugin owns its reasons (kube: each plugin's ErrReason strings and status
/// codes): filter_reasons() lists every FilterReason it may reject a node for, and filter() returns
/// FilterCode::kFits or a FilterCode of one of them. A profile numbers its filters' reasons when it
/// is built (FilterReasonTable, node_to_status.h); the framework records per node which plugin
/// rejected it and with which reason (NodeToStatus), which the FitError message, preemption and the
/// extender read. A plugin whose words depend on the node (kube's TaintToleration names the node's
/// taint) marks the reason per_node and words it in node_reasons().
///
/// Two kinds of filters:
///  - cacheable (the default): filter() depends only on the pod (its requests, gpu_spec, MIG and
///    memory-share requests, nodeSelector, node affinity and tolerations; not its namespace, labels
///    or pod (anti-)affinity terms, which pods with the same memo entry may differ in) and node n's
///    own state, and reads nothing from `cycle`; the Scheduler reuses its answer until
///    ClusterState::version(n) changes;
///  - not cacheable (filter_cacheable() false): the answer for node n also depends on other nodes
///    (e.g. InterPodAffinity with a zone term), through what the plugin's PreFilter wrote in `cycle`.
///    The Scheduler runs it each cycle on the nodes that passed all cacheable filters (so such
///    filters act as if placed after the cacheable ones; kube's default order puts InterPodAffinity
///    near the end too).
class FilterPlugin : public virtual Plugin {
 public:
  /// Every reason filter() may return, in a fixed order (a static array: codes point into it).
  virtual std::span<const FilterReason> filter_reasons() const = 0;
  /// kFits, or FilterCode(r) for an element r of filter_reasons().
  virtual FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const = 0;
  /// Whether filter() may be cached per node version (see above). Named apart from
  /// ScorePlugin::cacheable(): a plugin that is both (NodeAffinity) must not answer both at once.
  virtual bool filter_cacheable() const { return true; }
  /// Stand-alone Filter of one node: this plugin's own PreFilter first when it has one (Skip: kFits),
  /// then filter(). As costly as PreFilter; cycles use FilterCycle or the Scheduler instead. Derived
  /// classes bring it into scope with `using FilterPlugin::filter;`.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const;
  /// kube's words for node n rejected with `code` (one of this plugin's), in order; empty for kFits.
  /// Default: {code.reason()}. A plugin with per_node reasons overrides it to word them for the
  /// node, as kube's Filter would (state and pod as when the node was rejected).
  virtual std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const;
  /// Adds the words of the nodes `nodes`, each rejected by this plugin with `code`, to `histogram`
  /// (one count per node and word). Default: node_reasons() of each node for a per_node reason, else
  /// nodes.size() under code.reason(). A plugin may override it to count without wording each node.
  virtual void count_reasons(FilterCode code, const Pod& pod, const ClusterState& state, std::span<const NodeId> nodes,
                             ReasonHistogram& histogram) const;
};

/// What a PostFilter plugin found (kube PostFilterResult with NominatingInfo, and the victims that
/// DefaultPreemption evicted).
struct PostFilterResult {
  NodeId nominated_node = kNoNode;  ///< the node made room on; kNoNode when none
  std::vector<BoundPod> victims;    ///< the pods evicted from it, most important first
  int32_t pdb_violations = 0;       ///< victims evicted although a PDB had no disruption left
  int32_t candidates = 0;           ///< nodes where the plugin could have made room
};

class WaitingPod;

/// What plugins may ask of the scheduler running them (the part of kube's framework.Handle used here).
class Handle {
 public:
  virtual ~Handle() = default;
  /// The profile's PreFilter and Filter plugins, in order (for plugins that run filters themselves,
  /// like preemption's dry run).
  virtual std::span<const std::shared_ptr<const PreFilterPlugin>> pre_filter_plugins() const = 0;
  virtual std::span<const std::shared_ptr<const FilterPlugin>> filter_plugins() const = 0;
  /// Tie-break ranks of the nodes (lower wins), one per node.
  virtual std::span<const uint32_t> node_rank() const = 0;
  /// kube IterateOverWaitingPods: every pod waiting on Permit, in the order they started waiting.
  virtual void iterate_over_waiting_pods(const std::function<void(WaitingPod&)>& fn) = 0;
  /// kube GetWaitingPod, by pod_key(); nullptr when that pod is not waiting.
  virtual WaitingPod* get_waiting_pod(std::string_view key) = 0;
  /// The scheduler's clock, seconds (Scheduler::advance_clock); Permit timeouts count from it.
  virtual double now_seconds() const = 0;
};

/// PostFilter: runs when no node passed Filter (and the cycle had no Error), in order, until one
/// returns Success. May change `state` (DefaultPreemption evicts its victims, as kube's does through
/// the API server) and fills `result`.
class PostFilterPlugin : public virtual Plugin {
 public:
  /// `statuses`: which plugin rejected each node and why (kube's NodeToStatus). Returns Success with
  /// result.nominated_node set when the pod may fit after this, else Unschedulable with a message
  /// (kube's PostFilter message, shown after the FitError).
  virtual Status post_filter(const Pod& pod, ClusterState& state, const NodeToStatus& statuses, CycleState& cycle,
                             Handle& handle, PostFilterResult& result) const = 0;
};

/// PreScore: once per cycle, with the feasible nodes (node-id order, non-empty).
class PreScorePlugin : public virtual Plugin {
 public:
  /// Success, Skip (this plugin's Score is not run this cycle) or Error (the cycle fails; kube:
  /// `running PreScore plugin "<name>": <message>`). `rng`: the run's seeded generator.
  virtual Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                           GoRand& rng) const = 0;
  /// True only when pre_score() returns Skip for this pod and state whatever the feasible nodes
  /// (any non-empty list), drawing nothing from its rng and writing nothing to its CycleState. The
  /// Scheduler then may choose the node without listing the feasible nodes (its best-node index,
  /// scheduler.h); it still runs nothing else of this plugin that cycle. Default false: always
  /// safe, it only costs the index.
  virtual bool skips_pre_score(const Pod& /*pod*/, const ClusterState& /*state*/) const { return false; }
  /// True only when pre_score() returns Success for this pod and state whatever the feasible nodes
  /// (any non-empty list), drawing nothing from its rng and writing nothing to its CycleState, and
  /// the Score plugins it precedes are ScoreCaching::kNodeStatic: their scores are then columns of
  /// the node set, which the best-node index compares before the memoized score (scheduler.h).
  /// Default false: always safe, it only costs the index.
  virtual bool static_pre_score(const Pod& /*pod*/, const ClusterState& /*state*/) const { return false; }
};

/// One node's score (kube NodeScore).
struct NodeScore {
  NodeId node = kNoNode;
  int64_t score = 0;
};

/// How a Score plugin's results may be reused by the Scheduler's per-node memo.
enum class ScoreCaching : uint8_t {
  /// Recomputed every cycle (the score reads the CycleState, e.g. what PreScore drew).
  kPerCycle,
  /// A function of the pod (what a cacheable filter may read, FilterPlugin) and node n's state: reused
  /// until ClusterState::version(n) changes or an observer's generation() moves (ObserverPlugin).
  kNodeVersion,
  /// A function of the pod (what a cacheable filter may read) and node n's labels and taints only
  /// (never of usage): computed once per pod shape and node.
  kNodeStatic,
};

/// Score: per feasible node, higher is better. A plugin never breaks ties; the Scheduler does (lowest
/// node rank wins).
class ScorePlugin : public virtual Plugin {
 public:
  /// The node's raw score. A plugin whose caching() is not kPerCycle reads nothing from `cycle`.
  /// Memoized scores (kNodeVersion) below INT32_MIN + 256 or above INT32_MAX are clamped into that
  /// range (the memo keeps a rejection's one-byte number below it; node_to_status.h).
  virtual int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const = 0;
  /// Whether normalize_score does anything (kube: ScoreExtensions() != nil).
  virtual bool has_normalize_score() const { return false; }
  /// NormalizeScore (kube ScoreExtensions): rescales the feasible nodes' raw scores in place, to
  /// [kMinNodeScore, kMaxNodeScore] for a weighted sum. Run only in a weighted-sum profile (see
  /// ScoreCombination in profile.h).
  virtual void normalize_score(const Pod& /*pod*/, std::span<NodeScore> /*scores*/, const CycleState& /*cycle*/) const {}
  virtual ScoreCaching caching() const { return ScoreCaching::kNodeVersion; }
  /// caching() == kNodeVersion: memoized per node version.
  bool cacheable() const { return caching() == ScoreCaching::kNodeVersion; }
};

/// Observer: told of every arriving pod, once, before its cycle (gpufleet's informer hook; kube's
/// plugins watch the informers of framework.Handle.SharedInformerFactory). Plugins that learn from
/// the workload seen so far (online FGD's pod mix) implement it; build_profile lists every plugin
/// of a profile that does (Profile::observers), and Scheduler::observe calls them.
class ObserverPlugin : public virtual Plugin {
 public:
  /// `state`: the state the scheduler schedules on at that moment, for plugins whose estimates also
  /// depend on what is left free.
  virtual void observe(const Pod& pod, const ClusterState& state) = 0;
  /// Changes whenever observe() changed what the plugin's Score (or GPU choice) returns; the
  /// Scheduler then drops its memoized scores.
  virtual uint64_t generation() const = 0;
  /// The state's node set changed (ClusterState::add_node or remove_node, or a node replaced by one
  /// of another capacity) while the plugin keeps what observe() taught it, as a running
  /// kube-scheduler takes a node from its informer: a plugin that read the node set when it was made
  /// reads it again. The state's GPU models are still those the plugin was made with (a new model
  /// needs a new plugin). Default: nothing to do.
  virtual void nodes_changed(const ClusterState& /*state*/) {}
};

/// gpufleet's device step (not a kube extension point; the FGD simulator picks the GPU in its
/// Reserve, open_gpu_share.go allocateGpuId): which GPU of the chosen node a sharing pod (num_gpu 1,
/// gpu_milli < 1000) gets. Pods that take whole GPUs always get the lowest-index fully free GPUs
/// (FGD simulator AllocateExclusiveGpuId), chosen by the Scheduler itself.
class GpuSelector : public virtual Plugin {
 public:
  /// Returns the index of a GPU with at least pod.gpu_milli free (one exists: the filters passed).
  virtual int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const = 0;
};

/// Reserve: after the Scheduler reserved the pod's resources in ClusterState on node n (kube's
/// assume). If any Reserve or a later step fails, Unreserve runs on every Reserve plugin in reverse
/// order and the Scheduler releases the allocation.
class ReservePlugin : public virtual Plugin {
 public:
  virtual Status reserve(const Pod& pod, const ClusterState& state, NodeId n, CycleState& cycle) = 0;
  /// Must be idempotent and never fail (kube).
  virtual void unreserve(const Pod& pod, const ClusterState& state, NodeId n, CycleState& cycle, Handle& handle) = 0;
};

/// What a Permit plugin decided: Success, Wait (for at most timeout_seconds, capped at 15 minutes as
/// kube's maxTimeout) or a rejection.
struct PermitDecision {
  Status status;
  double timeout_seconds = 0;
};

/// Permit: the last step before Bind; may hold the reserved pod (a gang waiting for its members).
class PermitPlugin : public virtual Plugin {
 public:
  virtual PermitDecision permit(const Pod& pod, NodeId n, CycleState& cycle, Handle& handle) = 0;
};

/// Bind: makes the placement final. Plugins run in order until one does not Skip.
class BindPlugin : public virtual Plugin {
 public:
  virtual Status bind(const Pod& pod, NodeId n, CycleState& cycle) = 0;
};

/// A pod held by Permit (kube WaitingPod): reserved on node(), waiting for every plugin in
/// pending_plugins() to allow it. Plugins call allow()/reject() through Handle; the Scheduler binds
/// or rolls back the pod at the end of the call in which the last allow or a reject happened.
class WaitingPod {
 public:
  /// `deadlines`: per waiting plugin, the clock time (seconds) at which it rejects the pod.
  WaitingPod(Pod pod, NodeId node, std::vector<std::pair<std::string, double>> deadlines)
      : pod_(std::move(pod)), node_(node), pending_(std::move(deadlines)) {}
  const Pod& pod() const { return pod_; }
  NodeId node() const { return node_; }
  /// The plugins that have not allowed the pod yet, in the order they asked it to wait.
  std::vector<std::string> pending_plugins() const;
  /// `plugin` allows the pod; once no plugin is pending (and none rejected), the pod is allowed.
  void allow(std::string_view plugin);
  /// Rejects the pod (kube: Unschedulable, `message`, plugin `plugin`); later allows are ignored.
  void reject(std::string_view plugin, std::string message);
  /// Success once allowed, Wait while pending, Unschedulable once rejected.
  const Status& status() const { return status_; }
  /// The earliest deadline among the pending plugins and that plugin; {infinity, ""} when none.
  std::pair<double, std::string> next_deadline() const;

 private:
  Pod pod_;
  NodeId node_;
  std::vector<std::pair<std::string, double>> pending_;
  Status status_{Code::kWait};
};

/// The key of a pod for Handle::get_waiting_pod: "namespace/name", "default" for an empty namespace.
std::string pod_key(const Pod& pod);

}  // namespace gpufleet::sched
