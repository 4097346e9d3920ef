#include "plan/search.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "sim/simulator.h"
#include "util/parallel.h"

namespace gpufleet::plan {

namespace {

constexpr double kSecondsPerHour = 3600;

// The largest bucket average of a field.
double peak(const DemandCurve& d, double DemandBucket::*field) {
  double m = 0;
  for (const DemandBucket& b : d.buckets) m = std::max(m, b.*field);
  return m;
}

// The items without MIG devices the option cannot hold (the MIG items go to MIG pools, mig_pool_choices).
size_t items_not_held(const sim::Workload& w, const CostBoundOption& o) {
  size_t n = 0;
  for (const sim::WorkloadSpec& s : w.items) n += !s.mig_requests.empty() || option_holds(s, o) ? 0 : 1;
  return n;
}

std::tuple<double, double, double, std::string> price_key(const CostBoundOption& o) {
  return {o.on_demand_usd_per_hour, o.spot_usd_per_hour.value_or(-1), o.committed_usd_per_hour.value_or(-1), o.commitment};
}

}  // namespace

namespace {

// The most nodes of an option the demand's peak needs (GPU, CPU and memory), x 1.5 + 2.
int32_t nodes_for(const DemandCurve& demand, const CostBoundOption& o) {
  const double nodes_gpu = o.gpus > 0 ? demand.peak_gpus / o.gpus : 0;
  const double nodes_cpu = o.cpu_milli > 0 ? peak(demand, &DemandBucket::cpu_milli) / static_cast<double>(o.cpu_milli) : 0;
  const double nodes_mem = o.memory_bytes > 0 ? peak(demand, &DemandBucket::memory_bytes) / static_cast<double>(o.memory_bytes) : 0;
  return static_cast<int32_t>(std::ceil(std::max({nodes_gpu, nodes_cpu, nodes_mem}) * 1.5)) + 2;
}

// On-demand USD per GPU the workload can use on the option: a node serves min(GPUs, CPU / the
// demand's CPU per GPU, memory / its memory per GPU) of the demand's GPUs.
double usd_per_useful_gpu(const DemandCurve& demand, const CostBoundOption& o) {
  double gpu = 0, cpu = 0, mem = 0;
  for (const DemandBucket& b : demand.buckets) {
    gpu += b.gpus;
    cpu += b.cpu_milli;
    mem += b.memory_bytes;
  }
  double useful = o.gpus;
  if (gpu > 0 && cpu > 0) useful = std::min(useful, static_cast<double>(o.cpu_milli) / (cpu / gpu));
  if (gpu > 0 && mem > 0) useful = std::min(useful, static_cast<double>(o.memory_bytes) / (mem / gpu));
  return useful > 0 ? o.on_demand_usd_per_hour / useful : std::numeric_limits<double>::infinity();
}

// The CPU-only option that serves the workload's pods without GPUs most cheaply on demand, among those
// that hold each of them (that some option holds): USD per useful core, a node serving min(cores,
// memory / those pods' memory per core); ties: the first. nullptr when the workload has no such pods
// or no CPU-only option holds them.
const CostBoundOption* cpu_pool_option(const sim::Workload& workload, const std::vector<CostBoundOption>& options) {
  double cpu = 0, mem = 0;
  for (const sim::WorkloadSpec& s : workload.items) {
    if (s.num_gpu > 0 || !s.mig_requests.empty()) continue;
    const double seconds = s.kind == sim::WorkloadKind::kJob ? s.duration_s : workload.horizon_s;
    cpu += static_cast<double>(s.cpu_milli) * s.pods * seconds;
    mem += static_cast<double>(s.memory_bytes) * s.pods * seconds;
  }
  if (cpu <= 0) return nullptr;
  const CostBoundOption* best = nullptr;
  double best_usd = std::numeric_limits<double>::infinity();
  for (const CostBoundOption& o : options) {
    if (o.gpus != 0) continue;
    // It must hold every such pod some option holds: on tainted GPU nodes they have nowhere else to go.
    const bool holds_them = std::all_of(workload.items.begin(), workload.items.end(), [&](const sim::WorkloadSpec& s) {
      if (s.num_gpu > 0 || !s.mig_requests.empty() || option_holds(s, o)) return true;
      return std::none_of(options.begin(), options.end(), [&](const CostBoundOption& any) { return option_holds(s, any); });
    });
    if (!holds_them) continue;
    const double useful = std::min(static_cast<double>(o.cpu_milli), static_cast<double>(o.memory_bytes) / (mem / cpu));
    const double usd = useful > 0 ? o.on_demand_usd_per_hour / useful : std::numeric_limits<double>::infinity();
    if (usd < best_usd) {
      best_usd = usd;
      best = &o;
    }
  }
  return best;
}

}  // namespace

UtilizationSeries utilization_series(const std::vector<sim::TimeseriesRow>& timeseries) {
  UtilizationSeries u;
  const size_t stride = std::max<size_t>(1, (timeseries.size() + kMaxUtilizationSamples - 1) / kMaxUtilizationSamples);
  for (size_t i = 0; i < timeseries.size(); i += stride) {
    const sim::TimeseriesRow& row = timeseries[i];
    u.time_s.push_back(row.time_s);
    u.gpus_allocated.push_back(static_cast<double>(row.gpu_allocated_milli) / 1000.0);
    u.gpus_billed.push_back(static_cast<double>(row.gpu_capacity_milli) / 1000.0);
    u.cost_usd_per_hour.push_back(row.cost_usd_per_hour);
    u.pending_pods.push_back(row.pending_pods);
  }
  return u;
}

PlanBounds plan_bounds(const sim::Workload& workload, const std::vector<CostBoundOption>& options, const PlanConstraints& constraints,
                       const PlanSearchOptions& search) {
  PlanBounds b;
  b.demand = workload_demand(workload, search.bucket_s, search.production_priority);
  // The bound covers the items some option holds; the others fail in every plan (counted apart).
  sim::Workload held = workload;
  held.items.clear();
  for (const sim::WorkloadSpec& s : workload.items) {
    bool any = false;
    for (const CostBoundOption& o : options) any = any || option_holds(s, o);
    if (any) held.items.push_back(s);
    else b.items_no_option_holds.push_back(s.name);
  }
  const DemandCurve held_demand = workload_demand(held, search.bucket_s, search.production_priority);
  b.bound = cost_lower_bound(held_demand, options, constraints.max_spot_share);
  std::vector<CostBoundOption> gpu_options;
  std::vector<size_t> gpu_index;
  for (size_t i = 0; i < options.size(); ++i)
    if (options[i].gpus > 0) {
      gpu_options.push_back(options[i]);
      gpu_index.push_back(i);
    }
  if (gpu_options.size() == options.size() || gpu_options.empty()) {
    b.mix = b.bound;
  } else {
    b.mix = cost_lower_bound(held_demand, gpu_options, constraints.max_spot_share);
    for (CostBound::Use& use : b.mix.uses) use.option = gpu_index[use.option];
  }
  if (constraints.min_gpu_allocation)
    b.bound_at_min_allocation = cost_lower_bound(held_demand, options, constraints.max_spot_share, constraints.min_gpu_allocation);
  // The same LP priced in GPUs (one "USD" per GPU-hour, no spot, no commitment) gives the fewest
  // GPU-hours any plan bills, hence the highest allocation any plan reaches.
  std::vector<CostBoundOption> by_gpus = options;
  for (CostBoundOption& o : by_gpus) {
    // A CPU-only node bills no GPU-hour; a nominal price keeps the LP from buying more than it needs.
    o.on_demand_usd_per_hour = o.gpus > 0 ? o.gpus : 1e-6;
    o.spot_usd_per_hour.reset();
    o.committed_usd_per_hour.reset();
  }
  const CostBound fewest = cost_lower_bound(held_demand, by_gpus, 0);
  b.allocation_bound_pct = fewest.billed_gpu_hours > 0 ? held_demand.gpu_hours / fewest.billed_gpu_hours * 100 : 100;
  b.allocation_bound_binding = fewest.binding;
  return b;
}

std::vector<PlanCandidate> plan_candidates(const PlanBounds& bounds, const std::vector<CostBoundOption>& options,
                                           const PlanConstraints& constraints, const sim::Workload& workload) {
  const DemandCurve& demand = bounds.demand;
  std::vector<PlanCandidate> out;
  const bool spot_demand = demand.gpu_hours > demand.gpu_hours_on_demand_only + 1e-9;
  auto spot_ok = [&](const CostBoundOption& o) { return o.spot_usd_per_hour && constraints.max_spot_share > 0 && spot_demand; };
  // Options that hold every item some option holds (an item no option holds fails in every plan).
  size_t fewest_not_held = SIZE_MAX;
  for (const CostBoundOption& o : options) fewest_not_held = std::min(fewest_not_held, items_not_held(workload, o));
  auto holds_all = [&](const CostBoundOption& o) { return items_not_held(workload, o) == fewest_not_held; };
  // With a CPU-only type and pods without GPUs, every pool set is tried twice: as it is, and with a
  // CPU-only pool for those pods (the GPU pools then tainted; plan/candidate.h).
  const CostBoundOption* cpu_option = cpu_pool_option(workload, options);
  // The MIG pools every pool set gets when the workload has MIG pods (none otherwise): on demand, and
  // again with the nodes needed half of the time committed (when some MIG pool has a committed price
  // and needs a node that long).
  std::vector<int32_t> mig_median;
  std::vector<std::vector<PoolChoice>> mig_variants = {mig_pool_choices(workload, options, &mig_median)};
  {
    std::vector<PoolChoice> committed = mig_variants.front();
    bool any = false;
    for (size_t k = 0; k < committed.size(); ++k)
      if (committed[k].option.committed_usd_per_hour && mig_median[k] > 0) {
        committed[k].reserved_nodes = std::min(mig_median[k], committed[k].max_nodes);
        any = true;
      }
    if (any) mig_variants.push_back(std::move(committed));
  }
  auto knobs = [&](std::vector<PoolChoice> pools, const char* origin) {
    const bool has_cpu_pool = std::any_of(pools.begin(), pools.end(), [](const PoolChoice& p) { return p.option.gpus == 0; });
    std::vector<std::vector<PoolChoice>> sets = {pools};
    if (cpu_option != nullptr && !has_cpu_pool && pools.front().option.gpus > 0) {
      pools.push_back({*cpu_option, 0, false, nodes_for(demand, *cpu_option), {}});
      sets.push_back(std::move(pools));
    }
    if (!mig_variants.front().empty()) {
      std::vector<std::vector<PoolChoice>> with_mig;
      for (const std::vector<PoolChoice>& set : sets)
        for (const std::vector<PoolChoice>& mig : mig_variants) {
          with_mig.push_back(set);
          with_mig.back().insert(with_mig.back().end(), mig.begin(), mig.end());
        }
      sets = std::move(with_mig);
    }
    for (const std::vector<PoolChoice>& set : sets)
      for (double scale_down : {600.0, 60.0})
        for (bool consolidation : {false, true}) {
          PlanCandidate c;
          c.pools = set;
          c.scale_down_unneeded_s = scale_down;
          c.consolidation = consolidation;
          c.origin = origin;
          out.push_back(std::move(c));
        }
  };

  // 1. The grid: a primary type that holds every pod, alone or with one of the two other types (as many GPUs or fewer)
  //    cheapest per useful GPU; committed nodes at quantiles of the on-demand-only demand; spot or not.
  std::set<std::pair<std::string, std::tuple<double, double, double, std::string>>> seen;
  for (const CostBoundOption& o : options) {
    if (!seen.insert({o.instance_type, price_key(o)}).second) continue;  // another zone, same prices
    if (!holds_all(o)) continue;
    const int32_t max_nodes = nodes_for(demand, o);
    std::vector<int32_t> reserved = {0};
    if (o.committed_usd_per_hour && o.gpus > 0) {
      for (double q : {0.10, 0.25, 0.50, 0.75}) {
        const auto n = static_cast<int32_t>(std::floor(demand_quantile(demand, DemandField::kGpusOnDemandOnly, q) / o.gpus));
        if (n > 0 && n <= max_nodes && std::find(reserved.begin(), reserved.end(), n) == reserved.end()) reserved.push_back(n);
      }
    }
    std::vector<const CostBoundOption*> secondaries = {nullptr};
    {
      std::vector<const CostBoundOption*> others;
      std::set<std::string> types;
      for (const CostBoundOption& s : options)
        if (s.gpus > 0 && s.gpus <= o.gpus && s.instance_type != o.instance_type && types.insert(s.instance_type).second)
          others.push_back(&s);
      std::stable_sort(others.begin(), others.end(), [&](const CostBoundOption* a, const CostBoundOption* b) {
        return usd_per_useful_gpu(demand, *a) < usd_per_useful_gpu(demand, *b);
      });
      for (size_t k = 0; k < others.size() && k < 2; ++k) secondaries.push_back(others[k]);
    }
    for (const CostBoundOption* second : secondaries)
      for (int32_t r : reserved)
        for (bool spot : {false, true}) {
          if (spot && !spot_ok(o)) continue;
          std::vector<PoolChoice> pools = {{o, r, spot, max_nodes, {}}};
          if (second != nullptr) pools.push_back({*second, 0, false, nodes_for(demand, *second), {}});
          knobs(pools, "grid");
        }
  }

  // 2. The lower bound's mix (as Melange takes its GPU mix from an ILP): every option the LP optimum
  //    buys, its committed nodes x0.5, x0.75 and x1 (rounded), spot where the optimum buys spot; the
  //    type the optimum uses most among those that hold every pod goes first, or, when none does, the
  //    cheapest per useful GPU that does, without commitment.
  std::vector<PoolChoice> mix;
  std::set<std::string> mix_types;
  std::vector<double> mix_committed;
  for (const CostBound::Use& use : bounds.mix.uses) {
    const CostBoundOption& o = options[use.option];
    if (!mix_types.insert(o.instance_type).second) continue;
    PoolChoice p{o, 0, use.spot_node_hours > 0 && spot_ok(o), std::max(nodes_for(demand, o), static_cast<int32_t>(std::ceil(use.peak_nodes * 1.5)) + 2), {}};
    mix.push_back(p);
    mix_committed.push_back(use.committed_nodes);
  }
  if (!mix.empty()) {
    std::optional<size_t> first;
    for (size_t k = 0; k < mix.size(); ++k)
      if (holds_all(mix[k].option) && (!first || bounds.mix.uses[k].on_demand_node_hours + mix_committed[k] * demand.horizon_s / 3600 >
                                                     bounds.mix.uses[*first].on_demand_node_hours + mix_committed[*first] * demand.horizon_s / 3600))
        first = k;
    if (first) {
      std::swap(mix[0], mix[*first]);
      std::swap(mix_committed[0], mix_committed[*first]);
    } else {
      const CostBoundOption* best = nullptr;
      for (const CostBoundOption& o : options)
        if (holds_all(o) && mix_types.count(o.instance_type) == 0 &&
            (best == nullptr || usd_per_useful_gpu(demand, o) < usd_per_useful_gpu(demand, *best)))
          best = &o;
      if (best != nullptr) {
        mix.insert(mix.begin(), PoolChoice{*best, 0, false, nodes_for(demand, *best), {}});
        mix_committed.insert(mix_committed.begin(), 0.0);
      }
    }
    if (holds_all(mix[0].option)) {
      std::set<std::vector<int32_t>> done;
      for (double f : {0.5, 0.75, 1.0}) {
        std::vector<PoolChoice> pools = mix;
        std::vector<int32_t> key;
        for (size_t k = 0; k < pools.size(); ++k) {
          pools[k].reserved_nodes = pools[k].option.committed_usd_per_hour
                                        ? std::min(pools[k].max_nodes, static_cast<int32_t>(std::lround(mix_committed[k] * f)))
                                        : 0;
          key.push_back(pools[k].reserved_nodes);
        }
        if (done.insert(key).second) knobs(pools, "lp");
      }
    }
  }
  return out;
}

sim::Workload race_workload(const sim::Workload& workload, double fraction) {
  if (!(fraction > 0) || fraction > 1) throw std::invalid_argument(fmt::format("race fraction {} is outside (0, 1]", fraction));
  if (fraction == 1) return workload;
  sim::Workload w = workload;
  const double cut = workload.horizon_s * fraction;
  w.horizon_s = cut;
  w.items.clear();
  for (const sim::WorkloadSpec& s : workload.items)
    if (s.kind != sim::WorkloadKind::kJob || s.arrival_s < cut) w.items.push_back(s);
  return w;
}

CandidateResult evaluate(const sim::ClusterConfig& cluster, const std::string& policy, const sim::Workload& workload,
                         const PlanSearchOptions& options, size_t index, const std::string& label, sim::SimResult* full_result,
                         UtilizationSeries* utilization) {
  sim::SimOptions so;
  so.policy = policy;
  so.seed = options.seed;
  so.production_priority = options.production_priority;
  so.serving_catalog = options.serving_catalog;
  so.summary_only = full_result == nullptr;  // the figures below need no per-unit outcomes
  sim::SimResult r = sim::simulate(cluster, workload, so);
  CandidateResult c;
  c.index = index;
  c.label = label;
  c.horizon_s = r.horizon_s;
  c.cost_usd = r.cost_usd;
  auto type_cost = [&](const char* type) {
    const auto it = r.cost_by_capacity_type.find(type);
    return it == r.cost_by_capacity_type.end() ? 0.0 : it->second;
  };
  c.on_demand_usd = type_cost("on-demand");
  c.spot_usd = type_cost("spot");
  c.reserved_usd = type_cost("reserved");
  c.gpu_allocated_hours = r.gpu_allocated_hours;
  c.gpu_billed_hours = r.gpu_billed_hours;
  std::map<std::string, int32_t> gpus;
  for (const sim::SimPool& p : cluster.pools) gpus[p.pool.name] = p.pool.gpus_per_node;
  for (const sim::NodeLifetime& n : r.nodes)
    if (n.capacity_type == "spot") c.spot_billed_gpu_hours += (n.end_s - n.start_s) / kSecondsPerHour * gpus[n.pool];
  c.lost_gpu_hours = r.lost_gpu_hours;
  c.kept_allocation_pct = r.gpu_billed_hours > 0 ? std::max(0.0, r.gpu_allocated_hours - r.lost_gpu_hours) / r.gpu_billed_hours * 100 : 0;
  c.pending_p99_s = r.pending.p99;
  c.production_pending_p99_s = r.pending_production.p99;
  c.pods_completed = r.pods_completed;
  c.pods_failed = r.pods_failed;
  c.pods_pending = r.pods_pending;
  c.restarts = r.evictions;
  if (options.on_simulation_done) options.on_simulation_done();
  if (utilization != nullptr) *utilization = utilization_series(r.timeseries);
  if (full_result != nullptr) *full_result = std::move(r);
  return c;
}

std::vector<CandidateResult> race_shard(const std::vector<PlanCandidate>& candidates, const sim::Workload& workload,
                                        const PlanSearchOptions& options, size_t shard, size_t shards) {
  if (shards == 0 || shard >= shards) throw std::invalid_argument(fmt::format("shard {} of {}", shard, shards));
  const sim::Workload race = race_workload(workload, options.race_fraction);
  std::vector<size_t> mine;
  for (size_t i = shard; i < candidates.size(); i += shards) mine.push_back(i);
  std::vector<CandidateResult> out(mine.size());
  parallel_for(mine.size(), parallel_threads(options.threads, mine.size()), [&](size_t k) {
    const PlanCandidate& c = candidates[mine[k]];
    out[k] = evaluate(candidate_cluster(c), c.policy, race, options, mine[k], c.label());
  });
  return out;
}

bool meets(const CandidateResult& r, const PlanConstraints& k, int64_t most_failed_pods, std::string* why, std::string* which) {
  auto fail = [&](std::string text, const char* key) {
    if (why != nullptr) *why = std::move(text);
    if (which != nullptr) *which = key;
    return false;
  };
  if (r.pods_failed > most_failed_pods)
    return fail(fmt::format("{} pods failed (no node of the plan holds them), more than the {} no configuration can hold",
                            r.pods_failed, most_failed_pods), "pods");
  if (k.production_p99_pending_s && r.production_pending_p99_s && *r.production_pending_p99_s > *k.production_p99_pending_s)
    return fail(fmt::format("production p99 pending {:g} s > {:g} s (slo.productionP99PendingSeconds)", *r.production_pending_p99_s,
                            *k.production_p99_pending_s), "productionP99PendingSeconds");
  if (r.spot_share() > k.max_spot_share + 1e-12)
    return fail(fmt::format("spot share {:.1f}% of the GPU-hours billed > {:.1f}% (maxSpotShare)", r.spot_share() * 100,
                            k.max_spot_share * 100), "maxSpotShare");
  if (k.min_gpu_allocation && r.kept_allocation_pct < *k.min_gpu_allocation * 100 - 1e-9)
    return fail(fmt::format("GPU allocation (kept) {:.1f}% < {:g}% (minGpuAllocation)", r.kept_allocation_pct, *k.min_gpu_allocation * 100),
                "minGpuAllocation");
  if (k.budget_usd && r.cost_usd > *k.budget_usd)
    return fail(fmt::format("cost {:.2f} USD > {:.2f} USD (budgetUsd)", r.cost_usd, *k.budget_usd), "budgetUsd");
  return true;
}

PlanOutcome finish_plan(const PlanBounds& bounds, const std::vector<PlanCandidate>& candidates, std::vector<CandidateResult> race,
                        const sim::Workload& workload, const std::vector<CostBoundOption>& options,
                        const PlanConstraints& constraints, const PlanSearchOptions& search) {
  PlanOutcome out;
  out.candidates = candidates;
  std::sort(race.begin(), race.end(), [](const CandidateResult& a, const CandidateResult& b) { return a.index < b.index; });
  if (race.size() != candidates.size())
    throw std::invalid_argument(fmt::format("{} race results for {} candidates", race.size(), candidates.size()));
  for (size_t i = 0; i < race.size(); ++i)
    if (race[i].index != i) throw std::invalid_argument(fmt::format("race result of candidate {} is missing or repeated", i));
  out.race = race;
  out.demand = bounds.demand;
  out.bound = bounds.bound;
  out.items_no_option_holds = bounds.items_no_option_holds;
  out.allocation_bound_pct = bounds.allocation_bound_pct;
  out.allocation_bound_binding = bounds.allocation_bound_binding;
  out.bound_at_min_allocation = bounds.bound_at_min_allocation;

  int64_t race_failed = std::numeric_limits<int64_t>::max();
  for (const CandidateResult& r : race) race_failed = std::min(race_failed, r.pods_failed);
  std::vector<size_t> order(race.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<bool> ok(race.size());
  for (size_t i = 0; i < race.size(); ++i) ok[i] = meets(race[i], constraints, race_failed, nullptr);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ok[a] != ok[b]) return static_cast<bool>(ok[a]);
    if (race[a].cost_usd != race[b].cost_usd) return race[a].cost_usd < race[b].cost_usd;
    return a < b;
  });
  order.resize(std::min(order.size(), std::max<size_t>(1, search.finalists)));

  // The finalists and the baseline on the whole horizon, in parallel.
  int32_t baseline_max = 1;
  for (const PlanCandidate& c : candidates)
    for (const PoolChoice& p : c.pools) baseline_max = std::max(baseline_max, p.max_nodes);
  std::vector<CostBoundOption> baseline_options;
  {
    std::set<std::string> types;
    size_t fewest_not_held = SIZE_MAX;
    for (const CostBoundOption& o : options) fewest_not_held = std::min(fewest_not_held, items_not_held(workload, o));
    for (const CostBoundOption& o : options)
      if (types.insert(o.instance_type).second && items_not_held(workload, o) == fewest_not_held) baseline_options.push_back(o);
    if (baseline_options.empty()) baseline_options = options;
  }
  out.finalists.resize(order.size());
  std::vector<UtilizationSeries> utilization(order.size());  // per finalist, for the plan's chart
  parallel_for(order.size() + 1, parallel_threads(search.threads, order.size() + 1), [&](size_t k) {
    if (k == order.size()) {
      out.baseline = evaluate(baseline_cluster(baseline_options, baseline_max, mig_pool_choices(workload, options)), "default-scheduler",
                              workload, search, candidates.size(), "Cluster Autoscaler baseline: on-demand, default-scheduler", nullptr,
                              &out.baseline_utilization);
      return;
    }
    const PlanCandidate& c = candidates[order[k]];
    out.finalists[k] = evaluate(candidate_cluster(c), c.policy, workload, search, order[k], c.label(), nullptr, &utilization[k]);
  });

  int64_t most_failed = out.baseline.pods_failed;
  for (const CandidateResult& r : out.finalists) most_failed = std::min(most_failed, r.pods_failed);

  // Local search around the best so far (feasible first, then cheapest; ties: the lower number).
  auto better = [&](const CandidateResult& a, const CandidateResult& b) {
    const bool fa = meets(a, constraints, most_failed, nullptr), fb = meets(b, constraints, most_failed, nullptr);
    if (fa != fb) return fa;
    if (a.cost_usd != b.cost_usd) return a.cost_usd < b.cost_usd;
    return a.index < b.index;
  };
  std::set<std::string> tried;
  for (const CandidateResult& r : out.finalists) tried.insert(r.label);
  for (int round = 0; round < search.refine_rounds && !out.finalists.empty(); ++round) {
    size_t best = 0;
    for (size_t k = 1; k < out.finalists.size(); ++k)
      if (better(out.finalists[k], out.finalists[best])) best = k;
    const PlanCandidate centre = out.candidates[out.finalists[best].index];
    std::vector<PlanCandidate> next;
    auto add = [&](PlanCandidate c) {
      if (tried.insert(c.label()).second) next.push_back(std::move(c));
    };
    for (double f : {0.5, 0.75, 1.25, 1.5}) {
      PlanCandidate c = centre;
      c.origin = "local";
      for (PoolChoice& p : c.pools)
        if (p.option.committed_usd_per_hour) p.reserved_nodes = std::clamp(static_cast<int32_t>(std::lround(p.reserved_nodes * f)), 0, p.max_nodes);
      add(c);
    }
    for (double threshold : {0.0, 0.3, 0.6}) {
      PlanCandidate c = centre;
      c.origin = "local";
      c.consolidation = threshold > 0;
      if (threshold > 0) c.consolidation_threshold = threshold;
      add(c);
    }
    for (double scale_down : {30.0, 300.0}) {
      PlanCandidate c = centre;
      c.origin = "local";
      c.scale_down_unneeded_s = scale_down;
      add(c);
    }
    if (next.empty()) break;
    const size_t first = out.candidates.size();
    for (PlanCandidate& c : next) out.candidates.push_back(std::move(c));
    std::vector<CandidateResult> made(next.size());
    const size_t before_round = utilization.size();
    utilization.resize(before_round + next.size());
    parallel_for(made.size(), parallel_threads(search.threads, made.size()), [&](size_t k) {
      const PlanCandidate& c = out.candidates[first + k];
      made[k] = evaluate(candidate_cluster(c), c.policy, workload, search, first + k, c.label(), nullptr, &utilization[before_round + k]);
    });
    const CandidateResult before = out.finalists[best];
    bool improved = false;
    for (CandidateResult& r : made) {
      most_failed = std::min(most_failed, r.pods_failed);
      improved = improved || better(r, before);
      out.finalists.push_back(std::move(r));
    }
    if (!improved) break;
  }
  for (size_t k = 0; k < out.finalists.size(); ++k) {
    if (!meets(out.finalists[k], constraints, most_failed, nullptr)) continue;
    if (!out.recommended || out.finalists[k].cost_usd < out.finalists[*out.recommended].cost_usd) out.recommended = k;
  }
  if (!out.recommended) {
    // The constraint that binds: the finalist that misses the fewest constraints (then the cheapest)
    // and the first one it misses.
    auto misses = [&](const CandidateResult& r) {
      int n = 0;
      PlanConstraints one = constraints;  // each constraint alone
      one.production_p99_pending_s.reset();
      one.max_spot_share = 1;
      one.budget_usd.reset();
      one.min_gpu_allocation.reset();
      n += meets(r, one, most_failed, nullptr) ? 0 : 1;
      for (int c = 0; c < 4; ++c) {
        PlanConstraints k = one;
        k.production_p99_pending_s = c == 0 ? constraints.production_p99_pending_s : std::nullopt;
        k.max_spot_share = c == 1 ? constraints.max_spot_share : 1;
        k.min_gpu_allocation = c == 2 ? constraints.min_gpu_allocation : std::nullopt;
        k.budget_usd = c == 3 ? constraints.budget_usd : std::nullopt;
        n += meets(r, k, INT64_MAX, nullptr) ? 0 : 1;
      }
      return n;
    };
    size_t best = 0;
    std::string why;
    for (size_t k = 1; k < out.finalists.size(); ++k) {
      const int mk = misses(out.finalists[k]), mb = misses(out.finalists[best]);
      if (mk < mb || (mk == mb && out.finalists[k].cost_usd < out.finalists[best].cost_usd)) best = k;
    }
    meets(out.finalists[best], constraints, most_failed, &why, &out.binding_constraint);
    out.infeasible_reason = fmt::format("no configuration meets the constraints: {}; the best, {}, costs {:.2f} USD", why,
                                        out.finalists[best].label, out.finalists[best].cost_usd);
  }
  for (size_t k = 0; k < out.finalists.size(); ++k) {
    const CandidateResult& a = out.finalists[k];
    const double pa = a.production_pending_p99_s.value_or(0);
    bool dominated = false;
    for (size_t j = 0; j < out.finalists.size() && !dominated; ++j) {
      if (j == k) continue;
      const CandidateResult& b = out.finalists[j];
      const double pb = b.production_pending_p99_s.value_or(0);
      dominated = b.cost_usd <= a.cost_usd && pb <= pa && (b.cost_usd < a.cost_usd || pb < pa || j < k);
    }
    if (!dominated) out.frontier.push_back(k);
  }
  std::sort(out.frontier.begin(), out.frontier.end(),
            [&](size_t a, size_t b) { return std::tie(out.finalists[a].cost_usd, a) < std::tie(out.finalists[b].cost_usd, b); });

  // The waterfall, in the order platform teams adopt the changes.
  out.waterfall.push_back({"Cluster Autoscaler baseline (on-demand, kube default scoring)", out.baseline, 0, 0});
  if (out.recommended) {
    const CandidateResult& rec = out.finalists[*out.recommended];
    const PlanCandidate& plan = out.candidates[rec.index];
    std::vector<std::pair<std::string, PlanCandidate>> steps;
    PlanCandidate step = plan;
    for (PoolChoice& p : step.pools) {
      p.reserved_nodes = 0;
      p.spot = false;
    }
    step.consolidation = false;
    // The GPU pools first (the pods without GPUs on them too), then the CPU-only pool that takes those.
    if (plan.dedicated_gpu_nodes()) std::erase_if(step.pools, [](const PoolChoice& p) { return p.option.gpus == 0; });
    std::string pools;
    for (const PoolChoice& p : step.pools)
      pools += (pools.empty() ? "" : " + ") + p.option.instance_type + (p.mig_devices.empty() ? "" : " MIG");
    steps.push_back({fmt::format("{} {}, bin-packing ({}), scale-down after {:g} s", step.pools.size() > 1 ? "separate pools:" : "pool:",
                                 pools, plan.policy, plan.scale_down_unneeded_s),
                     step});
    if (plan.dedicated_gpu_nodes()) {
      std::string cpu_pools;
      for (const PoolChoice& p : plan.pools)
        if (p.option.gpus == 0) {
          cpu_pools += (cpu_pools.empty() ? "" : " + ") + p.option.instance_type;
          step.pools.push_back(p);
          step.pools.back().reserved_nodes = 0;
          step.pools.back().spot = false;
        }
      steps.push_back({fmt::format("+ GPU nodes for GPU pods only (taint nvidia.com/gpu, ExtendedResourceToleration), the others on {}",
                                   cpu_pools),
                       step});
    }
    if (plan.consolidation) {
      step.consolidation = true;
      steps.push_back({fmt::format("+ consolidation below {:g} of GPUs requested", plan.consolidation_threshold), step});
    }
    if (plan.any_spot()) {
      for (PoolChoice& p : step.pools)
        for (const PoolChoice& q : plan.pools)
          if (q.option.instance_type == p.option.instance_type && q.mig_devices == p.mig_devices) p.spot = q.spot;
      steps.push_back({"+ spot for pods that accept it", step});
    }
    out.plan_utilization = std::move(utilization[*out.recommended]);
    std::vector<WaterfallStep> made(steps.size());
    parallel_for(steps.size(), parallel_threads(search.threads, steps.size()), [&](size_t k) {
      made[k].step = steps[k].first;
      made[k].result = evaluate(candidate_cluster(steps[k].second), steps[k].second.policy, workload, search, rec.index,
                                steps[k].second.label());
    });
    for (WaterfallStep& s : made) out.waterfall.push_back(std::move(s));
    if (plan.reserved_nodes() > 0) {
      std::string committed;
      for (const PoolChoice& p : plan.pools)
        if (p.reserved_nodes > 0)
          committed += fmt::format("{}{} {}{} ({})", committed.empty() ? "" : ", ", p.reserved_nodes, p.option.instance_type,
                                   p.mig_devices.empty() ? "" : " MIG", p.option.commitment);
      out.waterfall.push_back({"+ committed nodes: " + committed, rec, 0, 0});
    }
    for (size_t k = 1; k < out.waterfall.size(); ++k) {
      const double prev = out.waterfall[k - 1].result.cost_usd, base = out.baseline.cost_usd;
      out.waterfall[k].saving_vs_previous_pct = prev > 0 ? (prev - out.waterfall[k].result.cost_usd) / prev * 100 : 0;
      out.waterfall[k].saving_vs_baseline_pct = base > 0 ? (base - out.waterfall[k].result.cost_usd) / base * 100 : 0;
    }
  }
  return out;
}

}  // namespace gpufleet::plan
