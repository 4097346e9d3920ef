#include "sim/controllers/kueue_admission.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/metrics.h"

namespace gpufleet::sim {
namespace {

int64_t gpu_usage(const queue::PodSetAssignment& ps) {
  for (const auto& [resource, amount] : ps.usage)
    if (resource == queue::kGpu) return amount;
  return 0;
}

std::string gpu_flavor(const queue::PodSetAssignment& ps) {
  for (const auto& [resource, flavor] : ps.flavors)
    if (resource == queue::kGpu) return flavor;
  return {};
}

}  // namespace

KueueAdmission::KueueAdmission(const queue::KueueObjects& objects, const SimulationModules& modules)
    : m_(modules), kueue_(objects), placement_aware_(objects.configuration.placement_aware) {
  for (const queue::ClusterQueue& cq : objects.cluster_queues) {
    QueueAccount a;
    a.name = cq.name;
    a.cohort = cq.cohort;
    for (const queue::ResourceGroup& g : cq.resource_groups)
      for (const queue::FlavorQuotas& f : g.flavors)
        for (const queue::ResourceQuotaLimits& r : f.resources)
          if (r.name == queue::kGpu) a.nominal_gpu_milli[f.name] += r.nominal_quota;
    a.result.cluster_queue = cq.name;
    a.result.cohort = cq.cohort;
    queue_index_[cq.name] = queues_.size();
    queues_.push_back(std::move(a));
  }
}

void KueueAdmission::start() {
  pass_kind_ = m_.events.register_event("kueue-admission", [this](const Event& e) {
    if (e.subject == 1) wakeup_at_ = -1;  // the wakeup event (subject 1), not an immediate pass (0)
    if (e.subject == 0) pass_due_ = false;
    pass(e.time_s);
  }, {}, false);
  m_.units.set_admission_gate(*this);
  m_.fleet.add_listener(*this);
}

bool KueueAdmission::on_arrival(uint32_t u, double t) {
  const WorkloadSpec& s = m_.units.spec(u);
  const Units::Unit& unit = m_.units.unit(u);
  queue::Workload w;
  w.namespace_name = s.namespace_name;
  w.name = m_.units.unit_name(u);
  w.local_queue = s.queue_name;
  w.priority = s.priority;
  w.creation_s = t;
  w.duration_s = s.duration_s;
  queue::PodSet ps;
  ps.name = "main";
  ps.count = static_cast<int32_t>(unit.pod_count);
  ps.pod_template = m_.units.pod(unit.first_pod);
  // No topology request here: the simulator places by the workload's topology levels, not the
  // flavors' Topology (docs/queues.md).
  w.pod_sets.push_back(std::move(ps));
  w.min_member = static_cast<int32_t>(unit.pod_count);
  const queue::WorkloadId id = kueue_.submit(std::move(w));
  workload_of_unit_[u] = id;
  unit_of_workload_.push_back(u);
  arrival_s_.push_back(t);
  ever_admitted_.push_back(0);
  waits_.push_back(-1);
  last_pending_.emplace_back();
  charged_.emplace_back();
  ++queues_[queue_index_.at(kueue_.cluster_queue_of(id))].result.workloads;
  request_pass(t);
  return true;
}

void KueueAdmission::on_started(uint32_t u, double t) {
  const auto it = workload_of_unit_.find(u);
  if (it == workload_of_unit_.end()) return;
  // Started by check() inside schedule(): Kueue admits it after the check; PodsReady then.
  if (in_schedule_) started_in_schedule_.push_back(it->second);
  else kueue_.pods_ready(it->second, t);
}

void KueueAdmission::on_completed(uint32_t u, double t) {
  const auto it = workload_of_unit_.find(u);
  if (it == workload_of_unit_.end()) return;
  advance_usage(t);
  charge(it->second, -1);
  record(kueue_.finish(it->second, t));
  ++queues_[queue_index_.at(kueue_.cluster_queue_of(it->second))].result.finished;
  request_pass(t);
}

void KueueAdmission::on_node_ready(NodeId /*n*/, double t) {
  if (placement_aware_) request_pass(t);
}

std::optional<std::string> KueueAdmission::check(queue::WorkloadId id, const queue::Workload& workload,
                                                 const queue::Admission& admission) {
  const uint32_t u = unit_of_workload_[id];
  if (m_.units.admit_and_start(u, now_, queue::flavor_injection(kueue_.objects(), admission.pod_sets.front()))) return std::nullopt;
  return fmt::format("the cluster cannot hold the {} pods of {} now", workload.pod_count(), workload.key());
}

void KueueAdmission::request_pass(double t) {
  if (pass_due_) return;
  pass_due_ = true;
  m_.events.schedule(t, pass_kind_, 0);
}

void KueueAdmission::pass(double t) {
  now_ = t;
  advance_usage(t);
  in_schedule_ = true;
  const std::vector<queue::WorkloadEvent> events = kueue_.schedule(t, placement_aware_ ? this : nullptr);
  in_schedule_ = false;
  for (const queue::WorkloadId id : started_in_schedule_) kueue_.pods_ready(id, t);
  started_in_schedule_.clear();
  for (const queue::WorkloadEvent& e : events) {
    const uint32_t u = unit_of_workload_[e.workload];
    QueueResult& q = queues_[queue_index_.at(e.cluster_queue.empty() ? kueue_.cluster_queue_of(e.workload) : e.cluster_queue)].result;
    switch (e.type) {
      case queue::WorkloadEvent::Type::kAdmitted:
        charge(e.workload, +1);
        ++q.admissions;
        if (!ever_admitted_[e.workload]) {
          ever_admitted_[e.workload] = 1;
          ++q.admitted;
          waits_[e.workload] = t - arrival_s_[e.workload];
        }
        // Placement-aware: check() started it already. Quota-only: its pods go to the scheduler.
        // (A later cycle of the same call may have preempted it again: then its admission is gone.)
        if (!placement_aware_ && kueue_.admission(e.workload))
          m_.units.admit(u, t, queue::flavor_injection(kueue_.objects(), kueue_.admission(e.workload)->pod_sets.front()));
        break;
      case queue::WorkloadEvent::Type::kPreempted:
      case queue::WorkloadEvent::Type::kEvicted:
        charge(e.workload, -1);
        ++(e.type == queue::WorkloadEvent::Type::kPreempted ? q.preemptions : q.evictions);
        m_.units.suspend(u, t);
        break;
      default:
        break;
    }
    record(e);
  }
  if (const std::optional<double> next = kueue_.next_wakeup_s(t); next && *next <= m_.events.horizon_s() &&
                                                                   (wakeup_at_ < 0 || *next < wakeup_at_)) {
    wakeup_at_ = *next;
    m_.events.schedule(*next, pass_kind_, 1);
  }
}

void KueueAdmission::charge(queue::WorkloadId id, int sign) {
  Charge& c = charged_[id];
  if (sign > 0) {  // admitted: remember what it holds, for its release (the admission is gone by then)
    const std::optional<queue::Admission>& admission = kueue_.admission(id);
    if (!admission) return;
    c.queue = queue_index_.at(admission->cluster_queue);
    c.gpu_milli.clear();
    for (const queue::PodSetAssignment& ps : admission->pod_sets) c.gpu_milli.emplace_back(gpu_flavor(ps), gpu_usage(ps));
  }
  for (const auto& [flavor, amount] : c.gpu_milli) queues_[c.queue].used_gpu_milli[flavor] += sign * amount;
  if (sign < 0) c.gpu_milli.clear();
}

void KueueAdmission::advance_usage(double t) {
  integrate_usage(queues_, t - usage_at_);
  if (t > usage_at_) usage_at_ = t;
}

void KueueAdmission::integrate_usage(std::vector<QueueAccount>& queues, double dt) {
  if (dt <= 0) return;
  for (QueueAccount& a : queues) {
    for (const auto& [flavor, used] : a.used_gpu_milli) {
      if (used <= 0) continue;
      const auto nominal = a.nominal_gpu_milli.find(flavor);
      const int64_t above = used - (nominal == a.nominal_gpu_milli.end() ? 0 : nominal->second);
      a.gpu_milli_s += static_cast<double>(used) * dt;
      if (above > 0) a.borrowed_gpu_milli_s += static_cast<double>(above) * dt;
    }
  }
}

void KueueAdmission::record(const queue::WorkloadEvent& e) {
  if (e.type == queue::WorkloadEvent::Type::kPending) {
    if (last_pending_[e.workload] == e.message) return;
    last_pending_[e.workload] = e.message;
  } else {
    last_pending_[e.workload].clear();
  }
  events_.push_back(queue::event_record(kueue_, e, kueue_.workload(e.workload).key()));  // "namespace/name", as `by`
}

void KueueAdmission::report(SimResult& result) const {
  // Usage up to the horizon: the last pass may be earlier.
  std::vector<QueueAccount> queues = queues_;
  integrate_usage(queues, m_.events.horizon_s() - usage_at_);
  result.admission = placement_aware_ ? "placement" : "quota";
  std::vector<std::vector<double>> waits(queues_.size());
  for (queue::WorkloadId id = 0; id < waits_.size(); ++id) {
    const size_t q = queue_index_.at(kueue_.cluster_queue_of(id));
    if (waits_[id] >= 0) waits[q].push_back(waits_[id]);
  }
  for (size_t q = 0; q < queues_.size(); ++q) {
    QueueResult r = queues[q].result;
    r.gpu_hours = queues[q].gpu_milli_s / kGpuMilliPerGpu / 3600.0;
    r.borrowed_gpu_hours = queues[q].borrowed_gpu_milli_s / kGpuMilliPerGpu / 3600.0;
    r.borrowed_pct = r.gpu_hours > 0 ? r.borrowed_gpu_hours / r.gpu_hours * 100 : 0;
    r.wait = pending_stats(std::move(waits[q]));
    result.queues.push_back(std::move(r));
  }
  for (queue::WorkloadId id = 0; id < unit_of_workload_.size(); ++id)
    if (kueue_.state(id) == queue::WorkloadState::kPending)
      ++result.queues[queue_index_.at(kueue_.cluster_queue_of(id))].pending_at_end;
  result.queue_events = events_;
}

}  // namespace gpufleet::sim
