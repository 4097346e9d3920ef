#include "readers/k8s/k8s_yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "admit/resource_quota.h"
#include "model/extended_resource_toleration.h"
#include "readers/formats/input_limits.h"
#include "util/edit_distance.h"
#include "readers/k8s/k8s_fields.h"
#include "readers/k8s/kueue_yaml.h"
#include "readers/k8s/compute_domain_yaml.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/k8s/node_resource_topology.h"
#include "readers/formats/text_file.h"
#include "readers/k8s/k8s_preloaded.h"
#include "readers/formats/yaml_field.h"
#include "model/daemon_set.h"
#include "model/device_annotations.h"
#include "model/gpu_catalog.h"
#include "model/leader_worker_set.h"
#include "model/mig.h"
#include "model/node_pool.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "util/input_error.h"
#include "util/sha1.h"

namespace gpufleet::io {
namespace {

constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;   // absurdity guards, as in the openb reader
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 60;  // 1 EiB
constexpr int64_t kMaxDeviceCount = int64_t{1} << 40;
constexpr int64_t kMaxReplicas = 1'000'000;          // pods generated from one controller
constexpr int64_t kMaxSharedReplicas = 1'000'000;    // nvidia.com/gpu and nvidia.com/gpu.shared per pod
constexpr const char* kGpu = "nvidia.com/gpu";
// Memory-based GPU sharing (model/gpu_memory_share.h): HAMi's resources and node annotation
// (pkg/device/nvidia/device.go), KAI-Scheduler's pod annotations (pkg/common/constants).
constexpr const char* kHamiRegisterAnnotation = "hami.io/node-nvidia-register";
constexpr const char* kHamiGpuMem = "nvidia.com/gpumem";
constexpr const char* kHamiGpuMemPercentage = "nvidia.com/gpumem-percentage";
constexpr const char* kHamiGpuCores = "nvidia.com/gpucores";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

using detail::Source;
using detail::type_name;
using Val = detail::Field;  // a YAML node with its field path and source (readers/formats/yaml_field.h)

// ---------------------------------------------------------------------------------------------
// Quantities and resource lists

enum class ResKind { kCpu, kMemory, kDevice, kOther };

ResKind resource_kind(std::string_view name) {
  if (name == "cpu") return ResKind::kCpu;
  if (name == "memory") return ResKind::kMemory;
  if (starts_with(name, "nvidia.com/")) return ResKind::kDevice;  // nvidia.com/gpu, gpu.shared, mig-*
  return ResKind::kOther;  // ephemeral-storage, hugepages-*, other vendors: validated, not kept
}

// The amount in gpufleet's unit for the resource: cpu milli-cores, memory MiB, anything else a
// whole count.
int64_t resource_amount(const Val& v, ResKind kind) {
  const Quantity q = v.quantity();
  int64_t amount = 0;
  int64_t max = kMaxDeviceCount;
  try {
    switch (kind) {
      case ResKind::kCpu: amount = q.milli(); max = kMaxCpuMilli; break;
      case ResKind::kMemory: amount = q.value(); max = kMaxMemoryBytes; break;
      default: amount = q.whole(); break;
    }
  } catch (const std::exception& e) {
    if (kind == ResKind::kCpu || kind == ResKind::kMemory) v.fail(e.what());
    v.fail(fmt::format("'{}' is not a whole number of devices", v.scalar()));
  }
  if (amount > max) v.fail(fmt::format("'{}' is absurdly large", v.scalar()));
  return amount;
}

using Amounts = std::map<std::string, int64_t>;

// A ResourceList (requests, limits, overhead, allocatable): the amounts of the resources gpufleet
// keeps (cpu, memory, nvidia.com/*); every value is validated. The others with a positive amount go
// to `ignored` when given.
Amounts resource_list(const Val& list, std::set<std::string>* ignored = nullptr) {
  Amounts out;
  list.each_entry([&](const std::string& name, const Val& v) {
    const ResKind kind = resource_kind(name);
    if (name == kHamiGpuMem || name == kHamiGpuMemPercentage || name == kHamiGpuCores) {
      // HAMi reads them with Quantity.AsInt64 and refuses what is not a whole number within int32
      // (pkg/device/nvidia/device.go GenerateResourceRequests).
      const char* unit = name == kHamiGpuMem ? "MiB" : "percent";
      int64_t amount = 0;
      try {
        amount = v.quantity().whole();
      } catch (const std::exception&) {
        v.fail(fmt::format("{} '{}' is not a whole number of {} (HAMi refuses the request)", name, v.scalar(), unit));
      }
      if (amount < 0 || amount > INT32_MAX)
        v.fail(fmt::format("{} '{}' is outside 0..{} (HAMi refuses the request)", name, v.scalar(), INT32_MAX));
      out[name] = amount;
      return;
    }
    const int64_t amount = resource_amount(v, kind);
    if (kind != ResKind::kOther) out[name] = amount;
    else if (ignored != nullptr && amount > 0) ignored->insert(name);
  });
  return out;
}

void add_into(Amounts& a, const Amounts& b) {
  for (const auto& [k, v] : b) a[k] += v;
}
void max_into(Amounts& a, const Amounts& b) {
  for (const auto& [k, v] : b) a[k] = std::max(a[k], v);
}
int64_t amount_of(const Amounts& a, const std::string& k) {
  const auto it = a.find(k);
  return it == a.end() ? 0 : it->second;
}

// The profile of a MIG resource name nvidia.com/mig-<profile>, unless it is a renamed time-sliced
// one (<profile>.shared).
std::optional<std::string> mig_profile_of(std::string_view name) {
  if (!starts_with(name, kMigResourcePrefix)) return std::nullopt;
  const std::string_view profile = name.substr(kMigResourcePrefix.size());
  if (profile.size() >= 7 && profile.substr(profile.size() - 7) == ".shared") return std::nullopt;
  return std::string(profile);
}

// A pod's nvidia.com/* resources (requests, limits, overhead) must be ones the engine models:
// nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-<profile> with a profile of a catalog model.
// Any other (a typo such as nvidia.com/gpus, a renamed time-sliced MIG device such as
// nvidia.com/mig-1g.10gb.shared) is an error at its value: the pod would be placed without it.
void check_pod_device_names(const Val& list) {
  list.each_entry([&](const std::string& name, const Val& v) {
    if (resource_kind(name) != ResKind::kDevice || name == kGpuResource || name == kGpuSharedResource) return;
    if (name == kHamiGpuMem || name == kHamiGpuMemPercentage || name == kHamiGpuCores) return;  // memory_share()
    if (const auto profile = mig_profile_of(name)) {
      if (!catalog_has_mig_profile(*profile))
        v.fail(fmt::format("unknown MIG profile '{}': no GPU model in the catalog has it", *profile));
      return;
    }
    v.fail(fmt::format("unknown resource '{}': gpufleet models {}, {} and {}<profile> (a MIG device of the catalog, "
                       "migStrategy mixed)",
                       name, kGpuResource, kGpuSharedResource, kMigResourcePrefix));
  });
}

struct ContainerRequests {
  Amounts effective;          // requests, defaulted from limits
  bool has_cpu_or_memory = false;
  bool guaranteed = true;     // cpu and memory limits set and equal to the (defaulted) requests
  Amounts nonzero;            // cpu and memory as kube-scheduler scores them (Pod::scoring_cpu_milli)
};

// `ignored`: the resources requested that gpufleet does not model (ephemeral-storage, hugepages-*,
// other vendors' extended resources), for a warning.
// Container keys are not validated (only what gpufleet reads is), except `resources`: a misspelt
// key there, or the key itself misspelt (resource, resouces, Resources: within 2 edits, no other
// container field is), would silently drop the requests. kubectl's strict field validation rejects
// both.
ContainerRequests container_requests(const Val& c, std::set<std::string>& ignored, bool& claims) {
  if (c.is_map())
    c.each_entry([&](const std::string& key, const Val&) {
      if (key != "resources" && edit_distance(key, "resources") <= 2)
        c.fail_key(key, fmt::format("unknown key '{}': did you mean 'resources'?", key));
    });
  const Val res = c["resources"];
  res.only_keys({"requests", "limits", "claims"});
  claims |= res["claims"].present();
  const Val req_v = res["requests"];
  const Val lim_v = res["limits"];
  Amounts req = resource_list(req_v, &ignored);
  const Amounts lim = resource_list(lim_v, &ignored);
  check_pod_device_names(req_v);
  check_pod_device_names(lim_v);
  // The API server's checks of requests against limits (kubernetes pkg/apis/core/validation/
  // validation.go, ValidateResourceRequirements), in its words: a request above its limit; for an
  // extended resource (not overcommitable), a request that differs from its limit or has none.
  for (const auto& [name, amount] : req) {
    const auto it = lim.find(name);
    const std::string request_text = req_v[name].str(), limit_text = it != lim.end() ? lim_v[name].str() : std::string();
    if (resource_kind(name) == ResKind::kDevice) {
      if (it == lim.end())
        req_v[name].fail(fmt::format("resources.limits: Required value: Limit must be set for non overcommitable resources ({} "
                                     "has no limit; the API server refuses the pod)",
                                     name));
      if (it->second != amount)
        req_v[name].fail(fmt::format("Invalid value: \"{}\": must be equal to {} limit of {} (the API server refuses the pod)",
                                     request_text, name, limit_text));
    } else if (it != lim.end() && amount > it->second) {
      req_v[name].fail(fmt::format("Invalid value: \"{}\": must be less than or equal to {} limit of {} (the API server refuses the pod)",
                                   request_text, name, limit_text));
    }
  }
  ContainerRequests out;
  for (const auto& [name, amount] : lim) req.emplace(name, amount);  // kube: a missing request = the limit
  for (const char* r : {"cpu", "memory"}) {
    if (req.count(r)) out.has_cpu_or_memory = true;
    const auto l = lim.find(r);
    if (l == lim.end() || req.at(r) != l->second) out.guaranteed = false;
  }
  // schedutil.GetNonzeroRequests: a request not named counts the default, an explicit 0 stays 0.
  out.nonzero["cpu"] = req.count("cpu") ? req.at("cpu") : kDefaultNonZeroCpuMilli;
  out.nonzero["memory"] = req.count("memory") ? req.at("memory") : kDefaultNonZeroMemoryBytes;
  out.effective = std::move(req);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Labels, selectors, taints, tolerations

Labels string_map(const Val& v) {
  Labels out;
  v.each_entry([&](const std::string& k, const Val& val) { out.emplace_back(k, val.str()); });
  return out;
}

std::vector<std::string> string_list(const Val& v) {
  std::vector<std::string> out;
  for (size_t i = 0, n = v.size(); i < n; ++i) out.push_back(v.at(i).scalar());
  return out;
}

bool one_of(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (s == o) return true;
  return false;
}

// Labels as the API server validates them (ValidateLabels): every key and value valid.
Labels valid_labels(const Val& v) {
  Labels out;
  v.each_entry([&](const std::string& k, const Val& val) {
    if (const auto e = label_key_error(k)) v.fail_key(k, *e);
    const std::string value = val.str();
    if (const auto e = label_value_error(value)) val.fail(*e);
    out.emplace_back(k, value);
  });
  return out;
}

// A NodeSelectorRequirement (node_selector: Gt/Lt allowed) or a LabelSelectorRequirement, checked as
// the API server checks them (ValidateNodeSelectorRequirement / ValidateLabelSelectorRequirement:
// operator, number of values, label key; for a label selector also every value). A node selector
// value that kube-scheduler's parser refuses (not a label value, or a Gt/Lt value that is no integer)
// passes the API server; the term then matches no node (node_selector_requirement_error): one
// warning in `warnings`, naming the field.
SelectorRequirement requirement(const Val& v, bool node_selector, std::vector<std::string>* warnings,
                                const char* key_field = "key", std::string_view consequence = "its term matches no node") {
  SelectorRequirement r;
  const bool labels = std::string_view(key_field) == "key";  // not a quota's scopeSelector (scopeName)
  const Val key = v[key_field];
  r.key = key.required_str();
  if (const auto e = label_key_error(r.key); e && labels) key.fail(*e);
  const Val op = v["operator"];
  r.operator_ = op.required_str();
  r.values = string_list(v["values"]);
  if (node_selector ? !one_of(r.operator_, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
                    : !one_of(r.operator_, {"In", "NotIn", "Exists", "DoesNotExist"}))
    op.fail(fmt::format("unknown operator '{}' (expected In, NotIn, Exists, DoesNotExist{})", r.operator_,
                        node_selector ? ", Gt, Lt" : ""));
  if ((r.operator_ == "In" || r.operator_ == "NotIn") && r.values.empty())
    v["values"].fail(fmt::format("operator {} needs at least one value", r.operator_));
  if ((r.operator_ == "Exists" || r.operator_ == "DoesNotExist") && !r.values.empty())
    v["values"].fail(fmt::format("operator {} takes no values", r.operator_));
  if ((r.operator_ == "Gt" || r.operator_ == "Lt") && r.values.size() != 1)
    v["values"].fail(fmt::format("operator {} needs exactly one value", r.operator_));
  if (!node_selector && labels) {
    for (size_t i = 0; i < r.values.size(); ++i)
      if (const auto e = label_value_error(r.values[i])) v["values"].at(i).fail(*e);
  } else if (warnings != nullptr) {
    if (const auto e = node_selector_requirement_error(r)) {
      const auto [line, column] = v.position();
      warnings->push_back(fmt::format("{}:{}:{}: field '{}': {}; kube-scheduler cannot parse this requirement, so {}",
                                      v.source().file, line, column, v.path(), *e, consequence));
    }
  }
  return r;
}

std::vector<SelectorRequirement> requirements(const Val& list, bool node_selector, std::vector<std::string>* warnings,
                                              std::string_view consequence = "its term matches no node") {
  std::vector<SelectorRequirement> out;
  for (size_t i = 0, n = list.size(); i < n; ++i) out.push_back(requirement(list.at(i), node_selector, warnings, "key", consequence));
  return out;
}

// The JSON fields of core/v1 PodSpec (kubernetes/api core/v1/types.go, Kubernetes 1.35: workloadRef
// is the Workload API's alpha field).
const std::initializer_list<std::string_view> kPodSpecFields = {
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy", "terminationGracePeriodSeconds",
    "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName", "serviceAccount",
    "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
    "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates", "runtimeClassName",
    "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os",
    "hostUsers", "schedulingGates", "resourceClaims", "resources", "hostnameOverride", "workloadRef"};

// The JSON fields of core/v1 PodAffinityTerm (kubernetes/api core/v1/types.go).
const std::initializer_list<std::string_view> kPodAffinityTermFields = {
    "labelSelector", "namespaces", "topologyKey", "namespaceSelector", "matchLabelKeys", "mismatchLabelKeys"};

// A required term (consequence: it matches no node) or a preferred one (kube's scoring fails).
NodeSelectorTerm node_selector_term(const Val& v, std::vector<std::string>* warnings, bool preferred = false) {
  NodeSelectorTerm t;
  t.match_expressions = requirements(v["matchExpressions"], true, warnings,
                                     preferred ? "the pod's scheduling fails whenever two or more nodes fit it (PreScore error)"
                                               : "its term matches no node");
  const Val fields = v["matchFields"];
  for (size_t i = 0, n = fields.size(); i < n; ++i) {
    SelectorRequirement r = requirement(fields.at(i), true, nullptr, "key");
    if (r.key != "metadata.name") fields.at(i)["key"].fail(fmt::format("matchFields supports only metadata.name, not '{}'", r.key));
    t.match_fields.push_back(std::move(r));
  }
  return t;
}

LabelSelector label_selector(const Val& v) {
  LabelSelector s;
  s.match_labels = valid_labels(v["matchLabels"]);
  s.match_expressions = requirements(v["matchExpressions"], false, nullptr);
  return s;
}

int32_t weight(const Val& v) { return static_cast<int32_t>(v.integer(1, 100)); }

const std::initializer_list<const char*> kTaintEffects = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

// DRA device taints (resource/v1 DeviceTaintEffect): None, NoSchedule, NoExecute; PreferNoSchedule "as
// used for nodes is not valid here" (kubernetes pkg/apis/resource/validation/validation.go).
const std::initializer_list<const char*> kDeviceTaintEffects = {"None", "NoSchedule", "NoExecute"};

std::string effects_text(std::initializer_list<const char*> effects) {
  std::string out;
  for (const char* e : effects) out += (out.empty() ? "" : e == *(effects.end() - 1) ? " or " : ", ") + std::string(e);
  return out;
}

Taint taint(const Val& v, std::initializer_list<const char*> effects = kTaintEffects) {
  Taint t;
  t.key = v["key"].required_str();
  t.value = v["value"].str();
  const Val effect = v["effect"];
  t.effect = effect.required_str();
  if (!one_of(t.effect, effects))
    effect.fail(fmt::format("unknown taint effect '{}' (expected {})", t.effect, effects_text(effects)));
  return t;
}

Toleration toleration(const Val& v, std::initializer_list<const char*> effects = kTaintEffects) {
  Toleration t;
  t.key = v["key"].str();
  const Val op = v["operator"];
  t.operator_ = op.str("Equal");
  if (t.operator_.empty()) t.operator_ = "Equal";
  if (!one_of(t.operator_, {"Equal", "Exists"})) op.fail(fmt::format("unknown operator '{}' (expected Equal or Exists)", t.operator_));
  t.value = v["value"].str();
  if (t.operator_ == "Exists" && !t.value.empty()) v["value"].fail("operator Exists takes no value");
  if (t.key.empty() && t.operator_ != "Exists") v["key"].fail("an empty key needs operator Exists");
  const Val effect = v["effect"];
  t.effect = effect.str();
  if (!t.effect.empty() && !one_of(t.effect, effects))
    effect.fail(fmt::format("unknown effect '{}' (expected {})", t.effect, effects_text(effects)));
  if (const Val s = v["tolerationSeconds"]; s.present()) {
    t.toleration_seconds = s.integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    // The API server's validateTolerations (kubernetes pkg/apis/core/validation/validation.go).
    if (t.effect != "NoExecute")
      (effect.present() ? effect : s).fail(fmt::format("Invalid value: \"{}\": effect must be 'NoExecute' when `tolerationSeconds` is set "
                                                       "(the API server refuses the pod)",
                                                       t.effect));
  }
  return t;
}

PodAffinityTerm pod_affinity_term(const Val& v) {
  PodAffinityTerm t;
  t.label_selector = label_selector(v["labelSelector"]);
  t.has_label_selector = v["labelSelector"].present();
  t.namespaces = string_list(v["namespaces"]);
  t.topology_key = v["topologyKey"].required_str();
  return t;
}

// spec.topologySpreadConstraints, checked as the API server checks them (kubernetes
// pkg/apis/core/validation/validation.go validateTopologySpreadConstraints, in its words): maxSkew
// > 0; topologyKey not empty; whenUnsatisfiable DoNotSchedule or ScheduleAnyway; no later constraint
// with the same {topologyKey, whenUnsatisfiable}; minDomains > 0 and only with DoNotSchedule;
// nodeAffinityPolicy and nodeTaintsPolicy Honor or Ignore; matchLabelKeys only with a labelSelector,
// valid label keys, none of the labelSelector's keys.
std::vector<TopologySpreadConstraint> topology_spread_constraints(const Val& list) {
  constexpr const char* kRefused = " (the API server refuses the pod)";
  const auto action_ok = [](const std::string& a) { return a == "DoNotSchedule" || a == "ScheduleAnyway"; };
  std::vector<TopologySpreadConstraint> out;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val v = list.at(i);
    TopologySpreadConstraint c;
    const Val skew = v["maxSkew"];
    const int64_t max_skew =
        skew.opt_integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()).value_or(0);
    if (max_skew <= 0) skew.fail(fmt::format("Invalid value: {}: must be greater than zero{}", max_skew, kRefused));
    c.max_skew = static_cast<int32_t>(max_skew);
    const Val key = v["topologyKey"];
    c.topology_key = key.str();
    if (c.topology_key.empty()) key.fail(fmt::format("Required value: can not be empty{}", kRefused));
    const Val when = v["whenUnsatisfiable"];
    const std::string action = when.str();
    if (!action_ok(action))
      when.fail(fmt::format("Unsupported value: \"{}\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"{}", action, kRefused));
    c.when_unsatisfiable = action == "DoNotSchedule" ? UnsatisfiableAction::kDoNotSchedule : UnsatisfiableAction::kScheduleAnyway;
    for (size_t j = i + 1; j < n; ++j)
      if (list.at(j)["topologyKey"].str() == c.topology_key && list.at(j)["whenUnsatisfiable"].str() == action)
        v.fail(fmt::format("{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{{}, {}}}\" (again at index {}){}", c.topology_key,
                           action, j, kRefused));
    if (const Val domains = v["minDomains"]; domains.present()) {
      const int64_t min_domains = domains.integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      if (min_domains <= 0) domains.fail(fmt::format("Invalid value: {}: must be greater than zero{}", min_domains, kRefused));
      if (c.when_unsatisfiable != UnsatisfiableAction::kDoNotSchedule)
        domains.fail(fmt::format("Invalid value: {}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}{}", min_domains,
                                 action, kRefused));
      c.min_domains = static_cast<int32_t>(min_domains);
    }
    const auto policy = [&](const char* field, NodeInclusionPolicy fallback) {
      const Val p = v[field];
      if (!p.present()) return fallback;
      const std::string text = p.scalar();
      if (text != "Honor" && text != "Ignore")
        p.fail(fmt::format("Unsupported value: \"{}\": supported values: \"Honor\", \"Ignore\"{}", text, kRefused));
      return text == "Honor" ? NodeInclusionPolicy::kHonor : NodeInclusionPolicy::kIgnore;
    };
    c.node_affinity_policy = policy("nodeAffinityPolicy", NodeInclusionPolicy::kHonor);
    c.node_taints_policy = policy("nodeTaintsPolicy", NodeInclusionPolicy::kIgnore);
    const Val selector = v["labelSelector"];
    c.has_label_selector = selector.present();
    if (c.has_label_selector) c.label_selector = label_selector(selector);
    const Val keys = v["matchLabelKeys"];
    c.match_label_keys = string_list(keys);
    if (!c.match_label_keys.empty() && !c.has_label_selector)
      keys.fail(fmt::format("Forbidden: must not be specified when labelSelector is not set{}", kRefused));
    for (size_t k = 0; k < c.match_label_keys.size(); ++k) {
      const std::string& label = c.match_label_keys[k];
      if (const auto e = label_key_error(label)) keys.at(k).fail(*e);
      bool in_selector = find_label(c.label_selector.match_labels, label) != nullptr;
      for (const SelectorRequirement& r : c.label_selector.match_expressions) in_selector |= r.key == label;
      if (in_selector)
        keys.at(k).fail(fmt::format("Invalid value: \"{}\": exists in both matchLabelKeys and labelSelector{}", label, kRefused));
    }
    out.push_back(std::move(c));
  }
  return out;
}

SourcePosition position_of(const Val& v) {
  const auto [line, column] = v.position();
  return SourcePosition{v.source().file, line, column, v.path()};
}

std::string metadata_name(const Val& obj) { return obj["metadata"]["name"].required_str(); }
std::string metadata_namespace(const Val& obj) {
  std::string ns = obj["metadata"]["namespace"].str();
  return ns.empty() ? "default" : ns;
}

// The devices a bound pod's annotations name (model/device_annotations.h); a malformed value fails
// at metadata.annotations.<key>.
std::optional<DeviceAssignment> device_annotations(const Val& annotations) {
  std::map<std::string, std::string> values;
  annotations.each_entry([&](const std::string& key, const Val& value) {
    if (key != kGpuIndexAnnotation && key != kSharedGpuIndexAnnotation && key != kMigDevicesAnnotation) return;
    std::string text = value.str();
    try {
      parse_device_annotations({{key, text}});
    } catch (const std::invalid_argument& e) {
      value.fail(e.what());
    }
    values.emplace(key, std::move(text));
  });
  return parse_device_annotations(values);
}

bool valid_preemption_policy(const std::string& s) { return s == "PreemptLowerPriority" || s == "Never"; }

// The API server's built-in PriorityClasses; the only ones whose name may start with "system-" and
// whose value may be above kMaxUserPriority (ValidatePriorityClass, IsKnownSystemPriorityClass).
const PriorityClassSpec kSystemPriorityClasses[] = {{"system-cluster-critical", 2000000000, false, "PreemptLowerPriority"},
                                                    {"system-node-critical", 2000001000, false, "PreemptLowerPriority"}};
constexpr int64_t kMaxUserPriority = 1'000'000'000;  // HighestUserDefinablePriority

// core/v1 ResourceQuotaScope values the API server accepts (helper.IsStandardResourceQuotaScope).
// VolumeAttributesClass scopes PersistentVolumeClaims: a quota with it matches no pod.
const std::initializer_list<const char*> kQuotaScopes = {
    "Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity",
    "VolumeAttributesClass"};

void check_quota_scope(const Val& at, const std::string& scope) {
  if (one_of(scope, kQuotaScopes)) return;
  std::string list;
  for (const char* s : kQuotaScopes) list += list.empty() ? s : fmt::format(", {}", s);
  at.fail(fmt::format("unsupported scope '{}' (supported: {})", scope, list));
}

// ---------------------------------------------------------------------------------------------
// The reader

// A pod template parsed once, replicated per controller replica.
struct PodTemplate {
  Pod pod;
  bool explicit_priority = false;
  bool explicit_policy = false;
  std::pair<int, int> class_position;  // of spec.priorityClassName, for an unknown class
  std::string class_field;
};

struct PriorityPending {
  bool explicit_priority = false;
  bool explicit_policy = false;
  std::string file;
  std::pair<int, int> class_position;
  std::string class_field;
};

class Reader : public detail::K8sTemplateParser {
 public:
  explicit Reader(const ObjectLimits& limits) : kueue_(*this, limits), limits_(limits) {}
  void parse_text(std::string_view text, const std::string& file);
  // The documents of `text` (loaded from it) as parse_text reads them.
  void parse_documents(const std::vector<detail::YamlNode>& docs, std::string_view text, const std::string& file);
  K8sObjects finish();

  // Pod templates of jobs queued to Kueue (readers/k8s/kueue_yaml.h).
  std::pair<Pod, size_t> parse_pod_template(const Val& meta, const Val& spec, const std::string& ns) override {
    PodTemplate t = pod_template(meta, spec, ns);
    template_pending_.push_back({t.explicit_priority, t.explicit_policy, meta.source().file, t.class_position, t.class_field});
    return {std::move(t.pod), template_pending_.size() - 1};
  }
  void resolve_priority(Pod& pod, size_t id) const override { resolve(pod, template_pending_[id]); }
  size_t pod_count() const override { return out_.pods.size(); }

 private:
  void object(const Val& v, const std::string& default_kind);
  void skip(const std::string& kind, const Val& v, const std::string& reason);
  void node(const Val& v);
  void pod(const Val& v);
  void workload(const Val& v, const std::string& kind);
  void leader_worker_set(const Val& v);
  void daemon_set(const Val& v);
  PodTemplate pod_template(const Val& meta, const Val& spec, const std::string& ns);
  void add_pod(const PodTemplate& t, std::string name, const Val& name_at, PodOwner owner);
  void priority_class(const Val& v);
  void resource_quota(const Val& v);
  void pod_disruption_budget(const Val& v);
  void config_map(const Val& v);
  // A standalone or embedded config; false when `v` is neither kind of config.
  bool nvidia_config(const Val& v, ConfigOrigin origin);
  bool embedded_config(const Val& value, const std::string& ns, const std::string& cm, const std::string& key);
  // A pod's memory-based GPU sharing (see the definition).
  void memory_share(const Val& meta, const Val& spec, const Val& containers, const std::map<std::string, int64_t>& total,
                    int hami_containers, Pod& p);
  // HAMi's device list of a node; returns its cards (see the definition).
  int64_t hami_node(const Val& reg, Node& n);
  void device_plugin_config(const Val& v, ConfigOrigin origin);
  void mig_parted_config(const Val& v, ConfigOrigin origin);
  // A field read but not modelled at `at`; counted per `what`, said once (finish()).
  void feature(const std::string& what, const Val& at, const std::string& consequence) {
    const auto [it, first] = features_.try_emplace(what, out_.not_modelled.size());
    if (first) out_.not_modelled.push_back({what, 0, position_of(at), consequence});
    ++out_.not_modelled[it->second].objects;
  }
  // Keys of the mapping `v` outside `known`, the JSON fields of the Kubernetes type `type`: each is a
  // field read but not modelled, "unknown field <path>" (kubectl's strict field validation refuses
  // such an object; a newer API version's field reads the same, so a warning, not an error).
  // Nothing when `v` is not a mapping (its reader says what is wrong with it).
  void unknown_fields(const Val& v, std::initializer_list<std::string_view> known, std::string_view type) {
    if (!v.is_map()) return;
    v.each_entry([&](const std::string& key, const Val& e) {
      if (std::find(known.begin(), known.end(), key) != known.end()) return;
      feature(fmt::format("unknown field {}", e.path()), e, fmt::format("the field is ignored (not a field of {})", type));
    });
  }
  // Sets the priority of a pod (or template) as the Priority admission plugin does.
  void resolve(Pod& p, const PriorityPending& info) const;

  K8sObjects out_;
  std::vector<PriorityPending> pending_;  // parallel to out_.pods
  std::vector<PriorityPending> template_pending_;  // of the Kueue reader's pod templates
  std::vector<PriorityPending> daemon_pending_;   // parallel to out_.daemon_sets
  std::set<std::string> daemon_set_keys_;         // namespace/name
  detail::KueueReader kueue_;
  std::set<std::string> node_names_, pod_keys_, class_names_, quota_keys_;
  std::map<std::string, std::string> pod_uids_;  // metadata.uid -> "namespace/name" of the Pod that has it
  std::map<std::string, std::pair<std::string, std::string>> skipped_;  // kind -> (first location, reason)
  std::map<std::string, size_t> features_;  // what -> index in out_.not_modelled
  std::map<std::string, std::pair<int, std::string>> unenforced_;  // quota resource -> (quotas, first location)
  std::vector<NodeResourceTopologySpec> topologies_;  // applied to the nodes in finish()
  std::vector<DraCounterReference> counter_references_;  // checked in finish()
  std::string_view text_;  // the text being parsed (for embedded literal blocks)
  ObjectLimits limits_;
};

void Reader::parse_text(std::string_view text, const std::string& file) {
  text = detail::strip_bom(text);
  Source src;
  src.file = file;
  parse_documents(detail::load_documents(text, src), text, file);
}

void Reader::parse_documents(const std::vector<detail::YamlNode>& docs, std::string_view text, const std::string& file) {
  text_ = text;
  Source src;
  src.file = file;
  // An empty file (or only `---` and comments): kubectl apply refuses it ("no objects passed to
  // apply"); here it is harmless (e.g. a placeholder in a directory), so only a warning.
  if (std::all_of(docs.begin(), docs.end(), [](const detail::YamlNode& doc) { return doc.type == detail::YamlType::kNull; }))
    out_.warnings.push_back(fmt::format("{}: no objects (the file is empty or holds only empty documents)", file));
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;  // an empty document (e.g. a trailing ---)
    const Val v(doc, "", src);
    object(v, "");
  }
}

void Reader::object(const Val& v, const std::string& default_kind) {
  if (!v.is_map()) v.fail(fmt::format("expected a Kubernetes object (a mapping), got {}", v.type()));
  const Val kind_v = v["kind"];
  const std::string kind = kind_v.str(default_kind);
  if (kind.empty()) {
    ConfigOrigin origin;
    origin.file = v.source().file;
    origin.line = v.position().first;
    if (nvidia_config(v, origin)) return;
    kind_v.fail("missing kind (and not a device-plugin or mig-parted config)");
  }
  if (kind.size() >= 4 && kind.substr(kind.size() - 4) == "List") {  // List, PodList, NodeList, ...
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    const Val items = v["items"];
    for (size_t i = 0, n = items.size(); i < n; ++i) object(items.at(i), item_kind);
    return;
  }
  if (kind == "LeaderWorkerSet" && v["apiVersion"].str().rfind("leaderworkerset.x-k8s.io/", 0) == 0) return leader_worker_set(v);
  if (kueue_.object(v, kind)) return;  // Kueue objects, queued jobs, PodGroups (readers/k8s/kueue_yaml.h)
  if (kind == "Node") return node(v);
  if (kind == "Pod") return pod(v);
  if (kind == "Deployment" || kind == "StatefulSet" || kind == "Job" || kind == "ReplicaSet") return workload(v, kind);
  if (kind == "DaemonSet") return daemon_set(v);
  if (kind == "PriorityClass") return priority_class(v);
  if (kind == "ResourceQuota") return resource_quota(v);
  if (kind == "PodDisruptionBudget") return pod_disruption_budget(v);
  if (kind == "ConfigMap") return config_map(v);
  if (kind == "NodeResourceTopology") return topologies_.push_back(read_node_resource_topology(v));
  if (is_dra_kind(kind) && v["apiVersion"].str().rfind("resource.k8s.io/", 0) == 0)  // readers/k8s/dra_yaml.h
    return read_dra_object(
        v, kind, out_.dra, [this](const std::string& what, const Val& at, const std::string& consequence) { feature(what, at, consequence); },
        &counter_references_);
  if (is_compute_domain_object(kind, v["apiVersion"].str()))  // readers/k8s/compute_domain_yaml.h
    return read_compute_domain(v, out_.dra, [this](const std::string& what, const Val& at, const std::string& consequence) {
      feature(what, at, consequence);
    });
  if (kind == "NodePoolSet" && v["apiVersion"].str().rfind("gpufleet.io/", 0) == 0) {  // readers/k8s/pool_file.h reads it
    if (out_.pool_files.empty() || out_.pool_files.back() != v.source().file) out_.pool_files.push_back(v.source().file);
    return;
  }
  if (kind == "Autoscaling" && v["apiVersion"].str() == "sim.gpufleet.io/v1") {
    // The cluster's admission plugins (model/extended_resource_toleration.h) hold for `place` too; the
    // other settings are the simulator's. sim_pools.h checks the names.
    const Val plugins = v["admissionPlugins"];
    for (size_t i = 0, n = plugins.is_seq() ? plugins.size() : 0; i < n; ++i)
      if (plugins.at(i).str() == kExtendedResourceTolerationPlugin) out_.extended_resource_toleration = true;
  }
  skip(kind, v, "kind not modelled");
}

void Reader::skip(const std::string& kind, const Val& v, const std::string& reason) {
  ++out_.skipped_kinds[kind];
  if (!skipped_.count(kind)) {
    const auto [line, column] = v.position();
    skipped_[kind] = {fmt::format("{}:{}:{}", v.source().file, line, column), reason};
  }
}

void Reader::node(const Val& v) {
  Node n;
  n.name = metadata_name(v);
  if (out_.nodes.size() >= limits_.max_nodes)
    v["metadata"]["name"].fail(limit_message(limits_.max_nodes, "nodes", "ObjectLimits::max_nodes"));
  if (!node_names_.insert(n.name).second) v["metadata"]["name"].fail(fmt::format("duplicate node '{}'", n.name));
  K8sNodeSource source;
  source.node = n.name;
  source.name = position_of(v["metadata"]["name"]);
  v["metadata"]["labels"].each_entry([&](const std::string& k, const Val& val) {
    n.labels.emplace_back(k, val.str());
    source.labels[k] = position_of(val);
  });
  const Val taints = v["spec"]["taints"];
  for (size_t i = 0, k = taints.size(); i < k; ++i) n.taints.push_back(taint(taints.at(i)));
  n.unschedulable = v["spec"]["unschedulable"].boolean(false);

  // What kube-scheduler counts is status.allocatable. The API server fills it from status.capacity
  // only when allocatable is absent altogether (kubernetes pkg/apis/core/v1/defaults.go,
  // SetDefaults_NodeStatus); a resource that a present allocatable lacks is 0, pods included (0 pods
  // allowed: "Too many pods"), whatever capacity says. Capacity is still checked as input.
  const Val status = v["status"];
  const Val alloc = status["allocatable"], cap = status["capacity"];
  const Val& counted = alloc.present() ? alloc : cap;
  if (alloc.present())
    cap.each_entry([&](const std::string& name, const Val& val) {
      resource_amount(val, name == "pods" ? ResKind::kDevice : resource_kind(name));
    });
  bool has_cpu = false, has_memory = false, has_pods = false;
  int64_t gpus = 0;
  std::optional<Val> gpu_at;  // a copy: each_entry's field lives for one callback only
  K8sNodeExtras extras;
  extras.node = n.name;
  n.max_pods = 0;
  counted.each_entry([&](const std::string& name, const Val& val) {
    const ResKind kind = resource_kind(name);
    if (name == "pods") {
      const int64_t pods = resource_amount(val, ResKind::kDevice);
      if (pods > 1'000'000) val.fail(fmt::format("{} pods is absurdly many", pods));
      n.max_pods = static_cast<int32_t>(pods);
      has_pods = true;
    } else if (kind == ResKind::kCpu) {
      n.cpu_milli = resource_amount(val, kind);
      has_cpu = true;
    } else if (kind == ResKind::kMemory) {
      n.memory_bytes = resource_amount(val, kind);
      has_memory = true;
    } else if (name == kGpu) {
      gpus = resource_amount(val, kind);
      gpu_at.emplace(val);
    } else if (kind == ResKind::kDevice) {
      extras.extended[name] = resource_amount(val, kind);
    } else {
      resource_amount(val, kind);  // validated, not kept
    }
  });
  // Missing amounts are kube's zeros, not errors: a warning names each, at the list kube read.
  const char* list_name = alloc.present() ? "status.allocatable" : "status.capacity";
  for (const auto& [has, resource, consequence] :
       {std::tuple{has_pods, "pods", "kube-scheduler allows 0 pods there (\"Too many pods\")"},
        std::tuple{has_cpu, "cpu", "only pods that request no cpu fit there"},
        std::tuple{has_memory, "memory", "only pods that request no memory fit there"}}) {
    if (has) continue;
    const auto [line, column] = (counted.present() ? counted : v).position();
    out_.warnings.push_back(fmt::format("{}:{}:{}: node '{}': {} has no {}: {}", v.source().file, line, column, n.name,
                                        list_name, resource, consequence));
  }

  if (const std::string* product = find_label(n.labels, "nvidia.com/gpu.product")) n.gpu_model = *product;
  // Time-slicing without rename advertises replicas x GPUs as nvidia.com/gpu; GPU feature discovery
  // labels the physical count and the replicas.
  // (readers/k8s/device_setup.h validates both labels, at the label.)
  const std::string* replicas_label = find_label(n.labels, "nvidia.com/gpu.replicas");
  const std::string* count_label = find_label(n.labels, "nvidia.com/gpu.count");
  int64_t replicas = 0, count = 0;
  if (replicas_label && count_label) {
    std::from_chars(replicas_label->data(), replicas_label->data() + replicas_label->size(), replicas);
    std::from_chars(count_label->data(), count_label->data() + count_label->size(), count);
  }
  // The advertised replicas are kept for readers/k8s/device_setup.h, which converts them to GPUs with the
  // replicas the sharing set-up gives and reports a count that disagrees with the labels (rule 5).
  if (replicas > 1 && count > 0 && count <= kMaxGpusPerNode) {
    extras.extended[kGpu] = gpus;
    gpus = count;
  }
  // Memory-based GPU sharing (model/gpu_memory_share.h): a HAMi node's registered cards replace the
  // vGPUs its device plugin advertises as nvidia.com/gpu; other nodes' GPU memory as KAI counts it.
  if (const Val reg = v["metadata"]["annotations"][kHamiRegisterAnnotation]; reg.present()) {
    gpus = hami_node(reg, n);
  } else if (gpus > 0) {
    int64_t label_mib = -1;
    if (const std::string* mem = find_label(n.labels, "nvidia.com/gpu.memory")) {
      const auto [end, ec] = std::from_chars(mem->data(), mem->data() + mem->size(), label_mib);
      if (ec != std::errc() || end != mem->data() + mem->size() || label_mib < 0)
        v["metadata"]["labels"]["nvidia.com/gpu.memory"].fail(
            fmt::format("nvidia.com/gpu.memory '{}' is not a whole number of MiB", *mem));
    }
    n.gpu_memory_mib = kai_gpu_memory_mib(label_mib);
  }
  if (gpus > kMaxGpusPerNode)
    gpu_at->fail(fmt::format("{} GPUs is more than {} per node", gpus, kMaxGpusPerNode));
  n.gpu_count = static_cast<int32_t>(gpus);

  if (!extras.extended.empty()) out_.node_extras.push_back(std::move(extras));
  out_.nodes.push_back(std::move(n));
  out_.node_sources.push_back(std::move(source));
}

// HAMi's device list of a node (annotation hami.io/node-nvidia-register, HAMi pkg/device/devices.go):
// a JSON list of {id, count, devmem, devcore, type, numa, health, index, mode} (MarshalNodeDevices)
// or the older "id,count,devmem,devcore,type,numa,health[,index,mode]:" segments (DecodeNodeDevices).
// Sets Node::hami and gpu_memory_mib; returns the number of cards. Every card must have the same
// count, devmem and devcore (gpufleet keeps one per node); unhealthy cards are left out, as HAMi's
// Fit skips them (CardNotHealth).
int64_t Reader::hami_node(const Val& reg, Node& n) {
  struct Card {
    int64_t count = 0, devmem = 0, devcore = 0;
    bool health = true;
  };
  std::vector<Card> cards;
  const std::string text = reg.str();
  auto integer = [&](std::string_view item, const char* what) {
    int64_t out = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), out);
    if (ec != std::errc() || end != item.data() + item.size() || out < 0 || out > INT32_MAX)
      reg.fail(fmt::format("HAMi device list: {} '{}' is not a whole number", what, item));
    return out;
  };
  if (!text.empty() && text.front() == '[') {
    Source src;  // errors point at the annotation (the JSON is one line of it)
    src.file = reg.source().file;
    src.embedded = true;
    const auto [outer_line, outer_column] = reg.position();
    src.fallback.line = outer_line - 1;
    src.fallback.column = outer_column - 1;
    const std::vector<detail::YamlNode> docs = detail::parse_yaml_stream(text, src, reg.path());
    if (docs.size() != 1) reg.fail("HAMi device list is not one JSON list");
    const Val list(docs.front(), reg.path(), src);
    if (!list.is_seq()) reg.fail("HAMi device list is not a JSON list");
    for (size_t i = 0; i < list.size(); ++i) {
      const Val d = list.at(i);
      auto field = [&](const char* key) { return integer(d[key].scalar(), key); };
      cards.push_back({field("count"), field("devmem"), field("devcore"), d["health"].str() != "false"});
    }
  } else {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(':', start);
      if (end == std::string::npos) reg.fail("HAMi device list: a segment does not end with ':'");
      const std::string_view segment(text.data() + start, end - start);
      start = end + 1;
      if (segment.empty()) continue;
      std::vector<std::string_view> items;
      for (size_t a = 0;;) {
        const size_t b = segment.find(',', a);
        items.push_back(segment.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a));
        if (b == std::string_view::npos) break;
        a = b + 1;
      }
      if (items.size() != 7 && items.size() != 9)
        reg.fail(fmt::format("HAMi device list: segment '{}' has {} fields, expected 7 or 9", segment, items.size()));
      cards.push_back({integer(items[1], "count"), integer(items[2], "devmem"), integer(items[3], "devcore"), items[6] != "false"});
    }
  }
  std::erase_if(cards, [](const Card& c) { return !c.health; });
  if (cards.empty()) return 0;
  for (const Card& c : cards)
    if (c.count != cards.front().count || c.devmem != cards.front().devmem || c.devcore != cards.front().devcore)
      reg.fail("HAMi device list: cards with different count, devmem or devcore (gpufleet keeps one of each per node)");
  if (cards.front().count < 1 || cards.front().devcore < 1)
    reg.fail("HAMi device list: a card's count and devcore must be at least 1");
  n.hami = HamiDevices{static_cast<int32_t>(cards.front().count), static_cast<int32_t>(cards.front().devcore)};
  n.gpu_memory_mib = cards.front().devmem;
  return static_cast<int64_t>(cards.size());
}

