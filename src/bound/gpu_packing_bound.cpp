#include "bound/gpu_packing_bound.h"

#include <algorithm>
#include <map>
#include <optional>

#include <glpk.h>

#include "bound/gpu_patterns.h"

namespace gpufleet::bound {

struct GpuPackingBound::Impl {
  glp_prob* lp = nullptr;
  std::vector<int32_t> sizes;             // distinct item sizes in gpu_milli, ascending
  std::vector<int> size_of_pod;           // pod index -> size index, -1 without a GPU request
  std::vector<int32_t> items_of_pod;      // pod index -> num_gpu
  std::vector<int64_t> counts;            // items per size in the current prefix
  size_t prefix = 0;
  double gpus = 0;
  std::optional<PatternColumns> patterns;  // rows 1..k, one per size class; row k + 1 is the GPU count
  ~Impl() {
    if (lp) glp_delete_prob(lp);
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
  if (m.sizes.empty()) return;
  SizeClasses classes = size_classes(m.sizes);
  const int k = static_cast<int>(classes.class_sizes.size());

  glp_term_out(GLP_OFF);
  glp_prob* lp = m.lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_rows(lp, k + 1);
  for (int c = 0; c < k; ++c) glp_set_row_bnds(lp, c + 1, GLP_UP, 0.0, 0.0);  // placed - covered <= 0
  glp_set_row_bnds(lp, k + 1, GLP_UP, 0.0, m.gpus);
  const int size_count = static_cast<int>(m.sizes.size());
  glp_add_cols(lp, size_count);  // p[s], bounded by the prefix's counts in bound_milli
  for (int s = 0; s < size_count; ++s) {
    glp_set_col_bnds(lp, s + 1, GLP_FX, 0.0, 0.0);
    glp_set_obj_coef(lp, s + 1, static_cast<double>(m.sizes[static_cast<size_t>(s)]));
    int row[2] = {0, classes.class_of_size[static_cast<size_t>(s)] + 1};
    double value[2] = {0.0, 1.0};
    glp_set_mat_col(lp, s + 1, 1, row, value);
  }
  m.patterns.emplace(lp, std::move(classes.class_sizes), -1.0, std::vector<std::pair<int, double>>{{k + 1, 1.0}});
  m.patterns->add_single_class_patterns();
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
  double requested_milli = 0.0;
  for (size_t s = 0; s < m.sizes.size(); ++s) {
    const double count = static_cast<double>(m.counts[s]);
    glp_set_col_bnds(m.lp, static_cast<int>(s) + 1, count > 0 ? GLP_DB : GLP_FX, 0.0, count);
    requested_milli += count * m.sizes[s];
  }
  // At most G patterns are used (the GPU row), so Farley's multiplier is G.
  const std::optional<double> value = m.patterns->generate(m.gpus);
  return value ? *value : std::min(requested_milli, static_cast<double>(kGpuMilliPerGpu) * m.gpus);
}

}  // namespace gpufleet::bound
