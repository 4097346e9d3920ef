#include "plan/demand.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "model/gpu_catalog.h"

namespace gpufleet::plan {
namespace {

// The bucket fields, in DemandBucket's order, as one vector so that one pass fills them all.
enum Field { kGpus, kGpusOd, kGpusProd, kCpu, kCpuOd, kMem, kMemOd, kFields };
using Rates = std::array<double, kFields>;

// A MIG profile's compute slices and the most instances of it on one GPU: the first catalog model
// that has the profile (a profile name fixes its slices: "3g.40gb" is 3 of 7 on every model).
std::pair<int, int> mig_slices(const std::string& profile) {
  for (const GpuModelInfo& model : gpu_catalog())
    if (const MigProfile* p = model.find_mig_profile(profile)) return {p->compute_slices, std::max(1, p->max_count)};
  throw std::invalid_argument(fmt::format("demand: unknown MIG profile '{}'", profile));
}

}  // namespace

DemandCurve workload_demand(const sim::Workload& workload, double bucket_s, int32_t production_priority) {
  if (!(bucket_s > 0) || !std::isfinite(bucket_s))
    throw std::invalid_argument(fmt::format("demand: bucket length {} s is not positive", bucket_s));
  const double horizon = workload.horizon_s;
  if (!(horizon > 0) || !std::isfinite(horizon))
    throw std::invalid_argument(fmt::format("demand: horizon {} s is not positive", horizon));
  const double count = std::ceil(horizon / bucket_s);
  if (count > static_cast<double>(kMaxDemandBuckets))
    throw std::invalid_argument(fmt::format("demand: {} s over buckets of {} s is more than {} buckets", horizon,
                                            bucket_s, kMaxDemandBuckets));
  auto n = static_cast<size_t>(count);
  if (n > 1 && static_cast<double>(n - 1) * bucket_s >= horizon) --n;  // ceil of a quotient rounded up
  if (n == 0) n = 1;

  DemandCurve curve;
  curve.bucket_s = bucket_s;
  curve.horizon_s = horizon;
  curve.buckets.resize(n);
  for (size_t k = 0; k < n; ++k) {
    curve.buckets[k].start_s = static_cast<double>(k) * bucket_s;
    curve.buckets[k].end_s = k + 1 == n ? horizon : static_cast<double>(k + 1) * bucket_s;
  }
  auto bucket_of = [&](double t) {
    const double k = std::floor(t / bucket_s);
    return k <= 0 ? size_t{0} : std::min(n - 1, static_cast<size_t>(k));
  };
  // Per bucket: averaged amounts of the partly covered buckets (direct), and a difference array of
  // the rates of wholly covered ones (O(items + buckets), a service spans every bucket).
  std::vector<Rates> direct(n, Rates{}), diff(n + 1, Rates{});
  std::vector<std::pair<double, double>> events;  // (time, GPU change) for the instantaneous peak
  std::set<std::tuple<int32_t, int64_t, int64_t, std::string, std::string>> shape_keys;  // requests seen

  for (const sim::WorkloadSpec& spec : workload.items) {
    if (spec.kind == sim::WorkloadKind::kJob && spec.on_demand) continue;  // a ScaledJob's template
    const double a = std::max(0.0, spec.arrival_s);
    const double b = std::min(horizon, spec.kind == sim::WorkloadKind::kJob ? spec.arrival_s + spec.duration_s : horizon);
    if (!(b > a)) continue;

    // One pod's request.
    PodShape shape;
    shape.item = spec.name;
    shape.cpu_milli = spec.cpu_milli;
    shape.memory_bytes = spec.memory_bytes;
    double pod_gpus = 0;
    if (!spec.mig_requests.empty()) {
      for (const MigRequest& r : spec.mig_requests) {
        const auto [slices, per_gpu] = mig_slices(r.profile);
        pod_gpus += static_cast<double>(r.count) * slices / kMigComputeSlices;
        shape.node_gpus = std::max(shape.node_gpus, (r.count + per_gpu - 1) / per_gpu);
        shape.mig_profile = r.profile;
      }
      shape.gpu_spec = spec.gpu_spec;
    } else if (spec.num_gpu > 0 && spec.gpu_milli > 0) {
      pod_gpus = static_cast<double>(spec.num_gpu) * spec.gpu_milli / kGpuMilliPerGpu;
      shape.node_gpus = spec.num_gpu;
      shape.gpu_spec = spec.gpu_spec;
    }
    if (shape_keys.emplace(shape.node_gpus, shape.cpu_milli, shape.memory_bytes, shape.gpu_spec, shape.mig_profile).second)
      curve.pod_shapes.push_back(std::move(shape));

    const double pods = spec.pods;
    const bool od = spec.capacity == sim::CapacityPreference::kOnDemand;
    const bool prod = spec.priority >= production_priority;
    Rates rate{};
    rate[kGpus] = pods * pod_gpus;
    rate[kGpusOd] = od ? rate[kGpus] : 0;
    rate[kGpusProd] = prod ? rate[kGpus] : 0;
    rate[kCpu] = pods * static_cast<double>(spec.cpu_milli);
    rate[kCpuOd] = od ? rate[kCpu] : 0;
    rate[kMem] = pods * static_cast<double>(spec.memory_bytes);
    rate[kMemOd] = od ? rate[kMem] : 0;

    curve.gpu_hours += rate[kGpus] * (b - a) / 3600.0;
    curve.gpu_hours_on_demand_only += rate[kGpusOd] * (b - a) / 3600.0;
    if (rate[kGpus] > 0) {
      events.emplace_back(a, rate[kGpus]);
      events.emplace_back(b, -rate[kGpus]);
    }

    auto add_part = [&](size_t k, double from, double to) {
      const DemandBucket& bk = curve.buckets[k];
      const double share = std::clamp((std::min(to, bk.end_s) - std::max(from, bk.start_s)) / (bk.end_s - bk.start_s), 0.0, 1.0);
      for (int f = 0; f < kFields; ++f) direct[k][f] += rate[f] * share;
    };
    const size_t i = bucket_of(a), j = bucket_of(b);
    if (i == j) {
      add_part(i, a, b);
    } else {
      add_part(i, a, b);
      add_part(j, a, b);
      if (j > i + 1)
        for (int f = 0; f < kFields; ++f) {
          diff[i + 1][f] += rate[f];
          diff[j][f] -= rate[f];
        }
    }
  }

  Rates running{};
  for (size_t k = 0; k < n; ++k) {
    for (int f = 0; f < kFields; ++f) running[f] += diff[k][f];
    Rates v{};
    for (int f = 0; f < kFields; ++f) v[f] = std::max(0.0, running[f] + direct[k][f]);  // no -0.0 from cancellation
    DemandBucket& bk = curve.buckets[k];
    bk.gpus = v[kGpus];
    bk.gpus_on_demand_only = v[kGpusOd];
    bk.gpus_production = v[kGpusProd];
    bk.cpu_milli = v[kCpu];
    bk.cpu_milli_on_demand_only = v[kCpuOd];
    bk.memory_bytes = v[kMem];
    bk.memory_bytes_on_demand_only = v[kMemOd];
  }

  // Peak: intervals are half-open, so at equal times the ends come before the starts.
  std::sort(events.begin(), events.end());  // (t, negative change) sorts before (t, positive change)
  double level = 0;
  for (const auto& [t, change] : events) {
    level += change;
    curve.peak_gpus = std::max(curve.peak_gpus, level);
  }
  return curve;
}

double demand_quantile(const DemandCurve& curve, DemandField field, double q) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument(fmt::format("demand quantile: q = {} is outside [0, 1]", q));
  std::vector<std::pair<double, double>> values;  // (value, length)
  values.reserve(curve.buckets.size());
  double total = 0;
  for (const DemandBucket& b : curve.buckets) {
    const double v = field == DemandField::kGpus             ? b.gpus
                     : field == DemandField::kGpusOnDemandOnly ? b.gpus_on_demand_only
                                                               : b.gpus_production;
    const double len = std::max(0.0, b.end_s - b.start_s);
    values.emplace_back(v, len);
    total += len;
  }
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank, weighted: the first value whose cumulative length reaches q of the total (with a
  // relative tolerance, so that q = 0.5 over two equal buckets picks the lower one: rank ceil(0.5 n)).
  const double target = q * total - 1e-12 * total;
  double covered = 0;
  for (const auto& [v, len] : values) {
    covered += len;
    if (covered >= target) return v;
  }
  return values.back().first;
}

}  // namespace gpufleet::plan
