#include "readers/serving/k8s_serving.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "readers/k8s/k8s_yaml.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "inputs/sim/workload.h"
#include "model/gpu_catalog.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::Source;
namespace as = replica_autoscaling;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

SourcePos pos_of(const Field& f) {
  const auto [line, column] = f.position();
  return {f.source().file, line, column, f.path()};
}

// A quantity field as the HPA controller reads a target: MilliValue / 1000.
double quantity_value(const Field& f) {
  const Quantity q = f.quantity();
  try {
    return static_cast<double>(q.milli()) / 1000.0;
  } catch (const std::invalid_argument& e) {
    f.fail(e.what());
  }
}

int32_t int32_field(const Field& f, int64_t min) { return static_cast<int32_t>(f.integer(min, kInt32Max)); }

// A replica count (spec.replicas, minReplicas, maxReplicas, minReplicaCount, maxReplicaCount): at most
// sim::kMaxReplicasPerItem, the cap of a workload item's replicas, whichever path sets the number.
int32_t replica_field(const Field& f, int64_t min) {
  return static_cast<int32_t>(f.integer(min, sim::kMaxReplicasPerItem));
}

// ---------------------------------------------------------------------------------------------
// HorizontalPodAutoscaler

as::ScalingRules scaling_rules(const Field& f) {
  f.require_map();
  f.only_keys({"stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"});
  as::ScalingRules r;
  if (const Field w = f["stabilizationWindowSeconds"]; w.present()) r.stabilization_window_seconds = static_cast<int32_t>(w.integer(0, 3600));
  if (const Field s = f["selectPolicy"]; s.present()) {
    const std::string v = s.scalar();
    if (v == "Max") r.select_policy = as::SelectPolicy::kMax;
    else if (v == "Min") r.select_policy = as::SelectPolicy::kMin;
    else if (v == "Disabled") r.select_policy = as::SelectPolicy::kDisabled;
    else s.fail(fmt::format("unknown selectPolicy '{}' (expected Max, Min or Disabled)", v));
  }
  if (const Field p = f["policies"]; p.present()) {
    if (p.size() == 0) p.fail("must specify at least one Policy");
    std::vector<as::ScalingPolicy> policies;
    for (size_t i = 0; i < p.size(); ++i) {
      const Field e = p.at(i);
      e.require_map();
      e.only_keys({"type", "value", "periodSeconds"});
      as::ScalingPolicy pol;
      const Field t = e["type"];
      const std::string type = t.required_str();
      if (type == "Pods") pol.type = as::ScalingPolicyType::kPods;
      else if (type == "Percent") pol.type = as::ScalingPolicyType::kPercent;
      else t.fail(fmt::format("unknown policy type '{}' (expected Pods or Percent)", type));
      pol.value = int32_field(e["value"], 1);
      pol.period_seconds = static_cast<int32_t>(e["periodSeconds"].integer(1, 1800));
      policies.push_back(pol);
    }
    r.policies = std::move(policies);
  }
  if (const Field t = f["tolerance"]; t.present()) {
    r.tolerance = quantity_value(t);
  }
  return r;
}

as::HpaBehavior behavior(const Field& f) {
  f.require_map();
  f.only_keys({"scaleUp", "scaleDown"});
  as::HpaBehavior b;
  if (f["scaleUp"].present()) b.scale_up = scaling_rules(f["scaleUp"]);
  if (f["scaleDown"].present()) b.scale_down = scaling_rules(f["scaleDown"]);
  return b;
}

