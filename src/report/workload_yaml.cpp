#include "report/workload_yaml.h"

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>

#include "inference/deployment.h"
#include "inference/request_sources.h"

namespace gpufleet::io {

namespace {

std::string num(double v) { return fmt::format("{}", v); }

// A double-quoted YAML scalar (JSON escapes are valid YAML).
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string comment_lines(const std::string& comment) {
  std::string y;
  size_t start = 0;
  while (start <= comment.size() && !comment.empty()) {
    const size_t nl = comment.find('\n', start);
    const std::string line = comment.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    y += line.empty() ? "#\n" : "# " + line + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return y;
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("the planned workload cannot be written as a workload file: " + what);
}

// `path` (as the reader opened it) relative to the folder of `out_path`.
std::string relative_to(const std::string& path, const std::string& out_path) {
  namespace fs = std::filesystem;
  fs::path dir = fs::absolute(fs::path(out_path)).parent_path();
  fs::path rel = fs::absolute(fs::path(path)).lexically_normal().lexically_relative(dir.lexically_normal());
  return rel.empty() ? fs::absolute(fs::path(path)).string() : rel.generic_string();
}

void write_item(std::string& y, const sim::WorkloadSpec& s) {
  const bool service = s.kind == sim::WorkloadKind::kService;
  if (!s.mig_requests.empty()) refuse(fmt::format("'{}' requests MIG devices", s.name));
  if (!s.node_selector.empty()) refuse(fmt::format("'{}' has a nodeSelector", s.name));
  if (!s.tolerations.empty()) refuse(fmt::format("'{}' has tolerations", s.name));
  if (s.disruption_budget) refuse(fmt::format("'{}' has a disruption budget", s.name));
  if (!s.queue_name.empty()) refuse(fmt::format("'{}' queues in Kueue", s.name));
  if (s.topology.mode != queue::TopologyRequest::Mode::kNone) refuse(fmt::format("'{}' has a topology request", s.name));
  if (s.on_demand) refuse(fmt::format("'{}' is a ScaledJob's template", s.name));
  if (!s.gpu_spec.empty()) refuse(fmt::format("'{}' has a gpu_spec (openb)", s.name));
  const sim::RollingUpdateStrategy d;
  if (service && (s.rolling_update.max_surge.value != d.max_surge.value || s.rolling_update.max_surge.percent != d.max_surge.percent ||
                  s.rolling_update.max_unavailable.value != d.max_unavailable.value ||
                  s.rolling_update.max_unavailable.percent != d.max_unavailable.percent))
    refuse(fmt::format("'{}' has a rolling update strategy", s.name));
  y += fmt::format("- name: {}\n", quoted(s.name));
  y += fmt::format("  namespace: {}\n", quoted(s.namespace_name));
  if (s.arrival_s != 0) y += fmt::format("  {}: {}\n", service ? "startSeconds" : "arrivalSeconds", num(s.arrival_s));
  y += fmt::format("  {}: {}\n", service ? "replicas" : "pods", s.pods);
  if (s.num_gpu > 0) y += fmt::format("  gpus: {}\n", s.num_gpu);
  if (s.num_gpu > 0 && s.gpu_milli != 1000) y += fmt::format("  gpuMilli: {}\n", s.gpu_milli);
  y += fmt::format("  cpu: {}m\n", s.cpu_milli);
  y += fmt::format("  memory: \"{}\"\n", s.memory_bytes);
  if (!service) {
    y += fmt::format("  durationSeconds: {}\n", num(s.duration_s));
    if (s.checkpoint_interval_s != 0) y += fmt::format("  checkpointIntervalSeconds: {}\n", num(s.checkpoint_interval_s));
    if (s.checkpoint_cost_s != 0) y += fmt::format("  checkpointCostSeconds: {}\n", num(s.checkpoint_cost_s));
    if (s.checkpoint_on_notice) y += "  checkpointOnNotice: true\n";
  }
  if (s.priority != 0) y += fmt::format("  priority: {}\n", s.priority);
  if (s.capacity == sim::CapacityPreference::kSpotOk) y += "  capacity: spot-ok\n";
  if (s.capacity == sim::CapacityPreference::kSpot) y += "  capacity: spot\n";
  if (!s.pools.empty()) {
    std::string list;
    for (const std::string& p : s.pools) list += (list.empty() ? "" : ", ") + quoted(p);
    y += fmt::format("  pools: [{}]\n", list);
  }
  if (s.do_not_disrupt) y += "  doNotDisrupt: true\n";
  if (service && s.min_ready_s != 0) y += fmt::format("  minReadySeconds: {}\n", num(s.min_ready_s));
}

void write_inference(std::string& y, const sim::InferenceServiceSpec& spec, const std::string& out_path,
                     const std::map<std::string, std::string>& scaled_object_files) {
  const inference::EngineArgs& e = spec.engine;
  if (!spec.step_profile.empty()) refuse(fmt::format("service '{}' has a step profile", spec.service));
  y += "  inference:\n";
  y += fmt::format("    model: {}\n", quoted(e.model));
  y += fmt::format("    engine: {{tensorParallelSize: {}, dtype: {}, kvCacheDtype: {}, gpuMemoryUtilization: {}, maxNumSeqs: {}, "
                   "maxNumBatchedTokens: {}, maxModelLen: {}, blockSize: {}, enablePrefixCaching: {}, shutdownTimeoutSeconds: {}}}\n",
                   e.tensor_parallel_size, inference::precision_name(e.dtype), inference::precision_name(e.kv_cache_dtype),
                   num(e.gpu_memory_utilization), e.max_num_seqs, e.max_num_batched_tokens, e.max_model_len, e.block_size,
                   e.enable_prefix_caching ? "true" : "false", num(e.shutdown_timeout_s));
  y += "    traffic:\n";
  if (const auto* t = std::get_if<inference::TraceTraffic>(&spec.traffic)) {
    if (t->path.empty()) refuse(fmt::format("service '{}': a trace without its file", spec.service));
    const inference::TraceReplayOptions& r = t->replay;
    y += fmt::format("      trace: {}\n", quoted(relative_to(t->path, out_path)));
    if (!t->format.empty()) y += fmt::format("      format: {}\n", t->format);
    if (r.time_scale != 1) y += fmt::format("      timeScale: {}\n", num(r.time_scale));
    if (r.rate_multiplier != 1) y += fmt::format("      rateMultiplier: {}\n", num(r.rate_multiplier));
    if (r.window_start_s != 0) y += fmt::format("      startSeconds: {}\n", num(r.window_start_s));
    if (r.window_end_s != std::numeric_limits<double>::infinity()) y += fmt::format("      endSeconds: {}\n", num(r.window_end_s));
    if (r.delay_s != 0) y += fmt::format("      delaySeconds: {}\n", num(r.delay_s));
  } else if (const auto* g = std::get_if<inference::GeneratedSourceOptions>(&spec.traffic)) {
    if (g->law != inference::TokenLengthLaw::kLognormal) refuse(fmt::format("service '{}': an empirical token law", spec.service));
    y += fmt::format("      generate:\n        meanRatePerSecond: {}\n        peakToTrough: {}\n        peakHour: {}\n"
                     "        weekendFactor: {}\n",
                     num(g->rate.mean_rate_per_s), num(g->rate.peak_to_trough), num(g->rate.peak_hour), num(g->rate.weekend_factor));
    y += fmt::format("        tokens: {{promptMean: {}, promptMedian: {}, outputMean: {}, outputMedian: {}}}\n", num(g->lengths.prompt_mean),
                     num(g->lengths.prompt_median), num(g->lengths.output_mean), num(g->lengths.output_median));
    y += fmt::format("        maxPromptTokens: {}\n        maxOutputTokens: {}\n", g->max_prompt_tokens, g->max_output_tokens);
  } else {
    refuse(fmt::format("service '{}' has no traffic", spec.service));
  }
  if (spec.router.endpoint_picker || spec.router.objective_priority != 0)
    refuse(fmt::format("service '{}': an endpoint picker configuration (router.endpointPickerConfig)", spec.service));
  y += fmt::format("    router: {{policy: {}, maxOutstandingPerReplica: {}, requestTimeoutSeconds: {}}}\n",
                   inference::routing_policy_name(spec.router.policy), spec.router.max_outstanding_per_replica,
                   num(spec.router.request_timeout_s));
  if (spec.slo.ttft_p99_s || spec.slo.tpot_p99_s) {
    std::string slo;
    if (spec.slo.ttft_p99_s) slo += "ttftP99Seconds: " + num(*spec.slo.ttft_p99_s);
    if (spec.slo.tpot_p99_s) slo += (slo.empty() ? "" : ", ") + std::string("tpotP99Seconds: ") + num(*spec.slo.tpot_p99_s);
    y += "    slo: {" + slo + "}\n";
  }
  const inference::ColdStartSpec& c = spec.cold_start;
  y += fmt::format("    coldStart: {{imagePullSeconds: {}, weightLoadGBps: {}, cachedWeights: {}, cachedWeightLoadGBps: {}, "
                   "engineStartSeconds: {}, snapshotRestore: {}, snapshotRestoreSeconds: {}}}\n",
                   num(c.image_pull_s), num(c.weight_load_bandwidth_gb_s), c.cached_weights ? "true" : "false",
                   num(c.cached_weight_load_bandwidth_gb_s), num(c.engine_start_s), c.snapshot_restore ? "true" : "false",
                   num(c.snapshot_restore_s));
  y += fmt::format("    scrapeIntervalSeconds: {}\n", num(spec.scrape_interval_s));
  const replica_autoscaling::ReplicaAutoscalerSpec& a = spec.autoscaler;
  if (a.hpa) refuse(fmt::format("service '{}' has an HPA", spec.service));
  if (a.keda || a.predictive) {
    y += "    autoscaler:\n";
    if (a.keda) {
      const auto it = scaled_object_files.find(spec.service);
      if (it == scaled_object_files.end()) refuse(fmt::format("service '{}': its ScaledObject has no file", spec.service));
      y += fmt::format("      kubernetes: {}\n", quoted(relative_to(it->second, out_path)));
    }
    if (a.predictive) {
      const replica_autoscaling::PredictiveSpec& p = *a.predictive;
      y += fmt::format("      predictive: {{capacityRpsPerReplica: {}, headroom: {}, leadSeconds: {}, minReplicas: {}, maxReplicas: {}, "
                       "rateMetric: {}, evaluationPeriodSeconds: {}, forecast: {{bucketSeconds: {}, weeklyWeight: {}, "
                       "levelWindowSeconds: {}, levelGain: {}}}}}\n",
                       num(p.capacity_rps_per_replica), num(p.headroom), num(p.lead_time_s), p.min_replicas, p.max_replicas,
                       quoted(p.rate_metric), num(p.evaluation_period_s), num(p.forecast.bucket_s), num(p.forecast.weekly_weight),
                       num(p.forecast.level_window_s), num(p.forecast.level_gain));
    }
  }
}

}  // namespace

std::string sim_workload_yaml(const sim::Workload& w, const std::string& out_path,
                              const std::map<std::string, std::string>& scaled_object_files, const std::string& comment) {
  if (w.queues) refuse("Kueue queues");
  if (!w.topology.levels.empty()) refuse("topology levels");
  if (!w.scaled_jobs.empty()) refuse("ScaledJobs");
  if (!w.rollouts.empty()) refuse("rollouts");
  if (!w.external_metrics.empty()) refuse("external metrics");
  if (!w.service_autoscalers.empty()) refuse("autoscalers of services without inference");
  for (const sim::InferenceServiceSpec& s : w.inference)
    if (s.disaggregation) refuse(fmt::format("the disaggregated inference service '{}'", s.service));
  std::string y = comment_lines(comment);
  y += "apiVersion: sim.gpufleet.io/v1\nkind: Workload\n";
  y += fmt::format("horizonSeconds: {}\n", num(w.horizon_s));
  // One hpaController for the file: every inference service's must be the same.
  const replica_autoscaling::HpaControllerOptions defaults;
  const replica_autoscaling::HpaControllerOptions* controller = nullptr;
  for (const sim::InferenceServiceSpec& s : w.inference) {
    const auto& h = s.autoscaler.hpa_controller;
    if (controller != nullptr &&
        (h.sync_period_s != controller->sync_period_s || h.tolerance != controller->tolerance ||
         h.downscale_stabilization_s != controller->downscale_stabilization_s ||
         h.keep_status_within_tolerance != controller->keep_status_within_tolerance))
      refuse("inference services with different hpaController settings");
    controller = &h;
  }
  if (controller != nullptr &&
      (controller->sync_period_s != defaults.sync_period_s || controller->tolerance != defaults.tolerance ||
       controller->downscale_stabilization_s != defaults.downscale_stabilization_s ||
       controller->keep_status_within_tolerance != defaults.keep_status_within_tolerance))
    y += fmt::format("hpaController: {{syncPeriodSeconds: {}, tolerance: {}, downscaleStabilizationSeconds: {}, perPodWithinTolerance: {}}}\n",
                     num(controller->sync_period_s), num(controller->tolerance), num(controller->downscale_stabilization_s),
                     controller->keep_status_within_tolerance ? "statusReplicas" : "specReplicas");
  bool any_job = false, any_service = false;
  for (const sim::WorkloadSpec& s : w.items) (s.kind == sim::WorkloadKind::kService ? any_service : any_job) = true;
  if (any_service) {
    y += "services:\n";
    for (const sim::WorkloadSpec& s : w.items) {
      if (s.kind != sim::WorkloadKind::kService) continue;
      write_item(y, s);
      for (const sim::InferenceServiceSpec& spec : w.inference)
        if (spec.service == s.name) write_inference(y, spec, out_path, scaled_object_files);
    }
  }
  if (any_job) {
    y += "jobs:\n";
    for (const sim::WorkloadSpec& s : w.items)
      if (s.kind == sim::WorkloadKind::kJob) write_item(y, s);
  }
  return y;
}

std::string keda_scaled_object_yaml(const sim::Workload& w, const std::string& service, const std::string& comment) {
  for (const sim::InferenceServiceSpec& spec : w.inference) {
    if (spec.service != service || !spec.autoscaler.keda) continue;
    const replica_autoscaling::ScaledObjectSpec& so = *spec.autoscaler.keda;
    std::string y = comment_lines(comment);
    y += "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata:\n";
    y += fmt::format("  name: {}\n  namespace: {}\n", quoted(so.name), quoted(so.namespace_name));
    y += fmt::format("spec:\n  scaleTargetRef:\n    name: {}\n", quoted(so.scale_target_name));
    y += fmt::format("  pollingInterval: {}\n  cooldownPeriod: {}\n  minReplicaCount: {}\n  maxReplicaCount: {}\n", so.polling_interval_s,
                     so.cooldown_period_s, so.min_replica_count, so.max_replica_count);
    if (so.hpa_behavior && so.hpa_behavior->scale_down && so.hpa_behavior->scale_down->stabilization_window_seconds)
      y += fmt::format("  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n        scaleDown:\n"
                       "          stabilizationWindowSeconds: {}\n",
                       *so.hpa_behavior->scale_down->stabilization_window_seconds);
    y += "  triggers:\n";
    for (const replica_autoscaling::PrometheusTrigger& t : so.triggers)
      y += fmt::format("  - type: prometheus\n    metadata:\n      serverAddress: {}\n      query: {}\n      threshold: \"{}\"\n",
                       quoted(t.server_address), quoted(t.query), num(t.threshold));
    return y;
  }
  throw std::invalid_argument(fmt::format("service '{}' has no ScaledObject", service));
}

}  // namespace gpufleet::io
