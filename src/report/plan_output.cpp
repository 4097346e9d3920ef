#include "report/plan_output.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/extended_resource_toleration.h"
#include "model/resources.h"
#include "plan/candidate.h"
#include "report/html_page.h"
#include "report/text_table.h"

namespace gpufleet::io {

namespace {

// A double in its shortest form that reads back exactly (fmt's "{}" is shortest round-trip).
std::string num(double v) { return fmt::format("{}", v); }

std::string yaml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json result_json(const plan::CandidateResult& r) {
  nlohmann::json j;
  j["index"] = r.index;
  j["label"] = r.label;
  j["horizon_s"] = r.horizon_s;
  j["cost_usd"] = r.cost_usd;
  j["on_demand_usd"] = r.on_demand_usd;
  j["spot_usd"] = r.spot_usd;
  j["reserved_usd"] = r.reserved_usd;
  j["gpu_allocated_hours"] = r.gpu_allocated_hours;
  j["gpu_billed_hours"] = r.gpu_billed_hours;
  j["spot_billed_gpu_hours"] = r.spot_billed_gpu_hours;
  j["lost_gpu_hours"] = r.lost_gpu_hours;
  j["kept_allocation_pct"] = r.kept_allocation_pct;
  j["pending_p99_s"] = opt_json(r.pending_p99_s);
  j["production_pending_p99_s"] = opt_json(r.production_pending_p99_s);
  j["pods_completed"] = r.pods_completed;
  j["pods_failed"] = r.pods_failed;
  j["pods_pending"] = r.pods_pending;
  j["restarts"] = r.restarts;
  return j;
}

std::string fmt_opt(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); }

std::vector<std::string> result_cells(const plan::CandidateResult& r) {
  return {fmt::format("{:.2f}", r.cost_usd), fmt::format("{:.2f}", r.on_demand_usd), fmt::format("{:.2f}", r.spot_usd),
          fmt::format("{:.2f}", r.reserved_usd), fmt::format("{:.1f}%", r.kept_allocation_pct),
          fmt::format("{:.1f}%", r.spot_share() * 100), fmt_opt(r.production_pending_p99_s), fmt::format("{:.2f}", r.lost_gpu_hours),
          fmt::format("{}", r.pods_failed)};
}

// A node pool's or NodePool template's taints, one flow mapping each, under `indent`; "" for none.
std::string taints_yaml(const std::vector<Taint>& taints, const std::string& indent) {
  if (taints.empty()) return "";
  std::string y = indent + "taints:\n";
  for (const Taint& t : taints) {
    y += fmt::format("{}- {{key: {}", indent, yaml_string(t.key));
    if (!t.value.empty()) y += fmt::format(", value: {}", yaml_string(t.value));
    y += fmt::format(", effect: {}}}\n", t.effect);
  }
  return y;
}

// A MIG layout as a YAML flow mapping, profiles quoted, in name order: {"1g.5gb": 4, "3g.20gb": 1}.
std::string mig_devices_flow(const std::map<std::string, int>& devices) {
  std::string y = "{";
  for (const auto& [profile, count] : devices) y += fmt::format("{}{}: {}", y.size() > 1 ? ", " : "", yaml_string(profile), count);
  return y + "}";
}

const std::vector<std::string> kResultHeaders = {"cost USD", "on-demand", "spot", "reserved", "GPU alloc (kept)", "spot share",
                                                 "production p99 pending s", "lost GPU-h", "failed pods"};

}  // namespace

