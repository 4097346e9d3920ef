// STUB (replaced by the helper's version at merge)
#pragma once
#include <cstdint>
#include <vector>
#include "inputs/sim/workload.h"
namespace gpufleet::plan {
struct DemandBucket {
  double start_s = 0, end_s = 0;
  double gpus = 0;
  double gpus_on_demand_only = 0;
  double gpus_production = 0;
  double cpu_milli = 0, cpu_milli_on_demand_only = 0;
  double memory_bytes = 0, memory_bytes_on_demand_only = 0;
};
struct DemandCurve {
  double bucket_s = 0;
  double horizon_s = 0;
  std::vector<DemandBucket> buckets;
  double gpu_hours = 0;
  double gpu_hours_on_demand_only = 0;
  double peak_gpus = 0;
};
DemandCurve workload_demand(const sim::Workload& workload, double bucket_s, int32_t production_priority);
enum class DemandField { kGpus, kGpusOnDemandOnly, kGpusProduction };
double demand_quantile(const DemandCurve& curve, DemandField field, double q);
}  // namespace gpufleet::plan
