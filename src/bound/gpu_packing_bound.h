// An upper bound on GPU allocation from packing pods onto single GPUs (the cutting-stock LP).
//
// Relaxes everything except the GPU dimension: node boundaries, GPU models (gpu_spec), CPU and
// memory are ignored, and a pod asking for num_gpu GPUs of gpu_milli each becomes num_gpu separate
// items of gpu_milli that may be placed independently. What it keeps, and the per-node LP of
// allocation_bound.h only approximates (with dual feasible functions), is that the pods sharing one
// GPU must fit into its 1000 milli together. The Gilmore-Gomory LP over GPU "patterns" (multisets of
// item sizes summing to <= 1000; sizes are rounded down to size classes, see size_class_milli below):
//   variables  x[q] >= 0: GPUs filled with pattern q;  p[s] in [0, count[s]]: items of size s placed
//   maximize   sum_s s * p[s]
//   subject to sum_{s in class c} p[s] <= sum_q a[q,c] * x[q]   (placed items fit in the patterns)
//              sum_q x[q] <= G                  (the cluster's GPU count)
// solved by column generation (Gilmore & Gomory, "A linear programming approach to the cutting-stock
// problem", Operations Research 9, 1961): new patterns come from an unbounded knapsack over the
// duals. Every placement of the pods is a feasible point (its GPUs' contents are patterns), so the
// optimum is >= the best placement's allocated gpu_milli. The value returned adds G times the last
// positive reduced cost (Farley's bound), so it stays an upper bound even if column generation stops
// before its tolerance.
//
// On the openb traces, where pods of 810 milli leave 190 that only a few pods can use, this bound is
// tighter than the per-node LP (default trace at 100% arrived, seed 42: 97.00% against 97.33%), on
// all of them but gpuspec33, where pods pinned to a model make the per-node LP the tighter one.
// AllocationBound takes the smaller of the two.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <glpk.h>

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
  /// optimum (solve_packing_lp), returns min(requested milli, 1000 x GPUs), which is always valid.
  double bound_milli(size_t prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Size classes of the packing LPs. Patterns are made of classes, not sizes: an item of gpu_milli s is
/// packed as size_class_milli(s), s rounded down to a multiple of kSizeClassMilli (sizes below it are
/// kept). Packing items a little smaller is a relaxation, since whatever shares a GPU in reality still
/// fits, and the items keep their own milli in the objective. It caps the LP at about
/// 1000 / kSizeClassMilli + kSizeClassMilli coverage rows: with every size from 1 to 999 milli, exact
/// sizes made the LPs take minutes. The openb traces' sizes are multiples of 10, so there it is exact.
constexpr int32_t kSizeClassMilli = 10;
int32_t size_class_milli(int32_t milli);

/// The size classes of `sizes` (distinct gpu_milli values, ascending): the distinct
/// size_class_milli values, ascending, and for each size the index of its class.
struct SizeClasses {
  std::vector<int32_t> class_sizes;
  std::vector<int> class_of_size;
};
SizeClasses size_classes(std::span<const int32_t> sizes);

/// The simplex for the packing LPs: iteration-limited primal, then dual, then primal from an
/// advanced basis (kSimplexIterationLimit each). False if none reaches an optimum; callers then
/// return a trivially valid bound rather than hang or throw.
constexpr int kSimplexIterationLimit = 20000;
bool solve_packing_lp(glp_prob* lp);

/// Column-generation pricing shared by the packing LPs: the multiset of item sizes (gpu_milli, each
/// 1..1000) that fits one GPU and has the largest total weight (unbounded knapsack over 1000 milli;
/// negative weights count as 0). Fills copies[i] with the copies of sizes[i]; returns the weight.
double best_gpu_pattern(std::span<const int32_t> sizes, std::span<const double> weights, std::vector<int>& copies);

}  // namespace gpufleet::bound
