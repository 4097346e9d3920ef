#include "readers/serving/sim_inference.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "replica_autoscaling/hpa.h"
#include "replica_autoscaling/keda.h"
#include "replica_autoscaling/predictive.h"
#include "inference/request_sources.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/serving/endpoint_picker_config.h"
#include "readers/serving/k8s_serving.h"
#include "readers/traces/request_trace.h"
#include "readers/serving/step_profile.h"
#include "model/resources.h"
#include "inputs/sim/sim_options.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::fail_referenced;
using detail::read_referenced;
using detail::seconds;

inference::Precision parse_precision(const Field& f) {
  const std::string v = f.scalar();
  if (v == "bf16" || v == "bfloat16") return inference::Precision::kBf16;
  if (v == "fp16" || v == "float16" || v == "half") return inference::Precision::kFp16;
  if (v == "fp8") return inference::Precision::kFp8;
  f.fail(fmt::format("unknown dtype '{}' (expected bf16, fp16, fp8)", v));
}

double positive_number(const Field& f, double max) {
  const double v = f.number();
  if (!(v > 0) || !(v <= max)) f.fail(fmt::format("{} is outside (0, {:g}]", f.scalar(), max));
  return v;
}

// A period of something the run repeats (a scrape, an evaluation): at least sim::kMinIntervalSeconds,
// so that it cannot flood the event queue.
double interval_number(const Field& f, double max) {
  const double v = f.number();
  if (!(v >= sim::kMinIntervalSeconds) || !(v <= max))
    f.fail(fmt::format("{} is outside [{:g}, {:g}] (an interval is at least 1 ms)", f.scalar(), sim::kMinIntervalSeconds, max));
  return v;
}

sim::FieldOrigin origin_of(const Field& f) {
  const auto [line, column] = f.position();
  return {f.source().file, line, column, f.path()};
}

void parse_engine(const Field& e, inference::EngineArgs& a) {
  e.require_map();
  e.only_keys({"tensorParallelSize", "dtype", "kvCacheDtype", "gpuMemoryUtilization", "maxNumSeqs",
               "maxNumBatchedTokens", "maxModelLen", "blockSize", "enablePrefixCaching", "shutdownTimeoutSeconds"});
  if (const Field f = e["tensorParallelSize"]; f.present()) a.tensor_parallel_size = static_cast<int32_t>(f.integer(1, 64));
  if (const Field f = e["dtype"]; f.present()) {
    a.dtype = parse_precision(f);
    a.kv_cache_dtype = a.dtype == inference::Precision::kFp8 ? inference::Precision::kBf16 : a.dtype;
  }
  if (const Field f = e["kvCacheDtype"]; f.present()) a.kv_cache_dtype = parse_precision(f);
  if (const Field f = e["gpuMemoryUtilization"]; f.present()) a.gpu_memory_utilization = positive_number(f, 1.0);
  if (const Field f = e["maxNumSeqs"]; f.present()) a.max_num_seqs = static_cast<int32_t>(f.integer(1, 65536));
  if (const Field f = e["maxNumBatchedTokens"]; f.present())
    a.max_num_batched_tokens = static_cast<int32_t>(f.integer(0, 1 << 20));
  if (const Field f = e["maxModelLen"]; f.present()) a.max_model_len = static_cast<int32_t>(f.integer(0, 1 << 24));
  if (const Field f = e["blockSize"]; f.present()) a.block_size = static_cast<int32_t>(f.integer(1, 1024));
  if (const Field f = e["enablePrefixCaching"]; f.present()) a.enable_prefix_caching = f.boolean(true);
  if (const Field f = e["shutdownTimeoutSeconds"]; f.present()) a.shutdown_timeout_s = seconds(f);
}

std::string resolve(const std::string& base_dir, const std::string& path);

