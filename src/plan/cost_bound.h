// A lower bound on what any plan costs: the cheapest fleet, bought from the admissible offerings, whose
// capacity covers the workload's demand curve (plan/demand.h) bucket by bucket. A linear program
// solved with GLPK's simplex (presolve on, messages off; deterministic). docs/bounds.md
// ("The planner's cost lower bound") explains it.
//
//   variables  per option k (an instance type in a zone, admissible_options):
//              R_k >= 0        committed nodes, the same over the whole horizon, billed every hour at
//                              the committed price (only when the option has one);
//              per bucket t:   O_kt >= 0 on-demand nodes, S_kt >= 0 spot nodes (only when the option
//                              has a spot price and max_spot_share > 0).
//   minimize   sum_k R_k c^R_k H + sum_t len_t sum_k (O_kt c^O_k + S_kt c^S_k)      (H, len_t in hours)
//   subject to, per bucket t (rows with a zero right-hand side are left out):
//              sum_k gpus_k (R_k + O_kt + S_kt) >= gpus_t
//              sum_k gpus_k (R_k + O_kt)        >= gpus_on_demand_only_t
//              the same two for CPU (in cores) and memory (in GiB);
//              and once (when 0 < max_spot_share < 1), the spot share of the GPU-hours billed:
//              sum_t len_t sum_k gpus_k S_kt <= max_spot_share x sum_t len_t sum_k gpus_k (R_k + O_kt + S_kt).
//
// Why it is a lower bound. Take any plan that runs the demand as the curve counts it (every pod from
// its arrival, no waiting) on nodes of the admissible options, with at most max_spot_share of its
// GPU-hours on spot. Let O_kt, S_kt be its average on-demand and spot nodes of option k over bucket t
// and R_k its committed nodes. Its capacity covers the demand at every instant, so also on average over
// every bucket; its cost is exactly the objective (prices are per node-hour, linear in node-time);
// its spot share is the share row. So (R, O, S) is feasible and the LP optimum is <= its cost. The LP
// relaxes: whole nodes (counts are fractional), packing (a pod needs its GPUs, CPU and memory on one
// node; here capacity is pooled across nodes), GPU models (a pod's gpu_spec or MIG profile is not
// tied to the models that can run it; only the per-pod check below looks at them), provisioning
// delay (nodes are there the instant they are paid for), and waiting. It is strictly valid for plans
// in which no pod waits; a plan whose pods wait runs the same pod-time later, which moves demand
// between buckets: for waits short against a bucket the bound moves little, for long ones it is an
// estimate only.
//
// The bound that holds regardless of waiting, for any plan that runs the curve's pod-time within the
// horizon: cost >= gpu_hours x (the cheapest price per GPU-hour of any option: its spot price when
// spot is allowed, else the smaller of its on-demand and committed prices), since every GPU-hour run
// is a GPU-hour billed. The LP optimum is never below it: its GPU rows, summed over the buckets, say
// the same.
//
// Size: the LP has (options with a commitment) + buckets x options x (1 or 2) columns. Past
// kCostBoundMaxColumns, adjacent buckets are merged (each merged bucket's demand the length-weighted
// average of its buckets', i.e. the curve at a coarser bucket): averaging the constraints of a
// feasible point keeps it feasible at the same cost, so the merged LP is a relaxation of the fine one
// and still a lower bound, only a weaker one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inputs/plan/plan_inputs.h"
#include "inputs/sim/workload.h"
#include "plan/demand.h"

