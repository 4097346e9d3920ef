// Per-percent bucketing of a packing run's event log, as the FGD artifact does it
// (hkust-adsl/kubernetes-scheduler-simulator scripts/analysis.py log_to_csv,
// experiments/analysis/merge_*_discrete.py).
//
// Each event (one per pod attempted, placed or failed) gives arrive = round_half_even(arrived%), where
// arrived% = 100 * arrived gpu_milli / cluster gpu_milli. Bucket X (0..max_pct) is the mean of the
// events whose arrive == X; if there are none, of those with X-1 <= arrive <= X+1; if still none the
// bucket is empty (NaN).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpufleet::pack {

/// Number of buckets of the FGD curves: arrived 0..130 %.
inline constexpr int kCurveBuckets = 131;

/// Round half to even at `decimals` decimals (numpy.round semantics: scale, rint, unscale).
double round_half_even(double value, int decimals);

/// Mean of `values[i]` per bucket of `arrive_pct[i]` (already rounded to whole percents), for
/// buckets 0..buckets-1 with the +-1 fallback above. Shapes: arrive_pct.size() == values.size().
/// Returns NaN for an empty bucket. Throws std::invalid_argument on a size mismatch.
std::vector<double> bucket_by_percent(std::span<const int32_t> arrive_pct, std::span<const double> values,
                                      int buckets = kCurveBuckets);

}  // namespace gpufleet::pack
