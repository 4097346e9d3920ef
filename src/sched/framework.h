// The scheduling framework, in kube-scheduler's shape (k8s.io/kubernetes pkg/scheduler/framework):
// one cycle per pod runs the Filter plugins on every node (after a PreFilter step for the filters
// that need per-cycle data, see FilterPlugin), then PreScore and Score on the nodes that
// passed, picks the highest-scoring node, runs the GPU-selection step on it, and reserves (binds)
// the pod in ClusterState. A policy is a bundle of plugins; plugins hold only their own parameters.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "util/go_rand.h"

namespace gpufleet::sched {

inline constexpr NodeId kNoNode = UINT32_MAX;

/// Result of a Filter plugin for one node. The reasons are kube-scheduler's user-facing strings.
enum class FilterCode : uint8_t {
  kFits = 0,
  kInsufficientCpu,     ///< "Insufficient cpu"
  kInsufficientMemory,  ///< "Insufficient memory"
  kTooManyPods,         ///< "Too many pods"
  kInsufficientGpu,     ///< "Insufficient nvidia.com/gpu" (count, or no GPU with the fraction free)
  kGpuModelMismatch,    ///< "node(s) didn't match pod's GPU model constraint"
  /// "node(s) had untolerated taint(s)" (TaintToleration). kube names the first untolerated taint of
  /// each node, "node(s) had untolerated taint {key: value}"; a code aggregates nodes whose taints
  /// may differ, so its reason is generic (untolerated_taint_reason() in taint_toleration.h formats
  /// kube's per-node string).
  kUntoleratedTaint,
  kNodeAffinityMismatch,  ///< "node(s) didn't match Pod's node affinity/selector" (NodeAffinity)
  /// "Insufficient nvidia.com/mig-<profile>" (GpuShareFit): too few free MIG devices of a profile the
  /// pod requests. kube names the resource; a code aggregates nodes, so fit_error.h's node_reasons
  /// spells the profiles each node lacks.
  kInsufficientMig,
  kInsufficientGpuShared,  ///< "Insufficient nvidia.com/gpu.shared" (GpuShareFit): too few free renamed replicas
  /// GpuShareFit: more than one time-slicing replica on a node whose device plugin sets
  /// failRequestsGreaterThanOne. kube binds such a pod and the kubelet then fails it with
  /// UnexpectedAdmissionError; gpufleet refuses the node instead (see gpu_share_fit.h).
  kSharedRequestAboveOne,
  /// "node(s) didn't match pod anti-affinity rules" (InterPodAffinity: a pod matching one of the
  /// incoming pod's required anti-affinity terms runs in the node's topology domain)
  kAntiAffinityRulesNotMatch,
  /// "node(s) didn't satisfy existing pods anti-affinity rules" (InterPodAffinity: the incoming pod
  /// matches a required anti-affinity term of a pod running in the node's topology domain)
  kExistingAntiAffinityRulesNotMatch,
  /// "node(s) didn't match pod affinity rules" (InterPodAffinity: no pod matching the incoming pod's
  /// required affinity terms runs in the node's topology domains, or the node lacks a topology label)
  kAffinityRulesNotMatch,
  /// "node(s) were unschedulable" (NodeUnschedulable: spec.unschedulable and the pod does not tolerate
  /// node.kubernetes.io/unschedulable:NoSchedule)
  kNodeUnschedulable,
  kCount
};
inline constexpr size_t kFilterCodeCount = static_cast<size_t>(FilterCode::kCount);

/// The kube-scheduler style reason for a code, e.g. "Insufficient nvidia.com/gpu".
std::string_view filter_reason(FilterCode code);

/// Per-cycle scratch state shared by a policy's plugins (kube's CycleState), reset every cycle.
struct CycleState {
  NodeId prescore_choice = kNoNode;  ///< a node picked in PreScore (Random policy)
};

/// What a filter's PreFilter computed for one pod in one cycle (an entry of kube's CycleState written
/// by PreFilter and read by Filter). Each plugin downcasts its own type.
class FilterCycleData {
 public:
  virtual ~FilterCycleData() = default;
};

/// Filter extension point: may the pod run on node n?
///
/// Two kinds of filters:
///  - cacheable (the default): filter() depends only on the pod and node n's own state, so the
///    Scheduler reuses its answer until ClusterState::version(n) changes;
///  - not cacheable (filter_cacheable() false): the answer for node n also depends on other nodes (e.g.
///    InterPodAffinity with a zone term). Every cycle, the Scheduler calls pre_filter() once, then
///    filter_in_cycle() on each node that passed all cacheable filters (so such filters act as if
///    placed after the cacheable ones; kube's default order puts InterPodAffinity near the end too).
class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  /// kFits or the rejecting code. For a non-cacheable filter this is a stand-alone check (PreFilter
  /// and Filter for one node, as costly as pre_filter()).
  virtual FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const = 0;

