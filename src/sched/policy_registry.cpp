#include "sched/policy_registry.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/device_select.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/dot_product_score.h"
#include "sched/plugins/fgd_online_score.h"
#include "sched/plugins/fgd_score.h"
#include "sched/plugins/gpu_clustering_score.h"
#include "sched/plugins/gpu_packing_score.h"
#include "sched/plugins/gpufleet_score.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_unschedulable.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/random_score.h"
#include "sched/plugins/resource_allocation_score.h"
#include "util/input_error.h"

namespace gpufleet::sched {

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"random", "dotprod",        "clustering",    "packing",   "bestfit",
                                                 "fgd",    "leastallocated", "mostallocated", "fgd-online", "gpufleet"};
  return names;
}

const std::vector<std::string>& paper_policy_names() {
  static const std::vector<std::string> names = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd"};
  return names;
}

Policy make_policy(std::string_view name, const PolicyContext& context) {
  Policy policy;
  policy.name = std::string(name);
  // kube-scheduler's filter order (NodeUnschedulable, TaintToleration, NodeAffinity,
  // NodeResourcesFit), then the GPU filter and InterPodAffinity (not cacheable, run each cycle; one
  // call when no pod has required pod affinity or anti-affinity): a node's unschedulable reason is
  // its first failing filter's.
  policy.filters = {std::make_shared<NodeUnschedulable>(), std::make_shared<TaintToleration>(), std::make_shared<NodeAffinity>(),
                    std::make_shared<NodeResourcesFit>(), std::make_shared<GpuShareFit>(), std::make_shared<InterPodAffinity>()};
  auto best = std::make_shared<BestFitGpuSelector>();
  policy.gpu_selector = best;
  if (name == "random") {
    policy.score = std::make_shared<RandomScore>();
    policy.gpu_selector = std::make_shared<RandomGpuSelector>();
  } else if (name == "dotprod") {
    policy.score = std::make_shared<DotProductScore>();
  } else if (name == "clustering") {
    policy.score = std::make_shared<GpuClusteringScore>();
  } else if (name == "packing") {
    policy.score = std::make_shared<GpuPackingScore>();
  } else if (name == "bestfit") {
    policy.score = std::make_shared<BestFitScore>();
  } else if (name == "fgd") {
    if (!context.frag) throw std::invalid_argument("policy fgd needs a fragmentation measure");
    policy.score = std::make_shared<FgdScore>(context.frag);
    policy.gpu_selector = std::make_shared<FgdGpuSelector>(context.frag);
  } else if (name == "fgd-online") {
    if (context.gpu_models.empty()) throw std::invalid_argument("policy fgd-online needs the cluster's GPU models");
    auto plugin = std::make_shared<OnlineFgdScore>(context.gpu_models, kFgdOnlineParams);
    policy.score = plugin;
    policy.gpu_selector = plugin;
  } else if (name == "gpufleet") {
    if (!context.cluster) throw std::invalid_argument("policy gpufleet needs the cluster state");
    auto plugin = context.outlook ? std::make_shared<GpufleetScore>(*context.cluster, *context.outlook)
                                  : std::make_shared<GpufleetScore>(*context.cluster);
    policy.score = plugin;
    policy.gpu_selector = plugin;
  } else if (name == "leastallocated") {
    policy.score = std::make_shared<ResourceAllocationScore>(ResourceAllocationScore::Strategy::kLeastAllocated);
  } else if (name == "mostallocated") {
    policy.score = std::make_shared<ResourceAllocationScore>(ResourceAllocationScore::Strategy::kMostAllocated);
  } else {
    throw UsageError(fmt::format("unknown policy '{}' (valid: {}, all)", name, fmt::join(policy_names(), ", ")));
  }
  return policy;
}

std::vector<std::string> parse_policy_list(std::string_view text, std::string_view option) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(text.substr(start, comma - start));
    std::transform(item.begin(), item.end(), item.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (item == "all") {
      for (const auto& n : policy_names()) add(n);
    } else if (std::find(policy_names().begin(), policy_names().end(), item) != policy_names().end()) {
      add(item);
    } else {
      throw UsageError(fmt::format("{}: unknown policy '{}' (valid: {}, all)", option, item, fmt::join(policy_names(), ", ")));
    }
    start = comma + 1;
  }
  return out;
}

}  // namespace gpufleet::sched