std::string sim_pools_yaml(const sim::ClusterConfig& cluster, const std::string& comment) {
  std::string y;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) y += line.empty() ? "#\n" : "# " + line + "\n";
  y += "apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n";
  for (const sim::SimPool& sp : cluster.pools) {
    const NodePool& p = sp.pool;
    y += fmt::format("- name: {}\n", p.name);
    if (!p.instance_type.empty()) y += fmt::format("  instanceType: {}\n", yaml_string(p.instance_type));
    if (p.gpus_per_node > 0) y += fmt::format("  gpu: {{model: {}, count: {}}}\n", yaml_string(p.gpu_model), p.gpus_per_node);
    y += fmt::format("  cpu: {}m\n  memory: \"{}\"\n", p.cpu_milli, p.memory_bytes);
    y += fmt::format("  nodes: {}\n  min: {}\n  max: {}\n", p.node_count, p.min_nodes, p.max_nodes);
    if (!p.labels.empty()) {
      y += "  labels:\n";
      for (const auto& [k, v] : p.labels) y += fmt::format("    {}: {}\n", yaml_string(k), yaml_string(v));
    }
    y += taints_yaml(p.taints, "  ");
    y += fmt::format("  prices: {{onDemand: {}", num(p.on_demand_usd_per_hour));
    if (p.spot_usd_per_hour) y += fmt::format(", spot: {}", num(*p.spot_usd_per_hour));
    if (p.reserved_usd_per_hour) y += fmt::format(", reserved: {}", num(*p.reserved_usd_per_hour));
    y += "}\n";
    if (p.mig_devices) y += fmt::format("  mig: {}\n", mig_devices_flow(*p.mig_devices));
    if (p.time_slicing_replicas)
      y += fmt::format("  {}: {{replicas: {}}}\n", p.gpu_sharing_strategy == GpuSharingStrategy::kMps ? "mps" : "timeSlicing",
                       *p.time_slicing_replicas);
  }
  const sim::AutoscalerSettings& a = cluster.autoscaler;
  y += "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n";
  if (cluster.extended_resource_toleration) y += fmt::format("admissionPlugins: [{}]\n", kExtendedResourceTolerationPlugin);
  y += "autoscaler:\n";
  y += fmt::format("  enabled: {}\n  scaleDown: {}\n  expander: {}\n", a.enabled, a.scale_down, sim::expander_name(a.expander));
  y += fmt::format("  scanIntervalSeconds: {}\n  scaleUpDelaySeconds: {}\n  scaleDownUnneededSeconds: {}\n", num(a.scan_interval_s),
                   num(a.scale_up_delay_s), num(a.scale_down_unneeded_s));
  y += fmt::format("  scaleDownDelayAfterAddSeconds: {}\n  unremovableRecheckSeconds: {}\n  utilizationThreshold: {}\n",
                   num(a.scale_down_delay_after_add_s), num(a.unremovable_recheck_s), num(a.utilization_threshold));
  const sim::ConsolidationSettings& c = cluster.consolidation;
  y += fmt::format("consolidation:\n  enabled: {}\n  threshold: {}\n  intervalSeconds: {}\n  consolidateAfterSeconds: {}\n", c.enabled,
                   num(c.threshold), num(c.interval_s), num(c.consolidate_after_s));
  y += "pools:\n";
  for (const sim::SimPool& sp : cluster.pools) {
    const sim::PoolSettings& s = sp.settings;
    y += fmt::format("  {}:\n    provisionSeconds: {}\n    capacityType: {}\n", sp.pool.name, num(s.provision_s),
                     sim::capacity_type_name(s.capacity_type));
    if (s.reserved_nodes > 0) y += fmt::format("    reservedNodes: {}\n", s.reserved_nodes);
    if (s.capacity_type == sim::CapacityType::kSpot)
      y += fmt::format("    spotInterruptionsPerNodeHour: {}\n    spotNoticeSeconds: {}\n", num(s.spot_interruptions_per_hour),
                       num(s.spot_notice_s));
  }
  return y;
}

std::string karpenter_node_pools_yaml(const sim::ClusterConfig& cluster, const std::string& node_class) {
  std::string y;
  bool first = true;
  for (const sim::SimPool& sp : cluster.pools) {
    const NodePool& p = sp.pool;
    if (!first) y += "---\n";
    first = false;
    if (sp.settings.reserved_nodes > 0)
      y += fmt::format("# {} nodes of this pool are committed (reserved / capacity block at {} USD per node-hour): buy them\n"
                       "# outside Kubernetes; Karpenter launches them as on-demand capacity the reservation covers.\n",
                       sp.settings.reserved_nodes, num(p.reserved_usd_per_hour.value_or(0)));
    if (sp.settings.capacity_type == sim::CapacityType::kSpot)
      y += "# Spot capacity: pods that must not run on spot need node affinity karpenter.sh/capacity-type NotIn [spot],\n"
           "# as the simulation gives every pod that does not accept spot.\n";
    y += fmt::format("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {}\nspec:\n  template:\n", p.name);
    // The GPU Operator's config labels (MIG manager, device plugin) go on every node of the NodePool.
    std::string config_labels;
    for (const auto& [k, v] : p.labels)
      if (k == plan::kMigConfigLabel || k == plan::kDevicePluginConfigLabel) config_labels += fmt::format("        {}: {}\n", k, yaml_string(v));
    if (!config_labels.empty()) y += "    metadata:\n      labels:\n" + config_labels;
    y += "    spec:\n";
    y += "      requirements:\n";
    y += fmt::format("      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{}]}}\n", yaml_string(p.instance_type));
    for (const auto& [k, v] : p.labels)
      if (k == "topology.kubernetes.io/zone") y += fmt::format("      - {{key: topology.kubernetes.io/zone, operator: In, values: [{}]}}\n", yaml_string(v));
    y += fmt::format("      - {{key: karpenter.sh/capacity-type, operator: In, values: [{}]}}\n",
                     sp.settings.capacity_type == sim::CapacityType::kSpot ? "spot" : "on-demand");
    y += fmt::format("      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: {}}}\n", yaml_string(node_class));
    y += taints_yaml(p.taints, "      ");
    y += "  disruption:\n";
    y += fmt::format("    consolidationPolicy: {}\n", cluster.consolidation.enabled ? "WhenEmptyOrUnderutilized" : "WhenEmpty");
    y += fmt::format("    consolidateAfter: {}s\n", num(cluster.autoscaler.scale_down_unneeded_s));
    if (p.gpus_per_node > 0) y += fmt::format("  limits:\n    nvidia.com/gpu: {}\n", static_cast<int64_t>(p.max_nodes) * p.gpus_per_node);
    else y += fmt::format("  limits:\n    cpu: {}m\n", static_cast<int64_t>(p.max_nodes) * p.cpu_milli);
  }
  return y;
}

