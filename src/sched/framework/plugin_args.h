// The arguments of the plugins that take any (kube-scheduler keeps them apart from the plugins too:
// pkg/scheduler/apis/config/types_pluginargs.go). Each plugin with arguments has one type here;
// validation.h checks them, naming the field; a plugin's factory receives them as `const PluginArgs*`
// (nullptr: the defaults below) and refuses a type that is not its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/scheduling_constraints.h"

namespace gpufleet::sched {

/// Base of every plugin's arguments.
class PluginArgs {
 public:
  virtual ~PluginArgs() = default;
};

/// One resource of a scoring strategy (kube config.ResourceSpec): its name and weight.
struct ResourceSpec {
  std::string name;    ///< "cpu", "memory" or "nvidia.com/gpu"
  int64_t weight = 1;  ///< 1..100 (kube validateResources)
};

/// LeastAllocated / MostAllocated (kube NodeResourcesFitArgs.scoringStrategy.resources): the
/// resources scored and their weights. Default: cpu, memory and nvidia.com/gpu, weight 1 each.
struct ResourceAllocationArgs final : PluginArgs {
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
};

/// Which kube-scheduler release a plugin scores as, where the releases differ (the default
/// profile's Score plugins changed after v1.20; see policy_registry.h).
enum class KubeRelease : uint8_t {
  kCurrent,  ///< the current release (kubernetes/kubernetes master, pkg/scheduler/framework/plugins)
  kV1_20,    ///< v1.20 (the release kube-scheduler-simulator and FGD's simulator embed)
};

/// NodeResourcesFit's Score (kube NodeResourcesFitArgs.scoringStrategy, type LeastAllocated, the
/// default; v1.20's separate plugin NodeResourcesLeastAllocated). Default: cpu and memory, weight 1
/// each (kube's defaults); nvidia.com/gpu may be added.
struct NodeResourcesFitArgs final : PluginArgs {
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  KubeRelease release = KubeRelease::kCurrent;
};

/// NodeResourcesBalancedAllocation (cpu and memory, kube's default resources).
struct BalancedAllocationArgs final : PluginArgs {
  KubeRelease release = KubeRelease::kCurrent;
};

/// InterPodAffinity (kube InterPodAffinityArgs).
struct InterPodAffinityArgs final : PluginArgs {
  /// hardPodAffinityWeight: the score an existing pod's required affinity term adds to the nodes of
  /// its topology domain when the incoming pod matches it; 0..100, default 1 (kube).
  int32_t hard_pod_affinity_weight = 1;
  KubeRelease release = KubeRelease::kCurrent;
};

/// Online FGD's parameters (OnlineFGDScore; fgd_online_score.h).
struct OnlineFgdParams {
  double mix_coverage = 0.95;           ///< mixCoverage: share of the pods seen the typical mix covers, (0, 1]
  double sigmoid_scale_milli = 1000.0;  ///< sigmoidScaleMilli: see fgd_score_and_gpu, > 0
};
struct OnlineFgdScoreArgs final : PluginArgs {
  OnlineFgdParams params;
};

/// gpufleet's fixed parameters (GpufleetScore; gpufleet_score.h; all gpufleet's choices).
struct GpufleetParams {
  double mix_coverage = 0.95;              ///< mixCoverage: share of the pods seen the typical mix covers, (0, 1]
  double sigmoid_scale_milli = 2000.0;     ///< sigmoidScaleMilli: x is divided by this before the sigmoid, > 0
  double strand_weight = 1.0;              ///< strandWeight: weight of the change of S, >= 0
  double model_pressure_weight = 2.0;      ///< modelPressureWeight: pressure per gpu_milli on a fully pressed model, >= 0
  double model_pressure_threshold = 0.15;  ///< modelPressureThreshold: share at and below which a model or class is not pressed, [0, 1)
  double class_pressure_weight = 1.0;      ///< classPressureWeight: pressure per gpu_milli on a fully pressed node class, >= 0
};
struct GpufleetScoreArgs final : PluginArgs {
  GpufleetParams params;
};

/// PodTopologySpread (kube PodTopologySpreadArgs, pkg/scheduler/apis/config/types_pluginargs.go):
/// the constraints given to a pod that has none of its own and a default selector
/// (PodConstraints::default_spread_selector).
///  - kSystem (kube's default, defaultingType: System): kube's systemDefaultConstraints,
///    kubernetes.io/hostname maxSkew 3 and topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway;
///    a node without the zone label still scores by hostname. default_constraints must be empty.
///  - kList: default_constraints (no labelSelector: the pod's default selector is used).
struct PodTopologySpreadArgs final : PluginArgs {
  enum class Defaulting { kSystem, kList };
  Defaulting defaulting_type = Defaulting::kSystem;
  std::vector<TopologySpreadConstraint> default_constraints;
};

}  // namespace gpufleet::sched
