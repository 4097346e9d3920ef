#include "bound/allocation_bound.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <glpk.h>

#include "bound/gpu_packing_bound.h"
#include "model/cluster_state.h"
#include "sched/plugins/node_resources_fit.h"

namespace gpufleet::bound {
namespace {

// Number of dual-feasible-function cuts per node type (k = 2 .. kDffCuts + 1).
constexpr int kDffCuts = 8;

// Fekete-Schepers dual feasible function u_k on a GPU of capacity 1000 (Fekete & Schepers, "New
// classes of fast lower bounds for bin packing problems", Math. Programming 91, 2001): with
// x = milli / 1000, u_k(x) = x if (k+1) x is an integer, else floor((k+1) x) / k. For any set of
// pods sharing one GPU, the sum of u_k over them is <= 1, so sum u_k * 1000 <= GPUs * 1000.
double dual_feasible_milli(int32_t milli, int k) {
  if ((int64_t{k} + 1) * milli % 1000 == 0) return static_cast<double>(milli);
  return std::floor(static_cast<double>((int64_t{k} + 1) * milli / 1000)) / k * 1000.0;
}

}  // namespace

struct AllocationBound::Impl {
  glp_prob* lp = nullptr;
  std::vector<int> shape_of_pod;       // pod index -> shape index
  std::vector<int> shape_row;          // shape -> row of its count constraint (1-based)
  std::vector<int64_t> counts;         // current count per shape
  size_t prefix = 0;
  std::unique_ptr<GpuPackingBound> packing;
  ~Impl() {
    if (lp) glp_delete_prob(lp);
  }
};

AllocationBound::AllocationBound(const std::vector<Node>& nodes, const std::vector<Pod>& pods) : impl_(std::make_unique<Impl>()) {
  if (nodes.empty()) throw std::invalid_argument("AllocationBound: no nodes");
  // Node types. Memory enters the LP in MiB (bytes would scale its rows by 2^20 and upset GLPK's
  // simplex): node capacity rounded up, pod requests rounded down, a relaxation, so the optimum stays
  // an upper bound (and is unchanged for the openb trace, whose memory is in whole MiB).
  using TypeKey = std::tuple<int64_t, int64_t, int32_t, std::string>;
  std::map<TypeKey, int64_t> type_count;
  std::map<TypeKey, const Node*> type_first;
  for (const Node& n : nodes) {
    const TypeKey key{n.cpu_milli, (n.memory_bytes + kBytesPerMib - 1) / kBytesPerMib, n.gpu_count, n.gpu_model};
    ++type_count[key];
    type_first.emplace(key, &n);
  }
  // One empty template node per type (its first node with the type's rounded memory, GPUs plain), for
  // the fit test of sched::fits().
  std::vector<Node> templates;
  for (const auto& [type, first] : type_first) {
    Node t = *first;
    t.memory_bytes = std::get<1>(type) * kBytesPerMib;
    t.mig.clear();
    t.time_slicing.reset();
    templates.push_back(std::move(t));
  }
  const ClusterState empty_types(std::move(templates));
  // Pod shapes.
  using ShapeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::string>;
  std::map<ShapeKey, int> shape_index;
  std::vector<ShapeKey> shapes;
  std::vector<Pod> shape_pods;  // per shape: a pod of its request, memory in whole MiB
  impl_->shape_of_pod.reserve(pods.size());
  for (const Pod& p : pods) {
    const bool gpu = p.is_gpu_pod();
    ShapeKey key{p.cpu_milli, p.memory_bytes / kBytesPerMib, gpu ? p.num_gpu : 0, gpu ? p.gpu_milli : 0, gpu ? p.gpu_spec : ""};
    auto [it, inserted] = shape_index.try_emplace(key, static_cast<int>(shapes.size()));
    if (inserted) {
      shapes.push_back(key);
      Pod request;
      request.cpu_milli = std::get<0>(key);
      request.memory_bytes = std::get<1>(key) * kBytesPerMib;
      request.num_gpu = std::get<2>(key);
      request.gpu_milli = std::get<3>(key);
      request.gpu_spec = std::get<4>(key);
      shape_pods.push_back(std::move(request));
    }
    impl_->shape_of_pod.push_back(it->second);
  }
  impl_->counts.assign(shapes.size(), 0);
  impl_->packing = std::make_unique<GpuPackingBound>(nodes, pods);

  glp_term_out(GLP_OFF);  // GLPK prints progress (e.g. from glp_adv_basis) on stdout otherwise
  glp_prob* lp = impl_->lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  // Rows: one per shape, then 5 per node type.
  const int shape_rows = static_cast<int>(shapes.size());
  glp_add_rows(lp, shape_rows + (5 + kDffCuts) * static_cast<int>(type_count.size()));
  for (int s = 0; s < shape_rows; ++s) {
    glp_set_row_bnds(lp, s + 1, GLP_UP, 0.0, 0.0);  // count[s], raised as pods arrive
    impl_->shape_row.push_back(s + 1);
  }
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  int row = shape_rows;
  int col = 0;
  NodeId type_id = 0;
  for (const auto& [type, count] : type_count) {
    const NodeId t = type_id++;
    const auto& [cpu, mem, gpus, model] = type;
    const int r_cpu = ++row, r_mem = ++row, r_gpu = ++row, r_half_gpu = ++row, r_half_node = ++row;
    const int r_dff = row + 1;
    row += kDffCuts;
    const double n = static_cast<double>(count);
    glp_set_row_bnds(lp, r_cpu, GLP_UP, 0.0, n * static_cast<double>(cpu));
    glp_set_row_bnds(lp, r_mem, GLP_UP, 0.0, n * static_cast<double>(mem));
    glp_set_row_bnds(lp, r_gpu, GLP_UP, 0.0, n * gpus * 1000.0);
    glp_set_row_bnds(lp, r_half_gpu, GLP_UP, 0.0, n * gpus);
    glp_set_row_bnds(lp, r_half_node, GLP_UP, 0.0, n);
    for (int k = 0; k < kDffCuts; ++k) glp_set_row_bnds(lp, r_dff + k, GLP_UP, 0.0, n * gpus * 1000.0);
    for (int s = 0; s < shape_rows; ++s) {
      const auto& [pcpu, pmem, num, milli, spec] = shapes[static_cast<size_t>(s)];
      if (sched::fits(shape_pods[static_cast<size_t>(s)], empty_types, t).rejected()) continue;
      const int64_t gpu_req = int64_t{num} * milli;
      glp_add_cols(lp, 1);
      ++col;
      glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
      glp_set_obj_coef(lp, col, static_cast<double>(gpu_req));
      auto put = [&](int r, double v) {
        if (v == 0.0) return;
        ia.push_back(r);
        ja.push_back(col);
        ar.push_back(v);
      };
      put(s + 1, 1.0);
      put(r_cpu, static_cast<double>(pcpu));
      put(r_mem, static_cast<double>(pmem));
      put(r_gpu, static_cast<double>(gpu_req));
      if (milli > 500) put(r_half_gpu, static_cast<double>(num));
      if (milli == kGpuMilliPerGpu && 2 * num > gpus) put(r_half_node, 1.0);  // whole-GPU pods only
      for (int k = 0; k < kDffCuts; ++k) put(r_dff + k, static_cast<double>(num) * dual_feasible_milli(milli, k + 2));
    }
  }
  if (col > 0) glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
}

AllocationBound::~AllocationBound() = default;

double AllocationBound::bound_milli(size_t prefix) {
  Impl& m = *impl_;
  if (prefix > m.shape_of_pod.size()) prefix = m.shape_of_pod.size();
  if (prefix < m.prefix) {
    std::fill(m.counts.begin(), m.counts.end(), 0);
    m.prefix = 0;
  }
  for (; m.prefix < prefix; ++m.prefix) ++m.counts[static_cast<size_t>(m.shape_of_pod[m.prefix])];
  for (size_t s = 0; s < m.counts.size(); ++s)
    glp_set_row_bnds(m.lp, m.shape_row[s], GLP_UP, 0.0, static_cast<double>(m.counts[s]));
  const double packing = m.packing->bound_milli(prefix);
  if (glp_get_num_cols(m.lp) == 0) return 0.0;
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_OFF;  // keep the basis for warm starts
  // Warm start from the previous optimal basis (only right-hand sides change between calls). The
  // primal simplex usually needs a few pivots; on some prefixes it stalls in degenerate pivots, so it
  // gets an iteration limit, after which the dual simplex (the old basis stays dual feasible when
  // only right-hand sides change) finishes from where it stopped, and as a last resort the primal
  // simplex restarts from an advanced initial basis without a limit.
  params.meth = GLP_PRIMAL;
  params.it_lim = 2000;
  int rc = glp_simplex(m.lp, &params);
  if (rc != 0 || glp_get_status(m.lp) != GLP_OPT) {
    params.meth = GLP_DUALP;
    rc = glp_simplex(m.lp, &params);
  }
  if (rc != 0 || glp_get_status(m.lp) != GLP_OPT) {
    glp_adv_basis(m.lp, 0);
    params.meth = GLP_PRIMAL;
    params.it_lim = INT_MAX;
    rc = glp_simplex(m.lp, &params);
  }
  if (rc != 0 || glp_get_status(m.lp) != GLP_OPT) throw std::runtime_error("AllocationBound: GLPK simplex failed");
  return std::min(glp_get_obj_val(m.lp), packing);
}

std::vector<double> allocation_bound_curve(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                           const std::vector<size_t>& prefix_ends) {
  AllocationBound b(nodes, pods);
  std::vector<double> out;
  out.reserve(prefix_ends.size());
  for (size_t e : prefix_ends) out.push_back(b.bound_milli(e));
  return out;
}

}  // namespace gpufleet::bound
