#include "bound/work_conserving_bound.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>

#include <glpk.h>

#include "bound/gpu_patterns.h"

namespace gpufleet::bound {
namespace {

constexpr size_t kFirstIntervals = 64;          // the first cover of the arrivals
constexpr size_t kSplit = 8;                    // children per refined interval
constexpr size_t kLeavesPerPrefix = 1000;        // intervals narrower than prefix / this are not split

// The workload summarized for the interval LPs.
struct Items {
  std::vector<int32_t> sizes;             // distinct fractional sizes, ascending
  std::vector<int> class_of_size;         // size index -> size class index (gpu_patterns.h)
  std::vector<int32_t> class_sizes;       // distinct size_class_milli values, ascending
  std::vector<int> size_of_pod;           // pod -> size index, -1 if not fractional
  std::vector<int32_t> gpus_of_pod;       // pod -> num_gpu
  std::vector<bool> forced_if_before;     // pod is placed whenever it arrives before X
  std::vector<int64_t> whole_milli;       // pod -> its milli if whole-GPU, else 0
  int64_t arrived_milli = 0;
};

Items summarize(const std::vector<Pod>& pods, size_t prefix) {
  Items it;
  std::map<int32_t, int> index;
  for (size_t i = 0; i < prefix; ++i)
    if (pods[i].is_gpu_pod() && pods[i].gpu_milli < kGpuMilliPerGpu) index.emplace(pods[i].gpu_milli, 0);
  for (auto& [size, i] : index) {
    i = static_cast<int>(it.sizes.size());
    it.sizes.push_back(size);
  }
  SizeClasses classes = size_classes(it.sizes);
  it.class_sizes = std::move(classes.class_sizes);
  it.class_of_size = std::move(classes.class_of_size);
  for (size_t i = 0; i < prefix; ++i) {
    const Pod& p = pods[i];
    const bool fractional = p.is_gpu_pod() && p.gpu_milli < kGpuMilliPerGpu;
    it.size_of_pod.push_back(fractional ? index.at(p.gpu_milli) : -1);
    it.gpus_of_pod.push_back(p.num_gpu);
    it.forced_if_before.push_back(fractional && p.num_gpu == 1 && p.gpu_spec.empty());
    it.whole_milli.push_back(p.is_gpu_pod() && !fractional ? p.gpu_request_milli() : 0);
    it.arrived_milli += p.gpu_request_milli();
  }
  return it;
}

// The LP's optimum for X in [i1, i2] (see the header), plus Farley's term.
double interval_bound(const Items& it, double gpus, size_t i1, size_t i2) {
  const int k = static_cast<int>(it.class_sizes.size());     // coverage rows: one per size class
  const int sizes = static_cast<int>(it.sizes.size());       // t columns: one per size
  std::vector<double> before(it.class_sizes.size(), 0.0);    // per class
  std::vector<double> optional(it.sizes.size(), 0.0);       // per size
  double whole_failing = 0.0, optional_milli = 0.0, before_milli = 0.0;
  for (size_t i = 0; i < it.size_of_pod.size(); ++i) {
    if (i >= i2) whole_failing += static_cast<double>(it.whole_milli[i]);
    const int s = it.size_of_pod[i];
    if (s < 0) continue;
    const double pod_items = it.gpus_of_pod[i], milli = pod_items * it.sizes[static_cast<size_t>(s)];
    if (i < i1 && it.forced_if_before[i]) {
      before[static_cast<size_t>(it.class_of_size[static_cast<size_t>(s)])] += pod_items;
      before_milli += milli;
    } else {
      optional[static_cast<size_t>(s)] += pod_items;
      optional_milli += milli;
    }
  }
  const double arrived = static_cast<double>(it.arrived_milli);

  glp_prob* lp = glp_create_prob();
  struct Guard {
    glp_prob* p;
    ~Guard() { glp_delete_prob(p); }
  } guard{lp};
  glp_set_obj_dir(lp, GLP_MAX);
  const int r_fail = k + 1, r_free = k + 2, r_gpus = k + 3;
  glp_add_rows(lp, k + 3);
  for (int c = 0; c < k; ++c) glp_set_row_bnds(lp, c + 1, GLP_LO, before[static_cast<size_t>(c)], 0.0);
  glp_set_row_bnds(lp, r_fail, GLP_UP, 0.0, arrived - whole_failing - optional_milli);
  glp_set_row_bnds(lp, r_free, GLP_UP, 0.0, kGpuMilliPerGpu * gpus + before_milli);
  // Not sum x <= G: with the pods before i1 forced, that can make the LP infeasible, which the
  // restricted LP cannot tell from a lack of patterns. One pattern per item always suffices, so this
  // row leaves the optimum unchanged and bounds sum x for Farley's term.
  double all_items = 0.0;
  for (double n : before) all_items += n;
  for (double n : optional) all_items += n;
  glp_set_row_bnds(lp, r_gpus, GLP_UP, 0.0, all_items);
  // Column 1: V. Columns 2..sizes+1: t[s]. Then patterns.
  glp_add_cols(lp, 1 + sizes);
  // V is free below (so the LP is always feasible); a negative optimum means no run has X here.
  glp_set_col_bnds(lp, 1, GLP_UP, 0.0, arrived);
  glp_set_obj_coef(lp, 1, 1.0);
  {
    int rows[3] = {0, r_fail, r_free};
    double values[3] = {0.0, 1.0, 1.0};
    glp_set_mat_col(lp, 1, 2, rows, values);
  }
  for (int s = 0; s < sizes; ++s) {
    const double cap = optional[static_cast<size_t>(s)];
    glp_set_col_bnds(lp, s + 2, cap > 0 ? GLP_DB : GLP_FX, 0.0, cap);
    const double size = it.sizes[static_cast<size_t>(s)];
    int rows[4] = {0, it.class_of_size[static_cast<size_t>(s)] + 1, r_fail, r_free};
    double values[4] = {0.0, -1.0, -size, -size};
    glp_set_mat_col(lp, s + 2, 3, rows, values);
  }
  PatternColumns patterns(lp, it.class_sizes, 1.0, {{r_free, static_cast<double>(kGpuMilliPerGpu)}, {r_gpus, 1.0}});
  patterns.add_single_class_patterns();
  // At most all_items patterns are used (the r_gpus row), so that is Farley's multiplier.
  return patterns.generate(all_items).value_or(arrived);  // no LP value: all arrived milli, always valid
}

}  // namespace

double work_conserving_bound_milli(int64_t gpu_count, const std::vector<Pod>& pods, size_t prefix) {
  if (gpu_count < 0) throw std::invalid_argument("work_conserving_bound: negative GPU count");
  prefix = std::min(prefix, pods.size());
  glp_term_out(GLP_OFF);
  const Items it = summarize(pods, prefix);
  const double gpus = static_cast<double>(gpu_count);

  // A run's allocation is at most the bound of the interval holding its X, so every run's is at most
  // the largest bound over a cover of X in [0, prefix]. Refining the interval with the largest bound
  // (its children's bounds are no higher) until that interval is narrow gives the cover's maximum.
  struct Interval {
    double bound;
    size_t i1, i2;
    bool operator<(const Interval& o) const { return bound < o.bound; }
  };
  std::priority_queue<Interval> open;  // largest bound first
  auto push_cover = [&](size_t lo, size_t hi, size_t parts) {
    const size_t width = std::max<size_t>(1, (hi - lo + parts - 1) / parts);
    for (size_t a = lo; a < hi; a += width) {
      const size_t b = std::min(hi, a + width);
      open.push({interval_bound(it, gpus, a, b), a, b});
    }
    if (lo == hi) open.push({interval_bound(it, gpus, lo, hi), lo, hi});
  };
  push_cover(0, prefix, kFirstIntervals);
  const size_t leaf = std::max<size_t>(1, prefix / kLeavesPerPrefix);
  for (;;) {
    const Interval best = open.top();
    if (best.i2 - best.i1 <= leaf) return std::max(0.0, best.bound);
    open.pop();
    push_cover(best.i1, best.i2, kSplit);
  }
}

}  // namespace gpufleet::bound
