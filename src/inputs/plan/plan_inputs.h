// What `gpufleet plan` takes in besides the workload: a price catalog (instance types with their GPUs,
// CPU, memory and prices per zone) and the constraints and SLOs a plan must meet. Plain data, no I/O;
// the reader is readers/plan/plan_file.h, the file format docs/plan.md.
//
// Prices are USD per node-hour. A commitment price (reserved 1-year or 3-year, a capacity block) is the
// effective hourly rate of one node covered by it, paid every hour of the horizon whether the node runs
// or not (the simulator's reserved billing, sim/rules/cost.h). Sources of the example figures:
// examples/plan/catalog.yaml names one for each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/sim/field_origin.h"

namespace gpufleet::plan {

/// How a node covered by a commitment is bought (AWS: Reserved Instances / Savings Plans, 1 or 3 years,
/// no upfront; EC2 Capacity Blocks for ML).
enum class Commitment { kReserved1y, kReserved3y, kCapacityBlock };

/// "reserved1y", "reserved3y", "capacityBlock" (the file's keys).
std::string_view commitment_name(Commitment commitment);

/// One instance type's prices in one zone.
struct Offering {
  std::string zone;                           ///< e.g. "us-east-1a"; unique within its instance type
  double on_demand_usd_per_hour = 0;          ///< > 0
  std::optional<double> spot_usd_per_hour;    ///< absent: no spot offering; 0 < spot <= on-demand
  /// Expected spot interruptions per node-hour (the simulator's exponential time to interruption).
  /// >= 0; only with a spot price. AWS Spot Instance Advisor publishes monthly frequency buckets
  /// (<5%, 5-10%, ...): 10% per month is about 1.4e-4 per node-hour.
  double spot_interruptions_per_hour = 0;
  std::optional<double> reserved_1y_usd_per_hour;   ///< 0 < reserved <= on-demand
  std::optional<double> reserved_3y_usd_per_hour;   ///< 0 < reserved <= on-demand
  std::optional<double> capacity_block_usd_per_hour;///< 0 < block <= on-demand
  sim::FieldOrigin origin;                    ///< where the offering was read (its zone field)

  /// The price of `commitment` (nullopt when the offering has none).
  std::optional<double> commitment_usd_per_hour(Commitment commitment) const;
};

/// An instance type: what one node has and what it costs where.
struct InstanceType {
  std::string name;                ///< e.g. "p4d.24xlarge"; unique in the catalog; a DNS label once '.' -> '-'
  /// A model of the GPU catalog (model/gpu_catalog.h), e.g. "A100-40GB"; "" for a CPU-only type.
  std::string gpu_model;
  /// GPUs per node, 1..kMaxGpusPerNode; 0 for a CPU-only type (e.g. m7i.8xlarge), which a plan buys
  /// for the pods without GPUs while its GPU nodes are tainted nvidia.com/gpu (plan/candidate.h).
  int32_t gpus = 0;
  int64_t cpu_milli = 0;           ///< allocatable CPU per node, milli-cores, > 0
  int64_t memory_bytes = 0;        ///< allocatable memory per node, bytes, > 0
  std::vector<Offering> offerings; ///< at least one
  sim::FieldOrigin origin;         ///< where the instance type was read (its name field)
};

/// The catalog: every instance type a plan may buy.
struct PriceCatalog {
  std::vector<InstanceType> instance_types;  ///< at least one, names unique
  std::string source;                        ///< the file it was read from
};

/// The cheapest on-demand price per GPU-hour of `gpu_model` in the catalog: over its instance types
/// with that GPU model (compared ignoring ASCII case) and their offerings, on_demand_usd_per_hour /
/// gpus. nullopt when no instance type has it. (bench-serve's cost per million tokens.)
std::optional<double> on_demand_usd_per_gpu_hour(const PriceCatalog& catalog, std::string_view gpu_model);

/// What a plan must meet and what it may use. Each limit is optional; absent = unconstrained.
struct PlanConstraints {
  /// Production pods' (priority >= the production priority) p99 pending time, seconds. Default 60.
  std::optional<double> production_p99_pending_s = 60;
  /// The most of the GPU-hours billed that may be spot, 0..1. Default 1 (no limit); 0 = no spot.
  double max_spot_share = 1;
  /// GPU models a plan may buy (model/gpu_catalog.h names); empty = every model of the catalog.
  std::vector<std::string> allowed_gpu_models;
  /// Zones a plan may buy in; empty = every zone of the catalog.
  std::vector<std::string> allowed_zones;
  /// Commitments a plan may buy; default all three.
  std::vector<Commitment> allowed_commitments{Commitment::kReserved1y, Commitment::kReserved3y,
                                              Commitment::kCapacityBlock};
  /// FP8 weights for inference services (changes numerics: an explicit opt-in). Default false.
  bool allow_fp8 = false;
  /// The most a plan may cost over the horizon, USD; nullopt = no budget.
  std::optional<double> budget_usd;
  /// The least share of the GPU-hours billed that pods must hold as kept work (allocated minus lost to
  /// restarts, evictions and consolidation moves), (0, 1]; nullopt = no floor. The cost lower bound
  /// honours it too, so a floor no plan can reach at a price shows as a bound.
  std::optional<double> min_gpu_allocation;
  sim::FieldOrigin origin;  ///< where the constraints were read (the document); empty = defaults
  /// Where each limit was read, for "which constraint binds" messages; empty when defaulted.
  sim::FieldOrigin production_p99_pending_origin, max_spot_share_origin, budget_origin, min_gpu_allocation_origin;
};

}  // namespace gpufleet::plan