  /// Whether filter() may be cached per node version (see above). Named apart from
  /// ScorePlugin::cacheable(): a plugin that is both (NodeAffinity) must not answer both at once.
  virtual bool filter_cacheable() const { return true; }
  /// PreFilter of a non-cacheable filter: the per-cycle data filter_in_cycle() reads, or nullptr when
  /// the pod has nothing to check against this state (kube's Skip status: every node passes).
  virtual std::unique_ptr<FilterCycleData> pre_filter(const Pod& /*pod*/, const ClusterState& /*state*/) const {
    return nullptr;
  }
  /// Filter with the data pre_filter() returned for this pod and state.
  virtual FilterCode filter_in_cycle(const Pod& pod, const ClusterState& state, NodeId n,
                                     const FilterCycleData& /*data*/) const {
    return filter(pod, state, n);
  }
  /// PreFilterExtensions AddPod / RemovePod (kube): `changed` was just bound to / released from node
  /// n (`state` already shows it), e.g. in preemption's dry run; update `data` to match.
  virtual void add_pod(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId /*n*/, const BoundPod& /*changed*/,
                       FilterCycleData& /*data*/) const {}
  virtual void remove_pod(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId /*n*/, const BoundPod& /*changed*/,
                          FilterCycleData& /*data*/) const {}
};

/// A policy's filters set up for one pod against one state (kube's RunPreFilterPlugins, then
/// RunFilterPlugins per node): the constructor runs pre_filter() of every non-cacheable filter.
/// Keeps pointers to `filters` and `pod`, which must outlive it; `state` must be the state (or a later
/// version of it kept in step through add_pod/remove_pod).
class FilterCycle {
 public:
  FilterCycle(std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod, const ClusterState& state);

  /// True when a non-cacheable filter has something to check (pre_filter() returned data).
  bool has_uncached() const { return uncached_ > 0; }
  /// Every filter on node n in order; kFits or the first rejecting code.
  FilterCode run(const ClusterState& state, NodeId n) const;
  /// Only the non-cacheable filters with data, in order (the Scheduler ran the cacheable ones).
  FilterCode run_uncached(const ClusterState& state, NodeId n) const;
  /// Tell the non-cacheable filters that `changed` was bound to / released from node n.
  void add_pod(const ClusterState& state, NodeId n, const BoundPod& changed);
  void remove_pod(const ClusterState& state, NodeId n, const BoundPod& changed);

 private:
  std::span<const std::shared_ptr<const FilterPlugin>> filters_;
  const Pod* pod_;
  std::vector<std::unique_ptr<FilterCycleData>> data_;  // per filter; null for cacheable or skipped ones
  size_t uncached_ = 0;
};

/// PreScore + Score extension points. Scores are integers, higher is better (values below
/// INT32_MIN + 16 are clamped up to it).
/// Ties between nodes are broken by the scheduler (lowest node rank wins), never by the plugin.
class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view name() const = 0;
  /// True when score() depends only on the pod's request and node n's state, so the scheduler may
  /// reuse it until ClusterState::version(n) changes.
  virtual bool cacheable() const { return true; }
  /// Informer hook: called once for every arriving pod, before its cycle (a live scheduler sees each
  /// pod when it is created). Plugins that learn from the workload seen so far update here.
  /// `state`: the state the scheduler schedules on at that moment (its cache snapshot; in `simulate`
  /// every node a pool may grow to, present or not), for plugins whose estimates also depend on what
  /// is left free.
  virtual void observe(const Pod& /*pod*/, const ClusterState& /*state*/) {}
  /// Changes whenever observe() changed what score() returns; the scheduler then drops its cache.
  virtual uint64_t generation() const { return 0; }
  /// Called once per cycle with the feasible nodes in node-id order (non-empty).
  virtual void pre_score(const Pod& /*pod*/, const ClusterState& /*state*/, std::span<const NodeId> /*feasible*/,
                         CycleState& /*cycle*/, GoRand& /*rng*/) const {}
  virtual int32_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const = 0;
};

/// The GPU-selection step: which GPU of the chosen node a sharing pod (num_gpu 1, gpu_milli < 1000)
/// gets. Pods that take whole GPUs always get the lowest-index fully free GPUs (FGD simulator,
/// AllocateExclusiveGpuId), chosen by the framework itself.
class GpuSelector {
 public:
  virtual ~GpuSelector() = default;
  virtual std::string_view name() const = 0;
  /// Returns the index of a GPU with at least pod.gpu_milli free (one exists: the filters passed).
  virtual int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const = 0;
};

/// A placement policy: the filters, one score plugin and the GPU selector (which may be the same
/// object as the score plugin, as for FGD-style policies whose GPU choice comes from the score).
struct Policy {
  std::string name;
  std::vector<std::shared_ptr<const FilterPlugin>> filters;
  std::shared_ptr<ScorePlugin> score;
  std::shared_ptr<const GpuSelector> gpu_selector;
};

/// The lowest-index GPUs with all 1000 gpu_milli free, `count` of them (fewer if the node lacks them).
/// Only plain GPUs (GpuKind::kPlain) count: MIG and time-sliced GPUs are never given whole.
std::vector<int32_t> lowest_free_gpus(const ClusterState& state, NodeId n, int32_t count);

/// Index of the GPU with the least free gpu_milli that still fits `gpu_milli`, first index on ties;
/// -1 if none fits. ("best" selection, FGD simulator open_gpu_share.go allocateGpuId.)
int32_t best_fit_gpu(std::span<const int32_t> gpu_free_milli, int32_t gpu_milli);

}  // namespace gpufleet::sched
