// Preemption (kubernetes-sigs/kueue pkg/scheduler/preemption/preemption.go), classic and fair
// sharing, over the shared scheduler state. The tree is changed only for dry runs and restored.
#include "queue/preemption.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpufleet::queue {
namespace {

class Preemptor {
 public:
  explicit Preemptor(SchedulerState& s) : state_(s), recs(s.recs), cqs(s.cqs), tree(s.tree), cqs_of_root(s.cqs_of_root) {}

  void charge(int node, const std::vector<std::pair<int, ResourceAmount>>& u, bool add) { state_.charge(node, u, add); }

  bool fits(int c, const Assignment& a, bool allow_borrowing, bool nominal_only = false) const {
    int node = cqs[c].node;
    for (const auto& [fr, need] : a.usage) {
      if (need > tree.available(node, fr)) return false;
      if (nominal_only && tree.usage(node, fr) + need > tree.nominal(node, fr)) return false;
      if (!allow_borrowing) {
        // Hierarchical cohorts: quota placed on a cohort is nominal for its descendants.
        bool within = false;
        for (int n = node; n >= 0 && (tree.parent(n) >= 0 || n == node); n = tree.parent(n))
          if (tree.usage(n, fr) + need <= tree.subtree_quota(n, fr)) {
            within = true;
            break;
          }
        if (!within) return false;
      }
    }
    return true;
  }

  bool uses_any(WorkloadId v, const Assignment& a) const {
    for (const auto& [fr, amount] : recs[v].charged)
      for (const auto& [afr, need] : a.usage)
        if (fr == afr && amount > 0) return true;
    return false;
  }

  /// The branch of `other` below its lowest common ancestor with the preemptor borrows in a needed fr.
  bool other_branch_borrowing(int c, int other, const Assignment& a) const {
    int lca = tree.lowest_common_ancestor(cqs[c].node, cqs[other].node);
    if (lca < 0) return false;
    int b = tree.child_toward(lca, cqs[other].node);
    for (const auto& [fr, need] : a.usage)
      if (tree.usage(b, fr) > tree.subtree_quota(b, fr)) return true;
    return false;
  }
  bool own_branch_within(int c, int other, const Assignment& a) const {
    int lca = tree.lowest_common_ancestor(cqs[c].node, cqs[other].node);
    int b = tree.child_toward(lca, cqs[c].node);
    for (const auto& [fr, need] : a.usage)
      if (tree.usage(b, fr) + need > tree.subtree_quota(b, fr)) return false;
    return true;
  }

  void sort_candidates(int c, std::vector<WorkloadId>& v) const {
    std::sort(v.begin(), v.end(), [&](WorkloadId x, WorkloadId y) {
      bool xo = recs[x].cq != c, yo = recs[y].cq != c;
      if (xo != yo) return xo;
      if (recs[x].wl.priority != recs[y].wl.priority) return recs[x].wl.priority < recs[y].wl.priority;
      return recs[x].admit_seq > recs[y].admit_seq;
    });
  }

  std::vector<WorkloadId> minimal(int c, const Assignment& a, const std::vector<WorkloadId>& cands,
                                  bool allow_borrowing) {
    std::vector<WorkloadId> removed;
    bool ok = false;
    for (WorkloadId v : cands) {
      int vc = recs[v].cq;
      if (vc != c && !other_branch_borrowing(c, vc, a)) continue;
      charge(cqs[vc].node, recs[v].charged, false);
      removed.push_back(v);
      if (fits(c, a, allow_borrowing, !recs[preemptor_].wl.preemptible)) {
        ok = true;
        break;
      }
    }
    if (!ok) {
      for (WorkloadId v : removed) charge(cqs[recs[v].cq].node, recs[v].charged, true);
      return {};
    }
    std::vector<WorkloadId> victims{removed.back()};
    for (size_t i = removed.size() - 1; i-- > 0;) {
      WorkloadId v = removed[i];
      charge(cqs[recs[v].cq].node, recs[v].charged, true);
      if (fits(c, a, allow_borrowing, !recs[preemptor_].wl.preemptible)) continue;  // not needed: stays
      charge(cqs[recs[v].cq].node, recs[v].charged, false);
      victims.push_back(v);
    }
    for (WorkloadId v : victims) charge(cqs[recs[v].cq].node, recs[v].charged, true);
    return victims;
  }

  bool within_cq_allowed(const ClusterQueue& spec, const Workload& p, WorkloadId v) const {
    const Workload& w = recs[v].wl;
    switch (spec.preemption.within_cluster_queue) {
      case WithinClusterQueue::kNever: return false;
      case WithinClusterQueue::kLowerPriority: return w.priority < p.priority;
      case WithinClusterQueue::kLowerOrNewerEqualPriority:
        return w.priority < p.priority || (w.priority == p.priority && w.creation_s > p.creation_s);
    }
    return false;
  }

