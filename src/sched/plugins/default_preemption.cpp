#include "sched/plugins/default_preemption.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/framework/filter_cycle.h"

namespace gpufleet::sched {
namespace {

constexpr const char* kNotHelpful = "Preemption is not helpful for scheduling";
constexpr const char* kNoVictims = "No preemption victims found for incoming pod";

// Recent kube noderesources Fit: a request above the node's allocatable is UnschedulableAndUnresolvable
// (InsufficientResource.Unresolvable); for GPUs, more GPUs than the node has.
bool exceeds_allocatable(const Pod& pod, const Node& node) {
  return pod.cpu_milli > node.cpu_milli || pod.memory_bytes > node.memory_bytes ||
         (pod.is_gpu_pod() && pod.num_gpu > node.gpu_count);
}

// A PDB that can protect a victim (filterPodsWithPDBViolation): same namespace and a non-empty
// selector matching it; nil and empty selectors protect nothing.
bool pdb_protects(const PodDisruptionBudget& pdb, const Pod& pod) {
  if (pod.labels.empty()) return false;
  if (pdb.selector.match_labels.empty() && pdb.selector.match_expressions.empty()) return false;
  return pdb_selects(pdb, pod);
}

// Pods released from node n during a dry run, in a ClusterState fork discarded when the run ends
// (also on an exception), and the FilterCycle kept in step (PreFilterExtensions RemovePod / AddPod).
class DryRun {
 public:
  DryRun(ClusterState& state, FilterCycle& cycle, NodeId n)
      : state_(state), cycle_(cycle), n_(n), fork_(state.fork()) {}
  DryRun(const DryRun&) = delete;
  DryRun& operator=(const DryRun&) = delete;
  ~DryRun() {
    fork_.discard();
    for (const BoundPod& b : released_) cycle_.add_pod(state_, n_, b);
  }
  void release(const BoundPod& b) {
    state_.release(n_, b.pod);
    released_.push_back(b);
    cycle_.remove_pod(state_, n_, b);
  }
  void rebind(const BoundPod& b) {
    state_.rebind(n_, b);
    released_.erase(std::find_if(released_.begin(), released_.end(),
                                 [&](const BoundPod& r) { return r.bind_seq == b.bind_seq; }));
    cycle_.add_pod(state_, n_, b);
  }
  bool fits() const { return !cycle_.run(state_, n_).rejected(); }

