#include "sched/plugins/node_affinity.h"

#include <algorithm>
#include <limits>
#include <string>

namespace gpufleet::sched {
namespace {

bool contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// labels.NewRequirement as nodeaffinity.go's nodeSelectorRequirementsAsSelector calls it.
bool label_requirement_valid(const SelectorRequirement& r) { return !node_selector_requirement_error(r); }

// labels.Requirement.Matches (k8s.io/apimachinery/pkg/labels/selector.go); r is valid.
bool label_requirement_matches(const SelectorRequirement& r, const Labels& labels) {
  const std::string* value = find_label(labels, r.key);
  const std::string& op = r.operator_;
  if (op == "In") return value && contains(r.values, *value);
  if (op == "NotIn") return !value || !contains(r.values, *value);
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  // Gt, Lt: the label must exist and parse as an integer.
  if (!value) return false;
  const auto label_value = parse_go_int64(*value);
  if (!label_value) return false;
  const int64_t bound = *parse_go_int64(r.values[0]);
  return op == "Gt" ? *label_value > bound : *label_value < bound;
}

// nodeSelectorRequirementsAsFieldSelector: In / NotIn with exactly one value.
bool field_requirement_valid(const SelectorRequirement& r) {
  return (r.operator_ == "In" || r.operator_ == "NotIn") && r.values.size() == 1;
}

// fields.OneTermEqualSelector / OneTermNotEqualSelector over extractNodeFields(node) =
// {"metadata.name": node name}; fields.Set.Get of any other key is "".
bool field_requirement_matches(const SelectorRequirement& r, const Node& node) {
  const std::string_view field = r.key == "metadata.name" ? std::string_view(node.name) : std::string_view();
  return r.operator_ == "In" ? field == r.values[0] : field != r.values[0];
}

}  // namespace

// nodeaffinity.go: isEmptyNodeSelectorTerm, newNodeSelectorTerm (parse errors) and
// nodeSelectorTerm.match.
bool node_selector_term_matches(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;  // "nil or empty term selects no objects"
  for (const auto& r : term.match_expressions)
    if (!label_requirement_valid(r)) return false;
  for (const auto& r : term.match_fields)
    if (!field_requirement_valid(r)) return false;
  for (const auto& r : term.match_expressions)
    if (!label_requirement_matches(r, node.labels)) return false;
  // "t.matchFields != nil && len(nodeFields) > 0 && !t.matchFields.Matches(nodeFields)": a node without
  // a name has no fields, and then matchFields are not checked.
  if (!node.name.empty())
    for (const auto& r : term.match_fields)
      if (!field_requirement_matches(r, node)) return false;
  return true;
}

// nodeaffinity.go, LazyErrorNodeSelector.Match: terms ORed.
bool node_selector_terms_match(std::span<const NodeSelectorTerm> terms, const Node& node) {
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& t) { return node_selector_term_matches(t, node); });
}

// nodeaffinity.go, GetRequiredNodeAffinity + RequiredNodeAffinity.Match: nodeSelector is
// labels.SelectorFromSet (one Equals requirement per pair: label present with that value).
bool pod_matches_node_required_affinity(const Pod& pod, const Node& node) {
  for (const auto& [key, value] : pod.constraints.node_selector) {
    const std::string* v = find_label(node.labels, key);
    if (!v || *v != value) return false;
  }
  const auto& required = pod.constraints.required_node_affinity;
  return required.empty() || node_selector_terms_match(required, node);
}

// nodeaffinity.go, NewPreferredSchedulingTerms (weight-0 and empty terms skipped) +
// PreferredSchedulingTerms.Score.
int64_t preferred_node_affinity_score(const Pod& pod, const Node& node) {
  int64_t score = 0;
  for (const auto& t : pod.constraints.preferred_node_affinity)
    if (t.weight != 0 && node_selector_term_matches(t.preference, node)) score += t.weight;
  return score;
}

std::optional<std::string> preferred_node_affinity_error(const Pod& pod) {
  for (const auto& t : pod.constraints.preferred_node_affinity) {
    if (t.weight == 0) continue;
    for (const auto& r : t.preference.match_expressions)
      if (auto e = node_selector_requirement_error(r)) return *e;
  }
  return std::nullopt;
}

// node_affinity.go, Filter (ErrReasonPod).
FilterCode NodeAffinity::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  return pod_matches_node_required_affinity(pod, state.node(n)) ? FilterCode::kFits : kNodeAffinityMismatch;
}

// node_affinity.go, PreScore.
bool NodeAffinity::skips_pre_score(const Pod& pod, const ClusterState&) const {
  return pod.constraints.preferred_node_affinity.empty();
}

bool NodeAffinity::static_pre_score(const Pod& pod, const ClusterState& state) const {
  return !skips_pre_score(pod, state) && !preferred_node_affinity_error(pod);
}

Status NodeAffinity::pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState&, GoRand&) const {
  if (skips_pre_score(pod, state)) return Status(Code::kSkip);
  if (feasible.size() >= 2)
    if (auto error = preferred_node_affinity_error(pod)) return Status(Code::kError, std::move(*error));
  return Status();
}

// node_affinity.go, Score (before NormalizeScore).
int64_t NodeAffinity::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& /*cycle*/) const {
  return preferred_node_affinity_score(pod, state.node(n));
}

// node_affinity.go, NormalizeScore: helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores).
void NodeAffinity::normalize_score(const Pod&, std::span<NodeScore> scores, const CycleState&) const {
  int64_t max_sum = 0;
  for (const NodeScore& s : scores) max_sum = std::max(max_sum, s.score);
  if (max_sum == 0) return;
  for (NodeScore& s : scores) s.score = kMaxNodeScore * s.score / max_sum;
}

}  // namespace gpufleet::sched