// Memory-based GPU sharing of a pod (model/gpu_memory_share.h), from its summed requests `total`:
//  - HAMi: a pod naming nvidia.com/gpumem, gpumem-percentage or gpucores, or one with schedulerName
//    hami-scheduler (what HAMi's admission webhook sets on every pod asking for nvidia.com/gpu). The
//    defaults and checks of HAMi's pkg/device/nvidia/device.go (MutateAdmission,
//    validateMemoryPercentage, mutateContainerResource, defaultExclusiveCoreIfNeeded,
//    GenerateResourceRequests). HAMi asks per container; gpufleet takes the pod's sum and refuses
//    HAMi resources in more than one container.
//  - KAI-Scheduler: the annotations gpu-fraction, gpu-memory, gpu-fraction-num-devices on a pod with
//    schedulerName kai-scheduler, checked as KAI's binder does (pkg/binder/plugins/gpusharing/
//    gpu-request/gpu_request_validator.go ValidateGpuRequests), in its words. On a pod for another
//    scheduler they are a warning: nothing reads them there.
void Reader::memory_share(const Val& meta, const Val& spec, const Val& containers, const std::map<std::string, int64_t>& total,
                          int hami_containers, Pod& p) {
  const std::string scheduler = spec["schedulerName"].str();
  const Val annotations = meta["annotations"];
  const Val fraction_v = annotations["gpu-fraction"], memory_v = annotations["gpu-memory"],
            devices_v = annotations["gpu-fraction-num-devices"];
  const bool hami_named = hami_containers > 0;
  if (scheduler != "kai-scheduler") {
    for (const Val* a : {&fraction_v, &memory_v, &devices_v})
      if (a->present())
        feature(fmt::format("KAI-Scheduler's GPU sharing annotation on a pod for scheduler '{}'", scheduler.empty() ? "default-scheduler" : scheduler),
                *a, "only kai-scheduler reads it: the pod is placed without the GPU share it asks for");
  }
  if (!hami_named && scheduler != "hami-scheduler" && scheduler != "kai-scheduler") return;
  const int64_t gpus = amount_of(total, kGpu);
  if ((hami_named || scheduler == "hami-scheduler") && (!p.mig_requests.empty() || p.shared_replicas > 0))
    containers.fail("a HAMi pod asking for MIG devices or nvidia.com/gpu.shared: gpufleet models HAMi's nvidia.com/gpu only");
  if (scheduler == "kai-scheduler") {
    if (!fraction_v.present() && !memory_v.present()) {
      if (devices_v.present())
        devices_v.fail("cannot request multiple fractional devices without specifying fraction portion or gpu-memory");
      return;
    }
    if (hami_named) containers.fail("a kai-scheduler pod naming HAMi's resources");
    if (fraction_v.present() && gpus > 0)
      fraction_v.fail("cannot have both GPU fraction request and whole GPU resource request/limit");
    if (memory_v.present() && (fraction_v.present() || gpus > 0)) memory_v.fail("cannot request both GPU and GPU memory");
    GpuMemoryShare r;
    r.scheduler = GpuMemoryScheduler::kKai;
    if (memory_v.present()) {
      const std::string text = memory_v.scalar();
      uint64_t mib = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mib);
      if (ec != std::errc() || end != text.data() + text.size() || mib == 0 || mib > uint64_t{1} << 40)
        memory_v.fail("gpu-memory annotation value must be a positive integer greater than 0");
      r.memory_mib = static_cast<int64_t>(mib);
    } else {
      const std::string text = fraction_v.scalar();
      double f = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), f);
      if (ec != std::errc() || end != text.data() + text.size() || !(f > 0 && f < 1))
        fraction_v.fail("gpu-fraction annotation value must be a positive number smaller than 1.0");
      r.fraction = f;
    }
    if (devices_v.present()) {
      const std::string text = devices_v.scalar();
      uint64_t count = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
      if (ec != std::errc() || end != text.data() + text.size() || count == 0)
        devices_v.fail("fraction count annotation value must be a positive integer greater than 0");
      if (count > static_cast<uint64_t>(kMaxGpusPerNode))
        devices_v.fail(fmt::format("{} devices, more than {} GPUs per node", count, kMaxGpusPerNode));
      r.cards = static_cast<int32_t>(count);
    }
    p.gpu_memory_share = r;
    return;
  }
  // HAMi.
  if (hami_containers > 1) containers.fail("HAMi resources in more than one container: gpufleet models one HAMi container per pod");
  const auto amount = [&](const char* name) -> std::optional<int64_t> {
    const auto it = total.find(name);
    return it == total.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  const auto mem = amount(kHamiGpuMem), pct = amount(kHamiGpuMemPercentage), cores = amount(kHamiGpuCores);
  if (pct && *pct > 100)  // validateMemoryPercentage, at admission
    containers.fail(fmt::format("invalid {} value {}: must be an integer between 0 and 100", kHamiGpuMemPercentage, *pct));
  if (gpus == 0 && !hami_named) return;  // hami-scheduler pod without GPUs
  // An explicit nvidia.com/gpu of 0 is not defaulted (mutateContainerResource leaves a named resource
  // alone) and GenerateResourceRequests asks no device for it: the memory and cores ask nothing.
  if (gpus == 0 && total.count(kGpu) != 0) {
    feature(fmt::format("HAMi's {} with nvidia.com/gpu 0", mem ? kHamiGpuMem : pct ? kHamiGpuMemPercentage : kHamiGpuCores), containers,
            "HAMi asks no GPU for it: the pod is placed without one");
    return;
  }
  GpuMemoryShare r;
  r.scheduler = GpuMemoryScheduler::kHami;
  // mutateContainerResource: gpumem, percentage or cores without nvidia.com/gpu ask defaultGPUNum (1).
  r.cards = gpus > 0 ? static_cast<int32_t>(std::min<int64_t>(gpus, kMaxGpusPerNode + 1)) : 1;
  r.memory_mib = mem.value_or(0);
  // GenerateResourceRequests: a positive percentage counts; with neither, 100% (defaultMemory 0).
  r.memory_percentage = pct && *pct > 0 ? static_cast<int32_t>(*pct) : 100;
  // defaultExclusiveCoreIfNeeded: no gpucores and the whole memory (percentage 100, or no gpumem)
  // means gpucores 100.
  const bool exclusive = pct ? *pct == 100 : !mem.has_value();
  r.cores_percentage = cores ? static_cast<int32_t>(*cores) : exclusive ? 100 : 0;
  p.gpu_memory_share = r;
  p.num_gpu = 0;
  p.gpu_milli = 0;
}

