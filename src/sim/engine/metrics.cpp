#include "sim/engine/metrics.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/units.h"

namespace gpufleet::sim {
namespace {

// Nearest-rank percentile of sorted samples: the ceil(q * n)-th smallest.
double percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

}  // namespace

PendingStats pending_stats(std::vector<double> samples) {
  PendingStats s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.p50 = percentile(samples, 0.50);
  s.p95 = percentile(samples, 0.95);
  s.p99 = percentile(samples, 0.99);
  return s;
}



Metrics::Metrics(const SimOptions& options, double horizon_s, const Fleet& fleet, const Billing& billing, const PendingQueue& pending)
    : options_(options), horizon_s_(horizon_s), fleet_(fleet), billing_(billing), pending_(pending) {}

void Metrics::advance_to(double t) {
  while (next_sample_s_ < t && next_sample_s_ < horizon_s_) {
    emit_sample(next_sample_s_);
    next_sample_s_ += options_.sample_interval_s;
  }
  const double dt = t - now_s_;
  if (dt > 0) {
    gpu_alloc_milli_s_ += static_cast<double>(fleet_.gpu_allocated_milli()) * dt;
    gpu_capacity_milli_s_ += static_cast<double>(fleet_.live_gpu_capacity_milli()) * dt;
  }
  now_s_ = t;
}

void Metrics::emit_sample(double t) {
  TimeseriesRow row;
  row.time_s = t;
  for (size_t p = 0; p < fleet_.pool_count(); ++p) row.nodes_per_pool.push_back(fleet_.live(p));
  row.gpu_allocated_milli = fleet_.gpu_allocated_milli();
  row.gpu_capacity_milli = fleet_.live_gpu_capacity_milli();
  row.pending_pods = pending_.pods();
  row.cost_usd_per_hour = billing_.cost_rate_usd_per_hour();
  timeseries_.push_back(std::move(row));
}

void Metrics::add_pending_sample(int32_t priority, double wait_s) {
  pending_samples_.push_back(wait_s);
  pending_by_priority_[priority].push_back(wait_s);
  if (priority >= options_.production_priority) pending_production_.push_back(wait_s);
}

void Metrics::finish(const Units& units, SimResult& result) {
  const double h = horizon_s_;
  result.gpu_allocation_pct_mean = gpu_capacity_milli_s_ > 0 ? gpu_alloc_milli_s_ / gpu_capacity_milli_s_ * 100.0 : 0.0;
  result.units.reserve(result.units.size() + units.unit_count());  // one outcome per unit, no regrowth at the run's peak
  for (uint32_t i = 0; i < units.item_count(); ++i) {
    const WorkloadSpec& spec = units.item(i);
    units.for_each_unit_of(i, [&](uint32_t u) {
      const Units::Unit& unit = units.unit(u);
      UnitOutcome out;
      out.name = units.unit_name(u);
      out.state = unit.state;
      out.pods = static_cast<int32_t>(unit.pod_count);
      if (unit.state == UnitState::kCompleted) out.completion_s = unit.end_s;
      if (unit.state == UnitState::kRemoved) out.removed_s = unit.end_s;
      out.starts = unit.starts;
      out.interruptions = unit.interruptions;
      out.consolidations = unit.consolidations;
      out.saved_work_s = unit.saved_s;
      out.reason = units.failure_reason(u);
      switch (unit.state) {
        case UnitState::kCompleted: result.pods_completed += unit.pod_count; break;
        case UnitState::kRunning: result.pods_running += unit.pod_count; break;
        case UnitState::kFailed: result.pods_failed += unit.pod_count; break;
        case UnitState::kRemoved: result.pods_removed += unit.pod_count; break;
        case UnitState::kPending:
        case UnitState::kQueued:
          result.pods_pending += unit.pod_count;
          for (uint32_t k = 0; k < unit.pod_count; ++k) add_pending_sample(spec.priority, h - unit.pending_since_s);
          break;
        case UnitState::kWaiting:  // arrives after the horizon: not part of this run
          break;
      }
      result.units.push_back(std::move(out));
    });
  }
  result.pending = pending_stats(std::move(pending_samples_));
  for (auto& [priority, samples] : pending_by_priority_) result.pending_by_priority[priority] = pending_stats(std::move(samples));
  result.production_priority = options_.production_priority;
  result.pending_production = pending_stats(std::move(pending_production_));
  result.timeseries = std::move(timeseries_);
}

}  // namespace gpufleet::sim
