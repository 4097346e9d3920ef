#include "sched/fit_error.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/framework/filter_cycle.h"
#include "sched/plugins/node_resource_topology_match.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {

std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) {
  if (code == FilterCode::kFits) return {};
  if (code == FilterCode::kUntoleratedTaint) {
    if (const Taint* taint = find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations))
      return {untolerated_taint_reason(*taint)};
  }
  if (code == FilterCode::kCannotAlign) return {std::string(cannot_align_reason(state.node(n)))};
  if (code == FilterCode::kInsufficientMig) {
    std::vector<std::string> out;
    for (const MigRequest& r : pod.mig_requests)
      if (state.mig_free_count(n, r.profile) < r.count) out.push_back("Insufficient nvidia.com/mig-" + r.profile);
    if (!out.empty()) return out;
  }
  return {std::string(filter_reason(code))};
}

std::string node_rejection_reason(const Profile& profile, const Pod& pod, const ClusterState& state, NodeId n) {
  const FilterCode code = FilterCycle(profile.pre_filters, profile.filters, pod, state).run(state, n);
  const std::vector<std::string> reasons = node_reasons(code, pod, state, n);
  return reasons.empty() ? std::string() : fmt::format("{}", fmt::join(reasons, ", "));
}

ReasonHistogram rejection_histogram(std::span<const FilterCode> node_codes, const Pod& pod, const ClusterState& state) {
  if (node_codes.size() != state.node_count())
    throw std::invalid_argument(fmt::format("{} node codes for {} nodes", node_codes.size(), state.node_count()));
  ReasonHistogram histogram;
  std::array<int32_t, kFilterCodeCount> plain{};  // codes spelled the same on every node
  std::map<std::pair<std::string_view, std::string_view>, int32_t> taints;  // (key, value) of the first untolerated taint
  for (NodeId n = 0; n < node_codes.size(); ++n) {
    const FilterCode code = node_codes[n];
    if (code == FilterCode::kFits) continue;
    if (code == FilterCode::kUntoleratedTaint) {
      if (const Taint* t = find_untolerated_taint(state.node(n).taints, pod.constraints.tolerations)) {
        ++taints[{t->key, t->value}];
        continue;
      }
    }
    if (code == FilterCode::kInsufficientMig || code == FilterCode::kCannotAlign) {
      for (std::string& reason : node_reasons(code, pod, state, n)) ++histogram[std::move(reason)];
      continue;
    }
    ++plain[static_cast<size_t>(code)];
  }
  for (size_t c = 1; c < kFilterCodeCount; ++c)
    if (plain[c] > 0) histogram[std::string(filter_reason(static_cast<FilterCode>(c)))] += plain[c];
  for (const auto& [kv, count] : taints)
    histogram[untolerated_taint_reason(Taint{std::string(kv.first), std::string(kv.second), "NoSchedule"})] += count;
  return histogram;
}

ReasonHistogram rejection_histogram(const Profile& profile, const Pod& pod, const ClusterState& state) {
  ReasonHistogram histogram;
  const FilterCycle cycle(profile.pre_filters, profile.filters, pod, state);  // PreFilter once, as kube's cycle does
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    const FilterCode code = cycle.run(state, n);
    for (std::string& reason : node_reasons(code, pod, state, n)) ++histogram[std::move(reason)];
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
