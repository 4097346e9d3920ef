#include "sim/engine/metrics.h"

#include <algorithm>
#include <cmath>


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



Metrics::Metrics(const SimOptions& options, double horizon_s, const Fleet& fleet, const Billing& billing,
                 std::function<int64_t()> waiting_pods)
    : options_(options), horizon_s_(horizon_s), fleet_(fleet), billing_(billing), waiting_pods_(std::move(waiting_pods)) {}

void Metrics::advance_to(double t) {
  const int64_t waiting = waiting_pods_();
  new_peak_ = false;
  if (t > now_s_) {  // the state since now_s_ is settled: it held until t
    // The last row's interval holds now_s_ unless it ended there (then a row at now_s_ comes below).
    if (!timeseries_.empty() && timeseries_.back().time_s + options_.sample_interval_s > now_s_)
      timeseries_.back().pending_pods_peak = std::max(timeseries_.back().pending_pods_peak, waiting);
    if (waiting > peak_pods_) {
      peak_pods_ = waiting;
      peak_s_ = now_s_;
      new_peak_ = true;
    }
  }
  while (next_sample_s_ < t && next_sample_s_ < horizon_s_) {
    emit_sample(next_sample_s_, waiting);
    next_sample_s_ += options_.sample_interval_s;
  }
  const double dt = t - now_s_;
  if (dt > 0) {
    gpu_alloc_milli_s_ += static_cast<double>(fleet_.gpu_allocated_milli()) * dt;
    gpu_capacity_milli_s_ += static_cast<double>(fleet_.live_gpu_capacity_milli()) * dt;
  }
  now_s_ = t;
}

void Metrics::emit_sample(double t, int64_t waiting) {
  TimeseriesRow row;
  row.time_s = t;
  for (size_t p = 0; p < fleet_.pool_count(); ++p) row.nodes_per_pool.push_back(fleet_.live(p));
  row.gpu_allocated_milli = fleet_.gpu_allocated_milli();
  row.gpu_capacity_milli = fleet_.live_gpu_capacity_milli();
  row.pending_pods = waiting;
  row.pending_pods_peak = waiting;
  row.cost_usd_per_hour = billing_.cost_rate_usd_per_hour();
  timeseries_.push_back(std::move(row));
}

void Metrics::add_pending_sample(int32_t priority, double wait_s) {
  pending_samples_.push_back(wait_s);
  pending_by_priority_[priority].push_back(wait_s);
  if (priority >= options_.production_priority) pending_production_.push_back(wait_s);
}

void Metrics::finish(SimResult& result) {
  result.gpu_allocation_pct_mean = gpu_capacity_milli_s_ > 0 ? gpu_alloc_milli_s_ / gpu_capacity_milli_s_ * 100.0 : 0.0;
  result.gpu_allocated_hours = gpu_alloc_milli_s_ / 1000.0 / 3600.0;
  result.gpu_billed_hours = gpu_capacity_milli_s_ / 1000.0 / 3600.0;
  result.pending = pending_stats(std::move(pending_samples_));
  for (auto& [priority, samples] : pending_by_priority_) result.pending_by_priority[priority] = pending_stats(std::move(samples));
  result.production_priority = options_.production_priority;
  result.pending_production = pending_stats(std::move(pending_production_));
  result.timeseries = std::move(timeseries_);
}

}  // namespace gpufleet::sim
