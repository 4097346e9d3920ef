#include "model/node.h"

namespace gpufleet {

std::string_view gpu_sharing_strategy_name(GpuSharingStrategy strategy) {
  return strategy == GpuSharingStrategy::kMps ? "mps" : "time-slicing";
}

std::string_view topology_manager_policy_name(TopologyManagerPolicy policy) {
  switch (policy) {
    case TopologyManagerPolicy::kNone: return "none";
    case TopologyManagerPolicy::kBestEffort: return "best-effort";
    case TopologyManagerPolicy::kRestricted: return "restricted";
    case TopologyManagerPolicy::kSingleNumaNode: return "single-numa-node";
  }
  return "none";
}

std::string_view topology_manager_scope_name(TopologyManagerScope scope) {
  return scope == TopologyManagerScope::kPod ? "pod" : "container";
}

std::optional<TopologyManagerPolicy> parse_topology_manager_policy(std::string_view text) {
  for (const TopologyManagerPolicy p : {TopologyManagerPolicy::kNone, TopologyManagerPolicy::kBestEffort,
                                        TopologyManagerPolicy::kRestricted, TopologyManagerPolicy::kSingleNumaNode})
    if (topology_manager_policy_name(p) == text) return p;
  return std::nullopt;
}

std::optional<TopologyManagerScope> parse_topology_manager_scope(std::string_view text) {
  if (text == "container") return TopologyManagerScope::kContainer;
  if (text == "pod") return TopologyManagerScope::kPod;
  return std::nullopt;
}

}  // namespace gpufleet