PodTemplate Reader::pod_template(const Val& meta, const Val& spec, const std::string& ns) {
  PodTemplate t;
  Pod& p = t.pod;
  p.namespace_name = ns;
  p.labels = string_map(meta["labels"]);
  detail::KueueReader::add_group_label(meta, p.labels);  // Volcano's gang annotation
  if (!spec.present()) spec.fail("missing pod spec");
  p.node_name = spec["nodeName"].str();  // already bound (a bare Pod), or pinned by its template

  // Effective requests (k8s.io/component-helpers/resource PodRequests).
  const Val containers = spec["containers"];
  const size_t n_containers = containers.size();
  if (n_containers == 0) containers.fail("a pod needs at least one container");
  Amounts total, nonzero;  // nonzero: the same sums over ContainerRequests::nonzero
  bool any_cpu_memory = false, guaranteed = true;
  std::set<std::string> ignored;  // requested resources gpufleet does not model
  bool claims = false;            // resources.claims (dynamic resource allocation)
  int hami_containers = 0;  // containers naming a HAMi resource (memory_share())
  auto count_hami = [&](const ContainerRequests& c) {
    hami_containers += c.effective.count(kHamiGpuMem) + c.effective.count(kHamiGpuMemPercentage) + c.effective.count(kHamiGpuCores) > 0;
  };
  for (size_t i = 0; i < n_containers; ++i) {
    const ContainerRequests c = container_requests(containers.at(i), ignored, claims);
    count_hami(c);
    add_into(total, c.effective);
    add_into(nonzero, c.nonzero);
    any_cpu_memory |= c.has_cpu_or_memory;
    guaranteed &= c.guaranteed;
  }
  const Val inits = spec["initContainers"];
  Amounts init_max, sidecars, nonzero_init_max, nonzero_sidecars;
  for (size_t i = 0, n = inits.size(); i < n; ++i) {
    const Val init = inits.at(i);
    const ContainerRequests c = container_requests(init, ignored, claims);
    count_hami(c);
    any_cpu_memory |= c.has_cpu_or_memory;
    guaranteed &= c.guaranteed;
    Amounts during = c.effective, nonzero_during = c.nonzero;
    if (init["restartPolicy"].str() == "Always") {  // a sidecar: runs alongside the app containers
      add_into(total, c.effective);
      add_into(sidecars, c.effective);
      during = sidecars;
      add_into(nonzero, c.nonzero);
      add_into(nonzero_sidecars, c.nonzero);
      nonzero_during = nonzero_sidecars;
    } else {
      add_into(during, sidecars);
      add_into(nonzero_during, nonzero_sidecars);
    }
    max_into(init_max, during);
    max_into(nonzero_init_max, nonzero_during);
  }
  max_into(total, init_max);
  max_into(nonzero, nonzero_init_max);
  const Val overhead = spec["overhead"];
  const Amounts overhead_amounts = resource_list(overhead, &ignored);
  add_into(total, overhead_amounts);
  for (const char* r : {"cpu", "memory"})
    if (overhead_amounts.count(r)) nonzero[r] += overhead_amounts.at(r);
  check_pod_device_names(overhead);
  for (const std::string& name : ignored)
    feature(fmt::format("pod resource {}", name), containers, "the pod is placed without it");
  p.resource_claims = read_pod_resource_claims(spec["resourceClaims"], ns, &out_.dra_claim_references);  // readers/k8s/dra_yaml.h
  if (claims && p.resource_claims.empty())
    feature("container resources.claims without spec.resourceClaims", containers, "the pod is placed without its claims");

  p.cpu_milli = amount_of(total, "cpu");
  p.memory_bytes = amount_of(total, "memory");
  p.scoring_cpu_milli = amount_of(nonzero, "cpu");
  p.scoring_memory_bytes = amount_of(nonzero, "memory");
  const int64_t gpus = amount_of(total, kGpu);
  // Kubernetes sets no limit on nvidia.com/gpu per pod (a pod asking more than any node has stays
  // pending, "Insufficient nvidia.com/gpu"); this bound only keeps the count an int32.
  if (gpus > kMaxSharedReplicas) containers.fail(fmt::format("the pod requests {} {}, more than {}", gpus, kGpu, kMaxSharedReplicas));
  p.num_gpu = static_cast<int32_t>(gpus);
  p.gpu_milli = gpus > 0 ? kGpuMilliPerGpu : 0;
  for (const auto& [name, amount] : total) {
    if (resource_kind(name) != ResKind::kDevice || name == kGpu || amount <= 0) continue;
    if (name == kHamiGpuMem || name == kHamiGpuMemPercentage || name == kHamiGpuCores) continue;  // memory_share()
    if (const auto profile = mig_profile_of(name)) {  // sorted by name, hence by profile
      if (amount > int64_t{kMaxGpusPerNode} * kMigMaxInstances)
        containers.fail(fmt::format("the pod requests {} {} devices, more than {} ({} GPUs x {} instances)", amount, name,
                                    kMaxGpusPerNode * kMigMaxInstances, kMaxGpusPerNode, kMigMaxInstances));
      p.mig_requests.push_back({*profile, static_cast<int32_t>(amount)});
    } else {  // nvidia.com/gpu.shared: check_pod_device_names rejected every other name
      if (amount > kMaxSharedReplicas)
        containers.fail(fmt::format("the pod requests {} {}, more than {}", amount, name, kMaxSharedReplicas));
      p.shared_replicas = static_cast<int32_t>(amount);
    }
  }
  p.qos = !any_cpu_memory ? QosClass::kBE : guaranteed ? QosClass::kGuaranteed : QosClass::kBurstable;
  memory_share(meta, spec, containers, total, hami_containers, p);

  // Placement constraints. A misspelt field of the spec or of its node affinity would drop a
  // constraint unseen: each is named (unknown_fields).
  unknown_fields(spec, kPodSpecFields, "v1 PodSpec");
  PodConstraints& c = p.constraints;
  c.node_selector = valid_labels(spec["nodeSelector"]);
  const Val affinity = spec["affinity"];
  unknown_fields(affinity, {"nodeAffinity", "podAffinity", "podAntiAffinity"}, "v1 Affinity");
  const Val na = affinity["nodeAffinity"];
  unknown_fields(na, {"requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"},
                 "v1 NodeAffinity");
  unknown_fields(na["requiredDuringSchedulingIgnoredDuringExecution"], {"nodeSelectorTerms"}, "v1 NodeSelector");
  const Val terms = na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  for (size_t i = 0, n = terms.size(); i < n; ++i) {
    unknown_fields(terms.at(i), {"matchExpressions", "matchFields"}, "v1 NodeSelectorTerm");
    c.required_node_affinity.push_back(node_selector_term(terms.at(i), &out_.warnings));
  }
  const Val preferred = na["preferredDuringSchedulingIgnoredDuringExecution"];
  for (size_t i = 0, n = preferred.size(); i < n; ++i) {
    const Val e = preferred.at(i);
    unknown_fields(e, {"weight", "preference"}, "v1 PreferredSchedulingTerm");
    unknown_fields(e["preference"], {"matchExpressions", "matchFields"}, "v1 NodeSelectorTerm");
    c.preferred_node_affinity.push_back({weight(e["weight"]), node_selector_term(e["preference"], &out_.warnings, true)});
  }
  // podAffinity and podAntiAffinity have the same shape. kube's InterPodAffinity also scores the
  // preferred terms, as the default-scheduler policy does; gpufleet's own policies do not, which is
  // said at run time.
  const auto pod_affinity = [&](const char* kind, std::vector<PodAffinityTerm>& required, std::vector<WeightedPodAffinityTerm>& pref) {
    const Val block = affinity[kind];
    unknown_fields(block, {"requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"},
                   kind == std::string_view("podAffinity") ? "v1 PodAffinity" : "v1 PodAntiAffinity");
    const Val req = block["requiredDuringSchedulingIgnoredDuringExecution"];
    for (size_t i = 0, n = req.size(); i < n; ++i) {
      unknown_fields(req.at(i), kPodAffinityTermFields, "v1 PodAffinityTerm");
      if (req.at(i)["namespaceSelector"].present())
        feature(fmt::format("{} namespaceSelector", kind), req.at(i)["namespaceSelector"], "the term selects in the pod's namespace only");
      required.push_back(pod_affinity_term(req.at(i)));
    }
    const Val preferred_terms = block["preferredDuringSchedulingIgnoredDuringExecution"];
    for (size_t i = 0, n = preferred_terms.size(); i < n; ++i) {
      const Val e = preferred_terms.at(i);
      unknown_fields(e, {"weight", "podAffinityTerm"}, "v1 WeightedPodAffinityTerm");
      unknown_fields(e["podAffinityTerm"], kPodAffinityTermFields, "v1 PodAffinityTerm");
      if (e["podAffinityTerm"]["namespaceSelector"].present())
        feature(fmt::format("{} namespaceSelector", kind), e["podAffinityTerm"]["namespaceSelector"],
                "the term selects in the pod's namespace only");
      pref.push_back({weight(e["weight"]), pod_affinity_term(e["podAffinityTerm"])});
    }
    if (preferred_terms.size() > 0)
      feature(fmt::format("preferred {} scoring by gpufleet's own policies", kind), preferred_terms,
              "they rank the nodes without it (--policy default-scheduler scores it as kube-scheduler does)");
  };
  pod_affinity("podAntiAffinity", c.required_anti_affinity, c.preferred_anti_affinity);
  pod_affinity("podAffinity", c.required_affinity, c.preferred_affinity);
  for (size_t i = 0, n = spec["topologySpreadConstraints"].size(); i < n; ++i)
    unknown_fields(spec["topologySpreadConstraints"].at(i),
                   {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains", "nodeAffinityPolicy",
                    "nodeTaintsPolicy", "matchLabelKeys"},
                   "v1 TopologySpreadConstraint");
  c.topology_spread_constraints = topology_spread_constraints(spec["topologySpreadConstraints"]);
  // Only kube's default scheduler is modelled; a pod for another one (KAI Scheduler, Volcano, a
  // custom scheduler) is placed as the default scheduler would place it.
  // HAMi's and KAI-Scheduler's memory-based sharing are modelled (memory_share()); their other rules
  // are not.
  if (const Val name = spec["schedulerName"]; name.present() && name.str() != "default-scheduler" && !p.gpu_memory_share)
    feature(fmt::format("scheduler '{}'", name.str()), name, "the pod is placed as kube's default-scheduler would place it");
  const Val tolerations = spec["tolerations"];
  for (size_t i = 0, n = tolerations.size(); i < n; ++i) {
    unknown_fields(tolerations.at(i), {"key", "operator", "value", "effect", "tolerationSeconds"}, "v1 Toleration");
    c.tolerations.push_back(toleration(tolerations.at(i)));
  }

  // Priority: resolved against the PriorityClasses once every input is read (finish()).
  const Val class_v = spec["priorityClassName"];
  p.priority_class_name = class_v.str();
  t.class_position = class_v.position();
  t.class_field = class_v.path();
  if (const auto prio = spec["priority"].opt_integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())) {
    p.priority = static_cast<int32_t>(*prio);
    t.explicit_priority = true;
  }
  const Val policy = spec["preemptionPolicy"];
  if (policy.present()) {
    const std::string s = policy.scalar();
    if (!valid_preemption_policy(s)) policy.fail(fmt::format("unknown preemptionPolicy '{}' (expected PreemptLowerPriority or Never)", s));
    p.preempt_lower_priority = s == "PreemptLowerPriority";
    t.explicit_policy = true;
  }
  return t;
}

