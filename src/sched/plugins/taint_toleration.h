// TaintToleration filter and score (kube-scheduler
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
//
// Filter: the node is rejected if it has a NoSchedule or NoExecute taint that none of the pod's
// tolerations tolerates (v1helper.FindMatchingUntoleratedTaint with
// helper.DoNotScheduleTaintsFilterFunc). PreferNoSchedule taints never filter.
//
// Score: kube counts the node's PreferNoSchedule taints the pod does not tolerate
// (countIntolerableTaintsPreferNoSchedule) and then normalizes over the feasible nodes with
// helper.DefaultNormalizeScore(100, reverse=true): score = 100 - 100 * count / max_count (integer
// division; every node gets 100 when max_count is 0). Our ScorePlugin has no NormalizeScore step, so
// score() returns 100 - count instead: the same order of nodes (strictly decreasing in the count,
// as kube's is whenever max_count <= 100), but not kube's values. It matters only if the score is
// ever summed with another plugin's; then a NormalizeScore pass would be needed.
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
#include "sched/framework.h"

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

/// Number of PreferNoSchedule taints no toleration tolerates (countIntolerableTaintsPreferNoSchedule).
int32_t count_intolerable_prefer_no_schedule_taints(std::span<const Taint> taints,
                                                    std::span<const Toleration> tolerations);

/// kube's per-node Filter reason for an untolerated taint: "node(s) had untolerated taint {key: value}".
std::string untolerated_taint_reason(const Taint& taint);

class TaintToleration final : public FilterPlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return "TaintToleration"; }
  /// kFits, or kUntoleratedTaint.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const override;
  /// The score depends on the pod's tolerations, which Scheduler's per-request-shape cache does not
  /// key on, so it must not be cached (see scheduler.h).
  bool cacheable() const override { return false; }
  /// 100 - (number of PreferNoSchedule taints of node n the pod does not tolerate). See above.
  int32_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