  std::vector<Victim> targets(WorkloadId id, const Assignment& a, bool fair_sharing) {
    preemptor_ = id;
    const WorkloadRecord& r = recs[id];
    int c = r.cq;
    const ClusterQueue& spec = *cqs[c].spec;
    const PreemptionPolicy& pol = spec.preemption;
    std::vector<WorkloadId> same;
    for (WorkloadId v : cqs[c].admitted)
      if (recs[v].wl.preemptible && within_cq_allowed(spec, r.wl, v) && uses_any(v, a)) same.push_back(v);
    sort_candidates(c, same);
    auto others = [&](auto accept) {
      std::vector<WorkloadId> out;
      if (tree.parent(cqs[c].node) < 0) return out;
      for (int o : cqs_of_root.at(cqs[c].root)) {
        if (o == c || !other_branch_borrowing(c, o, a)) continue;
        for (WorkloadId v : cqs[o].admitted)
          if (recs[v].wl.preemptible && uses_any(v, a) && accept(v, o)) out.push_back(v);
      }
      return out;
    };
    auto label = [&](const std::vector<WorkloadId>& vs, const char* cohort_reason) {
      std::vector<Victim> out;
      for (WorkloadId v : vs) out.push_back({v, recs[v].cq == c ? "InClusterQueue" : cohort_reason});
      return out;
    };
    if (fair_sharing && pol.reclaim_within_cohort != ReclaimWithinCohort::kNever)
      if (auto v = fair_targets(id, a, same); !v.empty()) return v;
    if (!fair_sharing && pol.reclaim_within_cohort != ReclaimWithinCohort::kNever) {
      auto cands = others([&](WorkloadId v, int o) {
        if (pol.reclaim_within_cohort == ReclaimWithinCohort::kLowerPriority && recs[v].wl.priority >= r.wl.priority)
          return false;
        return own_branch_within(c, o, a);
      });
      if (!cands.empty()) {
        cands.insert(cands.end(), same.begin(), same.end());
        sort_candidates(c, cands);
        if (auto v = minimal(c, a, cands, false); !v.empty()) return label(v, "InCohortReclamation");
      }
    }
    if (!fair_sharing && pol.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority) {
      auto cands = others([&](WorkloadId v, int) {
        int32_t p = recs[v].wl.priority;
        return p < r.wl.priority && (!pol.max_priority_threshold || p <= *pol.max_priority_threshold);
      });
      if (!cands.empty()) {
        cands.insert(cands.end(), same.begin(), same.end());
        sort_candidates(c, cands);
        if (auto v = minimal(c, a, cands, r.wl.preemptible); !v.empty())
          return label(v, "InCohortReclaimWhileBorrowing");
      }
    }
    return label(minimal(c, a, same, r.wl.preemptible), "InClusterQueue");
  }

  /// Fair sharing preemption (preemption.go fairPreemptions): own ClusterQueue's candidates first,
  /// then from the ClusterQueue with the highest weighted share, while LessThanOrEqualToFinalShare or
  /// LessThanInitialShare holds.
  std::vector<Victim> fair_targets(WorkloadId id, const Assignment& a, const std::vector<WorkloadId>& same) {
    int c = recs[id].cq;
    int node = cqs[c].node;
    std::map<int, std::vector<WorkloadId>> by_cq;
    for (int o : cqs_of_root.at(cqs[c].root)) {
      if (o == c) continue;
      std::vector<WorkloadId> v;
      for (WorkloadId w : cqs[o].admitted)
        if (recs[w].wl.preemptible && uses_any(w, a)) v.push_back(w);
      sort_candidates(c, v);
      if (!v.empty()) by_cq[o] = std::move(v);
    }
    std::vector<Victim> removed;
    bool ok = false;
    for (WorkloadId v : same) {
      charge(node, recs[v].charged, false);
      removed.push_back({v, "InClusterQueue"});
      if (fits(c, a, true, !recs[id].wl.preemptible)) {
        ok = true;
        break;
      }
    }
    std::set<int> excluded;
    while (!ok) {
      int target = -1;
      int64_t best = -1;
      for (auto& [o, v] : by_cq) {
        if (v.empty() || excluded.count(o) || !other_branch_borrowing(c, o, a)) continue;
        int64_t s = tree.weighted_share(cqs[o].node);
        if (s > best) {
          best = s;
          target = o;
        }
      }
      if (target < 0) break;
      WorkloadId v = by_cq[target].front();
      int64_t preemptor_final = tree.weighted_share(node, a.usage);
      int64_t target_final = tree.weighted_share(cqs[target].node, recs[v].charged, true);
      if (preemptor_final <= target_final || preemptor_final < best) {
        by_cq[target].erase(by_cq[target].begin());
        charge(cqs[target].node, recs[v].charged, false);
        removed.push_back({v, "InCohortFairSharing"});
        ok = fits(c, a, true, !recs[id].wl.preemptible);
      } else {
        excluded.insert(target);
      }
    }
    for (const Victim& v : removed) charge(cqs[recs[v.id].cq].node, recs[v.id].charged, true);
    if (!ok) return {};
    return removed;
  }

 private:
  SchedulerState& state_;
  std::vector<WorkloadRecord>& recs;
  std::vector<ClusterQueueRecord>& cqs;
  QuotaTree& tree;
  std::unordered_map<int, std::vector<int>>& cqs_of_root;
  WorkloadId preemptor_ = 0;
};

}  // namespace

std::vector<Victim> preemption_targets(SchedulerState& state, WorkloadId preemptor, const Assignment& assignment,
                                       bool fair_sharing) {
  return Preemptor(state).targets(preemptor, assignment, fair_sharing);
}

}  // namespace gpufleet::queue