void parse_router(const Field& r, inference::RouterConfig& c, const std::string& base_dir) {
  r.require_map();
  r.only_keys({"policy", "maxOutstandingPerReplica", "requestTimeoutSeconds", "endpointPickerConfig", "inferenceObjective"});
  if (const Field f = r["policy"]; f.present()) {
    const std::string v = f.scalar();
    if (v == "least-outstanding") c.policy = inference::RoutingPolicy::kLeastOutstanding;
    else if (v == "round-robin") c.policy = inference::RoutingPolicy::kRoundRobin;
    else if (v == "prefix-affinity") c.policy = inference::RoutingPolicy::kPrefixAffinity;
    else if (v == "endpoint-picker") c.policy = inference::RoutingPolicy::kEndpointPicker;
    else f.fail(fmt::format("unknown routing policy '{}' (expected least-outstanding, round-robin, prefix-affinity, endpoint-picker)", v));
  }
  if (const Field f = r["maxOutstandingPerReplica"]; f.present())
    c.max_outstanding_per_replica = static_cast<int32_t>(f.integer(0, 1 << 20));
  if (const Field f = r["requestTimeoutSeconds"]; f.present()) c.request_timeout_s = seconds(f);
  // endpoint-picker: an EndpointPickerConfig / InferencePool / InferenceObjective file
  // (readers/serving/endpoint_picker_config.h); none = the EPP's default configuration.
  const Field file = r["endpointPickerConfig"];
  const Field objective = r["inferenceObjective"];
  if ((file.present() || objective.present()) && c.policy != inference::RoutingPolicy::kEndpointPicker)
    (file.present() ? file : objective).fail("needs policy: endpoint-picker");
  if (file.present()) {
    const std::string path = resolve(base_dir, file.required_str());
    const EndpointPickerObjects epp = read_referenced(file, [&] { return read_endpoint_picker_file(path); });
    c.endpoint_picker = epp.resolved;
    const inference::InferenceObjective* o = nullptr;
    try {
      o = select_objective(epp, objective.str(), path);
    } catch (const std::invalid_argument& e) {
      (objective.present() ? objective : file).fail(e.what());
    }
    if (o != nullptr) c.objective_priority = o->effective_priority();
  } else if (objective.present()) {
    objective.fail("needs endpointPickerConfig (the file that defines it)");
  }
}

void parse_cold_start(const Field& c, inference::ColdStartSpec& s) {
  c.require_map();
  c.only_keys({"imagePullSeconds", "weightLoadGBps", "cachedWeights", "cachedWeightLoadGBps", "engineStartSeconds",
               "snapshotRestore", "snapshotRestoreSeconds"});
  if (const Field f = c["imagePullSeconds"]; f.present()) s.image_pull_s = seconds(f);
  if (const Field f = c["weightLoadGBps"]; f.present()) s.weight_load_bandwidth_gb_s = positive_number(f, 1e4);
  if (const Field f = c["cachedWeights"]; f.present()) s.cached_weights = f.boolean(false);
  if (const Field f = c["cachedWeightLoadGBps"]; f.present()) s.cached_weight_load_bandwidth_gb_s = positive_number(f, 1e4);
  if (const Field f = c["engineStartSeconds"]; f.present()) s.engine_start_s = seconds(f);
  if (const Field f = c["snapshotRestore"]; f.present()) s.snapshot_restore = f.boolean(false);
  if (const Field f = c["snapshotRestoreSeconds"]; f.present()) s.snapshot_restore_s = seconds(f);
}

void parse_step_profile(const Field& p, std::vector<inference::StepProfileRow>& rows) {
  if (!p.is_seq()) p.fail(fmt::format("expected a list of {{numSeqs, tokens, stepSeconds}}, got {}", p.type()));
  for (size_t i = 0, n = p.size(); i < n; ++i) {
    const Field r = p.at(i);
    r.require_map();
    r.only_keys({"numSeqs", "tokens", "stepSeconds"});
    inference::StepProfileRow row;
    row.num_seqs = static_cast<int32_t>(r["numSeqs"].integer(1, 65536));
    row.tokens = static_cast<int32_t>(r["tokens"].integer(1, 1 << 24));
    row.step_s = positive_number(r["stepSeconds"], 3600);
    rows.push_back(row);
  }
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute() || base_dir.empty() ? path : (std::filesystem::path(base_dir) / p).string();
}

// A trace file, read once; its errors (cannot open, a bad row) are reported at the field that names it.
std::shared_ptr<const std::vector<inference::Request>> read_trace(const Field& f, const std::string& base_dir,
                                                                  RequestTraceFormat format) {
  const std::string path = resolve(base_dir, f.required_str());
  return read_referenced(f, [&] { return std::make_shared<const std::vector<inference::Request>>(read_request_trace(path, format)); });
}