void Reader::add_pod(const PodTemplate& t, std::string name, const Val& name_at, PodOwner owner) {
  if (out_.pods.size() >= limits_.max_pods)
    name_at.fail(limit_message(limits_.max_pods, "pods, counting every controller's replicas", "ObjectLimits::max_pods"));
  if (!pod_keys_.insert(t.pod.namespace_name + "/" + name).second)
    name_at.fail(fmt::format("duplicate pod '{}' in namespace '{}'", name, t.pod.namespace_name));
  Pod p = t.pod;
  p.name = std::move(name);
  pending_.push_back({t.explicit_priority, t.explicit_policy, name_at.source().file, t.class_position, t.class_field});
  out_.pods.push_back(std::move(p));
  out_.pod_owners.push_back(std::move(owner));
}

void Reader::pod(const Val& v) {
  const std::string name = metadata_name(v);
  const Val meta = v["metadata"];
  PodTemplate t = pod_template(meta, v["spec"], metadata_namespace(v));
  t.pod.uid = meta["uid"].str();
  // The API server gives every object its own uid, and a bind names the pod by it: a second Pod
  // with one would be bound as the first.
  if (!t.pod.uid.empty())
    if (const auto [it, fresh] = pod_uids_.try_emplace(t.pod.uid, t.pod.namespace_name + "/" + name); !fresh)
      meta["uid"].fail(fmt::format("uid '{}' is already that of pod {} (the API server gives every object its own)", t.pod.uid,
                                   it->second));
  // The devices a bind recorded; a pod not yet bound has none to hold, whatever it carries.
  if (!t.pod.node_name.empty()) t.pod.assigned_devices = device_annotations(meta["annotations"]);
  add_pod(t, name, meta["name"], PodOwner{"Pod", name});
}

