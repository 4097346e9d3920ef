// Queue scenarios at the admission level (KueueScheduler, no nodes). Each test names the upstream
// issue it reproduces and how nodes map to quota: quota-only admission has no nodes at all; the
// placement-aware runs answer PlacementCheck from a fake list of free GPUs per node.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/kueue_test_support.h"
#include "queue/kueue_scheduler.h"

namespace gpufleet::queue {
namespace {

using namespace gpufleet::queue::testing;
using Type = WorkloadEvent::Type;

// S06 (kubernetes-sigs/kueue#3948): root cohort (no quota) -> ClusterQueue be (nominal 0) and
// sub-cohort guar (8 GPUs of h100) -> ClusterQueue g (nominal 0, reclaimWithinCohort Any). be-1
// borrows guar's 8 GPUs at t=0; at t=60 g-1 reclaims them within one schedule(): the quota on guar
// is nominal for g's subtree.
TEST(KueueScenarios, S06HierarchicalCohortReclaim) {
  KueueObjects o;
  add_flavor(o, "h100");
  o.cohorts.push_back({"root", "", {}, 1000});
  o.cohorts.push_back({"guar", "root", quota("h100", kGpu, 8000), 1000});
  add_cq(o, "be", "root", quota("h100", kGpu, 0));
  add_cq(o, "g", "guar", quota("h100", kGpu, 0)).preemption.reclaim_within_cohort = ReclaimWithinCohort::kAny;
  KueueScheduler s(o);
  WorkloadId be1 = s.submit(make_workload("be-1", "be", gpu_pod(8), 1, 0));
  s.schedule(0);
  ASSERT_EQ(s.state(be1), WorkloadState::kAdmitted);
  EXPECT_TRUE(s.admission(be1)->borrowing);
  WorkloadId g1 = s.submit(make_workload("g-1", "g", gpu_pod(8), 1, 60));
  auto events = s.schedule(60);
  ASSERT_EQ(events.size(), 3u);  // Preempted, Admitted, then be-1 (requeued at once) Pending
  EXPECT_EQ(events[0].type, Type::kPreempted);
  EXPECT_EQ(events[0].workload, be1);
  EXPECT_EQ(events[0].reason, "InCohortReclamation");
  EXPECT_EQ(events[0].by, "default/g-1");
  EXPECT_EQ(events[0].message, "Preempted to accommodate a workload (UID: default/g-1) due to reclamation within the cohort");
  EXPECT_EQ(events[1].type, Type::kAdmitted);
  EXPECT_EQ(events[1].workload, g1);
  EXPECT_EQ(events[2].type, Type::kPending);
  EXPECT_EQ(s.state(be1), WorkloadState::kPending);
  EXPECT_EQ(s.pending_message(be1),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 "
            "more needed; held in cohort root by g 8 (8 borrowed); no workload to preempt");
}

// S08 (kubernetes-sigs/kueue#4329): n1, n2 with 8 GPUs each run a 4-GPU workload of the queue
// (pre-1, pre-2); ClusterQueue nominal 16 GPUs; waitForPodsReady 300 s. W1 = 8 GPUs at t=0, W2 and
// W3 = 1 GPU at t=10 and t=20.
KueueObjects s08_objects(bool placement_aware) {
  KueueObjects o;
  o.configuration.wait_for_pods_ready = true;
  o.configuration.wait_for_pods_ready_timeout_s = 300;
  o.configuration.placement_aware = placement_aware;
  add_flavor(o, "default");
  add_cq(o, "q", "", quota("default", kGpu, 16000));
  return o;
}

// Quota-only: W1 fits the quota (8 + 8 = 16) and is admitted although no node has 8 free, so its pod
// never becomes ready; W2, W3 wait for quota until W1 is evicted at t=300 and requeued after 60 s.
TEST(KueueScenarios, S08QuotaOnlyWaitForPodsReady) {
  KueueScheduler s(s08_objects(false));
  WorkloadId pre1 = s.submit(make_workload("pre-1", "q", gpu_pod(4)));
  WorkloadId pre2 = s.submit(make_workload("pre-2", "q", gpu_pod(4)));
  WorkloadId w1 = s.submit(make_workload("W1", "q", gpu_pod(8), 1, 0.5));
  s.schedule(0);
  s.pods_ready(pre1, 0);
  s.pods_ready(pre2, 0);
  ASSERT_EQ(s.state(w1), WorkloadState::kAdmitted);
  WorkloadId w2 = s.submit(make_workload("W2", "q", gpu_pod(1), 1, 10));
  s.schedule(10);
  WorkloadId w3 = s.submit(make_workload("W3", "q", gpu_pod(1), 1, 20));
  s.schedule(20);
  EXPECT_EQ(s.state(w2), WorkloadState::kPending);
  EXPECT_EQ(s.state(w3), WorkloadState::kPending);
  EXPECT_EQ(s.pending_message(w3),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default, "
            "1 more needed; no workload to preempt");
  EXPECT_EQ(s.next_wakeup_s(20), 300.0);
  auto events = s.schedule(300);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Type::kEvicted);
  EXPECT_EQ(events[0].workload, w1);
  EXPECT_EQ(events[0].reason, "PodsReadyTimeout");
  EXPECT_EQ(events[1].type, Type::kAdmitted);
  EXPECT_EQ(events[1].workload, w2);
  EXPECT_EQ(events[2].workload, w3);
  EXPECT_EQ(s.next_wakeup_s(300), 360.0);  // backoff 60 s * 2^0
  events = s.schedule(360);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, Type::kRequeued);
  EXPECT_EQ(events[1].type, Type::kPending);
  EXPECT_EQ(s.state(w1), WorkloadState::kPending);
  EXPECT_EQ(s.pending_message(w1),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default, "
            "2 more needed; no workload to preempt");
}

