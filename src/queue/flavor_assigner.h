// Flavor assignment: which ResourceFlavor each pod set's resources are charged to, and whether the
// workload then fits, must borrow, needs preemption or cannot fit (kubernetes-sigs/kueue
// pkg/scheduler/flavorassigner/flavorassigner.go). Internal to the queue layer.
//
// Placement caps (gpufleet's placement-aware admission, the counterpart of Kueue's TAS step in
// flavorassigner.go assignFlavors and tas_flavorassigner.go): a flavor whose pods the cluster could
// not place in this admission attempt carries a cap on its mode. A flavor that fit the quota (with or
// without borrowing) but whose pods could not be placed is capped at kPreempt, as Kueue lowers a Fit
// assignment whose topology assignment fails to Preempt; one that still could not be placed with
// its preemption victims gone is capped at kNoFit. When the refused assignment has flavors with a
// topologyName, only those are capped, as Kueue lowers the pod set's TAS flavor. The flavors are
// then assigned again with the caps, so a flavor whose quota fits but whose nodes cannot hold the
// pods no longer stops the search: with whenCanPreempt TryNextFlavor the earlier flavor where
// preemption works wins (the first preempting flavor in list order), instead of the workload
// waiting on the later flavor for good, as reported against Kueue. The fix proposed upstream
// likewise recomputes the assignment with monotonic Fit -> Preempt -> NoFit downgrades.
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

/// A cap on a flavor's mode for one admission attempt (see the top): the flavor counts at most as
/// `max`; `reason` (why its pods could not be placed) joins the pending message's reasons.
struct FlavorCap {
  std::string flavor;
  Mode max = Mode::kNoFit;
  std::string reason;
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
/// `caps` lower the mode of the flavors they name (placement caps, see the top): a flavor capped at
/// kNoFit is skipped ("flavor F cannot place the pods: ...").
Assignment assign_flavors(const QuotaTree& tree, int cq_node, const ClusterQueue& spec, const std::vector<ResourceFlavor>& flavors,
                          const Workload& workload, const std::vector<int32_t>& counts,
                          const std::function<std::string(int fr)>& holders, const std::vector<FlavorCap>& caps = {});

}  // namespace gpufleet::queue