std::string kueue_objects_yaml(const sim::ClusterConfig& cluster, const std::string& cluster_queue) {
  std::string y;
  for (const sim::SimPool& sp : cluster.pools) {
    y += fmt::format("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: {}\nspec:\n  nodeLabels:\n", sp.pool.name);
    y += fmt::format("    karpenter.sh/nodepool: {}\n    karpenter.sh/capacity-type: {}\n---\n", sp.pool.name,
                     sim::capacity_type_name(sp.settings.capacity_type));
  }
  y += fmt::format("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: {}\nspec:\n  namespaceSelector: {{}}\n",
                   cluster_queue);
  // MIG pools advertise nvidia.com/mig-<profile> instead of nvidia.com/gpu: those resources are
  // covered too (every flavor lists every covered resource, in the same order; 0 where it has none).
  std::set<std::string> mig_profiles;
  for (const sim::SimPool& sp : cluster.pools)
    if (sp.pool.mig_devices)
      for (const auto& [profile, count] : *sp.pool.mig_devices) mig_profiles.insert(profile);
  std::string covered = "cpu, memory, nvidia.com/gpu";
  for (const std::string& profile : mig_profiles) covered += ", " + std::string(kMigResourcePrefix) + profile;
  y += fmt::format("  resourceGroups:\n  - coveredResources: [{}]\n    flavors:\n", covered);
  // Kueue tries a resource group's flavors in order and takes the first that fits: CPU-only flavors
  // first, so a workload without GPUs gets a CPU pool (a GPU one only when those are full), and a GPU
  // workload passes them (no nvidia.com/gpu quota) to a GPU flavor.
  std::vector<const sim::SimPool*> order;
  for (const sim::SimPool& sp : cluster.pools)
    if (sp.pool.gpus_per_node == 0) order.push_back(&sp);
  for (const sim::SimPool& sp : cluster.pools)
    if (sp.pool.gpus_per_node > 0) order.push_back(&sp);
  for (const sim::SimPool* spp : order) {
    const sim::SimPool& sp = *spp;
    const NodePool& p = sp.pool;
    const int64_t n = p.max_nodes;
    y += fmt::format("    - name: {}\n      resources:\n", p.name);
    y += fmt::format("      - {{name: cpu, nominalQuota: {}m}}\n", n * p.cpu_milli);
    y += fmt::format("      - {{name: memory, nominalQuota: {}Mi}}\n", n * (p.memory_bytes / (int64_t{1} << 20)));
    y += fmt::format("      - {{name: nvidia.com/gpu, nominalQuota: {}}}\n", p.mig_devices ? 0 : n * p.gpus_per_node);
    for (const std::string& profile : mig_profiles) {
      int64_t per_gpu = 0;
      if (p.mig_devices)
        if (const auto it = p.mig_devices->find(profile); it != p.mig_devices->end()) per_gpu = it->second;
      y += fmt::format("      - {{name: {}{}, nominalQuota: {}}}\n", kMigResourcePrefix, profile, n * p.gpus_per_node * per_gpu);
    }
  }
  return y;
}

