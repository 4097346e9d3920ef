// `gpufleet plan`: from a workload, a price catalog and constraints to the configuration that meets
// them at least cost (plan/search.h), with the lower bound, the frontier and the savings waterfall;
// the pools file and Karpenter NodePools a user applies, JSON, CSV and an HTML report. Sharded as a
// Kubernetes Indexed Job: each pod races its slice (--shards, --shard-index or JOB_COMPLETION_INDEX,
// --shard-out) and one merge step (--merge) finishes the plan, byte for byte the one-process plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/workload_source.h"
#include "inputs/sim/work_estimate.h"

namespace gpufleet::cli {

struct PlanCommandOptions {
  WorkloadSource workload;
  std::string catalog_path;      ///< PriceCatalog (and optionally PlanConstraints), required
  std::string constraints_path;  ///< PlanConstraints; empty = those of the catalog file, else the defaults
  uint64_t seed = 42;
  int32_t production_priority = 1000;
  double race_fraction = 0.5;    ///< plan::PlanSearchOptions::race_fraction
  int64_t finalists = 8;
  int refine_rounds = 3;         ///< plan::PlanSearchOptions::refine_rounds
  int threads = 0;               ///< 0 = one per core
  std::string pools_out;         ///< the plan's pools file (simulate --pools)
  std::string karpenter_out;     ///< Karpenter NodePools
  std::string kueue_out;         ///< Kueue ResourceFlavors and a ClusterQueue sized to the plan
  std::string mig_parted_out;    ///< the nvidia/mig-parted config of the plan's MIG pools
  std::string device_plugin_out; ///< the k8s-device-plugin ConfigMap of the plan's time-sliced / MPS pools
  /// Inference services: the planned workload (simulate --workload) and the KEDA ScaledObjects of the
  /// services the plan autoscales (plan/serving_plan.h).
  std::string workload_out;
  std::string keda_out;
  std::string json_path, csv_path, report_path;
  /// The cluster running today (`kubectl get nodes -o json` or a node-pool file,
  /// readers/plan/current_cluster.h): the plan's diff against it (plan/current_diff.h) goes to the
  /// summary, the JSON ("current_diff") and diff_out (markdown). It does not change the plan.
  std::string current_path;
  std::string diff_out;
  /// Sharding: shards > 0 runs one shard's race only and writes shard_out. The index is shard_index,
  /// or the JOB_COMPLETION_INDEX environment variable when shard_index < 0.
  int64_t shards = 0;
  int64_t shard_index = -1;
  std::string shard_out;
  std::vector<std::string> merge_paths;  ///< merge these shard files instead of racing
  bool quiet = false;
  sim::WorkBudget budget;        ///< checked for the largest candidate before any run
};

/// Runs the plan (or one shard, or the merge). Returns 0. Throws InputError / UsageError before any
/// output is written; the outputs are written all or nothing.
int run_plan_command(const PlanCommandOptions& options);

}  // namespace gpufleet::cli
