// The structured-parameters allocator of Dynamic Resource Allocation: which devices of the
// ResourceSlices reachable from one node satisfy a pod's unallocated ResourceClaims. Modelled on
// kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured (allocator.go and
// its internal/{stable,incubating,experimental}/allocator_*.go and pools_*.go variants), the search
// that kube-scheduler's DynamicResources plugin runs in Filter
// (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go). Semantics kept:
//  - Pools (GatherPools): slices grouped by (driver, pool name); only the highest pool.generation
//    counts; a pool is incomplete when it has fewer slices of that generation than
//    resourceSliceCount and invalid when a device name repeats. A slice reaches the node by nodeName,
//    allNodes or nodeSelector. Devices of incomplete or invalid pools are not allocated (an `All`
//    request meeting one fails with upstream's error).
//  - Claims in order, each claim's requests in order, each request's devices one after the other;
//    for each device the candidates in pool order then slice and device order; the first complete
//    solution wins (an exhaustive depth-first search with backtracking, upstream's allocateOne).
//    firstAvailable subrequests are tried in order; the first that can be allocated (with everything
//    after it) wins.
//  - A device is a candidate when it is not in use (held by an allocated claim, ClusterState, or
//    taken earlier in this search), every selector of the request's DeviceClass and of the request
//    evaluates true, its consumesCounters fit the counters its pool's sharedCounters have left after
//    the devices in use (partitionable devices, KEP-4815), and the claim's matchAttribute constraints
//    still hold (same attribute value across the constrained requests; a device without the
//    attribute never satisfies one).
//  - ExactCount takes `count` devices; All takes every selectable device the node reaches (at least
//    one), all of which must be available.
//  - At most 32 devices per claim (AllocationResultsMaxSize).
//  - Differences that keep the search short, with the same first solution: the devices of one
//    request are tried as sets (ascending candidate order), not as every ordering of them; a request
//    with fewer selectable free devices than its count fails at once ("cannot allocate all claims",
//    where upstream searches until its filter timeout); and a search longer than
//    kDraAllocateMaxSteps ends with "timed out trying to allocate devices".
//  - A CEL runtime error aborts the allocation with upstream's error ("class <c>: selector #<i>: CEL
//    runtime error: <e>" or "claim <ns>/<name>: selector #<i>: CEL runtime error: <e>"); the plugin
//    turns it into the pod's failure as kube's Filter does (an Error status).
//  - Consumable capacity (KEP-5075), only with the DRAConsumableCapacity gate
//    (DraCatalog::consumable_capacity; upstream's experimental allocator, internal/experimental/
//    allocator_experimental.go allocateDevice and consumable_capacity.go): a device with
//    allowMultipleAllocations is never "in use"; it may serve several requests and claims (and one
//    request more than once) while, for each of its capacities, what its allocations consume
//    (model/dra.h dra_consumed_capacity_milli: the request rounded by the requestPolicy, the
//    policy's default, or the whole capacity) sums to at most the capacity. Its results carry a
//    shareID (dra_share_id, deterministic) and consumedCapacity. On an ordinary device,
//    capacity.requests is a filter: each named capacity must be at least the amount. A request naming
//    a capacity the device does not publish never gets it. Gate off: those fields are ignored and a
//    device held by shared allocations (a claim's status) is in use.
//  - Device taints (KEP-5055, GA in Kubernetes 1.37; upstream allocateDevice and allTaintsTolerated):
//    a device with a NoSchedule or NoExecute taint (its own, or a DeviceTaintRule's: model/dra.h
//    dra_device_taints) that the request's tolerations do not tolerate is not taken for the request;
//    None taints are ignored. Matching is the node rule (taint_toleration.h find_untolerated_taint).
//    An All request that meets such a device fails, as upstream's ("All mode requires that all
//    devices must be usable").
// Difference: upstream gathers pools from a Go map (no fixed order); gpufleet takes pools in
// (driver, pool name) order so that the same input gives the same devices.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/dra.h"
#include "model/node.h"

namespace gpufleet::sched {

/// The most allocateOne steps one search takes on one node before it gives up with kube's
/// "timed out trying to allocate devices" (DynamicResourcesArgs.filterTimeout, 10 s by default, in
/// kubernetes staging/src/k8s.io/kube-scheduler/config/v1/types.go): a step bound instead of a clock,
/// so that the same input always gives the same answer. A million steps take well under a second.
inline constexpr int64_t kDraAllocateMaxSteps = 1'000'000;

/// A claim the search allocates: its key ("namespace/name", for messages and results) and its spec.
struct DraClaimToAllocate {
  std::string key;
  const DraClaimSpec* spec = nullptr;
};

/// The search's outcome: one allocation per claim (same order) when every claim could be allocated,
/// nullopt when not (the node cannot satisfy them: kube's "cannot allocate all claims"); `error` is
/// set for a failure that is no "does not fit" (a CEL runtime error, an unknown DeviceClass, an All
/// request over an incomplete pool, a constraint that an All request breaks).
struct DraAllocateResult {
  std::optional<std::vector<DraAllocation>> allocations;
  std::string error;
};

/// Allocates `claims` on `node` with the devices of `catalog` that `state` does not hold.
/// `allocation_count`, when given, is incremented per allocateOne call (upstream's Stats).
DraAllocateResult dra_allocate(const DraCatalog& catalog, const ClusterState& state, const Node& node,
                               std::span<const DraClaimToAllocate> claims, int64_t* allocation_count = nullptr);

/// A device of an already allocated claim with a NoSchedule or NoExecute taint that the request it
/// was allocated for does not tolerate (KEP-5055: "the scheduler will not let new pods reserve the
/// claim while it has these tainted devices").
struct DraTaintedAllocation {
  std::string device_id;  ///< driver/pool/device
  Taint taint;
};

/// The first device of `allocation` (in result order) with a taint that its tolerations do not
/// tolerate, or nullopt. Its tolerations: those the result recorded, else those of its request in
/// `spec` ("req" or "req/sub"). Devices no slice publishes any more have no taints.
std::optional<DraTaintedAllocation> dra_untolerated_allocated_taint(const DraCatalog& catalog, const DraClaimSpec& spec,
                                                                    const DraAllocation& allocation);

/// Whether an allocation's devices are reachable from `node` (its node selector; none: every node).
bool dra_allocation_reaches(const DraAllocation& allocation, const Node& node);

}  // namespace gpufleet::sched
