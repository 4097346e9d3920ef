#include "readers/serving/endpoint_picker_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::Source;
namespace inf = gpufleet::inference;

constexpr const char* kConfigApi = "inference.networking.x-k8s.io/v1alpha1";
constexpr const char* kPoolApi = "inference.networking.k8s.io/v1";
constexpr const char* kObjectiveApi = "inference.networking.x-k8s.io/v1alpha2";
/// Bounds (docs/input-limits.md): plugins and profile entries per config, prefix blocks matched.
constexpr size_t kMaxPlugins = 64;
constexpr int64_t kMaxPrefixBlocks = 1 << 16;
constexpr int64_t kMaxTokens = 1 << 24;

double number_in(const Field& f, double lo, double hi, bool lo_open, const char* what) {
  const double v = f.number();
  if ((lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi)) f.fail(fmt::format("{} {} must be in {}{:g}, {:g}]", what, f.scalar(), lo_open ? "(" : "[", lo, hi));
  return v;
}

/// A Go time.Duration string ("200ms", "1.5s", "1m30s"), seconds; > 0.
double go_duration_s(const Field& f) {
  const std::string& s = f.scalar();
  size_t p = 0;
  double total = 0;
  if (s.empty()) f.fail("empty duration");
  while (p < s.size()) {
    const size_t start = p;
    while (p < s.size() && (std::isdigit(static_cast<unsigned char>(s[p])) || s[p] == '.')) ++p;
    if (p == start) f.fail(fmt::format("'{}' is not a duration (e.g. 200ms, 1s)", s));
    double v = 0;
    try {
      v = std::stod(s.substr(start, p - start));
    } catch (const std::exception&) {
      f.fail(fmt::format("'{}' is not a duration (e.g. 200ms, 1s)", s));
    }
    const size_t u = p;
    while (p < s.size() && std::isalpha(static_cast<unsigned char>(s[p]))) ++p;
    const std::string unit = s.substr(u, p - u);
    double scale = 0;
    if (unit == "ns") scale = 1e-9;
    else if (unit == "us" || unit == "µs") scale = 1e-6;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "s") scale = 1;
    else if (unit == "m") scale = 60;
    else if (unit == "h") scale = 3600;
    else f.fail(fmt::format("'{}' is not a duration: unit '{}' (ns, us, ms, s, m, h)", s, unit));
    total += v * scale;
  }
  if (!(total > 0) || !std::isfinite(total) || total > detail::kMaxSeconds) f.fail(fmt::format("duration '{}' must be positive", s));
  return total;
}