void Reader::workload(const Val& v, const std::string& kind) {
  const std::string name = metadata_name(v);
  const Val spec = v["spec"];
  int64_t replicas = 1;
  if (kind == "Job") {
    replicas = spec["parallelism"].opt_integer(0, kMaxReplicas).value_or(1);
    if (const auto completions = spec["completions"].opt_integer(0, std::numeric_limits<int32_t>::max()))
      replicas = std::min(replicas, *completions);
  } else {
    replicas = spec["replicas"].opt_integer(0, kMaxReplicas).value_or(1);
  }
  const Val tmpl = spec["template"];
  if (!tmpl.present()) tmpl.fail("missing pod template");
  PodTemplate t = pod_template(tmpl["metadata"], tmpl["spec"], metadata_namespace(v));
  // kube-scheduler's default selector of the pods (helper.DefaultSelector): their owning
  // ReplicaSet's or StatefulSet's selector. A Job's pods have none.
  if (kind != "Job" && spec["selector"].present()) t.pod.constraints.default_spread_selector = label_selector(spec["selector"]);
  if (out_.pods.size() + static_cast<size_t>(replicas) > limits_.max_pods)  // before building any of them
    spec[kind == "Job" ? "parallelism" : "replicas"].fail(
        limit_message(limits_.max_pods, "pods, counting every controller's replicas", "ObjectLimits::max_pods"));
  for (int64_t i = 0; i < replicas; ++i) add_pod(t, fmt::format("{}-{}", name, i), v["metadata"]["name"], PodOwner{kind, name});
}

// leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (kubernetes-sigs/lws api/leaderworkerset/v1/
// leaderworkerset_types.go; pods and labels as pkg/controllers and pkg/webhooks/pod_webhook.go make them).
void Reader::leader_worker_set(const Val& v) {
  const std::string name = metadata_name(v);
  const std::string ns = metadata_namespace(v);
  const Val meta = v["metadata"];
  const Val name_at = meta["name"];
  const Val spec = v["spec"];
  spec.require_map();
  const auto unmodelled = [&](const Val& at, const std::string& consequence) {
    feature(fmt::format("LeaderWorkerSet {}", at.path()), at, consequence);
  };
  spec.each_entry([&](const std::string& key, const Val& e) {
    if (key == "replicas" || key == "leaderWorkerTemplate" || key == "startupPolicy") return;
    if (key == "rolloutStrategy") return unmodelled(e, "the groups are placed as one revision, with no rolling update");
    if (key == "networkConfig") return unmodelled(e, "no headless Service is made; placement does not depend on it");
    feature(fmt::format("LeaderWorkerSet unknown field {}", e.path()), e, "the field is ignored (not in leaderworkerset.x-k8s.io/v1)");
  });
  // The webhook's bounds (pkg/webhooks/leaderworkerset_webhook.go): 0 <= replicas <= 1,000,000, size >= 1,
  // replicas x size <= MaxInt32.
  const Val replicas_v = spec["replicas"];
  const int64_t replicas = replicas_v.opt_integer(0, kMaxReplicas).value_or(1);
  const Val lwt = spec["leaderWorkerTemplate"];
  if (!lwt.present()) lwt.fail("missing leaderWorkerTemplate (a LeaderWorkerSet needs its workerTemplate)");
  lwt.require_map();
  lwt.each_entry([&](const std::string& key, const Val& e) {
    if (key == "leaderTemplate" || key == "workerTemplate" || key == "size" || key == "restartPolicy" || key == "subGroupPolicy") return;
    if (key == "volumeClaimTemplates" || key == "persistentVolumeClaimRetentionPolicy")
      return unmodelled(e, "the pods are placed without their volumes");
    feature(fmt::format("LeaderWorkerSet unknown field {}", e.path()), e, "the field is ignored (not in leaderworkerset.x-k8s.io/v1)");
  });
  const Val size_v = lwt["size"];
  const int64_t size = size_v.opt_integer(1, std::numeric_limits<int32_t>::max()).value_or(1);
  if (replicas * size > std::numeric_limits<int32_t>::max())
    replicas_v.fail(fmt::format("the product of replicas and size must not exceed {}", std::numeric_limits<int32_t>::max()));
  if (const Val r = lwt["restartPolicy"]; r.present()) {
    const std::string s = r.scalar();
    if (!one_of(s, {"RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None", "Default"}))
      r.fail(fmt::format("unknown restartPolicy '{}' (expected RecreateGroupOnPodRestart, RecreateGroupAfterStart, None or Default)", s));
  }
  if (const Val p = spec["startupPolicy"]; p.present()) {
    const std::string s = p.scalar();
    if (!one_of(s, {"LeaderCreated", "LeaderReady"}))
      p.fail(fmt::format("unknown startupPolicy '{}' (expected LeaderCreated or LeaderReady)", s));
    if (s == "LeaderReady")
      unmodelled(p, "the workers are placed with their leader, as one gang, not once the leader is Ready");
  }
  if (const Val sg = lwt["subGroupPolicy"]; sg.present()) {
    sg.only_keys({"subGroupPolicyType", "subGroupSize"});
    if (const Val t = sg["subGroupPolicyType"]; t.present() && !one_of(t.scalar(), {"LeaderWorker", "LeaderExcluded"}))
      t.fail(fmt::format("unknown subGroupPolicyType '{}' (expected LeaderWorker or LeaderExcluded)", t.scalar()));
    if (const auto sub = sg["subGroupSize"].opt_integer(1, std::numeric_limits<int32_t>::max()); sub && size % *sub != 0 && (size - 1) % *sub != 0)
      sg["subGroupSize"].fail("size or size - 1 must be divisible by subGroupSize");
    unmodelled(sg, "the subgroups get no labels of their own and no subgroup-exclusive-topology");
  }
  // Exclusive placement: the webhook gives every pod a required pod affinity to its own group and a
  // required anti-affinity to every other group, both on the annotation's topology key
  // (SetExclusiveAffinities); the scheduler's InterPodAffinity then does the rest.
  const Val annotations = meta["annotations"];
  std::string exclusive_key;
  if (const Val ex = annotations[kLwsExclusiveTopologyAnnotation]; ex.present()) {
    exclusive_key = ex.scalar();
    if (exclusive_key.empty()) ex.fail("an empty topology key");
  }
  if (const Val sub = annotations[kLwsSubGroupExclusiveTopologyAnnotation]; sub.present()) {
    if (!lwt["subGroupPolicy"]["subGroupSize"].present())
      sub.fail("cannot have subgroup-exclusive-topology without subGroupSize set");
    unmodelled(sub, "the subgroups are not confined to a domain each");
  }
  const Val wt = lwt["workerTemplate"];
  if (!wt.present()) wt.fail("missing workerTemplate");
  PodTemplate worker = pod_template(wt["metadata"], wt["spec"], ns);
  const Val lt = lwt["leaderTemplate"];  // absent: the leader is made from workerTemplate
  PodTemplate leader = lt.present() ? pod_template(lt["metadata"], lt["spec"], ns) : worker;
  if (const Val q = meta["labels"]["kueue.x-k8s.io/queue-name"]; q.present())
    unmodelled(q, "the groups are placed without Kueue's admission");
  for (PodTemplate* t : {&leader, &worker})
    if (find_label(t->pod.labels, kPodGroupLabel) != nullptr)
      feature(fmt::format("LeaderWorkerSet template label {}", kPodGroupLabel), v["metadata"]["name"],
              "each group of the LeaderWorkerSet is its own pod group");
  if (out_.pods.size() + static_cast<size_t>(replicas * size) > limits_.max_pods)  // before building any of them
    replicas_v.fail(limit_message(limits_.max_pods, "pods, counting every controller's replicas", "ObjectLimits::max_pods"));
  const auto set_label = [](Labels& labels, const std::string& key, std::string value) {
    for (auto& [k, val] : labels)
      if (k == key) return void(val = std::move(value));
    labels.emplace_back(key, std::move(value));
  };
  for (int64_t g = 0; g < replicas; ++g) {
    const std::string leader_name = fmt::format("{}-{}", name, g);
    const std::string group_key = sha1_hex(ns + "/" + leader_name);  // genGroupUniqueKey
    PodGroup group;
    group.namespace_name = ns;
    group.name = leader_name;
    group.min_member = static_cast<int32_t>(size);
    kueue_.add_pod_group(std::move(group), name_at);
    for (int64_t w = 0; w < size; ++w) {
      PodTemplate t = w == 0 ? leader : worker;
      Labels& labels = t.pod.labels;
      set_label(labels, kLwsNameLabel, name);
      set_label(labels, kLwsGroupIndexLabel, std::to_string(g));
      set_label(labels, kLwsWorkerIndexLabel, std::to_string(w));
      set_label(labels, kLwsGroupKeyLabel, group_key);
      set_label(labels, kPodGroupLabel, leader_name);
      if (!exclusive_key.empty()) {
        PodAffinityTerm same;
        same.label_selector.match_expressions = {{kLwsGroupKeyLabel, "In", {group_key}}};
        same.topology_key = exclusive_key;
        t.pod.constraints.required_affinity.push_back(std::move(same));
        PodAffinityTerm others;
        others.label_selector.match_expressions = {{kLwsGroupKeyLabel, "Exists", {}}, {kLwsGroupKeyLabel, "NotIn", {group_key}}};
        others.topology_key = exclusive_key;
        t.pod.constraints.required_anti_affinity.push_back(std::move(others));
      }
      add_pod(t, w == 0 ? leader_name : fmt::format("{}-{}", leader_name, w), name_at, PodOwner{"LeaderWorkerSet", name});
    }
  }
}

