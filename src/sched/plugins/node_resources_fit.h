// NodeResourcesFit filter (kube-scheduler pkg/scheduler/framework/plugins/noderesources/fit.go):
// the pod's CPU and memory requests must fit the node's allocatable minus what is requested there,
// and the node must have room for one more pod. Uses the actual requests (not the non-zero ones).
#pragma once

#include "sched/framework.h"

namespace gpufleet::sched {

class NodeResourcesFit final : public FilterPlugin {
 public:
  std::string_view name() const override { return "NodeResourcesFit"; }
  FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n) const override;
};

}  // namespace gpufleet::sched
