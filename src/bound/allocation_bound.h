// An upper bound on the GPU allocation that ANY placement of a set of pods could reach.
//
// Linear-programming relaxation of the pod-to-node assignment, aggregated by node type (nodes with
// equal CPU, memory, GPU count and model are interchangeable) and pod shape (pods with equal
// requests and gpu_spec are interchangeable); solved with GLPK's simplex.
//   variables  y[s,t] >= 0: pods of shape s placed on nodes of type t (only where one pod of s
//              fits an empty node of t by sched::fits(): model allowed, enough GPUs, CPU and
//              memory; the type's GPUs counted plain)
//   maximize   sum y[s,t] * gpu_request_milli[s]
//   subject to sum_t y[s,t] <= count[s]                                      (each pod once)
//              sum_s y[s,t] * cpu[s]  <= N[t] * cpu[t]                      (CPU of the type's nodes)
//              sum_s y[s,t] * mem[s]  <= N[t] * mem[t]                      (memory)
//              sum_s y[s,t] * gpu[s]  <= N[t] * gpus[t] * 1000              (GPU milli)
//              sum_{s: gpu_milli[s] > 500} y[s,t] * num_gpu[s] <= N[t] * gpus[t]
//                                        (a GPU holds at most one pod taking more than half of it)
//              sum_{s: whole GPUs, num_gpu[s] > gpus[t]/2} y[s,t] <= N[t]
//                                        (a node holds at most one pod taking more than half its GPUs)
//              sum_s y[s,t] * num_gpu[s] * u_k(gpu_milli[s]) <= N[t] * gpus[t] * 1000,  k = 2..9
//                                        (Fekete-Schepers dual feasible functions of bin packing:
//                                         fractions that cannot share a GPU count more)
// Every integral placement satisfies these constraints, so the LP optimum is >= the best placement's
// allocated GPU milli, and hence >= what any policy (online or not) achieves on those pods.
//
// bound_milli returns the smaller of that LP and GpuPackingBound (gpu_packing_bound.h), which packs
// the GPU requests exactly onto single GPUs but ignores nodes, models, CPU and memory. Both are upper
// bounds, so their minimum is one too.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::bound {

class AllocationBound {
 public:
  /// Prepares the LP for this cluster and the pod shapes of `pods` (the whole workload; later
  /// calls use prefixes of it). Throws std::invalid_argument if the cluster has no nodes.
  AllocationBound(const std::vector<Node>& nodes, const std::vector<Pod>& pods);
  ~AllocationBound();
  AllocationBound(const AllocationBound&) = delete;
  AllocationBound& operator=(const AllocationBound&) = delete;

  /// Upper bound, in gpu_milli, on the allocation of any placement of pods[0..prefix): the smaller of
  /// the per-node LP above and GpuPackingBound.
  /// Calls with growing prefixes reuse the previous basis (warm start). Throws std::runtime_error if
  /// GLPK fails (it should not: the LP is always feasible and bounded).
  double bound_milli(size_t prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Bound in gpu_milli for the prefixes ending at each of `prefix_ends` (non-decreasing).
std::vector<double> allocation_bound_curve(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                           const std::vector<size_t>& prefix_ends);

}  // namespace gpufleet::bound
