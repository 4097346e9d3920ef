// KueueScheduler: queues, scheduling cycles, flavor assignment and preemption over a QuotaTree.
// Upstream: kubernetes-sigs/kueue pkg/scheduler/scheduler.go, pkg/scheduler/flavorassigner/
// flavorassigner.go, pkg/scheduler/preemption/preemption.go, pkg/queue/cluster_queue.go.
#include "queue/kueue_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "queue/flavor_assigner.h"
#include "queue/preemption.h"
#include "queue/quota_tree.h"
#include "queue/scheduler_state.h"

namespace gpufleet::queue {
struct KueueScheduler::Impl : SchedulerState {
  using Rec = WorkloadRecord;
  using Cq = ClusterQueueRecord;

  std::unordered_map<int, int> cq_of_node;
  std::unordered_map<std::string, int> lq_to_cq;
  std::set<int> active;         // ClusterQueues whose heap has a head to try
  std::set<int> released_roots; // trees where quota was released since the last requeue
  std::set<std::pair<double, WorkloadId>> deadlines, backoffs;
  uint64_t seq = 0;
  std::optional<Admission> none;
  std::string empty;

  explicit Impl(KueueObjects o) : SchedulerState(std::move(o)) {
    for (const ClusterQueue& c : objects.cluster_queues) {
      Cq q;
      q.spec = &c;
      q.node = tree.cluster_queue_node(c.name);
      q.root = tree.root(q.node);
      cq_of_node[q.node] = static_cast<int>(cqs.size());
      cqs_of_root[q.root].push_back(static_cast<int>(cqs.size()));
      cqs.push_back(std::move(q));
    }
    for (const LocalQueue& lq : objects.local_queues)
      lq_to_cq[lq.namespace_name + "/" + lq.name] = cq_of_node.at(tree.cluster_queue_node(lq.cluster_queue));
  }

  // ---- queues -------------------------------------------------------------------------------
  bool before(WorkloadId a, WorkloadId b) const {  // true when a goes first
    const Workload& x = recs[a].wl;
    const Workload& y = recs[b].wl;
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.creation_s != y.creation_s) return x.creation_s < y.creation_s;
    return a < b;
  }
  void push(WorkloadId id) {
    Cq& q = cqs[recs[id].cq];
    auto cmp = [this](WorkloadId a, WorkloadId b) { return before(b, a); };
    q.heap.push_back(id);
    std::push_heap(q.heap.begin(), q.heap.end(), cmp);
    recs[id].queued = true;
    if (!q.blocked || q.heap.front() == id) {
      q.blocked = false;
      active.insert(recs[id].cq);
    } else {
      behind_blocked_head.push_back(id);  // explained at the end of schedule()
    }
  }
  /// StrictFIFO: why the workloads queued behind a blocked head wait (Kueue gives them no reason).
  void explain_blocked(std::vector<WorkloadId> ids, double t, std::vector<WorkloadEvent>& out) {
    for (WorkloadId id : ids) {
      const Cq& q = cqs[recs[id].cq];
      if (!recs[id].queued || !q.blocked || q.blocked_by == id) continue;
      set_pending(id, "waiting behind " + recs[q.blocked_by].wl.key() + ", the head of ClusterQueue " + tree.name(q.node) +
                          " (StrictFIFO), which is not admissible",
                  t, out);
    }
  }
  std::vector<WorkloadId> behind_blocked_head;
  void pop_head(int c) {
    Cq& q = cqs[c];
    auto cmp = [this](WorkloadId a, WorkloadId b) { return before(b, a); };
    std::pop_heap(q.heap.begin(), q.heap.end(), cmp);
    q.heap.pop_back();
    if (q.heap.empty()) active.erase(c);
  }
  void requeue_released() {  // Kueue: inadmissible workloads retry after a cohort's usage drops
    for (int root : released_roots)
      for (int c : cqs_of_root[root]) {
        Cq& q = cqs[c];
        std::vector<WorkloadId> back;
        back.swap(q.inadmissible);
        for (WorkloadId id : back) push(id);
        if (q.blocked && !q.heap.empty()) {
          q.blocked = false;
          active.insert(c);
        }
      }
    released_roots.clear();
  }

