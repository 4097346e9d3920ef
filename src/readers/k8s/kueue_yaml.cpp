#include "readers/k8s/kueue_yaml.h"
#include "readers/k8s/k8s_fields.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "readers/formats/input_limits.h"
#include "model/quantity.h"
#include "util/input_error.h"

namespace gpufleet::io::detail {
namespace {

constexpr size_t kMaxPodSets = 8;         // Kueue: Workload spec.podSets MaxItems=8
constexpr size_t kMaxTopologyLevels = 16;  // Kueue: Topology spec.levels MaxItems=16
constexpr size_t kMaxResourceGroups = 16;  // Kueue: ClusterQueue and Cohort spec.resourceGroups MaxItems=16
constexpr int64_t kMaxPodsPerJob = 1'000'000;

SourcePosition pos(const Field& v) {
  const auto [line, column] = v.position();
  return SourcePosition{v.source().file, line, column, v.path()};
}

[[noreturn]] void fail_at(const SourcePosition& p, const std::string& message) {
  throw InputError(p.file, p.line, p.field, message, p.column);
}

std::string api_group(const Field& v) {
  const std::string api = v["apiVersion"].str();
  const size_t slash = api.find('/');
  return slash == std::string::npos ? std::string() : api.substr(0, slash);
}

std::string name_of(const Field& v) { return v["metadata"]["name"].required_str(); }
std::string namespace_of(const Field& v) {
  const std::string ns = v["metadata"]["namespace"].str();
  return ns.empty() ? "default" : ns;
}

// One of `options` (Kueue's enum values), else "unknown <what> 'x' (expected a, b or c)".
size_t enum_value(const Field& v, const char* what, std::initializer_list<const char*> options, size_t def) {
  if (!v.present()) return def;
  const std::string& s = v.scalar();
  size_t i = 0;
  for (const char* o : options) {
    if (s == o) return i;
    ++i;
  }
  std::string list;
  i = 0;
  for (const char* o : options) {
    list += i == 0 ? "" : (i + 1 == options.size() ? " or " : ", ");
    list += o;
    ++i;
  }
  v.fail(fmt::format("unknown {} '{}' (expected {})", what, s, list));
}

// A quota amount in queue::amount_unit_scale units: cpu and nvidia.com/gpu milli, memory bytes,
// anything else whole units.
queue::ResourceAmount amount(const Field& v, const std::string& resource) {
  const Quantity q = v.quantity();  // malformed and negative quantities fail here
  try {
    if (queue::amount_unit_scale(resource) == 1000) return q.milli();
    if (resource == queue::kMemory) return q.value();
    return q.whole();
  } catch (const std::exception& e) {
    v.fail(fmt::format("'{}' is not a valid amount of {}: {}", v.scalar(), resource, e.what()));
  }
}

// fairSharing.weight: a quantity, in thousandths.
int64_t weight_milli(const Field& v) {
  if (!v.present()) return 1000;
  const Quantity q = v.quantity();
  try {
    return q.milli();
  } catch (const std::exception& e) {
    v.fail(e.what());
  }
}

// Go time.ParseDuration ("5m", "1h30m", "300s", "1.5h"), in seconds, non-negative.
double go_duration_s(const Field& v) {
  const std::string& s = v.scalar();
  const auto bad = [&](const char* why) { v.fail(fmt::format("'{}' is not a duration ({}; e.g. 5m, 300s, 1h30m)", s, why)); };
  if (s == "0") return 0;
  if (s.empty()) bad("empty");
  size_t i = 0;
  if (s[0] == '-') bad("negative");
  if (s[0] == '+') ++i;
  if (i == s.size()) bad("no number");
  double total = 0;
  while (i < s.size()) {
    const size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) bad("expected a number");
    double number = 0;
    try {
      size_t used = 0;
      number = std::stod(s.substr(start, i - start), &used);
      if (used != i - start) bad("malformed number");
    } catch (const std::logic_error&) {
      bad("malformed number");
    }
    const size_t unit_start = i;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.') ++i;
    const std::string unit = s.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ns") scale = 1e-9;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") scale = 1e-6;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "s") scale = 1;
    else if (unit == "m") scale = 60;
    else if (unit == "h") scale = 3600;
    else if (unit.empty()) bad("missing unit");
    else bad("unknown unit");
    total += number * scale;
  }
  if (!std::isfinite(total) || total > kMaxSeconds) bad("absurdly large");
  return total;
}