std::string plan_summary_text(const plan::PlanOutcome& o, const std::string& workload) {
  std::string t = fmt::format("workload: {}\n", workload);
  t += fmt::format("demand: {:.1f} GPU-hours over {:.1f} h (peak {:.1f} GPUs); {} candidates raced, {} simulated on the whole horizon "
                   "(finalists and local search)\n",
                   o.demand.gpu_hours, o.demand.horizon_s / 3600, o.demand.peak_gpus, o.race.size(), o.finalists.size());
  if (!o.items_no_option_holds.empty())
    t += fmt::format("{} items fit no allowed instance type and fail in every plan (first: {})\n", o.items_no_option_holds.size(),
                     o.items_no_option_holds.front());
  t += fmt::format("lower bound: {:.2f} USD (on-demand {:.2f}, spot {:.2f}, committed {:.2f}; {:.1f} GPU-hours billed{})\n",
                   o.bound.cost_usd, o.bound.on_demand_usd, o.bound.spot_usd, o.bound.committed_usd, o.bound.billed_gpu_hours,
                   o.bound.binding.empty() ? "" : ", binding: " + o.bound.binding);
  if (o.bound_at_min_allocation) {
    if (o.bound_at_min_allocation->feasible)
      t += fmt::format("lower bound at the allocation floor: {:.2f} USD\n", o.bound_at_min_allocation->cost_usd);
    else
      t += "lower bound at the allocation floor: none, no plan reaches it whatever it pays\n";
  }
  t += fmt::format("allocation bound: no plan allocates more than {:.1f}% of the GPU-hours it bills{}\n", o.allocation_bound_pct,
                   o.allocation_bound_binding.empty() || o.allocation_bound_binding == "gpu"
                       ? std::string()
                       : " (" + o.allocation_bound_binding + " binds: nodes bought for it bring idle GPUs)");
  std::vector<std::string> header = {"configuration"};
  header.insert(header.end(), kResultHeaders.begin(), kResultHeaders.end());
  header.push_back("saving");
  std::vector<std::vector<std::string>> rows;
  for (const plan::WaterfallStep& s : o.waterfall) {
    std::vector<std::string> row = {s.step};
    const auto cells = result_cells(s.result);
    row.insert(row.end(), cells.begin(), cells.end());
    row.push_back(fmt::format("{:.1f}%", s.saving_vs_baseline_pct));
    rows.push_back(row);
  }
  t += "savings, step by step (each simulated on the whole workload; saving: against the baseline, the first row):\n" +
       aligned_table(header, rows, 1);
  if (o.recommended) {
    const plan::CandidateResult& r = o.finalists[*o.recommended];
    t += fmt::format("plan: {}\n  cost {:.2f} USD ({:.1f}% of the baseline, {:.2f}x the lower bound), GPU allocation (kept) {:.1f}%, "
                     "production p99 pending {} s\n",
                     r.label, r.cost_usd, o.baseline.cost_usd > 0 ? r.cost_usd / o.baseline.cost_usd * 100 : 0,
                     o.bound.cost_usd > 0 ? r.cost_usd / o.bound.cost_usd : 0, r.kept_allocation_pct, fmt_opt(r.production_pending_p99_s));
  } else {
    t += "plan: none; " + o.infeasible_reason + "\n";
  }
  t += "frontier (cost against production p99 pending):\n";
  for (size_t k : o.frontier) {
    const plan::CandidateResult& r = o.finalists[k];
    t += fmt::format("  {:.2f} USD, p99 {} s, alloc {:.1f}%: {}\n", r.cost_usd, fmt_opt(r.production_pending_p99_s), r.kept_allocation_pct, r.label);
  }
  return t;
}

namespace {

nlohmann::json service_config_json(const plan::ServicePlan& p) {
  nlohmann::json j = {{"instance_type", p.option.instance_type},
                      {"zone", p.option.zone},
                      {"gpu_model", p.option.gpu_model},
                      {"dtype", p.dtype()},
                      {"tensor_parallel", p.tensor_parallel},
                      {"replicas", p.replicas},
                      {"autoscaler", p.autoscaled ? "keda+predictive" : "static"},
                      {"phase", p.phase},
                      {"label", p.label()},
                      {"ttft_p99_s", p.ttft_p99_s},
                      {"tpot_p99_s", p.tpot_p99_s},
                      {"slo_attainment", p.slo_attainment},
                      {"requests", p.requests},
                      {"timed_out", p.timed_out},
                      {"cost_usd", p.cost_usd},
                      {"node_cost_usd", p.node_cost_usd},
                      {"gpu_hours", p.gpu_hours},
                      {"peak_rps", p.peak_rps},
                      {"meets", p.meets}};
  if (p.autoscaled) {
    j["min_replicas"] = p.min_replicas;
    j["max_replicas"] = p.max_replicas;
    j["capacity_rps_per_replica"] = p.capacity_rps_per_replica;
    j["headroom"] = p.headroom;
    j["lead_s"] = p.lead_s;
    j["scale_down_s"] = p.scale_down_s;
  }
  return j;
}

nlohmann::json services_json(const std::vector<plan::ServingPlanResult>& services) {
  nlohmann::json a = nlohmann::json::array();
  for (const plan::ServingPlanResult& s : services) {
    nlohmann::json tried = nlohmann::json::array();
    for (const plan::ServicePlan& p : s.tried) tried.push_back(service_config_json(p));
    a.push_back({{"service", s.service},
                 {"model", s.model},
                 {"slo", {{"ttft_p99_s", s.slo_ttft_p99_s}, {"tpot_p99_s", s.slo_tpot_p99_s}}},
                 {"plan", s.chosen ? service_config_json(s.tried[*s.chosen]) : nlohmann::json(nullptr)},
                 {"infeasible", s.infeasible_reason},
                 {"binding", s.binding},
                 {"bound_usd", s.bound_usd},
                 {"skipped", s.skipped},
                 {"tried", tried}});
  }
  return a;
}

}  // namespace

std::string plan_json(const plan::PlanOutcome& o, const std::string& workload, const std::vector<plan::ServingPlanResult>& services,
                      std::optional<double> total_cost_usd) {
  if (services.empty()) return plan_json(o, workload);
  nlohmann::json j = nlohmann::json::parse(plan_json(o, workload));
  j["services"] = services_json(services);
  j["total_cost_usd"] = total_cost_usd ? nlohmann::json(*total_cost_usd) : nlohmann::json(nullptr);
  return j.dump(2) + "\n";
}

