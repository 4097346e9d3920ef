#include "inputs/sim/work_estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "inference/request_sources.h"
#include "util/input_error.h"

namespace gpufleet::sim {

namespace {

// Bytes a run keeps per figure (measured: a trace replayed to 3e7 requests took 2.4 GB, so about 80 bytes
// a request with its copy and outcome; a pod's unit, outcome and placement
// state about 2 KB; a node's state and billing about 4 KB; a time-series row about 300 bytes).
constexpr double kBytesPerRequest = 80;
constexpr double kBytesPerTraceRow = 64;
constexpr double kBytesPerPod = 2048;
constexpr double kBytesPerNodeSlot = 4096;
constexpr double kBytesPerTimeseriesRow = 320;

// The alert evaluation period of a run with faults (sim/controllers/alerting.h kEvaluationIntervalS).
constexpr double kAlertEvaluationS = 60;

// Periodic events over the horizon: one at 0 and one per interval after (an interval below the floor
// counts as the floor, so that a bad value gives a huge figure, not a division by zero).
double ticks(double horizon_s, double interval_s) {
  if (!(interval_s >= kMinIntervalSeconds)) interval_s = kMinIntervalSeconds;
  return std::floor(horizon_s / interval_s) + 1;
}

// The most replicas an autoscaler may set, and its evaluations over the horizon.
struct AutoscalerWork {
  int64_t max_replicas = 0;
  double evaluations = 0;
  std::string formula;
};

AutoscalerWork autoscaler_work(const replica_autoscaling::ReplicaAutoscalerSpec& a, double horizon_s) {
  AutoscalerWork w;
  if (a.hpa) {
    w.max_replicas = std::max<int64_t>(w.max_replicas, a.hpa->max_replicas);
    w.evaluations = std::max(w.evaluations, ticks(horizon_s, a.hpa_controller.sync_period_s));
    w.formula = fmt::format("HPA maxReplicas {}, sync every {:g} s", a.hpa->max_replicas, a.hpa_controller.sync_period_s);
  }
  if (a.keda) {
    w.max_replicas = std::max<int64_t>(w.max_replicas, a.keda->max_replica_count);
    // Polls, plus the ends of cooldowns, which fall between polls: at most one per poll.
    w.evaluations = std::max(w.evaluations, 2 * ticks(horizon_s, a.keda->polling_interval_s));
    w.formula = fmt::format("ScaledObject maxReplicaCount {}, pollingInterval {} s", a.keda->max_replica_count,
                            a.keda->polling_interval_s);
  }
  if (a.predictive) {
    w.max_replicas = std::max<int64_t>(w.max_replicas, a.predictive->max_replicas);
    if (!a.hpa && !a.keda) w.evaluations = ticks(horizon_s, a.predictive->evaluation_period_s);
    w.formula += fmt::format("{}predictive maxReplicas {}", w.formula.empty() ? "" : ", ", a.predictive->max_replicas);
  }
  return w;
}

// Requests of one service's traffic within the run, with the fields that make the count.
WorkTerm traffic_requests(const InferenceServiceSpec& s, double horizon_s) {
  WorkTerm t;
  t.origin = s.traffic_origin;
  if (const auto* g = std::get_if<inference::GeneratedSourceOptions>(&s.traffic)) {
    const double window = std::min(g->horizon_s, horizon_s);
    // The mean rate is the mean over whole days and weeks; a shorter window is integrated.
    double n = g->rate.mean_rate_per_s * window;
    if (window > 0 && window < 7 * 86400.0) {
      const int steps = static_cast<int>(std::ceil(window / 60));
      const double dt = window / steps;
      n = 0;
      for (int i = 0; i < steps; ++i) n += inference::diurnal_rate_per_s(g->rate, (i + 0.5) * dt) * dt;
    }
    t.amount = n;
    t.formula = fmt::format("meanRatePerSecond {:g} x {:g} s", g->rate.mean_rate_per_s, window);
    t.remedy = "lower the rate or the horizon";
  } else if (const auto* tr = std::get_if<inference::TraceTraffic>(&s.traffic)) {
    const inference::TraceReplayOptions& o = tr->replay;
    size_t rows = 0;
    if (tr->requests != nullptr && o.time_scale > 0) {
      // Replayed rows: in the window, and arriving (shifted, scaled, delayed) by the horizon.
      const double last = o.window_start_s + std::max(0.0, horizon_s - o.delay_s) / o.time_scale;
      const double end = std::min(o.window_end_s, std::nextafter(last, std::numeric_limits<double>::infinity()));
      const auto& r = *tr->requests;
      const auto by_time = [](const inference::Request& q, double x) { return q.arrival_s < x; };
      const auto lo = std::lower_bound(r.begin(), r.end(), o.window_start_s, by_time);
      const auto hi = std::lower_bound(r.begin(), r.end(), end, by_time);
      rows = hi > lo ? static_cast<size_t>(hi - lo) : 0;
    }
    t.amount = static_cast<double>(rows) * o.rate_multiplier;
    t.formula = fmt::format("{} trace rows x rateMultiplier {:g}", rows, o.rate_multiplier);
    t.remedy = "lower rateMultiplier or replay a shorter window of the trace";
  }
  return t;
}

}  // namespace

void WorkFigure::add(WorkTerm term) {
  total += term.amount;
  terms.push_back(std::move(term));
}

const WorkTerm* WorkFigure::largest() const {
  const WorkTerm* best = nullptr;
  for (const WorkTerm& t : terms)
    if (best == nullptr || !(t.amount <= best->amount)) best = &t;  // NaN wins: it is over any budget
  return best;
}

WorkEstimate estimate_work(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options) {
  WorkEstimate e;
  const double h = workload.horizon_s > 0 ? workload.horizon_s : 0;
  e.horizon_s = h;
  const FieldOrigin& horizon_at = workload.horizon_origin;

  // Node slots, and the node lifecycle events of each (ready, GPUs advertised, removal) plus spot
  // notices and reclaims at the pool's interruption rate. Without a node autoscaler, Karpenter or
  // faults no node is ever launched or replaced: only the nodes at the start have a lifecycle.
  const bool launches = cluster.autoscaler.enabled || !cluster.node_pools.empty() || !cluster.faults.faults.empty() ||
                        !cluster.faults.upgrades.empty() || !cluster.faults.outages.empty();
  for (const SimPool& p : cluster.pools) {
    const double slots = std::max(0, p.pool.max_nodes);
    e.node_slots.add({slots, fmt::format("pool {} max {}", p.pool.name, p.pool.max_nodes), "lower the pool's max", p.origin});
    const double living = launches ? slots : std::max(0, p.pool.node_count);
    const double spot = living * h / 3600 * p.settings.spot_interruptions_per_hour * 2;
    if (living > 0)
      e.events.add({3 * living + spot,
                    fmt::format("pool {}: 3 lifecycle events x {} {}{}", p.pool.name, launches ? "max" : "nodes",
                                launches ? p.pool.max_nodes : p.pool.node_count,
                                spot > 0 ? fmt::format(" + spot {:g}/node-hour x {:g} s", p.settings.spot_interruptions_per_hour, h) : ""),
                    "lower the pool's max", p.origin});
  }
  const double slots = e.node_slots.total;
  const WorkTerm* widest = e.node_slots.largest();
  const FieldOrigin slots_at = widest != nullptr ? widest->origin : FieldOrigin{};

  // Pods and units. A service's replicas go up to its autoscaler's maximum.
  std::vector<int64_t> replicas(workload.items.size(), 0);
  for (size_t i = 0; i < workload.items.size(); ++i) replicas[i] = workload.items[i].pods;
  std::vector<AutoscalerWork> scaling(workload.items.size());
  std::vector<FieldOrigin> scaling_at(workload.items.size());
  const auto item_index = [&](const std::string& name) -> size_t {
    for (size_t i = 0; i < workload.items.size(); ++i)
      if (workload.items[i].name == name) return i;
    return workload.items.size();
  };
  for (const InferenceServiceSpec& s : workload.inference)
    if (const size_t i = item_index(s.service); i < workload.items.size() && !s.autoscaler.empty()) {
      scaling[i] = autoscaler_work(s.autoscaler, h);
      replicas[i] = std::max(replicas[i], scaling[i].max_replicas);
      scaling_at[i] = s.autoscaler_origin;
    }
  for (const InferenceServiceSpec& s : workload.inference)  // a disaggregated service's roles
    if (s.disaggregation)
      for (const DisaggregatedRoleSpec* r : {&s.disaggregation->prefill, &s.disaggregation->decode})
        if (const size_t i = item_index(r->item); i < workload.items.size() && !r->autoscaler.empty()) {
          scaling[i] = autoscaler_work(r->autoscaler, h);
          replicas[i] = std::max(replicas[i], scaling[i].max_replicas);
          scaling_at[i] = r->origin;
        }
  for (const ServiceAutoscalerSpec& s : workload.service_autoscalers)
    if (const size_t i = item_index(s.service); i < workload.items.size()) {
      scaling[i] = autoscaler_work(s.autoscaler, h);
      replicas[i] = std::max(replicas[i], scaling[i].max_replicas);
    }
  for (const RolloutSpec& r : workload.rollouts)
    if (const size_t i = item_index(r.service); i < workload.items.size()) replicas[i] += workload.items[i].pods;

  double generated_jobs = 0, generated_pods = 0;
  FieldOrigin generated_at;
  double arrivals = 0, completions = 0;
  for (size_t i = 0; i < workload.items.size(); ++i) {
    const WorkloadSpec& s = workload.items[i];
    if (s.on_demand) continue;  // a ScaledJob's template: counted with its ScaledJob below
    const bool generated = s.kind == WorkloadKind::kJob && s.origin.known() && s.origin.field.find("jobsPerHour") != std::string::npos;
    arrivals += 1;
    if (s.kind == WorkloadKind::kJob) completions += 1;
    if (generated) {
      generated_jobs += 1;
      generated_pods += s.pods;
      generated_at = s.origin;
      continue;
    }
    e.units += 1;
    const std::string formula =
        s.kind == WorkloadKind::kJob
            ? fmt::format("job {}: pods {}", s.name, s.pods)
            : fmt::format("service {}: replicas {}{}", s.name, s.pods,
                          scaling[i].formula.empty() ? "" : fmt::format(" up to {} ({})", replicas[i], scaling[i].formula));
    const bool by_autoscaler = replicas[i] > s.pods && scaling_at[i].known();
    e.pods.add({static_cast<double>(replicas[i]), formula,
                s.kind == WorkloadKind::kJob ? "lower pods"
                : by_autoscaler              ? "lower the autoscaler's maximum replicas"
                                             : "lower the replicas",
                by_autoscaler ? scaling_at[i] : s.origin});
  }
  if (generated_jobs > 0) {
    e.units += generated_jobs;
    e.pods.add({generated_pods, fmt::format("{:g} generated jobs, {:g} pods", generated_jobs, generated_pods),
                "lower jobsPerHour or the horizon", generated_at});
  }
  for (const ScaledJobSpec& sj : workload.scaled_jobs) {
    const size_t i = item_index(sj.name);
    const double pods_per_job = i < workload.items.size() ? workload.items[i].pods : 1;
    const double duration = i < workload.items.size() ? workload.items[i].duration_s : 1;
    double messages = sj.arrivals_per_second * h;
    for (const QueueArrival& a : sj.arrivals) messages += a.messages;
    const double jobs = std::ceil(messages / sj.target_value) + static_cast<double>(sj.max_replica_count) +
                        static_cast<double>(sj.min_replica_count) * (h / std::max(duration, 1.0) + 1);
    e.units += jobs;
    arrivals += jobs;
    completions += jobs;
    e.pods.add({jobs * pods_per_job,
                fmt::format("ScaledJob {}: {:g} messages / targetValue {:g} + maxReplicaCount {} jobs x pods {:g}", sj.name, messages,
                            sj.target_value, sj.max_replica_count, pods_per_job),
                "lower the queue's messages or raise targetValue", sj.origin});
    e.events.add({ticks(h, sj.polling_interval_s), fmt::format("ScaledJob {}: {:g} s / pollingInterval {:g} s", sj.name, h, sj.polling_interval_s),
                  "raise pollingInterval or shorten the horizon", sj.origin});
  }
  const WorkTerm* most_pods = e.pods.largest();
  const FieldOrigin pods_at = most_pods != nullptr ? most_pods->origin : FieldOrigin{};
  // Arrivals and completions; a Kueue admission pass for each; the scheduler's retries of pending pods
  // (about one per placement and one per node that becomes ready).
  const double kueue = workload.queues ? arrivals + completions : 0;
  // Nodes launched for pods beyond the pools' slots (a node consolidated away and launched again):
  // at most one per pod placed, each with its lifecycle events and a retry.
  e.events.add({arrivals + completions + kueue + 2 * e.pods.total + (launches ? 3 * slots + 4 * e.pods.total : 0),
                fmt::format("{:g} arrivals + {:g} completions + retries{} of {:g} pods", arrivals, completions,
                            launches ? " and node launches" : "", e.pods.total),
                "fewer jobs and replicas", pods_at});

  // Requests, and their events: one per request, one per replica start.
  double trace_rows = 0;
  for (const InferenceServiceSpec& s : workload.inference) {
    WorkTerm t = traffic_requests(s, h);
    if (const auto* tr = std::get_if<inference::TraceTraffic>(&s.traffic); tr != nullptr && tr->requests != nullptr)
      trace_rows += static_cast<double>(tr->requests->size());
    t.formula = fmt::format("service {}: {}", s.service, t.formula);
    e.events.add({t.amount, t.formula, t.remedy, t.origin});
    e.requests.add(std::move(t));
    e.events.add({ticks(h, s.scrape_interval_s) * (s.disaggregation ? 2 : 1),
                  fmt::format("service {}: {}{:g} s / scrapeIntervalSeconds {:g} s", s.service, s.disaggregation ? "2 roles x " : "", h,
                              s.scrape_interval_s),
                  "raise scrapeIntervalSeconds or shorten the horizon", s.autoscaler_origin});
  }
  for (size_t i = 0; i < workload.items.size(); ++i)
    if (scaling[i].evaluations > 0)
      e.events.add({scaling[i].evaluations,
                    fmt::format("service {}: {:g} autoscaler evaluations ({})", workload.items[i].name, scaling[i].evaluations,
                                scaling[i].formula),
                    "evaluate less often or shorten the horizon", workload.items[i].origin});
  if (!workload.inference.empty())
    e.events.add({ticks(h, options.sample_interval_s) + 1,
                  fmt::format("serving samples: {:g} s / sample interval {:g} s", h, options.sample_interval_s),
                  "shorten the horizon", horizon_at});

  // Periodic controllers: their events, and the node slots each pass looks at.
  const bool ca = cluster.autoscaler.enabled;  // it ticks even when every pool is Karpenter's
  if (ca) {
    const double n = ticks(h, cluster.autoscaler.scan_interval_s);
    e.events.add({n, fmt::format("Cluster Autoscaler: {:g} s / scanIntervalSeconds {:g} s", h, cluster.autoscaler.scan_interval_s),
                  "raise scanIntervalSeconds or shorten the horizon", horizon_at});
    e.node_checks.add({n * slots,
                       fmt::format("{:g} node slots x {:g} s / scanIntervalSeconds {:g} s", slots, h, cluster.autoscaler.scan_interval_s),
                       "lower the pools' max or shorten the horizon", slots_at});
  }
  const bool consolidation = cluster.consolidation.enabled || !cluster.node_pools.empty();
  if (consolidation) {
    const double n = ticks(h, cluster.consolidation.interval_s);
    e.events.add({n, fmt::format("consolidation: {:g} s / intervalSeconds {:g} s", h, cluster.consolidation.interval_s),
                  "raise the consolidation interval or shorten the horizon", horizon_at});
    e.node_checks.add({n * slots,
                       fmt::format("{:g} node slots x {:g} s / consolidation intervalSeconds {:g} s", slots, h, cluster.consolidation.interval_s),
                       "lower the pools' max or shorten the horizon", slots_at});
  }
  if (!cluster.node_pools.empty())
    e.events.add({ticks(h, cluster.karpenter.batch_idle_s) + static_cast<double>(cluster.faults.limit_changes.size()),
                  fmt::format("Karpenter: {:g} s / batch idle {:g} s", h, cluster.karpenter.batch_idle_s), "shorten the horizon", horizon_at});
  if (!cluster.faults.empty()) {
    double faults = 0;
    for (const Fault& f : cluster.faults.faults)
      faults += f.rate_per_node_hour > 0 ? 2 * f.rate_per_node_hour * slots * h / 3600 + 1 : 2;
    faults += 2 * static_cast<double>(cluster.faults.outages.size() + cluster.faults.upgrades.size()) +
              3 * slots * static_cast<double>(cluster.faults.upgrades.size());
    e.events.add({faults + ticks(h, kAlertEvaluationS) + slots,
                  fmt::format("faults: {} entries, alerts every {:g} s over {:g} s", cluster.faults.faults.size(), kAlertEvaluationS, h),
                  "fewer faults or a shorter horizon", horizon_at});
  }
  // Placement: each pod placed filters every node slot.
  e.node_checks.add({e.pods.total * slots, fmt::format("{:g} pods x {:g} node slots", e.pods.total, slots),
                     "fewer pods or smaller pools", pods_at});

  e.timeseries_rows = ticks(h, options.sample_interval_s);
  e.memory_bytes = e.requests.total * kBytesPerRequest + trace_rows * kBytesPerTraceRow + e.pods.total * kBytesPerPod +
                   slots * kBytesPerNodeSlot + e.timeseries_rows * kBytesPerTimeseriesRow;
  return e;
}

namespace {

// A figure for a message: whole numbers below a million as they are, others with 3 digits.
std::string amount_text(double x) {
  if (x >= 0 && x < 1e6 && x == std::floor(x)) return fmt::format("{:.0f}", x);
  return fmt::format("{:.3g}", x);
}

void check_figure(const WorkFigure& figure, double max, std::string_view what, std::string_view option) {
  if (figure.total <= max) return;
  const WorkTerm* t = figure.largest();
  if (t == nullptr) return;
  std::string message;
  if (t->amount >= 0.5 * figure.total || std::isnan(t->amount)) {  // mostly one field's: named with its product
    const std::string all = t->amount < 0.995 * figure.total ? fmt::format("; {} in all", amount_text(figure.total)) : "";
    message = fmt::format("{} {} ({}{}) is over the budget of {} per run; {}, or raise {}", amount_text(t->amount), what, t->formula,
                          all, amount_text(max), t->remedy, option);
  } else {  // many fields' together (e.g. thousands of jobs): the total, and the largest share
    message = fmt::format("{} {} in all (the largest share: {} from {}, of {} terms) is over the budget of {} per run; {}, or raise {}",
                          amount_text(figure.total), what, amount_text(t->amount), t->formula, figure.terms.size(), amount_text(max),
                          t->remedy, option);
  }
  if (t->origin.known()) throw InputError(t->origin.file, t->origin.line, t->origin.field, message, t->origin.column);
  throw UsageError(message);
}

}  // namespace

void check_work_budget(const WorkEstimate& estimate, const WorkBudget& budget) {
  check_figure(estimate.requests, budget.max_requests, "requests", kMaxRequestsOption);
  check_figure(estimate.pods, budget.max_pods, "pods", kMaxPodsOption);
  check_figure(estimate.events, budget.max_events, "events", kMaxEventsOption);
  check_figure(estimate.node_checks, budget.max_node_checks, "node checks", kMaxNodeChecksOption);
}

void check_work_budget(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options, const WorkBudget& budget) {
  check_work_budget(estimate_work(cluster, workload, options), budget);
}

}  // namespace gpufleet::sim
