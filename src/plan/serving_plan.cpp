#include "plan/serving_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "inference/cold_start.h"
#include "inference/kv_cache.h"
#include "plan/candidate.h"
#include "sim/simulator.h"
#include "util/parallel.h"

namespace gpufleet::plan {

namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kHeadroom = 1.3;            // as examples/serving/azure-conv/keda-predictive*.yaml
constexpr double kKedaWaitingThreshold = 5;  // scaledobject-waiting-5.yaml
constexpr double kLevelWindowS = 300;        // under a day of history the forecast is this level

sim::WorkloadSpec& item_of(sim::Workload& w, const std::string& service) {
  for (sim::WorkloadSpec& s : w.items)
    if (s.kind == sim::WorkloadKind::kService && s.name == service) return s;
  throw std::invalid_argument(fmt::format("inference service '{}' has no service item", service));
}

int32_t ceil_div(int64_t a, int64_t b) { return static_cast<int32_t>((a + b - 1) / b); }

// An engine option's chain: one GPU model and dtype, tp ascending.
struct Chain {
  std::string gpu_model;
  bool fp8 = false;
  std::vector<int32_t> tps;
};

}  // namespace

std::string ServicePlan::label() const {
  if (!autoscaled) return fmt::format("{} {} tp{}, {} static", option.instance_type, dtype(), tensor_parallel, replicas);
  return fmt::format("{} {} tp{}, keda+predictive {}..{} ({:.3g} req/s per replica, lead {:g} s), node scale-down {:g} s",
                     option.instance_type, dtype(), tensor_parallel, min_replicas, max_replicas, capacity_rps_per_replica, lead_s,
                     scale_down_s);
}

std::string service_pool_name(const std::string& service, const std::string& instance_type) {
  return pool_stem(service) + "-" + pool_stem(instance_type);
}

sim::ClusterConfig service_cluster(const std::string& service, const CostBoundOption& option, int32_t max_nodes, double scale_down_s) {
  CostBoundOption on_demand = option;
  on_demand.spot_usd_per_hour.reset();
  on_demand.committed_usd_per_hour.reset();
  PlanCandidate c;
  c.pools = {PoolChoice{on_demand, 0, false, std::max(1, max_nodes), {}}};
  c.scale_down_unneeded_s = scale_down_s;
  c.scale_up_delay_s = 0;  // a replica's pod asks for a node at once (examples/serving/pools.yaml)
  sim::ClusterConfig cluster = candidate_cluster(c);
  cluster.pools.front().pool.name = service_pool_name(service, option.instance_type);
  return cluster;
}

int32_t service_max_nodes(const ServicePlan& p) {
  return ceil_div(static_cast<int64_t>(std::max(p.replicas, p.max_replicas)) * p.tensor_parallel, p.option.gpus);
}

sim::Workload service_workload(const sim::Workload& workload, size_t inference_index) {
  const sim::InferenceServiceSpec& spec = workload.inference.at(inference_index);
  sim::Workload w;
  w.horizon_s = workload.horizon_s;
  w.horizon_origin = workload.horizon_origin;
  for (const sim::WorkloadSpec& s : workload.items)
    if (s.kind == sim::WorkloadKind::kService && s.name == spec.service) w.items.push_back(s);
  if (w.items.empty()) throw std::invalid_argument(fmt::format("inference service '{}' has no service item", spec.service));
  w.inference.push_back(spec);
  return w;
}

