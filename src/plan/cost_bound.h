// STUB (replaced by the helper's version at merge)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "inputs/plan/plan_inputs.h"
#include "plan/demand.h"
namespace gpufleet::plan {
struct CostBoundOption {
  std::string instance_type, zone, gpu_model;
  int32_t gpus = 0; int64_t cpu_milli = 0, memory_bytes = 0;
  double on_demand_usd_per_hour = 0;
  std::optional<double> spot_usd_per_hour;
  std::optional<double> committed_usd_per_hour;
  std::string commitment;
  double spot_interruptions_per_hour = 0;
};
std::vector<CostBoundOption> admissible_options(const PriceCatalog&, const PlanConstraints&);
struct CostBound {
  double cost_usd = 0;
  double on_demand_usd = 0, spot_usd = 0, committed_usd = 0;
  double gpu_hours_needed = 0;
  double billed_gpu_hours = 0;
  std::vector<std::pair<std::string, double>> committed_nodes;
  std::string binding;
};
CostBound cost_lower_bound(const DemandCurve& demand, const std::vector<CostBoundOption>& options, double max_spot_share);
}  // namespace gpufleet::plan