  /// Which other members of the cohort tree hold `fr` (gpufleet's addition to Kueue's message).
  std::string holders(int c, int fr) const {
    const Cq& q = cqs[c];
    if (tree.parent(q.node) < 0) return {};
    std::vector<std::pair<ResourceAmount, int>> users;
    for (int o : cqs_of_root.at(q.root))
      if (o != c && tree.usage(cqs[o].node, fr) > 0) users.emplace_back(-tree.usage(cqs[o].node, fr), o);
    if (users.empty()) return {};
    std::sort(users.begin(), users.end());
    const std::string& res = tree.flavor_resource_name(fr).second;
    std::string s = "; held in cohort " + tree.name(tree.parent(q.node)) + " by ";
    for (size_t i = 0; i < users.size() && i < 3; ++i) {
      int o = users[i].second;
      if (i) s += ", ";
      s += tree.name(cqs[o].node) + " " + quantity_text(res, -users[i].first);
      ResourceAmount b = tree.borrowed(cqs[o].node, fr);
      if (b > 0) s += " (" + quantity_text(res, b) + " borrowed)";
    }
    if (users.size() > 3) s += ", ...";
    return s;
  }

  // ---- flavor assignment -------------------------------------------------------------------
  Assignment assign(WorkloadId id, const std::vector<int32_t>& counts, const std::vector<FlavorCap>& caps = {}) const {
    const Rec& r = recs[id];
    const Cq& q = cqs[r.cq];
    return assign_flavors(tree, q.node, *q.spec, objects.flavors, r.wl, counts, [&](int fr) { return holders(r.cq, fr); },
                          caps);
  }

  /// Placement caps after the check refused `a` (flavor_assigner.h): its flavors count at most as
  /// kPreempt when it needed no victims, as kNoFit when it did. When some of them name a Topology,
  /// only those are capped (Kueue lowers the pod set's TAS flavor; a quota-only flavor of another
  /// resource group is not where the pods failed to fit). False when no cap was lowered.
  bool lower_caps(const Assignment& a, bool had_victims, const std::string& why, std::vector<FlavorCap>& caps) const {
    const Mode to = had_victims ? Mode::kNoFit : Mode::kPreempt;
    const auto has_topology = [&](const std::string& flavor) {
      for (const ResourceFlavor& f : objects.flavors)
        if (f.name == flavor) return !f.topology_name.empty();
      return false;
    };
    bool any_topology = false;
    for (const PodSetAssignment& ps : a.pod_sets)
      for (const auto& [resource, flavor] : ps.flavors) any_topology = any_topology || has_topology(flavor);
    bool lowered = false;
    for (const PodSetAssignment& ps : a.pod_sets)
      for (const auto& entry : ps.flavors) {
        const std::string& flavor = entry.second;  // a named reference: lambdas may not capture bindings (clang)
        if (any_topology && !has_topology(flavor)) continue;
        auto it = std::find_if(caps.begin(), caps.end(), [&](const FlavorCap& c) { return c.flavor == flavor; });
        if (it == caps.end()) {
          caps.push_back({flavor, to, why});
          lowered = true;
        } else if (it->max > to) {
          it->max = to;
          it->reason = why;
          lowered = true;
        }
      }
    return lowered;
  }

  // ---- events -------------------------------------------------------------------------------
  WorkloadEvent event(double t, WorkloadId id, WorkloadEvent::Type type, std::string reason, std::string message,
                      std::string by = {}) const {
    WorkloadEvent e;
    e.time_s = t;
    e.workload = id;
    e.type = type;
    e.cluster_queue = cqs[recs[id].cq].spec->name;
    e.reason = std::move(reason);
    e.message = std::move(message);
    e.by = std::move(by);
    return e;
  }

