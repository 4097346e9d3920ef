#include "sched/plugins/taint_toleration.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>


namespace gpufleet::sched {
namespace {

constexpr std::string_view kNoSchedule = "NoSchedule";
constexpr std::string_view kPreferNoSchedule = "PreferNoSchedule";
constexpr std::string_view kNoExecute = "NoExecute";

// helper.DoNotScheduleTaintsFilterFunc (pkg/scheduler/framework/plugins/helper/taint.go).
bool does_not_schedule(const Taint& taint) { return taint.effect == kNoSchedule || taint.effect == kNoExecute; }

}  // namespace

// k8s.io/api/core/v1/toleration.go, (*Toleration).ToleratesTaint.
bool tolerates_taint(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  // "empty operator means Equal"
  if (toleration.operator_.empty() || toleration.operator_ == "Equal") return toleration.value == taint.value;
  if (toleration.operator_ == "Exists") return true;
  return false;
}

// k8s.io/component-helpers/scheduling/corev1/helpers.go, TolerationsTolerateTaint.
bool tolerations_tolerate_taint(std::span<const Toleration> tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations)
    if (tolerates_taint(t, taint)) return true;
  return false;
}

// k8s.io/component-helpers/scheduling/corev1/helpers.go, FindMatchingUntoleratedTaint.
const Taint* find_untolerated_taint(std::span<const Taint> taints, std::span<const Toleration> tolerations) {
  for (const Taint& taint : taints)
    if (does_not_schedule(taint) && !tolerations_tolerate_taint(tolerations, taint)) return &taint;
  return nullptr;
}

const Taint* find_untolerated_no_execute_taint(std::span<const Taint> taints, std::span<const Toleration> tolerations) {
  for (const Taint& taint : taints)
    if (taint.effect == kNoExecute && !tolerations_tolerate_taint(tolerations, taint)) return &taint;
  return nullptr;
}

// taint_toleration.go, countIntolerableTaintsPreferNoSchedule.
bool any_prefer_no_schedule_taint(std::span<const Node> nodes) {
  for (const Node& node : nodes)
    for (const Taint& taint : node.taints)
      if (taint.effect == "PreferNoSchedule") return true;
  return false;
}

int32_t count_intolerable_prefer_no_schedule_taints(std::span<const Taint> taints,
                                                    std::span<const Toleration> tolerations) {
  int32_t count = 0;
  for (const Taint& taint : taints)
    if (taint.effect == kPreferNoSchedule && !tolerations_tolerate_taint(tolerations, taint)) ++count;
  return count;
}

// taint_toleration.go, Filter: fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value).
std::string untolerated_taint_reason(const Taint& taint) {
  return fmt::format("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value);
}

FilterCode TaintToleration::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations) ? kUntoleratedTaint : FilterCode::kFits;
}

std::vector<std::string> TaintToleration::node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const {
  if (code == kUntoleratedTaint)
    if (const Taint* taint = find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations))
      return {untolerated_taint_reason(*taint)};
  return FilterPlugin::node_reasons(code, pod, state, n);
}

void TaintToleration::count_reasons(FilterCode code, const Pod& pod, const ClusterState& state, std::span<const NodeId> nodes,
                                    ReasonHistogram& histogram) const {
  if (code != kUntoleratedTaint) return FilterPlugin::count_reasons(code, pod, state, nodes, histogram);
  std::map<std::pair<std::string_view, std::string_view>, int32_t> taints;  // (key, value) of the first untolerated taint
  int32_t generic = 0;
  const Taint* last = nullptr;  // the previous node's taint and its count (nodes of a pool share taints)
  int32_t* last_count = nullptr;
  for (const NodeId n : nodes) {
    const Taint* t = find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations);
    if (t == nullptr) {
      ++generic;
    } else if (last != nullptr && t->key == last->key && t->value == last->value) {
      ++*last_count;
    } else {
      last = t;
      last_count = &taints[{t->key, t->value}];
      ++*last_count;
    }
  }
  if (generic > 0) histogram[std::string(code.reason())] += generic;
  for (const auto& [kv, count] : taints)
    histogram[untolerated_taint_reason(Taint{std::string(kv.first), std::string(kv.second), "NoSchedule"})] += count;
}

bool TaintToleration::skips_pre_score(const Pod&, const ClusterState& state) const {
  std::lock_guard<std::mutex> lock(memo_mutex_);
  if (memo_.state != &state || memo_.node_set_version != state.node_set_version())
    memo_ = Memo{&state, state.node_set_version(), any_prefer_no_schedule_taint(state.nodes())};
  return !memo_.any;
}

Status TaintToleration::pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId>, CycleState&, GoRand&) const {
  return skips_pre_score(pod, state) ? Status(Code::kSkip) : Status();
}

int64_t TaintToleration::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& /*cycle*/) const {
  return 100 - count_intolerable_prefer_no_schedule_taints(state.node(n).taints, pod.constraints.tolerations);
}

// helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores) on the counts (100 - raw score).
void TaintToleration::normalize_score(const Pod&, std::span<NodeScore> scores, const CycleState&) const {
  int64_t max_count = 0;
  for (const NodeScore& s : scores) max_count = std::max(max_count, 100 - s.score);
  for (NodeScore& s : scores) s.score = max_count == 0 ? kMaxNodeScore : kMaxNodeScore - kMaxNodeScore * (100 - s.score) / max_count;
}

}  // namespace gpufleet::sched
