// DynamicResources: kube-scheduler's plugin for Dynamic Resource Allocation (resource.k8s.io/v1), as in
// kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, at the
// PreFilter and Filter points; the devices of the chosen node are picked by dra_assign_claims (what
// upstream's Reserve takes from the Filter's cached result, recomputed here: the search is
// deterministic).
//
// PreFilter: a pod without spec.resourceClaims is Skip (its Filter never runs: no cost for
// device-plugin pods). Otherwise each pod claim resolves to a ResourceClaim: a named claim is looked
// up in the catalog; a template claim is the pod's own claim generated from the ResourceClaimTemplate
// (key "namespace/<pod>-<claim>", model/dra.h). Rejections, all UnschedulableAndUnresolvable as
// upstream's statusUnschedulable:
//   - `resourceclaim.resource.k8s.io "<name>" not found` (a named claim that does not exist; the
//     lister's NotFound error, which upstream returns as the reason);
//   - `resourceclaimtemplate.resource.k8s.io "<name>" not found` (the resourceclaim controller cannot
//     create the pod's claim; upstream the pod waits in PreEnqueue with the controller's error);
//   - "resourceclaim in use" (allocated and already reserved for 256 other consumers);
//   - "request <r>: device class <c> does not exist" ("<r>/<s>" for a subrequest) for an unallocated claim.
// Filter (not cacheable: a node's answer depends on devices reachable from other nodes and on the
// claims allocated anywhere): "resourceclaim not available on the node" when an allocated claim's node
// selector excludes the node; "cannot allocate all claims" when the structured allocator
// (dra_allocator.h) finds no devices on the node for the unallocated claims (both
// UnschedulableAndUnresolvable upstream, so preemption does not consider such nodes). An allocator
// error (a CEL runtime error) is, upstream, an Error status that aborts the cycle; here the node is
// rejected with the error's words as a per-node reason, so the pod stays pending with that message.
// PostFilter (upstream's PostFilter): when no node fits a pod with claims, an allocated claim of the
// pod that the Filter found "not available" on some node (upstream's unavailableClaims: the claims
// whose allocation does not reach a node rejected with kNotAvailable) and that is reserved for no pod
// (no bound pod holds it, and its status.reservedFor names no pod but this one) is deallocated
// (ClusterState::deallocate_dra_claim; upstream clears status.allocation and reservedFor), so that a
// later cycle allocates it where the pod fits; Unschedulable "deallocation of ResourceClaim
// completed". The first such claim in the pod's spec order is taken (upstream iterates a Go map: a
// random one). None: Unschedulable "still not schedulable". A pod without claims: Unschedulable with
// no words (upstream says "no new claims to deallocate", which kube >= 1.32 prints before every
// "preemption: ..." message; gpufleet leaves it out, so messages of pods without claims stay as kube
// printed them before DRA). The scheduler joins the words of the PostFilter plugins with ", ".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/framework/interface.h"
#include "sched/framework/node_to_status.h"
#include "sched/plugins/dra_allocator.h"

namespace gpufleet::sched {

class DynamicResources final : public PreFilterPlugin, public FilterPlugin, public PostFilterPlugin, public NamedPlugin<"DynamicResources"> {
 public:
  static constexpr FilterReason kReasons[] = {
      {"cannot allocate all claims", false},
      {"resourceclaim not available on the node", false},
      {"resource claim allocation failed", false, /*per_node=*/true},
  };
  static constexpr FilterCode kCannotAllocate{kReasons[0]};
  static constexpr FilterCode kNotAvailable{kReasons[1]};
  static constexpr FilterCode kAllocationError{kReasons[2]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  bool filter_cacheable() const override { return false; }
  /// Skip for a pod without claims; the pod's claims into `cycle`; or a rejection (see above).
  Status pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const override;
  using FilterPlugin::filter;
  /// kFits, kNotAvailable, kCannotAllocate or kAllocationError.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// The allocator's error on node n for kAllocationError.
  std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const override;
  /// Deallocates one unavailable claim reserved for no pod (see above); always Unschedulable.
  Status post_filter(const Pod& pod, ClusterState& state, const NodeToStatus& statuses, CycleState& cycle, Handle& handle,
                     PostFilterResult& result) const override;
  /// PostFilter's words (upstream's).
  static constexpr std::string_view kDeallocated = "deallocation of ResourceClaim completed";
  static constexpr std::string_view kStillNotSchedulable = "still not schedulable";
};

/// The pod's claims resolved against the state (see PreFilter above).
struct DraPodClaims {
  Status status;  ///< Success, or the PreFilter rejection
  /// One per pod claim, in spec order: key, and the allocation when the claim is already allocated.
  std::vector<std::pair<std::string, const DraAllocation*>> claims;
  std::vector<DraClaimToAllocate> to_allocate;  ///< the unallocated ones, in spec order
};
DraPodClaims dra_resolve_pod_claims(const Pod& pod, const ClusterState& state);

/// The pod's claims with their allocations on node n (DeviceAssignment::claims), or nullopt when the
/// node cannot hold them (the Filter's rejection). An empty vector for a pod without claims.
std::optional<std::vector<DraClaimAllocation>> dra_assign_claims(const Pod& pod, const ClusterState& state, NodeId n);

}  // namespace gpufleet::sched