  void release(WorkloadId id) {
    Rec& r = recs[id];
    charge(cqs[r.cq].node, r.charged, false);
    r.charged.clear();
    cqs[r.cq].admitted.erase(id);
    r.admission.reset();
    clear_deadline(id);
    released_roots.insert(cqs[r.cq].root);
  }
  void clear_deadline(WorkloadId id) {
    Rec& r = recs[id];
    if (r.ready_deadline_s != kNeverS) deadlines.erase({r.ready_deadline_s, id});
    r.ready_deadline_s = kNeverS;
  }

  void admit(WorkloadId id, const Assignment& a, double t, std::vector<WorkloadEvent>& out) {
    Rec& r = recs[id];
    Cq& q = cqs[r.cq];
    charge(q.node, a.usage, true);
    r.charged = a.usage;
    r.state = WorkloadState::kAdmitted;
    r.admission = Admission{q.spec->name, a.pod_sets, a.borrowing};
    r.admissions++;
    r.admitted_s = t;
    r.admit_seq = ++seq;
    r.pending_message.clear();
    q.admitted.insert(id);
    if (objects.configuration.wait_for_pods_ready) {
      r.ready_deadline_s = t + objects.configuration.wait_for_pods_ready_timeout_s;
      deadlines.insert({r.ready_deadline_s, id});
    }
    out.push_back(event(t, id, WorkloadEvent::Type::kAdmitted, "QuotaReserved", "Quota reserved in ClusterQueue " + q.spec->name));
  }

  void set_pending(WorkloadId id, const std::string& msg, double t, std::vector<WorkloadEvent>& out) {
    Rec& r = recs[id];
    if (r.pending_message == msg) return;
    r.pending_message = msg;
    out.push_back(event(t, id, WorkloadEvent::Type::kPending, "Pending", msg));
  }

  // ---- one workload -------------------------------------------------------------------------
  /// Outcome of trying one head: admitted, not admissible, or retry in the next cycle.
  enum class Try { kAdmitted, kInadmissible, kDeferred };