std::string services_plan_json(const std::string& workload, const std::vector<plan::ServingPlanResult>& services,
                               std::optional<double> total_cost_usd) {
  nlohmann::json j;
  j["workload"] = workload;
  j["services"] = services_json(services);
  j["total_cost_usd"] = total_cost_usd ? nlohmann::json(*total_cost_usd) : nlohmann::json(nullptr);
  return j.dump(2) + "\n";
}

std::string services_summary_text(const std::vector<plan::ServingPlanResult>& services, std::optional<double> total_cost_usd) {
  std::string t = "inference services (each simulated alone on its pool; cost: its pods, USD over the horizon):\n";
  const std::vector<std::string> header = {"service", "instance", "GPU", "dtype", "tp", "replicas", "TTFT p99 s", "TPOT p99 s",
                                           "SLO met", "cost USD", "nodes USD", "bound USD", "tried"};
  std::vector<std::vector<std::string>> rows;
  for (const plan::ServingPlanResult& s : services) {
    if (!s.chosen) {
      rows.push_back({s.service, "-", "-", "-", "-", "none", "-", "-", "-", "-", "-", fmt::format("{:.2f}", s.bound_usd),
                      fmt::format("{}", s.tried.size())});
      continue;
    }
    const plan::ServicePlan& p = s.tried[*s.chosen];
    const std::string replicas = p.autoscaled ? fmt::format("keda+predictive {}..{}, {:.3g} req/s, lead {:g} s", p.min_replicas,
                                                            p.max_replicas, p.capacity_rps_per_replica, p.lead_s)
                                              : fmt::format("{} static", p.replicas);
    rows.push_back({s.service, p.option.instance_type, p.option.gpu_model, p.dtype(), fmt::format("{}", p.tensor_parallel), replicas,
                    fmt::format("{:.3f}", p.ttft_p99_s), fmt::format("{:.4f}", p.tpot_p99_s), fmt::format("{:.1f}%", p.slo_attainment * 100),
                    fmt::format("{:.2f}", p.cost_usd), fmt::format("{:.2f}", p.node_cost_usd), fmt::format("{:.2f}", s.bound_usd),
                    fmt::format("{}", s.tried.size())});
  }
  t += aligned_table(header, rows, 1);
  for (const plan::ServingPlanResult& s : services) {
    t += fmt::format("  {}: SLO TTFT p99 <= {:g} s, TPOT p99 <= {:g} s", s.service, s.slo_ttft_p99_s, s.slo_tpot_p99_s);
    if (s.chosen) t += "; plan: " + s.tried[*s.chosen].label() + "\n";
    else t += "; plan: none; " + s.infeasible_reason + "\n";
  }
  if (total_cost_usd) t += fmt::format("total (every node, jobs and services simulated together): {:.2f} USD\n", *total_cost_usd);
  return t;
}

std::string plan_json(const plan::PlanOutcome& o, const std::string& workload) {
  nlohmann::json j;
  j["workload"] = workload;
  j["demand"] = {{"gpu_hours", o.demand.gpu_hours},
                 {"gpu_hours_on_demand_only", o.demand.gpu_hours_on_demand_only},
                 {"peak_gpus", o.demand.peak_gpus},
                 {"horizon_s", o.demand.horizon_s}};
  nlohmann::json committed = nlohmann::json::array();
  for (const auto& [k, v] : o.bound.committed_nodes) committed.push_back({{"option", k}, {"nodes", v}});
  j["bound"] = {{"cost_usd", o.bound.cost_usd},       {"on_demand_usd", o.bound.on_demand_usd},
                {"spot_usd", o.bound.spot_usd},       {"committed_usd", o.bound.committed_usd},
                {"gpu_hours_needed", o.bound.gpu_hours_needed}, {"billed_gpu_hours", o.bound.billed_gpu_hours},
                {"committed_nodes", committed},       {"binding", o.bound.binding},
                {"allocation_bound_pct", o.allocation_bound_pct}, {"allocation_bound_binding", o.allocation_bound_binding}};
  j["items_no_option_holds"] = o.items_no_option_holds;
  if (o.bound_at_min_allocation)
    j["bound_at_min_allocation"] = o.bound_at_min_allocation->feasible ? nlohmann::json(o.bound_at_min_allocation->cost_usd)
                                                                      : nlohmann::json("infeasible");
  j["baseline"] = result_json(o.baseline);
  j["plan"] = o.recommended ? result_json(o.finalists[*o.recommended]) : nlohmann::json(nullptr);
  j["infeasible"] = o.infeasible_reason;
  j["frontier"] = nlohmann::json::array();
  for (size_t k : o.frontier) j["frontier"].push_back(result_json(o.finalists[k]));
  j["waterfall"] = nlohmann::json::array();
  for (const plan::WaterfallStep& s : o.waterfall)
    j["waterfall"].push_back({{"step", s.step},
                              {"result", result_json(s.result)},
                              {"saving_vs_previous_pct", s.saving_vs_previous_pct},
                              {"saving_vs_baseline_pct", s.saving_vs_baseline_pct}});
  auto series = [](const plan::UtilizationSeries& u) {
    return nlohmann::json{{"time_s", u.time_s},
                          {"gpus_allocated", u.gpus_allocated},
                          {"gpus_billed", u.gpus_billed},
                          {"cost_usd_per_hour", u.cost_usd_per_hour},
                          {"pending_pods", u.pending_pods}};
  };
  j["utilization"] = {{"plan", series(o.plan_utilization)}, {"baseline", series(o.baseline_utilization)}};
  j["finalists"] = nlohmann::json::array();
  for (const auto& r : o.finalists) j["finalists"].push_back(result_json(r));
  j["race"] = nlohmann::json::array();
  for (const auto& r : o.race) j["race"].push_back(result_json(r));
  return j.dump(2) + "\n";
}

