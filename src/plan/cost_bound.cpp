#include "plan/cost_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <glpk.h>

#include "model/gpu_catalog.h"
#include "model/gpu_spec.h"

namespace gpufleet::plan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Whether one pod of `shape` fits an empty node of `option`, step by step, for the message.
bool model_allows(const PodShape& shape, const CostBoundOption& option) {
  if (shape.node_gpus == 0 && shape.mig_profile.empty()) return true;  // CPU-only: any node
  if (!shape.gpu_spec.empty() && !gpu_spec_allows(shape.gpu_spec, option.gpu_model)) return false;
  if (!shape.mig_profile.empty()) {
    const GpuModelInfo* model = find_gpu_model(option.gpu_model);
    return model != nullptr && model->find_mig_profile(shape.mig_profile) != nullptr;
  }
  return true;
}

// Throws std::invalid_argument naming the item when one pod of `shape` fits no option's node.
void check_fits(const PodShape& shape, const std::vector<CostBoundOption>& options) {
  std::vector<const CostBoundOption*> fit;
  for (const CostBoundOption& o : options)
    if (model_allows(shape, o)) fit.push_back(&o);
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(fmt::format("cost bound: workload item '{}': {}", shape.item, why));
  };
  if (fit.empty()) {
    if (!shape.mig_profile.empty())
      fail(fmt::format("its pods ask for MIG profile {}{}, and no admissible instance type has a GPU model with it",
                       shape.mig_profile, shape.gpu_spec.empty() ? "" : fmt::format(" on gpu_spec '{}'", shape.gpu_spec)));
    fail(fmt::format("its pods may use GPU models '{}', and no admissible instance type has one", shape.gpu_spec));
  }
  int32_t most_gpus = 0;
  for (const CostBoundOption* o : fit) most_gpus = std::max(most_gpus, o->gpus);
  std::erase_if(fit, [&](const CostBoundOption* o) { return o->gpus < shape.node_gpus; });
  if (fit.empty())
    fail(fmt::format("a pod needs {} GPUs on one node, more than any admissible instance type it may use has ({})",
                     shape.node_gpus, most_gpus));
  int64_t most_cpu = 0;
  for (const CostBoundOption* o : fit) most_cpu = std::max(most_cpu, o->cpu_milli);
  std::erase_if(fit, [&](const CostBoundOption* o) { return o->cpu_milli < shape.cpu_milli; });
  if (fit.empty())
    fail(fmt::format("a pod asks for {} milli-CPU, more than any admissible node with {} GPUs has ({})",
                     shape.cpu_milli, shape.node_gpus, most_cpu));
  int64_t most_memory = 0;
  for (const CostBoundOption* o : fit) most_memory = std::max(most_memory, o->memory_bytes);
  std::erase_if(fit, [&](const CostBoundOption* o) { return o->memory_bytes < shape.memory_bytes; });
  if (fit.empty())
    fail(fmt::format("a pod asks for {:.2f} GiB of memory, more than any admissible node with {} GPUs and its CPU "
                     "has ({:.2f} GiB)",
                     static_cast<double>(shape.memory_bytes) / kGiB, shape.node_gpus,
                     static_cast<double>(most_memory) / kGiB));
}

bool positive_price(double p) { return p > 0 && std::isfinite(p); }

void check_options(const std::vector<CostBoundOption>& options) {
  if (options.empty()) throw std::invalid_argument("cost bound: no admissible instance type (check the allowed GPU models and zones)");
  for (const CostBoundOption& o : options) {
    auto bad = [&](std::string_view why) {
      throw std::invalid_argument(fmt::format("cost bound: option {}/{}: {}", o.instance_type, o.zone, why));
    };
    if (o.gpus < 0 || o.cpu_milli <= 0 || o.memory_bytes <= 0) bad("GPUs must not be negative, CPU and memory must be positive");
    if (!positive_price(o.on_demand_usd_per_hour)) bad("the on-demand price must be positive");
    if (o.spot_usd_per_hour && !positive_price(*o.spot_usd_per_hour)) bad("the spot price must be positive");
    if (o.committed_usd_per_hour && !positive_price(*o.committed_usd_per_hour)) bad("the committed price must be positive");
  }
}

// The six demands of one (merged) bucket, in the LP's units: GPUs, cores, GiB; all pods and the
// on-demand-only ones.
enum Resource { kGpu, kCpu, kMemory, kResources };
struct LpBucket {
  double hours = 0;
  double all[kResources] = {0, 0, 0};
  double on_demand[kResources] = {0, 0, 0};
};

}  // namespace

