#include "sched/fit_error.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/framework/filter_cycle.h"

namespace gpufleet::sched {

std::string node_rejection_reason(const Profile& profile, const Pod& pod, const ClusterState& state, NodeId n) {
  const Rejection rejection = FilterCycle(profile.pre_filters, profile.filters, pod, state).run(state, n);
  const std::vector<std::string> reasons = rejection.node_reasons(pod, state, n);
  return reasons.empty() ? std::string() : fmt::format("{}", fmt::join(reasons, ", "));
}

ReasonHistogram rejection_histogram(const NodeToStatus& statuses, const Pod& pod, const ClusterState& state) {
  if (statuses.size() != state.node_count())
    throw std::invalid_argument(fmt::format("{} node statuses for {} nodes", statuses.size(), state.node_count()));
  ReasonHistogram histogram;
  // The rejected nodes grouped by number (a counting sort), each group worded by its plugin.
  std::vector<int32_t> start = statuses.counts();
  int32_t rejected = 0;
  for (int32_t& s : start) rejected += std::exchange(s, rejected);
  std::vector<NodeId> nodes(static_cast<size_t>(rejected));
  std::vector<int32_t> next = start;
  for (NodeId n = 0; n < statuses.size(); ++n)
    if (const uint8_t number = statuses.number(n); number != 0) nodes[static_cast<size_t>(next[number]++)] = n;
  for (size_t number = 1; number < start.size(); ++number) {
    const std::span<const NodeId> group(nodes.data() + start[number], static_cast<size_t>(next[number] - start[number]));
    if (group.empty()) continue;
    const Rejection r = statuses.table().rejection(static_cast<uint8_t>(number));
    r.plugin->count_reasons(r.code, pod, state, group, histogram);
  }
  return histogram;
}

ReasonHistogram rejection_histogram(const Profile& profile, const Pod& pod, const ClusterState& state) {
  ReasonHistogram histogram;
  const FilterCycle cycle(profile.pre_filters, profile.filters, pod, state);  // PreFilter once, as kube's cycle does
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    for (std::string& reason : cycle.run(state, n).node_reasons(pod, state, n)) ++histogram[std::move(reason)];
  }
  return histogram;
}

std::string fit_error_message(const ReasonHistogram& histogram, size_t node_count, std::string_view post_filter) {
  std::string out;
  if (node_count == 0) {
    out = "no nodes available to schedule pods";
  } else {
    std::vector<std::string> parts;
    parts.reserve(histogram.size());
    for (const auto& [reason, count] : histogram) parts.push_back(fmt::format("{} {}", count, reason));
    std::sort(parts.begin(), parts.end());
    out = fmt::format("0/{} nodes are available", node_count);
    if (!parts.empty()) out += fmt::format(": {}", fmt::join(parts, ", "));
    out += ".";
  }
  if (!post_filter.empty()) out += fmt::format(" {}", post_filter);
  return out;
}

}  // namespace gpufleet::sched