as::MetricSpec metric(const Field& f, SourcePos& name_pos) {
  f.require_map();
  as::MetricSpec m;
  const Field type_f = f["type"];
  const std::string type = type_f.required_str();
  const char* key = nullptr;
  if (type == "Resource") {
    m.type = as::MetricSourceType::kResource;
    key = "resource";
  } else if (type == "ContainerResource") {
    m.type = as::MetricSourceType::kContainerResource;
    key = "containerResource";
  } else if (type == "Pods") {
    m.type = as::MetricSourceType::kPods;
    key = "pods";
  } else if (type == "Object") {
    m.type = as::MetricSourceType::kObject;
    key = "object";
  } else if (type == "External") {
    m.type = as::MetricSourceType::kExternal;
    key = "external";
  } else {
    type_f.fail(fmt::format("unknown metric source type '{}' (expected Resource, ContainerResource, Pods, Object or External)", type));
  }
  f.only_keys({"type", "resource", "containerResource", "pods", "object", "external"});
  for (const char* other : {"resource", "containerResource", "pods", "object", "external"})
    if (std::string_view(other) != key && f[other].present())
      f.fail_key(other, fmt::format("must not be set when type is '{}'", type));
  const Field src = f[key];
  src.require_map();
  Field name_f = src["name"];
  if (m.type == as::MetricSourceType::kResource || m.type == as::MetricSourceType::kContainerResource) {
    if (m.type == as::MetricSourceType::kResource) src.only_keys({"name", "target"});
    else src.only_keys({"name", "container", "target"});
    if (m.type == as::MetricSourceType::kContainerResource) src["container"].required_str();
  } else {
    if (m.type == as::MetricSourceType::kObject) {
      src.only_keys({"describedObject", "metric", "target"});
      src["describedObject"].require_map();
    } else {
      src.only_keys({"metric", "target"});
    }
    const Field mf = src["metric"];
    mf.require_map();
    mf.only_keys({"name", "selector"});
    name_f = mf["name"];
  }
  m.name = name_f.required_str();
  name_pos = pos_of(name_f);
  const Field target = src["target"];
  target.require_map();
  target.only_keys({"type", "value", "averageValue", "averageUtilization"});
  const Field tt = target["type"];
  const std::string ttype = tt.required_str();
  const bool resource = m.type == as::MetricSourceType::kResource || m.type == as::MetricSourceType::kContainerResource;
  const Field value_f = ttype == "Utilization" ? target["averageUtilization"] : ttype == "AverageValue" ? target["averageValue"] : target["value"];
  if (ttype == "Utilization") {
    if (!resource) tt.fail(fmt::format("Utilization is only valid for Resource and ContainerResource metrics, not {}", type));
    m.target_type = as::MetricTargetType::kUtilization;
    m.target = static_cast<double>(value_f.integer(1, kInt32Max));
  } else if (ttype == "AverageValue" || ttype == "Value") {
    m.target_type = ttype == "Value" ? as::MetricTargetType::kValue : as::MetricTargetType::kAverageValue;
    if (ttype == "Value" && (resource || m.type == as::MetricSourceType::kPods))
      tt.fail(fmt::format("Value is not valid for a {} metric (use {})", type, resource ? "Utilization or AverageValue" : "AverageValue"));
    if (!value_f.present()) value_f.fail("required field is missing");
    m.target = quantity_value(value_f);
    if (!(m.target > 0)) value_f.fail(fmt::format("{} must be positive", value_f.scalar()));
  } else {
    tt.fail(fmt::format("unknown target type '{}' (expected Utilization, AverageValue or Value)", ttype));
  }
  return m;
}

void read_scale_target(const Field& ref, std::string& kind, std::string& name) {
  ref.require_map();
  name = ref["name"].required_str();
  kind = ref["kind"].str(kind);
}

ServingHpa read_hpa(const Field& root) {
  ServingHpa h;
  const Field meta = root["metadata"];
  h.spec.name = meta["name"].required_str();
  h.spec.namespace_name = meta["namespace"].str("default");
  h.where = pos_of(meta["name"]);
  const Field spec = root["spec"];
  spec.require_map();
  spec.only_keys({"scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior"});
  read_scale_target(spec["scaleTargetRef"], h.spec.scale_target_kind, h.spec.scale_target_name);
  if (const Field m = spec["minReplicas"]; m.present()) h.spec.min_replicas = replica_field(m, 0);
  const Field max_f = spec["maxReplicas"];
  h.spec.max_replicas = replica_field(max_f, 1);
  if (h.spec.min_replicas && *h.spec.min_replicas > h.spec.max_replicas)
    max_f.fail(fmt::format("maxReplicas {} must be >= minReplicas {}", h.spec.max_replicas, *h.spec.min_replicas));
  const Field metrics = spec["metrics"];
  for (size_t i = 0; i < metrics.size(); ++i) {
    SourcePos p;
    h.spec.metrics.push_back(metric(metrics.at(i), p));
    h.metric_positions.push_back(std::move(p));
  }
  if (spec["behavior"].present()) h.spec.behavior = behavior(spec["behavior"]);
  return h;
}

// ---------------------------------------------------------------------------------------------
// ScaledObject

