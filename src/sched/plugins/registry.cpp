#include "sched/plugins/registry.h"

#include <stdexcept>
#include <string>
#include <typeinfo>

#include "sched/gpu/device_select.h"
#include "sched/plugins/balanced_allocation.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/coscheduling.h"
#include "sched/plugins/default_binder.h"
#include "sched/plugins/default_preemption.h"
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
#include "sched/plugins/resource_allocation_score.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {
namespace {

// The plugin's arguments as its own type A (defaults for nullptr); kube's "want args to be of type
// X, got Y" otherwise.
template <class A>
A args_of(std::string_view plugin, const PluginArgs* args) {
  if (args == nullptr) return A{};
  if (const auto* a = dynamic_cast<const A*>(args)) return *a;
  throw std::invalid_argument("plugin " + std::string(plugin) + ": arguments of another plugin's type");
}

void refuse_args(std::string_view plugin, const PluginArgs* args) {
  if (args != nullptr) throw std::invalid_argument("plugin " + std::string(plugin) + " takes no arguments");
}

// A factory for a plugin without arguments or context.
template <class P>
RegistryEntry plain() {
  return {std::string(P::kName), [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
            refuse_args(P::kName, args);
            return std::make_shared<P>();
          }};
}

std::shared_ptr<const FragmentationMeasure> need_frag(std::string_view plugin, const PolicyContext& context) {
  if (!context.frag) throw std::invalid_argument("plugin " + std::string(plugin) + " needs a fragmentation measure");
  return context.frag;
}

std::vector<RegistryEntry> entries() {
  std::vector<RegistryEntry> out = {
      plain<PrioritySort>(),
      plain<NodeUnschedulable>(),
      plain<TaintToleration>(),
      plain<NodeAffinity>(),
      {std::string(NodeResourcesFit::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<NodeResourcesFit>(args_of<NodeResourcesFitArgs>(NodeResourcesFit::kName, args));
       }},
      {std::string(NodeResourcesBalancedAllocation::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<NodeResourcesBalancedAllocation>(
             args_of<BalancedAllocationArgs>(NodeResourcesBalancedAllocation::kName, args));
       }},
      plain<GpuShareFit>(),
      plain<GpuMemoryShareFit>(),
      plain<NodeResourceTopologyMatch>(),
      plain<DynamicResources>(),
      {std::string(PodTopologySpread::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<PodTopologySpread>(args_of<PodTopologySpreadArgs>(PodTopologySpread::kName, args));
       }},
      {std::string(InterPodAffinity::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<InterPodAffinity>(args_of<InterPodAffinityArgs>(InterPodAffinity::kName, args));
       }},
      {std::string(DefaultPreemption::kName),
       [](const PluginArgs* args, const PolicyContext& context) -> std::shared_ptr<Plugin> {
         refuse_args(DefaultPreemption::kName, args);
         return std::make_shared<DefaultPreemption>(context.pdbs, context.workload_pods);
       }},
      plain<RandomScore>(),
      plain<DotProductScore>(),
      plain<GpuClusteringScore>(),
      plain<GpuPackingScore>(),
      plain<BestFitScore>(),
      {std::string(FgdScore::kName),
       [](const PluginArgs* args, const PolicyContext& context) -> std::shared_ptr<Plugin> {
         refuse_args(FgdScore::kName, args);
         return std::make_shared<FgdScore>(need_frag(FgdScore::kName, context));
       }},
      {std::string(OnlineFgdScore::kName),
       [](const PluginArgs* args, const PolicyContext& context) -> std::shared_ptr<Plugin> {
         const auto a = args_of<OnlineFgdScoreArgs>(OnlineFgdScore::kName, args);
         if (context.gpu_models.empty()) throw std::invalid_argument("plugin OnlineFGDScore needs the cluster's GPU models");
         return std::make_shared<OnlineFgdScore>(context.gpu_models, a.params);
       }},
      {std::string(GpufleetScore::kName),
       [](const PluginArgs* args, const PolicyContext& context) -> std::shared_ptr<Plugin> {
         const auto a = args_of<GpufleetScoreArgs>(GpufleetScore::kName, args);
         if (!context.cluster) throw std::invalid_argument("plugin GpufleetScore needs the cluster state");
         return context.outlook ? std::make_shared<GpufleetScore>(*context.cluster, *context.outlook, a.params)
                                : std::make_shared<GpufleetScore>(*context.cluster, a.params);
       }},
      {std::string(LeastAllocated::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<LeastAllocated>(args_of<ResourceAllocationArgs>(LeastAllocated::kName, args));
       }},
      {std::string(MostAllocated::kName),
       [](const PluginArgs* args, const PolicyContext&) -> std::shared_ptr<Plugin> {
         return std::make_shared<MostAllocated>(args_of<ResourceAllocationArgs>(MostAllocated::kName, args));
       }},
      plain<BestFitGpuSelector>(),
      plain<RandomGpuSelector>(),
      {std::string(FgdGpuSelector::kName),
       [](const PluginArgs* args, const PolicyContext& context) -> std::shared_ptr<Plugin> {
         refuse_args(FgdGpuSelector::kName, args);
         return std::make_shared<FgdGpuSelector>(need_frag(FgdGpuSelector::kName, context));
       }},
      plain<Coscheduling>(),
      plain<DefaultBinder>(),
  };
  return out;
}

}  // namespace

const Registry& in_tree_registry() {
  static const Registry registry(entries());
  return registry;
}

}  // namespace gpufleet::sched
