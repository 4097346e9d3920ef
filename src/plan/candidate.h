// A candidate configuration the planner tries: which instance type to buy (in which zone), how many of
// its nodes to commit to, whether checkpointed pods get a spot pool, how fast idle nodes go and
// whether consolidation runs, and the placement policy. candidate_cluster turns one into the
// simulator's ClusterConfig, the same object `simulate --pools` reads from a pools file, so the
// plan's YAML (report/plan_output.h) reproduces the run exactly.
//
// The knobs and their upstream meaning:
//   reserved_nodes     nodes covered by the cheapest allowed commitment (AWS Reserved Instances,
//                      Savings Plans or Capacity Blocks), billed every hour of the horizon
//   spot_pool          a second pool of the same instance type bought as spot; only pods that accept
//                      spot (CapacityPreference::kSpotOk, checkpointed batch) may land there, and the
//                      Cluster Autoscaler's `price` expander grows it first for them
//   scale_down_unneeded_s   Cluster Autoscaler --scale-down-unneeded-time (and
//                      --scale-down-delay-after-add, set equal)
//   scale_up_delay_s   Cluster Autoscaler --new-pod-scale-up-delay
//   consolidation      Karpenter-style consolidation (WhenEmptyOrUnderutilized) at the given
//                      threshold of GPUs requested
//   policy             a placement policy (sched/policy_registry.h): `gpufleet` packs, kube's
//                      `default-scheduler` spreads
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "plan/cost_bound.h"

namespace gpufleet::plan {

struct PlanCandidate {
  CostBoundOption option;          ///< the instance type, zone and prices
  /// A second on-demand pool of a smaller instance type (0..secondary_max_nodes nodes, no
  /// commitment): the Cluster Autoscaler's `price` expander grows it for the pods it holds more
  /// cheaply, which separates small pods (inference replicas, dev jobs) from training nodes.
  std::optional<CostBoundOption> secondary;
  int32_t secondary_max_nodes = 0;
  int32_t reserved_nodes = 0;      ///< committed nodes, 0..max_nodes; > 0 needs option.committed_usd_per_hour
  bool spot_pool = false;          ///< needs option.spot_usd_per_hour
  double spot_interruptions_per_hour = 0;  ///< the offering's expected interruptions (spot pool)
  double scale_down_unneeded_s = 600;      ///< CA --scale-down-unneeded-time, seconds, >= 0
  /// CA --new-pod-scale-up-delay, seconds, >= 0: how long a pod stays unschedulable before it counts
  /// for a scale-up (the simulator's default 30; CA's own default 0).
  double scale_up_delay_s = 30;
  bool consolidation = false;
  double consolidation_threshold = 0.5;    ///< 0..1
  std::string policy = "gpufleet";
  int32_t max_nodes = 0;           ///< each pool's most nodes, >= reserved_nodes

  /// A short unique description, e.g. "p4d.24xlarge us-east-1a, 40 reserved1y, spot, scale-down 60 s,
  /// consolidation 0.5, gpufleet".
  std::string label() const;
};

/// The pools' name stem of an instance type: its name with '.' and '_' replaced by '-' and lower case
/// (p4d.24xlarge -> p4d-24xlarge), a DNS label.
std::string pool_stem(const std::string& instance_type);

/// The simulator's cluster for a candidate: the on-demand pool "<stem>" (reserved_nodes nodes at time
/// 0, min reserved_nodes, max max_nodes, the committed price as its reserved price, zone label
/// topology.kubernetes.io/zone), with spot_pool "<stem>-spot" (0..max_nodes), with a secondary
/// "<its stem>" (0..secondary_max_nodes); all provisioned in
/// kProvisionKarpenterS; the autoscaler with the `price` expander and the candidate's scale-down time;
/// consolidation as the candidate says. Throws std::invalid_argument for an inconsistent candidate
/// (reserved nodes without a committed price, spot without a spot price, max_nodes < 1).
sim::ClusterConfig candidate_cluster(const PlanCandidate& candidate);

/// The Cluster Autoscaler baseline a plan is measured against: one on-demand pool per option (0..max
/// nodes each), Cluster Autoscaler defaults (least-waste expander, 10-minute scale-down, 180 s
/// provisioning), no spot, no commitments, no consolidation; run with kube's `default-scheduler`.
sim::ClusterConfig baseline_cluster(const std::vector<CostBoundOption>& options, int32_t max_nodes_per_pool);

}  // namespace gpufleet::plan
