#include "sched/policy_registry.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/gpu/device_select.h"
#include "sched/plugins/balanced_allocation.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/coscheduling.h"
#include "sched/plugins/default_binder.h"
#include "sched/plugins/dot_product_score.h"
#include "sched/plugins/fgd_online_score.h"
#include "sched/plugins/fgd_score.h"
#include "sched/plugins/gpu_clustering_score.h"
#include "sched/plugins/gpu_packing_score.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/gpufleet_score.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/node_resource_topology_match.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/node_unschedulable.h"
#include "sched/plugins/pod_topology_spread.h"
#include "sched/plugins/priority_sort.h"
#include "sched/plugins/random_score.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/resource_allocation_score.h"
#include "sched/plugins/taint_toleration.h"
#include "util/input_error.h"

namespace gpufleet::sched {
namespace {

// The policy table: one row per policy, in policy_names() order.
enum class Kube : uint8_t { kNo, kCurrent, kV1_20 };  // kube's default profile, of which release
struct PolicyRow {
  std::string_view name;
  bool paper;                    // one of the FGD paper's six
  std::string_view score;        // its Score plugin (a gpufleet profile's)
  bool score_pre_score;          // the Score plugin has a PreScore step
  std::string_view gpu_selector;  // its selectGpu plugin
  Kube kube = Kube::kNo;
  bool in_all = true;             // "all" includes it
};
constexpr PolicyRow kPolicies[] = {
    {"random", true, RandomScore::kName, true, RandomGpuSelector::kName},
    {"dotprod", true, DotProductScore::kName, false, BestFitGpuSelector::kName},
    {"clustering", true, GpuClusteringScore::kName, false, BestFitGpuSelector::kName},
    {"packing", true, GpuPackingScore::kName, false, BestFitGpuSelector::kName},
    {"bestfit", true, BestFitScore::kName, false, BestFitGpuSelector::kName},
    {"fgd", true, FgdScore::kName, false, FgdGpuSelector::kName},
    {"leastallocated", false, LeastAllocated::kName, false, BestFitGpuSelector::kName},
    {"mostallocated", false, MostAllocated::kName, false, BestFitGpuSelector::kName},
    {"fgd-online", false, OnlineFgdScore::kName, false, OnlineFgdScore::kName},
    {"gpufleet", false, GpufleetScore::kName, false, GpufleetScore::kName},
    {"default-scheduler", false, "", false, BestFitGpuSelector::kName, Kube::kCurrent},
    {"default-scheduler-v1.20", false, "", false, BestFitGpuSelector::kName, Kube::kV1_20, /*in_all=*/false},
};

enum class Which : uint8_t { kValid, kAll, kPaper };
std::vector<std::string> names_where(Which which) {
  std::vector<std::string> out;
  for (const PolicyRow& row : kPolicies)
    if (which == Which::kValid || (which == Which::kAll && row.in_all) || (which == Which::kPaper && row.paper))
      out.emplace_back(row.name);
  return out;
}

// kube's default profile (policy_registry.h): weighted sum, random ties, kube's Score plugins with
// the release's weights and arguments.
ProfileConfig kube_profile(ProfileConfig c, const PolicyRow& row) {
  using P = ExtensionPoint;
  const KubeRelease release = row.kube == Kube::kV1_20 ? KubeRelease::kV1_20 : KubeRelease::kCurrent;
  const bool v1_20 = release == KubeRelease::kV1_20;
  c.score_combination = ScoreCombination::kWeightedSum;
  c.tie_break = ScoreTieBreak::kRandom;
  for (std::string_view p : {InterPodAffinity::kName, PodTopologySpread::kName, TaintToleration::kName, NodeAffinity::kName,
                             NodeResourcesBalancedAllocation::kName})
    c.enable(P::kPreScore, std::string(p));
  // pkg/scheduler/apis/config/v1/default_plugins.go (current); v1.20:
  // pkg/scheduler/algorithmprovider/registry.go getDefaultConfig.
  c.enable(P::kScore, std::string(TaintToleration::kName), v1_20 ? 1 : 3);
  c.enable(P::kScore, std::string(NodeAffinity::kName), v1_20 ? 1 : 2);
  c.enable(P::kScore, std::string(NodeResourcesFit::kName), 1);
  c.enable(P::kScore, std::string(PodTopologySpread::kName), 2);
  c.enable(P::kScore, std::string(InterPodAffinity::kName), v1_20 ? 1 : 2);
  c.enable(P::kScore, std::string(NodeResourcesBalancedAllocation::kName), 1);
  auto fit = std::make_shared<NodeResourcesFitArgs>();
  fit->release = release;
  auto balanced = std::make_shared<BalancedAllocationArgs>();
  balanced->release = release;
  auto affinity = std::make_shared<InterPodAffinityArgs>();
  affinity->release = release;
  c.plugin_config.push_back({std::string(NodeResourcesFit::kName), fit});
  c.plugin_config.push_back({std::string(NodeResourcesBalancedAllocation::kName), balanced});
  c.plugin_config.push_back({std::string(InterPodAffinity::kName), affinity});
  return c;
}

}  // namespace

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = names_where(Which::kValid);
  return names;
}