// apps/v1 DaemonSet: kept as a template (model/daemon_set.h); its pods are made per node once the
// nodes are known (sched/daemon_set.h). Checked as the API server validates it: spec.selector is
// required and must select the template's labels.
void Reader::daemon_set(const Val& v) {
  DaemonSet ds;
  ds.name = metadata_name(v);
  ds.namespace_name = metadata_namespace(v);
  if (!daemon_set_keys_.insert(ds.namespace_name + "/" + ds.name).second)
    v["metadata"]["name"].fail(fmt::format("duplicate DaemonSet '{}' in namespace '{}'", ds.name, ds.namespace_name));
  const Val spec = v["spec"];
  spec.require_map();
  const Val tmpl = spec["template"];
  if (!tmpl.present()) tmpl.fail("missing pod template");
  const Val selector = spec["selector"];
  if (!selector.present()) selector.fail("Required value: a DaemonSet needs a selector (the API server refuses it)");
  PodTemplate t = pod_template(tmpl["metadata"], tmpl["spec"], ds.namespace_name);
  const LabelSelector s = label_selector(selector);
  if (s.match_labels.empty() && s.match_expressions.empty())
    selector.fail("Invalid value: empty selector is invalid for daemonset (the API server refuses it)");
  if (!label_selector_matches(s, t.pod.labels))
    (tmpl["metadata"]["labels"].present() ? tmpl["metadata"]["labels"] : tmpl)
        .fail("Invalid value: `selector` does not match template `labels` (the API server refuses the DaemonSet)");
  ds.host_network = tmpl["spec"]["hostNetwork"].boolean(false);
  ds.pod = std::move(t.pod);
  add_daemon_pod_tolerations(ds.pod, ds.host_network);
  daemon_pending_.push_back({t.explicit_priority, t.explicit_policy, v.source().file, t.class_position, t.class_field});
  out_.daemon_sets.push_back(std::move(ds));
  out_.daemon_set_sources.push_back(position_of(v["metadata"]["name"]));
}

void Reader::priority_class(const Val& v) {
  PriorityClassSpec pc;
  pc.name = metadata_name(v);
  if (!class_names_.insert(pc.name).second) v["metadata"]["name"].fail(fmt::format("duplicate PriorityClass '{}'", pc.name));
  const Val value = v["value"];
  if (!value.present()) value.fail("required field is missing");
  pc.value = static_cast<int32_t>(value.integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  pc.global_default = v["globalDefault"].boolean(false);
  // As the API server validates it: a user-defined class is at most 1000000000; "system-" names are
  // reserved for the built-in classes, with their values (e.g. from `kubectl get priorityclass -o yaml`).
  const std::string rule = fmt::format(
      "a user-defined PriorityClass may not exceed {}; only the built-in system-cluster-critical ({}) and "
      "system-node-critical ({}) are higher, and names starting with 'system-' are reserved for them",
      kMaxUserPriority, kSystemPriorityClasses[0].value, kSystemPriorityClasses[1].value);
  if (pc.name.starts_with("system-")) {
    const PriorityClassSpec* builtin = nullptr;
    for (const auto& sys : kSystemPriorityClasses)
      if (sys.name == pc.name) builtin = &sys;
    if (builtin == nullptr) v["metadata"]["name"].fail(fmt::format("'{}' is a reserved name: {}", pc.name, rule));
    if (pc.value != builtin->value)
      value.fail(fmt::format("{} must have value {}, got {}: {}", pc.name, builtin->value, pc.value, rule));
    if (pc.global_default) v["globalDefault"].fail(fmt::format("{} cannot be the global default", pc.name));
  } else if (pc.value > kMaxUserPriority) {
    value.fail(fmt::format("value {} is above {}: {}", pc.value, kMaxUserPriority, rule));
  }
  if (pc.global_default)
    for (const auto& other : out_.priority_classes)
      if (other.global_default)
        v["globalDefault"].fail(fmt::format("PriorityClass '{}' is already the global default", other.name));
  const Val policy = v["preemptionPolicy"];
  pc.preemption_policy = policy.str("PreemptLowerPriority");
  if (!valid_preemption_policy(pc.preemption_policy))
    policy.fail(fmt::format("unknown preemptionPolicy '{}' (expected PreemptLowerPriority or Never)", pc.preemption_policy));
  out_.priority_classes.push_back(std::move(pc));
}

void Reader::resource_quota(const Val& v) {
  admit::ResourceQuotaSpec q;
  q.name = metadata_name(v);
  q.namespace_name = metadata_namespace(v);
  if (!quota_keys_.insert(q.namespace_name + "/" + q.name).second)
    v["metadata"]["name"].fail(fmt::format("duplicate ResourceQuota '{}' in namespace '{}'", q.name, q.namespace_name));
  const Val spec = v["spec"];
  spec["hard"].each_entry([&](const std::string& key, const Val& val) {
    if (key == "requests.nvidia.com/gpu") q.requests_gpu = resource_amount(val, ResKind::kDevice);
    else if (key == "limits.nvidia.com/gpu") q.limits_gpu = resource_amount(val, ResKind::kDevice);
    else if (key == "requests.cpu") q.requests_cpu_milli = resource_amount(val, ResKind::kCpu);
    else if (key == "requests.memory") q.requests_memory_bytes = resource_amount(val, ResKind::kMemory);
    else if (key == "limits.cpu") q.limits_cpu_milli = resource_amount(val, ResKind::kCpu);
    else if (key == "limits.memory") q.limits_memory_bytes = resource_amount(val, ResKind::kMemory);
    else if (key == "cpu") q.cpu_milli = resource_amount(val, ResKind::kCpu);
    else if (key == "memory") q.memory_bytes = resource_amount(val, ResKind::kMemory);
    else if (key == "pods") q.pods = resource_amount(val, ResKind::kDevice);
    else {
      val.quantity();
      q.other[key] = val.scalar();
    }
    // Kubernetes accepts any resource name here (e.g. a typo such as requests.cpuu): say which ones
    // never limit a pod here.
    if (!admit::charged_from_pod(key)) {
      auto& [quotas, first] = unenforced_[key];
      if (quotas++ == 0) {
        const auto [line, column] = val.position();
        first = fmt::format("{}:{}:{}", val.source().file, line, column);
      }
    }
  });
  const Val scopes = spec["scopes"];
  for (size_t i = 0, n = scopes.size(); i < n; ++i) {
    const Val scope = scopes.at(i);
    q.scopes.push_back(scope.scalar());
    check_quota_scope(scope, q.scopes.back());
  }
  const Val exprs = spec["scopeSelector"]["matchExpressions"];
  for (size_t i = 0, n = exprs.size(); i < n; ++i) {
    q.scope_selector.push_back(requirement(exprs.at(i), false, nullptr, "scopeName"));
    check_quota_scope(exprs.at(i)["scopeName"], q.scope_selector.back().key);
  }
  out_.quotas.push_back(std::move(q));
}

// policy/v1 PodDisruptionBudget (validation as pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec:
// ValidatePositiveIntOrPercent, IsNotMoreThan100Percent; minAvailable and maxUnavailable exclusive).
void Reader::pod_disruption_budget(const Val& v) {
  PodDisruptionBudget b;
  b.name = metadata_name(v);
  b.namespace_name = metadata_namespace(v);
  for (const PodDisruptionBudget& other : out_.pod_disruption_budgets)
    if (other.name == b.name && other.namespace_name == b.namespace_name)
      v["metadata"]["name"].fail(fmt::format("duplicate PodDisruptionBudget '{}' in namespace '{}'", b.name, b.namespace_name));
  const Val spec = v["spec"];
  spec.require_map();
  const Val selector = spec["selector"];
  b.has_selector = selector.present();
  if (b.has_selector) b.selector = label_selector(selector);
  const Val min = spec["minAvailable"], max = spec["maxUnavailable"];
  if (min.present() && max.present()) max.fail("minAvailable and maxUnavailable cannot both be set");
  if (!min.present() && !max.present()) spec.fail("one of minAvailable or maxUnavailable is required");
  // intstr's integer is an int32; any count is valid.
  if (min.present()) b.min_available = detail::int_or_percent(min, std::numeric_limits<int32_t>::max());
  if (max.present()) b.max_unavailable = detail::int_or_percent(max, std::numeric_limits<int32_t>::max());
  const Val policy = spec["unhealthyPodEvictionPolicy"];
  b.unhealthy_pod_eviction_policy = policy.str("IfHealthyBudget");
  if (!one_of(b.unhealthy_pod_eviction_policy, {"IfHealthyBudget", "AlwaysAllow"}))
    policy.fail(fmt::format("unknown unhealthyPodEvictionPolicy '{}' (expected IfHealthyBudget or AlwaysAllow)",
                            b.unhealthy_pod_eviction_policy));
  out_.pod_disruption_budgets.push_back(std::move(b));
}

void Reader::config_map(const Val& v) {
  const std::string name = metadata_name(v);
  const std::string ns = metadata_namespace(v);
  bool found = false;
  v["data"].each_entry([&](const std::string& key, const Val& value) {
    if (!value.present()) return;
    if (!value.is_scalar()) value.fail(fmt::format("expected a string, got {}", value.type()));
    found |= embedded_config(value, ns, name, key);
  });
  if (!found) skip("ConfigMap", v, "no device-plugin or mig-parted config in its data");
}

bool Reader::embedded_config(const Val& value, const std::string& ns, const std::string& cm, const std::string& key) {
  const std::string& text = value.scalar();
  Source src;
  src.file = value.source().file;
  src.embedded = true;
  const auto [outer_line, outer_column] = value.position();
  src.fallback.line = outer_line - 1;
  src.fallback.column = outer_column - 1;
  // A literal block scalar (`|`): its content starts on the next line at the block's indentation.
  if (!value.source().embedded && outer_line > 0) {
    size_t pos = 0;
    for (int l = 1; l < outer_line && pos != std::string_view::npos; ++l) {
      pos = text_.find('\n', pos);
      if (pos != std::string_view::npos) ++pos;
    }
    if (pos != std::string_view::npos && pos + outer_column - 1 < text_.size() && text_[pos + outer_column - 1] == '|') {
      size_t line_start = text_.find('\n', pos);
      while (line_start != std::string_view::npos) {
        ++line_start;
        const size_t end = std::min(text_.find('\n', line_start), text_.size());
        const std::string_view line = text_.substr(line_start, end - line_start);
        const size_t indent = line.find_first_not_of(' ');
        if (indent != std::string_view::npos && line[indent] != '\r') {
          src.exact = true;
          src.line_offset = outer_line;  // 0-based index of the line after the `|`
          src.col_offset = static_cast<int>(indent);
          break;
        }
        line_start = end == text_.size() ? std::string_view::npos : end;
      }
    }
  }
  std::vector<detail::YamlNode> docs;
  try {
    docs = detail::load_documents(text, src, value.path());
  } catch (const InputError&) {
    // Not YAML: an unrelated entry, unless it is evidently meant as one of our configs.
    if (text.find("mig-configs") == std::string::npos && text.find("timeSlicing") == std::string::npos &&
        text.find("mps") == std::string::npos)
      return false;
    throw;
  }
  if (docs.empty()) return false;
  const Val r(docs.front(), value.path(), src);
  if (!r.is_map()) return false;
  ConfigOrigin origin;
  origin.file = src.file;
  origin.line = outer_line;
  origin.configmap_namespace = ns;
  origin.configmap_name = cm;
  origin.data_key = key;
  return nvidia_config(r, std::move(origin));
}

bool Reader::nvidia_config(const Val& v, ConfigOrigin origin) {
  if (!v["version"].present()) return false;
  if (v["mig-configs"].present()) {
    mig_parted_config(v, std::move(origin));
    return true;
  }
  if (v["sharing"].present() || v["flags"].present()) {
    device_plugin_config(v, std::move(origin));
    return true;
  }
  return false;
}

void check_version(const Val& v) {
  const Val version = v["version"];
  const std::string s = version.scalar();
  if (s != "v1") version.fail(fmt::format("unsupported version '{}' (expected v1)", s));
}

void Reader::device_plugin_config(const Val& v, ConfigOrigin origin) {
  check_version(v);
  TimeSlicingConfig c;
  c.origin = std::move(origin);
  const Val strategy = v["flags"]["migStrategy"];
  c.mig_strategy = strategy.str();
  if (!c.mig_strategy.empty() && !one_of(c.mig_strategy, {"none", "single", "mixed"}))
    strategy.fail(fmt::format("unknown migStrategy '{}' (expected none, single or mixed)", c.mig_strategy));
  const Val sharing = v["sharing"];
  // sharing.timeSlicing and sharing.mps share one shape (ReplicatedResources); the device plugin
  // (api/config/v1/sharing.go SharingStrategy) silently prefers MPS when both have resources, its
  // README calls them mutually exclusive: gpufleet refuses the pair.
  const Val mps = sharing["mps"];
  const Val ts = mps.present() ? mps : sharing["timeSlicing"];
  if (mps.present()) {
    if (sharing["timeSlicing"]["resources"].size() > 0)
      mps.fail("sharing.timeSlicing and sharing.mps are mutually exclusive (the device plugin would use MPS only)");
    c.strategy = GpuSharingStrategy::kMps;
    // cmd/nvidia-device-plugin/main.go validateFlags: "using --mig-strategy=mixed is not supported with MPS".
    if (c.mig_strategy == "mixed") strategy.fail("using migStrategy mixed is not supported with MPS (sharing.mps)");
  }
  c.rename_by_default = ts["renameByDefault"].boolean(false);
  // Under MPS the device plugin defaults failRequestsGreaterThanOne to true (api/config/v1/config.go).
  c.fail_requests_greater_than_one = ts["failRequestsGreaterThanOne"].boolean(mps.present());
  const Val resources = ts["resources"];
  if (mps.present() && resources.size() == 0) mps.fail("sharing.mps needs resources (e.g. [{name: nvidia.com/gpu, replicas: 4}])");
  for (size_t i = 0, n = resources.size(); i < n; ++i) {
    const Val r = resources.at(i);
    TimeSlicingResource res;
    res.name = r["name"].required_str();
    const Val replicas = r["replicas"];
    if (!replicas.present()) replicas.fail("required field is missing");
    res.replicas = static_cast<int32_t>(replicas.integer(1, 1 << 20));
    // The device plugin refuses fewer than 2 MPS replicas at config load (NVIDIA/k8s-device-plugin#1548).
    if (mps.present() && res.replicas < 2) replicas.fail("MPS needs at least 2 replicas (the device plugin refuses 1)");
    res.rename = r["rename"].str();
    const Val devices = r["devices"];
    if (devices.is_scalar()) {
      if (devices.scalar() != "all") devices.fail(fmt::format("expected 'all' or a list, got '{}'", devices.scalar()));
    } else {
      res.devices = string_list(devices);
    }
    c.resources.push_back(std::move(res));
  }
  out_.time_slicing_configs.push_back(std::move(c));
}

void Reader::mig_parted_config(const Val& v, ConfigOrigin origin) {
  check_version(v);
  MigPartedConfig c;
  c.origin = std::move(origin);
  const Val configs = v["mig-configs"];
  if (!configs.is_map()) configs.fail("expected a mapping of config name to a list of device groups");
  configs.each_entry([&](const std::string& name, const Val& groups) {
    MigConfig mc;
    mc.name = name;
    if (!groups.is_seq()) groups.fail("expected a list of device groups");
    for (size_t i = 0, n = groups.size(); i < n; ++i) {
      const Val g = groups.at(i);
      MigDeviceGroup group;
      const Val devices = g["devices"];
      if (!devices.present()) devices.fail("required field is missing");
      if (devices.is_scalar()) {
        if (devices.scalar() != "all") devices.fail(fmt::format("expected 'all' or a list of GPU indices, got '{}'", devices.scalar()));
        group.all_devices = true;
      } else {
        for (size_t d = 0, nd = devices.size(); d < nd; ++d) group.devices.push_back(static_cast<int32_t>(devices.at(d).integer(0, 1023)));
      }
      const Val filter = g["device-filter"];
      if (filter.is_scalar()) group.device_filter.push_back(filter.scalar());
      else group.device_filter = string_list(filter);
      const Val enabled = g["mig-enabled"];
      if (!enabled.present()) enabled.fail("required field is missing");
      group.mig_enabled = enabled.boolean(false);
      g["mig-devices"].each_entry([&](const std::string& profile, const Val& count) {
        group.mig_devices[profile] = static_cast<int32_t>(count.integer(0, 64));
      });
      if (!group.mig_enabled && !group.mig_devices.empty())
        g["mig-devices"].fail("mig-devices given with mig-enabled: false");
      mc.groups.push_back(std::move(group));
    }
    c.configs.push_back(std::move(mc));
  });
  out_.mig_parted_configs.push_back(std::move(c));
}

void Reader::resolve(Pod& p, const PriorityPending& info) const {
  const PriorityClassSpec* global = nullptr;
  for (const auto& pc : out_.priority_classes)
    if (pc.global_default) global = &pc;
  auto find_class = [&](const std::string& name) -> const PriorityClassSpec* {
    for (const auto& pc : out_.priority_classes)
      if (pc.name == name) return &pc;
    for (const auto& pc : kSystemPriorityClasses)
      if (pc.name == name) return &pc;
    return nullptr;
  };
  {
    const PriorityClassSpec* cls = nullptr;
    if (!p.priority_class_name.empty()) {
      cls = find_class(p.priority_class_name);
      if (!cls && !info.explicit_priority)
        throw InputError(info.file, info.class_position.first, info.class_field,
                         fmt::format("unknown PriorityClass '{}' (not among the inputs)", p.priority_class_name),
                         info.class_position.second);
    } else if (global && !info.explicit_priority) {
      cls = global;
      p.priority_class_name = global->name;
    }
    if (cls && !info.explicit_priority) p.priority = cls->value;
    if (cls && !info.explicit_policy) p.preempt_lower_priority = cls->preemption_policy != "Never";
  }
}

K8sObjects Reader::finish() {
  apply_node_resource_topologies(topologies_, out_.nodes, out_.warnings);
  // Resolve priorities as the Priority admission plugin does.
  for (size_t i = 0; i < out_.pods.size(); ++i) resolve(out_.pods[i], pending_[i]);
  for (size_t i = 0; i < out_.daemon_sets.size(); ++i) resolve(out_.daemon_sets[i].pod, daemon_pending_[i]);
  kueue_.finish(out_);  // after the pods: gang members, queued jobs' priorities
  add_compute_domain_templates(out_.dra);  // readers/k8s/compute_domain_yaml.h
  for (std::string& w : check_counter_references(out_.dra, counter_references_)) out_.warnings.push_back(std::move(w));  // dra_yaml.h

  for (const auto& [kind, first] : skipped_)
    out_.warnings.push_back(fmt::format("skipped {} {} object(s): {} (first at {})", out_.skipped_kinds[kind], kind,
                                        first.second, first.first));
  for (const NotModelled& f : out_.not_modelled)
    out_.warnings.push_back(fmt::format("{}:{}:{}: field '{}': {} is not modelled ({} object(s)): {}", f.first.file, f.first.line,
                                        f.first.column, f.first.field, f.what, f.objects, f.consequence));
  for (const auto& [resource, where] : unenforced_)
    out_.warnings.push_back(fmt::format("ResourceQuota spec.hard resource '{}' is not enforced by gpufleet: no pod is "
                                        "charged for it ({} quota(s), first at {})",
                                        resource, where.first, where.second));
  return std::move(out_);
}

bool k8s_extension(const std::filesystem::path& p) { return is_k8s_input_name(p.filename().string()); }

}  // namespace