// traffic: {trace, format, timeScale, rateMultiplier, startSeconds, endSeconds} or {generate: {...}}.
void parse_traffic(const Field& t, sim::InferenceServiceSpec& spec, const std::string& base_dir, double horizon_s) {
  t.require_map();
  t.only_keys({"trace", "format", "timeScale", "rateMultiplier", "startSeconds", "endSeconds", "delaySeconds", "generate"});
  const Field trace = t["trace"], gen = t["generate"];
  if (trace.present() == gen.present()) t.fail("exactly one of trace or generate is required");
  if (trace.present()) {
    RequestTraceFormat format = RequestTraceFormat::kAuto;
    if (const Field f = t["format"]; f.present()) {
      try {
        format = parse_request_trace_format(f.scalar());
      } catch (const std::exception& e) {
        f.fail(e.what());
      }
    }
    auto requests = read_trace(trace, base_dir, format);
    inference::TraceReplayOptions o;
    if (const Field f = t["timeScale"]; f.present()) o.time_scale = positive_number(f, 1e6);
    if (const Field f = t["rateMultiplier"]; f.present()) o.rate_multiplier = positive_number(f, 1e4);
    if (const Field f = t["startSeconds"]; f.present()) o.window_start_s = seconds(f);
    if (const Field f = t["endSeconds"]; f.present()) o.window_end_s = seconds(f);
    if (o.window_end_s <= o.window_start_s) t["endSeconds"].fail("endSeconds must be after startSeconds");
    if (const Field f = t["delaySeconds"]; f.present()) o.delay_s = seconds(f);
    spec.traffic = inference::TraceTraffic{requests, o, resolve(base_dir, trace.scalar()), t["format"].present() ? t["format"].scalar() : ""};
    spec.traffic_description = fmt::format("trace {}{}{}{}", std::filesystem::path(trace.scalar()).filename().string(),
                                           o.time_scale != 1 ? fmt::format(" time x{:g}", o.time_scale) : "",
                                           o.rate_multiplier != 1 ? fmt::format(" rate x{:g}", o.rate_multiplier) : "",
                                           o.delay_s != 0 ? fmt::format(" from {:g} s", o.delay_s) : "");
    return;
  }
  for (const char* k : {"format", "timeScale", "rateMultiplier", "startSeconds", "endSeconds", "delaySeconds"})
    t.fail_key(k, fmt::format("{} applies to a trace, not to generate", k));
  gen.require_map();
  gen.only_keys({"meanRatePerSecond", "peakToTrough", "peakHour", "weekendFactor", "tokens", "maxPromptTokens",
                 "maxOutputTokens"});
  inference::GeneratedSourceOptions o;
  o.horizon_s = horizon_s;
  o.rate.mean_rate_per_s = positive_number(gen["meanRatePerSecond"], 1e6);
  if (const Field f = gen["peakToTrough"]; f.present()) {
    o.rate.peak_to_trough = f.number();
    if (!(o.rate.peak_to_trough >= 1 && o.rate.peak_to_trough <= 1e6)) f.fail(fmt::format("{} is outside [1, 1e6]", f.scalar()));
  }
  if (const Field f = gen["peakHour"]; f.present()) {
    o.rate.peak_hour = f.number();
    if (!(o.rate.peak_hour >= 0 && o.rate.peak_hour < 24)) f.fail(fmt::format("{} is outside [0, 24)", f.scalar()));
  }
  if (const Field f = gen["weekendFactor"]; f.present()) o.rate.weekend_factor = positive_number(f, 1e6);
  if (const Field f = gen["maxPromptTokens"]; f.present()) o.max_prompt_tokens = static_cast<int32_t>(f.integer(1, 10'000'000));
  if (const Field f = gen["maxOutputTokens"]; f.present()) o.max_output_tokens = static_cast<int32_t>(f.integer(1, 10'000'000));
  const Field tokens = gen["tokens"];
  tokens.require_map();
  tokens.only_keys({"fromTrace", "law", "promptMean", "promptMedian", "outputMean", "outputMedian"});
  std::string from;
  if (const Field ft = tokens["fromTrace"]; ft.present()) {
    for (const char* k : {"promptMean", "promptMedian", "outputMean", "outputMedian"})
      tokens.fail_key(k, fmt::format("{} cannot be given with fromTrace", k));
    const auto requests = read_trace(ft, base_dir, RequestTraceFormat::kAuto);
    o.lengths = inference::fit_token_lengths(*requests);
    from = std::filesystem::path(ft.scalar()).filename().string();
    if (const Field law = tokens["law"]; law.present()) {
      if (law.scalar() == "empirical") o.law = inference::TokenLengthLaw::kEmpirical;
      else if (law.scalar() != "lognormal") law.fail(fmt::format("unknown law '{}' (expected lognormal, empirical)", law.scalar()));
    }
  } else {
    tokens.fail_key("law", "law applies to fromTrace");
    o.lengths.prompt_mean = positive_number(tokens["promptMean"], 1e7);
    o.lengths.prompt_median = positive_number(tokens["promptMedian"], 1e7);
    o.lengths.output_mean = positive_number(tokens["outputMean"], 1e7);
    o.lengths.output_median = positive_number(tokens["outputMedian"], 1e7);
    if (o.lengths.prompt_median > o.lengths.prompt_mean) tokens["promptMedian"].fail("a lognormal's median is at most its mean");
    if (o.lengths.output_median > o.lengths.output_mean) tokens["outputMedian"].fail("a lognormal's median is at most its mean");
    o.lengths.prompt = inference::lognormal_from_mean_median(o.lengths.prompt_mean, o.lengths.prompt_median);
    o.lengths.output = inference::lognormal_from_mean_median(o.lengths.output_mean, o.lengths.output_median);
  }
  try {
    inference::validate_generated(o);
  } catch (const std::invalid_argument& e) {
    gen.fail(e.what());
  }
  spec.traffic = o;
  spec.traffic_description = fmt::format("generated {:g} req/s mean, peak/trough {:g}{}", o.rate.mean_rate_per_s,
                                         o.rate.peak_to_trough, from.empty() ? "" : ", lengths from " + from);
}