  Try try_admit(WorkloadId id, double t, PlacementCheck* check, bool tree_touched, Assignment first,
                std::vector<WorkloadEvent>& out) {
    Rec& r = recs[id];
    const bool fair = objects.configuration.fair_sharing;
    std::vector<int32_t> full;
    for (const PodSet& ps : r.wl.pod_sets) full.push_back(ps.count);
    struct Choice {
      Assignment a;
      std::vector<Victim> victims;
    };
    auto attempt = [&](Assignment a) -> std::optional<Choice> {
      if (a.mode >= Mode::kBorrow) return Choice{std::move(a), {}};
      if (a.mode == Mode::kPreempt && !tree_touched) {
        auto v = preemption_targets(*this, id, a, fair);
        if (!v.empty()) return Choice{std::move(a), std::move(v)};
      }
      return std::nullopt;
    };
    bool partial = false;
    for (size_t p = 0; p < full.size(); ++p)
      if (r.wl.pod_sets[p].min_count && *r.wl.pod_sets[p].min_count < full[p]) partial = true;
    // Placement-aware admission: a refused placement caps the flavors it used and the flavors are
    // assigned again (flavor_assigner.h); each round lowers a cap, so this ends.
    std::vector<FlavorCap> caps;
    std::optional<std::string> refused;  // the first placement refusal
    std::optional<Choice> choice;
    for (;;) {
      choice = attempt(first);
      if (!choice && partial) {
        // Largest proportional reduction that admits (Kueue's PodSetReducer binary search).
        int32_t span = 0;
        for (size_t p = 0; p < full.size(); ++p)
          span = std::max(span, full[p] - r.wl.pod_sets[p].min_count.value_or(full[p]));
        auto counts_at = [&](int32_t k) {
          std::vector<int32_t> c(full.size());
          for (size_t p = 0; p < full.size(); ++p) {
            int32_t lo = r.wl.pod_sets[p].min_count.value_or(full[p]);
            c[p] = lo + static_cast<int32_t>(int64_t{full[p] - lo} * k / span);
          }
          return c;
        };
        int32_t lo = 0, hi = span - 1;
        while (lo <= hi) {
          int32_t mid = lo + (hi - lo) / 2;
          auto c = attempt(assign(id, counts_at(mid), caps));
          if (c) {
            choice = std::move(c);
            lo = mid + 1;
          } else {
            hi = mid - 1;
          }
        }
      }
      if (!choice) {
        if (first.mode == Mode::kPreempt && tree_touched) return Try::kDeferred;
        std::string msg = first.message;
        if (first.mode == Mode::kPreempt) msg += "; no workload to preempt";
        if (refused) msg = *refused;  // as before the fallback: the placement's reason
        set_pending(id, msg.empty() ? "couldn't assign flavors" : msg, t, out);
        return Try::kInadmissible;
      }
      if (!objects.configuration.placement_aware || !check) break;
      Admission adm{cqs[r.cq].spec->name, choice->a.pod_sets, choice->a.borrowing};
      std::optional<std::string> why;
      if (choice->victims.empty()) {
        why = check->check(id, r.wl, adm);
      } else {
        std::vector<WorkloadId> victims;
        for (const Victim& v : choice->victims) victims.push_back(v.id);
        why = check->check_preempting(id, r.wl, adm, victims);
      }
      if (!why) break;
      if (!refused) refused = *why;
      if (!lower_caps(choice->a, !choice->victims.empty(), *why, caps)) {
        set_pending(id, *refused, t, out);
        return Try::kInadmissible;
      }
      first = assign(id, full, caps);
    }
    for (const Victim& v : choice->victims) {
      Rec& vr = recs[v.id];
      release(v.id);
      vr.state = WorkloadState::kPending;
      vr.evictions++;
      out.push_back(event(t, v.id, WorkloadEvent::Type::kPreempted, v.reason,
                          "Preempted to accommodate a workload (UID: " + r.wl.key() + ") due to " +
                              (v.reason == "InClusterQueue"        ? "prioritization in the ClusterQueue"
                               : v.reason == "InCohortFairSharing" ? "fair sharing within the cohort"
                                                                   : "reclamation within the cohort"),
                          r.wl.key()));
      push(v.id);  // Kueue requeues a preempted workload at once
    }
    admit(id, choice->a, t, out);
    return Try::kAdmitted;
  }

  // ---- the cycle ----------------------------------------------------------------------------
  bool cycle(double t, PlacementCheck* check, std::vector<WorkloadEvent>& out) {
    struct Head {
      int cq;
      WorkloadId id;
      bool borrows;
      int64_t share;
      Assignment full;
    };
    std::vector<Head> heads;
    for (int c : active) {
      WorkloadId id = cqs[c].heap.front();
      Assignment a = assign(id, counts_full(id));
      int64_t share = objects.configuration.fair_sharing ? tree.weighted_share(cqs[c].node, a.usage) : 0;
      heads.push_back({c, id, a.mode != Mode::kFit, share, std::move(a)});
    }
    std::sort(heads.begin(), heads.end(), [&](const Head& x, const Head& y) {
      if (x.borrows != y.borrows) return !x.borrows;
      if (x.share != y.share) return x.share < y.share;
      return before(x.id, y.id);
    });
    bool progress = false;
    std::set<int> touched;
    for (Head& h : heads) {
      bool changed = touched.count(cqs[h.cq].root) > 0;
      if (changed) h.full = assign(h.id, counts_full(h.id));
      Try res = try_admit(h.id, t, check, changed, std::move(h.full), out);
      if (res == Try::kDeferred) continue;
      progress = true;
      Cq& q = cqs[h.cq];
      if (res == Try::kAdmitted) {
        touched.insert(q.root);
        recs[h.id].queued = false;
        if (q.heap.front() == h.id) {
          pop_head(h.cq);
        } else {  // a preempted workload of this queue went back in above it
          auto cmp = [this](WorkloadId a, WorkloadId b) { return before(b, a); };
          q.heap.erase(std::find(q.heap.begin(), q.heap.end(), h.id));
          std::make_heap(q.heap.begin(), q.heap.end(), cmp);
        }
      } else if (q.spec->queueing_strategy == QueueingStrategy::kStrictFifo) {
        q.blocked = true;
        q.blocked_by = h.id;
        active.erase(h.cq);
        behind_blocked_head.insert(behind_blocked_head.end(), q.heap.begin(), q.heap.end());
      } else {
        pop_head(h.cq);
        q.inadmissible.push_back(h.id);
      }
    }
    return progress;
  }

