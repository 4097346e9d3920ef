#include "sched/plugins/pod_topology_spread.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/framework/validation.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {
namespace {

// kube's cycle-state keys (preFilterStateKey, preScoreStateKey).
constexpr std::string_view kPreFilterKey = "PreFilterPodTopologySpread";
constexpr std::string_view kPreScoreKey = "PreScorePodTopologySpread";
constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

std::string_view namespace_of(const Pod& pod) {
  return pod.namespace_name.empty() ? std::string_view("default") : std::string_view(pod.namespace_name);
}

bool selector_empty(const LabelSelector& s) { return s.match_labels.empty() && s.match_expressions.empty(); }

// common.go topologySpreadConstraint: the constraint with its selector parsed.
struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  bool hostname = false;  // topology_key is kubernetes.io/hostname (counted per node in Score)
  LabelSelector selector;
  bool nothing = false;  // labels.Nothing(): no labelSelector
  int32_t min_domains = 1;
  bool honor_affinity = true;
  bool honor_taints = false;

  // labels.Selector.Matches
  bool matches(const Labels& labels) const { return !nothing && label_selector_matches(selector, labels); }
  // labels.Selector.Empty(): Everything (`{}`), for which countPodsMatchSelector counts nothing.
  bool empty() const { return !nothing && selector_empty(selector); }
};
using Constraints = std::vector<Constraint>;

// filterTopologySpreadConstraints: the constraints of `action`, matchLabelKeys merged into the
// selector (mergeLabelSetWithSelector: a nil selector stays Nothing).
Constraints filter_constraints(const std::vector<TopologySpreadConstraint>& in, const Labels& pod_labels,
                               UnsatisfiableAction action) {
  Constraints out;
  for (const TopologySpreadConstraint& t : in) {
    if (t.when_unsatisfiable != action) continue;
    Constraint c;
    c.max_skew = t.max_skew;
    c.topology_key = t.topology_key;
    c.hostname = t.topology_key == kHostnameLabel;
    c.selector = t.label_selector;
    c.nothing = !t.has_label_selector;
    if (!c.nothing) {
      Labels merged;
      for (const std::string& key : t.match_label_keys)
        if (const std::string* v = find_label(pod_labels, key)) merged.emplace_back(key, *v);
      c.selector.match_labels.insert(c.selector.match_labels.end(), merged.begin(), merged.end());
    }
    c.min_domains = t.min_domains.value_or(1);
    c.honor_affinity = t.node_affinity_policy == NodeInclusionPolicy::kHonor;
    c.honor_taints = t.node_taints_policy == NodeInclusionPolicy::kHonor;
    out.push_back(std::move(c));
  }
  return out;
}

// Whether the pod has anything the plugin could read: its own constraints or a default selector.
bool may_spread(const Pod& pod) {
  return !pod.constraints.topology_spread_constraints.empty() || !selector_empty(pod.constraints.default_spread_selector);
}

// matchNodeInclusionPolicies
bool node_included(const Constraint& c, const Pod& pod, const Node& node) {
  if (c.honor_affinity && !pod_matches_node_required_affinity(pod, node)) return false;
  if (c.honor_taints && find_untolerated_taint(node.taints, pod.constraints.tolerations) != nullptr) return false;
  return true;
}

// nodeLabelsMatchSpreadConstraints
bool has_all_keys(const Node& node, const Constraints& constraints) {
  for (const Constraint& c : constraints)
    if (topology_value(node, c.topology_key) == nullptr) return false;
  return true;
}

// The node's value of the key as Go's map lookup reads it: "" when it lacks the label.
std::string value_or_empty(const Node& node, const std::string& key) {
  const std::string* v = topology_value(node, key);
  return v ? *v : std::string();
}

// countPodsMatchSelector
int64_t count_pods(const ClusterState& state, NodeId n, const Constraint& c, std::string_view ns) {
  if (c.empty() || c.nothing) return 0;
  int64_t count = 0;
  for (const BoundPod& b : state.pods_on(n))
    if (namespace_of(b.pod) == ns && c.matches(b.pod.labels)) ++count;
  return count;
}

// filtering.go criticalPaths: [0] always holds the smallest count; [1] one at least as large.
struct CriticalPath {
  std::string value;
  int64_t count = std::numeric_limits<int32_t>::max();
};
struct CriticalPaths {
  std::array<CriticalPath, 2> p;
  void update(const std::string& value, int64_t count) {
    int i = -1;
    if (value == p[0].value) i = 0;
    else if (value == p[1].value) i = 1;
    if (i >= 0) {
      p[i].count = count;
      if (p[0].count > p[1].count) std::swap(p[0], p[1]);
    } else if (count < p[0].count) {
      p[1] = p[0];
      p[0] = {value, count};
    } else if (count < p[1].count) {
      p[1] = {value, count};
    }
  }
};

