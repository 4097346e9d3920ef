// The planner's choice for one LLM inference service of the workload (inputs/sim/inference_service.h):
// which GPU (instance type), tensor parallelism, weights and KV-cache dtype, how many replicas and
// which replica autoscaler, against the service's own SLO (its `slo`: TTFT p99 and TPOT p99). The
// simulator is the objective, as in plan/search.h: every configuration is the service alone,
// simulated on one pool of its instance type (plan/candidate.h candidate_cluster), same seed.
//
// The search, deterministic (no decision depends on the order in which threads finish):
//  1. Engine options: for each GPU model of the admissible options that the serving catalog has
//     figures for, tensor parallelism tp in {1, 2, 4, 8} (at most the GPUs of its largest instance
//     type) and dtype bf16, plus fp8 weights and KV cache only with PlanConstraints::allow_fp8, kept
//     when the model fits the GPU (inference/kv_cache.h kv_cache_budget: its error says why not),
//     when the attention heads divide by tp, and, per (model, dtype), only up to the first tp whose
//     static service meets the SLO (a larger tp costs more GPUs per replica for the same model).
//  2. Per engine option, the fewest static replicas N meeting both p99s: doubling from 1, then
//     bisection, on the instance type of the model cheapest per GPU that holds tp GPUs; at most
//     kMaxServiceGpus GPUs. Assumes more replicas never miss an SLO that fewer
//     meet (true up to the simulation's noise).
//  3. Per engine option that meets the SLO: static N on every instance type of its model (node sizes
//     pack N replicas differently), and KEDA + the predictive scaler on the cheapest, as
//     examples/serving/azure-conv/keda-predictive*.yaml: a ScaledObject on
//     vllm:num_requests_waiting > 5 (polling 15 s, 600 s scale-down window), min 2, max 2N, under the
//     predictive scaler with capacityRpsPerReplica = the busiest simulated minute's arrival rate / N
//     x 1.2, 1.1, 1 and 0.9, headroom 1.3, leadSeconds = the longest replica creation to ready of the
//     static run (node provisioning + cold start) rounded up to a minute, forecast level window
//     300 s; each with the pool's nodes removed after 600 s or 60 s unneeded; only for engine options
//     whose cheapest static service costs at most twice the cheapest's.
//  4. The plan: the cheapest configuration meeting both p99s, by the cost of its pool's nodes (the
//     bill: SimResult::cost_usd of the service alone); ties: the lower pod cost (its pods'
//     chargeback, InferenceServiceResult::cost_usd, docs/serving.md's "cost USD"), then the order
//     tried. The pod cost alone would favour large nodes whose idle GPUs no pod pays for (2 of the 8
//     GPUs of a p5.48xlarge). None: the SLO that binds and the best reached.
// The bound (docs/serving.md "A bound"): a replica of an engine option serves less than
// peak rate / (N - 1) requests/s within the SLO (N - 1 replicas miss it at the peak), so any
// autoscaler needs at least requests / that / 3600 replica-hours, x tp x the cheapest price per GPU-hour
// of its model; bound_usd is the least over the options that meet the SLO (before cold starts, headroom
// and the scaler's granularity; an estimate, since capacity at the peak minute is measured, not proved).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inputs/plan/plan_inputs.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/workload.h"
#include "plan/cost_bound.h"
#include "plan/search.h"

namespace gpufleet::plan {

/// The most GPUs one service's static bisection tries (replicas x tp).
inline constexpr int32_t kMaxServiceGpus = 128;

/// One configuration of a service and what its simulation gave.
struct ServicePlan {
  CostBoundOption option;            ///< the instance type (on-demand price)
  int32_t tensor_parallel = 1;
  bool fp8 = false;                  ///< fp8 weights and fp8 KV cache; else bf16 both
  int32_t replicas = 1;              ///< static: the count; autoscaled: at the start
  bool autoscaled = false;           ///< KEDA + predictive (below); false = static
  int32_t min_replicas = 0, max_replicas = 0;
  double capacity_rps_per_replica = 0, headroom = 0, lead_s = 0;
  /// The pool's Cluster Autoscaler scale-down (unneeded) time, seconds: 600, or 60 for an autoscaled
  /// service whose nodes would otherwise idle 10 minutes after each scale-down.
  double scale_down_s = 600;
  std::string phase;                 ///< "bisection", "static", "keda+predictive"

  // What the simulation of the service alone gave.
  double ttft_p99_s = 0, tpot_p99_s = 0, slo_attainment = 0;
  int64_t requests = 0, timed_out = 0;
  double cost_usd = 0;               ///< the service's pods' chargeback, USD over the horizon
  double node_cost_usd = 0;          ///< every node of its pool (the simulation's cost)
  double gpu_hours = 0;
  double peak_rps = 0;               ///< the busiest simulated minute's arrivals / 60
  double ready_max_s = 0;            ///< the longest replica creation to ready (node and cold start)
  bool meets = false;                ///< both p99s within the SLO

  /// e.g. "g6e.xlarge fp8 tp1, 6 static" or "g6e.xlarge fp8 tp1, keda+predictive 2..12 (7.25 req/s, lead 300 s)".
  std::string label() const;
  std::string dtype() const { return fp8 ? "fp8" : "bf16"; }
};

struct ServingPlanResult {
  std::string service;
  std::string model;
  double slo_ttft_p99_s = 0, slo_tpot_p99_s = 0;
  std::vector<ServicePlan> tried;            ///< every simulation, in a fixed order
  std::optional<size_t> chosen;              ///< into tried
  std::string infeasible_reason;             ///< when none meets the SLO: which p99 binds, the best reached
  std::string binding;                       ///< "ttftP99Seconds", "tpotP99Seconds" or ""
  double bound_usd = 0;                      ///< 0 when no option meets the SLO
  std::vector<std::string> skipped;          ///< engine options left out and why (model does not fit, ...)
};

/// The name of a service's pool in the plan's cluster: "<service>-<instance type stem>".
std::string service_pool_name(const std::string& service, const std::string& instance_type);

/// The cluster of one service configuration: candidate_cluster of one on-demand pool of the option
/// (0..max_nodes nodes, Karpenter-like provisioning, scale-down after `scale_down_s`, no scale-up
/// delay), the pool renamed service_pool_name.
sim::ClusterConfig service_cluster(const std::string& service, const CostBoundOption& option, int32_t max_nodes, double scale_down_s = 600);

/// The most nodes a configuration's pool needs: ceil(max(replicas, max_replicas) x tp / GPUs per node).
int32_t service_max_nodes(const ServicePlan& plan);

/// The workload with the service `inference_index` set to `plan`: its pools [service_pool_name],
/// replicas, gpus = tp, engine tensor parallelism and dtypes, the autoscaler (none for static).
/// Throws std::out_of_range for a bad index.
void apply_service_plan(sim::Workload& workload, size_t inference_index, const ServicePlan& plan);

/// The workload holding only the service `inference_index` (its item and inference entry).
sim::Workload service_workload(const sim::Workload& workload, size_t inference_index);

/// Searches the configurations of the service (see the top of this file). Needs
/// search.serving_catalog. Throws std::invalid_argument when the service has no SLO (neither p99) or
/// the index is bad.
ServingPlanResult plan_service(const sim::Workload& workload, size_t inference_index, const std::vector<CostBoundOption>& options,
                               const PlanConstraints& constraints, const PlanSearchOptions& search);

}  // namespace gpufleet::plan