NodeSelectorTerm detail::read_node_selector_term(const detail::Field& v) { return node_selector_term(v, nullptr); }

// The rules the Kueue reader reuses (readers/k8s/kueue_yaml.h).
Labels detail::read_labels(const Val& v) { return valid_labels(v); }
Taint detail::read_taint(const Val& v) { return taint(v); }
Toleration detail::read_toleration(const Val& v) { return toleration(v); }
Taint detail::read_device_taint(const Val& v) { return taint(v, kDeviceTaintEffects); }
Toleration detail::read_device_toleration(const Val& v) { return toleration(v, kDeviceTaintEffects); }
LabelSelector detail::read_label_selector(const Val& v) { return label_selector(v); }

bool is_k8s_input_name(std::string_view file_name) {
  const std::string ext = std::filesystem::path(file_name).extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

K8sObjects parse_k8s_text(std::string_view text, const std::string& source_name, const ObjectLimits& limits) {
  Reader r(limits);
  r.parse_text(text, source_name);
  return r.finish();
}

struct PreloadedK8sText::Loaded {
  std::string text;  // without a byte-order mark
  std::string source_name;
  std::vector<detail::YamlNode> docs;
};

PreloadedK8sText::PreloadedK8sText(std::string text, std::string source_name) {
  auto loaded = std::make_shared<Loaded>();
  loaded->text = std::string(detail::strip_bom(text));
  loaded->source_name = std::move(source_name);
  Source src;
  src.file = loaded->source_name;
  loaded->docs = detail::load_documents(loaded->text, src);
  loaded_ = std::move(loaded);
}

PreloadedK8sText::~PreloadedK8sText() = default;

K8sObjects parse_k8s_text_after(const PreloadedK8sText& first, std::string_view text, const std::string& source_name,
                                const ObjectLimits& limits) {
  Reader r(limits);
  const auto& docs = first.loaded().docs;
  // A first text without objects reads as nothing (joined to `text` it would not make the whole "empty").
  if (std::any_of(docs.begin(), docs.end(), [](const detail::YamlNode& doc) { return doc.type != detail::YamlType::kNull; }))
    r.parse_documents(docs, first.loaded().text, first.loaded().source_name);
  r.parse_text(text, source_name);
  return r.finish();
}

std::vector<std::string> k8s_input_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw InputError(path, 0, "", "no such file or directory");
    if (!fs::is_directory(st)) {
      out.push_back(path);
      continue;
    }
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
      if (std::error_code file_ec; e.is_regular_file(file_ec) && k8s_extension(e.path())) files.push_back(e.path());
      else if (file_ec && k8s_extension(e.path()))  // e.g. a symlink loop
        throw InputError(e.path().string(), 0, "", fmt::format("cannot read: {}", file_ec.message()));
    if (ec) throw InputError(path, 0, "", fmt::format("cannot list directory: {}", ec.message()));
    if (files.empty()) throw InputError(path, 0, "", "directory has no *.yaml, *.yml or *.json file");
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    for (const fs::path& f : files) out.push_back(f.string());
  }
  return out;
}

K8sObjects read_k8s_inputs(const std::vector<std::string>& paths) {
  Reader r(kObjectLimits);
  for (const std::string& file : k8s_input_files(paths)) r.parse_text(read_yaml_file(file), file);
  return r.finish();
}

}  // namespace gpufleet::io