as::PrometheusTrigger read_trigger(const Field& t, SourcePos& pos, std::vector<std::string>& warnings) {
  t.require_map();
  t.only_keys({"type", "name", "metadata", "metricType", "authenticationRef", "useCachedMetrics"});
  const Field type = t["type"];
  if (type.required_str() != "prometheus")
    type.fail(fmt::format("trigger type '{}' is not modelled (gpufleet reads prometheus triggers)", type.scalar()));
  as::PrometheusTrigger p;
  p.name = t["name"].str();
  if (const Field mt = t["metricType"]; mt.present()) {
    const std::string v = mt.scalar();
    if (v == "AverageValue") p.metric_type = as::KedaMetricType::kAverageValue;
    else if (v == "Value") p.metric_type = as::KedaMetricType::kValue;
    else mt.fail(fmt::format("metricType '{}' is not valid for a prometheus trigger (expected AverageValue or Value)", v));
  }
  const Field md = t["metadata"];
  md.require_map();
  p.server_address = md["serverAddress"].str();
  const Field q = md["query"];
  p.query = q.required_str();
  pos = pos_of(q);
  try {
    const PromQuery pq = parse_prometheus_query(p.query);
    p.metric = pq.metric;
    p.aggregation = pq.aggregation;
    if (pq.bare)
      warnings.push_back(fmt::format("{}:{}: query '{}' has no aggregation; KEDA needs a single-element result, read as sum({})",
                                     pos.file, pos.line, p.query, pq.metric));
  } catch (const std::invalid_argument& e) {
    q.fail(e.what());
  }
  const Field th = md["threshold"];
  if (!th.present()) th.fail("required field is missing (the prometheus scaler needs a threshold)");
  p.threshold = th.number();
  if (!(p.threshold > 0)) th.fail(fmt::format("threshold {} must be positive", th.scalar()));
  if (const Field a = md["activationThreshold"]; a.present()) p.activation_threshold = a.number();
  p.ignore_null_values = md["ignoreNullValues"].boolean(true);
  return p;
}

ServingScaledObject read_scaled_object(const Field& root, std::vector<std::string>& warnings) {
  ServingScaledObject s;
  const Field meta = root["metadata"];
  s.spec.name = meta["name"].required_str();
  s.spec.namespace_name = meta["namespace"].str("default");
  s.where = pos_of(meta["name"]);
  const Field spec = root["spec"];
  spec.require_map();
  spec.only_keys({"scaleTargetRef", "pollingInterval", "cooldownPeriod", "initialCooldownPeriod", "idleReplicaCount",
                  "minReplicaCount", "maxReplicaCount", "fallback", "advanced", "triggers"});
  read_scale_target(spec["scaleTargetRef"], s.spec.scale_target_kind, s.spec.scale_target_name);
  if (const Field f = spec["pollingInterval"]; f.present()) s.spec.polling_interval_s = int32_field(f, 1);
  if (const Field f = spec["cooldownPeriod"]; f.present()) s.spec.cooldown_period_s = int32_field(f, 0);
  if (const Field f = spec["initialCooldownPeriod"]; f.present()) s.spec.initial_cooldown_period_s = int32_field(f, 0);
  if (const Field f = spec["minReplicaCount"]; f.present()) s.spec.min_replica_count = replica_field(f, 0);
  if (const Field f = spec["maxReplicaCount"]; f.present()) s.spec.max_replica_count = replica_field(f, 0);
  if (s.spec.max_replica_count < s.spec.min_replica_count)
    spec["maxReplicaCount"].fail(fmt::format("maxReplicaCount {} must be >= minReplicaCount {}", s.spec.max_replica_count,
                                             s.spec.min_replica_count));
  if (s.spec.max_replica_count < 1) spec["maxReplicaCount"].fail("maxReplicaCount must be at least 1");
  if (const Field f = spec["idleReplicaCount"]; f.present()) {
    s.spec.idle_replica_count = replica_field(f, 0);
    if (*s.spec.idle_replica_count >= s.spec.min_replica_count)
      f.fail(fmt::format("idleReplicaCount {} must be less than minReplicaCount {}", *s.spec.idle_replica_count, s.spec.min_replica_count));
  }
  if (spec["fallback"].present())
    warnings.push_back(fmt::format("{}: ScaledObject {}: fallback is not modelled (scalers never fail in the simulator)",
                                   s.where.file, s.spec.name));
  if (const Field adv = spec["advanced"]; adv.present()) {
    adv.require_map();
    adv.only_keys({"restoreToOriginalReplicaCount", "horizontalPodAutoscalerConfig", "scalingModifiers"});
    if (adv["scalingModifiers"].present())
      adv.fail_key("scalingModifiers", "scalingModifiers (formula) is not modelled");
    adv["restoreToOriginalReplicaCount"].boolean(false);
    if (const Field h = adv["horizontalPodAutoscalerConfig"]; h.present()) {
      h.require_map();
      h.only_keys({"name", "behavior"});
      s.spec.hpa_name = h["name"].str();
      if (h["behavior"].present()) s.spec.hpa_behavior = behavior(h["behavior"]);
    }
  }
  const Field triggers = spec["triggers"];
  if (triggers.size() == 0) triggers.fail("at least one trigger is required");
  for (size_t i = 0; i < triggers.size(); ++i) {
    SourcePos p;
    s.spec.triggers.push_back(read_trigger(triggers.at(i), p, warnings));
    s.trigger_positions.push_back(std::move(p));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// vLLM Deployment

struct Token {
  std::string text;
  Field field;
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string basename_of(const std::string& s) {
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

void split_shell(const std::string& s, const Field& f, std::vector<Token>& out) {
  std::string cur;
  char quote = 0;
  bool have = false;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      if (have || !cur.empty()) out.push_back({cur, f});
      cur.clear();
      have = false;
    } else {
      cur += c;
    }
  }
  if (have || !cur.empty()) out.push_back({cur, f});
}

// command + args as one token list; a `sh -c "..."` string is split on whitespace.
std::vector<Token> command_tokens(const Field& container) {
  std::vector<Token> raw;
  for (const char* key : {"command", "args"}) {
    const Field l = container[key];
    for (size_t i = 0; i < l.size(); ++i) raw.push_back({l.at(i).scalar(), l.at(i)});
  }
  std::vector<Token> out;
  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string b = basename_of(raw[i].text);
    if ((b == "sh" || b == "bash") && i + 2 < raw.size() + 1 && i + 1 < raw.size() && raw[i + 1].text == "-c") {
      for (size_t j = i + 2; j < raw.size(); ++j) split_shell(raw[j].text, raw[j].field, out);
      return out;
    }
    out.push_back(raw[i]);
  }
  return out;
}

// Where the engine's arguments start, or nullopt when this is not a vLLM server command.
std::optional<size_t> vllm_args_start(const std::vector<Token>& t, bool vllm_image, bool has_command) {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (basename_of(t[i].text) == "vllm" && t[i + 1].text == "serve") return i + 2;
    if (t[i].text == "-m" && t[i + 1].text == "vllm.entrypoints.openai.api_server") return i + 2;
  }
  if (vllm_image && !has_command) return 0;
  return std::nullopt;
}

