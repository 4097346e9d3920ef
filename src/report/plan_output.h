// Writers of `gpufleet plan`'s results (plan/search.h PlanOutcome): the pools file a user applies (the
// NodePoolSet and Autoscaling documents `simulate --pools` reads, so simulating it reproduces the
// plan's cost to the cent), Karpenter NodePools for a real cluster, the summary on stdout, JSON, CSV,
// the HTML report, and the file one shard of a sharded plan writes (read back by
// readers/plan/plan_shard.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inputs/plan/candidate_result.h"
#include "inputs/sim/cluster_config.h"
#include "plan/search.h"
#include "plan/serving_plan.h"

namespace gpufleet::io {

/// The pools file of a cluster as `simulate --pools` reads it (docs/simulate.md): one NodePoolSet
/// document (every pool: instance type, GPUs (none for a CPU-only pool), cpu in milli-cores, memory
/// in bytes, nodes, min, max, labels, taints, prices) and one Autoscaling document (the admission
/// plugins when the cluster runs one, the autoscaler, consolidation and every pool's settings). Numbers print in their shortest exact form, so reading the file back gives the same
/// doubles. `comment` (lines without '#') goes first as comments.
std::string sim_pools_yaml(const sim::ClusterConfig& cluster, const std::string& comment);

/// Karpenter NodePools (karpenter.sh/v1) for the plan's pools: one per pool, its instance type and zone
/// as requirements (node.kubernetes.io/instance-type, topology.kubernetes.io/zone,
/// karpenter.sh/capacity-type), the pool's taints on the template, limits nvidia.com/gpu = max nodes x
/// GPUs (cpu = max nodes x cpu for a CPU-only pool), consolidation as the plan says; the committed
/// nodes as a comment (reservations are bought outside Kubernetes).
std::string karpenter_node_pools_yaml(const sim::ClusterConfig& cluster, const std::string& node_class);

/// Kueue objects sized to the plan (kueue.x-k8s.io/v1beta1): one ResourceFlavor per pool (nodeLabels
/// karpenter.sh/nodepool, the label Karpenter puts on its nodes, with the names of
/// karpenter_node_pools_yaml's NodePools, and the capacity type as karpenter.sh/capacity-type) and one ClusterQueue
/// `cluster_queue` covering cpu, memory and nvidia.com/gpu whose nominalQuota per flavor is what the
/// pool holds at its most nodes (cpu in cores, memory in Mi), so Kueue admits what the plan can run.
/// Its flavors list the CPU-only pools first: Kueue takes the first flavor that fits, so workloads
/// without GPUs go to them and GPU workloads (no nvidia.com/gpu quota there) to the GPU pools.
std::string kueue_objects_yaml(const sim::ClusterConfig& cluster, const std::string& cluster_queue);

/// The summary: the bound, the baseline, the plan (or why there is none), the frontier and the
/// waterfall, as text tables.
std::string plan_summary_text(const plan::PlanOutcome& outcome, const std::string& workload);

/// {"workload", "bound": {...}, "baseline": result, "plan": result|null, "infeasible": "...",
///  "frontier": [result...], "waterfall": [{"step", "result", "saving_vs_previous_pct",
///  "saving_vs_baseline_pct"}], "finalists": [...], "race": [...]}; a result is candidate_result_json.
std::string plan_json(const plan::PlanOutcome& outcome, const std::string& workload);

/// The same with the inference services' plans as "services": [...] and "total_cost_usd" (every
/// node, jobs and services simulated together; null when a plan is missing); without services, the
/// same bytes as plan_json above.
std::string plan_json(const plan::PlanOutcome& outcome, const std::string& workload,
                      const std::vector<plan::ServingPlanResult>& services, std::optional<double> total_cost_usd);

/// A workload of inference services only: {"workload", "services": [...], "total_cost_usd"}. A
/// service: {"service", "model", "slo": {ttft_p99_s, tpot_p99_s}, "plan": configuration|null,
/// "infeasible", "binding", "bound_usd", "skipped": [...], "tried": [configuration...]}; a
/// configuration: instance_type, zone, gpu_model, dtype, tensor_parallel, replicas, autoscaler
/// ("static" or "keda+predictive") with its min/max replicas, capacity, headroom and lead, and the
/// figures (ttft_p99_s, tpot_p99_s, slo_attainment, requests, timed_out, cost_usd, node_cost_usd,
/// gpu_hours, peak_rps, meets).
std::string services_plan_json(const std::string& workload, const std::vector<plan::ServingPlanResult>& services,
                               std::optional<double> total_cost_usd);

/// The services' table: service, instance type, dtype, tp, replicas or autoscaler, TTFT p99, TPOT p99,
/// SLO attainment, cost (its pods), the bound; then why a service has no plan, and the total.
std::string services_summary_text(const std::vector<plan::ServingPlanResult>& services, std::optional<double> total_cost_usd);

/// One row per simulation: phase (race, finalist, baseline, waterfall), index, label and the figures.
std::string plan_csv(const plan::PlanOutcome& outcome);

/// A self-contained page: the bound, the frontier chart (cost against production p99 pending), the
/// waterfall and the finalists' table.
std::string plan_report_html(const plan::PlanOutcome& outcome, const std::string& workload);

/// The nvidia/mig-parted config file (github.com/NVIDIA/mig-parted, examples/config.yaml: `version:
/// v1`, `mig-configs:` config name -> [{devices: all, mig-enabled: true, mig-devices: {profile:
/// count}}]) of the cluster's MIG pools (NodePool::mig_devices): one config per distinct config name, in
/// pool order, the name the pool's nvidia.com/mig.config label gives (plan::kMigConfigLabel; the NVIDIA
/// GPU Operator's MIG manager applies to each node the config this label names), else the pool's name;
/// a MIG pool and its spot pool share their config. Profiles quoted and in name order, as mig-parted's
/// examples write them. `comment` (lines without '#') goes first as comments. Without MIG pools: the
/// comment and a comment saying that the plan has none, and nothing else (not an error).
std::string mig_parted_config_yaml(const sim::ClusterConfig& cluster, const std::string& comment);

/// A ConfigMap (`namespace`/`name`) of NVIDIA k8s-device-plugin configs (its README, "Shared Access to
/// GPUs"), one data key per time-sliced or MPS pool (NodePool::time_slicing_replicas), keyed by the
/// pool's nvidia.com/device-plugin.config label (plan::kDevicePluginConfigLabel, the label that selects
/// a node's config) else its name: `version: v1`, `sharing.timeSlicing.resources` (or `sharing.mps`)
/// `[{name: nvidia.com/gpu, replicas: R}]`, the replicas the simulator gives the pool's GPUs. Without
/// such pools: `comment` and a comment saying so, and no object (not an error).
std::string device_plugin_config_yaml(const sim::ClusterConfig& cluster, const std::string& comment,
                                      const std::string& name = "gpufleet-device-plugin-config",
                                      const std::string& ns = "gpu-operator");

/// A shard's file: {"apiVersion": "plan.gpufleet.io/v1", "kind": "PlanShard", "fingerprint",
/// "shard", "shards", "candidates", "results": [candidate_result_json...]}. Doubles print in their
/// shortest exact form, so the merge reads back the same figures.
std::string plan_shard_json(const std::string& fingerprint, size_t shard, size_t shards, size_t candidates,
                            const std::vector<plan::CandidateResult>& results);

}  // namespace gpufleet::io
