#include "place/queued_placement.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "queue/kueue_scheduler.h"
#include "sched/gang_placement.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::place {
namespace {

const queue::ResourceFlavor* find_flavor(const queue::KueueObjects& kueue, const std::string& name) {
  for (const queue::ResourceFlavor& f : kueue.flavors)
    if (f.name == name) return &f;
  return nullptr;
}

// The gang of an admitted workload: its pods with the flavors' node labels and tolerations, and the
// topology request of its first pod set that has one, on the flavor's Topology levels.
sched::GangRequest gang_of(const queue::KueueObjects& kueue, const queue::Workload& w, const queue::Admission& admission) {
  sched::GangRequest g;
  g.name = w.name;  // the pod-group label's value; pods and group share the namespace
  for (size_t s = 0; s < w.pod_sets.size(); ++s) {
    const queue::PodSet& ps = w.pod_sets[s];
    const queue::PodSetAssignment& a = admission.pod_sets.at(s);
    const queue::FlavorInjection injected = queue::flavor_injection(kueue, a);
    for (int32_t i = 0; i < a.count; ++i) {
      Pod p = ps.pod_template;
      p.name = fmt::format("{}-{}-{}", w.name, ps.name, i);
      p.namespace_name = w.namespace_name;
      p.constraints.node_selector.insert(p.constraints.node_selector.end(), injected.node_selector.begin(), injected.node_selector.end());
      p.constraints.tolerations.insert(p.constraints.tolerations.end(), injected.tolerations.begin(), injected.tolerations.end());
      g.pods.push_back(std::move(p));
    }
    if (g.topology.mode != sched::GangTopology::Mode::kNone) continue;
    if (ps.topology.mode != queue::TopologyRequest::Mode::kRequired && ps.topology.mode != queue::TopologyRequest::Mode::kPreferred)
      continue;
    for (const auto& [resource, flavor] : a.flavors) {
      const queue::ResourceFlavor* f = find_flavor(kueue, flavor);
      if (f == nullptr) continue;
      for (const queue::Topology& t : kueue.topologies) {
        if (t.name != f->topology_name) continue;
        const auto at = std::find(t.levels.begin(), t.levels.end(), ps.topology.level);
        if (at == t.levels.end()) continue;
        g.levels.labels = t.levels;
        g.topology.mode = ps.topology.mode == queue::TopologyRequest::Mode::kRequired ? sched::GangTopology::Mode::kRequired
                                                                                      : sched::GangTopology::Mode::kPreferred;
        g.topology.level = static_cast<int32_t>(at - t.levels.begin());
      }
    }
  }
  g.min_member = w.min_member > 0 ? std::min<int32_t>(w.min_member, static_cast<int32_t>(g.pods.size())) : 0;
  return g;
}

// A gang whose pods join a ComputeDomain stays in one NVLink domain (sched/gang_placement.h
// confine_to_one_clique).
void confine_compute_domains(sched::GangRequest& g, const ClusterState& state) {
  const std::vector<std::string> domains = sched::gang_compute_domains(g, state.dra_catalog());
  if (domains.empty()) return;
  std::string names;
  for (const std::string& d : domains) names += (names.empty() ? "" : ", ") + d;
  sched::confine_to_one_clique(g, fmt::format("ComputeDomain{} {} need{} one NVLink domain", domains.size() > 1 ? "s" : "", names,
                                              domains.size() > 1 ? "" : "s"));
}

void record_gang(QueuedOutcome& out, const std::string& key, const sched::GangRequest& g, const sched::GangPlacement& placed) {
  for (size_t i = 0; i < g.pods.size(); ++i) {
    if (placed.nodes[i] == sched::kNoNode) continue;
    GangPod gp;
    gp.pod = g.pods[i];
    gp.gang = key;
    gp.node = placed.nodes[i];
    const DeviceAssignment& d = placed.devices[i];
    std::vector<int32_t> gpus = d.gpus;
    gpus.insert(gpus.end(), d.shared_replicas.begin(), d.shared_replicas.end());
    for (const MigDevice& m : d.mig) gpus.push_back(m.gpu);
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    gp.gpus = std::move(gpus);
    for (const MigDevice& m : d.mig)
      if (gp.mig.find(m.profile) == std::string::npos) gp.mig += (gp.mig.empty() ? "" : ",") + m.profile;
    gp.claims = d.claims;
    out.placed.push_back(std::move(gp));
  }
}

// Placement-aware admission: the gang is placed (committed) as the admission's last step.
class CommitCheck final : public queue::PlacementCheck {
 public:
  CommitCheck(ClusterState& state, sched::Scheduler& scheduler, GoRand& rng, const queue::KueueObjects& kueue)
      : state_(state), scheduler_(scheduler), rng_(rng), kueue_(kueue) {}
  std::optional<std::string> check(queue::WorkloadId id, const queue::Workload& w, const queue::Admission& admission) override {
    sched::GangRequest g = gang_of(kueue_, w, admission);
    confine_compute_domains(g, state_);
    sched::GangPlacement p = sched::place_gang(scheduler_, state_, rng_, g);
    if (!p.placed) return fmt::format("the cluster cannot hold the pods now: {}", p.reason);
    placed_[id] = {std::move(g), std::move(p)};
    return std::nullopt;
  }
  std::map<queue::WorkloadId, std::pair<sched::GangRequest, sched::GangPlacement>> placed_;

