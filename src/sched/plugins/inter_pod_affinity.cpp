#include "sched/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "sched/framework/validation.h"

namespace gpufleet::sched {
namespace {

using TopologyCounts = InterPodAffinity::TopologyCounts;
using PairView = InterPodAffinity::PairLess::PairView;

struct AntiAffinityState final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<AntiAffinityState>(*this); }
  TopologyCounts affinity;  // pods matching all the incoming pod's affinity terms (affinityCounts)
  TopologyCounts anti;      // pods matching the incoming pod's anti-affinity terms (antiAffinityCounts)
  TopologyCounts existing;  // bound pods' terms matching the incoming pod (existingAntiAffinityCounts)
  std::vector<std::string> existing_keys;  // the distinct topology keys of `existing`
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

// podMatchesAllAffinityTerms: `target` matches every term of `owner` (false for no terms).
bool matches_all_affinity_terms(const Pod& owner, const Pod& target) {
  const auto& terms = owner.constraints.required_affinity;
  return !terms.empty() && std::all_of(terms.begin(), terms.end(),
                                       [&](const PodAffinityTerm& t) { return pod_affinity_term_matches(t, owner, target); });
}

// topologyToMatchedTermCount.updateWithAffinityTerms: a pod matching all the terms counts once per term.
void update_affinity(TopologyCounts& counts, const Pod& pod, const Node& node, const Pod& other, int64_t delta) {
  if (!matches_all_affinity_terms(pod, other)) return;
  for (const PodAffinityTerm& t : pod.constraints.required_affinity) update(counts, node, t.topology_key, delta);
}

// preFilterState.updateWithPod: `changed` (on node n) joins (+1) or leaves (-1) the counts.
void update_with_pod(AntiAffinityState& s, const Pod& pod, const Node& node, const Pod& changed, int64_t delta) {
  update_affinity(s.affinity, pod, node, changed, delta);
  for (const PodAffinityTerm& t : changed.constraints.required_anti_affinity) {
    if (!pod_affinity_term_matches(t, changed, pod)) continue;
    update(s.existing, node, t.topology_key, delta);
    if (std::find(s.existing_keys.begin(), s.existing_keys.end(), t.topology_key) == s.existing_keys.end())
      s.existing_keys.push_back(t.topology_key);
  }
  for (const PodAffinityTerm& t : pod.constraints.required_anti_affinity)
    if (pod_affinity_term_matches(t, pod, changed)) update(s.anti, node, t.topology_key, delta);
}

// InterPodAffinity::IncomingMemo::Share: a node's pairs and what it adds to each.
using Share = std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>;

// Whether two lists of pod affinity terms are equal, field by field.
bool same_term(const PodAffinityTerm& x, const PodAffinityTerm& y) {
  const auto same_requirement = [](const SelectorRequirement& a, const SelectorRequirement& b) {
    return a.key == b.key && a.operator_ == b.operator_ && a.values == b.values;
  };
  return x.has_label_selector == y.has_label_selector && x.topology_key == y.topology_key && x.namespaces == y.namespaces &&
         x.label_selector.match_labels == y.label_selector.match_labels &&
         std::equal(x.label_selector.match_expressions.begin(), x.label_selector.match_expressions.end(),
                    y.label_selector.match_expressions.begin(), y.label_selector.match_expressions.end(), same_requirement);
}
bool same_terms(const std::vector<PodAffinityTerm>& a, const std::vector<PodAffinityTerm>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_term);
}

// Adds `delta` to pair (key, value) of a node's share.
void add_to_share(Share& share, const std::string& key, const std::string& value, int64_t delta) {
  for (auto& [pair, count] : share)
    if (pair.first == key && pair.second == value) {
      count += delta;
      return;
    }
  share.emplace_back(std::make_pair(key, value), delta);
}

// Adds sign x a node's share to the counts (update(), pair by pair).
void apply_share(TopologyCounts& counts, const Share& share, int64_t sign) {
  for (const auto& [pair, count] : share) {
    auto it = counts.find(PairView{pair.first, pair.second});
    if (it == counts.end()) it = counts.emplace(pair, 0).first;
    it->second += sign * count;
    if (it->second == 0) counts.erase(it);
  }
}

}  // namespace

const std::string* topology_value(const Node& node, std::string_view key) {
  if (const std::string* v = find_label(node.labels, key)) return v;
  return key == kHostnameLabel ? &node.name : nullptr;
}