/// Free whole GPUs per node; first fit, commits what it accepts (the caller binds on kAdmitted).
class FakeNodes : public PlacementCheck {
 public:
  explicit FakeNodes(std::vector<int> free) : free_(std::move(free)) {}
  std::optional<std::string> check(WorkloadId, const Workload& w, const Admission& a) override {
    std::vector<int> free = free_;
    for (size_t p = 0; p < a.pod_sets.size(); ++p)
      for (int32_t i = 0; i < a.pod_sets[p].count; ++i) {
        int need = w.pod_sets[p].pod_template.num_gpu;
        auto it = std::find_if(free.begin(), free.end(), [&](int f) { return f >= need; });
        if (it == free.end())
          return "0/" + std::to_string(free.size()) + " nodes have " + std::to_string(need) + " free GPUs";
        *it -= need;
      }
    free_ = free;
    return std::nullopt;
  }

 private:
  std::vector<int> free_;
};

// Placement-aware: the check sees n1 and n2 with 4 free GPUs each. W1 is refused (pending with the
// check's message) and, in BestEffortFIFO, W2 and W3 are admitted as they come.
TEST(KueueScenarios, S08PlacementAware) {
  KueueScheduler s(s08_objects(true));
  s.submit(make_workload("pre-1", "q", gpu_pod(4)));
  s.submit(make_workload("pre-2", "q", gpu_pod(4)));
  s.schedule(0);  // already running: no check
  s.pods_ready(0, 0);
  s.pods_ready(1, 0);
  FakeNodes nodes({4, 4});
  WorkloadId w1 = s.submit(make_workload("W1", "q", gpu_pod(8), 1, 0.5));
  s.schedule(0.5, &nodes);
  EXPECT_EQ(s.state(w1), WorkloadState::kPending);
  EXPECT_EQ(s.pending_message(w1), "0/2 nodes have 8 free GPUs");
  WorkloadId w2 = s.submit(make_workload("W2", "q", gpu_pod(1), 1, 10));
  s.schedule(10, &nodes);
  EXPECT_EQ(s.state(w2), WorkloadState::kAdmitted);
  WorkloadId w3 = s.submit(make_workload("W3", "q", gpu_pod(1), 1, 20));
  s.schedule(20, &nodes);
  EXPECT_EQ(s.state(w3), WorkloadState::kAdmitted);
  EXPECT_EQ(s.next_wakeup_s(20), 310.0);  // W2's pods-ready deadline; W1 holds none
  s.pods_ready(w2, 20);
  s.pods_ready(w3, 20);
  s.schedule(600, &nodes);
  EXPECT_EQ(s.state(w1), WorkloadState::kPending);
  EXPECT_EQ(s.admissions(w1), 0);
}