const std::vector<std::string>& all_policy_names() {
  static const std::vector<std::string> names = names_where(Which::kAll);
  return names;
}

const std::vector<std::string>& paper_policy_names() {
  static const std::vector<std::string> names = names_where(Which::kPaper);
  return names;
}

ProfileConfig policy_profile(std::string_view name) {
  const auto row = std::find_if(std::begin(kPolicies), std::end(kPolicies), [&](const PolicyRow& r) { return r.name == name; });
  if (row == std::end(kPolicies))
    throw UsageError(fmt::format("unknown policy '{}' (valid: {}, all)", name, fmt::join(policy_names(), ", ")));
  using P = ExtensionPoint;
  ProfileConfig c;
  c.scheduler_name = std::string(name);
  c.score_combination = ScoreCombination::kLexicographic;
  c.enable(P::kQueueSort, std::string(PrioritySort::kName));
  c.enable(P::kPreFilter, std::string(PodTopologySpread::kName));
  c.enable(P::kPreFilter, std::string(InterPodAffinity::kName));
  // Coscheduling: inert for pods without the pod-group label (plugins/coscheduling.h); gangs go
  // through its Permit (sched/gang_placement.h).
  c.enable(P::kPreFilter, std::string(Coscheduling::kName));
  // DynamicResources (Dynamic Resource Allocation): Skip for pods without spec.resourceClaims, so
  // device-plugin pods never reach its Filter.
  c.enable(P::kPreFilter, std::string(DynamicResources::kName));
  // kube-scheduler's filter order (NodeUnschedulable, TaintToleration, NodeAffinity,
  // NodeResourcesFit), then the GPU filter, the NUMA filter (scheduler-plugins'
  // NodeResourceTopologyMatch, after NodeResourcesFit as in its example profiles; inert on nodes
  // without a NUMA layout) and InterPodAffinity (not cacheable, run each cycle; one call when no pod
  // has required pod affinity or anti-affinity): a node's unschedulable reason is its first failing
  // filter's.
  for (std::string_view f : {NodeUnschedulable::kName, TaintToleration::kName, NodeAffinity::kName, NodeResourcesFit::kName,
                             GpuShareFit::kName, GpuMemoryShareFit::kName, NodeResourceTopologyMatch::kName, PodTopologySpread::kName,
                             InterPodAffinity::kName, DynamicResources::kName})
    c.enable(P::kFilter, std::string(f));
  c.enable(P::kSelectGpu, std::string(row->gpu_selector));
  c.enable(P::kReserve, std::string(Coscheduling::kName));
  c.enable(P::kPermit, std::string(Coscheduling::kName));
  c.enable(P::kBind, std::string(DefaultBinder::kName));
  if (row->kube != Kube::kNo) return kube_profile(std::move(c), *row);
  // The Score plugin's PreScore first: the random policy's draw happens even when NodeAffinity's
  // PreScore then fails the cycle.
  if (row->score_pre_score) c.enable(P::kPreScore, std::string(row->score));
  c.enable(P::kPreScore, std::string(TaintToleration::kName));
  c.enable(P::kPreScore, std::string(NodeAffinity::kName));
  c.enable(P::kScore, std::string(TaintToleration::kName));
  c.enable(P::kScore, std::string(NodeAffinity::kName));
  c.enable(P::kScore, std::string(row->score));
  return c;
}

Profile make_policy(std::string_view name, const PolicyContext& context) {
  return build_profile(policy_profile(name), in_tree_registry(), context);
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
      for (const auto& n : all_policy_names()) add(n);
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
