// ResourceQuota admission (see resource_quota.h for the semantics and their upstream sources).
#include "admit/resource_quota.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "model/quantity.h"

namespace gpufleet::admit {
namespace {

constexpr int64_t kMilliPerUnit = 1000;
constexpr std::string_view kRequestsPrefix = "requests.";

// What a hard entry charges, from pods.go podComputeUsageHelper (plus limits = requests here).
enum class Charges { kPodCount, kCpu, kMemory, kGpuDevices, kExtended };

struct Kind {
  Charges charges;
  QuantityUnit unit;
};

// helper.IsNativeResource: no domain, or a kubernetes.io domain.
bool is_native(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return true;
  const std::string_view domain = name.substr(0, slash);
  return domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
}

// The charge of a hard entry, or nullopt when the model cannot charge it.
std::optional<Kind> classify(std::string_view resource) {
  if (resource == "pods" || resource == "count/pods") return Kind{Charges::kPodCount, QuantityUnit::kMilli};
  if (resource == "cpu" || resource == "requests.cpu" || resource == "limits.cpu")
    return Kind{Charges::kCpu, QuantityUnit::kMilli};
  if (resource == "memory" || resource == "requests.memory" || resource == "limits.memory")
    return Kind{Charges::kMemory, QuantityUnit::kBytes};
  if (resource == "requests.nvidia.com/gpu" || resource == "limits.nvidia.com/gpu")
    return Kind{Charges::kGpuDevices, QuantityUnit::kMilli};
  // pods.go isExtendedResourceNameForQuota: requests.<extended resource>.
  if (resource.starts_with(kRequestsPrefix) && !is_native(resource.substr(kRequestsPrefix.size())))
    return Kind{Charges::kExtended, QuantityUnit::kMilli};
  return std::nullopt;
}

// pods.go validationSet: quota'ing these requires the pod to set them.
bool in_validation_set(std::string_view r) {
  return r == "cpu" || r == "memory" || r == "requests.cpu" || r == "requests.memory" || r == "limits.cpu" ||
         r == "limits.memory";
}

// Devices a pod takes from the nvidia.com/gpu resource: num_gpu for whole GPUs, 1 for a share.
int64_t gpu_devices(const Pod& pod) { return pod.is_gpu_pod() ? pod.num_gpu : 0; }

// The pod's usage of `resource`, or nullopt when the pod does not request it (the key is absent
// from upstream's usage list: it is then neither charged nor printed).
std::optional<int64_t> pod_usage(const Pod& pod, const ExtendedRequests& extended, const std::string& resource,
                                 Charges charges) {
  switch (charges) {
    case Charges::kPodCount:
      return kMilliPerUnit;
    case Charges::kCpu:
      if (pod.cpu_milli <= 0) return std::nullopt;
      return pod.cpu_milli;
    case Charges::kMemory:
      if (pod.memory_bytes <= 0) return std::nullopt;
      return pod.memory_bytes;
    case Charges::kGpuDevices:
      if (gpu_devices(pod) == 0) return std::nullopt;
      return gpu_devices(pod) * kMilliPerUnit;
    case Charges::kExtended: {
      // Device-plugin resources the Pod model carries (nvidia.com/gpu.shared, nvidia.com/mig-<profile>),
      // else the extras.
      const std::string_view name = std::string_view(resource).substr(kRequestsPrefix.size());
      if (name == kGpuSharedResource && pod.shared_replicas > 0) return int64_t{pod.shared_replicas} * kMilliPerUnit;
      if (name.starts_with(kMigResourcePrefix))
        for (const MigRequest& r : pod.mig_requests)
          if (name.substr(kMigResourcePrefix.size()) == r.profile) return int64_t{r.count} * kMilliPerUnit;
      const auto it = extended.find(resource.substr(kRequestsPrefix.size()));
      if (it == extended.end()) return std::nullopt;
      return it->second * kMilliPerUnit;
    }
  }
  return std::nullopt;
}

// core/v1 ResourceQuotaScope* as podMatchesScopeFunc evaluates them.
bool scope_matches(const Pod& pod, const std::string& scope, const std::string& op,
                   const std::vector<std::string>& values) {
  if (scope == "Terminating") return false;  // no activeDeadlineSeconds in the model
  if (scope == "NotTerminating") return true;
  if (scope == "BestEffort") return pod.qos == QosClass::kBE;
  if (scope == "NotBestEffort") return pod.qos != QosClass::kBE;
  if (scope == "PriorityClass") {
    // Exists: the pod names a class. Otherwise a label selector on {PriorityClass: <class>}, the
    // label being absent when the pod names none.
    const bool present = !pod.priority_class_name.empty();
    const bool listed = std::find(values.begin(), values.end(), pod.priority_class_name) != values.end();
    if (op == "Exists") return present;
    if (op == "DoesNotExist") return !present;
    if (op == "In") return present && listed;
    if (op == "NotIn") return !present || !listed;
    return false;
  }
  if (scope == "CrossNamespacePodAffinity") {
    // podMatchesScopeFunc / usesCrossNamespacePodAffinity: any pod (anti-)affinity term, required or
    // preferred, that names namespaces.
    for (const auto* terms : {&pod.constraints.required_anti_affinity, &pod.constraints.required_affinity})
      for (const auto& t : *terms)
        if (!t.namespaces.empty()) return true;
    for (const auto* terms : {&pod.constraints.preferred_anti_affinity, &pod.constraints.preferred_affinity})
      for (const auto& t : *terms)
        if (!t.term.namespaces.empty()) return true;
    return false;
  }
  return false;
}

bool scopes_match(const Pod& pod, const ResourceQuota& q) {
  for (const auto& s : q.scopes)
    if (!scope_matches(pod, s, "Exists", {})) return false;
  for (const auto& r : q.scope_selector)
    if (!scope_matches(pod, r.key, r.operator_, r.values)) return false;
  return true;
}

std::string pod_namespace(const Pod& pod) { return pod.namespace_name.empty() ? "default" : pod.namespace_name; }

// prettyPrint: "r1=q1,r2=q2", in the (sorted) order given.
template <typename F>
std::string pretty(const std::vector<size_t>& idx, F&& text) {
  std::string out;
  for (size_t i : idx) {
    if (!out.empty()) out += ',';
    out += text(i);
  }
  return out;
}

}  // namespace

bool charged_from_pod(std::string_view resource) {
  const auto kind = classify(resource);
  if (!kind) return false;
  if (kind->charges != Charges::kExtended) return true;
  const std::string_view name = resource.substr(kRequestsPrefix.size());
  return name == kGpuSharedResource || name.starts_with(kMigResourcePrefix);
}

std::vector<std::string> quota_differences(const std::vector<ResourceQuota>& quotas) {
  std::vector<std::string> out;
  for (const ResourceQuota& q : quotas)
    if (q.hard.count("limits.nvidia.com/gpu"))
      out.push_back(fmt::format("ResourceQuota {}/{}: limits.nvidia.com/gpu is charged each pod's nvidia.com/gpu request; "
                                "Kubernetes charges nothing to limits.<extended resource> entries (only requests.nvidia.com/gpu "
                                "limits GPUs there)",
                                q.namespace_name, q.name));
  return out;
}

ResourceQuota from_spec(const ResourceQuotaSpec& spec) {
  ResourceQuota q;
  q.namespace_name = spec.namespace_name;
  q.name = spec.name;
  const auto put = [&](const char* resource, const std::optional<int64_t>& v, QuantityUnit unit, bool count) {
    if (v) q.hard[resource] = count ? std::to_string(*v) : format_quantity(*v, unit);
  };
  put("requests.nvidia.com/gpu", spec.requests_gpu, QuantityUnit::kMilli, true);
  put("limits.nvidia.com/gpu", spec.limits_gpu, QuantityUnit::kMilli, true);
  put("requests.cpu", spec.requests_cpu_milli, QuantityUnit::kMilli, false);
  put("requests.memory", spec.requests_memory_bytes, QuantityUnit::kBytes, false);
  put("limits.cpu", spec.limits_cpu_milli, QuantityUnit::kMilli, false);
  put("limits.memory", spec.limits_memory_bytes, QuantityUnit::kBytes, false);
  put("cpu", spec.cpu_milli, QuantityUnit::kMilli, false);
  put("memory", spec.memory_bytes, QuantityUnit::kBytes, false);
  put("pods", spec.pods, QuantityUnit::kMilli, true);
  for (const auto& [k, v] : spec.other) q.hard[k] = v;
  q.scopes = spec.scopes;
  q.scope_selector = spec.scope_selector;
  return q;
}

std::vector<ResourceQuota> from_specs(const std::vector<ResourceQuotaSpec>& specs) {
  std::vector<ResourceQuota> out;
  out.reserve(specs.size());
  for (const auto& s : specs) out.push_back(from_spec(s));
  return out;
}

QuotaTracker::QuotaTracker(const std::vector<ResourceQuotaSpec>& specs) : QuotaTracker(from_specs(specs)) {}

QuotaTracker::QuotaTracker(std::vector<ResourceQuota> quotas) {
  for (auto& q : quotas) {
    Entry e;
    for (const auto& [resource, text] : q.hard) {  // std::map: already sorted by resource
      const auto kind = classify(resource);
      if (!kind) {
        e.untracked.push_back(resource);
        continue;
      }
      int64_t hard = 0;
      try {
        const Quantity qty = Quantity::parse(text);
        if (qty.is_negative()) throw std::invalid_argument("must be non-negative");
        hard = kind->unit == QuantityUnit::kBytes ? qty.value() : qty.milli();
      } catch (const std::invalid_argument& err) {
        throw std::invalid_argument(fmt::format("ResourceQuota {}/{}: spec.hard.{}: invalid quantity '{}': {}",
                                                q.namespace_name, q.name, resource, text, err.what()));
      }
      e.tracked.push_back(Tracked{resource, kind->unit, hard, 0});
    }
    auto& list = by_namespace_[q.namespace_name];
    for (const auto& other : list)
      if (other.spec.name == q.name)
        throw std::invalid_argument(fmt::format("duplicate ResourceQuota {}/{}", q.namespace_name, q.name));
    e.spec = std::move(q);
    list.push_back(std::move(e));
  }
}

bool QuotaTracker::has_quota(std::string_view namespace_name) const {
  return by_namespace_.find(namespace_name) != by_namespace_.end();
}

AdmitResult QuotaTracker::admit(const Pod& pod, const ExtendedRequests& extended) { return check_and_charge(pod, extended, true); }

void QuotaTracker::charge_existing(const Pod& pod, const ExtendedRequests& extended) {
  check_and_charge(pod, extended, false);
}

AdmitResult QuotaTracker::check_and_charge(const Pod& pod, const ExtendedRequests& extended, bool enforce) {
  const std::string ns = pod_namespace(pod);
  auto key = std::make_pair(ns, pod.name);
  if (charged_.contains(key))
    throw std::invalid_argument(fmt::format("pod {}/{} is already admitted against quota", ns, pod.name));
  const auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) return {};
  std::vector<Entry>& quotas = it->second;

