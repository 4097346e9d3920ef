// How full a node's Dynamic Resource Allocation devices are, as the Cluster Autoscaler measures it for
// scale-down (kubernetes/autoscaler cluster-autoscaler/simulator/dynamicresources/utils/utilization.go,
// CalculateDynamicResourceUtilization, HighestDynamicResourceUtilization and calculatePoolUtil; used by
// simulator/utilization/info.go Calculate for a node without a device-plugin GPU). docs/dra.md
// ("Scale-down utilization of DRA nodes") works examples by hand.
//
// A node's utilization is the highest utilization of the pools (driver, pool name) of its node-local
// ResourceSlices (spec.nodeName = the node); CPU and memory are not looked at. A pool's utilization:
//  - only the slices of its newest pool.generation count; when fewer of them are present than
//    their resourceSliceCount the pool cannot be measured (CA's error: the node is unremovable);
//  - a device is allocated when a claim of a pod bound to the node lists it (by driver, pool and
//    device name; a device shared by consumable-capacity allocations counts once). Upstream leaves out
//    results with adminAccess, which gpufleet refuses when reading claims;
//  - atomic devices (no consumesCounters): allocated / all atomic devices (0 when there are none);
//  - partitionable devices (consumesCounters, e.g. MIG placements): for each counter set of the
//    slices' sharedCounters (summed by set and counter name over the slices), the highest
//    consumed / total over its counters that the allocated devices consume (Kubernetes Value(): whole
//    units rounded up; counters with total 0 skipped); these summed over the sets and divided by the
//    number of distinct counter sets that the pool's partitionable devices consume;
//  - when every allocated device is atomic (also when none is allocated) the pool's utilization is the
//    atomic one; when every allocated device is partitionable, the partitionable one; otherwise
//    (atomic x A + partitionable x P) / (A + P), A the atomic devices and P the distinct counter sets.
// Note: the upstream comment of calculatePoolUtil gives 66.6% for "2 atomic allocated, partitionable
// at 0%" and 33.3% for "0 atomic allocated, partitionable at 100%" in a pool of 2 atomic devices and
// 1 partitionable one; its code (followed here) returns 100% for both (all allocated devices are of one
// kind), and 66.6% only when a partitionable device is allocated too and consumes nothing measurable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/dra.h"

namespace gpufleet {

/// calculatePoolUtil over the newest-generation slices of one pool (see above): `allocated` names the
/// allocated devices of the pool (device names). In [0, 1].
double dra_pool_utilization(std::span<const ResourceSlice* const> slices, const std::set<std::string>& allocated);

/// A node's DRA utilization. `measured` false: a pool of the node is incomplete (CA's
/// CalculateDynamicResourceUtilization error; the node is then unremovable).
struct DraNodeUtilization {
  double utilization = 0;
  bool measured = true;
};

/// The node-local slices of a catalog by node name, built once (the catalog must outlive it).
class DraNodeSlices {
 public:
  explicit DraNodeSlices(const DraCatalog& catalog);
  /// Whether node `node_name` has node-local slices (CA's NodeInfo.LocalResourceSlices non-empty).
  bool has_local_slices(const std::string& node_name) const { return by_node_.count(node_name) > 0; }
  /// The utilization of node n of `state` (HighestDynamicResourceUtilization over the claims of the
  /// pods bound to it, ClusterState::pods_on), or nullopt when it has no node-local slices.
  std::optional<DraNodeUtilization> utilization(const ClusterState& state, NodeId n) const;

 private:
  // node name -> (driver, pool name) -> its slices, in catalog order
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<const ResourceSlice*>>> by_node_;
};

}  // namespace gpufleet