void read_parameters(const Field& params, inf::EppPlugin& p) {
  if (!params.present()) return;
  params.require_map();
  if (p.type == "prefix-cache-scorer") {
    params.only_keys({"autoTune", "blockSizeTokens", "blockSize", "maxPrefixBlocksToMatch", "maxPrefixTokensToMatch",
                      "lruCapacityPerServer"});
    inf::PrefixCacheParams& c = p.prefix;
    if (const Field f = params["autoTune"]; f.present()) c.auto_tune = f.boolean(true);
    if (const Field f = params["blockSizeTokens"]; f.present()) c.block_size_tokens = static_cast<int32_t>(f.integer(-kMaxTokens, kMaxTokens));
    int64_t legacy = 0;
    if (const Field f = params["blockSize"]; f.present()) legacy = f.integer(-kMaxTokens, kMaxTokens);
    if (const Field f = params["maxPrefixBlocksToMatch"]; f.present())
      c.max_prefix_blocks_to_match = static_cast<int32_t>(f.integer(0, kMaxPrefixBlocks));
    if (const Field f = params["maxPrefixTokensToMatch"]; f.present()) {
      c.max_prefix_tokens_to_match = static_cast<int32_t>(f.integer(-kMaxTokens, kMaxTokens));
      if (c.max_prefix_tokens_to_match < 0) f.fail("maxPrefixTokensToMatch must be >= 0");
    }
    if (const Field f = params["lruCapacityPerServer"]; f.present()) c.lru_capacity_per_server = static_cast<int32_t>(f.integer(0, 1 << 26));
    // approximateprefix/plugin.go newPrepareData's checks.
    if (legacy > 0 && c.block_size_tokens <= 0)
      params["blockSize"].fail("blockSize is deprecated; use blockSizeTokens (the cache block size in tokens)");
    if (!c.auto_tune && c.block_size_tokens <= 0) params["blockSizeTokens"].fail("blockSizeTokens must be > 0 when autoTune is false");
    if (c.max_prefix_tokens_to_match > 0 && c.block_size_tokens > 0 &&
        c.max_prefix_tokens_to_match / c.block_size_tokens > kMaxPrefixBlocks)
      params["maxPrefixTokensToMatch"].fail(fmt::format("more than {} blocks to match", kMaxPrefixBlocks));
  } else if (p.type == "utilization-detector") {
    params.only_keys({"queueDepthThreshold", "kvCacheUtilThreshold", "metricsStalenessThreshold", "headroom"});
    inf::UtilizationDetectorParams& c = p.utilization;
    if (const Field f = params["queueDepthThreshold"]; f.present()) {
      c.queue_depth_threshold = static_cast<int32_t>(f.integer(-(1 << 30), 1 << 30));
      if (c.queue_depth_threshold <= 0) f.fail("queueDepthThreshold must be strictly positive");
    }
    if (const Field f = params["kvCacheUtilThreshold"]; f.present()) c.kv_cache_util_threshold = number_in(f, 0, 1, true, "kvCacheUtilThreshold");
    if (const Field f = params["metricsStalenessThreshold"]; f.present()) c.metrics_staleness_threshold_s = go_duration_s(f);
    if (const Field f = params["headroom"]; f.present()) c.headroom = number_in(f, 0, 1e6, false, "headroom");
  } else if (p.type == "prefix-cache-affinity-filter") {
    params.only_keys({"affinityThreshold", "explorationProbability", "maxTTFTPenaltyMs"});
    inf::PrefixCacheAffinityParams& c = p.affinity;
    if (const Field f = params["affinityThreshold"]; f.present()) c.affinity_threshold = number_in(f, -1e6, 1, false, "affinityThreshold");
    if (const Field f = params["explorationProbability"]; f.present())
      c.exploration_probability = number_in(f, 0, 1, false, "explorationProbability");
    if (const Field f = params["maxTTFTPenaltyMs"]; f.present()) c.max_ttft_penalty_ms = number_in(f, 0, 1e12, false, "maxTTFTPenaltyMs");
  } else if (p.type == "max-score-picker" || p.type == "random-picker") {
    params.only_keys({"maxNumOfEndpoints"});
    if (const Field f = params["maxNumOfEndpoints"]; f.present()) {
      p.max_num_of_endpoints = static_cast<int32_t>(f.integer(-(1 << 30), 1 << 30));
      if (p.max_num_of_endpoints <= 0) p.max_num_of_endpoints = 1;  // picker: invalid -> default
    }
  } else {
    params.each_entry([&](const std::string& k, const Field&) {
      params.fail_key(k, fmt::format("unknown key '{}': plugin type '{}' takes no parameters", k, p.type));
    });
  }
}

/// The field at a dotted path with [i] indices below `root` ("schedulingProfiles[0].plugins[1].pluginRef").
Field field_at(const Field& root, const std::string& path) {
  Field f = root;
  size_t p = 0;
  while (p < path.size()) {
    if (path[p] == '.') ++p;
    if (p < path.size() && path[p] == '[') {
      const size_t e = path.find(']', p);
      if (e == std::string::npos) return f;
      const size_t i = static_cast<size_t>(std::stoul(path.substr(p + 1, e - p - 1)));
      // A list the file does not have (the default profile the loader made up): the nearest node.
      if (!f.is_seq() || i >= f.size()) return f;
      f = f.at(i);
      p = e + 1;
      continue;
    }
    size_t e = p;
    while (e < path.size() && path[e] != '.' && path[e] != '[') ++e;
    f = f[path.substr(p, e - p)];
    p = e;
  }
  return f;
}

