#include "sched/plugins/coscheduling.h"

#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "model/scheduling_constraints.h"
#include "sched/framework/cycle_state.h"

namespace gpufleet::sched {
namespace {

constexpr std::string_view kAssignedKey = "Coscheduling/assigned";

std::string_view namespace_of(std::string_view ns) { return ns.empty() ? std::string_view("default") : ns; }

std::string full_name(std::string_view ns, std::string_view name) { return fmt::format("{}/{}", namespace_of(ns), name); }

// The group's pods the state holds, counted at Reserve for Permit.
struct Assigned final : StateData {
  int32_t count = 0;
  explicit Assigned(int32_t c) : count(c) {}
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Assigned>(count); }
};

}  // namespace

void Coscheduling::set_pod_group(const PodGroup& group, int32_t members) {
  if (group.name.empty()) throw std::invalid_argument("Coscheduling: a PodGroup needs a name");
  if (group.min_member < 1) throw std::invalid_argument(fmt::format("Coscheduling: PodGroup {} has minMember {} (< 1)", group.name, group.min_member));
  if (members < 0) throw std::invalid_argument(fmt::format("Coscheduling: PodGroup {} has {} members", group.name, members));
  groups_[full_name(group.namespace_name, group.name)] = Group{group, members};
}

void Coscheduling::remove_pod_group(std::string_view namespace_name, std::string_view name) {
  const auto it = groups_.find(full_name(namespace_name, name));
  if (it != groups_.end()) groups_.erase(it);
}

const PodGroup* Coscheduling::pod_group(std::string_view namespace_name, std::string_view name) const {
  const Group* g = find(full_name(namespace_name, name));
  return g == nullptr ? nullptr : &g->group;
}

std::string Coscheduling::group_full_name(const Pod& pod) {
  const std::string* value = find_label(pod.labels, kPodGroupLabel);
  if (value == nullptr || value->empty()) return {};
  return full_name(pod.namespace_name, *value);
}

const Coscheduling::Group* Coscheduling::find(const std::string& name) const {
  const auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : &it->second;
}

Status Coscheduling::pre_filter(const Pod& pod, const ClusterState&, CycleState&) const {
  const std::string name = group_full_name(pod);
  if (name.empty()) return Status();
  const Group* g = find(name);
  if (g == nullptr) return Status();  // core.go PreFilter: no PodGroup, nothing to check
  if (g->members < g->group.min_member)
    return Status(Code::kUnschedulable, fmt::format("pre-filter pod {} cannot find enough sibling pods, current pods number: {}, "
                                                    "minMember of group: {}",
                                                    pod.name, g->members, g->group.min_member));
  return Status();
}

Status Coscheduling::reserve(const Pod& pod, const ClusterState& state, NodeId, CycleState& cycle) {
  const std::string name = group_full_name(pod);
  if (name.empty()) return Status();
  int32_t assigned = 0;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    for (const BoundPod& b : state.pods_on(n)) assigned += group_full_name(b.pod) == name;
  }
  cycle.write(kAssignedKey, std::make_unique<Assigned>(assigned));
  return Status();
}

void Coscheduling::unreserve(const Pod& pod, const ClusterState&, NodeId, CycleState&, Handle& handle) {
  const std::string name = group_full_name(pod);
  if (name.empty() || find(name) == nullptr) return;
  handle.iterate_over_waiting_pods([&](WaitingPod& w) {
    if (group_full_name(w.pod()) == name) w.reject(kName, "rejection in Unreserve");
  });
}

PermitDecision Coscheduling::permit(const Pod& pod, NodeId, CycleState& cycle, Handle& handle) {
  const std::string name = group_full_name(pod);
  if (name.empty()) return {};
  const Group* g = find(name);
  if (g == nullptr) return {Status(Code::kUnschedulableAndUnresolvable, "PodGroup not found"), 0};
  const Assigned* a = cycle.read_as<Assigned>(kAssignedKey);
  const int32_t assigned = a == nullptr ? 1 : a->count;
  if (assigned < g->group.min_member) return {Status(Code::kWait), g->group.schedule_timeout_s};
  handle.iterate_over_waiting_pods([&](WaitingPod& w) {
    if (group_full_name(w.pod()) == name) w.allow(kName);
  });
  return {};
}

}  // namespace gpufleet::sched