// vLLM's human_readable_int (vllm/utils FlexibleArgumentParser helpers): lowercase k/m/g/t decimal
// (decimals allowed, "25.6k" = 25600, truncated), uppercase K/M/G/T binary (integers only); plain integers.
std::optional<int64_t> human_readable_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  const char last = s.back();
  double mult = 1;
  bool binary = false;
  std::string num = s;
  switch (last) {
    case 'k': mult = 1e3; break;
    case 'm': mult = 1e6; break;
    case 'g': mult = 1e9; break;
    case 't': mult = 1e12; break;
    case 'K': mult = 1024; binary = true; break;
    case 'M': mult = 1024.0 * 1024; binary = true; break;
    case 'G': mult = 1024.0 * 1024 * 1024; binary = true; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; binary = true; break;
    default: mult = 0;
  }
  if (mult != 0) num = s.substr(0, s.size() - 1);
  if (num.empty()) return std::nullopt;
  if (mult == 0 || binary) {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size()) return std::nullopt;
    if (mult == 0) return v;
    const double scaled = static_cast<double>(v) * mult;
    if (!(std::abs(scaled) < 9e18)) return std::nullopt;
    return static_cast<int64_t>(scaled);
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size() || !std::isfinite(v)) return std::nullopt;
  if (!(std::abs(v * mult) < 9e18)) return std::nullopt;
  return static_cast<int64_t>(v * mult);  // int(float(number) * mult): truncated
}

const std::set<std::string, std::less<>>& known_boolean_flags() {
  // vLLM flags that take no value (store_true or BooleanOptionalAction), not modelled.
  static const std::set<std::string, std::less<>> k = {
      "enforce-eager", "trust-remote-code", "disable-log-requests", "disable-log-stats", "enable-log-requests",
      "enable-chunked-prefill", "no-enable-chunked-prefill", "enable-lora", "enable-auto-tool-choice",
      "disable-custom-all-reduce", "enable-expert-parallel", "disable-frontend-multiprocessing",
      "async-scheduling", "enable-prompt-tokens-details", "disable-fastapi-docs", "enable-sleep-mode",
      "no-enable-log-requests", "disable-uvicorn-access-log", "enable-server-load-tracking",
      "skip-tokenizer-init", "enable-reasoning", "disable-sliding-window", "no-trust-remote-code"};
  return k;
}

struct EngineParse {
  inference::EngineArgs args;
  std::string served_model_name;
  std::vector<std::string> ignored;
  std::optional<Field> tp_field;
};