std::string plan_csv(const plan::PlanOutcome& o) {
  std::string c = "phase,index,label,horizon_s,cost_usd,on_demand_usd,spot_usd,reserved_usd,gpu_allocated_hours,gpu_billed_hours,"
                  "spot_billed_gpu_hours,lost_gpu_hours,kept_allocation_pct,pending_p99_s,production_pending_p99_s,pods_completed,"
                  "pods_failed,pods_pending,restarts\n";
  auto row = [&](const char* phase, const plan::CandidateResult& r) {
    std::string label = "\"";
    for (char ch : r.label) label += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    label += "\"";
    c += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", phase, r.index, label, num(r.horizon_s), num(r.cost_usd),
                     num(r.on_demand_usd), num(r.spot_usd), num(r.reserved_usd), num(r.gpu_allocated_hours), num(r.gpu_billed_hours),
                     num(r.spot_billed_gpu_hours), num(r.lost_gpu_hours), num(r.kept_allocation_pct),
                     r.pending_p99_s ? num(*r.pending_p99_s) : "", r.production_pending_p99_s ? num(*r.production_pending_p99_s) : "",
                     r.pods_completed, r.pods_failed, r.pods_pending, r.restarts);
  };
  for (const auto& r : o.race) row("race", r);
  for (const auto& r : o.finalists) row("finalist", r);
  row("baseline", o.baseline);
  for (const auto& s : o.waterfall) row("waterfall", s.result);
  return c;
}

