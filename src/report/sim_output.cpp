#include "report/sim_output.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_values.h"
#include "report/inference_output.h"
#include "report/queue_output.h"
#include "report/rollout_output.h"
#include "report/scaled_job_output.h"
#include "report/text_table.h"

namespace gpufleet::io {
namespace {

double usd(double v) { return round_to(v, 1e6); }

}  // namespace

namespace {

std::string fmt_opt(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); }

}  // namespace

namespace {

nlohmann::ordered_json checkpoints_json(const sim::SimResult& r) {
  nlohmann::ordered_json j;
  j["checkpoint_s"] = round_to(r.checkpoint_s, 1e3);
  j["checkpoint_gpu_hours"] = round_to(r.checkpoint_gpu_hours, 1e6);
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const sim::CheckpointJobResult& c : r.checkpoint_jobs)
    jobs.push_back({{"name", c.name},
                    {"interval_s", round_to(c.interval_s, 1e3)},
                    {"cost_s", round_to(c.cost_s, 1e3)},
                    {"checkpoint_s", round_to(c.checkpoint_s, 1e3)},
                    {"interruptions", c.interruptions},
                    {"interruptions_per_hour", round_to(c.interruptions_per_hour, 1e6)},
                    {"mtbi_s", round_to(c.mtbi_s, 1e3)},
                    {"young_interval_s", round_to(c.young_interval_s, 1e3)},
                    {"recommended_interval_s", round_to(c.daly_interval_s, 1e3)}});
  j["jobs"] = jobs;
  return j;
}

nlohmann::ordered_json driver_upgrades_json(const sim::SimResult& r) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const sim::DriverUpgradeResult& u : r.driver_upgrades)
    list.push_back({{"pool", u.pool},
                    {"start_s", round_to(u.start_s, 1e3)},
                    {"finish_s", u.finish_s < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(round_to(u.finish_s, 1e3))},
                    {"max_unavailable", u.max_unavailable},
                    {"nodes_upgraded", u.nodes_upgraded},
                    {"nodes_skipped", u.nodes_skipped},
                    {"capacity_lost_gpu_hours", round_to(u.capacity_lost_gpu_hours, 1e6)},
                    {"jobs_interrupted", u.jobs_interrupted},
                    {"pods_evicted", u.pods_evicted},
                    {"pods_deleted", u.pods_deleted},
                    {"lost_gpu_hours", round_to(u.lost_gpu_hours, 1e6)}});
  return list;
}