[[noreturn]] void fail_at(const SourcePos& pos, const std::string& message) {
  throw InputError(pos.file, pos.line, pos.field, message, pos.column);
}

bool allowed(const AutoscalerRules& rules, const std::string& metric) {
  return std::find(rules.metrics.begin(), rules.metrics.end(), metric) != rules.metrics.end();
}

std::string unknown_metric(const AutoscalerRules& rules, const std::string& metric) {
  std::string list;
  for (const std::string& m : rules.metrics) list += list.empty() ? m : ", " + m;
  return fmt::format("metric '{}' {} ({}: {})", metric, rules.unknown_metric, rules.metrics_label, list.empty() ? "none" : list);
}

}  // namespace

AutoscalerRules serving_autoscaler_rules() {
  AutoscalerRules r;
  r.metrics = sim::exported_serving_metrics();
  r.unknown_metric = "is exported by no simulated component";
  r.metrics_label = "exported";
  return r;
}

ParsedAutoscaler parse_autoscaler(const Field& a, const std::string& base_dir, const AutoscalerRules& rules) {
  a.require_map();
  a.only_keys({"kubernetes", "predictive"});
  const Field k8s = a["kubernetes"], pred = a["predictive"];
  if (!rules.predictive) a.fail_key("predictive", rules.predictive_refused);
  if (!k8s.present() && !pred.present()) a.fail(rules.predictive ? "one of kubernetes or predictive is required" : "kubernetes is required");
  ParsedAutoscaler out;
  std::string description;
  if (k8s.present()) {
    const std::string path = resolve(base_dir, k8s.required_str());
    const ServingObjects objects = read_referenced(k8s, [&] { return read_k8s_serving({path}); });
    const size_t n = objects.hpas.size() + objects.scaled_objects.size();
    if (n != 1)
      k8s.fail(fmt::format("{} has {} HorizontalPodAutoscaler and {} ScaledObject objects; exactly one is needed",
                           k8s.scalar(), objects.hpas.size(), objects.scaled_objects.size()));
    // The checks of the object read: errors at its place in its file, reported at `kubernetes`.
    read_referenced(k8s, [&] {
      if (!objects.hpas.empty()) {
        const ServingHpa& h = objects.hpas.front();
        if (rules.external_or_object_only && h.spec.metrics.empty())
          fail_at(h.where, "no metrics: the HPA's default, Resource cpu at 80% utilization, is a per-pod metric, which a "
                           "service without inference does not export (give External or Object metrics)");
        for (size_t i = 0; i < h.spec.metrics.size(); ++i) {
          const replica_autoscaling::MetricSpec& m = h.spec.metrics[i];
          if (rules.external_or_object_only && m.type != replica_autoscaling::MetricSourceType::kExternal &&
              m.type != replica_autoscaling::MetricSourceType::kObject)
            fail_at(h.metric_positions[i], fmt::format("metric '{}' is of type {}: a service without inference exports no per-pod "
                                                       "metrics (use External or Object)",
                                                       m.name, replica_autoscaling::metric_source_type_name(m.type)));
          if (!allowed(rules, m.name)) fail_at(h.metric_positions[i], unknown_metric(rules, m.name));
        }
        const replica_autoscaling::HpaSpec hpa = h.spec;
        try {
          replica_autoscaling::HpaAutoscaler check(hpa);
        } catch (const std::invalid_argument& e) {
          fail_at(h.where, e.what());
        }
        out.spec.hpa = hpa;
        std::string metrics;
        for (const replica_autoscaling::MetricSpec& m : hpa.metrics)
          metrics += fmt::format("{}{} {} {:g}", metrics.empty() ? "" : ", ", m.name,
                                 replica_autoscaling::metric_target_type_name(m.target_type), m.target);
        description = fmt::format("hpa {} ({})", hpa.name, metrics);
      } else {
        const ServingScaledObject& so = objects.scaled_objects.front();
        for (size_t i = 0; i < so.spec.triggers.size(); ++i)
          if (!allowed(rules, so.spec.triggers[i].metric)) fail_at(so.trigger_positions[i], unknown_metric(rules, so.spec.triggers[i].metric));
        const replica_autoscaling::ScaledObjectSpec keda = so.spec;
        try {
          replica_autoscaling::KedaAutoscaler check(keda);
        } catch (const std::invalid_argument& e) {
          fail_at(so.where, e.what());
        }
        out.spec.keda = keda;
        std::string triggers;
        for (const replica_autoscaling::PrometheusTrigger& t : keda.triggers)
          triggers += fmt::format("{}{} > {:g}", triggers.empty() ? "" : ", ", t.metric, t.threshold);
        description = fmt::format("keda {} ({})", keda.name, triggers);
      }
    });
  }
  if (!pred.present()) {
    out.description = description;
    return out;
  }
  pred.require_map();
  pred.only_keys({"rateMetric", "capacityRpsPerReplica", "headroom", "leadSeconds", "minReplicas", "maxReplicas",
                  "evaluationPeriodSeconds", "forecast"});
  replica_autoscaling::PredictiveSpec p;
  p.rate_metric = pred["rateMetric"].str(sim::kMetricRequestRate);
  if (!allowed(rules, p.rate_metric)) pred["rateMetric"].fail(unknown_metric(rules, p.rate_metric));
  p.capacity_rps_per_replica = positive_number(pred["capacityRpsPerReplica"], 1e6);
  if (const Field f = pred["headroom"]; f.present()) p.headroom = positive_number(f, 100);
  if (const Field f = pred["leadSeconds"]; f.present()) p.lead_time_s = seconds(f);
  if (const Field f = pred["minReplicas"]; f.present()) p.min_replicas = static_cast<int32_t>(f.integer(0, 100000));
  if (const Field f = pred["maxReplicas"]; f.present()) p.max_replicas = static_cast<int32_t>(f.integer(1, 100000));
  if (p.max_replicas < p.min_replicas) pred["maxReplicas"].fail("maxReplicas is below minReplicas");
  if (const Field f = pred["evaluationPeriodSeconds"]; f.present()) p.evaluation_period_s = interval_number(f, 86400);
  if (const Field fo = pred["forecast"]; fo.present()) {
    fo.require_map();
    fo.only_keys({"bucketSeconds", "weeklyWeight", "levelWindowSeconds", "levelGain"});
    if (const Field f = fo["bucketSeconds"]; f.present()) p.forecast.bucket_s = positive_number(f, 86400);
    if (const Field f = fo["weeklyWeight"]; f.present()) {
      p.forecast.weekly_weight = f.number();
      if (!(p.forecast.weekly_weight >= 0 && p.forecast.weekly_weight <= 1)) f.fail(fmt::format("{} is outside [0, 1]", f.scalar()));
    }
    if (const Field f = fo["levelWindowSeconds"]; f.present()) p.forecast.level_window_s = positive_number(f, 1e7);
    if (const Field f = fo["levelGain"]; f.present()) {
      p.forecast.level_gain = f.number();
      if (!(p.forecast.level_gain >= 0 && p.forecast.level_gain <= 1)) f.fail(fmt::format("{} is outside [0, 1]", f.scalar()));
    }
  }
  try {
    replica_autoscaling::PredictiveAutoscaler check(p);
  } catch (const std::invalid_argument& e) {
    pred.fail(e.what());
  }
  out.spec.predictive = p;
  out.description = fmt::format("predictive {:g} req/s per replica, lead {:g} s{}", p.capacity_rps_per_replica, p.lead_time_s,
                                description.empty() ? "" : " + " + description);
  return out;
}

