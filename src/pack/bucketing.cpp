#include "pack/bucketing.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpufleet::pack {

double round_half_even(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(value * scale) / scale;  // default FE_TONEAREST: ties to even
}

std::vector<double> bucket_by_percent(std::span<const int32_t> arrive_pct, std::span<const double> values, int buckets) {
  if (arrive_pct.size() != values.size()) throw std::invalid_argument("bucket_by_percent: size mismatch");
  std::vector<double> sum(static_cast<size_t>(buckets), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(buckets), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const int32_t a = arrive_pct[i];
    if (a < 0 || a >= buckets) continue;  // beyond the curve's range (e.g. arrived above 130%)
    sum[static_cast<size_t>(a)] += values[i];
    ++count[static_cast<size_t>(a)];
  }
  std::vector<double> out(static_cast<size_t>(buckets), std::numeric_limits<double>::quiet_NaN());
  for (int x = 0; x < buckets; ++x) {
    const auto ux = static_cast<size_t>(x);
    if (count[ux] > 0) {
      out[ux] = sum[ux] / static_cast<double>(count[ux]);
      continue;
    }
    // Fallback: events with x-1 <= arrive <= x+1 (also those just past the last bucket).
    double s = 0.0;
    int64_t c = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (arrive_pct[i] >= x - 1 && arrive_pct[i] <= x + 1) {
        s += values[i];
        ++c;
      }
    }
    if (c > 0) out[ux] = s / static_cast<double>(c);
  }
  return out;
}

}  // namespace gpufleet::pack