EngineParse parse_engine_args(const std::vector<Token>& t, size_t start, const Field& container) {
  EngineParse out;
  std::optional<inference::Precision> act_dtype;
  bool fp8_weights = false;
  std::optional<std::string> kv_dtype;
  bool have_model = false;
  for (size_t i = start; i < t.size(); ++i) {
    const std::string& tok = t[i].text;
    if (tok == "&&" || tok == ";" || tok == "||" || tok == "|") break;
    if (!starts_with(tok, "-") || tok == "-") {
      if (!have_model) {
        out.args.model = tok;
        have_model = true;
      } else {
        out.ignored.push_back(tok);
      }
      continue;
    }
    std::string name = tok.substr(starts_with(tok, "--") ? 2 : 1);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    std::replace(name.begin(), name.end(), '_', '-');
    if (name == "tp") name = "tensor-parallel-size";
    const Field& f = t[i].field;
    auto take = [&]() -> std::string {
      if (value) return *value;
      if (i + 1 >= t.size() || (starts_with(t[i + 1].text, "-") && t[i + 1].text.size() > 1))
        f.fail(fmt::format("{} needs a value", tok));
      ++i;
      return t[i].text;
    };
    auto int_arg = [&](int64_t min, int64_t max) {
      const std::string v = take();
      int64_t n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size()) t[i].field.fail(fmt::format("--{} '{}' is not an integer", name, v));
      if (n < min || n > max) t[i].field.fail(fmt::format("--{} {} is out of range [{}, {}]", name, n, min, max));
      return static_cast<int32_t>(n);
    };
    if (name == "model") {
      out.args.model = take();
      have_model = true;
    } else if (name == "tensor-parallel-size") {
      out.tp_field = f;
      out.args.tensor_parallel_size = int_arg(1, 1024);
    } else if (name == "dtype") {
      const std::string v = take();
      if (v == "auto" || v == "bfloat16") act_dtype = inference::Precision::kBf16;
      else if (v == "half" || v == "float16") act_dtype = inference::Precision::kFp16;
      else t[i].field.fail(fmt::format("--dtype {} is not modelled (auto, bfloat16, half, float16)", v));
    } else if (name == "quantization" || name == "q") {
      const std::string v = take();
      if (v == "fp8") {
        fp8_weights = true;
      } else {
        out.ignored.push_back(value ? tok : tok + " " + v);
      }
    } else if (name == "kv-cache-dtype") {
      const std::string v = take();
      if (v != "auto" && !starts_with(v, "fp8") && v != "bfloat16" && v != "float16" && v != "half")
        t[i].field.fail(fmt::format("--kv-cache-dtype {} is not modelled (auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16)", v));
      kv_dtype = v;
    } else if (name == "gpu-memory-utilization") {
      const std::string v = take();
      double d = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ec != std::errc() || p != v.data() + v.size() || !(d > 0) || d > 1)
        t[i].field.fail(fmt::format("--gpu-memory-utilization '{}' must be a number in (0, 1]", v));
      out.args.gpu_memory_utilization = d;
    } else if (name == "max-num-seqs") {
      out.args.max_num_seqs = int_arg(1, 1'000'000);
    } else if (name == "max-num-batched-tokens") {
      out.args.max_num_batched_tokens = int_arg(1, kInt32Max);
    } else if (name == "max-model-len") {
      const std::string v = take();
      const std::optional<int64_t> n = human_readable_int(v);
      if (!n || *n < 1 || *n > kInt32Max) t[i].field.fail(fmt::format("--max-model-len '{}' is not a positive integer (e.g. 8192, 8k, 8K)", v));
      out.args.max_model_len = static_cast<int32_t>(*n);
    } else if (name == "block-size") {
      out.args.block_size = int_arg(1, 1024);
    } else if (name == "shutdown-timeout") {
      out.args.shutdown_timeout_s = int_arg(0, 86400);
    } else if (name == "enable-prefix-caching") {
      out.args.enable_prefix_caching = true;
    } else if (name == "no-enable-prefix-caching") {
      out.args.enable_prefix_caching = false;
    } else if (name == "served-model-name") {
      out.served_model_name = take();
      while (!value && i + 1 < t.size() && !starts_with(t[i + 1].text, "-")) out.ignored.push_back(t[++i].text);
    } else if (known_boolean_flags().count(name) != 0 || value) {
      out.ignored.push_back(tok);
    } else if (i + 1 < t.size() && !starts_with(t[i + 1].text, "-")) {
      out.ignored.push_back(tok + " " + t[i + 1].text);
      ++i;
    } else {
      out.ignored.push_back(tok);
    }
  }
  if (out.args.model.empty()) container.fail("the vLLM command names no model (vllm serve <model> or --model)");
  const inference::Precision act = act_dtype.value_or(inference::Precision::kBf16);
  out.args.dtype = fp8_weights ? inference::Precision::kFp8 : act;
  if (!kv_dtype || *kv_dtype == "auto") out.args.kv_cache_dtype = act;
  else if (starts_with(*kv_dtype, "fp8")) out.args.kv_cache_dtype = inference::Precision::kFp8;
  else if (*kv_dtype == "bfloat16") out.args.kv_cache_dtype = inference::Precision::kBf16;
  else out.args.kv_cache_dtype = inference::Precision::kFp16;
  return out;
}