// RFC 3339 (metadata.creationTimestamp, e.g. 2024-05-01T10:00:00Z or with a fraction or an offset),
// in seconds since 1970.
double rfc3339_s(const Field& v) {
  const std::string& s = v.scalar();
  const auto bad = [&] { v.fail(fmt::format("'{}' is not an RFC 3339 time (e.g. 2024-05-01T10:00:00Z)", s)); };
  const auto digits = [&](size_t at, size_t n) -> int64_t {
    if (at + n > s.size()) bad();
    int64_t x = 0;
    for (size_t k = at; k < at + n; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(s[k]))) bad();
      x = x * 10 + (s[k] - '0');
    }
    return x;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':') bad();
  const int64_t y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2), sec = digits(17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) bad();
  size_t i = 19;
  double frac = 0;
  if (s[i] == '.') {
    ++i;
    double scale = 0.1;
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      frac += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) bad();
  }
  int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) {
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    offset = (digits(i + 1, 2) * 60 + digits(i + 4, 2)) * 60 * (s[i] == '-' ? -1 : 1);
  } else {
    bad();
  }
  // Days from 1970-01-01 (H. Hinnant's days_from_civil).
  const int64_t yy = y - (mo <= 2 ? 1 : 0);
  const int64_t era = yy / 400;
  const int64_t yoe = yy - era * 400;
  const int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + doe - 719468;
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + sec - offset) + frac;
}

const std::string* label_value(const Labels& labels, const char* key) { return find_label(labels, key); }

}  // namespace

// ---------------------------------------------------------------------------------------------

struct KueueReader::State {
  State(K8sTemplateParser& t, const ObjectLimits& l) : templates(t), limits(l) {}
  K8sTemplateParser& templates;
  ObjectLimits limits;

  queue::KueueObjects kueue;
  bool has_configuration = false;
  size_t kueue_objects = 0;
  std::set<std::string> flavor_names, cq_names, cohort_names, wpc_names, topology_names, lq_keys;

  struct NameRef {
    std::string name;
    SourcePosition at;
  };
  std::vector<NameRef> flavor_refs;           // flavors[].name of ClusterQueues and Cohorts
  std::map<std::string, queue::ResourceAmount> quota_totals;  // "flavor resource" -> nominal + borrowing limits
  std::vector<SourcePosition> cohort_parent;  // parallel to kueue.cohorts
  std::vector<SourcePosition> lq_cluster_queue;  // parallel to kueue.local_queues
  std::vector<SourcePosition> flavor_topology;   // parallel to kueue.flavors

  struct PodSetPending {
    size_t template_id = 0;
    SourcePosition level_at, slice_level_at;
  };
  struct WorkloadPending {
    std::vector<PodSetPending> pod_sets;
    SourcePosition queue_at;
    std::optional<NameRef> workload_priority_class;
    std::optional<double> creation_s;
  };
  std::vector<queue::Workload> workloads;
  std::vector<WorkloadPending> pending;
  std::set<std::string> workload_keys;
  size_t queued_pods = 0;

  std::vector<PodGroup> groups;
  std::vector<SourcePosition> group_min_member;
  std::set<std::string> group_keys;

  std::vector<std::string> warnings;

  void count_kueue_object(const Field& v) {
    if (!first_object) first_object = pos(v["kind"]);
    if (++kueue_objects > limits.max_kueue_objects)
      v["metadata"]["name"].fail(limit_message(limits.max_kueue_objects, "Kueue objects", "ObjectLimits::max_kueue_objects"));
  }
  void unique(std::set<std::string>& names, const std::string& name, const Field& v, const char* kind) {
    if (!names.insert(name).second) v["metadata"]["name"].fail(fmt::format("duplicate {} '{}'", kind, name));
  }

  std::optional<SourcePosition> first_object;  // kind of the first Kueue object read, for validate()'s errors
  std::vector<queue::ResourceGroup> resource_groups(const Field& groups);
  void resource_flavor(const Field& v);
  void cluster_queue(const Field& v);
  void cohort(const Field& v);
  void local_queue(const Field& v);
  void workload_priority_class(const Field& v);
  void topology(const Field& v);
  void configuration(const Field& v);
  queue::PodSet pod_set(const std::string& name, int64_t count, const Field& tmpl, const std::string& ns, PodSetPending& p);
  void job(const Field& v, const std::string& kind);
  void pod_group(const Field& v, bool volcano);
  void finish(K8sObjects& out);
};