// AffinityTerm.Matches (pkg/scheduler/framework/types.go) without namespaceSelector; the namespaces
// default as in GetNamespacesFromPodAffinityTerm.
bool pod_affinity_term_matches(const PodAffinityTerm& term, const Pod& owner, const Pod& target) {
  if (!term.has_label_selector) return false;
  const std::string_view ns = namespace_of(target);
  if (term.namespaces.empty()) {
    if (ns != namespace_of(owner)) return false;
  } else if (std::find(term.namespaces.begin(), term.namespaces.end(), ns) == term.namespaces.end()) {
    return false;
  }
  return label_selector_matches(term.label_selector, target.labels);
}

std::unique_ptr<StateData> InterPodAffinity::pre_filter(const Pod& pod, const ClusterState& state) const {
  const auto& terms = pod.constraints.required_anti_affinity;
  const bool has_affinity = !pod.constraints.required_affinity.empty();
  if (terms.empty() && !has_affinity && state.anti_affinity_pod_count() == 0) return nullptr;
  auto s = std::make_unique<AntiAffinityState>();
  if (state.anti_affinity_pod_count() > 0) {
    s->existing = existing_counts(pod, state);
    for (const auto& entry : s->existing)
      if (s->existing_keys.empty() || s->existing_keys.back() != entry.first.first) s->existing_keys.push_back(entry.first.first);
  }
  // getIncomingAffinityAntiAffinityCounts: every bound pod against the incoming pod's terms
  // (memoized: incoming_counts).
  if (!terms.empty() || has_affinity) incoming_counts(pod, state, s->affinity, s->anti);
  // kube: Skip when no existing term matches and the pod has no (anti-)affinity terms.
  if (s->existing.empty() && terms.empty() && !has_affinity) return nullptr;
  return s;
}

// getExistingAntiAffinityCounts: only nodes holding pods with required anti-affinity (memoized, see
// the header).
TopologyCounts InterPodAffinity::existing_counts(const Pod& pod, const ClusterState& state) const {
  std::lock_guard<std::mutex> lock(memo_mutex_);
  if (memo_.version == state.anti_affinity_version() && memo_.namespace_name == pod.namespace_name &&
      memo_.labels == pod.labels)
    return memo_.existing;
  const uint64_t version = state.anti_affinity_version();
  // Another pod's labels at the same version: when none of the bound pods' distinct terms matches
  // the pod, there is nothing to count (no pass over their nodes).
  bool matched = true;
  if (memo_.version == version) {
    if (terms_memo_.version != std::optional<uint64_t>(version)) {
      terms_memo_.version = version;
      terms_memo_.terms.clear();
      for (const NodeId n : state.anti_affinity_nodes())
        for (const BoundPod& b : state.pods_on(n))
          for (const PodAffinityTerm& t : b.pod.constraints.required_anti_affinity) {
            const std::string_view ns = namespace_of(b.pod);
            const bool seen = std::any_of(terms_memo_.terms.begin(), terms_memo_.terms.end(), [&](const auto& e) {
              return namespace_of(e.first) == ns && same_term(e.second, t);
            });
            if (seen) continue;
            Pod owner;
            owner.namespace_name = b.pod.namespace_name;
            terms_memo_.terms.emplace_back(std::move(owner), t);
          }
    }
    matched = std::any_of(terms_memo_.terms.begin(), terms_memo_.terms.end(),
                          [&](const auto& e) { return pod_affinity_term_matches(e.second, e.first, pod); });
  }
  TopologyCounts existing;
  if (matched)
    for (const NodeId n : state.anti_affinity_nodes()) {
      const Node& node = state.node(n);
      for (const BoundPod& b : state.pods_on(n))
        for (const PodAffinityTerm& t : b.pod.constraints.required_anti_affinity)
          if (pod_affinity_term_matches(t, b.pod, pod)) update(existing, node, t.topology_key, 1);
    }
  memo_ = ExistingMemo{version, pod.namespace_name, pod.labels, existing};
  return existing;
}

