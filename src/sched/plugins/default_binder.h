// DefaultBinder Bind plugin (kube-scheduler pkg/scheduler/framework/plugins/defaultbinder/
// default_binder.go). kube posts the pod's Binding to the API server; here the binding is the
// ClusterState allocation the Scheduler made before Reserve, so binding only confirms it.
#pragma once

#include <string_view>

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class DefaultBinder final : public BindPlugin, public NamedPlugin<"DefaultBinder"> {
 public:
  /// Always Success.
  Status bind(const Pod& /*pod*/, NodeId /*n*/, CycleState& /*cycle*/) override { return Status(); }
};

}  // namespace gpufleet::sched