std::vector<queue::ResourceGroup> KueueReader::State::resource_groups(const Field& groups) {
  std::vector<queue::ResourceGroup> out;
  std::set<std::string> resources_seen, flavors_seen;
  if (groups.size() > kMaxResourceGroups) groups.fail(fmt::format("more than {} resource groups (Kueue's limit)", kMaxResourceGroups));
  for (size_t g = 0, ng = groups.size(); g < ng; ++g) {
    const Field group = groups.at(g);
    group.only_keys({"coveredResources", "flavors"});
    queue::ResourceGroup rg;
    const Field covered = group["coveredResources"];
    if (covered.size() == 0) covered.fail("a resource group needs at least one covered resource");
    for (size_t i = 0, n = covered.size(); i < n; ++i) {
      const Field r = covered.at(i);
      const std::string name = r.required_str();
      if (!resources_seen.insert(name).second) r.fail(fmt::format("resource '{}' is covered by two resource groups (or twice)", name));
      rg.covered_resources.push_back(name);
    }
    const Field flavors = group["flavors"];
    if (flavors.size() == 0) flavors.fail("a resource group needs at least one flavor");
    for (size_t f = 0, nf = flavors.size(); f < nf; ++f) {
      const Field flavor = flavors.at(f);
      flavor.only_keys({"name", "resources"});
      queue::FlavorQuotas fq;
      const Field name_v = flavor["name"];
      fq.name = name_v.required_str();
      if (!flavors_seen.insert(fq.name).second) name_v.fail(fmt::format("flavor '{}' appears twice (a flavor belongs to at most one resource group)", fq.name));
      flavor_refs.push_back({fq.name, pos(name_v)});
      const Field resources = flavor["resources"];
      std::vector<std::optional<queue::ResourceQuotaLimits>> by_covered(rg.covered_resources.size());
      for (size_t r = 0, nr = resources.size(); r < nr; ++r) {
        const Field res = resources.at(r);
        res.only_keys({"name", "nominalQuota", "borrowingLimit", "lendingLimit"});
        queue::ResourceQuotaLimits q;
        const Field rname = res["name"];
        q.name = rname.required_str();
        const auto it = std::find(rg.covered_resources.begin(), rg.covered_resources.end(), q.name);
        if (it == rg.covered_resources.end())
          rname.fail(fmt::format("resource '{}' is not in this resource group's coveredResources", q.name));
        auto& slot = by_covered[static_cast<size_t>(it - rg.covered_resources.begin())];
        if (slot) rname.fail(fmt::format("resource '{}' has two quotas in flavor '{}'", q.name, fq.name));
        const Field nominal = res["nominalQuota"];
        if (!nominal.present()) nominal.fail("required field is missing");
        q.nominal_quota = amount(nominal, q.name);
        if (const Field b = res["borrowingLimit"]; b.present()) q.borrowing_limit = amount(b, q.name);
        queue::ResourceAmount& total = quota_totals[fq.name + " " + q.name];
        const bool each_ok = q.nominal_quota <= queue::kMaxQuotaTotal && q.borrowing_limit.value_or(0) <= queue::kMaxQuotaTotal;
        const queue::ResourceAmount add = each_ok ? q.nominal_quota + q.borrowing_limit.value_or(0) : 0;
        if (!each_ok || add > queue::kMaxQuotaTotal - total)
          nominal.fail(fmt::format("the nominalQuota and borrowingLimit of {} in flavor '{}' over all ClusterQueues and Cohorts sum "
                                   "above 2^62 units (the most gpufleet counts exactly)",
                                   q.name, fq.name));
        total += add;
        if (const Field l = res["lendingLimit"]; l.present()) {
          q.lending_limit = amount(l, q.name);
          if (*q.lending_limit > q.nominal_quota) l.fail(fmt::format("lendingLimit {} is above nominalQuota {}", l.scalar(), nominal.scalar()));
        }
        slot = std::move(q);
      }
      for (size_t i = 0; i < by_covered.size(); ++i) {
        if (!by_covered[i]) resources.fail(fmt::format("flavor '{}' has no quota for covered resource '{}'", fq.name, rg.covered_resources[i]));
        fq.resources.push_back(std::move(*by_covered[i]));
      }
      rg.flavors.push_back(std::move(fq));
    }
    out.push_back(std::move(rg));
  }
  return out;
}

// Kueue's webhooks (ClusterQueue, Cohort): borrowing and lending limits only with a cohort / parent.
void limits_need_parent(const Field& groups_v, const std::vector<queue::ResourceGroup>& groups, const char* parent) {
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t f = 0; f < groups[g].flavors.size(); ++f)
      for (size_t r = 0; r < groups[g].flavors[f].resources.size(); ++r) {
        const auto& res = groups[g].flavors[f].resources[r];
        // resources[] is in coveredResources order here; find the entry as written.
        const Field list = groups_v.at(g)["flavors"].at(f)["resources"];
        for (size_t i = 0, n = list.size(); i < n; ++i) {
          const Field at = list.at(i);
          if (at["name"].scalar() != res.name) continue;
          if (res.borrowing_limit) at["borrowingLimit"].fail(fmt::format("borrowingLimit needs {}", parent));
          if (res.lending_limit) at["lendingLimit"].fail(fmt::format("lendingLimit needs {}", parent));
        }
      }
}

void KueueReader::State::resource_flavor(const Field& v) {
  count_kueue_object(v);
  queue::ResourceFlavor f;
  f.name = name_of(v);
  unique(flavor_names, f.name, v, "ResourceFlavor");
  const Field spec = v["spec"];
  f.node_labels = read_labels(spec["nodeLabels"]);
  const Field taints = spec["nodeTaints"];
  for (size_t i = 0, n = taints.size(); i < n; ++i) f.node_taints.push_back(read_taint(taints.at(i)));
  const Field tolerations = spec["tolerations"];
  for (size_t i = 0, n = tolerations.size(); i < n; ++i) f.tolerations.push_back(read_toleration(tolerations.at(i)));
  const Field topo = spec["topologyName"];
  f.topology_name = topo.str();
  flavor_topology.push_back(pos(topo));
  kueue.flavors.push_back(std::move(f));
}