 private:
  ClusterState& state_;
  sched::Scheduler& scheduler_;
  GoRand& rng_;
  const queue::KueueObjects& kueue_;
};

}  // namespace

QueuedOutcome place_queued(ClusterState& state, sched::Scheduler& scheduler, GoRand& rng, const queue::KueueObjects& kueue,
                           const std::vector<queue::Workload>& workloads, const std::vector<PodGroup>& pod_groups,
                           const std::vector<std::vector<Pod>>& group_members) {
  QueuedOutcome out;
  if (!workloads.empty()) {
    queue::KueueScheduler kueue_scheduler(kueue);
    for (const queue::Workload& w : workloads) kueue_scheduler.submit(w);
    CommitCheck commit(state, scheduler, rng, kueue);
    const bool aware = kueue.configuration.placement_aware;
    for (const queue::WorkloadEvent& e : kueue_scheduler.schedule(0, aware ? &commit : nullptr)) {
      const queue::Workload& w = kueue_scheduler.workload(e.workload);
      out.admissions.push_back(queue::event_record(kueue_scheduler, e, w.key()));
      if (e.type != queue::WorkloadEvent::Type::kAdmitted) continue;
      if (aware) {
        const auto& [g, p] = commit.placed_.at(e.workload);
        record_gang(out, w.key(), g, p);
        continue;
      }
      sched::GangRequest g = gang_of(kueue, w, *kueue_scheduler.admission(e.workload));
      confine_compute_domains(g, state);
      const sched::GangPlacement p = sched::place_gang(scheduler, state, rng, g);
      if (p.placed) {
        record_gang(out, w.key(), g, p);
      } else {
        out.pending.emplace_back(w.key(), fmt::format("admitted by Kueue to ClusterQueue {}, but its pods do not fit: {}",
                                                      kueue_scheduler.cluster_queue_of(e.workload), p.reason));
        out.pending_priority.push_back(w.priority);
      }
    }
    for (queue::WorkloadId id = 0; id < kueue_scheduler.workload_count(); ++id) {
      if (kueue_scheduler.state(id) != queue::WorkloadState::kPending) continue;
      const queue::Workload& w = kueue_scheduler.workload(id);
      out.pending.emplace_back(w.key(), fmt::format("not admitted by Kueue (ClusterQueue {}): {}", kueue_scheduler.cluster_queue_of(id),
                                                    kueue_scheduler.pending_message(id)));
      out.pending_priority.push_back(w.priority);
    }
  }

  // Pod groups: priority (the highest member's), then input order.
  std::vector<size_t> order(pod_groups.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto priority = [&](size_t g) {
    int32_t p = INT32_MIN;
    for (const Pod& pod : group_members[g]) p = std::max(p, pod.priority);
    return group_members[g].empty() ? 0 : p;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return priority(a) > priority(b); });
  for (size_t g : order) {
    const PodGroup& group = pod_groups[g];
    const std::string key = group.namespace_name + "/" + group.name;
    const auto members = static_cast<int32_t>(group_members[g].size());
    if (members < group.min_member) {  // coscheduling PreFilter
      out.pending.emplace_back(key, fmt::format("pre-filter pod group {}: the count of pods {} is less than minMember {}", key, members,
                                                group.min_member));
      out.pending_priority.push_back(priority(g));
      continue;
    }
    sched::GangRequest request;
    request.name = group.name;
    request.pods = group_members[g];
    request.min_member = group.min_member;
    confine_compute_domains(request, state);
    const sched::GangPlacement p = sched::place_gang(scheduler, state, rng, request);
    if (p.placed) {
      record_gang(out, key, request, p);
    } else {
      out.pending.emplace_back(key, p.reason);
      out.pending_priority.push_back(priority(g));
    }
  }
  return out;
}

}  // namespace gpufleet::place
