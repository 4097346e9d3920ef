// The planner's search: the simulator is the objective. Every candidate (plan/candidate.h) is raced on
// the first part of the workload (successive halving with one cut: Jamieson and Talwalkar,
// "Non-stochastic Best Arm Identification and Hyperparameter Optimization", AISTATS 2016; Li et al.,
// "Hyperband", JMLR 2018), the best `finalists` are simulated again on the whole horizon, and the
// cheapest finalist that meets every constraint is the plan. Deterministic: candidates are numbered,
// every run uses the same seed, and ties go to the lower number, so a run split into shards
// (race_shard, one per Kubernetes Indexed Job pod) and merged (finish_plan) gives the same plan as one
// process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inference/catalog.h"
#include "inputs/plan/candidate_result.h"
#include "inputs/plan/plan_inputs.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/workload.h"
#include "model/gpu_catalog.h"
#include "plan/candidate.h"
#include "plan/cost_bound.h"
#include "plan/demand.h"
#include "plan/mig_pools.h"
#include "sim/results/sim_result.h"

namespace gpufleet::plan {

struct PlanSearchOptions {
  uint64_t seed = 42;                      ///< every simulation's seed
  int32_t production_priority = 1000;      ///< pods at or above it are production (the pending SLO)
  /// The race window: the first race_fraction of the horizon (items arriving in it), (0, 1]; 1 = every
  /// candidate runs the whole horizon. Default 0.5.
  double race_fraction = 0.5;
  /// Candidates the race keeps for the whole horizon, >= 1. Default 8.
  size_t finalists = 8;
  /// Rounds of local search after the finalists (refine): each round simulates, on the whole horizon,
  /// the neighbours of the best configuration so far (committed nodes x0.5, x0.75, x1.25, x1.5;
  /// consolidation off or at 0.3 and 0.6; scale-down after 30 and 300 s) and stops
  /// when none is better. 0 = none. Default 3.
  int refine_rounds = 3;
  /// Threads for independent simulations (util/parallel.h); 0 = one per core.
  int threads = 0;
  /// Demand buckets of the lower bound and of the reserved-node quantiles, seconds, > 0. Default 1 h.
  double bucket_s = 3600;
  /// Required when the workload has inference services.
  const inference::ServingCatalog* serving_catalog = nullptr;
  /// Called once per finished simulation (any thread, serialised by the caller's lock); may be empty.
  std::function<void()> on_simulation_done;
};


/// A cluster over time, from a simulation's per-minute rows (sim::SimResult::timeseries), columns of
/// equal length: every `stride`-th row, the stride the smallest that keeps at most
/// kMaxUtilizationSamples rows (a 40-day horizon has 57,600 minutes; a chart needs far fewer).
struct UtilizationSeries {
  std::vector<double> time_s;             ///< seconds from the start
  std::vector<double> gpus_allocated;     ///< GPUs requested by bound pods (shares count their fraction)
  std::vector<double> gpus_billed;        ///< GPUs of the billed nodes
  std::vector<double> cost_usd_per_hour;  ///< the bill's rate: billed nodes plus unused reservations
  std::vector<int64_t> pending_pods;      ///< pods waiting for capacity
};
inline constexpr size_t kMaxUtilizationSamples = 1500;

/// The rows of `timeseries` as a UtilizationSeries (see there).
UtilizationSeries utilization_series(const std::vector<sim::TimeseriesRow>& timeseries);

/// What bounds every plan of a workload: its demand, the cost lower bound (plan/cost_bound.h) over the
/// items some option holds, and the highest GPU allocation any plan reaches (the same LP minimising
/// the GPU-hours billed; below 100% when CPU or memory binds).
struct PlanBounds {
  DemandCurve demand;
  CostBound bound;
  std::vector<std::string> items_no_option_holds;  ///< names, workload order: they fail in every plan
  double allocation_bound_pct = 100;
  std::string allocation_bound_binding;
  /// With PlanConstraints::min_gpu_allocation: the cost bound of plans that reach it (feasible false:
  /// none does).
  std::optional<CostBound> bound_at_min_allocation;
  /// The mix plan_candidates starts from: the same LP over the GPU types only (`bound` itself when the
  /// options have no CPU-only type), its uses' option numbers those of the whole option list. In
  /// `bound` the CPU-only types lend their CPU and memory to GPU pods (the LP pools capacity), which
  /// no tainted GPU node can; their pool is added to each candidate instead.
  CostBound mix;
};

/// Throws what cost_lower_bound throws.
PlanBounds plan_bounds(const sim::Workload& workload, const std::vector<CostBoundOption>& options, const PlanConstraints& constraints,
                       const PlanSearchOptions& search);

/// The candidates for a workload, numbered in a fixed order:
///  1. the grid: for every admissible option that holds every pod some option holds (one zone per
///     instance type and price set), alone or with one of the two other GPU instance types with at
///     most as many GPUs cheapest per useful GPU (the demand's CPU and memory per GPU counted); committed nodes of the first at the 0,
///     10, 25, 50 and 75% quantiles of the on-demand-only GPU demand (whole nodes, deduplicated; only
///     with a commitment price); with and without its spot pool (when it has spot, max_spot_share > 0
///     and some pod accepts spot);
///  2. the lower bound's mix (PlanBounds::mix): every option the LP optimum buys, with its committed
///     nodes x0.5, x0.75 and x1 and spot where the optimum buys spot, led by a type that holds every pod;
/// each with scale-down after 600 or 60 s and consolidation off or at 0.5; policy gpufleet. When the
/// workload has pods without GPUs and the options a CPU-only type that holds each of them, each pool
/// set is tried again with a pool of the one cheapest per useful core (never committed or spot), which
/// taints the GPU pools (plan/candidate.h). When the workload has items that request MIG devices,
/// every pool set also gets the MIG pools of mig_pool_choices (after its other pools), on demand and,
/// when a MIG pool has a committed price and its median_nodes > 0, again with that many committed
/// nodes (each pool set then twice, on demand first); "holds every
/// pod" above then means every pod without MIG devices. Without such items the list is what it was
/// before MIG pools existed, byte for byte. A pool's
/// max_nodes: the peak demand's nodes (GPU, CPU and memory) x 1.5 + 2.
std::vector<PlanCandidate> plan_candidates(const PlanBounds& bounds, const std::vector<CostBoundOption>& options,
                                           const PlanConstraints& constraints, const sim::Workload& workload);

/// The workload of the race: the items arriving before fraction x horizon, over that horizon.
sim::Workload race_workload(const sim::Workload& workload, double fraction);

/// Simulates one cluster on `workload` and reduces the result (throws what sim::simulate throws).
/// `utilization`, when given, gets the run's cluster over time (utilization_series).
CandidateResult evaluate(const sim::ClusterConfig& cluster, const std::string& policy, const sim::Workload& workload,
                         const PlanSearchOptions& options, size_t index, const std::string& label,
                         sim::SimResult* full_result = nullptr, UtilizationSeries* utilization = nullptr);

/// The race results of the candidates whose number is shard modulo shards (0 <= shard < shards), in
/// number order. One process: shard 0 of 1.
std::vector<CandidateResult> race_shard(const std::vector<PlanCandidate>& candidates, const sim::Workload& workload,
                                        const PlanSearchOptions& options, size_t shard, size_t shards);

/// Whether a result meets the constraints; when not, `why` gets the first one it misses
/// ("production p99 pending 182 s > 60 s (slo.productionP99PendingSeconds)") and `which` the
/// constraint's key ("productionP99PendingSeconds", "maxSpotShare", "minGpuAllocation", "budgetUsd", or "pods" for pods no
/// node of the plan holds). `most_failed_pods`: the failed pods no configuration avoids.
bool meets(const CandidateResult& r, const PlanConstraints& constraints, int64_t most_failed_pods, std::string* why,
           std::string* which = nullptr);

/// One step of the savings waterfall: a configuration simulated on the whole workload.
struct WaterfallStep {
  std::string step;                ///< what the step adds
  CandidateResult result;
  double saving_vs_previous_pct = 0;
  double saving_vs_baseline_pct = 0;
};

struct PlanOutcome {
  DemandCurve demand;
  /// The lower bound over the items some option holds (items_no_option_holds fail in every plan).
  CostBound bound;
  std::vector<std::string> items_no_option_holds;  ///< names, workload order
  /// The highest GPU allocation (GPU-hours requested / billed x 100) any plan reaches: the same LP
  /// minimising the GPU-hours billed. With CPU or memory binding (allocation_bound_binding) it is below
  /// 100: nodes bought for their CPU bring GPUs nobody asks for.
  double allocation_bound_pct = 100;
  std::string allocation_bound_binding;
  std::optional<CostBound> bound_at_min_allocation;  ///< PlanBounds::bound_at_min_allocation
  CandidateResult baseline;                 ///< baseline_cluster, kube's default-scheduler
  std::vector<CandidateResult> race;        ///< every candidate, number order
  /// Whole horizon: the race's best in rank order, then the local search's neighbours.
  std::vector<CandidateResult> finalists;
  std::optional<size_t> recommended;        ///< into finalists; nullopt: none meets the constraints
  std::string infeasible_reason;            ///< when none does: the constraint that binds and the best reached
  std::string binding_constraint;           ///< when none does: meets()'s `which` for the nearest finalist
  std::vector<size_t> frontier;             ///< into finalists: not dominated in (cost, production p99 pending)
  std::vector<WaterfallStep> waterfall;     ///< baseline first, the plan last
  /// The plan's cluster over time (empty without a plan) and the baseline's, on the whole workload.
  UtilizationSeries plan_utilization;
  UtilizationSeries baseline_utilization;
  /// The candidate list (finalists' configurations by index): plan_candidates' list, then the
  /// neighbours the local search added, numbered after it.
  std::vector<PlanCandidate> candidates;
};

/// From the bounds and the race results of every candidate (any order; each number once): ranks them, simulates the
/// finalists and the baseline on the whole workload, picks the plan, builds the frontier and the
/// waterfall. Throws std::invalid_argument when a number is missing or repeated.
PlanOutcome finish_plan(const PlanBounds& bounds, const std::vector<PlanCandidate>& candidates, std::vector<CandidateResult> race,
                        const sim::Workload& workload, const std::vector<CostBoundOption>& options,
                        const PlanConstraints& constraints, const PlanSearchOptions& search);

}  // namespace gpufleet::plan