void KueueReader::State::cluster_queue(const Field& v) {
  count_kueue_object(v);
  queue::ClusterQueue q;
  q.name = name_of(v);
  unique(cq_names, q.name, v, "ClusterQueue");
  const Field spec = v["spec"];
  // Kueue's ClusterQueueSpec fields (apis/kueue/v1beta1/clusterqueue_types.go); gpufleet models the
  // first eight; admission checks and stopPolicy are accepted and not modelled.
  spec.only_keys({"namespaceSelector", "cohort", "cohortName", "queueingStrategy", "resourceGroups", "preemption",
                  "flavorFungibility", "fairSharing", "admissionChecks", "admissionChecksStrategy", "stopPolicy",
                  "admissionScope"});
  spec["fairSharing"].only_keys({"weight"});
  const Field cohort_v = spec["cohort"], cohort_name_v = spec["cohortName"];
  if (cohort_v.present() && cohort_name_v.present()) cohort_name_v.fail("give spec.cohort (v1beta1) or spec.cohortName (v1beta2), not both");
  q.cohort = cohort_v.present() ? cohort_v.scalar() : cohort_name_v.str();
  q.queueing_strategy = static_cast<queue::QueueingStrategy>(
      enum_value(spec["queueingStrategy"], "queueingStrategy", {"BestEffortFIFO", "StrictFIFO"}, 0));
  q.resource_groups = resource_groups(spec["resourceGroups"]);
  if (q.cohort.empty()) limits_need_parent(spec["resourceGroups"], q.resource_groups, "a cohort (spec.cohort)");
  const Field pre = spec["preemption"];
  pre.only_keys({"withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort"});
  q.preemption.within_cluster_queue = static_cast<queue::WithinClusterQueue>(enum_value(
      pre["withinClusterQueue"], "withinClusterQueue", {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}, 0));
  q.preemption.reclaim_within_cohort = static_cast<queue::ReclaimWithinCohort>(
      enum_value(pre["reclaimWithinCohort"], "reclaimWithinCohort", {"Never", "LowerPriority", "Any"}, 0));
  const Field bwc = pre["borrowWithinCohort"];
  bwc.only_keys({"policy", "maxPriorityThreshold"});
  q.preemption.borrow_within_cohort = static_cast<queue::BorrowWithinCohortPolicy>(
      enum_value(bwc["policy"], "borrowWithinCohort policy", {"Never", "LowerPriority"}, 0));
  if (const auto t = bwc["maxPriorityThreshold"].opt_integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()))
    q.preemption.max_priority_threshold = static_cast<int32_t>(*t);
  const Field fung = spec["flavorFungibility"];
  fung.only_keys({"whenCanBorrow", "whenCanPreempt"});
  q.flavor_fungibility.when_can_borrow_try_next = enum_value(fung["whenCanBorrow"], "whenCanBorrow", {"Borrow", "TryNextFlavor"}, 0) == 1;
  q.flavor_fungibility.when_can_preempt_try_next = enum_value(fung["whenCanPreempt"], "whenCanPreempt", {"Preempt", "TryNextFlavor"}, 1) == 1;
  q.fair_sharing_weight_milli = weight_milli(spec["fairSharing"]["weight"]);
  const Field ns_sel = spec["namespaceSelector"];
  if (ns_sel.present()) {
    q.namespace_selector = read_label_selector(ns_sel);
  } else {
    q.namespace_selector = std::nullopt;
    const auto [line, column] = v.position();
    warnings.push_back(fmt::format("{}:{}:{}: ClusterQueue '{}' has no spec.namespaceSelector: Kueue admits no workload "
                                   "through it (write namespaceSelector: {{}} for every namespace)",
                                   v.source().file, line, column, q.name));
  }
  kueue.cluster_queues.push_back(std::move(q));
}

void KueueReader::State::cohort(const Field& v) {
  count_kueue_object(v);
  queue::Cohort c;
  c.name = name_of(v);
  unique(cohort_names, c.name, v, "Cohort");
  const Field spec = v["spec"];
  spec.only_keys({"parent", "parentName", "resourceGroups", "fairSharing"});  // CohortSpec (v1alpha1, v1beta1)
  spec["fairSharing"].only_keys({"weight"});
  const Field parent_name = spec["parentName"], parent = spec["parent"];
  if (parent_name.present() && parent.present()) parent.fail("give spec.parentName or spec.parent (early releases), not both");
  const Field& p = parent_name.present() ? parent_name : parent;
  c.parent = p.str();
  if (c.parent == c.name) p.fail(fmt::format("cohort loop: Cohort '{}' is its own parent", c.name));
  cohort_parent.push_back(pos(p));
  c.resource_groups = resource_groups(spec["resourceGroups"]);
  if (c.parent.empty()) limits_need_parent(spec["resourceGroups"], c.resource_groups, "a parent (spec.parentName)");
  c.fair_sharing_weight_milli = weight_milli(spec["fairSharing"]["weight"]);
  kueue.cohorts.push_back(std::move(c));
}

