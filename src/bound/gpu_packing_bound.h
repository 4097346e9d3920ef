// An upper bound on GPU allocation from packing pods onto single GPUs (the cutting-stock LP).
//
// Relaxes everything except the GPU dimension: node boundaries, GPU models (gpu_spec), CPU and
// memory are ignored, and a pod asking for num_gpu GPUs of gpu_milli each becomes num_gpu separate
// items of gpu_milli that may be placed independently. What it keeps, and the per-node LP of
// allocation_bound.h only approximates (with dual feasible functions), is that the pods sharing one
// GPU must fit into its 1000 milli together. The Gilmore-Gomory LP over GPU "patterns" (multisets of
// item sizes summing to <= 1000; sizes are rounded down to size classes, see gpu_patterns.h):
//   variables  x[q] >= 0: GPUs filled with pattern q;  p[s] in [0, count[s]]: items of size s placed
//   maximize   sum_s s * p[s]
//   subject to sum_{s in class c} p[s] <= sum_q a[q,c] * x[q]   (placed items fit in the patterns)
//              sum_q x[q] <= G                  (the cluster's GPU count)
// solved by column generation (gpu_patterns.h; Gilmore & Gomory, Operations Research 9, 1961): new
// patterns come from an unbounded knapsack over the duals. Every placement of the pods is a feasible point (its GPUs' contents are patterns), so the
// optimum is >= the best placement's allocated gpu_milli. The value returned adds G times the last
// positive reduced cost (Farley's bound, Operations Research 38, 1990), so it stays an upper bound
// even if column generation stops before its tolerance.
//
// On the openb traces, where pods of 810 milli leave 190 that only a few pods can use, this bound is
// tighter than the per-node LP (default trace at 100% arrived, seed 42: 97.00% against 97.33%), on
// all of them but gpuspec33, where pods pinned to a model make the per-node LP the tighter one.
// AllocationBound takes the smaller of the two.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::bound {

class GpuPackingBound {
 public:
  /// Prepares the LP for the GPUs of `nodes` (all models pooled) and the item sizes of `pods` (the
  /// whole workload; later calls use prefixes of it). Pods without a GPU request are ignored.
  GpuPackingBound(const std::vector<Node>& nodes, const std::vector<Pod>& pods);
  ~GpuPackingBound();
  GpuPackingBound(const GpuPackingBound&) = delete;
  GpuPackingBound& operator=(const GpuPackingBound&) = delete;

  /// Upper bound, in gpu_milli, on the GPU milli of pods[0..prefix) that any placement can allocate.
  /// Calls with growing prefixes keep the patterns found so far (warm start). If GLPK finds no
  /// optimum (gpu_patterns.h solve_packing_lp), returns min(requested milli, 1000 x GPUs), which is
  /// always valid. Throws nothing else.
  double bound_milli(size_t prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::bound
