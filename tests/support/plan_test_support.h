// What the plan tests share: the instance types of examples/plan/catalog.yaml as the planner's
// options (plan/cost_bound.h CostBoundOption), with the catalog's figures.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "plan/cost_bound.h"

namespace gpufleet::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;

/// An instance type in us-east-1a, on-demand only: `gpus` of `gpu_model` ("" and 0: CPU-only),
/// allocatable cpu_milli and memory_gib, USD per node-hour.
inline plan::CostBoundOption on_demand_option(std::string instance_type, std::string gpu_model, int32_t gpus, int64_t cpu_milli,
                                              int64_t memory_gib, double usd_per_hour) {
  plan::CostBoundOption o;
  o.instance_type = std::move(instance_type);
  o.zone = "us-east-1a";
  o.gpu_model = std::move(gpu_model);
  o.gpus = gpus;
  o.cpu_milli = cpu_milli;
  o.memory_bytes = memory_gib * kGiB;
  o.on_demand_usd_per_hour = usd_per_hour;
  return o;
}

/// p4d.24xlarge (8x A100-40GB, 95690m, 1122Gi): 32.77 USD per hour.
inline plan::CostBoundOption p4d_on_demand() { return on_demand_option("p4d.24xlarge", "A100-40GB", 8, 95690, 1122, 32.77); }

/// c7i.24xlarge, CPU-only (95690m, 181Gi): 4.284 USD per hour.
inline plan::CostBoundOption c7i_on_demand() { return on_demand_option("c7i.24xlarge", "", 0, 95690, 181, 4.284); }

}  // namespace gpufleet::testing