nlohmann::ordered_json result_object(const sim::SimResult& r) {
  nlohmann::ordered_json j;
  j["policy"] = r.policy;
  j["seed"] = r.seed;
  j["horizon_s"] = round_to(r.horizon_s, 1e3);
  j["cost_usd"] = usd(r.cost_usd);
  nlohmann::ordered_json by_pool = nlohmann::ordered_json::object();
  for (const std::string& p : r.pools) by_pool[p] = usd(r.cost_by_pool.count(p) ? r.cost_by_pool.at(p) : 0.0);
  j["cost_by_pool"] = by_pool;
  nlohmann::ordered_json by_type = nlohmann::ordered_json::object();
  for (const char* t : {"on-demand", "spot", "reserved"}) by_type[t] = usd(r.cost_by_capacity_type.count(t) ? r.cost_by_capacity_type.at(t) : 0.0);
  j["cost_by_capacity_type"] = by_type;
  nlohmann::ordered_json charge = nlohmann::ordered_json::object();
  for (const auto& [ns, v] : r.chargeback) charge[ns] = usd(v);
  j["chargeback"] = charge;
  j["idle_cost_usd"] = usd(r.idle_cost_usd);
  j["reserved_unused_usd"] = usd(r.reserved_unused_usd);
  j["gpu_allocation_pct_mean"] = round_to(r.gpu_allocation_pct_mean, 1e6);
  nlohmann::ordered_json pending = pending_stats_json(r.pending);
  nlohmann::ordered_json by_priority = nlohmann::ordered_json::object();
  for (const auto& [prio, s] : r.pending_by_priority) by_priority[std::to_string(prio)] = pending_stats_json(s);
  pending["by_priority"] = by_priority;
  nlohmann::ordered_json production = pending_stats_json(r.pending_production);
  production["min_priority"] = r.production_priority;
  pending["production"] = production;
  j["pending_s"] = pending;
  j["spot_interruptions"] = r.spot_interruptions;
  j["lost_gpu_hours"] = round_to(r.lost_gpu_hours, 1e6);
  j["evictions"] = r.evictions;
  j["nodes_scaled_up"] = r.nodes_scaled_up;
  j["nodes_scaled_down"] = r.nodes_scaled_down;
  const sim::NodeRemovals& removed = r.nodes_removed;
  j["nodes_removed"] = {{"total", removed.total()},
                        {"scale_down", removed.scale_down},
                        {"consolidation", removed.consolidation},
                        {"spot_reclaim", removed.spot_reclaim},
                        {"not_ready_in_time", removed.not_ready_in_time},
                        {"other", removed.other}};
  if (r.provisioning_report) {  // runs with Karpenter NodePools or a fault schedule (docs/karpenter.md)
    j["failed_scale_ups"] = r.failed_scale_ups;
    j["launch_failures"] = r.launch_failures;
    j["karpenter_nodes_launched"] = r.karpenter_nodes_launched;
    const auto list = [](const std::vector<sim::PendingPod>& pods) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const sim::PendingPod& p : pods)
        a.push_back({{"unit", p.unit}, {"pods", p.pods}, {"priority", p.priority},
                     {"pending_since_s", round_to(p.pending_since_s, 1e3)}, {"reason", p.reason}});
      return a;
    };
    j["pending_at_horizon"] = list(r.pending_at_horizon);
    j["pending_peak"] = {{"time_s", round_to(r.pending_peak_s, 1e3)}, {"pods", r.pending_peak_pods}, {"units", list(r.pending_at_peak)}};
  }
  j["nodes_consolidated"] = r.nodes_consolidated;
  j["consolidation_restarts"] = r.consolidation_restarts;
  j["consolidation_moved_pods"] = r.consolidation_moved_pods;
  j["consolidation_lost_gpu_hours"] = round_to(r.consolidation_lost_gpu_hours, 1e6);
  j["pods"] = {{"completed", r.pods_completed}, {"running", r.pods_running}, {"pending", r.pods_pending}, {"failed", r.pods_failed}};
  if (r.dra_report)
    j["resource_claims"] = {{"allocated", r.dra_claims_allocated}, {"deallocated", r.dra_claims_deallocated},
                            {"allocated_at_end", r.dra_claims_allocated_at_end}};
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (const sim::UnitOutcome& u : r.units)
    if (u.state == sim::UnitState::kFailed) failed.push_back({{"name", u.name}, {"pods", u.pods}, {"reason", u.reason}});
  j["failed"] = failed;
  if (!r.inference.empty()) j["inference"] = inference_results_json(r.inference);
  if (!r.admission.empty()) j["queues"] = queue_results_json(r);
  if (r.topology_levels > 0) j["topology"] = topology_result_json(r);
  if (!r.scaled_jobs.empty()) j["scaled_jobs"] = scaled_jobs_json(r);
  if (!r.rollouts.empty()) j["rollouts"] = rollouts_json(r);
  if (!r.service_scaling.empty()) j["service_autoscalers"] = service_autoscalers_json(r);
  if (r.checkpoint_costs) j["checkpoints"] = checkpoints_json(r);
  if (!r.driver_upgrades.empty()) j["driver_upgrades"] = driver_upgrades_json(r);
  if (r.faults_enabled) {
    const sim::FaultCounts& f = r.faults;
    j["faults"] = {{"node_failures", f.node_failures},
                   {"xid_errors", f.xid_errors},
                   {"gpus_reset", f.gpus_reset},
                   {"container_restarts", f.container_restarts},
                   {"device_plugin_failures", f.device_plugin_failures},
                   {"spot_interruptions", f.spot_interruptions},
                   {"skipped", f.skipped}};
    nlohmann::ordered_json alerts = nlohmann::ordered_json::array();
    for (const sim::Alert& a : r.alerts) {
      nlohmann::ordered_json one;
      one["time_s"] = round_to(a.time_s, 1e6);
      one["alert"] = a.alert;
      one["severity"] = a.severity;
      one["subject"] = a.subject;
      one["message"] = a.message;
      alerts.push_back(std::move(one));
    }
    j["alerts"] = std::move(alerts);
  }
  return j;
}

