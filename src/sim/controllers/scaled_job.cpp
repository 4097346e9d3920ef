#include "sim/controllers/scaled_job.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "replica_autoscaling/scaled_job.h"

namespace gpufleet::sim {

ScaledJobs::ScaledJobs(const Workload& workload, const SimulationModules& modules) : m_(modules) {
  for (const ScaledJobSpec& spec : workload.scaled_jobs) {
    State st;
    st.spec = &spec;
    bool found = false;
    for (uint32_t i = 0; i < workload.items.size(); ++i)
      if (workload.items[i].name == spec.name && workload.items[i].on_demand && workload.items[i].kind == WorkloadKind::kJob) {
        st.item = i;
        found = true;
      }
    if (!found) throw std::invalid_argument(fmt::format("ScaledJob {}: no job template (on-demand job item) of that name", spec.name));
    if (!(spec.polling_interval_s > 0)) throw std::invalid_argument(fmt::format("ScaledJob {}: pollingInterval must be positive", spec.name));
    if (!(spec.target_value > 0)) throw std::invalid_argument(fmt::format("ScaledJob {}: the trigger's value must be positive", spec.name));
    if (spec.max_replica_count < 0 || spec.min_replica_count < 0 || spec.min_replica_count > spec.max_replica_count)
      throw std::invalid_argument(fmt::format("ScaledJob {}: needs 0 <= minReplicaCount <= maxReplicaCount", spec.name));
    st.result.name = spec.name;
    st.result.strategy = std::string(replica_autoscaling::scaled_job_strategy_name(spec.strategy));
    states_.push_back(std::move(st));
  }
}

void ScaledJobs::start() {
  poll_kind_ = m_.events.register_event("scaledjob-poll", [this](const Event& e) { poll(e.subject, e.time_s); },
                                        [this](uint32_t s) { return states_[s].spec->name; });
  m_.units.add_job_listener(*this);
  for (size_t s = 0; s < states_.size(); ++s) m_.events.schedule(0, poll_kind_, static_cast<uint32_t>(s));
}

double ScaledJobs::arrived(const State& st, double t) const {
  double n = st.spec->arrivals_per_second * t;
  for (const QueueArrival& a : st.spec->arrivals) {
    if (a.at_s > t) break;
    n += a.messages;
  }
  return n;
}

void ScaledJobs::poll(size_t s, double t) {
  State& st = states_[s];
  const ScaledJobSpec& spec = *st.spec;
  ScaledJobPoll p;
  p.time_s = t;
  p.queue_length = queue_length(st, t);
  for (uint32_t u : st.jobs) {
    const UnitState state = m_.units.unit(u).state;
    if (state == UnitState::kCompleted || state == UnitState::kFailed || state == UnitState::kRemoved) continue;
    ++p.running;
    if (state != UnitState::kRunning) ++p.pending;
  }
  replica_autoscaling::ScaledJobInputs in;
  in.queue_length = p.queue_length;
  in.target_value = spec.target_value;
  in.max_replica_count = spec.max_replica_count;
  in.min_replica_count = spec.min_replica_count;
  in.running_jobs = p.running;
  in.pending_jobs = p.pending;
  p.created = replica_autoscaling::scaled_job_decision(spec.strategy, in).jobs_to_create;
  for (int64_t i = 0; i < p.created; ++i) {
    const uint32_t u = m_.units.create_job(st.item, t);
    st.jobs.push_back(u);
    owner_[u] = s;
  }
  st.result.jobs_created += p.created;
  st.result.queue.emplace_back(t, p.queue_length);
  st.result.polls.push_back(p);
  const double next = t + spec.polling_interval_s;
  if (next <= m_.events.horizon_s()) m_.events.schedule(next, poll_kind_, static_cast<uint32_t>(s));
}

void ScaledJobs::on_job_started(uint32_t unit, double t) {
  const auto it = owner_.find(unit);
  if (it == owner_.end()) return;
  State& st = states_[it->second];
  if (m_.units.unit(unit).starts > 1) return;  // a restart after an eviction: its message is taken already
  const double take = std::min(st.spec->target_value, queue_length(st, t));
  st.taken += take;
  st.taken_by.emplace_back(t, st.taken);
  st.result.queue.emplace_back(t, queue_length(st, t));
}

void ScaledJobs::on_job_completed(uint32_t unit, double /*t*/) {
  const auto it = owner_.find(unit);
  if (it != owner_.end()) ++states_[it->second].succeeded;
}

void ScaledJobs::report(SimResult& result) const {
  const double h = m_.events.horizon_s();
  for (const State& st : states_) {
    ScaledJobResult r = st.result;
    r.jobs_succeeded = st.succeeded;
    for (uint32_t u : st.jobs)
      if (m_.units.unit(u).state == UnitState::kFailed) ++r.jobs_failed;
    r.succeeded_kept = std::min(r.jobs_succeeded, st.spec->successful_jobs_history_limit);
    r.failed_kept = std::min(r.jobs_failed, st.spec->failed_jobs_history_limit);
    r.jobs_deleted = (r.jobs_succeeded - r.succeeded_kept) + (r.jobs_failed - r.failed_kept);
    r.messages_arrived = arrived(st, h);
    r.messages_taken = st.taken;
    r.queue_at_end = queue_length(st, h);
    // At each row of the time series (written before the controllers report): arrived - taken by then.
    size_t k = 0;
    double taken = 0;
    for (const TimeseriesRow& row : result.timeseries) {
      while (k < st.taken_by.size() && st.taken_by[k].first <= row.time_s) taken = st.taken_by[k++].second;
      r.queue_at_rows.push_back(std::max(0.0, arrived(st, row.time_s) - taken));
    }
    result.scaled_jobs.push_back(std::move(r));
  }
}

}  // namespace gpufleet::sim
