// The resources a workload asks for over time, as if every pod ran the moment it arrived: the demand
// curve the planner sizes capacity against (plan/cost_bound.h's lower bound, the candidate plans).
//
// Each job's `pods` pods count from arrival_s for duration_s; each service's `pods` replicas count
// from arrival_s to the horizon; anything running past the horizon is cut at it. Left out, since the
// workload does not say when or how many: the jobs a ScaledJob creates during the run (on_demand
// templates), replicas an autoscaler adds or removes, a rollout's surge. No pod waits, so a plan
// whose pods wait sees the same pod-time shifted later.
//
// GPUs per pod: num_gpu x gpu_milli / 1000 (a shared GPU counts its fraction); a MIG pod counts, per
// device, its profile's compute slices / kMigComputeSlices (7) of a GPU (model/gpu_catalog.h: the
// slices of a profile name are the same on every model that has it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs/sim/workload.h"

namespace gpufleet::plan {

/// Resources the workload asks for over one bucket [start_s, end_s), time-averaged: each job's pods
/// counted from arrival_s for duration_s (as if no pod waited), each service's replicas (spec.pods)
/// from arrival_s to the horizon. gpus = pods x num_gpu x gpu_milli/1000 (shared GPUs count their
/// fraction); MIG requests count the profile's compute slices / the GPU's slices (7).
struct DemandBucket {
  double start_s = 0, end_s = 0;
  double gpus = 0;                    ///< all pods
  double gpus_on_demand_only = 0;     ///< pods that may not run on spot (CapacityPreference::kOnDemand only)
  double gpus_production = 0;         ///< pods with priority >= production_priority
  double cpu_milli = 0, cpu_milli_on_demand_only = 0;
  double memory_bytes = 0, memory_bytes_on_demand_only = 0;
};

/// One distinct per-pod request of the workload (not part of the curve: what a node must hold for one
/// pod, so that plan/cost_bound.h can refuse a workload that no admissible node could run).
struct PodShape {
  std::string item;               ///< the first item (in the workload's order) asking for it, for messages
  int32_t node_gpus = 0;          ///< GPUs one node needs for the pod: num_gpu (0 for CPU-only pods);
                                  ///< a MIG pod ceil(count / the profile's max_count per GPU)
  int64_t cpu_milli = 0, memory_bytes = 0;
  std::string gpu_spec;           ///< allowed models joined by '|'; empty = any
  std::string mig_profile;        ///< the MIG profile it asks for, "" none (needs a model with it)
  bool operator==(const PodShape&) const = default;
};

struct DemandCurve {
  double bucket_s = 0;                ///< > 0
  double horizon_s = 0;
  std::vector<DemandBucket> buckets;  ///< ceil(horizon_s / bucket_s), the last one may be shorter
  double gpu_hours = 0;               ///< integral of gpus over [0, horizon_s]
  double gpu_hours_on_demand_only = 0;
  double peak_gpus = 0;               ///< the largest instantaneous GPU demand (not the bucket average)
  /// Distinct per-pod requests of the items counted (first-seen order); empty when built by hand.
  std::vector<PodShape> pod_shapes;
};

/// The most buckets a curve may have (the planner's LP merges them further, plan/cost_bound.h).
inline constexpr int64_t kMaxDemandBuckets = 10'000'000;

/// Throws std::invalid_argument when bucket_s <= 0 or horizon_s <= 0 (or either is not finite), or
/// when the curve would have more than kMaxDemandBuckets buckets.
DemandCurve workload_demand(const sim::Workload& workload, double bucket_s, int32_t production_priority);

/// The q-quantile (0..1, nearest rank over buckets weighted by their length) of a bucket field: the
/// smallest bucket value v such that the buckets with values <= v cover at least q of the horizon
/// (q = 0: the smallest value, q = 1: the largest). 0 for a curve without buckets. Throws
/// std::invalid_argument when q is outside [0, 1].
enum class DemandField { kGpus, kGpusOnDemandOnly, kGpusProduction };
double demand_quantile(const DemandCurve& curve, DemandField field, double q);

}  // namespace gpufleet::plan