// S20 (kai-scheduler/KAI-Scheduler#1369): queue Q nominal 1 GPU; W1 non-preemptible 2 x 600 milli =
// 1200 stays pending; W2 non-preemptible 2 x 500 = 1000 is admitted. In a cohort with a lender's free
// GPU, W1 still does not borrow while a preemptible copy does.
TEST(KueueScenarios, S20NonPreemptibleFractions) {
  KueueObjects o;
  add_flavor(o, "default");
  add_cq(o, "Q", "", quota("default", kGpu, 1000));
  KueueScheduler s(o);
  Workload w1 = make_workload("W1", "Q", gpu_pod(2, 600));
  w1.preemptible = false;
  WorkloadId id1 = s.submit(w1);
  s.schedule(0);
  EXPECT_EQ(s.state(id1), WorkloadState::kPending);
  EXPECT_EQ(s.pending_message(id1),
            "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor default, "
            "request > nominal quota for a non-preemptible workload (1200m > 1)");
  Workload w2 = make_workload("W2", "Q", gpu_pod(2, 500), 1, 1);
  w2.preemptible = false;
  WorkloadId id2 = s.submit(w2);
  s.schedule(1);
  EXPECT_EQ(s.state(id2), WorkloadState::kAdmitted);
  EXPECT_EQ(s.admission(id2)->pod_sets[0].usage[0].second, 1000);

  KueueObjects c;
  add_flavor(c, "default");
  add_cq(c, "Q", "team", quota("default", kGpu, 1000));
  add_cq(c, "lender", "team", quota("default", kGpu, 1000));
  KueueScheduler t(c);
  WorkloadId np = t.submit(w1);
  Workload p = w1;
  p.name = "W1-preemptible";
  p.preemptible = true;
  p.creation_s = 1;
  WorkloadId pr = t.submit(p);
  t.schedule(1);
  EXPECT_EQ(t.state(np), WorkloadState::kPending);
  EXPECT_EQ(t.state(pr), WorkloadState::kAdmitted);
  EXPECT_TRUE(t.admission(pr)->borrowing);
}

