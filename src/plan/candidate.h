// A candidate configuration the planner tries: which instance types to buy (in which zone), how many
// nodes of each to commit to, which get a spot pool for the pods that accept spot, how fast idle nodes
// go, whether consolidation runs, and the placement policy. candidate_cluster turns one into the
// simulator's ClusterConfig, the same object `simulate --pools` reads from a pools file, so the
// plan's YAML (report/plan_output.h) reproduces the run exactly.
//
// The knobs and their upstream meaning:
//   pools[].reserved_nodes  nodes covered by the cheapest allowed commitment (AWS Reserved Instances,
//                      Savings Plans or Capacity Blocks), billed every hour of the horizon
//   pools[].spot       a second pool of the same instance type bought as spot; only pods that accept
//                      spot (CapacityPreference::kSpotOk, checkpointed batch) may land there
//   several pools      the Cluster Autoscaler's `price` expander grows, for the pending pods, the pool
//                      that holds them most cheaply: small pods (inference replicas, dev jobs) go to
//                      small nodes and training to large ones, without taints
//   a CPU-only pool    (an option without GPUs) dedicates the GPU nodes to GPU pods: every GPU pool is
//                      tainted nvidia.com/gpu:NoSchedule and the cluster runs kube-apiserver's
//                      ExtendedResourceToleration admission plugin (model/extended_resource_toleration.h),
//                      so pods without GPUs run on the CPU pool and leave the GPU nodes' CPU and memory
//                      to the GPU pods (GKE's and EKS's GPU node pools work so)
//   scale_down_unneeded_s   Cluster Autoscaler --scale-down-unneeded-time (and
//                      --scale-down-delay-after-add, set equal)
//   scale_up_delay_s   Cluster Autoscaler --new-pod-scale-up-delay
//   consolidation      Karpenter-style consolidation (WhenEmptyOrUnderutilized) at the given
//                      threshold of GPUs requested
//   policy             a placement policy (sched/policy_registry.h): `gpufleet` packs, kube's
//                      `default-scheduler` spreads
//   pools[].mig_devices  a MIG pool: every GPU of its nodes partitioned with this layout (mig-parted
//                      `mig-devices`, profile -> count per GPU), the only pools where pods that request
//                      nvidia.com/mig-<profile> fit (the device plugin's mixed strategy advertises MIG
//                      devices, not whole GPUs, on them). The layout must be one NVIDIA's MIG geometry
//                      allows on the model (NVIDIA MIG User Guide, "Supported MIG Profiles"; checked with
//                      model/mig.h layout_for_counts); plan/search.h mig_layout_for_demand chooses it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "model/node.h"
#include "plan/cost_bound.h"

namespace gpufleet::plan {

/// One instance type of a candidate.
struct PoolChoice {
  CostBoundOption option;          ///< the instance type, zone and prices
  int32_t reserved_nodes = 0;      ///< committed nodes, 0..max_nodes; > 0 needs option.committed_usd_per_hour
  bool spot = false;               ///< a spot pool of the type beside the on-demand one; needs option.spot_usd_per_hour
  int32_t max_nodes = 0;           ///< each of its pools' most nodes, >= max(1, reserved_nodes)
  /// MIG devices per GPU (profile -> count > 0), as NodePool::mig_devices; empty = no MIG (whole GPUs).
  /// Non-empty: a MIG pool "<stem>-mig" (and "<stem>-mig-spot" with spot) whose nodes carry the label
  /// nvidia.com/mig.config=<stem>-mig (kMigConfigLabel), the mig-parted config of that name; it needs a
  /// GPU model that has every profile and a layout that fits one GPU (candidate_cluster throws
  /// otherwise). At most one MIG choice per instance type in a candidate; a type may appear twice, once
  /// with whole GPUs and once with MIG. A MIG pool is never tainted: a tainted node would need a
  /// toleration per profile, and ExtendedResourceToleration gives a MIG pod only its own profile's.
  std::map<std::string, int> mig_devices;
};

struct PlanCandidate {
  /// At least one; instance types distinct among the pools without MIG and among the MIG pools; the
  /// first (without MIG) holds every pod that requests no MIG device (a GPU type; a CPU-only pool, when
  /// there is one, holds the pods without GPUs); the MIG pools (PoolChoice::mig_devices) hold the pods
  /// that request MIG devices.
  std::vector<PoolChoice> pools;
  double scale_down_unneeded_s = 600;      ///< CA --scale-down-unneeded-time, seconds, >= 0
  /// CA --new-pod-scale-up-delay, seconds, >= 0: how long a pod stays unschedulable before it counts
  /// for a scale-up. Default 0, CA's own default (the simulator's AutoscalerSettings default is 30).
  double scale_up_delay_s = 0;
  bool consolidation = false;
  double consolidation_threshold = 0.5;    ///< 0..1
  std::string policy = "gpufleet";
  /// Where it came from: "grid" (plan_candidates' grid), "lp" (the lower bound's mix), "local" (a
  /// neighbour of the best finalist).
  std::string origin = "grid";