// The fault counts and the alerts (the first kSummaryAlerts of them), for runs with a fault schedule.
constexpr size_t kSummaryAlerts = 20;
std::string faults_summary_text(const sim::SimResult& r) {
  if (!r.faults_enabled) return {};
  const sim::FaultCounts& f = r.faults;
  std::string out = fmt::format(
      "faults: {} node failures, {} XIDs ({} GPUs out for a reset, {} restarts in place), {} device-plugin failures, {} spot "
      "notices, {} skipped\n",
      f.node_failures, f.xid_errors, f.gpus_reset, f.container_restarts, f.device_plugin_failures, f.spot_interruptions, f.skipped);
  std::map<std::string, int64_t> by_rule;
  for (const sim::Alert& a : r.alerts) ++by_rule[a.alert];
  out += fmt::format("alerts: {}", r.alerts.size());
  for (const auto& [rule, count] : by_rule) out += fmt::format(" {} {}", rule, count);
  out += "\n";
  for (size_t i = 0; i < r.alerts.size() && i < kSummaryAlerts; ++i) {
    const sim::Alert& a = r.alerts[i];
    out += fmt::format("  {:.0f}s {} {} {}: {}\n", a.time_s, a.alert, a.severity, a.subject, a.message);
  }
  if (r.alerts.size() > kSummaryAlerts) out += fmt::format("  ... {} more (--json)\n", r.alerts.size() - kSummaryAlerts);
  return out;
}

const char* const kCapacityTypes[] = {"on-demand", "spot", "reserved"};

// "N removed (scale-down a, consolidation b, spot reclaim c, not Ready in time d)", ", other e" added
// when a controller added to the run removed nodes.
std::string nodes_removed_text(const sim::NodeRemovals& n) {
  std::string out = fmt::format("{} removed (scale-down {}, consolidation {}, spot reclaim {}, not Ready in time {}", n.total(),
                                n.scale_down, n.consolidation, n.spot_reclaim, n.not_ready_in_time);
  if (n.other > 0) out += fmt::format(", other {}", n.other);
  return out + ")";
}

double cost_of(const sim::SimResult& r, const char* type) {
  const auto it = r.cost_by_capacity_type.find(type);
  return it == r.cost_by_capacity_type.end() ? 0.0 : it->second;
}

}  // namespace

