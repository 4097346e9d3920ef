// The scheduling framework, in kube-scheduler's shape (k8s.io/kubernetes pkg/scheduler/framework):
// one cycle per pod runs the Filter plugins on every node, then PreScore and Score on the nodes that
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
  /// pod requests. kube names the resource; a code aggregates nodes, so ScheduleResult::mig_rejected
  /// holds the per-profile counts that unschedulable_message prints.
  kInsufficientMig,
  kInsufficientGpuShared,  ///< "Insufficient nvidia.com/gpu.shared" (GpuShareFit): too few free renamed replicas
  /// GpuShareFit: more than one time-slicing replica on a node whose device plugin sets
  /// failRequestsGreaterThanOne. kube binds such a pod and the kubelet then fails it with
  /// UnexpectedAdmissionError; gpufleet refuses the node instead (see gpu_share_fit.h).
  kSharedRequestAboveOne,
  kCount
};
inline constexpr size_t kFilterCodeCount = static_cast<size_t>(FilterCode::kCount);

/// The kube-scheduler style reason for a code, e.g. "Insufficient nvidia.com/gpu".
std::string_view filter_reason(FilterCode code);

/// Per-cycle scratch state shared by a policy's plugins (kube's CycleState), reset every cycle.
struct CycleState {
  NodeId prescore_choice = kNoNode;  ///< a node picked in PreScore (Random policy)
};

/// Filter extension point: may the pod run on node n?
class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const = 0;
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
  virtual void observe(const Pod& /*pod*/) {}
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