 private:
  ClusterState& state_;
  FilterCycle& cycle_;
  NodeId n_;
  ClusterState::Fork fork_;
  std::vector<BoundPod> released_;
};

// SelectVictimsOnNode. Returns the candidate, or leaves `reason` saying why node n is none.
bool select_victims_on_node(const Pod& pod, ClusterState& state, NodeId n, FilterCycle& cycle,
                            std::span<const PodDisruptionBudget> pdbs, const std::vector<int32_t>& disruptions_allowed,
                            PreemptionCandidate& out, std::string& reason) {
  std::vector<BoundPod> potential;
  for (const BoundPod& b : state.pods_on(n))
    if (b.pod.priority < pod.priority) potential.push_back(b);
  if (potential.empty()) {
    reason = kNoVictims;
    return false;
  }
  DryRun run(state, cycle, n);
  for (const BoundPod& b : potential) run.release(b);
  if (const Rejection r = cycle.run(state, n); r.rejected()) {
    reason = std::string(r.code.reason());
    return false;
  }
  std::sort(potential.begin(), potential.end(), more_important_pod);
  // filterPodsWithPDBViolation: stable, so both groups stay in importance order.
  std::vector<int32_t> allowed = disruptions_allowed;
  std::vector<BoundPod> violating, non_violating;
  for (const BoundPod& b : potential) {
    bool violated = false;
    for (size_t i = 0; i < pdbs.size(); ++i) {
      if (!pdb_protects(pdbs[i], b.pod)) continue;
      if (--allowed[i] < 0) violated = true;
    }
    (violated ? violating : non_violating).push_back(b);
  }
  out = PreemptionCandidate{n, {}, 0};
  auto reprieve = [&](const BoundPod& b) {
    run.rebind(b);
    if (run.fits()) return true;
    run.release(b);
    out.victims.push_back(b);
    return false;
  };
  for (const BoundPod& b : violating)
    if (!reprieve(b)) ++out.pdb_violations;
  for (const BoundPod& b : non_violating) reprieve(b);
  if (!violating.empty() && !non_violating.empty()) std::sort(out.victims.begin(), out.victims.end(), more_important_pod);
  if (out.victims.empty()) {  // the pod fits without evicting anything: the failed cycle's code was stale
    reason = fmt::format("expected at least one victim pod on node {}", state.node(n).name);
    return false;
  }
  return true;
}

}  // namespace

// util.MoreImportantPod: priority, then GetPodStartTime(p1).Before(GetPodStartTime(p2)).
bool more_important_pod(const BoundPod& a, const BoundPod& b) {
  if (a.pod.priority != b.pod.priority) return a.pod.priority > b.pod.priority;
  return a.bind_seq < b.bind_seq;
}

size_t pick_one_node_for_preemption(std::span<const PreemptionCandidate> candidates, std::span<const uint32_t> node_rank) {
  if (candidates.empty()) throw std::invalid_argument("pick_one_node_for_preemption: no candidates");
  for (const PreemptionCandidate& c : candidates)
    if (c.victims.empty()) throw std::invalid_argument(fmt::format("preemption candidate node {} has no victims", c.node));
  // Each score function keeps the candidates with the highest score (pickOneNodeForPreemption).
  using Score = int64_t (*)(const PreemptionCandidate&);
  static constexpr Score kScores[] = {
      // 1. fewest PDB violations
      [](const PreemptionCandidate& c) -> int64_t { return -int64_t{c.pdb_violations}; },
      // 2. lowest priority of the most important victim
      [](const PreemptionCandidate& c) -> int64_t { return -int64_t{c.victims.front().pod.priority}; },
      // 3. smallest sum of priorities, each + MaxInt32 + 1
      [](const PreemptionCandidate& c) -> int64_t {
        int64_t sum = 0;
        for (const BoundPod& v : c.victims) sum += int64_t{v.pod.priority} + int64_t{std::numeric_limits<int32_t>::max()} + 1;
        return -sum;
      },
      // 4. fewest victims
      [](const PreemptionCandidate& c) -> int64_t { return -static_cast<int64_t>(c.victims.size()); },
      // 5. latest start of the highest-priority victims (util.GetEarliestPodStartTime: the earliest of them)
      [](const PreemptionCandidate& c) -> int64_t {
        const int32_t top = c.victims.front().pod.priority;
        uint64_t earliest = std::numeric_limits<uint64_t>::max();
        for (const BoundPod& v : c.victims)
          if (v.pod.priority == top) earliest = std::min(earliest, v.bind_seq);
        return static_cast<int64_t>(std::min<uint64_t>(earliest, std::numeric_limits<int64_t>::max()));
      },
  };
  std::vector<size_t> left(candidates.size());
  for (size_t i = 0; i < left.size(); ++i) left[i] = i;
  for (const Score score : kScores) {
    int64_t best = std::numeric_limits<int64_t>::min();
    std::vector<size_t> kept;
    for (const size_t i : left) {
      const int64_t s = score(candidates[i]);
      if (s > best) {
        best = s;
        kept.clear();
      }
      if (s == best) kept.push_back(i);
    }
    left = std::move(kept);
    if (left.size() == 1) return left.front();
  }
  // 6. the first node: lowest rank (node id without ranks).
  auto rank = [&](size_t i) { return node_rank.empty() ? candidates[i].node : node_rank[candidates[i].node]; };
  return *std::min_element(left.begin(), left.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
}

PreemptionResult preempt(const Pod& pod, ClusterState& state, const PreemptionInputs& inputs) {
  const size_t node_count = state.node_count();
  if (inputs.node_to_status.size() != node_count)
    throw std::invalid_argument(fmt::format("preempt: {} node statuses for {} nodes", inputs.node_to_status.size(), node_count));
  if (!inputs.node_rank.empty() && inputs.node_rank.size() < node_count)
    throw std::invalid_argument(fmt::format("preempt: {} node ranks for {} nodes", inputs.node_rank.size(), node_count));
  PreemptionResult result;
  if (!pod.preempt_lower_priority) {
    result.message = "preemption: not eligible due to preemptionPolicy=Never.";
    return result;
  }
  std::vector<int32_t> allowed;
  allowed.reserve(inputs.pdbs.size());
  for (const PodDisruptionBudget& pdb : inputs.pdbs)
    allowed.push_back(pdb_status(pdb, state, inputs.workload_pods).disruptions_allowed);

  FilterCycle cycle(inputs.filters, pod, state);
  std::vector<PreemptionCandidate> candidates;
  // The node statuses of the nodes that are no candidate: kNotHelpful counted apart (most nodes of a
  // large cluster), the few other reasons in a list.
  int32_t not_helpful = 0;
  std::vector<std::pair<std::string, int32_t>> other_reasons;
  for (NodeId n = 0; n < node_count; ++n) {
    if (!state.has_node(n)) continue;
    if (!inputs.node_to_status.at(n).resolvable() || exceeds_allocatable(pod, state.node(n))) {
      ++not_helpful;
      continue;
    }
    PreemptionCandidate c;
    std::string reason;
    if (select_victims_on_node(pod, state, n, cycle, inputs.pdbs, allowed, c, reason)) {
      candidates.push_back(std::move(c));
      continue;
    }
    const auto same = [&reason](const auto& r) { return r.first == reason; };
    if (const auto it = std::find_if(other_reasons.begin(), other_reasons.end(), same); it != other_reasons.end()) ++it->second;
    else other_reasons.emplace_back(std::move(reason), 1);
  }
  result.candidates = static_cast<int32_t>(candidates.size());
  if (candidates.empty()) {
    std::map<std::string, int32_t> reasons(other_reasons.begin(), other_reasons.end());
    if (not_helpful > 0) reasons[kNotHelpful] += not_helpful;
    // FitError.Error(): "count reason" strings, sorted.
    std::vector<std::string> parts;
    for (const auto& [reason, count] : reasons) parts.push_back(fmt::format("{} {}", count, reason));
    std::sort(parts.begin(), parts.end());
    result.message =
        fmt::format("preemption: 0/{} nodes are available: {}.", state.live_node_count(), fmt::join(parts, ", "));
    return result;
  }
  PreemptionCandidate& chosen = candidates[pick_one_node_for_preemption(candidates, inputs.node_rank)];
  result.node = chosen.node;
  result.victims = std::move(chosen.victims);
  result.pdb_violations = chosen.pdb_violations;
  return result;
}

void evict_victims(ClusterState& state, const PreemptionResult& result) {
  if (!result.found()) return;
  for (const BoundPod& v : result.victims) state.release(result.node, v.pod);
}

Status DefaultPreemption::post_filter(const Pod& pod, ClusterState& state, const NodeToStatus& statuses, CycleState&,
                                      Handle& handle, PostFilterResult& result) const {
  PreemptionResult found = preempt(pod, state, PreemptionInputs{handle.filter_plugins(), statuses, pdbs_, workload_pods_, handle.node_rank()});
  result.candidates = found.candidates;
  if (!found.found()) return Status(Code::kUnschedulable, std::move(found.message));
  evict_victims(state, found);
  result.nominated_node = found.node;
  result.victims = std::move(found.victims);
  result.pdb_violations = found.pdb_violations;
  return Status();
}

}  // namespace gpufleet::sched
