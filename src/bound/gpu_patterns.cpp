#include "bound/gpu_patterns.h"

#include <algorithm>
#include <map>

#include "model/pod.h"

namespace gpufleet::bound {

int32_t size_class_milli(int32_t milli) { return milli < kSizeClassMilli ? milli : milli - milli % kSizeClassMilli; }

SizeClasses size_classes(std::span<const int32_t> sizes) {
  SizeClasses out;
  std::map<int32_t, int> index;
  for (int32_t size : sizes) index.emplace(size_class_milli(size), 0);
  for (auto& [size, i] : index) {
    i = static_cast<int>(out.class_sizes.size());
    out.class_sizes.push_back(size);
  }
  for (int32_t size : sizes) out.class_of_size.push_back(index.at(size_class_milli(size)));
  return out;
}

double best_gpu_pattern(std::span<const int32_t> sizes, std::span<const double> weights, std::vector<int>& copies) {
  constexpr int kCapacity = kGpuMilliPerGpu;
  std::vector<double> best(kCapacity + 1, 0.0);
  std::vector<int> choice(kCapacity + 1, -1);  // size index taken last at capacity c, -1: c - 1 is as good
  for (int c = 1; c <= kCapacity; ++c) {
    const auto cu = static_cast<size_t>(c);
    best[cu] = best[cu - 1];
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] > c || weights[i] <= 0) continue;
      const double v = best[static_cast<size_t>(c - sizes[i])] + weights[i];
      if (v > best[cu]) {
        best[cu] = v;
        choice[cu] = static_cast<int>(i);
      }
    }
  }
  copies.assign(sizes.size(), 0);
  for (int c = kCapacity; c > 0;) {
    const int i = choice[static_cast<size_t>(c)];
    if (i < 0) {
      --c;
      continue;
    }
    ++copies[static_cast<size_t>(i)];
    c -= sizes[static_cast<size_t>(i)];
  }
  return best[kCapacity];
}

bool solve_packing_lp(glp_prob* lp) {
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_OFF;  // keep the basis for warm starts
  params.it_lim = kSimplexIterationLimit;
  params.meth = GLP_PRIMAL;
  if (glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT) return true;
  params.meth = GLP_DUALP;
  if (glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT) return true;
  glp_adv_basis(lp, 0);
  params.meth = GLP_PRIMAL;
  return glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT;
}

PatternColumns::PatternColumns(glp_prob* lp, std::vector<int32_t> class_sizes, double coverage_sign,
                               std::vector<std::pair<int, double>> extra)
    : lp_(lp), class_sizes_(std::move(class_sizes)), coverage_sign_(coverage_sign), extra_(std::move(extra)) {}

void PatternColumns::add(const std::vector<int>& copies) {
  const int col = glp_add_cols(lp_, 1);
  glp_set_col_bnds(lp_, col, GLP_LO, 0.0, 0.0);
  std::vector<int> rows{0};
  std::vector<double> values{0.0};
  for (size_t c = 0; c < class_sizes_.size(); ++c) {
    if (copies[c] == 0) continue;
    rows.push_back(static_cast<int>(c) + 1);
    values.push_back(coverage_sign_ * copies[c]);
  }
  for (const auto& [row, value] : extra_) {
    rows.push_back(row);
    values.push_back(value);
  }
  glp_set_mat_col(lp_, col, static_cast<int>(rows.size()) - 1, rows.data(), values.data());
}

void PatternColumns::add_single_class_patterns() {
  for (size_t c = 0; c < class_sizes_.size(); ++c) {
    std::vector<int> copies(class_sizes_.size(), 0);
    copies[c] = kGpuMilliPerGpu / class_sizes_[c];
    add(copies);
  }
}

std::optional<double> PatternColumns::generate(double patterns_bound) {
  std::vector<int> copies;
  std::vector<double> weight(class_sizes_.size());
  double excess = 0.0;  // the largest reduced cost of a pattern not in the LP
  for (int added = 0;; ++added) {
    if (!solve_packing_lp(lp_)) return std::nullopt;
    if (class_sizes_.empty()) break;
    // A pattern's reduced cost is -(sum_c sign a[c] y[c] + sum_extra value y[row]), y the row duals;
    // so the knapsack weights are -sign y[c] and the extra rows' part is subtracted.
    for (size_t c = 0; c < class_sizes_.size(); ++c)
      weight[c] = -coverage_sign_ * glp_get_row_dual(lp_, static_cast<int>(c) + 1);
    excess = best_gpu_pattern(class_sizes_, weight, copies);
    for (const auto& [row, value] : extra_) excess -= value * glp_get_row_dual(lp_, row);
    if (excess <= kReducedCostTolerance || added == kMaxPatternsPerCall) break;
    add(copies);
  }
  // Farley: raising the dual of the row that bounds sum x by `excess` makes every pattern dual
  // feasible, so the full LP's optimum is at most this.
  return glp_get_obj_val(lp_) + patterns_bound * std::max(0.0, excess);
}

}  // namespace gpufleet::bound
