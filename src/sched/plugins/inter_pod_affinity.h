// InterPodAffinity filter, required pod affinity and anti-affinity (kube-scheduler
// pkg/scheduler/framework/plugins/interpodaffinity/filtering.go).
//
// A topology pair is (label key, value) of a node, e.g. (topology.kubernetes.io/zone, eu-1a).
// PreFilter, once per cycle, counts per topology pair:
//  - affinity: for every bound pod P on node m that matches ALL the incoming pod's required affinity
//    terms, +1 per term T on (T.topology_key, m's value of it), when m has that label
//    (updateWithAffinityTerms);
//  - anti: for every bound pod P on node m and every required anti-affinity term T of the incoming
//    pod that P matches, +1 on (T.topology_key, m's value of it), when m has that label
//    (getIncomingAffinityAntiAffinityCounts);
//  - existing: for every bound pod P with required anti-affinity terms on node m and every term T of
//    P that the incoming pod matches, +1 on (T.topology_key, m's value of it), when m has that label
//    (getExistingAntiAffinityCounts; only nodes with such pods are visited).
// Filter(n), a lookup per term and per node label, in kube's order:
//  0. satisfyPodAffinity: node n must have the topology label of every affinity term, and for each
//     term affinity(T.topology_key, n's value) > 0; except that when no pod in the cluster matches
//     the terms (affinity empty) and the incoming pod matches all its own terms, it passes (the first
//     pod of a group with self-affinity). Otherwise kAffinityRulesNotMatch, "node(s) didn't match pod
//     affinity rules", UnschedulableAndUnresolvable (preemption does not help);
//  1. an incoming term T, node n labelled T.topology_key = v and anti(T.topology_key, v) > 0:
//     kAntiAffinityRulesNotMatch, "node(s) didn't match pod anti-affinity rules" (satisfyPodAntiAffinity);
//  2. a label (k, v) of node n with existing(k, v) > 0: kExistingAntiAffinityRulesNotMatch,
//     "node(s) didn't satisfy existing pods anti-affinity rules" (satisfyExistingPodsAntiAffinity).
// kube returns Unschedulable (not UnschedulableAndUnresolvable) for both: preemption may resolve them.
//
// Matching (AffinityTerm.Matches, framework/types.go): the target pod's namespace is one of the
// term's namespaces (empty = the namespace of the pod owning the term) and the term's label selector
// matches the target's labels (a term without labelSelector matches no pod; `{}` matches all). An
// empty pod namespace (openb pods) counts as "default".
// A node without the term's topology label is never blocked by that term, and a pod on such a node
// never blocks anyone through it (kube: `if topologyValue, ok := node.Labels[key]; ok`). The incoming
// pod is not bound yet, so it never counts against itself: the first replica of a Deployment with
// "one per host" self anti-affinity lands anywhere, the next ones avoid the hosts already used.
//
// Cost. pre_filter returns nullptr (kube's Skip: every node passes) at once when the pod has no
// required anti-affinity term and no bound pod has one (ClusterState::anti_affinity_pod_count() == 0,
// e.g. the whole openb trace). Otherwise it is O(nodes + bound pods) for a pod with terms (as kube),
// O(nodes + pods with terms) for one without; Filter is then O(terms + node labels) map lookups.
// The incoming pod's counts (affinity, anti) are memoized (IncomingMemo below): a pod whose
// namespace and required terms were seen recently costs O(nodes changed since, x their pods),
// not O(nodes + bound pods).
// add_pod/remove_pod (kube's updateWithPod, +1 / -1) keep the counts right in preemption's dry run.
//
// Score (scoring.go; only in profiles that list it at Score, policy_registry.h: default-scheduler).
// PreScore sums, per topology pair (key, value), over every bound pod P on node m with m's value:
//  + w for each preferred affinity term (weight w) of the incoming pod that P matches,
//  - w for each preferred anti-affinity term of the incoming pod that P matches,
//  + hardPodAffinityWeight for each required affinity term of P the incoming pod matches,
//  + w / - w for each preferred affinity / anti-affinity term of P the incoming pod matches.
// Only pods with such terms are visited unless the incoming pod has preferred terms (kube's
// PodsWithAffinity); Skip when there is nothing to visit. Score(n) = the sum over the pairs' keys of
// the pair (key, n's value). NormalizeScore: 100 * (s - min) / (max - min), truncated, 0 for all when
// max == min; the current release takes min and max over the scores, v1.20 starts both at 0 (so a
// node scoring 0 is the floor whenever every score is positive). The scores read the whole cluster
// (ScoreCaching::kPerCycle).
//
// Differences from kube-scheduler:
//  - namespaceSelector is not modelled (the reader warns): such a term uses only its namespaces list.
//  - kubernetes.io/hostname: a node without that label counts as labelled with its name. kubelet always
//    sets it (to the hostname, normally the node name); pool nodes carry it (model/node_pool.h), the
//    openb trace's and hand-written Nodes may not, and "one per host" terms would otherwise never
//    block there. Every other key follows kube exactly.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/cluster_state.h"
#include "model/node.h"
#include "model/pod.h"
#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

