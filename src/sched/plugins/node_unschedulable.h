// NodeUnschedulable filter (kube-scheduler pkg/scheduler/framework/plugins/nodeunschedulable/
// node_unschedulable.go): a cordoned node (spec.unschedulable: true, `kubectl cordon`) takes no new
// pod unless the pod tolerates the taint {key: node.kubernetes.io/unschedulable, effect: NoSchedule}
// (v1helper.TolerationsTolerateTaint), whether or not the node carries that taint (the node
// lifecycle controller adds it; a hand-written or older snapshot may lack it).
// kube: UnschedulableAndUnresolvable, "node(s) were unschedulable"; preemption does not help.
// Pods bound by spec.nodeName bypass the scheduler and so this filter (the kubelet admits them).
#pragma once

#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

/// The taint key kube checks tolerations against (k8s.io/api/core/v1 TaintNodeUnschedulable).
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

class NodeUnschedulable final : public FilterPlugin, public NamedPlugin<"NodeUnschedulable"> {
 public:
  /// node_unschedulable.go ErrReasonUnschedulable, UnschedulableAndUnresolvable.
  static constexpr FilterReason kReasons[] = {{"node(s) were unschedulable", false}};
  static constexpr FilterCode kNodeUnschedulable{kReasons[0]};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  /// kFits, or kNodeUnschedulable.
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
