// Policy registry: builds a Policy (filters + score plugin + GPU selector) from its name.
//
// | name           | score plugin            | sharing-pod GPU selection | source                          |
// |----------------|-------------------------|---------------------------|---------------------------------|
// | random         | RandomScore             | random                    | FGD paper baseline 01-Random    |
// | dotprod        | DotProductScore         | best                      | 02-DotProd (Tetris)             |
// | clustering     | GpuClusteringScore      | best                      | 03-GpuClustering                |
// | packing        | GpuPackingScore         | best                      | 04-GpuPacking                   |
// | bestfit        | BestFitScore            | best                      | 05-BestFit                      |
// | fgd            | FgdScore                | fgd                       | 06-FGD (Weng et al., ATC'23)    |
// | fgd-online     | OnlineFgdScore          | fgd (online measure)      | FGD, mix estimated online       |
// | gpufleet       | GpufleetScore           | largest F decrease        | gpufleet's own, gpufleet_score.h|
// | leastallocated | LeastAllocated          | best                      | kube-scheduler NodeResourcesFit |
// | mostallocated  | MostAllocated           | best                      | kube-scheduler NodeResourcesFit |
// Every policy filters with TaintToleration, NodeAffinity, NodeResourcesFit, GpuShareFit then
// InterPodAffinity (kube's order; all but the GPU ones pass every openb pod). The GPU selections follow the FGD
// simulator's choices (pkg/simulator/plugin/open_gpu_share.go allocateGpuId).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/capacity_outlook.h"
#include "sched/fragmentation.h"
#include "sched/framework.h"

namespace gpufleet::sched {

/// What a policy may need besides its name: FGD needs the fragmentation measure (typical pods).
struct PolicyContext {
  std::shared_ptr<const FragmentationMeasure> frag;  ///< fgd: the trace's typical pods
  std::vector<std::string> gpu_models;               ///< online policies: ClusterState::gpu_models()
  /// gpufleet: the state it will schedule on (read once, for its GPU models and node classes)
  const ClusterState* cluster = nullptr;
  /// gpufleet: the nodes that state may hold (model/capacity_outlook.h; copied); nullptr = the
  /// state's nodes, which do not change.
  const CapacityOutlook* outlook = nullptr;
};

/// All policy names, in the paper's order then kube's.
const std::vector<std::string>& policy_names();

/// The paper's six policies (random, dotprod, clustering, packing, bestfit, fgd).
const std::vector<std::string>& paper_policy_names();

/// Builds the named policy. Throws UsageError for an unknown name, std::invalid_argument when fgd is
/// asked for without a fragmentation measure or fgd-online/gpufleet without the GPU models.
Policy make_policy(std::string_view name, const PolicyContext& context);

/// Parses "all", a name, or a comma-separated list into names (order kept, duplicates removed).
/// Throws UsageError "<option>: unknown policy 'x' (valid: ..., all)"; `option` names where the
/// text came from (the flag, or e.g. "--config 'pools.yaml,x'").
std::vector<std::string> parse_policy_list(std::string_view text, std::string_view option = "--policy");

}  // namespace gpufleet::sched