void InterPodAffinity::incoming_counts(const Pod& pod, const ClusterState& state, TopologyCounts& affinity,
                                       TopologyCounts& anti) const {
  const auto& affinity_terms = pod.constraints.required_affinity;
  const auto& anti_terms = pod.constraints.required_anti_affinity;
  const std::string_view ns = namespace_of(pod);
  std::lock_guard<std::mutex> lock(memo_mutex_);
  IncomingMemo* memo = nullptr;
  for (const auto& m : incoming_)
    if (m->namespace_name == ns && same_terms(m->affinity_terms, affinity_terms) && same_terms(m->anti_terms, anti_terms)) memo = m.get();
  if (memo == nullptr) {
    if (incoming_.size() < kIncomingMemos) {
      memo = incoming_.emplace_back(std::make_unique<IncomingMemo>()).get();
    } else {  // the least recently used makes room
      memo = std::min_element(incoming_.begin(), incoming_.end(), [](const auto& a, const auto& b) {
               return a->last_used < b->last_used;
             })->get();
      *memo = IncomingMemo();
    }
    memo->namespace_name = std::string(ns);
    memo->affinity_terms = affinity_terms;
    memo->anti_terms = anti_terms;
  }
  memo->last_used = ++incoming_clock_;
  // Node n's share: what its pods add to each count (the pass below, for one node).
  const auto count_node = [&](NodeId n) {
    if (n >= state.node_count()) return;  // a slot a discarded dry run took back
    const Node& node = state.node(n);
    std::pair<Share, Share> share;
    for (const BoundPod& b : state.pods_on(n)) {
      if (matches_all_affinity_terms(pod, b.pod))
        for (const PodAffinityTerm& t : affinity_terms)
          if (const std::string* value = topology_value(node, t.topology_key)) add_to_share(share.first, t.topology_key, *value, 1);
      for (const PodAffinityTerm& t : anti_terms)
        if (pod_affinity_term_matches(t, pod, b.pod))
          if (const std::string* value = topology_value(node, t.topology_key)) add_to_share(share.second, t.topology_key, *value, 1);
    }
    if (share.first.empty() && share.second.empty()) return;
    apply_share(memo->affinity, share.first, 1);
    apply_share(memo->anti, share.second, 1);
    memo->shares.emplace(n, std::move(share));
  };
  bool synced = false;
  if (memo->state_identity == state.identity()) {
    const auto changes = state.changes_since(memo->synced_at);
    if (changes && changes->size() <= state.node_count()) {
      for (const NodeId n : *changes) {
        if (n == ClusterState::kSlotCountChange) continue;
        if (const auto it = memo->shares.find(n); it != memo->shares.end()) {
          apply_share(memo->affinity, it->second.first, -1);
          apply_share(memo->anti, it->second.second, -1);
          memo->shares.erase(it);
        }
        count_node(n);
      }
      synced = true;
    }
  }
  if (!synced) {  // every node afresh
    memo->affinity.clear();
    memo->anti.clear();
    memo->shares.clear();
    for (NodeId n = 0; n < state.node_count(); ++n) count_node(n);
    memo->state_identity = state.identity();
  }
  memo->synced_at = state.change_count();
  affinity = memo->affinity;
  anti = memo->anti;
}

Status InterPodAffinity::pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const {
  std::unique_ptr<StateData> data = pre_filter(pod, state);
  if (!data) return Status(Code::kSkip);
  cycle.write(kName, std::move(data));
  return Status();
}

FilterCode InterPodAffinity::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const {
  const auto* data = cycle.read_as<AntiAffinityState>(kName);
  if (!data) return filter(pod, state, n);  // PreFilter did not run in this cycle: stand-alone
  const AntiAffinityState& s = *data;
  const Node& node = state.node(n);
  // satisfyPodAffinity: the node has every term's topology label, and each of its domains holds a
  // pod matching all the terms; or, when no pod anywhere matches them (the counts are empty) and the
  // pod matches its own terms, it may start the group (the first replica with self-affinity).
  const auto& affinity_terms = pod.constraints.required_affinity;
  if (!affinity_terms.empty()) {
    bool pods_exist = true;
    for (const PodAffinityTerm& t : affinity_terms) {
      const std::string* value = topology_value(node, t.topology_key);
      if (!value) return kAffinityRulesNotMatch;  // all topology labels must exist on the node
      if (!positive(s.affinity, t.topology_key, *value)) pods_exist = false;
    }
    if (!pods_exist && !(s.affinity.empty() && matches_all_affinity_terms(pod, pod))) return kAffinityRulesNotMatch;
  }
  // satisfyPodAntiAffinity
  if (!s.anti.empty()) {
    for (const PodAffinityTerm& t : pod.constraints.required_anti_affinity) {
      const std::string* value = topology_value(node, t.topology_key);
      if (value && positive(s.anti, t.topology_key, *value)) return kAntiAffinityRulesNotMatch;
    }
  }
  // satisfyExistingPodsAntiAffinity: kube checks every topology pair of the node; only pairs whose
  // key has a count can match, so look up the node's value of each such key.
  for (const std::string& key : s.existing_keys) {
    const std::string* value = topology_value(node, key);
    if (value && positive(s.existing, key, *value)) return kExistingAntiAffinityRulesNotMatch;
  }
  return FilterCode::kFits;
}

void InterPodAffinity::add_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                               CycleState& cycle) const {
  if (auto* data = cycle.read_as<AntiAffinityState>(kName)) update_with_pod(*data, pod, state.node(n), changed.pod, 1);
}

