// STUB
#include "plan/cost_bound.h"
#include <algorithm>
namespace gpufleet::plan {
std::vector<CostBoundOption> admissible_options(const PriceCatalog& c, const PlanConstraints& k) {
  std::vector<CostBoundOption> out;
  for (const auto& t : c.instance_types) {
    if (!k.allowed_gpu_models.empty() && std::find(k.allowed_gpu_models.begin(), k.allowed_gpu_models.end(), t.gpu_model) == k.allowed_gpu_models.end()) continue;
    for (const auto& o : t.offerings) {
      if (!k.allowed_zones.empty() && std::find(k.allowed_zones.begin(), k.allowed_zones.end(), o.zone) == k.allowed_zones.end()) continue;
      CostBoundOption x; x.instance_type = t.name; x.zone = o.zone; x.gpu_model = t.gpu_model; x.gpus = t.gpus; x.cpu_milli = t.cpu_milli; x.memory_bytes = t.memory_bytes;
      x.on_demand_usd_per_hour = o.on_demand_usd_per_hour;
      if (k.max_spot_share > 0) { x.spot_usd_per_hour = o.spot_usd_per_hour; x.spot_interruptions_per_hour = o.spot_interruptions_per_hour; }
      for (Commitment m : k.allowed_commitments) { auto p = o.commitment_usd_per_hour(m); if (p && (!x.committed_usd_per_hour || *p < *x.committed_usd_per_hour)) { x.committed_usd_per_hour = p; x.commitment = std::string(commitment_name(m)); } }
      out.push_back(x);
    }
  }
  return out;
}
CostBound cost_lower_bound(const DemandCurve& d, const std::vector<CostBoundOption>&, double) { CostBound b; b.gpu_hours_needed = d.gpu_hours; return b; }
}  // namespace gpufleet::plan
