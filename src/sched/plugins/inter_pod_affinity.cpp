#include "sched/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

namespace gpufleet::sched {
namespace {

using PairView = std::pair<std::string_view, std::string_view>;

// Heterogeneous ordering, so a lookup by (key, value) views allocates nothing.
struct PairLess {
  using is_transparent = void;
  static PairView view(const std::pair<std::string, std::string>& p) { return {p.first, p.second}; }
  static PairView view(const PairView& p) { return p; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return view(a) < view(b);
  }
};

// topologyToMatchedTermCount: topology pair -> count, entries at zero removed.
using TopologyCounts = std::map<std::pair<std::string, std::string>, int64_t, PairLess>;

struct AntiAffinityState final : FilterCycleData {
  TopologyCounts anti;      // pods matching the incoming pod's terms (antiAffinityCounts)
  TopologyCounts existing;  // bound pods' terms matching the incoming pod (existingAntiAffinityCounts)
};

std::string_view namespace_of(const Pod& pod) {
  return pod.namespace_name.empty() ? std::string_view("default") : std::string_view(pod.namespace_name);
}

// topologyToMatchedTermCount.update: only when the node has the topology label.
void update(TopologyCounts& counts, const Node& node, const std::string& key, int64_t delta) {
  const std::string* value = topology_value(node, key);
  if (!value) return;
  auto it = counts.find(PairView{key, *value});
  if (it == counts.end()) it = counts.emplace(std::make_pair(key, *value), 0).first;
  it->second += delta;
  if (it->second == 0) counts.erase(it);
}

bool positive(const TopologyCounts& counts, std::string_view key, std::string_view value) {
  const auto it = counts.find(PairView{key, value});
  return it != counts.end() && it->second > 0;
}

// preFilterState.updateWithPod: `changed` (on node n) joins (+1) or leaves (-1) the counts.
void update_with_pod(AntiAffinityState& s, const Pod& pod, const Node& node, const Pod& changed, int64_t delta) {
  for (const PodAffinityTerm& t : changed.constraints.required_anti_affinity)
    if (anti_affinity_term_matches(t, changed, pod)) update(s.existing, node, t.topology_key, delta);
  for (const PodAffinityTerm& t : pod.constraints.required_anti_affinity)
    if (anti_affinity_term_matches(t, pod, changed)) update(s.anti, node, t.topology_key, delta);
}

}  // namespace

const std::string* topology_value(const Node& node, std::string_view key) {
  if (const std::string* v = find_label(node.labels, key)) return v;
  return key == kHostnameLabel ? &node.name : nullptr;
}

// AffinityTerm.Matches (pkg/scheduler/framework/types.go) without namespaceSelector; the namespaces
// default as in GetNamespacesFromPodAffinityTerm.
bool anti_affinity_term_matches(const PodAffinityTerm& term, const Pod& owner, const Pod& target) {
  if (!term.has_label_selector) return false;
  const std::string_view ns = namespace_of(target);
  if (term.namespaces.empty()) {
    if (ns != namespace_of(owner)) return false;
  } else if (std::find(term.namespaces.begin(), term.namespaces.end(), ns) == term.namespaces.end()) {
    return false;
  }
  return label_selector_matches(term.label_selector, target.labels);
}

std::unique_ptr<FilterCycleData> InterPodAffinity::pre_filter(const Pod& pod, const ClusterState& state) const {
  const auto& terms = pod.constraints.required_anti_affinity;
  if (terms.empty() && state.anti_affinity_pod_count() == 0) return nullptr;
  auto s = std::make_unique<AntiAffinityState>();
  const NodeId node_count = static_cast<NodeId>(state.node_count());
  // getExistingAntiAffinityCounts: only nodes holding pods with required anti-affinity.
  if (state.anti_affinity_pod_count() > 0) {
    for (NodeId n = 0; n < node_count; ++n) {
      if (state.anti_affinity_pod_count(n) == 0) continue;
      const Node& node = state.node(n);
      for (const BoundPod& b : state.pods_on(n))
        for (const PodAffinityTerm& t : b.pod.constraints.required_anti_affinity)
          if (anti_affinity_term_matches(t, b.pod, pod)) update(s->existing, node, t.topology_key, 1);
    }
  }
  // getIncomingAffinityAntiAffinityCounts: every bound pod against the incoming pod's terms.
  if (!terms.empty()) {
    for (NodeId n = 0; n < node_count; ++n) {
      const Node& node = state.node(n);
      for (const BoundPod& b : state.pods_on(n))
        for (const PodAffinityTerm& t : terms)
          if (anti_affinity_term_matches(t, pod, b.pod)) update(s->anti, node, t.topology_key, 1);
    }
  }
  // kube: Skip when no existing term matches and the pod has no (anti-)affinity terms.
  if (s->existing.empty() && terms.empty()) return nullptr;
  return s;
}

FilterCode InterPodAffinity::filter_in_cycle(const Pod& pod, const ClusterState& state, NodeId n,
                                             const FilterCycleData& data) const {
  const auto& s = static_cast<const AntiAffinityState&>(data);
  const Node& node = state.node(n);
  // satisfyPodAntiAffinity
  if (!s.anti.empty()) {
    for (const PodAffinityTerm& t : pod.constraints.required_anti_affinity) {
      const std::string* value = topology_value(node, t.topology_key);
      if (value && positive(s.anti, t.topology_key, *value)) return FilterCode::kAntiAffinityRulesNotMatch;
    }
  }
  // satisfyExistingPodsAntiAffinity: every topology pair of the node.
  if (!s.existing.empty()) {
    for (const auto& [key, value] : node.labels)
      if (positive(s.existing, key, value)) return FilterCode::kExistingAntiAffinityRulesNotMatch;
    if (!find_label(node.labels, kHostnameLabel) && positive(s.existing, kHostnameLabel, node.name))
      return FilterCode::kExistingAntiAffinityRulesNotMatch;
  }
  return FilterCode::kFits;
}

FilterCode InterPodAffinity::filter(const Pod& pod, const ClusterState& state, NodeId n) const {
  const auto data = pre_filter(pod, state);
  return data ? filter_in_cycle(pod, state, n, *data) : FilterCode::kFits;
}

void InterPodAffinity::add_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                               FilterCycleData& data) const {
  update_with_pod(static_cast<AntiAffinityState&>(data), pod, state.node(n), changed.pod, 1);
}

void InterPodAffinity::remove_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                                  FilterCycleData& data) const {
  update_with_pod(static_cast<AntiAffinityState&>(data), pod, state.node(n), changed.pod, -1);
}

}  // namespace gpufleet::sched