void KueueReader::State::local_queue(const Field& v) {
  count_kueue_object(v);
  queue::LocalQueue q;
  q.name = name_of(v);
  q.namespace_name = namespace_of(v);
  if (!lq_keys.insert(q.namespace_name + "/" + q.name).second)
    v["metadata"]["name"].fail(fmt::format("duplicate LocalQueue '{}' in namespace '{}'", q.name, q.namespace_name));
  const Field cq = v["spec"]["clusterQueue"];
  q.cluster_queue = cq.required_str();
  lq_cluster_queue.push_back(pos(cq));
  kueue.local_queues.push_back(std::move(q));
}

void KueueReader::State::workload_priority_class(const Field& v) {
  count_kueue_object(v);
  queue::WorkloadPriorityClass c;
  c.name = name_of(v);
  unique(wpc_names, c.name, v, "WorkloadPriorityClass");
  const Field value = v["value"];
  if (!value.present()) value.fail("required field is missing");
  c.value = static_cast<int32_t>(value.integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  kueue.priority_classes.push_back(std::move(c));
}

void KueueReader::State::topology(const Field& v) {
  count_kueue_object(v);
  queue::Topology t;
  t.name = name_of(v);
  unique(topology_names, t.name, v, "Topology");
  const Field levels = v["spec"]["levels"];
  if (levels.size() == 0) levels.fail("a Topology needs at least one level");
  if (levels.size() > kMaxTopologyLevels) levels.fail(fmt::format("more than {} levels (Kueue's limit)", kMaxTopologyLevels));
  for (size_t i = 0, n = levels.size(); i < n; ++i) {
    const Field label = levels.at(i)["nodeLabel"];
    const std::string key = label.required_str();
    if (const auto e = label_key_error(key)) label.fail(*e);
    if (std::find(t.levels.begin(), t.levels.end(), key) != t.levels.end()) label.fail(fmt::format("level '{}' appears twice", key));
    t.levels.push_back(key);
  }
  kueue.topologies.push_back(std::move(t));
}

void KueueReader::State::configuration(const Field& v) {
  if (has_configuration) v["kind"].fail("a second Kueue Configuration (give one)");
  has_configuration = true;
  queue::KueueConfiguration& c = kueue.configuration;
  c.fair_sharing = v["fairSharing"]["enable"].boolean(false);
  const Field wfpr = v["waitForPodsReady"];
  c.wait_for_pods_ready = wfpr["enable"].boolean(false);
  if (const Field t = wfpr["timeout"]; t.present()) c.wait_for_pods_ready_timeout_s = go_duration_s(t);
  const Field rq = wfpr["requeuingStrategy"];
  if (const auto b = rq["backoffBaseSeconds"].opt_integer(0, static_cast<int64_t>(kMaxSeconds))) c.backoff_base_s = static_cast<double>(*b);
  if (const auto m = rq["backoffMaxSeconds"].opt_integer(0, static_cast<int64_t>(kMaxSeconds))) c.backoff_max_s = static_cast<double>(*m);
  const Field ext = v["gpufleet"];
  ext.only_keys({"placementAwareAdmission"});
  c.placement_aware = ext["placementAwareAdmission"].boolean(false);
}

queue::PodSet KueueReader::State::pod_set(const std::string& name, int64_t count, const Field& tmpl, const std::string& ns,
                                          PodSetPending& p) {
  queue::PodSet s;
  s.name = name;
  s.count = static_cast<int32_t>(count);
  if (!tmpl.present()) tmpl.fail("missing pod template");
  auto [pod, id] = templates.parse_pod_template(tmpl["metadata"], tmpl["spec"], ns);
  s.pod_template = std::move(pod);
  p.template_id = id;
  // Topology annotations.
  const Field ann = tmpl["metadata"]["annotations"];
  const Field req = ann[kPodSetRequiredTopology], pref = ann[kPodSetPreferredTopology], unc = ann[kPodSetUnconstrainedTopology];
  const Field slice = ann[kPodSetSliceRequiredTopology], slice_size = ann[kPodSetSliceSize];
  if (int(req.present()) + int(pref.present()) + int(unc.present()) > 1)
    (unc.present() ? unc : pref).fail(fmt::format("give at most one of {}, {} and {}", kPodSetRequiredTopology,
                                                  kPodSetPreferredTopology, kPodSetUnconstrainedTopology));
  queue::TopologyRequest& t = s.topology;
  if (req.present()) {
    t.mode = queue::TopologyRequest::Mode::kRequired;
    t.level = req.required_str();
    p.level_at = pos(req);
  } else if (pref.present()) {
    t.mode = queue::TopologyRequest::Mode::kPreferred;
    t.level = pref.required_str();
    p.level_at = pos(pref);
  } else if (unc.present()) {
    if (unc.boolean(false)) t.mode = queue::TopologyRequest::Mode::kUnconstrained;
  }
  if (slice.present() != slice_size.present())
    (slice.present() ? slice : slice_size)
        .fail(fmt::format("{} and {} go together", kPodSetSliceRequiredTopology, kPodSetSliceSize));
  if (slice.present()) {
    t.slice_level = slice.required_str();
    p.slice_level_at = pos(slice);
    t.slice_size = static_cast<int32_t>(slice_size.integer(1, count));
  }
  return s;
}

// Pods of one batch/v1 Job spec as Kueue counts them: parallelism (default 1) capped at completions.
int64_t job_pods(const Field& spec) {
  int64_t pods = spec["parallelism"].opt_integer(0, kMaxPodsPerJob).value_or(1);
  if (const auto completions = spec["completions"].opt_integer(0, std::numeric_limits<int32_t>::max()))
    pods = std::min(pods, *completions);
  return pods;
}

void KueueReader::State::job(const Field& v, const std::string& kind) {
  queue::Workload w;
  WorkloadPending p;
  w.name = name_of(v);
  w.namespace_name = namespace_of(v);
  const Field meta = v["metadata"];
  if (workloads.size() >= limits.max_queued_workloads)
    meta["name"].fail(limit_message(limits.max_queued_workloads, "queued jobs", "ObjectLimits::max_queued_workloads"));
  if (!workload_keys.insert(w.key()).second)
    meta["name"].fail(fmt::format("duplicate queued job '{}' in namespace '{}' (queued Jobs, JobSets and PyTorchJobs share names)",
                                  w.name, w.namespace_name));
  const Field queue_v = meta["labels"][kQueueNameLabel];
  w.local_queue = queue_v.required_str();
  p.queue_at = pos(queue_v);
  if (const Field wpc = meta["labels"][kWorkloadPriorityClassLabel]; wpc.present())
    p.workload_priority_class = NameRef{wpc.required_str(), pos(wpc)};
  if (const Field ts = meta["creationTimestamp"]; ts.present()) p.creation_s = rfc3339_s(ts);
  const Field spec = v["spec"];
  spec.require_map();

  const auto add = [&](const std::string& name, int64_t count, const Field& tmpl, const Field& count_at) {
    if (count == 0) return;
    if (w.pod_sets.size() >= kMaxPodSets) count_at.fail(fmt::format("more than {} pod sets (Kueue's limit)", kMaxPodSets));
    const size_t room = limits.max_pods - std::min(limits.max_pods, templates.pod_count() + queued_pods);
    if (static_cast<uint64_t>(count) > room)
      count_at.fail(limit_message(limits.max_pods, "pods, counting every controller's replicas and queued job", "ObjectLimits::max_pods"));
    queued_pods += static_cast<size_t>(count);
    PodSetPending psp;
    w.pod_sets.push_back(pod_set(name, count, tmpl, w.namespace_name, psp));
    p.pod_sets.push_back(std::move(psp));
  };

  if (kind == "Job") {
    const int64_t pods = job_pods(spec);
    add("main", pods, spec["template"], spec["parallelism"]);
    if (const Field min = meta["annotations"][kJobMinParallelismAnnotation]; min.present() && !w.pod_sets.empty()) {
      if (pods < 2) min.fail(fmt::format("partial admission needs parallelism of 2 or more, the Job has {}", pods));
      w.pod_sets[0].min_count = static_cast<int32_t>(min.integer(1, pods - 1));
    }
  } else if (kind == "JobSet") {
    const Field rjs = spec["replicatedJobs"];
    if (rjs.size() == 0) rjs.fail("a JobSet needs at least one replicated job");
    std::set<std::string> names;
    for (size_t i = 0, n = rjs.size(); i < n; ++i) {
      const Field rj = rjs.at(i);
      const Field name_v = rj["name"];
      const std::string name = name_v.required_str();
      if (!names.insert(name).second) name_v.fail(fmt::format("duplicate replicated job '{}'", name));
      const int64_t replicas = rj["replicas"].opt_integer(0, kMaxPodsPerJob).value_or(1);
      const Field job_spec = rj["template"]["spec"];
      const int64_t per_job = job_pods(job_spec);
      if (replicas * per_job > kMaxPodsPerJob) rj["replicas"].fail(fmt::format("{} x {} pods is absurdly many", replicas, per_job));
      add(name, replicas * per_job, job_spec["template"], rj["replicas"]);
    }
  } else {  // PyTorchJob
    const Field specs = spec["pytorchReplicaSpecs"];
    specs.require_map();
    specs.each_entry([&](const std::string& type, const Field&) {
      if (type != "Master" && type != "Worker")
        specs.fail_key(type, fmt::format("unknown replica type '{}' (expected Master or Worker)", type));
    });
    for (const char* type : {"Master", "Worker"}) {
      const Field rs = specs[type];
      if (!rs.present()) continue;
      const Field replicas_v = rs["replicas"];
      const int64_t replicas = replicas_v.opt_integer(0, kMaxPodsPerJob).value_or(1);
      if (std::string_view(type) == "Master" && replicas != 1)
        replicas_v.fail("a PyTorchJob has exactly one Master replica");  // training-operator's validation
      add(std::string_view(type) == "Master" ? "master" : "worker", replicas, rs["template"], replicas_v);
    }
  }
  if (w.pod_sets.empty()) spec.fail(fmt::format("the {} has no pods to queue", kind));
  workloads.push_back(std::move(w));
  pending.push_back(std::move(p));
}

void KueueReader::State::pod_group(const Field& v, bool volcano) {
  PodGroup g;
  g.name = name_of(v);
  g.namespace_name = namespace_of(v);
  if (groups.size() >= limits.max_pod_groups)
    v["metadata"]["name"].fail(limit_message(limits.max_pod_groups, "PodGroups", "ObjectLimits::max_pod_groups"));
  if (!group_keys.insert(g.namespace_name + "/" + g.name).second)
    v["metadata"]["name"].fail(fmt::format("duplicate PodGroup '{}' in namespace '{}'", g.name, g.namespace_name));
  const Field spec = v["spec"];
  const Field min = spec["minMember"];
  g.min_member = static_cast<int32_t>(min.opt_integer(1, std::numeric_limits<int32_t>::max()).value_or(1));
  group_min_member.push_back(pos(min.present() ? min : v["metadata"]["name"]));
  if (!volcano) {
    if (const auto t = spec["scheduleTimeoutSeconds"].opt_integer(0, std::numeric_limits<int32_t>::max()))
      g.schedule_timeout_s = static_cast<double>(*t);
  } else {
    g.queue = spec["queue"].str();
  }
  groups.push_back(std::move(g));
}

void KueueReader::State::finish(K8sObjects& out) {
  // References among Kueue objects.
  for (const NameRef& r : flavor_refs)
    if (!flavor_names.count(r.name)) fail_at(r.at, fmt::format("unknown ResourceFlavor '{}' (not among the inputs)", r.name));
  for (size_t i = 0; i < kueue.flavors.size(); ++i) {
    const std::string& t = kueue.flavors[i].topology_name;
    if (!t.empty() && !topology_names.count(t)) fail_at(flavor_topology[i], fmt::format("unknown Topology '{}' (not among the inputs)", t));
  }
  for (size_t i = 0; i < kueue.local_queues.size(); ++i) {
    const std::string& cq = kueue.local_queues[i].cluster_queue;
    if (!cq_names.count(cq)) fail_at(lq_cluster_queue[i], fmt::format("unknown ClusterQueue '{}' (not among the inputs)", cq));
  }
  // Cohort loops: walk each declared cohort's parents (undeclared parents are roots).
  std::map<std::string, size_t> cohort_index;
  for (size_t i = 0; i < kueue.cohorts.size(); ++i) cohort_index[kueue.cohorts[i].name] = i;
  for (size_t i = 0; i < kueue.cohorts.size(); ++i) {
    std::string path = kueue.cohorts[i].name;
    std::string at = kueue.cohorts[i].parent;
    for (size_t steps = 0; !at.empty() && steps <= kueue.cohorts.size(); ++steps) {
      path += " -> " + at;
      if (at == kueue.cohorts[i].name) fail_at(cohort_parent[i], fmt::format("cohort loop: {}", path));
      const auto it = cohort_index.find(at);
      if (it == cohort_index.end()) break;
      at = kueue.cohorts[it->second].parent;
    }
  }

  // Queued jobs: their LocalQueue, priority, topology levels; creation times.
  std::set<std::string> local_queue_keys;
  for (const auto& q : kueue.local_queues) local_queue_keys.insert(q.namespace_name + "/" + q.name);
  std::set<std::string> levels;
  for (const auto& t : kueue.topologies) levels.insert(t.levels.begin(), t.levels.end());
  std::set<std::string> node_labels;
  for (const Node& n : out.nodes)
    for (const auto& [k, value] : n.labels) node_labels.insert(k);
  const auto check_level = [&](const std::string& level, const SourcePosition& at) {
    if (level.empty()) return;
    if (!levels.count(level)) fail_at(at, fmt::format("topology level '{}' is not a level of any Topology among the inputs", level));
    if (!out.nodes.empty() && !node_labels.count(level))
      fail_at(at, fmt::format("topology level '{}' is a label of no node among the inputs", level));
  };
  std::optional<double> earliest;
  for (const auto& p : pending)
    if (p.creation_s && (!earliest || *p.creation_s < *earliest)) earliest = p.creation_s;
  for (size_t i = 0; i < workloads.size(); ++i) {
    queue::Workload& w = workloads[i];
    const WorkloadPending& p = pending[i];
    if (!local_queue_keys.count(w.namespace_name + "/" + w.local_queue))
      fail_at(p.queue_at, fmt::format("no LocalQueue '{}' in namespace '{}' among the inputs", w.local_queue, w.namespace_name));
    for (size_t s = 0; s < w.pod_sets.size(); ++s) {
      templates.resolve_priority(w.pod_sets[s].pod_template, p.pod_sets[s].template_id);
      check_level(w.pod_sets[s].topology.level, p.pod_sets[s].level_at);
      check_level(w.pod_sets[s].topology.slice_level, p.pod_sets[s].slice_level_at);
    }
    if (p.workload_priority_class) {
      const auto it = std::find_if(kueue.priority_classes.begin(), kueue.priority_classes.end(),
                                   [&](const queue::WorkloadPriorityClass& c) { return c.name == p.workload_priority_class->name; });
      if (it == kueue.priority_classes.end())
        fail_at(p.workload_priority_class->at,
                fmt::format("unknown WorkloadPriorityClass '{}' (not among the inputs)", p.workload_priority_class->name));
      w.priority = it->value;
      w.priority_class_name = it->name;
    } else {
      for (const queue::PodSet& s : w.pod_sets)
        if (!s.pod_template.priority_class_name.empty()) {
          w.priority = s.pod_template.priority;
          w.priority_class_name = s.pod_template.priority_class_name;
          break;
        }
    }
    if (p.creation_s) w.creation_s = *p.creation_s - *earliest;
  }

  // Gangs: enough members for minMember.
  for (size_t i = 0; i < groups.size(); ++i) {
    const PodGroup& g = groups[i];
    int64_t members = 0;
    for (const Pod& pod : out.pods) {
      const std::string* l = label_value(pod.labels, kPodGroupLabel);
      if (l && *l == g.name && pod.namespace_name == g.namespace_name) ++members;
    }
    for (const queue::Workload& w : workloads)
      for (const queue::PodSet& s : w.pod_sets) {
        const std::string* l = label_value(s.pod_template.labels, kPodGroupLabel);
        if (l && *l == g.name && w.namespace_name == g.namespace_name) members += s.count;
      }
    if (g.min_member > members)
      fail_at(group_min_member[i], fmt::format("PodGroup '{}' needs minMember {} pods but has {} member pod(s) (label {} or "
                                               "Volcano's annotation {})",
                                               g.name, g.min_member, members, kPodGroupLabel, kVolcanoGroupNameAnnotation));
  }

  // queue::validate (queue/kueue_objects.h) is the domain's own guard of the same rules, checked above
  // with their positions; what it still finds is reported at the first Kueue object.
  if (first_object) {
    try {
      queue::validate(kueue);
    } catch (const std::invalid_argument& e) {
      fail_at(*first_object, e.what());
    }
  }
  out.kueue = std::move(kueue);
  out.queued_workloads = std::move(workloads);
  out.pod_groups = std::move(groups);
  out.warnings.insert(out.warnings.end(), warnings.begin(), warnings.end());
}

// ---------------------------------------------------------------------------------------------

KueueReader::KueueReader(K8sTemplateParser& templates, const ObjectLimits& limits)
    : s_(std::make_unique<State>(templates, limits)) {}
KueueReader::~KueueReader() = default;

bool KueueReader::object(const Field& v, const std::string& kind) {
  if (kind != "Job" && kind != "JobSet" && kind != "PyTorchJob" && kind != "PodGroup" && kind != "Configuration" &&
      kind != "ResourceFlavor" && kind != "ClusterQueue" && kind != "Cohort" && kind != "LocalQueue" &&
      kind != "WorkloadPriorityClass" && kind != "Topology")
    return false;  // every other kind is the Kubernetes reader's, whatever its apiVersion
  const std::string group = api_group(v);
  if (group == "kueue.x-k8s.io") {
    if (kind == "ResourceFlavor") return s_->resource_flavor(v), true;
    if (kind == "ClusterQueue") return s_->cluster_queue(v), true;
    if (kind == "Cohort") return s_->cohort(v), true;
    if (kind == "LocalQueue") return s_->local_queue(v), true;
    if (kind == "WorkloadPriorityClass") return s_->workload_priority_class(v), true;
    if (kind == "Topology") return s_->topology(v), true;
    return false;
  }
  if (group == "config.kueue.x-k8s.io" && kind == "Configuration") return s_->configuration(v), true;
  if (kind == "PodGroup" && (group == "scheduling.x-k8s.io" || group == "scheduling.volcano.sh"))
    return s_->pod_group(v, group == "scheduling.volcano.sh"), true;
  const bool job_kind =
      kind == "Job" || (kind == "JobSet" && group == "jobset.x-k8s.io") || (kind == "PyTorchJob" && group == "kubeflow.org");
  if (job_kind && v["metadata"]["labels"][kQueueNameLabel].present()) return s_->job(v, kind), true;
  return false;
}

void KueueReader::add_group_label(const Field& meta, Labels& labels) {
  const Field group = meta["annotations"][kVolcanoGroupNameAnnotation];
  if (!group.present() || find_label(labels, kPodGroupLabel) != nullptr) return;
  labels.emplace_back(kPodGroupLabel, group.scalar());
}

void KueueReader::add_pod_group(PodGroup g, const Field& at) {
  if (s_->groups.size() >= s_->limits.max_pod_groups)
    at.fail(limit_message(s_->limits.max_pod_groups, "PodGroups", "ObjectLimits::max_pod_groups"));
  if (!s_->group_keys.insert(g.namespace_name + "/" + g.name).second)
    at.fail(fmt::format("duplicate PodGroup '{}' in namespace '{}'", g.name, g.namespace_name));
  s_->group_min_member.push_back(pos(at));
  s_->groups.push_back(std::move(g));
}

void KueueReader::finish(K8sObjects& out) { s_->finish(out); }

}  // namespace gpufleet::io::detail