inf::EndpointPickerConfig read_config(const Field& root, std::vector<std::string>& warnings) {
  root.only_keys({"apiVersion", "kind", "featureGates", "plugins", "schedulingProfiles", "saturationDetector", "dataLayer",
                  "flowControl", "parser"});
  inf::EndpointPickerConfig c;
  const Field gates = root["featureGates"];
  for (size_t i = 0; i < gates.size(); ++i) {
    const Field g = gates.at(i);
    const std::string v = g.required_str();
    if (v == "flowControl") g.fail("the flowControl feature gate (the EPP's flow-control queues) is not modelled");
    warnings.push_back(fmt::format("{}:{}: EndpointPickerConfig: feature gate '{}' has no effect here", root.source().file,
                                   g.position().first, v));
  }
  if (const Field fc = root["flowControl"]; fc.present())
    fc.fail("flow control (queues, priority bands) is not modelled; shedding of sheddable requests is (saturationDetector)");
  for (const char* k : {"dataLayer", "parser"}) {
    if (const Field f = root[k]; f.present())
      warnings.push_back(fmt::format("{}:{}: EndpointPickerConfig: {} is ignored (the picker reads the replicas' gauges)",
                                     root.source().file, f.position().first, k));
  }
  const Field plugins = root["plugins"];
  if (plugins.size() > kMaxPlugins) plugins.fail(fmt::format("{} plugins; at most {}", plugins.size(), kMaxPlugins));
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Field pf = plugins.at(i);
    pf.require_map();
    pf.only_keys({"name", "type", "parameters"});
    inf::EppPlugin p;
    p.type = pf["type"].required_str();
    p.name = pf["name"].str();
    const Field type_f = pf["type"];
    if (std::find_if(std::begin(inf::kEppPluginTypes), std::end(inf::kEppPluginTypes), [&](const char* t) { return p.type == t; }) ==
        std::end(inf::kEppPluginTypes))
      type_f.fail(fmt::format("plugin type '{}' is not modelled (modelled: {})", p.type,
                              fmt::join(std::begin(inf::kEppPluginTypes), std::end(inf::kEppPluginTypes), ", ")));
    read_parameters(pf["parameters"], p);
    c.plugins.push_back(std::move(p));
  }
  const Field profiles = root["schedulingProfiles"];
  if (profiles.size() > kMaxPlugins) profiles.fail(fmt::format("{} profiles; at most {}", profiles.size(), kMaxPlugins));
  for (size_t i = 0; i < profiles.size(); ++i) {
    const Field pf = profiles.at(i);
    pf.require_map();
    pf.only_keys({"name", "plugins"});
    inf::EppSchedulingProfile prof;
    prof.name = pf["name"].required_str();
    const Field refs = pf["plugins"];
    if (refs.size() > kMaxPlugins) refs.fail(fmt::format("{} plugins; at most {}", refs.size(), kMaxPlugins));
    for (size_t j = 0; j < refs.size(); ++j) {
      const Field rf = refs.at(j);
      rf.require_map();
      rf.only_keys({"pluginRef", "weight"});
      inf::EppProfilePlugin r;
      r.plugin_ref = rf["pluginRef"].required_str();
      if (const Field w = rf["weight"]; w.present()) r.weight = number_in(w, 0, 1e6, false, "weight");
      prof.plugins.push_back(std::move(r));
    }
    c.scheduling_profiles.push_back(std::move(prof));
  }
  if (const Field sd = root["saturationDetector"]; sd.present()) {
    sd.require_map();
    sd.only_keys({"pluginRef"});
    c.saturation_detector_ref = sd["pluginRef"].str();
  }
  return c;
}

void read_meta(const Field& root, std::string& name, std::string& ns) {
  const Field meta = root["metadata"];
  meta.require_map();
  name = meta["name"].required_str();
  ns = meta["namespace"].str("default");
}