namespace {

// A table header: escaped, each word with a hyphen kept whole (<span class="word">, html_page.h).
std::string header_html(const std::string& text) {
  std::string out, word;
  auto flush = [&] {
    if (word.empty()) return;
    out += word.find('-') == std::string::npos ? html_escape(word) : "<span class=\"word\">" + html_escape(word) + "</span>";
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') {
      flush();
      out += ' ';
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

constexpr std::string_view kPlanRenderScript = R"js(
(function () {
  "use strict";
  if (typeof Chart === "undefined") throw new Error("Chart.js did not load");
  var data = JSON.parse(document.getElementById("report-data").textContent);
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 13;
  Chart.defaults.color = "#333a48";
  function point(r) { return { x: r.production_pending_p99_s === null ? 0 : r.production_pending_p99_s, y: r.cost_usd, label: r.label }; }
  var datasets = [
    { label: "finalists", data: data.finalists.map(point), backgroundColor: "#9aa5b8", borderColor: "#9aa5b8", showLine: false },
    { label: "frontier", data: data.frontier.map(point), backgroundColor: "#2563eb", borderColor: "#2563eb", showLine: true,
      pointRadius: 5 },
    { label: "baseline", data: [point(data.baseline)], backgroundColor: "#b91c1c", borderColor: "#b91c1c", pointRadius: 6,
      pointStyle: "rectRot", showLine: false }
  ];
  if (data.plan) datasets.push({ label: "plan", data: [point(data.plan)], backgroundColor: "#15803d", borderColor: "#15803d",
    pointRadius: 10, pointStyle: "star", borderWidth: 3, showLine: false, order: -1 });
  new Chart(document.getElementById("chart-frontier"), {
    type: "scatter",
    data: { datasets: gpufleetSeparateOverlaps(datasets) },
    options: { animation: false, responsive: true, maintainAspectRatio: false,
      scales: { x: { title: { display: true, text: "production p99 pending (s)" }, beginAtZero: true },
                y: { title: { display: true, text: "cost over the horizon (USD)" }, beginAtZero: true } },
      plugins: { tooltip: { callbacks: { label: function (c) { return c.raw.label + ": " + c.raw.y.toFixed(2) + " USD, p99 " + c.raw.x + " s"; } } } } }
  });
  var steps = data.waterfall;
  new Chart(document.getElementById("chart-waterfall"), {
    type: "bar",
    // Long step names on several lines of at most 36 characters, so the axis does not cut them.
    data: { labels: steps.map(function (s, i) {
        var words = ((i + 1) + ". " + s.step).split(" "), lines = [], line = "";
        words.forEach(function (w) {
          if (line && (line + " " + w).length > 36) { lines.push(line); line = w; } else { line = line ? line + " " + w : w; }
        });
        if (line) lines.push(line);
        return lines;
      }),
      datasets: [
        { label: "on-demand", data: steps.map(function (s) { return s.result.on_demand_usd; }), backgroundColor: "#2563eb" },
        { label: "spot", data: steps.map(function (s) { return s.result.spot_usd; }), backgroundColor: "#f59e0b" },
        { label: "committed", data: steps.map(function (s) { return s.result.reserved_usd; }), backgroundColor: "#15803d" }
      ] },
    options: { animation: false, responsive: true, maintainAspectRatio: false, indexAxis: "y",
      scales: { x: { stacked: true, title: { display: true, text: "USD over the horizon" } }, y: { stacked: true } } }
  });
  // The plan's and the baseline's GPUs over time (hours on the x axis).
  function line(u, field, label, color, dash) {
    return { label: label, data: u.time_s.map(function (t, i) { return { x: t / 3600, y: u[field][i] }; }), borderColor: color,
      backgroundColor: color, borderDash: dash, pointRadius: 0, borderWidth: 2, fill: false };
  }
  var u = data.utilization;
  var lines = [line(u.baseline, "gpus_billed", "baseline: GPUs billed", "#b91c1c", [6, 4]),
               line(u.baseline, "gpus_allocated", "baseline: GPUs allocated", "#f59e0b", [6, 4])];
  if (u.plan.time_s.length) lines.push(line(u.plan, "gpus_billed", "plan: GPUs billed", "#2563eb", []),
                                       line(u.plan, "gpus_allocated", "plan: GPUs allocated", "#15803d", []));
  new Chart(document.getElementById("chart-utilization"), {
    type: "line",
    data: { datasets: lines },
    options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
      scales: { x: { type: "linear", title: { display: true, text: "hours from the start" }, beginAtZero: true },
                y: { title: { display: true, text: "GPUs" }, beginAtZero: true } } }
  });
  if (document.body.dataset.rendered !== "error") document.body.dataset.rendered = "ok";
})();
)js";

}  // namespace

std::string plan_report_html(const plan::PlanOutcome& o, const std::string& workload) {
  const std::string data_json = json_for_script(plan_json(o, workload));
  std::string html;
  html.reserve(chartjs_source_size() + data_json.size() + 16384);
  html += report_page_start("gpufleet plan report");
  html += "<header>\n<h1>gpufleet plan</h1>\n";
  html += fmt::format("<p class=\"subtitle\">{}</p>\n", html_escape(workload));
  if (o.recommended) {
    const plan::CandidateResult& r = o.finalists[*o.recommended];
    html += fmt::format("<p class=\"cluster\">plan: {} &middot; {:.2f} USD, {:.1f}% of the baseline's {:.2f} USD; lower bound {:.2f} "
                        "USD</p>\n",
                        html_escape(r.label), r.cost_usd, o.baseline.cost_usd > 0 ? r.cost_usd / o.baseline.cost_usd * 100 : 0,
                        o.baseline.cost_usd, o.bound.cost_usd);
  } else {
    html += fmt::format("<p class=\"cluster\">no plan: {}</p>\n", html_escape(o.infeasible_reason));
  }
  html += "</header>\n<noscript><p>JavaScript is off: the charts need it; the tables do not.</p></noscript>\n";
  html += "<section>\n<h2>Frontier: cost against production p99 pending</h2>\n<p class=\"note\">Every finalist simulated on the "
          "whole horizon; the frontier joins those no other beats on both.</p>\n<div class=\"chart\"><canvas id=\"chart-frontier\" "
          "role=\"img\" aria-label=\"cost against production p99 pending, one point per finalist\"></canvas></div>\n</section>\n";
  html += "<section>\n<h2>Savings, step by step</h2>\n<p class=\"note\">Each step simulated on the same workload and seed, in "
          "the order platform teams adopt them.</p>\n<div class=\"chart\"><canvas id=\"chart-waterfall\" role=\"img\" "
          "aria-label=\"cost by capacity type for each step\"></canvas></div>\n";
  html += "<div class=\"table-scroll\">\n<table>\n<thead><tr><th class=\"text\">step</th>";
  for (const auto& h : kResultHeaders) html += "<th>" + header_html(h) + "</th>";
  html += "<th>saving vs baseline</th></tr></thead>\n<tbody>\n";
  for (const plan::WaterfallStep& s : o.waterfall) {
    html += "<tr><td class=\"text\">" + html_escape(s.step) + "</td>";
    for (const auto& c : result_cells(s.result)) html += "<td>" + html_escape(c) + "</td>";
    html += fmt::format("<td>{:.1f}%</td></tr>\n", s.saving_vs_baseline_pct);
  }
  html += "</tbody>\n</table>\n</div>\n</section>\n";
  html += "<section>\n<h2>GPUs over time</h2>\n<p class=\"note\">GPUs billed and allocated, the plan against the baseline, "
          "on the whole workload (one sample per simulated minute, or fewer on long horizons).</p>\n<div class=\"chart\"><canvas "
          "id=\"chart-utilization\" role=\"img\" aria-label=\"GPUs billed and allocated over time, plan and baseline\"></canvas></div>\n"
          "</section>\n";
  html += "<section>\n<h2>Finalists</h2>\n<div class=\"table-scroll\">\n<table>\n<thead><tr><th class=\"text\">configuration</th>";
  for (const auto& h : kResultHeaders) html += "<th>" + header_html(h) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& r : o.finalists) {
    html += "<tr><td class=\"text\">" + html_escape(r.label) + "</td>";
    for (const auto& c : result_cells(r)) html += "<td>" + html_escape(c) + "</td>";
    html += "</tr>\n";
  }
  html += "</tbody>\n</table>\n</div>\n</section>\n";
  html += report_page_end("gpufleet plan", data_json, kPlanRenderScript);
  return html;
}

