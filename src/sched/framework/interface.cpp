#include "sched/framework/interface.h"

#include <algorithm>
#include <limits>

namespace gpufleet::sched {

FilterCode FilterPlugin::filter(const Pod& pod, const ClusterState& state, NodeId n) const {
  CycleState cycle;
  if (const auto* pre = dynamic_cast<const PreFilterPlugin*>(this)) {
    if (pre->pre_filter(pod, state, cycle).is_skip()) return FilterCode::kFits;
  }
  return filter(pod, state, n, cycle);
}

std::vector<std::string> FilterPlugin::node_reasons(FilterCode code, const Pod&, const ClusterState&, NodeId) const {
  if (!code.rejected()) return {};
  return {std::string(code.reason())};
}

void FilterPlugin::count_reasons(FilterCode code, const Pod& pod, const ClusterState& state, std::span<const NodeId> nodes,
                                 ReasonHistogram& histogram) const {
  if (!code.rejected() || nodes.empty()) return;
  if (!code.get()->per_node) {
    histogram[std::string(code.reason())] += static_cast<int32_t>(nodes.size());
    return;
  }
  for (const NodeId n : nodes)
    for (std::string& reason : node_reasons(code, pod, state, n)) ++histogram[std::move(reason)];
}

std::vector<std::string> WaitingPod::pending_plugins() const {
  std::vector<std::string> out;
  out.reserve(pending_.size());
  for (const auto& [plugin, deadline] : pending_) out.push_back(plugin);
  return out;
}

void WaitingPod::allow(std::string_view plugin) {
  if (status_.is_rejected()) return;
  std::erase_if(pending_, [&](const auto& p) { return p.first == plugin; });
  if (pending_.empty()) status_ = Status();
}

void WaitingPod::reject(std::string_view plugin, std::string message) {
  if (status_.is_rejected()) return;
  pending_.clear();
  status_ = Status(Code::kUnschedulable, std::move(message));
  status_.with_plugin(plugin);
}

std::pair<double, std::string> WaitingPod::next_deadline() const {
  std::pair<double, std::string> out{std::numeric_limits<double>::infinity(), ""};
  for (const auto& [plugin, deadline] : pending_)
    if (deadline < out.first) out = {deadline, plugin};
  return out;
}

std::string pod_key(const Pod& pod) {
  return (pod.namespace_name.empty() ? std::string("default") : pod.namespace_name) + "/" + pod.name;
}

}  // namespace gpufleet::sched