Toleration toleration(const Field& f) {
  f.require_map();
  f.only_keys({"key", "operator", "value", "effect", "tolerationSeconds"});
  Toleration t;
  t.key = f["key"].str();
  t.operator_ = f["operator"].str("Equal");
  if (t.operator_ != "Equal" && t.operator_ != "Exists") f["operator"].fail(fmt::format("unknown operator '{}' (expected Equal or Exists)", t.operator_));
  t.value = f["value"].str();
  t.effect = f["effect"].str();
  if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute")
    f["effect"].fail(fmt::format("unknown effect '{}' (expected NoSchedule, PreferNoSchedule or NoExecute)", t.effect));
  t.toleration_seconds = f["tolerationSeconds"].opt_integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  return t;
}

void read_gpu_resources(const Field& container, VllmDeployment& d) {
  const Field res = container["resources"];
  if (!res.present()) return;
  res.require_map();
  bool from_limits = false;
  for (const char* which : {"limits", "requests"}) {
    const Field m = res[which];
    if (from_limits) break;
    bool found = false;
    m.each_entry([&](const std::string& key, const Field& v) {
      if (key == "nvidia.com/gpu") {
        const Quantity q = v.quantity();
        int64_t n = 0;
        try {
          n = q.whole();
        } catch (const std::invalid_argument&) {
          v.fail(fmt::format("{} is not a whole number of GPUs", v.scalar()));
        }
        if (n > 1'000'000) v.fail(fmt::format("{} GPUs per pod is absurd", n));
        d.gpus_per_pod = static_cast<int32_t>(n);
        found = true;
      } else if (starts_with(key, "nvidia.com/mig-")) {
        const std::string profile = key.substr(std::string_view("nvidia.com/mig-").size());
        if (!catalog_has_mig_profile(profile))
          res[which].fail_key(key, fmt::format("MIG profile '{}' is not a profile of any catalog GPU", profile));
        if (!d.mig_profile.empty() && d.mig_profile != profile)
          res[which].fail_key(key, fmt::format("a second MIG profile ('{}' and '{}')", d.mig_profile, profile));
        const Quantity q = v.quantity();
        int64_t n = 0;
        try {
          n = q.whole();
        } catch (const std::invalid_argument&) {
          v.fail(fmt::format("{} is not a whole number of MIG devices", v.scalar()));
        }
        if (n > 1'000'000) v.fail(fmt::format("{} MIG devices per pod is absurd", n));
        d.mig_profile = profile;
        d.mig_devices_per_pod = static_cast<int32_t>(n);
        found = true;
      }
    });
    if (found) from_limits = true;
  }
  if (d.gpus_per_pod > 0 && !d.mig_profile.empty())
    res.fail("a pod with both nvidia.com/gpu and nvidia.com/mig-<profile> is not modelled");
}

