// What the plan tests share: the instance types of examples/plan/catalog.yaml as the planner's
// options (plan/cost_bound.h CostBoundOption), with the catalog's figures.
#pragma once

#include <cstdint>

#include "plan/cost_bound.h"

namespace gpufleet::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;

/// p4d.24xlarge in us-east-1a (8x A100-40GB, 95690m, 1122Gi), on-demand only: 32.77 USD per hour.
inline plan::CostBoundOption p4d_on_demand() {
  plan::CostBoundOption o;
  o.instance_type = "p4d.24xlarge";
  o.zone = "us-east-1a";
  o.gpu_model = "A100-40GB";
  o.gpus = 8;
  o.cpu_milli = 95690;
  o.memory_bytes = 1122 * kGiB;
  o.on_demand_usd_per_hour = 32.77;
  return o;
}

}  // namespace gpufleet::testing
