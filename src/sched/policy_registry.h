// The placement policies, each a profile (framework/profile.h) of in-tree plugins
// (plugins/registry.h), defined in one table in policy_registry.cpp:
//
// | name           | Score plugin (last)     | selectGpu                 | source                          |
// |----------------|-------------------------|---------------------------|---------------------------------|
// | random         | RandomScore             | random                    | FGD paper baseline 01-Random    |
// | dotprod        | DotProductScore         | best                      | 02-DotProd (Tetris)             |
// | clustering     | GpuClusteringScore      | best                      | 03-GpuClustering                |
// | packing        | GpuPackingScore         | best                      | 04-GpuPacking                   |
// | bestfit        | BestFitScore            | best                      | 05-BestFit                      |
// | fgd            | FGDScore                | fgd                       | 06-FGD (Weng et al., ATC'23)    |
// | leastallocated | LeastAllocated          | best                      | kube-scheduler NodeResourcesFit |
// | mostallocated  | MostAllocated           | best                      | kube-scheduler NodeResourcesFit |
// | fgd-online     | OnlineFGDScore          | OnlineFGDScore            | FGD, mix estimated online       |
// | gpufleet       | GpufleetScore           | GpufleetScore             | gpufleet's own, gpufleet_score.h|
// | default-scheduler       | kube's, weighted (below) | best             | kube-scheduler's default profile|
// | default-scheduler-v1.20 | v1.20's, weighted        | best             | the same as of v1.20 (not in "all")|
//
// default-scheduler is what a pod without schedulerName gets from kube-scheduler: its Score
// plugins summed with their weights after each one's NormalizeScore (ScoreCombination::kWeightedSum),
// ties broken at random from the run's seed (ScoreTieBreak::kRandom, kube's selectHost):
//   current release (pkg/scheduler/apis/config/v1/default_plugins.go): TaintToleration 3,
//     NodeAffinity 2, NodeResourcesFit 1 (LeastAllocated over cpu and memory, non-zero requests),
//     PodTopologySpread 2 (with kube's system default constraints), InterPodAffinity 2
//     (hardPodAffinityWeight 1), NodeResourcesBalancedAllocation 1;
//   v1.20 (pkg/scheduler/algorithmprovider/registry.go getDefaultConfig): PodTopologySpread 2,
//     every other weight 1, with
//     v1.20's BalancedAllocation, LeastAllocated and InterPodAffinity normalization (plugin_args.h
//     KubeRelease).
// Left out, as they score every node alike on gpufleet's inputs: ImageLocality (no image lists),
// VolumeBinding (no volumes), NodePreferAvoidPods (v1.20, weight 10000; an alpha annotation) and
// SelectorSpread (off in v1.20 under DefaultPodTopologySpread). Its filters are every policy's.
// The GPU of a sharing pod: best fit (kube leaves the device to the device plugin).
//
// Every gpufleet policy's profile (the rows above default-scheduler):
//   queueSort  PrioritySort
//   preFilter  PodTopologySpread, InterPodAffinity, Coscheduling
//   filter     NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit, GpuShareFit, GpuMemoryShareFit,
//              NodeResourceTopologyMatch, PodTopologySpread, InterPodAffinity (kube's order; all
//              but the GPU ones pass every openb pod; PodTopologySpread enforces DoNotSchedule
//              topologySpreadConstraints, its ScheduleAnyway Score is in no policy here)
//   postFilter none (`place` adds DefaultPreemption, as kube's default profile has it; `pack` and
//              `simulate` model no preemption)
//   preScore   the Score plugin when it has a PreScore (RandomScore draws there), TaintToleration,
//              NodeAffinity
//   score      TaintToleration, NodeAffinity, then the policy's Score plugin, compared
//              lexicographically (the node-preference tier first; plugins/node_preference.h)
//   selectGpu  the table's (the FGD simulator's choices, open_gpu_share.go allocateGpuId)
//   reserve    Coscheduling (inert for pods without scheduling.x-k8s.io/pod-group;
//              plugins/coscheduling.h)
//   permit     Coscheduling (a gang's members wait until minMember are reserved)
//   bind       DefaultBinder
// A Score plugin that is also the GPU selector (fgd-online, gpufleet) is one object.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/gpu/fragmentation.h"
#include "sched/framework/profile.h"
#include "sched/framework/registry.h"

namespace gpufleet::sched {

/// All policy names, in the table's order (the paper's, then kube's, then the online ones).
const std::vector<std::string>& policy_names();

/// The policies "all" stands for: every one but default-scheduler-v1.20 (kept for comparing with
/// a v1.20 kube-scheduler).
const std::vector<std::string>& all_policy_names();

/// The paper's six policies (random, dotprod, clustering, packing, bestfit, fgd).
const std::vector<std::string>& paper_policy_names();

/// The named policy's profile (see above). Throws UsageError for an unknown name.
ProfileConfig policy_profile(std::string_view name);

/// build_profile(policy_profile(name), in_tree_registry(), context). Throws UsageError for an
/// unknown name, std::invalid_argument when fgd is asked for without a fragmentation measure or
/// fgd-online/gpufleet without the GPU models or cluster.
Profile make_policy(std::string_view name, const PolicyContext& context);

/// Parses "all", a name, or a comma-separated list into names (order kept, duplicates removed).
/// Throws UsageError "<option>: unknown policy 'x' (valid: ..., all)"; `option` names where the
/// text came from (the flag, or e.g. "--config 'pools.yaml,x'").
std::vector<std::string> parse_policy_list(std::string_view text, std::string_view option = "--policy");

}  // namespace gpufleet::sched