bool option_holds(const sim::WorkloadSpec& s, const CostBoundOption& o) {
  if (s.num_gpu > o.gpus || s.cpu_milli > o.cpu_milli || s.memory_bytes > o.memory_bytes) return false;
  if (!s.mig_requests.empty()) {
    const GpuModelInfo* model = o.gpus > 0 ? find_gpu_model(o.gpu_model) : nullptr;
    if (model == nullptr) return false;
    for (const MigRequest& r : s.mig_requests) {
      const MigProfile* p = model->find_mig_profile(r.profile);
      if (p == nullptr || (r.count + std::max(1, p->max_count) - 1) / std::max(1, p->max_count) > o.gpus) return false;
    }
  } else if (s.num_gpu == 0) {
    return true;
  }
  if (s.gpu_spec.empty()) return true;
  size_t start = 0;
  while (true) {
    const size_t bar = s.gpu_spec.find('|', start);
    if (s.gpu_spec.compare(start, bar == std::string::npos ? std::string::npos : bar - start, o.gpu_model) == 0) return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

std::vector<CostBoundOption> admissible_options(const PriceCatalog& catalog, const PlanConstraints& constraints) {
  std::vector<CostBoundOption> out;
  for (const InstanceType& type : catalog.instance_types) {
    if (type.gpus > 0 && !constraints.allowed_gpu_models.empty() &&
        std::none_of(constraints.allowed_gpu_models.begin(), constraints.allowed_gpu_models.end(),
                     [&](const std::string& m) { return equal_ignoring_case(m, type.gpu_model); }))
      continue;
    for (const Offering& offering : type.offerings) {
      if (!constraints.allowed_zones.empty() &&
          std::find(constraints.allowed_zones.begin(), constraints.allowed_zones.end(), offering.zone) ==
              constraints.allowed_zones.end())
        continue;
      CostBoundOption o;
      o.instance_type = type.name;
      o.zone = offering.zone;
      o.gpu_model = type.gpu_model;
      o.gpus = type.gpus;
      o.cpu_milli = type.cpu_milli;
      o.memory_bytes = type.memory_bytes;
      o.on_demand_usd_per_hour = offering.on_demand_usd_per_hour;
      if (constraints.max_spot_share > 0) {
        o.spot_usd_per_hour = offering.spot_usd_per_hour;
        o.spot_interruptions_per_hour = offering.spot_interruptions_per_hour;
      }
      for (Commitment c : constraints.allowed_commitments) {
        const std::optional<double> price = offering.commitment_usd_per_hour(c);
        if (price && (!o.committed_usd_per_hour || *price < *o.committed_usd_per_hour)) {
          o.committed_usd_per_hour = price;
          o.commitment = std::string(commitment_name(c));
        }
      }
      out.push_back(std::move(o));
    }
  }
  return out;
}

CostBound cost_lower_bound(const DemandCurve& demand, const std::vector<CostBoundOption>& options, double max_spot_share,
                           std::optional<double> min_allocation) {
  if (min_allocation && !(*min_allocation > 0 && *min_allocation <= 1))
    throw std::invalid_argument(fmt::format("cost bound: minimum allocation {} is outside (0, 1]", *min_allocation));
  check_options(options);
  if (!(max_spot_share >= 0 && max_spot_share <= 1))
    throw std::invalid_argument(fmt::format("cost bound: max spot share {} is outside [0, 1]", max_spot_share));
  for (const PodShape& shape : demand.pod_shapes) check_fits(shape, options);

  CostBound result;
  result.gpu_hours_needed = demand.gpu_hours;
  const size_t num_options = options.size();
  std::vector<bool> spot(num_options), committed(num_options);
  int64_t committed_cols = 0, cols_per_bucket = 0;
  for (size_t k = 0; k < num_options; ++k) {
    spot[k] = max_spot_share > 0 && options[k].spot_usd_per_hour.has_value();
    committed[k] = options[k].committed_usd_per_hour.has_value();
    committed_cols += committed[k] ? 1 : 0;
    cols_per_bucket += spot[k] ? 2 : 1;
  }

  // Buckets, merged f at a time when the LP would be too large (length-weighted averages: a relaxation).
  const auto num_buckets = static_cast<int64_t>(demand.buckets.size());
  const int64_t room = std::max<int64_t>(1, (kCostBoundMaxColumns - committed_cols) / cols_per_bucket);
  const int64_t f = num_buckets <= room ? 1 : (num_buckets + room - 1) / room;
  result.buckets_merged = f;
  std::vector<LpBucket> lp_buckets;
  for (int64_t first = 0; first < num_buckets; first += f) {
    LpBucket m;
    const int64_t last = std::min(num_buckets, first + f);
    for (int64_t i = first; i < last; ++i) {
      const DemandBucket& b = demand.buckets[static_cast<size_t>(i)];
      const double h = std::max(0.0, b.end_s - b.start_s) / 3600.0;
      m.hours += h;
      m.all[kGpu] += h * b.gpus;
      m.on_demand[kGpu] += h * b.gpus_on_demand_only;
      m.all[kCpu] += h * b.cpu_milli / 1000.0;
      m.on_demand[kCpu] += h * b.cpu_milli_on_demand_only / 1000.0;
      m.all[kMemory] += h * b.memory_bytes / kGiB;
      m.on_demand[kMemory] += h * b.memory_bytes_on_demand_only / kGiB;
    }
    if (m.hours <= 0) continue;
    for (int r = 0; r < kResources; ++r) {
      m.all[r] /= m.hours;
      m.on_demand[r] /= m.hours;
    }
    lp_buckets.push_back(m);
  }
  const double horizon_h = demand.horizon_s > 0 ? demand.horizon_s / 3600.0 : [&] {
    double h = 0;
    for (const LpBucket& b : lp_buckets) h += b.hours;
    return h;
  }();

  // Rows: per bucket, the demands above zero.
  struct Row {
    size_t bucket;
    Resource resource;
    bool on_demand_only;
    double rhs;
  };
  std::vector<Row> rows;
  std::vector<std::vector<int>> bucket_rows(lp_buckets.size());  // row indices (0-based) per bucket
  for (size_t t = 0; t < lp_buckets.size(); ++t)
    for (int r = 0; r < kResources; ++r)
      for (bool od : {false, true}) {
        const double rhs = od ? lp_buckets[t].on_demand[r] : lp_buckets[t].all[r];
        if (rhs > 1e-12) {
          bucket_rows[t].push_back(static_cast<int>(rows.size()));
          rows.push_back({t, static_cast<Resource>(r), od, rhs});
        }
      }
  if (rows.empty()) return result;  // no demand: buying nothing is optimal
  bool any_spot = false;
  for (size_t k = 0; k < num_options; ++k) any_spot = any_spot || spot[k];
  const bool share_row = any_spot && max_spot_share < 1;

  auto amount = [&](const CostBoundOption& o, Resource r) {
    return r == kGpu ? static_cast<double>(o.gpus)
           : r == kCpu ? static_cast<double>(o.cpu_milli) / 1000.0
                       : static_cast<double>(o.memory_bytes) / kGiB;
  };

  glp_term_out(GLP_OFF);
  glp_prob* lp = glp_create_prob();
  struct Guard {
    glp_prob* p;
    ~Guard() { glp_delete_prob(p); }
  } guard{lp};
  glp_set_obj_dir(lp, GLP_MIN);
  const bool alloc_row = min_allocation.has_value();
  const int num_rows = static_cast<int>(rows.size()) + (share_row ? 1 : 0) + (alloc_row ? 1 : 0);
  glp_add_rows(lp, num_rows);
  for (size_t i = 0; i < rows.size(); ++i) glp_set_row_bnds(lp, static_cast<int>(i) + 1, GLP_LO, rows[i].rhs, 0.0);
  const int share = share_row ? static_cast<int>(rows.size()) + 1 : 0;
  if (share_row) glp_set_row_bnds(lp, share, GLP_UP, 0.0, 0.0);
  // GPU-hours billed <= GPU-hours needed / the minimum allocation.
  const int alloc = alloc_row ? num_rows : 0;
  if (alloc_row) glp_set_row_bnds(lp, alloc, GLP_UP, 0.0, demand.gpu_hours / *min_allocation);

  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  int col = 0;
  auto add_col = [&](double cost) {
    glp_add_cols(lp, 1);
    ++col;
    glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, col, cost);
    return col;
  };
  auto put = [&](int row, int c, double v) {
    if (v == 0.0) return;
    ia.push_back(row);
    ja.push_back(c);
    ar.push_back(v);
  };
  // Column kinds, to read the solution back.
  enum Kind { kCommitted, kOnDemand, kSpot };
  struct Col {
    size_t option;
    Kind kind;
    double hours;  // the hours it is billed
    size_t bucket = 0;  // on-demand and spot columns
  };
  std::vector<Col> col_info{{0, kCommitted, 0, 0}};  // 1-based
  for (size_t k = 0; k < num_options; ++k) {
    const CostBoundOption& o = options[k];
    const double g = o.gpus;
    if (committed[k]) {
      const int c = add_col(*o.committed_usd_per_hour * horizon_h);
      col_info.push_back({k, kCommitted, horizon_h, 0});
      for (size_t i = 0; i < rows.size(); ++i) put(static_cast<int>(i) + 1, c, amount(o, rows[i].resource));
      if (share_row) put(share, c, -max_spot_share * g * horizon_h);
      if (alloc_row) put(alloc, c, g * horizon_h);
    }
    for (size_t t = 0; t < lp_buckets.size(); ++t) {
      const double h = lp_buckets[t].hours;
      const int c = add_col(o.on_demand_usd_per_hour * h);
      col_info.push_back({k, kOnDemand, h, t});
      for (int i : bucket_rows[t]) put(i + 1, c, amount(o, rows[static_cast<size_t>(i)].resource));
      if (share_row) put(share, c, -max_spot_share * g * h);
      if (alloc_row) put(alloc, c, g * h);
      if (spot[k]) {
        const int s = add_col(*o.spot_usd_per_hour * h);
        col_info.push_back({k, kSpot, h, t});
        for (int i : bucket_rows[t])
          if (!rows[static_cast<size_t>(i)].on_demand_only) put(i + 1, s, amount(o, rows[static_cast<size_t>(i)].resource));
        if (share_row) put(share, s, (1 - max_spot_share) * g * h);
        if (alloc_row) put(alloc, s, g * h);
      }
    }
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  const int rc = glp_simplex(lp, &params);
  if (alloc_row && (rc == GLP_ENOPFS || glp_get_status(lp) == GLP_NOFEAS)) {
    result.feasible = false;  // no plan reaches the allocation floor, whatever it pays
    return result;
  }
  if (rc != 0 || glp_get_status(lp) != GLP_OPT)
    throw std::runtime_error(fmt::format("cost bound: GLPK simplex failed (code {}, status {})", rc, glp_get_status(lp)));

  result.cost_usd = glp_get_obj_val(lp);
  std::vector<double> committed_count(num_options, 0.0);
  std::vector<double> od_hours(num_options, 0.0), spot_hours(num_options, 0.0);
  std::vector<std::vector<double>> bucket_nodes(num_options, std::vector<double>(lp_buckets.size(), 0.0));
  for (int c = 1; c <= col; ++c) {
    const Col& info = col_info[static_cast<size_t>(c)];
    const CostBoundOption& o = options[info.option];
    double x = glp_get_col_prim(lp, c);
    if (std::abs(x) < 1e-9) x = 0;
    const double usd = x * glp_get_obj_coef(lp, c);
    result.billed_gpu_hours += x * o.gpus * info.hours;
    switch (info.kind) {
      case kCommitted:
        result.committed_usd += usd;
        committed_count[info.option] = x;
        break;
      case kOnDemand:
        result.on_demand_usd += usd;
        od_hours[info.option] += x * info.hours;
        bucket_nodes[info.option][info.bucket] += x;
        break;
      case kSpot:
        result.spot_usd += usd;
        spot_hours[info.option] += x * info.hours;
        bucket_nodes[info.option][info.bucket] += x;
        break;
    }
  }
  for (size_t k = 0; k < num_options; ++k) {
    if (committed_count[k] <= 0 && od_hours[k] <= 0 && spot_hours[k] <= 0) continue;
    CostBound::Use use;
    use.option = k;
    use.committed_nodes = committed_count[k];
    use.on_demand_node_hours = od_hours[k];
    use.spot_node_hours = spot_hours[k];
    for (double n : bucket_nodes[k]) use.peak_nodes = std::max(use.peak_nodes, n + committed_count[k]);
    result.uses.push_back(use);
  }
  for (size_t k = 0; k < num_options; ++k)
    if (committed_count[k] > 0)
      result.committed_nodes.emplace_back(options[k].instance_type + "/" + options[k].zone, committed_count[k]);

  // Which resource's rows carry the optimum: sum of dual x right-hand side per resource (USD).
  double part[kResources] = {0, 0, 0};
  for (size_t i = 0; i < rows.size(); ++i) part[rows[i].resource] += glp_get_row_dual(lp, static_cast<int>(i) + 1) * rows[i].rhs;
  int best = -1;
  for (int r = 0; r < kResources; ++r)
    if (part[r] > 1e-9 * std::max(1.0, result.cost_usd) && (best < 0 || part[r] > part[best])) best = r;
  result.binding = best == kGpu ? "gpu" : best == kCpu ? "cpu" : best == kMemory ? "memory" : "";
  return result;
}

}  // namespace gpufleet::plan