  std::vector<int32_t> counts_full(WorkloadId id) const {
    std::vector<int32_t> c;
    for (const PodSet& ps : recs[id].wl.pod_sets) c.push_back(ps.count);
    return c;
  }
};

KueueScheduler::KueueScheduler(KueueObjects objects) : impl_(std::make_unique<Impl>(std::move(objects))) {}
KueueScheduler::~KueueScheduler() = default;

WorkloadId KueueScheduler::submit(Workload workload) {
  auto it = impl_->lq_to_cq.find(workload.namespace_name + "/" + workload.local_queue);
  if (it == impl_->lq_to_cq.end())
    throw std::invalid_argument("Workload " + workload.key() + ": unknown LocalQueue " + workload.local_queue);
  if (workload.pod_sets.empty() || workload.pod_sets.size() > 8)
    throw std::invalid_argument("Workload " + workload.key() + ": needs 1 to 8 pod sets");
  for (const PodSet& ps : workload.pod_sets) {
    if (ps.count < 1) throw std::invalid_argument("Workload " + workload.key() + " pod set " + ps.name + ": count < 1");
    if (ps.min_count && (*ps.min_count < 1 || *ps.min_count > ps.count))
      throw std::invalid_argument("Workload " + workload.key() + " pod set " + ps.name + ": minCount outside [1, count]");
  }
  WorkloadId id = static_cast<WorkloadId>(impl_->recs.size());
  Impl::Rec r;
  r.wl = std::move(workload);
  r.cq = it->second;
  impl_->recs.push_back(std::move(r));
  impl_->push(id);
  return id;
}

std::vector<WorkloadEvent> KueueScheduler::schedule(double t, PlacementCheck* check) {
  Impl& m = *impl_;
  std::vector<WorkloadEvent> out;
  while (!m.deadlines.empty() && m.deadlines.begin()->first <= t) {
    WorkloadId id = m.deadlines.begin()->second;
    m.deadlines.erase(m.deadlines.begin());
    m.recs[id].ready_deadline_s = kNeverS;
    out.push_back(evict(id, t, "PodsReadyTimeout", "Exceeded the PodsReady timeout " + m.recs[id].wl.key()));
  }
  while (!m.backoffs.empty() && m.backoffs.begin()->first <= t) {
    WorkloadId id = m.backoffs.begin()->second;
    m.backoffs.erase(m.backoffs.begin());
    m.recs[id].requeue_at_s = kNeverS;
    m.push(id);
    out.push_back(m.event(t, id, WorkloadEvent::Type::kRequeued, "BackoffFinished", "The workload backoff was finished"));
  }
  for (;;) {
    m.requeue_released();
    if (m.active.empty() || !m.cycle(t, check, out)) break;
  }
  std::vector<WorkloadId> behind;
  behind.swap(m.behind_blocked_head);
  m.explain_blocked(std::move(behind), t, out);
  return out;
}

void KueueScheduler::pods_ready(WorkloadId id, double) { impl_->clear_deadline(id); }

WorkloadEvent KueueScheduler::finish(WorkloadId id, double t) {
  Impl& m = *impl_;
  Impl::Rec& r = m.recs.at(id);
  if (r.state != WorkloadState::kAdmitted) throw std::invalid_argument("finish: workload " + r.wl.key() + " is not admitted");
  m.clear_deadline(id);
  m.release(id);
  r.state = WorkloadState::kFinished;
  return m.event(t, id, WorkloadEvent::Type::kFinished, "Finished", "Workload finished");
}