// deployment: FILE -- the vLLM Deployment (apps/v1) the service runs: its engine arguments, and the
// service fields the item leaves out (replicas, gpus or mig, namespace, nodeSelector, tolerations,
// strategy, minReadySeconds).
void apply_vllm_deployment(const Field& f, const Field& item, sim::WorkloadSpec& service, sim::InferenceServiceSpec& spec,
                           const std::string& base_dir, const inference::ServingCatalog& catalog) {
  for (const char* k : {"model", "engine"})
    f.fail_key(k, fmt::format("{} comes from the Deployment: give model and engine, or deployment", k));
  const Field file = f["deployment"];
  const std::string path = resolve(base_dir, file.required_str());
  const ServingObjects objects = read_referenced(file, [&] { return read_k8s_serving({path}); });
  if (objects.deployments.size() != 1)
    f["deployment"].fail(fmt::format("{} has {} vLLM Deployments; exactly one is needed", f["deployment"].scalar(),
                                     objects.deployments.size()));
  const VllmDeployment& d = objects.deployments.front();
  if (catalog.find_model(d.engine.model) == nullptr) {
    std::string known;
    for (const inference::LlmModel& x : catalog.models) known += known.empty() ? x.name : ", " + x.name;
    fail_referenced(file, InputError(d.where.file, d.where.line, d.where.field,
                                     fmt::format("unknown model '{}' (the serving catalog has: {})", d.engine.model, known),
                                     d.where.column));
  }
  spec.engine = d.engine;
  spec.origin = {d.where.file, d.where.line, d.where.column, d.where.field};
  spec.notes = objects.warnings;  // e.g. the vLLM arguments not modelled
  if (!item["gpus"].present() && !item["mig"].present()) {
    if (!d.mig_profile.empty()) {
      service.num_gpu = 0;
      service.gpu_milli = 0;
      service.mig_requests = {{d.mig_profile, d.mig_devices_per_pod}};
    } else {
      service.num_gpu = d.gpus_per_pod;
      service.gpu_milli = d.gpus_per_pod > 0 ? kGpuMilliPerGpu : 0;
    }
  }
  if (!item["replicas"].present()) service.pods = std::max(1, d.replicas);
  if (!item["namespace"].present()) service.namespace_name = d.namespace_name;
  if (!item["nodeSelector"].present())
    for (const auto& [k, v] : d.node_selector) service.node_selector.emplace_back(k, v);
  if (!item["tolerations"].present()) service.tolerations = d.tolerations;
  if (!item["strategy"].present() && d.rolling_update) service.rolling_update = *d.rolling_update;
  if (!item["minReadySeconds"].present() && d.has_min_ready) service.min_ready_s = d.min_ready_s;
  try {
    sim::validate_spec(service);
  } catch (const std::invalid_argument& e) {
    f["deployment"].fail(e.what());
  }
}

