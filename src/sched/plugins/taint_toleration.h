// TaintToleration filter and score (kube-scheduler
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
//
// Filter: the node is rejected if it has a NoSchedule or NoExecute taint that none of the pod's
// tolerations tolerates (v1helper.FindMatchingUntoleratedTaint with
// helper.DoNotScheduleTaintsFilterFunc). PreferNoSchedule taints never filter. The reason names the
// node's first untolerated taint, "node(s) had untolerated taint {key: value}", as kube's
// (UnschedulableAndUnresolvable), so FitError counts nodes with different taints apart.
//
// Score: kube counts the node's PreferNoSchedule taints the pod does not tolerate
// (countIntolerableTaintsPreferNoSchedule) and then normalizes over the feasible nodes with
// helper.DefaultNormalizeScore(100, reverse=true): score = 100 - 100 * count / max_count (integer
// division; every node gets 100 when max_count is 0). Here score() returns 100 - count, higher is
// better: the raw score a lexicographic profile compares (strictly decreasing in the count, so the
// same order as kube's normalized score whenever max_count <= 100, and never merging two counts), and
// normalize_score() turns it into kube's values for a weighted-sum profile.
// PreScore: Skip when no node of the cluster has a PreferNoSchedule taint (every node would score
// 100). gpufleet's shortcut; kube scores every node alike then. The answer is kept per ClusterState
// (node taints never change during a state's life).
// kube's PreScore keeps only the tolerations with an empty or PreferNoSchedule effect; that changes
// nothing, since a toleration with another effect never tolerates a PreferNoSchedule taint.
//
// Toleration matching is k8s.io/api/core/v1 toleration.go Toleration.ToleratesTaint, the GA
// operators only (Equal, Exists). The alpha Gt/Lt toleration operators of newer kube (feature gate
// TaintTolerationComparisonOperators) are not supported: like any unknown operator, they tolerate
// nothing.
#pragma once

#include <span>
#include <string>

#include "model/node.h"
#include <mutex>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// k8s.io/api/core/v1 Toleration.ToleratesTaint:
///  1. a non-empty effect must equal the taint's effect (an empty one matches every effect);
///  2. a non-empty key must equal the taint's key (an empty one matches every key);
///  3. operator "Exists" matches every value; "Equal" or "" needs value == taint value; any other
///     operator tolerates nothing.
/// (The API server only admits an empty key together with Exists; an empty key with Equal is not
/// rejected here, exactly as upstream: it tolerates every taint whose value equals the toleration's.)
bool tolerates_taint(const Toleration& toleration, const Taint& taint);

/// v1helper.TolerationsTolerateTaint: some toleration tolerates the taint.
bool tolerations_tolerate_taint(std::span<const Toleration> tolerations, const Taint& taint);

/// v1helper.FindMatchingUntoleratedTaint(taints, tolerations, DoNotScheduleTaintsFilterFunc): the first
/// NoSchedule or NoExecute taint (in the node's order) that no toleration tolerates, or nullptr.
const Taint* find_untolerated_taint(std::span<const Taint> taints, std::span<const Toleration> tolerations);

/// The kubelet's variant (pkg/kubelet/lifecycle/predicate.go generalFilter, "Kubelet is only
/// interested in the NoExecute taint"): the first NoExecute taint no toleration tolerates, or nullptr.
const Taint* find_untolerated_no_execute_taint(std::span<const Taint> taints, std::span<const Toleration> tolerations);

/// Whether some node has a PreferNoSchedule taint (TaintToleration's PreScore skips otherwise: every
/// node scores alike).
bool any_prefer_no_schedule_taint(std::span<const Node> nodes);

/// Number of PreferNoSchedule taints no toleration tolerates (countIntolerableTaintsPreferNoSchedule).
int32_t count_intolerable_prefer_no_schedule_taints(std::span<const Taint> taints,
                                                    std::span<const Toleration> tolerations);

/// kube's per-node Filter reason for an untolerated taint: "node(s) had untolerated taint {key: value}".
std::string untolerated_taint_reason(const Taint& taint);

class TaintToleration final : public FilterPlugin, public PreScorePlugin, public ScorePlugin, public NamedPlugin<"TaintToleration"> {
 public:
  /// "node(s) had untolerated taint(s)": the generic form of the per-node reason.
  static constexpr FilterReason kReasons[] = {{"node(s) had untolerated taint(s)", false, /*per_node=*/true}};
  static constexpr FilterCode kUntoleratedTaint{kReasons[0]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// kFits, or kUntoleratedTaint.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// untolerated_taint_reason of the node's first untolerated taint (the generic reason when it has
  /// none any more).
  std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const override;
  /// node_reasons() counted by (key, value) of the taint, worded once per distinct taint.
  void count_reasons(FilterCode code, const Pod& pod, const ClusterState& state, std::span<const NodeId> nodes,
                     ReasonHistogram& histogram) const override;
  /// Skip when no node has a PreferNoSchedule taint, else Success.
  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  /// Whether pre_score() skips: no node has a PreferNoSchedule taint.
  bool skips_pre_score(const Pod& pod, const ClusterState& state) const override;
  /// Whether pre_score() succeeds whatever the feasible nodes: some node has a PreferNoSchedule taint.
  bool static_pre_score(const Pod& pod, const ClusterState& state) const override { return !skips_pre_score(pod, state); }
  /// The score reads only the pod's tolerations and node n's taints.
  ScoreCaching caching() const override { return ScoreCaching::kNodeStatic; }
  /// 100 - (number of PreferNoSchedule taints of node n the pod does not tolerate). See above.
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  bool has_normalize_score() const override { return true; }
  /// kube's DefaultNormalizeScore(100, reverse=true) of the counts (see above).
  void normalize_score(const Pod& pod, std::span<NodeScore> scores, const CycleState& cycle) const override;

 private:
  // Whether some node of the state has a PreferNoSchedule taint, for the last state asked about, at its
  // node_set_version() (labels and taints change only when the node set does).
  struct Memo {
    const ClusterState* state = nullptr;
    uint64_t node_set_version = 0;  // ClusterState::node_set_version() `any` was computed at
    bool any = false;
  };
  mutable std::mutex memo_mutex_;
  mutable Memo memo_;
};

}  // namespace gpufleet::sched
