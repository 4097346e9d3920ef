// The in-tree plugins (kube-scheduler pkg/scheduler/framework/plugins/registry.go
// NewInTreeRegistry): one table, name -> factory. Every policy profile (policy_registry.h) is built
// from it.
#pragma once

#include "sched/framework/registry.h"

namespace gpufleet::sched {

/// Every in-tree plugin: PrioritySort; NodeUnschedulable, TaintToleration, NodeAffinity,
/// NodeResourcesFit, GpuShareFit, InterPodAffinity; DefaultPreemption; RandomScore,
/// DotProductScore, GpuClusteringScore, GpuPackingScore, BestFitScore, FGDScore, OnlineFGDScore,
/// GpufleetScore, LeastAllocated, MostAllocated; the GPU selectors best, random, fgd;
/// Coscheduling; DefaultBinder.
const Registry& in_tree_registry();

}  // namespace gpufleet::sched
