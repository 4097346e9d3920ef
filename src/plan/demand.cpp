// STUB
#include "plan/demand.h"
#include <algorithm>
#include <cmath>
namespace gpufleet::plan {
DemandCurve workload_demand(const sim::Workload& w, double bucket_s, int32_t prod) {
  DemandCurve c; c.bucket_s = bucket_s; c.horizon_s = w.horizon_s;
  size_t n = static_cast<size_t>(std::ceil(w.horizon_s / bucket_s));
  c.buckets.resize(n);
  for (size_t i = 0; i < n; ++i) { c.buckets[i].start_s = i * bucket_s; c.buckets[i].end_s = std::min(w.horizon_s, (i + 1) * bucket_s); }
  for (const auto& s : w.items) {
    double a = s.arrival_s, e = s.kind == sim::WorkloadKind::kJob ? s.arrival_s + s.duration_s : w.horizon_s;
    e = std::min(e, w.horizon_s);
    double g = s.pods * s.num_gpu * s.gpu_milli / 1000.0;
    for (size_t i = 0; i < n; ++i) {
      auto& b = c.buckets[i];
      double o = std::max(0.0, std::min(e, b.end_s) - std::max(a, b.start_s));
      if (o <= 0) continue;
      double f = o / (b.end_s - b.start_s);
      b.gpus += g * f; b.cpu_milli += s.pods * s.cpu_milli * f; b.memory_bytes += s.pods * double(s.memory_bytes) * f;
      if (s.capacity == sim::CapacityPreference::kOnDemand) { b.gpus_on_demand_only += g * f; b.cpu_milli_on_demand_only += s.pods * s.cpu_milli * f; b.memory_bytes_on_demand_only += s.pods * double(s.memory_bytes) * f; }
      if (s.priority >= prod) b.gpus_production += g * f;
    }
  }
  for (auto& b : c.buckets) { c.gpu_hours += b.gpus * (b.end_s - b.start_s) / 3600; c.gpu_hours_on_demand_only += b.gpus_on_demand_only * (b.end_s - b.start_s) / 3600; c.peak_gpus = std::max(c.peak_gpus, b.gpus); }
  return c;
}
double demand_quantile(const DemandCurve& c, DemandField f, double q) {
  std::vector<double> v;
  for (auto& b : c.buckets) v.push_back(f == DemandField::kGpus ? b.gpus : f == DemandField::kGpusOnDemandOnly ? b.gpus_on_demand_only : b.gpus_production);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(q * v.size()));
  return v[k == 0 ? 0 : k - 1];
}
}  // namespace gpufleet::plan
