// Flavor assignment: which ResourceFlavor each pod set's resources are charged to, and whether the
// workload then fits, must borrow, needs preemption or cannot fit (kubernetes-sigs/kueue
// pkg/scheduler/flavorassigner/flavorassigner.go). Internal to the queue layer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "queue/kueue_objects.h"
#include "queue/admission.h"
#include "queue/quota_tree.h"
#include "queue/workload.h"

namespace gpufleet::queue {

/// Flavor assigner modes, worst first (flavorassigner.go FlavorAssignmentMode).
enum class Mode { kNoFit = 0, kPreempt = 1, kBorrow = 2, kFit = 3 };

/// The flavors chosen for a workload at given pod counts.
struct Assignment {
  Mode mode = Mode::kFit;  ///< the worst mode over pod sets and resources
  bool borrowing = false;  ///< some (flavor, resource) goes above the ClusterQueue's nominal quota
  std::vector<std::pair<int, ResourceAmount>> usage;  ///< QuotaTree flavor-resource -> amount, all pod sets
  std::vector<PodSetAssignment> pod_sets;
  /// Why the mode is below kBorrow, in Kueue's words ("couldn't assign flavors to pod set main:
  /// insufficient unused quota for nvidia.com/gpu in flavor h100, 4 more needed").
  std::string message;
};

/// Kubernetes quantity text of an amount in gpufleet units: "4" for 4000 gpu_milli, "1200m" for 1200.
std::string quantity_text(const std::string& resource, ResourceAmount amount);

/// Assigns flavors to `workload` (pod set p with counts[p] pods) in ClusterQueue `spec` (tree node
/// `cq_node`) at the tree's current usage. Per resource group, flavors in order: a flavor where every
/// asked resource fits without borrowing is taken; a borrowing one is taken unless whenCanBorrow is
/// TryNextFlavor; a preempting one unless whenCanPreempt is TryNextFlavor; else the best seen.
/// Non-preemptible workloads are held to nominal quota. A pod set with a topology request (required,
/// preferred or unconstrained) only takes flavors whose ResourceFlavor in `flavors` has a
/// topologyName, as Kueue's flavor assigner checks for TopologyAwareScheduling. `holders(fr)` is
/// appended to each "insufficient unused quota" reason (gpufleet: who holds the quota in the cohort).
Assignment assign_flavors(const QuotaTree& tree, int cq_node, const ClusterQueue& spec, const std::vector<ResourceFlavor>& flavors,
                          const Workload& workload, const std::vector<int32_t>& counts,
                          const std::function<std::string(int fr)>& holders);

}  // namespace gpufleet::queue