namespace {

// kvTransferLink: nvlink | rdma | tcp (inference::kv_transfer_link) or {gbps, latencyMs, perGpu}.
inference::KvTransferLink parse_kv_transfer_link(const Field& f) {
  if (f.is_scalar()) {
    try {
      return inference::kv_transfer_link(f.scalar());
    } catch (const std::invalid_argument&) {
      f.fail(fmt::format("unknown link '{}' (expected nvlink, rdma, tcp, or {{gbps, latencyMs, perGpu}})", f.scalar()));
    }
  }
  if (!f.is_map()) f.fail(fmt::format("expected nvlink, rdma, tcp or {{gbps, latencyMs, perGpu}}, got {}", f.type()));
  f.only_keys({"gbps", "latencyMs", "perGpu"});
  inference::KvTransferLink link;
  link.name = "custom";
  const Field gbps = f["gbps"];
  if (!gbps.present()) gbps.fail("is required: the link's bandwidth in Gb/s");
  const double gbps_value = gbps.number();
  try {
    inference::check_kv_transfer_gbps(gbps_value);
  } catch (const std::invalid_argument&) {
    gbps.fail(fmt::format("{} is outside [0.001, 1000000] Gb/s", gbps.scalar()));
  }
  link.gb_s = gbps_value / 8;  // Gb/s -> GB/s
  const Field latency = f["latencyMs"];
  const double latency_ms = latency.present() ? latency.number() : 0;
  try {
    inference::check_kv_transfer_latency_ms(latency_ms);
  } catch (const std::invalid_argument&) {
    latency.fail(fmt::format("{} is outside [0, 1000000] ms", latency.scalar()));
  }
  link.latency_s = latency_ms / 1000;
  link.per_gpu = f["perGpu"].boolean(true);
  return link;
}

sim::DisaggregatedRoleSpec parse_role(const Field& r, const std::string& item, const std::string& base_dir) {
  if (!r.present()) r.fail("is required: a disaggregated service has a prefill and a decode role");
  r.require_map();
  r.only_keys({"replicas", "minReplicas", "maxReplicas", "gpus", "pools", "nodeSelector", "autoscaler"});
  sim::DisaggregatedRoleSpec role;
  role.item = item;
  role.origin = origin_of(r);
  const Field gpus = r["gpus"];
  if (!gpus.present()) r.fail("gpus is required: each role's pods request their own GPUs (= its tensorParallelSize)");
  role.tensor_parallel_size = static_cast<int32_t>(gpus.integer(1, 64));
  role.max_replicas = sim::kMaxReplicasPerItem;
  if (const Field m = r["minReplicas"]; m.present()) role.min_replicas = static_cast<int32_t>(m.integer(0, sim::kMaxReplicasPerItem));
  if (const Field m = r["maxReplicas"]; m.present()) role.max_replicas = static_cast<int32_t>(m.integer(0, sim::kMaxReplicasPerItem));
  if (role.min_replicas > role.max_replicas)
    r["maxReplicas"].fail(fmt::format("{} is below minReplicas {}", role.max_replicas, role.min_replicas));
  const Field replicas = r["replicas"];
  role.replicas = static_cast<int32_t>(replicas.present() ? replicas.integer(1, sim::kMaxReplicasPerItem) : std::max(1, role.min_replicas));
  if (role.replicas < role.min_replicas || role.replicas > role.max_replicas)
    replicas.fail(fmt::format("{} is outside [minReplicas {}, maxReplicas {}]", role.replicas, role.min_replicas, role.max_replicas));
  if (const Field a = r["autoscaler"]; a.present()) {
    ParsedAutoscaler parsed = parse_autoscaler(a, base_dir, serving_autoscaler_rules());
    role.autoscaler = std::move(parsed.spec);
    role.autoscaler_description = std::move(parsed.description);
  }
  return role;
}

}  // namespace