std::string sim_result_json(const sim::SimResult& r) { return result_object(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"; }

double saving_pct(const sim::SimResult& baseline, const sim::SimResult& r) {
  return baseline.cost_usd > 0 ? (baseline.cost_usd - r.cost_usd) / baseline.cost_usd * 100.0 : 0.0;
}

std::string sim_compare_json(const std::string& workload, const std::vector<CompareEntry>& entries) {
  nlohmann::ordered_json j;
  j["workload"] = workload;
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const CompareEntry& e : entries) {
    nlohmann::ordered_json c;
    c["label"] = e.label;
    c["pools"] = e.pools_path;
    c["saving_pct_vs_first"] = round_to(saving_pct(entries.front().result, e.result), 1e6);
    c["result"] = result_object(e.result);
    configs.push_back(std::move(c));
  }
  j["configs"] = configs;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string sim_compare_table(const std::vector<CompareEntry>& entries) {
  const std::vector<std::string> header = {"config", "policy", "cost USD", "saving", "on-demand", "spot", "reserved", "idle",
                                           "GPU alloc", "p99 pending s", "production p99 s", "spot int.", "lost GPU-h",
                                           "nodes removed", "consol. nodes", "consol. restarts", "completed", "running", "pending", "failed"};
  std::vector<std::vector<std::string>> rows;
  for (const CompareEntry& e : entries) {
    const sim::SimResult& r = e.result;
    rows.push_back({e.label, r.policy, fmt::format("{:.2f}", r.cost_usd),
                    fmt::format("{:.1f}%", saving_pct(entries.front().result, r)), fmt::format("{:.2f}", cost_of(r, kCapacityTypes[0])),
                    fmt::format("{:.2f}", cost_of(r, kCapacityTypes[1])), fmt::format("{:.2f}", cost_of(r, kCapacityTypes[2])),
                    fmt::format("{:.2f}", r.idle_cost_usd), fmt::format("{:.1f}%", r.gpu_allocation_pct_mean), fmt_opt(r.pending.p99),
                    fmt_opt(r.pending_production.p99), std::to_string(r.spot_interruptions), fmt::format("{:.2f}", r.lost_gpu_hours),
                    std::to_string(r.nodes_removed.total()), std::to_string(r.nodes_consolidated), std::to_string(r.consolidation_restarts), std::to_string(r.pods_completed), std::to_string(r.pods_running), std::to_string(r.pods_pending),
                    std::to_string(r.pods_failed)});
  }
  std::string out = aligned_table(header, rows, 2);
  out += fmt::format("saving: against the first configuration; production: priority >= {}\n",
                     entries.empty() ? 1000 : entries.front().result.production_priority);
  std::vector<std::string> labels;
  std::vector<const std::vector<sim::InferenceServiceResult>*> inference;
  for (const CompareEntry& e : entries) {
    labels.push_back(e.label);
    inference.push_back(&e.result.inference);
  }
  out += inference_compare_table(labels, inference);
  std::vector<const sim::SimResult*> results;
  for (const CompareEntry& e : entries) results.push_back(&e.result);
  out += queue_compare_table(labels, results);
  return out;
}

std::string sim_timeseries_csv(const sim::SimResult& r) {
  std::string out = "time_s";
  for (const std::string& p : r.pools) out += ",nodes_" + p;
  out += ",gpus_allocated,gpus_billed,pending_pods,cost_usd_per_hour";
  for (const sim::ScaledJobResult& s : r.scaled_jobs) out += ",queue_" + s.name;  // only with KEDA ScaledJobs
  out += "\n";
  for (size_t i = 0; i < r.timeseries.size(); ++i) {
    const sim::TimeseriesRow& row = r.timeseries[i];
    out += fmt::format("{:.0f}", row.time_s);
    for (int32_t n : row.nodes_per_pool) out += fmt::format(",{}", n);
    out += fmt::format(",{:.3f},{:.3f},{},{:.4f}", static_cast<double>(row.gpu_allocated_milli) / 1000.0,
                       static_cast<double>(row.gpu_capacity_milli) / 1000.0, row.pending_pods, row.cost_usd_per_hour);
    for (const sim::ScaledJobResult& s : r.scaled_jobs) out += fmt::format(",{:g}", i < s.queue_at_rows.size() ? round_to(s.queue_at_rows[i], 1e3) : 0.0);
    out += "\n";
  }
  return out;
}

std::vector<PendingReasonCount> pending_by_reason(const std::vector<sim::PendingPod>& pending) {
  std::vector<PendingReasonCount> out;
  for (const sim::PendingPod& p : pending) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PendingReasonCount& c) { return c.reason == p.reason; });
    if (it == out.end()) it = out.insert(out.end(), PendingReasonCount{p.reason, 0, 0});
    ++it->units;
    it->pods += p.pods;
  }
  std::sort(out.begin(), out.end(), [](const PendingReasonCount& a, const PendingReasonCount& b) {
    return a.pods != b.pods ? a.pods > b.pods : a.reason < b.reason;
  });
  return out;
}