// S04 (volcano-sh/volcano#3869) as Kueue semantics: cohort of qa and qb, nominal 8 GPUs each
// (2 nodes x 8 GPUs), reclaimWithinCohort Any. Job A (qa) 5 pods x 4 GPUs, minCount 1, t=0: partial
// admission with 4 pods (16 GPUs, 8 borrowed). Job B (qb), same shape, t=60: within its nominal it
// reclaims with 2 pods (the largest count within qb's 8 GPUs), preempting A whole; A comes back with
// 2 pods in qa's nominal. Then 30 cycles change nothing: A=2, B=2, one eviction.
TEST(KueueScenarios, S04ReclaimConvergesToEqualShare) {
  KueueObjects o;
  add_flavor(o, "default");
  add_cq(o, "qa", "c", quota("default", kGpu, 8000)).preemption.reclaim_within_cohort = ReclaimWithinCohort::kAny;
  add_cq(o, "qb", "c", quota("default", kGpu, 8000)).preemption.reclaim_within_cohort = ReclaimWithinCohort::kAny;
  KueueScheduler s(o);
  WorkloadId a = s.submit(make_workload("A", "qa", gpu_pod(4), 5, 0, 0, 1));
  s.schedule(0);
  ASSERT_EQ(admitted_pods(s, a), 4);
  EXPECT_TRUE(s.admission(a)->borrowing);
  WorkloadId b = s.submit(make_workload("B", "qb", gpu_pod(4), 5, 60, 0, 1));
  auto events = s.schedule(60);
  EXPECT_GE(admitted_pods(s, b), 1);
  ASSERT_EQ(count_events(events, Type::kPreempted), 1);
  EXPECT_EQ(events[0].reason, "InCohortReclamation");
  int32_t evictions = s.evictions(a) + s.evictions(b);
  EXPECT_EQ(evictions, 1);
  for (int i = 1; i <= 30; ++i) {
    auto ev = s.schedule(60 + i);
    EXPECT_TRUE(ev.empty()) << "cycle " << i;
    EXPECT_EQ(s.evictions(a) + s.evictions(b), evictions) << "cycle " << i;
  }
  EXPECT_EQ(admitted_pods(s, a), 2);
  EXPECT_EQ(admitted_pods(s, b), 2);
}

// S07 (kubernetes-sigs/kueue#10824): flavors f1 (hosts a1, a2) and f2 (hosts b1, b2; b2 cordoned),
// 8 GPUs per host, nominal 16 GPUs each; ClusterQueue cq lists f1 then f2, whenCanPreempt
// TryNextFlavor, withinClusterQueue LowerPriority; every pod set requires one host
// (kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname). Running: L1 on a1, L2 on a2
// (priority 100) and B1 on b1 (priority 100). H (priority 10000, 1 pod x 8 GPUs) fits f2's quota
// (8 of 16 used) but no f2 host can hold it, so admission goes back to f1 and preempts there.
KueueObjects s07_objects(bool placement_aware) {
  KueueObjects o;
  o.configuration.placement_aware = placement_aware;
  o.topologies.push_back({"hosts", {"kubernetes.io/hostname"}});
  for (const char* f : {"f1", "f2"}) o.flavors.push_back({f, {{"pool", f}}, {}, {}, "hosts"});
  ResourceGroup g;
  g.covered_resources = {std::string(kGpu)};
  g.flavors.push_back({"f1", {{std::string(kGpu), 16000, std::nullopt, std::nullopt}}});
  g.flavors.push_back({"f2", {{std::string(kGpu), 16000, std::nullopt, std::nullopt}}});
  ClusterQueue& cq = add_cq(o, "cq", "", {g});
  cq.flavor_fungibility.when_can_preempt_try_next = true;
  cq.preemption.within_cluster_queue = WithinClusterQueue::kLowerPriority;
  return o;
}

Workload s07_workload(const std::string& name, double creation_s, int32_t priority, int32_t gpus = 8) {
  Workload w = make_workload(name, "cq", gpu_pod(gpus), 1, creation_s, priority);
  w.pod_sets[0].topology.mode = TopologyRequest::Mode::kRequired;
  w.pod_sets[0].topology.level = "kubernetes.io/hostname";
  return w;
}

/// Hosts of the flavors: whole free GPUs, cordoned or not. A pod set with a required topology goes
/// to one host of its nvidia.com/gpu flavor (first fit in host order); what is accepted is bound.
/// Victims of a preemption free their hosts first.
class FakeHosts : public PlacementCheck {
 public:
  struct Host {
    std::string name, flavor;
    int free = 8;
    bool cordoned = false;
  };
  explicit FakeHosts(std::vector<Host> hosts) : hosts_(std::move(hosts)) {}
  std::optional<std::string> check(WorkloadId id, const Workload& w, const Admission& a) override {
    return place(id, w, a, {});
  }
  std::optional<std::string> check_preempting(WorkloadId id, const Workload& w, const Admission& a,
                                              const std::vector<WorkloadId>& victims) override {
    return place(id, w, a, victims);
  }
  /// The host a workload is bound to; "" when none.
  std::string host_of(WorkloadId id) const {
    auto it = bound_.find(id);
    return it == bound_.end() ? "" : hosts_[it->second.first].name;
  }
  int calls = 0;