std::string disaggregated_role_item(const std::string& service, const char* role) { return service + "-" + role; }

sim::DisaggregationSpec parse_disaggregation(const Field& d, const std::string& service, const std::string& base_dir) {
  d.require_map();
  d.only_keys({"kvTransferLink", "maxLocalPrefillTokens", "firstTokenFrom", "prefill", "decode"});
  sim::DisaggregationSpec out;
  if (const Field l = d["kvTransferLink"]; l.present()) out.link = parse_kv_transfer_link(l);
  if (const Field m = d["maxLocalPrefillTokens"]; m.present())
    out.max_local_prefill_tokens = static_cast<int32_t>(m.integer(0, 1 << 24));
  if (const Field ft = d["firstTokenFrom"]; ft.present()) {
    const std::string v = ft.scalar();
    if (v == "prefill") out.first_token = inference::FirstTokenFrom::kPrefill;
    else if (v == "decode") out.first_token = inference::FirstTokenFrom::kDecode;
    else ft.fail(fmt::format("unknown value '{}' (expected prefill, decode)", v));
  }
  out.prefill = parse_role(d["prefill"], disaggregated_role_item(service, "prefill"), base_dir);
  out.decode = parse_role(d["decode"], disaggregated_role_item(service, "decode"), base_dir);
  return out;
}

