// What the run measured: the time series (one row per sample interval: the state after every event
// at or before its time), the time integrals of allocated and billed GPU capacity, the pending-time
// samples, and, at the horizon, the pods' outcomes. It reads the fleet, the books and the pending
// queue; it changes nothing. Its clock observer (advance_to) must run before each event.
//
// Pending-time samples: one per pod start, the seconds since the unit arrived or was queued again,
// plus one per pod still pending at the horizon (its wait so far); percentiles by nearest rank.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/engine/billing.h"
#include "sim/engine/fleet.h"
#include "sim/engine/pending_queue.h"
#include "inputs/sim/sim_options.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {


/// Sample count and p50 / p95 / p99 (nearest rank) of `samples`; none without samples.
PendingStats pending_stats(std::vector<double> samples);

class Metrics {
 public:
  /// Rows every options.sample_interval_s from 0 (below the horizon); pods with priority at least
  /// options.production_priority count as production.
  Metrics(const SimOptions& options, double horizon_s, const Fleet& fleet, const Billing& billing, const PendingQueue& pending);

  /// The clock observer: emits the rows due before t and integrates the GPU counters up to t.
  void advance_to(double t);
  /// A pod of this priority started after waiting wait_s seconds.
  void add_pending_sample(int32_t priority, double wait_s);

  /// At the horizon, after Units::report_outcomes has added the samples of the pods still pending:
  /// the pending-time statistics, gpu_allocation_pct_mean and the time series.
  void finish(SimResult& result);

 private:
  void emit_sample(double t);

  const SimOptions& options_;
  const double horizon_s_;
  const Fleet& fleet_;
  const Billing& billing_;
  const PendingQueue& pending_;
  double now_s_ = 0;
  double next_sample_s_ = 0;
  double gpu_alloc_milli_s_ = 0;
  double gpu_capacity_milli_s_ = 0;
  std::vector<double> pending_samples_;
  std::map<int32_t, std::vector<double>> pending_by_priority_;
  std::vector<double> pending_production_;
  std::vector<TimeseriesRow> timeseries_;
};

}  // namespace gpufleet::sim