 private:
  std::optional<std::string> place(WorkloadId id, const Workload& w, const Admission& a, const std::vector<WorkloadId>& victims) {
    ++calls;
    std::vector<Host> hosts = hosts_;
    for (WorkloadId v : victims)
      if (auto it = bound_.find(v); it != bound_.end()) hosts[it->second.first].free += it->second.second;
    const std::string& flavor = a.pod_sets.at(0).flavors.at(0).second;
    const int need = w.pod_sets[0].pod_template.num_gpu * a.pod_sets[0].count;
    for (size_t h = 0; h < hosts.size(); ++h) {
      if (hosts[h].flavor != flavor || hosts[h].cordoned || hosts[h].free < need) continue;
      hosts[h].free -= need;
      for (WorkloadId v : victims) bound_.erase(v);
      hosts_ = std::move(hosts);
      bound_[id] = {h, need};
      return std::nullopt;
    }
    return "no host of flavor " + flavor + " has " + std::to_string(need) + " free GPUs";
  }
  std::vector<Host> hosts_;
  std::map<WorkloadId, std::pair<size_t, int>> bound_;  // workload -> (host, GPUs)
};

std::vector<FakeHosts::Host> s07_hosts() {
  return {{"a1", "f1", 8, false}, {"a2", "f1", 8, false}, {"b1", "f2", 8, false}, {"b2", "f2", 8, true}};
}

// Placement-aware admission (gpufleet's stand-in for Kueue's TAS placement): f2 passes the quota
// check but fails placement, so it counts as a flavor needing preemption and the assigner falls back
// to f1, where preemption works. H preempts L2 (lowest priority, most recently admitted) and is bound
// to a2 in the same schedule() call; L2 then waits (same priority as L1 and B1, b2 cordoned) and
// nothing moves in the next 10 calls.
TEST(KueueScenarios, S07PlacementFailureFallsBackToPreemptionInEarlierFlavor) {
  KueueScheduler s(s07_objects(true));
  FakeHosts hosts(s07_hosts());
  WorkloadId l1 = s.submit(s07_workload("L1", 0, 100));
  WorkloadId l2 = s.submit(s07_workload("L2", 1, 100));
  s.schedule(1, &hosts);
  WorkloadId b1 = s.submit(s07_workload("B1", 2, 100));
  s.schedule(2, &hosts);
  ASSERT_EQ(s.state(l1), WorkloadState::kAdmitted);
  ASSERT_EQ(s.state(l2), WorkloadState::kAdmitted);
  ASSERT_EQ(s.state(b1), WorkloadState::kAdmitted);
  EXPECT_EQ(hosts.host_of(l1), "a1");
  EXPECT_EQ(hosts.host_of(l2), "a2");
  EXPECT_EQ(s.admission(b1)->pod_sets[0].flavors[0].second, "f2");
  EXPECT_EQ(hosts.host_of(b1), "b1");

  WorkloadId h = s.submit(s07_workload("H", 10, 10000));
  auto events = s.schedule(10, &hosts);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Type::kPreempted);
  EXPECT_EQ(events[0].workload, l2);
  EXPECT_EQ(events[0].reason, "InClusterQueue");
  EXPECT_EQ(events[0].by, "default/H");
  EXPECT_EQ(events[1].type, Type::kAdmitted);
  EXPECT_EQ(events[1].workload, h);
  EXPECT_EQ(events[2].type, Type::kPending);
  EXPECT_EQ(events[2].workload, l2);
  ASSERT_EQ(s.state(h), WorkloadState::kAdmitted);
  EXPECT_EQ(s.admission(h)->pod_sets[0].flavors[0].second, "f1");
  EXPECT_EQ(hosts.host_of(h), "a2");
  EXPECT_EQ(hosts.host_of(l2), "");
  EXPECT_EQ(s.state(l1), WorkloadState::kAdmitted);
  EXPECT_EQ(s.state(b1), WorkloadState::kAdmitted);
  EXPECT_EQ(s.evictions(l1) + s.evictions(l2) + s.evictions(b1), 1);
  EXPECT_EQ(s.pending_message(l2), "no host of flavor f2 has 8 free GPUs");  // the first refusal's reason
  for (int i = 1; i <= 10; ++i) {
    EXPECT_TRUE(s.schedule(10 + i, &hosts).empty()) << "call " << i;
  }
  EXPECT_EQ(s.state(h), WorkloadState::kAdmitted);
  EXPECT_EQ(s.evictions(l1) + s.evictions(l2) + s.evictions(b1), 1);
}