sim::InferenceServiceSpec parse_inference_service(const Field& f, const Field& item, sim::WorkloadSpec& service,
                                                  const std::string& base_dir, double horizon_s,
                                                  const inference::ServingCatalog& catalog) {
  f.require_map();
  f.only_keys({"model", "engine", "deployment", "stepProfile", "traffic", "router", "slo", "coldStart",
               "scrapeIntervalSeconds", "autoscaler", "disaggregation"});
  sim::InferenceServiceSpec spec;
  spec.service = service.name;
  if (const Field d = f["disaggregation"]; d.present()) {
    // The roles' pods are their own items: the service's item keeps only what they share.
    for (const char* k : {"replicas", "gpus", "gpuMilli", "mig", "gpuMemory", "resourceClaims"})
      item.fail_key(k, fmt::format("{} is per role with inference.disaggregation (its prefill: and decode: blocks)", k));
    for (const char* k : {"deployment", "autoscaler"})
      f.fail_key(k, fmt::format("{} is not for a disaggregated service{}", k,
                                std::string(k) == "autoscaler" ? ": each role has its own (disaggregation.prefill.autoscaler)" : ""));
    f["engine"].fail_key("tensorParallelSize", "is per role with disaggregation: the role's gpus");
    spec.disaggregation = parse_disaggregation(d, service.name, base_dir);
  }
  if (f["deployment"].present()) {
    apply_vllm_deployment(f, item, service, spec, base_dir, catalog);
  } else {
    const Field model = f["model"];
    const auto [line, column] = model.position();
    spec.origin = {f.source().file, line, column, model.path()};
    spec.engine.model = model.required_str();
    const inference::LlmModel* m = catalog.find_model(spec.engine.model);
    if (m == nullptr) {
      std::string known;
      for (const inference::LlmModel& x : catalog.models) known += known.empty() ? x.name : ", " + x.name;
      model.fail(fmt::format("unknown model '{}' (the serving catalog has: {})", spec.engine.model, known));
    }
    spec.engine.tensor_parallel_size = service.num_gpu > 0 ? service.num_gpu : 1;
  }
  if (spec.disaggregation) spec.engine.tensor_parallel_size = spec.disaggregation->decode.tensor_parallel_size;
  spec.cold_start.image_pull_s = catalog.cold_start.image_pull_s;
  spec.cold_start.weight_load_bandwidth_gb_s = catalog.cold_start.weight_load_bandwidth_gb_s;
  spec.cold_start.cached_weight_load_bandwidth_gb_s = catalog.cold_start.cached_weight_load_bandwidth_gb_s;
  spec.cold_start.engine_start_s = catalog.cold_start.engine_start_s;
  spec.cold_start.snapshot_restore_s = catalog.cold_start.snapshot_restore_s;
  if (const Field e = f["engine"]; e.present()) parse_engine(e, spec.engine);
  if (service.num_gpu > 0 && spec.engine.tensor_parallel_size != service.num_gpu)
    f["engine"]["tensorParallelSize"].fail(fmt::format("{} but each replica pod requests gpus: {}; they must be equal",
                                                       spec.engine.tensor_parallel_size, service.num_gpu));
  if (const Field p = f["stepProfile"]; p.is_scalar()) {
    const std::string path = resolve(base_dir, p.scalar());
    spec.step_profile = read_referenced(p, [&] { return read_step_profile(path); });  // a CSV file, as bench-serve reads it
  } else if (p.present()) {
    parse_step_profile(p, spec.step_profile);
  }
  if (const Field r = f["router"]; r.present()) parse_router(r, spec.router, base_dir);
  if (const Field s = f["slo"]; s.present()) {
    s.require_map();
    s.only_keys({"ttftP99Seconds", "tpotP99Seconds"});
    if (const Field x = s["ttftP99Seconds"]; x.present()) spec.slo.ttft_p99_s = positive_number(x, 1e6);
    if (const Field x = s["tpotP99Seconds"]; x.present()) spec.slo.tpot_p99_s = positive_number(x, 1e6);
  }
  if (const Field c = f["coldStart"]; c.present()) parse_cold_start(c, spec.cold_start);
  if (const Field s = f["scrapeIntervalSeconds"]; s.present()) spec.scrape_interval_s = interval_number(s, 86400);
  const Field traffic = f["traffic"];
  if (!traffic.present()) f.fail("traffic is required: a trace or a generator");
  parse_traffic(traffic, spec, base_dir, horizon_s);
  spec.traffic_origin = origin_of(traffic);
  if (const Field g = traffic["generate"]["meanRatePerSecond"]; g.present()) spec.traffic_origin = origin_of(g);
  if (const Field m = traffic["rateMultiplier"]; m.present()) spec.traffic_origin = origin_of(m);
  spec.autoscaler_origin = origin_of(f);
  if (const Field a = f["autoscaler"]; a.present()) {
    ParsedAutoscaler parsed = parse_autoscaler(a, base_dir, serving_autoscaler_rules());
    spec.autoscaler = std::move(parsed.spec);
    spec.autoscaler_description = std::move(parsed.description);
    spec.autoscaler_origin = origin_of(a);
  }
  return spec;
}

}  // namespace gpufleet::io
