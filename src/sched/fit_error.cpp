#include "sched/fit_error.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {

std::string node_rejection_reason(const Policy& policy, const Pod& pod, const ClusterState& state, NodeId n) {
  for (const auto& filter : policy.filters) {
    const FilterCode code = filter->filter(pod, state, n);
    if (code == FilterCode::kFits) continue;
    if (code == FilterCode::kUntoleratedTaint) {
      if (const Taint* taint = find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations))
        return untolerated_taint_reason(*taint);
    }
    return std::string(filter_reason(code));
  }
  return {};
}

ReasonHistogram rejection_histogram(const Policy& policy, const Pod& pod, const ClusterState& state) {
  ReasonHistogram histogram;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    std::string reason = node_rejection_reason(policy, pod, state, n);
    if (!reason.empty()) ++histogram[std::move(reason)];
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