  /// A short unique description, e.g. "g6.48xlarge us-east-1a (24 reserved1y, spot) + g4dn.12xlarge
  /// us-east-1a, scale-down 60 s, consolidation 0.5, gpufleet"; a MIG pool's layout in it as
  /// "p4d.24xlarge us-east-1a (MIG 1g.5gb x4, 3g.20gb x1)" (profiles in name order), so two candidates
  /// that differ only in a layout have different labels.
  std::string label() const;
  /// The sum of every pool's most nodes (a spot pool counts apart).
  int32_t max_nodes() const;
  /// Committed nodes of every pool.
  int32_t reserved_nodes() const;
  bool any_spot() const;
  /// Whether the GPU pools are dedicated to GPU pods (see above): some pool is CPU-only and some
  /// has GPUs.
  bool dedicated_gpu_nodes() const;
};

/// The taint of a dedicated GPU node (the ExtendedResourceToleration convention: the extended
/// resource's name as its key): nvidia.com/gpu, no value, NoSchedule.
Taint dedicated_gpu_taint();

/// The pools' name stem of an instance type: its name with '.' and '_' replaced by '-' and lower case
/// (p4d.24xlarge -> p4d-24xlarge), a DNS label.
std::string pool_stem(const std::string& instance_type);

/// The node label the NVIDIA GPU Operator's MIG manager watches: the name of the mig-parted config to
/// apply to the node's GPUs (NVIDIA/mig-parted, k8s-mig-manager).
inline constexpr const char* kMigConfigLabel = "nvidia.com/mig.config";
/// The node label that selects the NVIDIA device plugin's config (a key of its ConfigMap), as in the
/// k8s-device-plugin README, "Updating Per-Node Configuration With a Node Label".
inline constexpr const char* kDevicePluginConfigLabel = "nvidia.com/device-plugin.config";

/// The pool name (and mig-parted config name) of a MIG choice of an instance type: "<stem>-mig".
std::string mig_pool_name(const std::string& instance_type);

/// The simulator's cluster for a candidate: for each pool choice, the on-demand pool "<stem>"
/// (reserved_nodes nodes at time 0, min reserved_nodes, max max_nodes, the committed price as its
/// reserved price, zone label topology.kubernetes.io/zone) and, with spot, "<stem>-spot" (0..max_nodes);
/// all provisioned in kProvisionKarpenterS; with a CPU-only pool, every GPU pool has
/// dedicated_gpu_taint() (MIG pools excepted, see PoolChoice::mig_devices) and
/// ClusterConfig::extended_resource_toleration is set; a MIG choice's pools are named mig_pool_name
/// (and "-spot"), have mig_devices and the label kMigConfigLabel = mig_pool_name; the autoscaler with the `price` expander, the candidate's
/// scale-down time and scale-up delay; consolidation as the candidate says. Throws
/// std::invalid_argument for an inconsistent candidate (no pools, an instance type twice, reserved
/// nodes without a committed price, spot without a spot price, max_nodes < 1 or below reserved_nodes,
/// a MIG layout the model does not have or that does not fit one GPU).
sim::ClusterConfig candidate_cluster(const PlanCandidate& candidate);

/// The Cluster Autoscaler baseline a plan is measured against: one on-demand pool per option (0..max
/// nodes each), Cluster Autoscaler defaults (least-waste expander, 10-minute scale-down, no scale-up
/// delay: kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go), 180 s provisioning, no
/// spot, no commitments, no consolidation; run with kube's `default-scheduler`. With `mig_pools` (the
/// plan's MIG choices, PoolChoice::mig_devices; a cluster runs its MIG pods on a MIG node group whether
/// planned or not), one on-demand MIG pool each after those, named and labelled as candidate_cluster
/// names them, 0..max_nodes_per_pool nodes; without, the cluster is what it was before MIG pools.
sim::ClusterConfig baseline_cluster(const std::vector<CostBoundOption>& options, int32_t max_nodes_per_pool,
                                    const std::vector<PoolChoice>& mig_pools = {});

}  // namespace gpufleet::plan