  const auto reject = [&](const Entry& e, std::string reason) {
    AdmitResult r;
    r.admitted = false;
    r.quota = e.spec.name;
    r.message = fmt::format("pods \"{}\" is forbidden: {}", pod.name, reason);
    r.reason = std::move(reason);
    return r;
  };

  // generic.Matches: the quota tracks a pod resource (a model-chargeable one: the others charge
  // nothing and constrain nothing) and every scope matches.
  std::vector<size_t> applicable;
  for (size_t i = 0; i < quotas.size(); ++i)
    if (!quotas[i].tracked.empty() && scopes_match(pod, quotas[i].spec)) applicable.push_back(i);

  // Pass 1 (CheckRequest's first loop): Constraints, quota by quota.
  for (size_t i : applicable) {
    if (!enforce) break;
    std::string missing;
    for (const Tracked& t : quotas[i].tracked) {
      if (!in_validation_set(t.resource)) continue;
      if (pod_usage(pod, extended, t.resource, classify(t.resource)->charges)) continue;
      if (!missing.empty()) missing += ',';
      missing += t.resource;
    }
    if (!missing.empty())
      return reject(quotas[i], fmt::format("failed quota: {}: must specify {}", quotas[i].spec.name, missing));
  }

  // Pass 2: requested = usage masked to hard; reject on the first quota whose new usage exceeds.
  std::vector<Charge> charges;
  for (size_t i : applicable) {
    const Entry& e = quotas[i];
    std::vector<size_t> exceeded;
    std::vector<int64_t> requested(e.tracked.size(), 0);
    for (size_t t = 0; t < e.tracked.size(); ++t) {
      const Tracked& tr = e.tracked[t];
      const auto amount = pod_usage(pod, extended, tr.resource, classify(tr.resource)->charges);
      if (!amount) continue;
      requested[t] = *amount;
      charges.push_back(Charge{i, t, *amount});
      if (tr.used + *amount > tr.hard) exceeded.push_back(t);
    }
    if (enforce && !exceeded.empty()) {
      const auto q = [&](size_t t, int64_t v) {
        return fmt::format("{}={}", e.tracked[t].resource, format_quantity(v, e.tracked[t].unit));
      };
      return reject(e, fmt::format("exceeded quota: {}, requested: {}, used: {}, limited: {}", e.spec.name,
                                   pretty(exceeded, [&](size_t t) { return q(t, requested[t]); }),
                                   pretty(exceeded, [&](size_t t) { return q(t, e.tracked[t].used); }),
                                   pretty(exceeded, [&](size_t t) { return q(t, e.tracked[t].hard); })));
    }
  }

  // Every quota admits: charge them all.
  for (const Charge& c : charges) quotas[c.quota].tracked[c.tracked].used += c.amount;
  if (!charges.empty()) charged_.emplace(std::move(key), std::move(charges));
  return {};
}

bool QuotaTracker::release(const Pod& pod) {
  const auto it = charged_.find(std::make_pair(pod_namespace(pod), pod.name));
  if (it == charged_.end()) return false;
  std::vector<Entry>& quotas = by_namespace_.find(it->first.first)->second;
  for (const Charge& c : it->second) quotas[c.quota].tracked[c.tracked].used -= c.amount;
  charged_.erase(it);
  return true;
}

std::vector<QuotaUsage> QuotaTracker::usage(std::string_view namespace_name) const {
  std::vector<QuotaUsage> out;
  const auto it = by_namespace_.find(namespace_name);
  if (it == by_namespace_.end()) return out;
  for (const Entry& e : it->second) {
    QuotaUsage u;
    u.name = e.spec.name;
    for (const Tracked& t : e.tracked) u.resources.push_back(QuotaResourceUsage{t.resource, t.unit, t.used, t.hard});
    u.untracked = e.untracked;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace gpufleet::admit