/// Node `node`'s value for topology key `key`: its label, or its name for kubernetes.io/hostname when
/// it lacks that label (see above); nullptr when the node is outside every domain of that key.
const std::string* topology_value(const Node& node, std::string_view key);

/// Whether pod `target` matches pod (anti-)affinity term `term` of pod `owner`: namespace (term's
/// namespaces, or owner's namespace when empty) and label selector (nil matches nothing).
bool pod_affinity_term_matches(const PodAffinityTerm& term, const Pod& owner, const Pod& target);

class InterPodAffinity final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public NamedPlugin<"InterPodAffinity"> {
 public:
  /// Throws ProfileError for arguments validate_plugin_args refuses.
  explicit InterPodAffinity(const InterPodAffinityArgs& args = {});
  /// Node n's answer depends on the pods of every node sharing a topology domain with it.
  bool filter_cacheable() const override { return false; }
  /// PreFilter: the topology-pair counts above, written to `cycle`; Skip when there is nothing to check.
  Status pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const override;
  /// The counts themselves, or nullptr (kube's Skip) when there is nothing to check.
  std::unique_ptr<StateData> pre_filter(const Pod& pod, const ClusterState& state) const;
  /// filtering.go's ErrReasonAntiAffinityRulesNotMatch, ErrReasonExistingAntiAffinityRulesNotMatch
  /// (Unschedulable) and ErrReasonAffinityRulesNotMatch (UnschedulableAndUnresolvable).
  static constexpr FilterReason kReasons[] = {
      {"node(s) didn't match pod anti-affinity rules", true},
      {"node(s) didn't satisfy existing pods anti-affinity rules", true},
      {"node(s) didn't match pod affinity rules", false},
  };
  static constexpr FilterCode kAntiAffinityRulesNotMatch{kReasons[0]};
  static constexpr FilterCode kExistingAntiAffinityRulesNotMatch{kReasons[1]};
  static constexpr FilterCode kAffinityRulesNotMatch{kReasons[2]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// kFits, kAffinityRulesNotMatch, kAntiAffinityRulesNotMatch or kExistingAntiAffinityRulesNotMatch,
  /// from the counts PreFilter wrote to `cycle` (without them, the stand-alone check: PreFilter then
  /// Filter, O(bound pods)).
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  void add_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed, CycleState& cycle) const override;
  void remove_pod(const Pod& pod, const ClusterState& state, NodeId n, const BoundPod& changed,
                  CycleState& cycle) const override;

  /// PreScore: the sums above into `cycle`; Skip when no pod has terms to score.
  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  ScoreCaching caching() const override { return ScoreCaching::kPerCycle; }
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  bool has_normalize_score() const override { return true; }
  void normalize_score(const Pod& pod, std::span<NodeScore> scores, const CycleState& cycle) const override;