void apply_service_plan(sim::Workload& workload, size_t inference_index, const ServicePlan& p) {
  sim::InferenceServiceSpec& spec = workload.inference.at(inference_index);
  sim::WorkloadSpec& item = item_of(workload, spec.service);
  item.pools = {service_pool_name(spec.service, p.option.instance_type)};
  item.pods = p.replicas;
  item.num_gpu = p.tensor_parallel;
  item.gpu_milli = 1000;
  item.gpu_spec.clear();  // the pool pins the GPU model
  item.mig_requests.clear();
  spec.engine.tensor_parallel_size = p.tensor_parallel;
  spec.engine.dtype = p.fp8 ? inference::Precision::kFp8 : inference::Precision::kBf16;
  spec.engine.kv_cache_dtype = spec.engine.dtype;
  const replica_autoscaling::HpaControllerOptions controller = spec.autoscaler.hpa_controller;
  spec.autoscaler = {};
  spec.autoscaler.hpa_controller = controller;
  spec.autoscaler_description.clear();
  if (!p.autoscaled) return;
  replica_autoscaling::ScaledObjectSpec so;
  so.name = spec.service;
  so.namespace_name = item.namespace_name;
  so.scale_target_name = spec.service;
  so.polling_interval_s = 15;
  so.cooldown_period_s = 300;
  so.min_replica_count = p.min_replicas;
  so.max_replica_count = p.max_replicas;
  replica_autoscaling::HpaBehavior behavior;
  behavior.scale_down = replica_autoscaling::ScalingRules{};
  behavior.scale_down->stabilization_window_seconds = 600;
  so.hpa_behavior = behavior;
  replica_autoscaling::PrometheusTrigger t;
  t.server_address = "http://prometheus.monitoring.svc:9090";
  t.metric = sim::kMetricRequestsWaiting;
  t.query = fmt::format("sum({}{{namespace=\"{}\", service=\"{}\"}})", t.metric, item.namespace_name, spec.service);
  t.aggregation = replica_autoscaling::QueryAggregation::kSum;
  t.threshold = kKedaWaitingThreshold;
  so.triggers.push_back(t);
  spec.autoscaler.keda = so;
  replica_autoscaling::PredictiveSpec pr;
  pr.rate_metric = sim::kMetricRequestRate;
  pr.capacity_rps_per_replica = p.capacity_rps_per_replica;
  pr.headroom = p.headroom;
  pr.lead_time_s = p.lead_s;
  pr.min_replicas = p.min_replicas;
  pr.max_replicas = p.max_replicas;
  pr.forecast.level_window_s = kLevelWindowS;
  spec.autoscaler.predictive = pr;
  // The reader's description (readers/serving/sim_inference.cpp), so outputs read the same.
  spec.autoscaler_description = fmt::format("predictive {:g} req/s per replica, lead {:g} s + keda {} ({} > {:g})",
                                            pr.capacity_rps_per_replica, pr.lead_time_s, so.name, t.metric, t.threshold);
}