std::string sim_summary_text(const sim::SimResult& r) {
  std::string out = fmt::format("simulated {:.1f} h, policy {}, seed {}\n", r.horizon_s / 3600.0, r.policy, r.seed);
  out += fmt::format("cost: {:.2f} USD ({:.2f} USD/h), idle {:.2f} USD ({:.1f}%)\n", r.cost_usd, r.cost_usd / (r.horizon_s / 3600.0),
                     r.idle_cost_usd, r.cost_usd > 0 ? r.idle_cost_usd / r.cost_usd * 100 : 0.0);
  out += "  by pool:";
  for (const std::string& p : r.pools) out += fmt::format(" {} {:.2f}", p, r.cost_by_pool.count(p) ? r.cost_by_pool.at(p) : 0.0);
  out += "\n  by capacity type:";
  for (const char* t : {"on-demand", "spot", "reserved"})
    out += fmt::format(" {} {:.2f}", t, r.cost_by_capacity_type.count(t) ? r.cost_by_capacity_type.at(t) : 0.0);
  out += "\n  chargeback:";
  for (const auto& [ns, v] : r.chargeback) out += fmt::format(" {} {:.2f}", ns, v);
  out += fmt::format("\nGPU allocation (GPU-hours allocated / billed): {:.1f}%\n", r.gpu_allocation_pct_mean);
  out += fmt::format("pending s: p50 {} p95 {} p99 {} ({} samples)\n", fmt_opt(r.pending.p50), fmt_opt(r.pending.p95),
                     fmt_opt(r.pending.p99), r.pending.samples);
  out += fmt::format("  production (priority >= {}): p50 {} p95 {} p99 {} ({} samples)\n", r.production_priority,
                     fmt_opt(r.pending_production.p50), fmt_opt(r.pending_production.p95), fmt_opt(r.pending_production.p99),
                     r.pending_production.samples);
  for (auto it = r.pending_by_priority.rbegin(); it != r.pending_by_priority.rend(); ++it)
    out += fmt::format("  priority {}: p50 {} p95 {} p99 {}\n", it->first, fmt_opt(it->second.p50), fmt_opt(it->second.p95),
                       fmt_opt(it->second.p99));
  out += fmt::format("nodes: {} scaled up, {}; spot interruptions {}, evictions {}, lost {:.2f} GPU-hours\n", r.nodes_scaled_up,
                     nodes_removed_text(r.nodes_removed), r.spot_interruptions, r.evictions, r.lost_gpu_hours);
  out += fmt::format("consolidation: {} nodes removed, {} pods moved, {} pod restarts, lost {:.2f} GPU-hours\n", r.nodes_consolidated,
                     r.consolidation_moved_pods, r.consolidation_restarts, r.consolidation_lost_gpu_hours);
  out += fmt::format("pods: {} completed, {} running, {} pending, {} failed\n", r.pods_completed, r.pods_running, r.pods_pending,
                     r.pods_failed);
  if (r.dra_report)  // Dynamic Resource Allocation (docs/dra.md)
    out += fmt::format("resource claims: {} allocated, {} deallocated, {} allocated at the end\n", r.dra_claims_allocated,
                       r.dra_claims_deallocated, r.dra_claims_allocated_at_end);
  if (r.checkpoint_costs) {
    out += fmt::format("checkpoints: {:.0f} s writing, {:.2f} GPU-hours\n", r.checkpoint_s, r.checkpoint_gpu_hours);
    for (const sim::CheckpointJobResult& c : r.checkpoint_jobs) {
      out += fmt::format("  {}: every {:g} s at {:g} s each, {:.0f} s writing, {} interruptions", c.name, c.interval_s, c.cost_s,
                         c.checkpoint_s, c.interruptions);
      if (c.mtbi_s > 0)
        out += fmt::format("; MTBI {:.0f} s, recommended interval {:.0f} s (Daly; Young {:.0f} s)", c.mtbi_s, c.daly_interval_s,
                           c.young_interval_s);
      out += "\n";
    }
  }
  for (const sim::DriverUpgradeResult& u : r.driver_upgrades)
    out += fmt::format("driver upgrade {}: from {:.0f} s to {}, {} nodes upgraded ({} skipped, max unavailable {}), capacity lost {:.2f} GPU-hours, "
                       "{} job interruptions, {} pods evicted, {} deleted, lost {:.2f} GPU-hours\n",
                       u.pool, u.start_s, u.finish_s < 0 ? std::string("not done") : fmt::format("{:.0f} s", u.finish_s), u.nodes_upgraded,
                       u.nodes_skipped, u.max_unavailable, u.capacity_lost_gpu_hours, u.jobs_interrupted, u.pods_evicted, u.pods_deleted,
                       u.lost_gpu_hours);
  if (r.provisioning_report) {  // runs with Karpenter NodePools or a fault schedule (docs/karpenter.md)
    out += fmt::format("provisioning: {} Karpenter nodes launched, {} launches refused, {} failed scale-ups\n", r.karpenter_nodes_launched,
                       r.launch_failures, r.failed_scale_ups);
    if (!r.pending_at_horizon.empty()) {
      out += "pending at the horizon by reason:\n";
      for (const PendingReasonCount& c : pending_by_reason(r.pending_at_horizon))
        out += fmt::format("  {} pod{} ({} unit{}): {}\n", c.pods, c.pods == 1 ? "" : "s", c.units, c.units == 1 ? "" : "s",
                           c.reason.empty() ? "(no reason recorded)" : c.reason);
    }
  }
  out += inference_summary_text(r.inference);
  out += queue_summary_text(r);
  out += scaled_jobs_summary_text(r);
  out += rollouts_summary_text(r);
  out += faults_summary_text(r);
  return out;
}

}  // namespace gpufleet::io