WorkloadEvent KueueScheduler::evict(WorkloadId id, double t, std::string reason, std::string message) {
  Impl& m = *impl_;
  Impl::Rec& r = m.recs.at(id);
  if (r.state != WorkloadState::kAdmitted) throw std::invalid_argument("evict: workload " + r.wl.key() + " is not admitted");
  m.clear_deadline(id);
  m.release(id);
  r.state = WorkloadState::kPending;
  r.evictions++;
  r.backoff_evictions++;
  const KueueConfiguration& cfg = m.objects.configuration;
  double backoff = std::min(cfg.backoff_max_s, cfg.backoff_base_s * std::pow(2.0, r.backoff_evictions - 1));
  r.requeue_at_s = t + backoff;
  m.backoffs.insert({r.requeue_at_s, id});
  r.pending_message = message;
  return m.event(t, id, WorkloadEvent::Type::kEvicted, std::move(reason), std::move(message));
}

std::optional<double> KueueScheduler::next_wakeup_s(double t) const {
  std::optional<double> best;
  for (const auto* s : {&impl_->deadlines, &impl_->backoffs}) {
    auto it = s->upper_bound({t, std::numeric_limits<WorkloadId>::max()});
    if (it != s->end() && (!best || it->first < *best)) best = it->first;
  }
  return best;
}

size_t KueueScheduler::workload_count() const { return impl_->recs.size(); }
const Workload& KueueScheduler::workload(WorkloadId id) const { return impl_->recs.at(id).wl; }
WorkloadState KueueScheduler::state(WorkloadId id) const { return impl_->recs.at(id).state; }
const std::optional<Admission>& KueueScheduler::admission(WorkloadId id) const { return impl_->recs.at(id).admission; }
const std::string& KueueScheduler::pending_message(WorkloadId id) const {
  const auto& r = impl_->recs.at(id);
  return r.state == WorkloadState::kPending ? r.pending_message : impl_->empty;
}
int32_t KueueScheduler::admissions(WorkloadId id) const { return impl_->recs.at(id).admissions; }
int32_t KueueScheduler::evictions(WorkloadId id) const { return impl_->recs.at(id).evictions; }
const std::string& KueueScheduler::cluster_queue_of(WorkloadId id) const {
  return impl_->cqs[impl_->recs.at(id).cq].spec->name;
}
const KueueObjects& KueueScheduler::objects() const { return impl_->objects; }

std::vector<ClusterQueueStatus> KueueScheduler::cluster_queue_status() const {
  const Impl& m = *impl_;
  std::vector<ClusterQueueStatus> out;
  for (const Impl::Cq& q : m.cqs) {
    ClusterQueueStatus s;
    s.name = q.spec->name;
    s.cohort = q.spec->cohort;
    s.pending_workloads = static_cast<int32_t>(q.heap.size() + q.inadmissible.size());
    s.admitted_workloads = static_cast<int32_t>(q.admitted.size());
    for (const ResourceGroup& g : q.spec->resource_groups)
      for (const FlavorQuotas& f : g.flavors)
        for (const ResourceQuotaLimits& r : f.resources) {
          int fr = m.tree.flavor_resource(f.name, r.name);
          s.flavors_usage.push_back({f.name, r.name, m.tree.usage(q.node, fr), m.tree.borrowed(q.node, fr),
                                     m.tree.nominal(q.node, fr)});
        }
    s.weighted_share = m.tree.weighted_share(q.node);
    out.push_back(std::move(s));
  }
  return out;
}


EventRecord event_record(const KueueScheduler& scheduler, const WorkloadEvent& event, std::string workload) {
  return EventRecord{event.time_s, std::move(workload), event_type_name(event.type),
                     event.cluster_queue.empty() ? scheduler.cluster_queue_of(event.workload) : event.cluster_queue, event.reason,
                     event.message, event.by};
}


}  // namespace gpufleet::queue
