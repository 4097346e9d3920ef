// The planner's MIG pools: for a workload whose pods request MIG devices (nvidia.com/mig-<profile>,
// WorkloadSpec::mig_requests), which instance type serves them and which MIG layout its GPUs get
// (the mig-parted `mig-devices` of the pool, model/node_pool.h NodePool::mig_devices). plan/search.h
// adds these pools to every candidate; the layouts are the ones NVIDIA's MIG geometry allows
// (NVIDIA MIG User Guide, "Supported MIG Profiles", as model/mig.h encodes it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "inputs/sim/workload.h"
#include "model/gpu_catalog.h"
#include "plan/candidate.h"
#include "plan/cost_bound.h"

namespace gpufleet::plan {

/// The MIG layout of one GPU of `model` for a demand of MIG devices (profile -> device-hours, the
/// devices of the workload's MIG pods over their run): the profiles the model has, with counts such
/// that one GPU serves the demand's mix with the fewest GPU-hours, i.e. the layout c minimising
/// max over the profiles p of device_hours[p] / c[p] (so the counts follow the demand's proportions),
/// among the layouts that NVIDIA's MIG geometry allows on the model (NVIDIA MIG User Guide,
/// "Supported MIG Profiles", as model/mig.h encodes it; every layout returned passes
/// layout_for_counts). In order: the fewest profiles of the demand left out (0 when one layout holds
/// them all; a 7g profile excludes every other), the most demand served (device-hours x the profile's
/// compute slices / 7, summed over the profiles kept; equal when none is left out), the fewest
/// GPU-hours, the most compute slices used (the least idle), then the larger counts of the profiles
/// in name order. Profiles the model lacks
/// and entries <= 0 are ignored; empty when none is left. Example: A100-40GB with {1g.5gb: 6,
/// 3g.20gb: 2} gives {1g.5gb: 4, 3g.20gb: 1} (2 GPU-hours; {1g.5gb: 3, 3g.20gb: 1} needs as many but
/// leaves a slice idle).
std::map<std::string, int> mig_layout_for_demand(const GpuModelInfo& model, const std::map<std::string, double>& device_hours);

/// The MIG pools for the workload's items that request MIG devices (WorkloadSpec::mig_requests); empty
/// when it has none. Among the options with GPUs (one per instance type, the first in the options'
/// order), those whose model has the profiles and whose node holds one pod of each such item
/// (CPU, memory, GPUs for its devices, gpu_spec); the one whose mig_layout_for_demand serves the
/// items' device-hours at the lowest on-demand price (USD per GPU-hour x the GPU-hours the layout
/// needs; ties: the first). When no option holds every MIG item, the same choice for the items it
/// holds, then again for the rest (other instance types), until none is left that some option holds.
/// Each choice: that layout for the profiles of its items, no committed nodes, no spot, max_nodes
/// the peak concurrent devices of each profile over the layout's devices per node, the peak CPU and
/// memory of its items over the node's, the largest x 1.5 + 2 (as the other pools). `median_nodes`
/// (when given) gets, per choice, the whole MIG nodes its items need during at least half of the
/// horizon (devices per profile over the layout's per node, CPU, memory; time-weighted median), the
/// committed nodes plan_candidates tries.
std::vector<PoolChoice> mig_pool_choices(const sim::Workload& workload, const std::vector<CostBoundOption>& options,
                                         std::vector<int32_t>* median_nodes = nullptr);

}  // namespace gpufleet::plan
