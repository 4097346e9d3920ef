// Coscheduling: a pod group's members wait at Permit until minMember of them are assigned, then all
// bind; a rejection of one rejects the group's waiting members (kubernetes-sigs/scheduler-plugins
// pkg/coscheduling/coscheduling.go and core/core.go).
//
// A pod belongs to group <namespace>/<value> when it carries the label kPodGroupLabel
// (scheduling.x-k8s.io/pod-group: <value>; model/pod_group.h). Pods without it pass every step
// untouched (Success), so the plugin is inert in a profile whose pods carry no such label.
//  - PreFilter: a pod whose group is registered (set_pod_group) with fewer members than minMember is
//    Unschedulable: "pre-filter pod <name> cannot find enough sibling pods, current pods number: <m>,
//    minMember of group: <k>" (core.go PreFilter). An unregistered group passes (core.go: pg == nil).
//  - Reserve: counts the group's pods the ClusterState holds (bound, assumed or waiting; the pod
//    itself included: it is assumed before Reserve), as core.go CalculateAssignedPods counts the
//    snapshot's assigned pods plus the pod in its cycle.
//  - Permit: that count >= minMember: allows every waiting member of the group and returns Success;
//    otherwise Wait for the group's scheduleTimeoutSeconds. A labelled pod whose group is not
//    registered is UnschedulableAndUnresolvable "PodGroup not found" (coscheduling.go Permit).
//  - Unreserve: rejects every waiting member of the group ("rejection in Unreserve"), so a member
//    that times out or fails takes the whole gang back (coscheduling.go Unreserve). The denied-group
//    backoff and minResources check of upstream are not modelled.
// The plugin keeps the registered groups (the PodGroup objects the scheduler would read from the API
// server); one instance serves the PreFilter, Reserve and Permit points of a profile.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "model/pod_group.h"
#include "sched/framework/interface.h"

namespace gpufleet::sched {

class Coscheduling final : public PreFilterPlugin, public ReservePlugin, public PermitPlugin, public NamedPlugin<"Coscheduling"> {
 public:
  /// Registers (or replaces) `group` with `members` pods carrying its label (core.go lists them with
  /// the pod lister). Throws std::invalid_argument for an empty name, min_member < 1 or members < 0.
  void set_pod_group(const PodGroup& group, int32_t members);
  /// Forgets the group; no-op when it is not registered.
  void remove_pod_group(std::string_view namespace_name, std::string_view name);
  /// The registered group, or nullptr. An empty namespace means "default".
  const PodGroup* pod_group(std::string_view namespace_name, std::string_view name) const;
  /// "<namespace>/<group>" of a pod's group ("default" for an empty namespace); empty without the
  /// label (util.GetPodGroupFullName).
  static std::string group_full_name(const Pod& pod);

  Status pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const override;
  Status reserve(const Pod& pod, const ClusterState& state, NodeId n, CycleState& cycle) override;
  void unreserve(const Pod& pod, const ClusterState& state, NodeId n, CycleState& cycle, Handle& handle) override;
  PermitDecision permit(const Pod& pod, NodeId n, CycleState& cycle, Handle& handle) override;

 private:
  struct Group {
    PodGroup group;
    int32_t members = 0;
  };
  const Group* find(const std::string& full_name) const;
  std::map<std::string, Group, std::less<>> groups_;  // by "<namespace>/<name>"
};

}  // namespace gpufleet::sched