std::optional<VllmDeployment> read_deployment(const Field& root, std::vector<std::string>& warnings) {
  VllmDeployment d;
  const Field meta = root["metadata"];
  d.name = meta["name"].required_str();
  d.namespace_name = meta["namespace"].str("default");
  d.where = pos_of(meta["name"]);
  const Field spec = root["spec"];
  spec.require_map();
  if (const Field r = spec["replicas"]; r.present()) d.replicas = replica_field(r, 0);
  const Field pod = spec["template"]["spec"];
  pod.require_map();
  const Field containers = pod["containers"];
  std::optional<Field> vllm;
  std::vector<Token> tokens;
  size_t start = 0;
  for (size_t i = 0; i < containers.size() && !vllm; ++i) {
    const Field c = containers.at(i);
    c.require_map();
    const std::string image = c["image"].str();
    std::vector<Token> t = command_tokens(c);
    const bool vllm_image = image.find("vllm/vllm-openai") != std::string::npos;
    if (const std::optional<size_t> s = vllm_args_start(t, vllm_image, c["command"].size() > 0)) {
      vllm = c;
      tokens = std::move(t);
      start = *s;
      d.container = c["name"].str();
      d.image = image;
    }
  }
  if (!vllm) {
    warnings.push_back(fmt::format("{}:{}: Deployment {} runs no vLLM server (vllm serve, vllm.entrypoints.openai.api_server "
                                   "or the vllm/vllm-openai image): skipped",
                                   d.where.file, d.where.line, d.name));
    return std::nullopt;
  }
  EngineParse e = parse_engine_args(tokens, start, *vllm);
  d.engine = e.args;
  d.served_model_name = e.served_model_name;
  d.ignored_args = std::move(e.ignored);
  read_gpu_resources(*vllm, d);
  const int32_t devices = d.mig_profile.empty() ? d.gpus_per_pod : d.mig_devices_per_pod;
  if (devices > 0 && d.engine.tensor_parallel_size > devices) {
    const Field& where = e.tp_field ? *e.tp_field : *vllm;
    where.fail(fmt::format("--tensor-parallel-size {} needs {} GPUs; the container has {}", d.engine.tensor_parallel_size,
                           d.engine.tensor_parallel_size, devices));
  }
  if (devices == 0)
    warnings.push_back(fmt::format("{}:{}: Deployment {}: the vLLM container requests no nvidia.com/gpu or nvidia.com/mig-<profile>",
                                   d.where.file, d.where.line, d.name));
  if (!d.ignored_args.empty()) {
    std::string list;
    for (const std::string& a : d.ignored_args) list += (list.empty() ? "" : ", ") + a;
    warnings.push_back(fmt::format("{}:{}: Deployment {}: vLLM arguments not modelled (ignored): {}", d.where.file,
                                   d.where.line, d.name, list));
  }
  // Read but not modelled: said once each, at the field, with what the simulator does instead.
  const auto not_modelled = [&](const Field& f, const char* what, const char* consequence) {
    if (!f.present()) return;
    const SourcePos at = pos_of(f);
    warnings.push_back(fmt::format("{}:{}:{}: field '{}': Deployment {}: {} is not modelled: {}", at.file, at.line, at.column,
                                   at.field, d.name, what, consequence));
  };
  if (const Field st = spec["strategy"]; st.present()) d.rolling_update = read_deployment_strategy(st, sim::kMaxReplicasPerItem);
  if (const Field m = spec["minReadySeconds"]; m.present()) {
    d.min_ready_s = static_cast<double>(m.integer(0, std::numeric_limits<int32_t>::max()));
    d.has_min_ready = true;
  }
  not_modelled(pod["affinity"], "affinity", "replicas go to any node of the pools that fits them");
  not_modelled(pod["topologySpreadConstraints"], "topologySpreadConstraints", "replicas are placed without spreading");
  if (const Field sn = pod["schedulerName"]; sn.present() && sn.str() != "default-scheduler")
    not_modelled(sn, "a scheduler other than default-scheduler", "replicas are placed by the simulation's policy");
  pod["nodeSelector"].each_entry([&](const std::string& k, const Field& v) { d.node_selector[k] = v.scalar(); });
  const Field tols = pod["tolerations"];
  for (size_t i = 0; i < tols.size(); ++i) d.tolerations.push_back(toleration(tols.at(i)));
  return d;
}

// ---------------------------------------------------------------------------------------------

void parse_into(std::string_view text, const std::string& file, ServingObjects& out) {
  Source src;
  src.file = file;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  std::map<std::string, std::string> skipped;
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    if (!root.is_map()) root.fail(fmt::format("expected a Kubernetes object (a mapping), got {}", root.type()));
    const Field kind_f = root["kind"];
    const std::string kind = kind_f.required_str();
    const std::string api = root["apiVersion"].str();
    if (kind == "HorizontalPodAutoscaler") {
      if (api != "autoscaling/v2")
        root["apiVersion"].fail(fmt::format("apiVersion '{}' is not supported for HorizontalPodAutoscaler (expected autoscaling/v2)", api));
      out.hpas.push_back(read_hpa(root));
    } else if (kind == "ScaledObject") {
      if (api != "keda.sh/v1alpha1")
        root["apiVersion"].fail(fmt::format("apiVersion '{}' is not supported for ScaledObject (expected keda.sh/v1alpha1)", api));
      out.scaled_objects.push_back(read_scaled_object(root, out.warnings));
    } else if (kind == "Deployment") {
      if (api != "apps/v1") root["apiVersion"].fail(fmt::format("apiVersion '{}' is not supported for Deployment (expected apps/v1)", api));
      if (std::optional<VllmDeployment> d = read_deployment(root, out.warnings)) out.deployments.push_back(std::move(*d));
    } else {
      const auto [line, col] = kind_f.position();
      skipped.emplace(kind, fmt::format("{}:{}", file, line));
    }
  }
  for (const auto& [kind, where] : skipped)
    out.warnings.push_back(fmt::format("{}: kind {} is not a serving object: skipped", where, kind));
}

}  // namespace