void InterPodAffinity::remove_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                                  CycleState& cycle) const {
  if (auto* data = cycle.read_as<AntiAffinityState>(kName)) update_with_pod(*data, pod, state.node(n), changed.pod, -1);
}

namespace {

// PreScore's sums (kube preScoreState.topologyScore), kept with zero entries as kube's map.
constexpr std::string_view kPreScoreKey = "PreScoreInterPodAffinity";
struct ScoreState final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<ScoreState>(*this); }
  TopologyCounts sums;
  std::vector<std::string> keys;  // the distinct keys of `sums`
};

void add_score(ScoreState& s, const Node& node, const std::string& key, int64_t delta) {
  const std::string* value = topology_value(node, key);
  if (!value) return;
  auto it = s.sums.find(PairView{key, *value});
  if (it == s.sums.end()) {
    it = s.sums.emplace(std::make_pair(key, *value), 0).first;
    if (std::find(s.keys.begin(), s.keys.end(), key) == s.keys.end()) s.keys.push_back(key);
  }
  it->second += delta;
}

// scoreMap.processTerms: `owner`'s weighted terms that `target` matches, on `node`'s domains.
void process_terms(ScoreState& s, const std::vector<WeightedPodAffinityTerm>& terms, const Pod& owner, const Pod& target,
                   const Node& node, int64_t sign) {
  for (const WeightedPodAffinityTerm& t : terms)
    if (pod_affinity_term_matches(t.term, owner, target)) add_score(s, node, t.term.topology_key, sign * t.weight);
}

}  // namespace

InterPodAffinity::InterPodAffinity(const InterPodAffinityArgs& args) : args_(args) {
  if (FieldErrors errs = validate_plugin_args(args, "args"); !errs.empty()) throw ProfileError(std::move(errs));
}

Status InterPodAffinity::pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId>, CycleState& cycle,
                                   GoRand&) const {
  const PodConstraints& c = pod.constraints;
  const bool preferred = !c.preferred_affinity.empty() || !c.preferred_anti_affinity.empty();
  if (!preferred && state.scored_affinity_pod_count() == 0) return Status(Code::kSkip);
  auto s = std::make_unique<ScoreState>();
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    const Node& node = state.node(n);
    for (const BoundPod& b : state.pods_on(n)) {
      const Pod& existing = b.pod;
      if (!preferred && !existing.has_scored_affinity()) continue;  // kube visits PodsWithAffinity only
      process_terms(*s, c.preferred_affinity, pod, existing, node, 1);       // processExistingPod, in kube's order
      process_terms(*s, c.preferred_anti_affinity, pod, existing, node, -1);
      if (args_.hard_pod_affinity_weight > 0)
        for (const PodAffinityTerm& t : existing.constraints.required_affinity)
          if (pod_affinity_term_matches(t, existing, pod)) add_score(*s, node, t.topology_key, args_.hard_pod_affinity_weight);
      process_terms(*s, existing.constraints.preferred_affinity, existing, pod, node, 1);
      process_terms(*s, existing.constraints.preferred_anti_affinity, existing, pod, node, -1);
    }
  }
  if (s->sums.empty()) return Status(Code::kSkip);  // every node scores 0 (kube: normalize leaves them)
  cycle.write(kPreScoreKey, std::move(s));
  return Status();
}

int64_t InterPodAffinity::score(const Pod&, const ClusterState& state, NodeId n, const CycleState& cycle) const {
  const auto* s = cycle.read_as<ScoreState>(kPreScoreKey);
  if (!s) return 0;
  const Node& node = state.node(n);
  int64_t total = 0;
  for (const std::string& key : s->keys) {
    const std::string* value = topology_value(node, key);
    if (!value) continue;
    if (const auto it = s->sums.find(PairView{key, *value}); it != s->sums.end()) total += it->second;
  }
  return total;
}

void InterPodAffinity::normalize_score(const Pod&, std::span<NodeScore> scores, const CycleState& cycle) const {
  const auto* s = cycle.read_as<ScoreState>(kPreScoreKey);
  if (!s || s->sums.empty() || scores.empty()) return;
  int64_t lo = 0, hi = 0;  // v1.20: both start at 0
  if (args_.release == KubeRelease::kCurrent) lo = hi = scores[0].score;
  for (const NodeScore& ns : scores) {
    lo = std::min(lo, ns.score);
    hi = std::max(hi, ns.score);
  }
  const int64_t diff = hi - lo;
  for (NodeScore& ns : scores) {
    double f = 0;
    if (diff > 0) f = static_cast<double>(kMaxNodeScore) * (static_cast<double>(ns.score - lo) / static_cast<double>(diff));
    ns.score = static_cast<int64_t>(f);
  }
}

}  // namespace gpufleet::sched