namespace gpufleet::plan {

struct CostBoundOption {            ///< one buyable (instance type, zone), the cheapest allowed prices
  std::string instance_type, zone, gpu_model;
  int32_t gpus = 0; int64_t cpu_milli = 0, memory_bytes = 0;
  double on_demand_usd_per_hour = 0;
  std::optional<double> spot_usd_per_hour;       ///< nullopt or max_spot_share == 0: no spot
  std::optional<double> committed_usd_per_hour;  ///< the cheapest allowed commitment; nullopt: none
  std::string commitment;                        ///< its name (commitment_name) or ""
  /// Expected spot interruptions per node-hour of the offering (Offering::spot_interruptions_per_hour).
  double spot_interruptions_per_hour = 0;
};

/// Whether one pod of `item` fits one node of `option` on its own: GPUs, CPU, memory and gpu_spec (a
/// model it allows); a pod without GPUs fits any node with the CPU and memory; a MIG pod needs a model
/// with each of its profiles and enough GPUs for its devices (it runs on a MIG pool of the option,
/// plan/mig_pools.h). The one fit check of the planner's search.
bool option_holds(const sim::WorkloadSpec& item, const CostBoundOption& option);

/// The options a plan may buy: every offering of an allowed model (CPU-only types always) in an
/// allowed zone (constraints),
/// in the catalog's order (instance types, then their offerings). Spot only when the offering has a
/// spot price and constraints.max_spot_share > 0; the committed price is the cheapest of the allowed
/// commitments the offering has (ties: the first in allowed_commitments' order).
std::vector<CostBoundOption> admissible_options(const PriceCatalog& catalog, const PlanConstraints& constraints);

/// Past this many columns the LP merges adjacent buckets (see above).
inline constexpr int64_t kCostBoundMaxColumns = 200'000;

struct CostBound {
  /// false: no plan reaches the minimum allocation asked for (the LP has no solution); the figures
  /// below are then 0.
  bool feasible = true;
  double cost_usd = 0;                     ///< the LP optimum over the horizon
  double on_demand_usd = 0, spot_usd = 0, committed_usd = 0;
  double gpu_hours_needed = 0;             ///< DemandCurve::gpu_hours
  double billed_gpu_hours = 0;             ///< GPU-hours the LP optimum pays for
  /// committed node counts of the LP optimum (fractional), per option "type/zone", nonzero only
  std::vector<std::pair<std::string, double>> committed_nodes;
  /// "gpu", "cpu", "memory" or "": the resource whose rows account for the largest part of the optimum,
  /// sum over its rows of dual x right-hand side (by LP duality these parts sum to cost_usd; a dual
  /// alone is per GPU, core or GiB and not comparable across resources); "" when the demand is zero.
  std::string binding;
  int64_t buckets_merged = 1;              ///< buckets of the curve per LP bucket (1: none merged)
  /// What the optimum buys of each option it uses (options order, unused options left out): the
  /// planner seeds candidates from it (as Melange, arXiv 2404.14527, takes its GPU mix from an ILP).
  struct Use {
    size_t option = 0;                     ///< index into the options given
    double committed_nodes = 0;            ///< fractional
    double on_demand_node_hours = 0;
    double spot_node_hours = 0;
    double peak_nodes = 0;                 ///< the most nodes (committed + on-demand + spot) in one bucket
  };
  std::vector<Use> uses;
};

/// Throws std::invalid_argument when there are no options, when an option has no GPUs, CPU or
/// memory or a non-positive price, when max_spot_share is outside [0, 1], or when a pod of the demand
/// (DemandCurve::pod_shapes) fits no option's node: more GPUs per pod than any admissible type has,
/// more CPU or memory than any node with enough GPUs, or no admissible type of its GPU models (or
/// with its MIG profile). The message names the workload item. Throws std::runtime_error if GLPK
/// fails (it should not: the LP is always feasible, on-demand nodes cover any demand, and bounded).
/// min_allocation (0, 1]: the GPU-hours billed may be at most demand.gpu_hours / min_allocation (the
/// allocation floor of PlanConstraints::min_gpu_allocation); nullopt = no such row.
CostBound cost_lower_bound(const DemandCurve& demand, const std::vector<CostBoundOption>& options, double max_spot_share,
                           std::optional<double> min_allocation = std::nullopt);

}  // namespace gpufleet::plan