struct PreFilterState final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<PreFilterState>(*this); }
  std::shared_ptr<const Constraints> constraints;  // shared by clones: never changes
  std::vector<CriticalPaths> paths;
  std::vector<std::map<std::string, int64_t>> counts;  // per constraint: topology value -> matching pods

  // minMatchNum
  int64_t min_match(size_t i, int32_t min_domains) const {
    if (counts[i].size() < static_cast<size_t>(min_domains)) return 0;
    return paths[i].p[0].count;
  }
};

struct PreScoreState final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<PreScoreState>(*this); }
  Constraints constraints;
  std::vector<uint8_t> ignored;                        // per NodeId: lacks a topology key (IgnoredNodes)
  std::vector<std::map<std::string, int64_t>> counts;  // per constraint (not hostname): value -> pods
  std::vector<double> weights;                         // TopologyNormalizingWeight
};

// updateWithPod
void update_with_pod(PreFilterState& s, const Pod& pod, const Node& node, const Pod& changed, int64_t delta) {
  if (namespace_of(changed) != namespace_of(pod)) return;
  const Constraints& constraints = *s.constraints;
  if (!has_all_keys(node, constraints)) return;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    if (!c.matches(changed.labels)) continue;
    if (!node_included(c, pod, node)) continue;
    const std::string value = value_or_empty(node, c.topology_key);
    const int64_t count = s.counts[i][value] += delta;
    s.paths[i].update(value, count);
  }
}

}  // namespace

const std::vector<TopologySpreadConstraint>& PodTopologySpread::system_default_constraints() {
  static const std::vector<TopologySpreadConstraint> kDefaults = [] {
    TopologySpreadConstraint host;
    host.topology_key = std::string(kHostnameLabel);
    host.when_unsatisfiable = UnsatisfiableAction::kScheduleAnyway;
    host.max_skew = 3;
    TopologySpreadConstraint zone;
    zone.topology_key = std::string(kZoneLabel);
    zone.when_unsatisfiable = UnsatisfiableAction::kScheduleAnyway;
    zone.max_skew = 5;
    return std::vector<TopologySpreadConstraint>{host, zone};
  }();
  return kDefaults;
}

PodTopologySpread::PodTopologySpread(const PodTopologySpreadArgs& args) {
  if (FieldErrors errs = validate_pod_topology_spread_args(args, "args"); !errs.empty()) throw ProfileError(std::move(errs));
  system_defaulted_ = args.defaulting_type == PodTopologySpreadArgs::Defaulting::kSystem;
  default_constraints_ = system_defaulted_ ? system_default_constraints() : args.default_constraints;
}

namespace {

// getConstraints / initPreScoreState: the pod's own constraints of `action`, else the default ones
// with the pod's default selector (buildDefaultConstraints; none without a default selector).
Constraints constraints_of(const Pod& pod, const std::vector<TopologySpreadConstraint>& defaults, UnsatisfiableAction action) {
  const PodConstraints& pc = pod.constraints;
  if (!pc.topology_spread_constraints.empty()) return filter_constraints(pc.topology_spread_constraints, pod.labels, action);
  if (selector_empty(pc.default_spread_selector)) return {};
  Constraints out = filter_constraints(defaults, pod.labels, action);
  for (Constraint& c : out) {
    c.selector = pc.default_spread_selector;
    c.nothing = false;
  }
  return out;
}

}  // namespace

// calPreFilterState
Status PodTopologySpread::pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const {
  if (!may_spread(pod)) return Status(Code::kSkip);
  Constraints constraints = constraints_of(pod, default_constraints_, UnsatisfiableAction::kDoNotSchedule);
  if (constraints.empty()) return Status(Code::kSkip);
  auto s = std::make_unique<PreFilterState>();
  s->counts.resize(constraints.size());
  const std::string_view ns = namespace_of(pod);
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    const Node& node = state.node(n);
    if (!has_all_keys(node, constraints)) continue;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Constraint& c = constraints[i];
      if (!node_included(c, pod, node)) continue;
      s->counts[i][value_or_empty(node, c.topology_key)] += count_pods(state, n, c, ns);
    }
  }
  s->paths.resize(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i)
    for (const auto& [value, count] : s->counts[i]) s->paths[i].update(value, count);
  s->constraints = std::make_shared<const Constraints>(std::move(constraints));
  cycle.write(kPreFilterKey, std::move(s));
  return Status();
}

