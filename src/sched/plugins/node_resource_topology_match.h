// NodeResourceTopologyMatch filter: refuses a node whose kubelet would reject the pod at admission
// because its Topology Manager cannot align the pod's whole GPUs to one NUMA node. Modelled on
// kubernetes-sigs/scheduler-plugins pkg/noderesourcetopology (filter.go, Filter and its
// single-numa-node handlers), which reads each node's NUMA zones from the NFD topology-updater's
// NodeResourceTopology object (readers/k8s/node_resource_topology.h here).
//
// Upstream, like here, only the single-numa-node policy is filtered (filterHandlerFromTopologyManager:
// other policies have no handler). A node applies the rule when Node::requires_single_numa_node():
// policy single-numa-node and a NUMA layout (Node::gpu_numa_node). The pod is refused when no NUMA node
// has num_gpu fully free plain GPUs (sched/gpu/device_select.h single_numa_node_admits and
// numa_node_for_whole_gpus, the rule the scheduler's device choice and the simulator's scale-up
// estimate use too, so a node this filter admits gets GPUs of one NUMA node).
// Upstream's status: Unschedulable (preemption may make room), reason "cannot align pod" with scope
// pod (singleNUMAPodLevelHandler) and "cannot align container" with scope container
// (singleNUMAContainerLevelHandler; gpufleet's pod is one container). Both are kCannotAlign, worded
// per node (cannot_align_reason below).
//
// Gap, as upstream: a kubelet with policy restricted also rejects a pod whose preferred (narrowest)
// NUMA affinity is not available, e.g. 4 GPUs on a 4+4 node with 3 free per socket; neither upstream
// nor gpufleet filters restricted nodes (gpufleet's device choice still prefers one NUMA node there).
//
// Not modelled: CPUs, memory and hugepages per NUMA node (upstream aligns every resource the zones
// report; gpufleet only GPUs); fractional GPUs (one GPU is on one NUMA node), MIG devices and
// time-slicing replicas (not aligned here). Inert on nodes without a NUMA layout or with another
// policy, so inputs without NodeResourceTopology objects schedule as before.
#pragma once

#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class NodeResourceTopologyMatch final : public FilterPlugin, public NamedPlugin<"NodeResourceTopologyMatch"> {
 public:
  /// Unschedulable; "cannot align pod" is the generic form of the per-node reason.
  static constexpr FilterReason kReasons[] = {{"cannot align pod", true, /*per_node=*/true}};
  static constexpr FilterCode kCannotAlign{kReasons[0]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// kFits or kCannotAlign.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// cannot_align_reason of node n for kCannotAlign.
  std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const override;
};

/// Upstream's reason on `node` for kCannotAlign: "cannot align pod" (scope pod) or "cannot align
/// container" (scope container).
std::string_view cannot_align_reason(const Node& node);

}  // namespace gpufleet::sched