inf::InferencePool read_pool(const Field& root) {
  root.only_keys({"apiVersion", "kind", "metadata", "spec", "status"});
  inf::InferencePool p;
  read_meta(root, p.name, p.namespace_name);
  const Field spec = root["spec"];
  spec.require_map();
  spec.only_keys({"selector", "targetPorts", "appProtocol", "endpointPickerRef"});
  const Field sel = spec["selector"];
  sel.require_map();
  sel.only_keys({"matchLabels"});
  const Field ml = sel["matchLabels"];
  ml.require_map();
  ml.each_entry([&](const std::string& k, const Field& v) { p.selector[k] = v.required_str(); });
  if (p.selector.empty()) ml.fail("matchLabels needs at least one label");
  const Field ports = spec["targetPorts"];
  if (ports.size() < 1 || ports.size() > 8) ports.fail(fmt::format("{} target ports; 1 to 8 are allowed", ports.size()));
  for (size_t i = 0; i < ports.size(); ++i) {
    const Field pf = ports.at(i);
    pf.require_map();
    pf.only_keys({"number"});
    const auto n = static_cast<int32_t>(pf["number"].integer(1, 65535));
    if (std::find(p.target_ports.begin(), p.target_ports.end(), n) != p.target_ports.end()) pf["number"].fail("port number must be unique");
    p.target_ports.push_back(n);
  }
  if (const Field ap = spec["appProtocol"]; ap.present()) {
    p.app_protocol = ap.scalar();
    if (p.app_protocol != "http" && p.app_protocol != "kubernetes.io/h2c")
      ap.fail(fmt::format("appProtocol '{}' (expected http, kubernetes.io/h2c)", p.app_protocol));
  }
  const Field ref = spec["endpointPickerRef"];
  ref.require_map();
  ref.only_keys({"group", "kind", "name", "port", "failureMode"});
  p.endpoint_picker_name = ref["name"].required_str();
  p.endpoint_picker_kind = ref["kind"].str("Service");
  if (const Field port = ref["port"]; port.present()) {
    port.require_map();
    port.only_keys({"number"});
    p.endpoint_picker_port = static_cast<int32_t>(port["number"].integer(1, 65535));
  } else if (p.endpoint_picker_kind == "Service") {
    ref["port"].fail("port is required when kind is 'Service' or unspecified (defaults to 'Service')");
  }
  if (const Field fm = ref["failureMode"]; fm.present()) {
    p.failure_mode = fm.scalar();
    if (p.failure_mode != "FailOpen" && p.failure_mode != "FailClose")
      fm.fail(fmt::format("failureMode '{}' (expected FailOpen, FailClose)", p.failure_mode));
  }
  return p;
}

inf::InferenceObjective read_objective(const Field& root) {
  root.only_keys({"apiVersion", "kind", "metadata", "spec", "status"});
  inf::InferenceObjective o;
  read_meta(root, o.name, o.namespace_name);
  const Field spec = root["spec"];
  spec.require_map();
  spec.only_keys({"priority", "poolRef"});
  if (const Field pr = spec["priority"]; pr.present()) o.priority = static_cast<int32_t>(pr.integer(-(int64_t{1} << 31), (int64_t{1} << 31) - 1));
  const Field ref = spec["poolRef"];
  ref.require_map();
  ref.only_keys({"group", "kind", "name"});
  o.pool_ref = ref["name"].required_str();
  if (const Field k = ref["kind"]; k.present() && k.scalar() != "InferencePool") k.fail(fmt::format("kind '{}' (expected InferencePool)", k.scalar()));
  return o;
}

}  // namespace