PromQuery parse_prometheus_query(std::string_view q) {
  const std::string whole(q);
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument(fmt::format(
        "query '{}' is not modelled ({}): gpufleet reads sum(<metric>{{...}}) or avg(<metric>{{...}}), optionally with "
        "by/without (...)",
        whole, why));
  };
  size_t p = 0;
  auto ws = [&] {
    while (p < q.size() && (q[p] == ' ' || q[p] == '\t' || q[p] == '\n' || q[p] == '\r')) ++p;
  };
  auto ident = [&]() {
    ws();
    const size_t s = p;
    while (p < q.size() && (std::isalnum(static_cast<unsigned char>(q[p])) || q[p] == '_' || q[p] == ':')) ++p;
    return std::string(q.substr(s, p - s));
  };
  auto skip_group = [&](char open, char close) {
    ws();
    if (p >= q.size() || q[p] != open) return false;
    char quote = 0;
    for (++p; p < q.size(); ++p) {
      if (quote) {
        if (q[p] == '\\') ++p;
        else if (q[p] == quote) quote = 0;
      } else if (q[p] == '"' || q[p] == '\'' || q[p] == '`') {
        quote = q[p];
      } else if (q[p] == close) {
        ++p;
        return true;
      }
    }
    bad(fmt::format("unbalanced '{}'", open));
    return false;
  };
  auto grouping = [&] {
    const size_t save = p;
    const std::string w = ident();
    if (w == "by" || w == "without") {
      if (!skip_group('(', ')')) bad("by/without without a label list");
    } else {
      p = save;
    }
  };
  auto selector = [&](PromQuery& out) {
    out.metric = ident();
    if (out.metric.empty() || std::isdigit(static_cast<unsigned char>(out.metric[0]))) bad("no metric name");
    skip_group('{', '}');
    ws();
    if (p < q.size() && q[p] == '[') bad("a range selector needs rate() or similar, which is not modelled");
    if (p < q.size() && q[p] == '(') bad(fmt::format("function {}() is not modelled", out.metric));
  };
  PromQuery out;
  const size_t start = p;
  const std::string first = ident();
  if (first == "sum" || first == "avg") {
    out.aggregation = first == "sum" ? as::QueryAggregation::kSum : as::QueryAggregation::kAverage;
    grouping();
    ws();
    if (p >= q.size() || q[p] != '(') bad(fmt::format("{} without '('", first));
    ++p;
    selector(out);
    ws();
    if (p >= q.size() || q[p] != ')') bad("more than one metric selector inside the aggregation");
    ++p;
    grouping();
  } else {
    p = start;
    selector(out);
    out.bare = true;
  }
  ws();
  if (p != q.size()) bad(fmt::format("unexpected '{}'", std::string(q.substr(p))));
  return out;
}

ServingObjects parse_k8s_serving_text(std::string_view text, const std::string& source_name) {
  ServingObjects out;
  parse_into(text, source_name, out);
  return out;
}

sim::RollingUpdateStrategy read_deployment_strategy(const Field& st, int64_t max_count) {
  st.require_map();
  st.only_keys({"type", "rollingUpdate"});
  if (const Field t = st["type"]; t.present()) {
    const std::string type = t.scalar();
    if (type == "Recreate")
      t.fail("type Recreate is not modelled: a rollout replaces the replicas as RollingUpdate does (maxSurge, maxUnavailable)");
    if (type != "RollingUpdate" && !type.empty())
      t.fail(fmt::format("unknown strategy type '{}' (expected RollingUpdate; Recreate is not modelled)", type));
  }
  sim::RollingUpdateStrategy out;
  const Field ru = st["rollingUpdate"];
  if (!ru.present()) return out;
  ru.require_map();
  ru.only_keys({"maxSurge", "maxUnavailable"});
  if (const Field v = ru["maxSurge"]; v.present()) out.max_surge = detail::int_or_percent(v, max_count);
  if (const Field v = ru["maxUnavailable"]; v.present()) out.max_unavailable = detail::int_or_percent(v, max_count);
  if (out.max_surge.value == 0 && out.max_unavailable.value == 0)
    ru["maxUnavailable"].fail("may not be 0 when maxSurge is 0 (a rollout could replace no replica)");
  return out;
}

ServingObjects read_k8s_serving(const std::vector<std::string>& paths) {
  ServingObjects out;
  for (const std::string& file : k8s_input_files(paths)) parse_into(read_yaml_file(file), file, out);
  return out;
}

}  // namespace gpufleet::io