FilterCode PodTopologySpread::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const {
  const auto* s = cycle.read_as<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return filter(pod, state, n);  // PreFilter did not run in this cycle: stand-alone
  const Node& node = state.node(n);
  const Constraints& constraints = *s->constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    const std::string* value = topology_value(node, c.topology_key);
    if (value == nullptr) return kMissingRequiredLabel;
    const int64_t min_match = s->min_match(i, c.min_domains);
    const int64_t self_match = c.matches(pod.labels) ? 1 : 0;
    const auto it = s->counts[i].find(*value);
    const int64_t match = it == s->counts[i].end() ? 0 : it->second;
    if (match + self_match - min_match > c.max_skew) return kConstraintsNotMatch;
  }
  return FilterCode::kFits;
}

void PodTopologySpread::add_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                                CycleState& cycle) const {
  if (auto* s = cycle.read_as<PreFilterState>(kPreFilterKey)) update_with_pod(*s, pod, state.node(n), changed.pod, 1);
}

void PodTopologySpread::remove_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                                   CycleState& cycle) const {
  if (auto* s = cycle.read_as<PreFilterState>(kPreFilterKey)) update_with_pod(*s, pod, state.node(n), changed.pod, -1);
}

// PreScore / initPreScoreState
Status PodTopologySpread::pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible,
                                    CycleState& cycle, GoRand& /*rng*/) const {
  if (!may_spread(pod) || state.live_node_count() == 0) return Status(Code::kSkip);
  Constraints constraints = constraints_of(pod, default_constraints_, UnsatisfiableAction::kScheduleAnyway);
  if (constraints.empty()) return Status(Code::kSkip);
  // Only non-system-default rules require every topology label: a node without a zone label still
  // has hostname spreading under the system defaults.
  const bool require_all = !pod.constraints.topology_spread_constraints.empty() || !system_defaulted_;
  auto s = std::make_unique<PreScoreState>();
  s->ignored.assign(state.node_count(), 0);
  s->counts.resize(constraints.size());
  std::vector<size_t> sizes(constraints.size(), 0);
  size_t ignored = 0;
  for (const NodeId n : feasible) {
    const Node& node = state.node(n);
    if (require_all && !has_all_keys(node, constraints)) {
      s->ignored[n] = 1;
      ++ignored;
      continue;
    }
    for (size_t i = 0; i < constraints.size(); ++i)
      if (!constraints[i].hostname && s->counts[i].emplace(value_or_empty(node, constraints[i].topology_key), 0).second) ++sizes[i];
  }
  s->weights.resize(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    const size_t size = constraints[i].hostname ? feasible.size() - ignored : sizes[i];
    s->weights[i] = std::log(static_cast<double>(size + 2));  // topologyNormalizingWeight
  }
  const std::string_view ns = namespace_of(pod);
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    const Node& node = state.node(n);
    if (require_all && !has_all_keys(node, constraints)) continue;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Constraint& c = constraints[i];
      if (c.hostname || !node_included(c, pod, node)) continue;  // per-node counts are Score's
      const auto it = s->counts[i].find(value_or_empty(node, c.topology_key));
      if (it == s->counts[i].end()) continue;  // no feasible node in this domain
      it->second += count_pods(state, n, c, ns);
    }
  }
  s->constraints = std::move(constraints);
  cycle.write(kPreScoreKey, std::move(s));
  return Status();
}

int64_t PodTopologySpread::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const {
  const auto* s = cycle.read_as<PreScoreState>(kPreScoreKey);
  if (s == nullptr || (n < s->ignored.size() && s->ignored[n] != 0)) return 0;
  const Node& node = state.node(n);
  const std::string_view ns = namespace_of(pod);
  double score = 0;
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    const std::string* value = topology_value(node, c.topology_key);
    if (value == nullptr) continue;
    int64_t count = 0;
    if (c.hostname) {
      count = count_pods(state, n, c, ns);
    } else if (const auto it = s->counts[i].find(*value); it != s->counts[i].end()) {
      count = it->second;
    }
    score += static_cast<double>(count) * s->weights[i] + static_cast<double>(c.max_skew - 1);  // scoreForCount
  }
  return static_cast<int64_t>(std::round(score));  // Go math.Round: half away from zero
}

void PodTopologySpread::normalize_score(const Pod& /*pod*/, std::span<NodeScore> scores, const CycleState& cycle) const {
  const auto* s = cycle.read_as<PreScoreState>(kPreScoreKey);
  if (s == nullptr) return;
  constexpr int64_t kInvalidScore = -1;
  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (NodeScore& ns : scores) {
    if (ns.node < s->ignored.size() && s->ignored[ns.node] != 0) {
      ns.score = kInvalidScore;
      continue;
    }
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  for (NodeScore& ns : scores) {
    if (ns.score == kInvalidScore) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = kMaxNodeScore;
    } else {
      ns.score = kMaxNodeScore * (max_score + min_score - ns.score) / max_score;
    }
  }
}

}  // namespace gpufleet::sched