ServingPlanResult plan_service(const sim::Workload& workload, size_t inference_index, const std::vector<CostBoundOption>& options,
                               const PlanConstraints& constraints, const PlanSearchOptions& search) {
  if (inference_index >= workload.inference.size())
    throw std::invalid_argument(fmt::format("no inference service {}", inference_index));
  if (search.serving_catalog == nullptr) throw std::invalid_argument("planning an inference service needs the serving catalog");
  const inference::ServingCatalog& catalog = *search.serving_catalog;
  const sim::InferenceServiceSpec& spec = workload.inference[inference_index];
  if (spec.disaggregation)
    throw std::invalid_argument(fmt::format("inference service '{}' is disaggregated: plan sizes aggregated services only", spec.service));
  ServingPlanResult out;
  out.service = spec.service;
  out.model = spec.engine.model;
  if (!spec.slo.ttft_p99_s && !spec.slo.tpot_p99_s)
    throw std::invalid_argument(fmt::format("inference service '{}' has no SLO: plan needs its slo (ttftP99Seconds, tpotP99Seconds) "
                                            "to choose its configuration",
                                            spec.service));
  const double slo_ttft = spec.slo.ttft_p99_s.value_or(std::numeric_limits<double>::infinity());
  const double slo_tpot = spec.slo.tpot_p99_s.value_or(std::numeric_limits<double>::infinity());
  out.slo_ttft_p99_s = spec.slo.ttft_p99_s.value_or(0);
  out.slo_tpot_p99_s = spec.slo.tpot_p99_s.value_or(0);
  const sim::Workload alone = service_workload(workload, inference_index);
  const sim::WorkloadSpec& item = alone.items.front();
  const inference::LlmModel& model = catalog.model(spec.engine.model);

  // One instance type per (GPU model, GPU count): the cheapest on demand (ties: the first), whose node
  // holds one replica pod's CPU and memory.
  std::map<std::string, std::vector<CostBoundOption>> by_model;  // catalog GPU name -> types, GPU count order
  std::vector<std::string> model_order;
  for (const CostBoundOption& o : options) {
    if (catalog.find_gpu(o.gpu_model) == nullptr || o.gpus < 1) continue;
    if (item.cpu_milli > o.cpu_milli || item.memory_bytes > o.memory_bytes) continue;
    auto& types = by_model[o.gpu_model];
    if (types.empty()) model_order.push_back(o.gpu_model);
    auto same = std::find_if(types.begin(), types.end(), [&](const CostBoundOption& t) { return t.gpus == o.gpus; });
    if (same == types.end()) types.push_back(o);
    else if (o.on_demand_usd_per_hour < same->on_demand_usd_per_hour) *same = o;
  }
  for (auto& [m, types] : by_model)
    std::stable_sort(types.begin(), types.end(), [](const CostBoundOption& a, const CostBoundOption& b) { return a.gpus < b.gpus; });

  // The chains: per model and dtype, the tps whose engine fits.
  std::vector<Chain> chains;
  for (const std::string& m : model_order) {
    const auto& types = by_model[m];
    for (bool fp8 : {false, true}) {
      if (fp8 && !constraints.allow_fp8) continue;
      Chain chain{m, fp8, {}};
      for (int32_t tp : {1, 2, 4, 8}) {
        const bool held = std::any_of(types.begin(), types.end(), [&](const CostBoundOption& t) { return t.gpus % tp == 0; });
        if (!held) continue;
        inference::EngineArgs args = spec.engine;
        args.tensor_parallel_size = tp;
        args.dtype = args.kv_cache_dtype = fp8 ? inference::Precision::kFp8 : inference::Precision::kBf16;
        inference::ReplicaHardware hw;
        hw.gpu = m;
        std::string why;
        try {
          why = inference::kv_cache_budget(catalog, args, hw).error;
        } catch (const std::invalid_argument& e) {
          why = e.what();
        }
        if (!why.empty()) out.skipped.push_back(fmt::format("{} {} tp{}: {}", m, fp8 ? "fp8" : "bf16", tp, why));
        else chain.tps.push_back(tp);
      }
      if (!chain.tps.empty()) chains.push_back(chain);
    }
  }

  auto run = [&](ServicePlan p) {
    sim::Workload w = alone;
    apply_service_plan(w, 0, p);
    sim::SimOptions so;
    so.policy = "gpufleet";
    so.seed = search.seed;
    so.production_priority = search.production_priority;
    so.serving_catalog = &catalog;
    const sim::SimResult r = sim::simulate(service_cluster(spec.service, p.option, service_max_nodes(p), p.scale_down_s), w, so);
    const sim::InferenceServiceResult& s = r.inference.front();
    p.ttft_p99_s = s.ttft.p99_s;
    p.tpot_p99_s = s.tpot.p99_s;
    p.slo_attainment = s.slo_attainment;
    p.requests = s.requests;
    p.timed_out = s.timed_out + s.dropped;
    p.cost_usd = s.cost_usd;
    p.node_cost_usd = r.cost_usd;
    p.gpu_hours = s.gpu_hours;
    int64_t most = 0;
    for (const sim::InferenceSample& x : s.timeseries) most = std::max(most, x.arrivals);
    p.peak_rps = most / 60.0;  // SimOptions::sample_interval_s
    p.ready_max_s = s.cold_start.max_s;
    // Both p99s within the SLO, over the finished requests, and at most 1% timed out or dropped (a
    // request that never finishes is not in the p99s).
    p.meets = s.finished > 0 && p.ttft_p99_s <= slo_ttft && p.tpot_p99_s <= slo_tpot && p.timed_out * 100 <= p.requests;
    if (search.on_simulation_done) search.on_simulation_done();
    return p;
  };

  // 2. Per chain, in parallel: tp ascending until one meets the SLO; replicas by doubling and bisection.
  struct ChainOut {
    std::vector<ServicePlan> tried;
    std::optional<size_t> fewest;  // into tried: the static service with the fewest replicas meeting the SLO
  };
  std::vector<ChainOut> chain_out(chains.size());
  parallel_for(chains.size(), parallel_threads(search.threads, chains.size()), [&](size_t k) {
    const Chain& c = chains[k];
    ChainOut& co = chain_out[k];
    for (int32_t tp : c.tps) {
      const auto& types = by_model[c.gpu_model];
      const CostBoundOption* on = nullptr;
      for (const CostBoundOption& t : types)
        if (t.gpus % tp == 0 && (on == nullptr || t.on_demand_usd_per_hour / t.gpus < on->on_demand_usd_per_hour / on->gpus)) on = &t;
      ServicePlan base;
      base.option = *on;
      base.tensor_parallel = tp;
      base.fp8 = c.fp8;
      base.phase = "bisection";
      const int32_t cap = std::max(1, kMaxServiceGpus / tp);
      std::map<int32_t, size_t> at;  // replicas -> index in co.tried
      auto probe = [&](int32_t n) {
        ServicePlan p = base;
        p.replicas = n;
        co.tried.push_back(run(p));
        at[n] = co.tried.size() - 1;
        return co.tried.back().meets;
      };
      int32_t lo = 0, hi = 0;  // lo fails (0: none tried), hi meets
      for (int32_t n = 1;; n = std::min(cap, n * 2)) {
        if (probe(n)) {
          hi = n;
          break;
        }
        lo = n;
        if (n == cap) break;
      }
      if (hi == 0) continue;  // this tp never meets it within the cap: try the next
      while (hi - lo > 1) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (probe(mid)) hi = mid;
        else lo = mid;
      }
      co.fewest = at[hi];
      break;
    }
  });

  // 3. Per chain that meets the SLO: static N on the model's other types, KEDA + predictive on the cheapest.
  std::vector<ServicePlan> phase3_static;
  std::vector<size_t> phase3_chain;
  for (size_t k = 0; k < chains.size(); ++k) {
    if (!chain_out[k].fewest) continue;
    const ServicePlan& f = chain_out[k].tried[*chain_out[k].fewest];
    for (const CostBoundOption& t : by_model[chains[k].gpu_model]) {
      if (t.gpus % f.tensor_parallel != 0 || t.instance_type == f.option.instance_type) continue;
      ServicePlan p = f;
      p.option = t;
      p.phase = "static";
      phase3_static.push_back(p);
      phase3_chain.push_back(k);
    }
  }
  parallel_for(phase3_static.size(), parallel_threads(search.threads, phase3_static.size()),
               [&](size_t k) { phase3_static[k] = run(phase3_static[k]); });
  // The cheapest static service of each chain; autoscaling is tried for those within twice the
  // cheapest of all (by node cost).
  std::vector<std::optional<ServicePlan>> chain_best(chains.size());
  double cheapest_static = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < chains.size(); ++k) {
    if (!chain_out[k].fewest) continue;
    ServicePlan best = chain_out[k].tried[*chain_out[k].fewest];
    best.phase = "static";
    chain_out[k].tried[*chain_out[k].fewest].phase = "static";
    for (size_t j = 0; j < phase3_static.size(); ++j)
      if (phase3_chain[j] == k && phase3_static[j].meets &&
          std::tie(phase3_static[j].node_cost_usd, phase3_static[j].cost_usd) < std::tie(best.node_cost_usd, best.cost_usd))
        best = phase3_static[j];
    cheapest_static = std::min(cheapest_static, best.node_cost_usd);
    chain_best[k] = best;
  }
  std::vector<ServicePlan> phase3_keda;
  for (size_t k = 0; k < chains.size(); ++k) {
    if (!chain_best[k] || chain_best[k]->node_cost_usd > 2 * cheapest_static) continue;
    const ServicePlan& best = *chain_best[k];
    // Lead: node provisioning and the cold start, as the static run measured them (created to ready,
    // the longest), else as computed; rounded up to a minute.
    const double weights = inference::weight_bytes(model, best.fp8 ? inference::Precision::kFp8 : inference::Precision::kBf16);
    const double cold = sim::kProvisionKarpenterS + inference::cold_start_parts(spec.cold_start, weights, false).total_s();
    const double lead = std::ceil((best.ready_max_s > 0 ? best.ready_max_s : cold) / 60) * 60;
    for (double scale_down : {600.0, 60.0})
    for (double f : {1.2, 1.1, 1.0, 0.9}) {
      ServicePlan p = best;
      p.scale_down_s = scale_down;
      p.autoscaled = true;
      p.phase = "keda+predictive";
      p.min_replicas = std::min(2, best.replicas);
      p.max_replicas = std::max(2 * best.replicas, p.min_replicas + 1);
      p.capacity_rps_per_replica = best.peak_rps / best.replicas * f;
      p.headroom = kHeadroom;
      p.lead_s = lead;
      if (!(p.capacity_rps_per_replica > 0)) continue;
      phase3_keda.push_back(p);
    }
  }
  parallel_for(phase3_keda.size(), parallel_threads(search.threads, phase3_keda.size()),
               [&](size_t k) { phase3_keda[k] = run(phase3_keda[k]); });

  for (const ChainOut& co : chain_out)
    for (const ServicePlan& p : co.tried) out.tried.push_back(p);
  for (const ServicePlan& p : phase3_static) out.tried.push_back(p);
  for (const ServicePlan& p : phase3_keda) out.tried.push_back(p);

  // 4. The cheapest meeting the SLO.
  for (size_t k = 0; k < out.tried.size(); ++k) {
    const ServicePlan& p = out.tried[k];
    if (!p.meets) continue;
    if (!out.chosen || std::tie(p.node_cost_usd, p.cost_usd) < std::tie(out.tried[*out.chosen].node_cost_usd, out.tried[*out.chosen].cost_usd))
      out.chosen = k;
  }
  // The bound, over the chains that meet the SLO.
  for (size_t k = 0; k < chains.size(); ++k) {
    if (!chain_out[k].fewest) continue;
    const ServicePlan& f = chain_out[k].tried[*chain_out[k].fewest];
    const double per_replica = f.peak_rps / std::max(1, f.replicas - 1);
    if (!(per_replica > 0)) continue;
    double usd_per_gpu_hour = std::numeric_limits<double>::infinity();
    for (const CostBoundOption& t : by_model[chains[k].gpu_model])
      if (t.gpus % f.tensor_parallel == 0) usd_per_gpu_hour = std::min(usd_per_gpu_hour, t.on_demand_usd_per_hour / t.gpus);
    const double usd = f.requests / per_replica / kSecondsPerHour * f.tensor_parallel * usd_per_gpu_hour;
    if (out.bound_usd == 0 || usd < out.bound_usd) out.bound_usd = usd;
  }
  if (!out.chosen) {
    if (out.tried.empty()) {
      out.infeasible_reason = fmt::format("no allowed GPU can run {} (serving catalog figures, memory fit){}", out.model,
                                          out.skipped.empty() ? "" : ": " + out.skipped.front());
      return out;
    }
    // The nearest: the smallest worst ratio to its limit.
    auto worst = [&](const ServicePlan& p) {
      const double t = p.ttft_p99_s / slo_ttft, o = p.tpot_p99_s / slo_tpot;
      const double timeouts = p.requests > 0 ? static_cast<double>(p.timed_out) / p.requests / 0.01 : 0;
      return std::max({t, o, timeouts});
    };
    size_t best = 0;
    for (size_t k = 1; k < out.tried.size(); ++k)
      if (worst(out.tried[k]) < worst(out.tried[best])) best = k;
    const ServicePlan& p = out.tried[best];
    std::string why;
    if (p.tpot_p99_s > slo_tpot && p.tpot_p99_s / slo_tpot >= p.ttft_p99_s / slo_ttft) {
      out.binding = "tpotP99Seconds";
      why = fmt::format("TPOT p99 {:.3g} s > {:g} s (tpotP99Seconds)", p.tpot_p99_s, slo_tpot);
    } else if (p.ttft_p99_s > slo_ttft) {
      out.binding = "ttftP99Seconds";
      why = fmt::format("TTFT p99 {:.3g} s > {:g} s (ttftP99Seconds)", p.ttft_p99_s, slo_ttft);
    } else {
      why = fmt::format("{} of {} requests timed out or dropped (more than 1%)", p.timed_out, p.requests);
    }
    out.infeasible_reason = fmt::format("no configuration of service '{}' meets its SLO: {} at best, with {} (TTFT p99 {:.3g} s, "
                                        "TPOT p99 {:.3g} s, {:.2f} USD)",
                                        out.service, why, p.label(), p.ttft_p99_s, p.tpot_p99_s, p.cost_usd);
  }
  return out;
}

}  // namespace gpufleet::plan