  /// Orders topology pairs; heterogeneous, so a lookup by (key, value) views allocates nothing.
  struct PairLess {
    using is_transparent = void;
    using PairView = std::pair<std::string_view, std::string_view>;
    static PairView view(const std::pair<std::string, std::string>& p) { return {p.first, p.second}; }
    static PairView view(const PairView& p) { return p; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
  };
  /// Topology pair (key, value) -> count, entries at zero removed (kube's topologyToMatchedTermCount).
  using TopologyCounts = std::map<std::pair<std::string, std::string>, int64_t, PairLess>;

 private:
  /// The existing-pods pass (getExistingAntiAffinityCounts) depends only on the incoming pod's
  /// namespace and labels and on where the pods with required anti-affinity terms are. The last
  /// result is kept and reused while the state's anti_affinity_version() and the pod's namespace and
  /// labels are the same, e.g. for the replicas of one controller scheduled in a row. A memo, not
  /// state: it never changes an answer. Guarded by a mutex in case a policy is shared by threads.
  struct ExistingMemo {
    uint64_t version = 0;  ///< ClusterState::anti_affinity_version(), unique across states
    std::string namespace_name;
    Labels labels;
    TopologyCounts existing;
  };
  TopologyCounts existing_counts(const Pod& pod, const ClusterState& state) const;
  /// The distinct required anti-affinity terms of the bound pods, each with a pod of its owner's
  /// namespace (all a term's match reads of its owner), at an anti_affinity_version(). Built when
  /// the existing memo misses on another pod's labels at the same version (the replicas of the
  /// next Deployment): a pod none of them matches gets empty counts without the pass.
  struct ExistingTerms {
    std::optional<uint64_t> version;  ///< none: not built
    std::vector<std::pair<Pod, PodAffinityTerm>> terms;
  };
  /// The incoming-pod pass (getIncomingAffinityAntiAffinityCounts: `affinity` and `anti` above)
  /// depends only on the pod's namespace (namespace_of) and required affinity and anti-affinity
  /// terms, and on the bound pods. For each such key among the last kIncomingMemos used, the counts
  /// are kept with each node's share of them (the pairs its pods add; nodes adding nothing are not
  /// stored) and the state they follow (ClusterState::identity, change_count). The next pod with that
  /// key takes the shares of the nodes in ClusterState::changes_since out and counts those nodes
  /// again (a slot changes with every bind, release, node add, remove or cordon); another state,
  /// a log that no longer reaches back or more changes than slots count every node afresh. The
  /// counts are then exactly a fresh pass's (entries at zero removed), so no answer changes
  /// (InterPodAffinityMemo tests). Under memo_mutex_.
  struct IncomingMemo {
    using Share = std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>;  // pair -> count
    std::string namespace_name;  ///< namespace_of(pod)
    std::vector<PodAffinityTerm> affinity_terms, anti_terms;
    uint64_t state_identity = 0;  ///< ClusterState::identity() followed (0: none yet)
    uint64_t synced_at = 0;       ///< ClusterState::change_count() the counts reflect
    uint64_t last_used = 0;
    TopologyCounts affinity, anti;
    std::unordered_map<NodeId, std::pair<Share, Share>> shares;  ///< per node: its affinity and anti pairs
  };
  static constexpr size_t kIncomingMemos = 16;
  void incoming_counts(const Pod& pod, const ClusterState& state, TopologyCounts& affinity, TopologyCounts& anti) const;
  InterPodAffinityArgs args_;
  mutable std::mutex memo_mutex_;
  mutable ExistingMemo memo_;
  mutable ExistingTerms terms_memo_;
  mutable std::vector<std::unique_ptr<IncomingMemo>> incoming_;  // at most kIncomingMemos
  mutable uint64_t incoming_clock_ = 0;                           // for the least recently used
};

}  // namespace gpufleet::sched