// The cap goes down to NoFit when the placement is refused even with the victims gone: a2 has 2 of
// its 8 GPUs taken outside Kueue, so evicting L2 (4 GPUs, the quota's choice) leaves 6 free. L2 is
// not evicted; f1 no longer counts and H preempts B1 (lower priority) in f2 instead, taking b1.
TEST(KueueScenarios, S07PlacementRefusedWithVictimsGoneTriesTheNextFlavor) {
  KueueScheduler s(s07_objects(true));
  std::vector<FakeHosts::Host> h = s07_hosts();
  h[1].free = 6;
  FakeHosts hosts(h);
  WorkloadId l1 = s.submit(s07_workload("L1", 0, 100));
  WorkloadId l2 = s.submit(s07_workload("L2", 1, 100, 4));
  s.schedule(1, &hosts);
  WorkloadId b1 = s.submit(s07_workload("B1", 2, 100));
  s.schedule(2, &hosts);
  ASSERT_EQ(hosts.host_of(l1), "a1");
  ASSERT_EQ(hosts.host_of(l2), "a2");
  ASSERT_EQ(hosts.host_of(b1), "b1");
  WorkloadId hi = s.submit(s07_workload("H", 10, 10000));
  auto events = s.schedule(10, &hosts);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Type::kPreempted);
  EXPECT_EQ(events[0].workload, b1);
  EXPECT_EQ(events[1].type, Type::kAdmitted);
  EXPECT_EQ(events[1].workload, hi);
  EXPECT_EQ(events[2].type, Type::kPending);
  EXPECT_EQ(events[2].workload, b1);
  EXPECT_EQ(s.admission(hi)->pod_sets[0].flavors[0].second, "f2");
  EXPECT_EQ(hosts.host_of(hi), "b1");
  EXPECT_EQ(s.state(l2), WorkloadState::kAdmitted);
  EXPECT_EQ(hosts.host_of(l2), "a2");
  EXPECT_EQ(s.evictions(l1) + s.evictions(l2), 0);
}

// Quota-only admission (Kueue's default, no nodes): f2 fits the quota and H is admitted there without
// preemption; its pod then cannot be placed (the caller's problem, kubernetes-sigs/kueue#4329).
TEST(KueueScenarios, S07QuotaOnlyAdmitsToSecondFlavor) {
  KueueScheduler s(s07_objects(false));
  s.submit(s07_workload("L1", 0, 100));
  s.submit(s07_workload("L2", 1, 100));
  s.schedule(1);
  WorkloadId b1 = s.submit(s07_workload("B1", 2, 100));
  s.schedule(2);
  EXPECT_EQ(s.admission(b1)->pod_sets[0].flavors[0].second, "f2");
  WorkloadId h = s.submit(s07_workload("H", 10, 10000));
  auto events = s.schedule(10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, Type::kAdmitted);
  EXPECT_EQ(s.admission(h)->pod_sets[0].flavors[0].second, "f2");
  EXPECT_EQ(count_events(events, Type::kPreempted), 0);
}

}  // namespace
}  // namespace gpufleet::queue