namespace {

// The comment lines of `comment`, each "# ...".
std::string comment_lines(const std::string& comment) {
  std::string y;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) y += line.empty() ? "#\n" : "# " + line + "\n";
  return y;
}

// A pool's value of label `key`, else its name.
std::string config_name(const NodePool& p, const char* key) {
  for (const auto& [k, v] : p.labels)
    if (k == key) return v;
  return p.name;
}

}  // namespace

std::string mig_parted_config_yaml(const sim::ClusterConfig& cluster, const std::string& comment) {
  std::string configs;
  std::set<std::string> done;
  for (const sim::SimPool& sp : cluster.pools) {
    if (!sp.pool.mig_devices) continue;
    const std::string name = config_name(sp.pool, plan::kMigConfigLabel);
    if (!done.insert(name).second) continue;
    configs += fmt::format("  {}:\n  - devices: all\n    mig-enabled: true\n    mig-devices:\n", name);
    for (const auto& [profile, count] : *sp.pool.mig_devices) configs += fmt::format("      {}: {}\n", yaml_string(profile), count);
  }
  std::string y = comment_lines(comment);
  if (configs.empty()) return y + "# The plan has no MIG pool: no mig-parted config to apply.\n";
  y += "# nvidia/mig-parted config (github.com/NVIDIA/mig-parted). The GPU Operator's MIG manager applies to each node\n"
       "# the config its nvidia.com/mig.config label names: put this file in the ConfigMap that ClusterPolicy\n"
       "# spec.migManager.config.name names (kubectl create configmap ... --from-file=config.yaml=<this file>).\n";
  return y + "version: v1\nmig-configs:\n" + configs;
}

std::string device_plugin_config_yaml(const sim::ClusterConfig& cluster, const std::string& comment, const std::string& name,
                                      const std::string& ns) {
  std::string data;
  std::set<std::string> done;
  for (const sim::SimPool& sp : cluster.pools) {
    const NodePool& p = sp.pool;
    if (!p.time_slicing_replicas) continue;
    const std::string key = config_name(p, plan::kDevicePluginConfigLabel);
    if (!done.insert(key).second) continue;
    data += fmt::format("  {}: |-\n    version: v1\n    sharing:\n      {}:\n        resources:\n        - name: nvidia.com/gpu\n"
                        "          replicas: {}\n",
                        key, p.gpu_sharing_strategy == GpuSharingStrategy::kMps ? "mps" : "timeSlicing", *p.time_slicing_replicas);
  }
  std::string y = comment_lines(comment);
  if (data.empty()) return y + "# The plan has no time-sliced or MPS pool: no device-plugin config to apply.\n";
  y += "# NVIDIA k8s-device-plugin configs, one per time-sliced or MPS pool; each node takes the config its\n"
       "# nvidia.com/device-plugin.config label names (GPU Operator: ClusterPolicy spec.devicePlugin.config.name).\n";
  return y + fmt::format("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: {}\ndata:\n", name, ns) + data;
}

std::string plan_shard_json(const std::string& fingerprint, size_t shard, size_t shards, size_t candidates,
                            const std::vector<plan::CandidateResult>& results) {
  nlohmann::json j;
  j["apiVersion"] = "plan.gpufleet.io/v1";
  j["kind"] = "PlanShard";
  j["fingerprint"] = fingerprint;
  j["shard"] = shard;
  j["shards"] = shards;
  j["candidates"] = candidates;
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) j["results"].push_back(result_json(r));
  return j.dump(1) + "\n";
}

}  // namespace gpufleet::io