EndpointPickerObjects parse_endpoint_picker_text(std::string_view text, const std::string& source_name) {
  EndpointPickerObjects out;
  Source src;
  src.file = source_name;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  std::map<std::string, std::string> skipped;
  std::optional<Field> config_root;
  std::vector<Field> objective_refs, objective_names;
  std::vector<Field> pool_names;
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    if (!root.is_map()) root.fail(fmt::format("expected a Kubernetes object (a mapping), got {}", root.type()));
    const Field kind_f = root["kind"];
    const std::string kind = kind_f.required_str();
    const Field api_f = root["apiVersion"];
    const std::string api = api_f.str();
    auto want = [&](const char* expected) {
      if (api != expected) api_f.fail(fmt::format("apiVersion '{}' is not supported for {} (expected {})", api, kind, expected));
    };
    if (kind == "EndpointPickerConfig") {
      want(kConfigApi);
      if (out.config) kind_f.fail("a second EndpointPickerConfig (one per input)");
      out.config = read_config(root, out.warnings);
      config_root = root;
    } else if (kind == "InferencePool") {
      want(kPoolApi);
      out.pools.push_back(read_pool(root));
      pool_names.push_back(root["metadata"]["name"]);
    } else if (kind == "InferenceObjective") {
      want(kObjectiveApi);
      out.objectives.push_back(read_objective(root));
      objective_refs.push_back(root["spec"]["poolRef"]["name"]);
      objective_names.push_back(root["metadata"]["name"]);
    } else {
      skipped.emplace(kind, fmt::format("{}:{}", source_name, kind_f.position().first));
    }
  }
  for (const auto& [kind, where] : skipped)
    out.warnings.push_back(fmt::format("{}: kind {} is not an inference routing object: skipped", where, kind));
  for (size_t i = 0; i < out.pools.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out.pools[i].name == out.pools[j].name && out.pools[i].namespace_name == out.pools[j].namespace_name)
        pool_names[i].fail(fmt::format("InferencePool '{}' is defined twice", out.pools[i].name));
  for (size_t i = 0; i < out.objectives.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out.objectives[i].name == out.objectives[j].name && out.objectives[i].namespace_name == out.objectives[j].namespace_name)
        objective_names[i].fail(fmt::format("InferenceObjective '{}' is defined twice", out.objectives[i].name));
  for (size_t i = 0; i < out.objectives.size(); ++i) {
    const inf::InferenceObjective& o = out.objectives[i];
    const bool found = std::any_of(out.pools.begin(), out.pools.end(), [&](const inf::InferencePool& p) {
      return p.name == o.pool_ref && p.namespace_name == o.namespace_name;
    });
    if (!found) objective_refs[i].fail(fmt::format("no InferencePool '{}' in namespace '{}' in this input", o.pool_ref, o.namespace_name));
  }
  try {
    out.resolved = std::make_shared<const inf::ResolvedEndpointPicker>(
        inf::resolve_endpoint_picker(out.config ? *out.config : inf::default_endpoint_picker_config()));
  } catch (const std::invalid_argument& e) {
    // The message starts with the field path ("schedulingProfiles[0].plugins[1].pluginRef: ...").
    const std::string m = e.what();
    const size_t colon = m.find(": ");
    if (!config_root) throw;
    if (colon == std::string::npos) config_root->fail(m);
    field_at(*config_root, m.substr(0, colon)).fail(m.substr(colon + 2));
  }
  return out;
}

EndpointPickerObjects read_endpoint_picker_file(const std::string& path) { return parse_endpoint_picker_text(read_yaml_file(path), path); }

const inference::InferenceObjective* select_objective(const EndpointPickerObjects& objects, const std::string& name,
                                                      const std::string& file) {
  if (name.empty()) {
    if (objects.objectives.size() <= 1) return objects.objectives.empty() ? nullptr : &objects.objectives.front();
    std::string names;
    for (const inference::InferenceObjective& x : objects.objectives) names += (names.empty() ? "" : ", ") + x.name;
    throw std::invalid_argument(
        fmt::format("{} has {} InferenceObjectives ({}): name one", file, objects.objectives.size(), names));
  }
  for (const inference::InferenceObjective& x : objects.objectives)
    if (x.name == name) return &x;
  throw std::invalid_argument(fmt::format("no InferenceObjective '{}' in {}", name, file));
}

}  // namespace gpufleet::io
