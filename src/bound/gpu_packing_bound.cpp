#include "bound/gpu_packing_bound.h"

#include <algorithm>
#include <climits>
#include <map>

#include <glpk.h>

namespace gpufleet::bound {
namespace {

// Column generation stops when no pattern improves the LP by more than this reduced cost (in
// gpu_milli per GPU), or after this many new patterns per call; Farley's term covers either stop.
constexpr double kReducedCostTolerance = 1e-7;
constexpr int kMaxPatternsPerCall = 2000;

}  // namespace

bool solve_packing_lp(glp_prob* lp) {
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_OFF;  // keep the basis for warm starts
  // Degenerate pivots can stall the primal simplex on these LPs (seen with hundreds of sizes), so
  // each attempt has an iteration limit: primal, then dual, then primal from an advanced basis.
  params.it_lim = kSimplexIterationLimit;
  params.meth = GLP_PRIMAL;
  if (glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT) return true;
  params.meth = GLP_DUALP;
  if (glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT) return true;
  glp_adv_basis(lp, 0);
  params.meth = GLP_PRIMAL;
  return glp_simplex(lp, &params) == 0 && glp_get_status(lp) == GLP_OPT;
}

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

struct GpuPackingBound::Impl {
  glp_prob* lp = nullptr;
  std::vector<int32_t> sizes;             // distinct item sizes in gpu_milli, ascending
  std::vector<int> class_of_size;         // size index -> size class index (coverage row - 1)
  std::vector<int32_t> class_sizes;       // distinct size_class_milli values, ascending
  std::vector<int> size_of_pod;           // pod index -> size index, -1 without a GPU request
  std::vector<int32_t> items_of_pod;      // pod index -> num_gpu
  std::vector<int64_t> counts;            // items per size in the current prefix
  size_t prefix = 0;
  double gpus = 0;
  int coverage_rows = 0;                  // rows 1..k, one per size class; row k + 1 is the GPU count
  ~Impl() {
    if (lp) glp_delete_prob(lp);
  }

  void add_pattern(const std::vector<int>& copies) {
    const int col = glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
    std::vector<int> rows{0};
    std::vector<double> values{0.0};
    for (int s = 0; s < coverage_rows; ++s) {
      if (copies[static_cast<size_t>(s)] == 0) continue;
      rows.push_back(s + 1);
      values.push_back(-static_cast<double>(copies[static_cast<size_t>(s)]));
    }
    rows.push_back(coverage_rows + 1);
    values.push_back(1.0);
    glp_set_mat_col(lp, col, static_cast<int>(rows.size()) - 1, rows.data(), values.data());
  }

  double best_pattern(std::vector<int>& copies) const {
    std::vector<double> dual(class_sizes.size());
    for (size_t c = 0; c < class_sizes.size(); ++c) dual[c] = glp_get_row_dual(lp, static_cast<int>(c) + 1);
    return best_gpu_pattern(class_sizes, dual, copies);
  }
};

GpuPackingBound::GpuPackingBound(const std::vector<Node>& nodes, const std::vector<Pod>& pods) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  for (const Node& n : nodes) m.gpus += n.gpu_count;
  std::map<int32_t, int> index;
  for (const Pod& p : pods)
    if (p.is_gpu_pod()) index.emplace(std::min(p.gpu_milli, kGpuMilliPerGpu), 0);
  for (auto& [size, i] : index) {
    i = static_cast<int>(m.sizes.size());
    m.sizes.push_back(size);
  }
  m.size_of_pod.reserve(pods.size());
  m.items_of_pod.reserve(pods.size());
  for (const Pod& p : pods) {
    m.size_of_pod.push_back(p.is_gpu_pod() ? index.at(std::min(p.gpu_milli, kGpuMilliPerGpu)) : -1);
    m.items_of_pod.push_back(p.is_gpu_pod() ? p.num_gpu : 0);
  }
  m.counts.assign(m.sizes.size(), 0);
  SizeClasses classes = size_classes(m.sizes);
  m.class_sizes = std::move(classes.class_sizes);
  m.class_of_size = std::move(classes.class_of_size);
  m.coverage_rows = static_cast<int>(m.class_sizes.size());
  if (m.sizes.empty()) return;

  glp_term_out(GLP_OFF);
  glp_prob* lp = m.lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_rows(lp, m.coverage_rows + 1);
  for (int s = 0; s < m.coverage_rows; ++s) glp_set_row_bnds(lp, s + 1, GLP_UP, 0.0, 0.0);
  glp_set_row_bnds(lp, m.coverage_rows + 1, GLP_UP, 0.0, m.gpus);
  const int size_count = static_cast<int>(m.sizes.size());
  glp_add_cols(lp, size_count);  // p[s], bounded by the prefix's counts in bound_milli
  for (int s = 0; s < size_count; ++s) {
    glp_set_col_bnds(lp, s + 1, GLP_FX, 0.0, 0.0);
    glp_set_obj_coef(lp, s + 1, static_cast<double>(m.sizes[static_cast<size_t>(s)]));
    int row[2] = {0, m.class_of_size[static_cast<size_t>(s)] + 1};
    double value[2] = {0.0, 1.0};
    glp_set_mat_col(lp, s + 1, 1, row, value);
  }
  for (int c = 0; c < m.coverage_rows; ++c) {  // one pattern per class: as many copies as fit
    std::vector<int> copies(m.class_sizes.size(), 0);
    copies[static_cast<size_t>(c)] = kGpuMilliPerGpu / m.class_sizes[static_cast<size_t>(c)];
    m.add_pattern(copies);
  }
}

GpuPackingBound::~GpuPackingBound() = default;

double GpuPackingBound::bound_milli(size_t prefix) {
  Impl& m = *impl_;
  if (m.sizes.empty()) return 0.0;
  if (prefix > m.size_of_pod.size()) prefix = m.size_of_pod.size();
  if (prefix < m.prefix) {
    std::fill(m.counts.begin(), m.counts.end(), 0);
    m.prefix = 0;
  }
  for (; m.prefix < prefix; ++m.prefix)
    if (m.size_of_pod[m.prefix] >= 0) m.counts[static_cast<size_t>(m.size_of_pod[m.prefix])] += m.items_of_pod[m.prefix];
  for (int s = 0; s < static_cast<int>(m.sizes.size()); ++s) {
    const double count = static_cast<double>(m.counts[static_cast<size_t>(s)]);
    glp_set_col_bnds(m.lp, s + 1, count > 0 ? GLP_DB : GLP_FX, 0.0, count);
  }
  std::vector<int> copies;
  double excess = 0.0;  // largest reduced cost of a pattern not in the LP, per GPU
  for (int added = 0;; ++added) {
    if (!solve_packing_lp(m.lp)) {  // no LP value: the trivially valid bound
      double items_milli = 0.0;
      for (size_t s = 0; s < m.sizes.size(); ++s) items_milli += static_cast<double>(m.counts[s]) * m.sizes[s];
      return std::min(items_milli, 1000.0 * m.gpus);
    }
    excess = m.best_pattern(copies) - glp_get_row_dual(m.lp, m.coverage_rows + 1);
    if (excess <= kReducedCostTolerance || added == kMaxPatternsPerCall) break;
    m.add_pattern(copies);
  }
  // Farley: raising the GPU row's dual by `excess` makes every pattern dual feasible, so the optimum
  // over all patterns is at most the restricted optimum plus G * excess.
  return glp_get_obj_val(m.lp) + m.gpus * std::max(0.0, excess);
}

}  // namespace gpufleet::bound
