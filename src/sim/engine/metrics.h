// What the run measured: the time series (one row per sample interval: the state after every event
// at or before its time), the time integrals of allocated and billed GPU capacity, the pending-time
// samples, the pending peak, and, at the horizon, the pods' outcomes. It reads the fleet, the books
// and the count of waiting pods; it changes nothing. Its clock observer (advance_to) must run before
// each event.
//
// Pending-time samples: one per pod start, the seconds since the unit arrived or was queued again,
// plus one per pod still pending at the horizon (its wait so far); percentiles by nearest rank.
//
// The pending series counts the pods whose wait those samples measure (`waiting_pods`: the pending
// queue's and the ones Kueue holds). It is read in settled states only: the state after every event
// at one time, which holds until the next event's time (the passing states between events at the
// same time last no time and count nowhere). Each row has the state at its time (pending_pods) and
// the most pods pending in a settled state at any moment of [time_s, time_s + interval)
// (pending_pods_peak); the peak (the most pods, the first time) is the largest of the latter, so
// that a chart of pending_pods_peak reaches exactly the peak.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "sim/engine/billing.h"
#include "sim/engine/fleet.h"
#include "inputs/sim/sim_options.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {


/// Sample count and p50 / p95 / p99 (nearest rank) of `samples`; none without samples.
PendingStats pending_stats(std::vector<double> samples);

class Metrics {
 public:
  /// Rows every options.sample_interval_s from 0 (below the horizon); pods with priority at least
  /// options.production_priority count as production. `waiting_pods` counts the pods waiting now
  /// (called from advance_to only, so it may read modules made after this one).
  Metrics(const SimOptions& options, double horizon_s, const Fleet& fleet, const Billing& billing,
          std::function<int64_t()> waiting_pods);

  /// The clock observer: emits the rows due before t and integrates the GPU counters up to t.
  void advance_to(double t);
  /// Whether the last advance_to found a new peak: the state it saw (held since the previous time,
  /// peak_s()) has more waiting pods than any before. An observer added after this one may then
  /// record what is waiting.
  bool new_peak() const { return new_peak_; }
  /// The most pods waiting in a settled state so far, and the first time (-1: none ever).
  int64_t peak_pods() const { return peak_pods_; }
  double peak_s() const { return peak_s_; }
  /// A pod of this priority started after waiting wait_s seconds.
  void add_pending_sample(int32_t priority, double wait_s);

  /// At the horizon, after Units::report_outcomes has added the samples of the pods still pending:
  /// the pending-time statistics, gpu_allocation_pct_mean and the time series.
  void finish(SimResult& result);

 private:
  void emit_sample(double t, int64_t waiting);

  const SimOptions& options_;
  const double horizon_s_;
  const Fleet& fleet_;
  const Billing& billing_;
  std::function<int64_t()> waiting_pods_;
  double now_s_ = 0;
  bool new_peak_ = false;
  int64_t peak_pods_ = 0;
  double peak_s_ = -1;
  double next_sample_s_ = 0;
  double gpu_alloc_milli_s_ = 0;
  double gpu_capacity_milli_s_ = 0;
  std::vector<double> pending_samples_;
  std::map<int32_t, std::vector<double>> pending_by_priority_;
  std::vector<double> pending_production_;
  std::vector<TimeseriesRow> timeseries_;
};

}  // namespace gpufleet::sim
