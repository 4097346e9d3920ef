// A Filter plugin that is in no profile of gpufleet, kept as a test fixture: what adding a new filter
// (e.g. a DRA-style device claim) takes. It touches nothing of the framework: the plugin declares its
// name and reasons here, and a profile lists it (fixture_filter_test.cpp adds it to a policy's
// profile through a Registry, as plugins/registry.cpp and policy_registry.cpp do for in-tree ones).
//
// A pod claiming a device class (label kClaimLabel: the class) fits a node that offers that class
// (label kClassLabel) and has a device of it left: kCountLabel devices, one per pod on the node that
// claims the class. Pods without the label pass.
//  - kClassMismatch, "node(s) didn't offer the claimed device class", UnschedulableAndUnresolvable
//    (evicting pods never changes a node's class); worded per node, "node(s) offered device class
//    <class>" ("none" without the label), so nodes of different classes count apart.
//  - kInsufficientDevices, "Insufficient example.com/device", Unschedulable (evicting a pod that
//    holds a device frees it).
#pragma once

#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "model/scheduling_constraints.h"
#include "sched/framework/interface.h"

namespace gpufleet::testing {

class ExampleDeviceFilter final : public sched::FilterPlugin, public sched::NamedPlugin<"ExampleDeviceFilter"> {
 public:
  static constexpr std::string_view kClaimLabel = "example.com/device-class";    ///< on the pod
  static constexpr std::string_view kClassLabel = "example.com/device-class";    ///< on the node
  static constexpr std::string_view kCountLabel = "example.com/device-count";    ///< on the node

  static constexpr sched::FilterReason kReasons[] = {
      {"node(s) didn't offer the claimed device class", false, /*per_node=*/true},
      {"Insufficient example.com/device", true},
  };
  static constexpr sched::FilterCode kClassMismatch{kReasons[0]};
  static constexpr sched::FilterCode kInsufficientDevices{kReasons[1]};

  std::span<const sched::FilterReason> filter_reasons() const override { return kReasons; }
  using sched::FilterPlugin::filter;

  sched::FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const sched::CycleState&) const override {
    const std::string* claim = find_label(pod.labels, kClaimLabel);
    if (claim == nullptr) return sched::FilterCode::kFits;
    const Node& node = state.node(n);
    const std::string* offered = find_label(node.labels, kClassLabel);
    if (offered == nullptr || *offered != *claim) return kClassMismatch;
    const std::string* count = find_label(node.labels, kCountLabel);
    int64_t used = 0;
    for (const BoundPod& b : state.pods_on(n))
      if (const std::string* c = find_label(b.pod.labels, kClaimLabel); c != nullptr && *c == *claim) ++used;
    return used < (count ? std::atoll(count->c_str()) : 0) ? sched::FilterCode::kFits : kInsufficientDevices;
  }

  std::vector<std::string> node_reasons(sched::FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const override {
    if (code != kClassMismatch) return FilterPlugin::node_reasons(code, pod, state, n);
    const std::string* offered = find_label(state.node(n).labels, kClassLabel);
    return {"node(s) offered device class " + (offered ? *offered : std::string("none"))};
  }
};

}  // namespace gpufleet::testing
