#include "readers/karpenter/karpenter_nodepool.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "readers/k8s/k8s_fields.h"
#include "readers/k8s/pool_file.h"
#include "model/dns_name.h"
#include "model/node_pool.h"
#include "model/quantity.h"
#include "inputs/sim/faults.h"
#include "inputs/sim/workload.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// The well-known label Karpenter puts on a NodePool's nodes (karpenter.sh/v1 well-known labels).
constexpr const char* kNodePoolLabel = "karpenter.sh/nodepool";

using detail::Field;

struct Offering {
  std::string zone;
  std::optional<double> on_demand, spot;
};
struct InstanceType {
  std::string name;
  std::string gpu_model;
  int32_t gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<Offering> offerings;
};

struct Requirement {
  std::string key, op;
  std::vector<std::string> values;
  bool allows(const std::string& v) const {
    const bool in = std::find(values.begin(), values.end(), v) != values.end();
    if (op == "In") return in;
    if (op == "NotIn") return !in;
    if (op == "Exists") return true;
    return false;  // DoesNotExist: the label is always there
  }
};

double price(const Field& f) {
  const double v = f.number();
  if (v < 0) f.fail(fmt::format("{} is negative", f.scalar()));
  return v;
}

void read_instance_types(const Field& root, std::vector<InstanceType>& types) {
  root.only_keys({"apiVersion", "kind", "metadata", "instanceTypes"});
  const Field list = root["instanceTypes"];
  for (size_t i = 0; i < list.size(); ++i) {
    const Field t = list.at(i);
    t.require_map();
    t.only_keys({"name", "gpu", "cpu", "memory", "offerings"});
    InstanceType it;
    it.name = t["name"].required_str();
    for (const InstanceType& o : types)
      if (o.name == it.name) t["name"].fail(fmt::format("duplicate instance type '{}'", it.name));
    if (const Field g = t["gpu"]; g.present()) {
      g.require_map();
      g.only_keys({"model", "count"});
      it.gpu_model = g["model"].required_str();
      it.gpus = static_cast<int32_t>(g["count"].integer(1, kMaxGpusPerNode));
    }
    it.cpu_milli = t["cpu"].quantity().milli();
    it.memory_bytes = t["memory"].quantity().value();
    const Field offerings = t["offerings"];
    for (size_t k = 0; k < offerings.size(); ++k) {
      const Field o = offerings.at(k);
      o.require_map();
      o.only_keys({"zone", "onDemand", "spot"});
      Offering off;
      off.zone = o["zone"].required_str();
      for (const Offering& other : it.offerings)
        if (other.zone == off.zone)  // two offerings in one zone would make two pools of one name
          o["zone"].fail(fmt::format("duplicate zone '{}' in the offerings of instance type '{}'", off.zone, it.name));
      if (const Field p = o["onDemand"]; p.present()) off.on_demand = price(p);
      if (const Field p = o["spot"]; p.present()) off.spot = price(p);
      it.offerings.push_back(off);
    }
    types.push_back(std::move(it));
  }
}

std::string dns(std::string s) {
  std::replace(s.begin(), s.end(), '.', '-');
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// metadata.name: a DNS-1123 subdomain, not the name of an earlier NodePool.
std::string read_node_pool_name(const Field& name_field, const sim::ClusterConfig& config) {
  const std::string name = name_field.required_str();
  // metadata.name is a DNS-1123 subdomain (validation.IsDNS1123Subdomain); the offering pools are
  // named <name>-<instance type>-<zone>-<od|spot> with '.' as '-', and pool names are DNS labels.
  if (!dns1123_subdomain_ok(name))
    name_field.fail(fmt::format("'{}' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', "
                                "starting and ending with a letter or digit)", name));
  for (const sim::KarpenterNodePool& o : config.node_pools)
    if (o.name == name) name_field.fail(fmt::format("duplicate NodePool '{}'", name));
  return name;
}

// spec.limits: the most cpu, memory and nvidia.com/gpu all the NodePool's nodes may have together.
void read_limits(const Field& limits, sim::KarpenterNodePool& np) {
  limits.each_entry([&](const std::string& resource, const Field& f) {
    if (resource != "cpu" && resource != "memory" && resource != "nvidia.com/gpu")
      f.fail(fmt::format("unknown resource '{}' in limits (expected cpu, memory, nvidia.com/gpu)", resource));
    const Quantity q = f.quantity();
    np.limits.emplace_back(resource, resource == "cpu" ? q.milli() : q.value());
  });
}

// spec.template (Karpenter's NodeClaimTemplate): what the NodePool's nodes get besides the offering.
struct NodeClaimTemplate {
  Labels labels;                          // metadata.labels
  std::vector<Requirement> requirements;  // spec.requirements, with Karpenter's default capacity type
  std::vector<Taint> taints;              // spec.taints
};

// spec.template.metadata: its labels, none of those Karpenter sets from the offering.
Labels read_template_labels(const Field& tmeta) {
  Labels template_labels;
  if (tmeta.present()) {
    tmeta.only_keys({"labels", "annotations"});
    template_labels = detail::read_labels(tmeta["labels"]);
    for (const auto& [k, v] : template_labels)
      if (k == sim::kZoneLabel || k == kNodePoolLabel || k == sim::kCapacityTypeLabel ||
          k == kInstanceTypeLabel || k == kPoolLabel)
        tmeta["labels"][k].fail(fmt::format("label {} is set by Karpenter from the offering and must not be given", k));
  }
  return template_labels;
}

// One of spec.template.spec.requirements: a key of the offerings, an operator and its values.
Requirement read_requirement(const Field& r, const std::vector<InstanceType>& types) {
  r.require_map();
  r.only_keys({"key", "operator", "values", "minValues"});
  if (r["minValues"].present()) r["minValues"].fail("minValues is not modelled by gpufleet (remove it)");
  Requirement req;
  req.key = r["key"].required_str();
  if (req.key != kInstanceTypeLabel && req.key != sim::kCapacityTypeLabel && req.key != sim::kZoneLabel)
    r["key"].fail(fmt::format("requirement on unknown key '{}' (expected node.kubernetes.io/instance-type, "
                              "karpenter.sh/capacity-type, topology.kubernetes.io/zone)", req.key));
  req.op = r["operator"].required_str();
  if (req.op != "In" && req.op != "NotIn" && req.op != "Exists" && req.op != "DoesNotExist")
    r["operator"].fail(fmt::format("unknown operator '{}' (expected In, NotIn, Exists, DoesNotExist)", req.op));
  const Field vals = r["values"];
  for (size_t k = 0; k < vals.size(); ++k) req.values.push_back(vals.at(k).scalar());
  // Kubernetes validation (labels.NewRequirement): In/NotIn need values, Exists/DoesNotExist take none.
  if ((req.op == "Exists" || req.op == "DoesNotExist") && !req.values.empty())
    vals.fail(fmt::format("operator {} takes no values", req.op));
  if (req.key == kInstanceTypeLabel && req.op == "In")
    for (size_t k = 0; k < req.values.size(); ++k)
      if (std::none_of(types.begin(), types.end(), [&](const InstanceType& t) { return t.name == req.values[k]; }))
        vals.at(k).fail(fmt::format("unknown instance type '{}' (not in an {} document)", req.values[k], kInstanceTypesKind));
  return req;
}

// spec.template.spec.requirements; on-demand only when none is on the capacity type.
std::vector<Requirement> read_requirements(const Field& rl, const std::vector<InstanceType>& types) {
  std::vector<Requirement> reqs;
  for (size_t i = 0; i < rl.size(); ++i) reqs.push_back(read_requirement(rl.at(i), types));
  if (std::none_of(reqs.begin(), reqs.end(), [](const Requirement& r) { return r.key == sim::kCapacityTypeLabel; }))
    reqs.push_back({sim::kCapacityTypeLabel, "In", {"on-demand"}});  // Karpenter v1's default
  return reqs;
}

// spec.template.spec.taints.
std::vector<Taint> read_taints(const Field& tl) {
  std::vector<Taint> taints;
  for (size_t i = 0; i < tl.size(); ++i) {
    const Field t = tl.at(i);
    t.require_map();
    t.only_keys({"key", "value", "effect"});
    taints.push_back(detail::read_taint(t));  // effect NoSchedule, PreferNoSchedule or NoExecute
  }
  return taints;
}

// spec.template: metadata.labels, spec.requirements and spec.taints.
NodeClaimTemplate read_template(const Field& tmpl, const std::vector<InstanceType>& types) {
  const Field tspec = tmpl["spec"];
  if (tmpl.present()) tmpl.only_keys({"metadata", "spec"});
  NodeClaimTemplate t;
  t.labels = read_template_labels(tmpl["metadata"]);
  if (tspec.present()) tspec.only_keys({"requirements", "taints", "nodeClassRef", "expireAfter", "terminationGracePeriod"});
  t.requirements = read_requirements(tspec["requirements"], types);
  t.taints = read_taints(tspec["taints"]);
  return t;
}

// spec.disruption.consolidateAfter, seconds: Never (+infinity) or a duration (e.g. 30s, 5m, 1h).
double read_consolidate_after(const Field& a) {
  if (a.scalar() == "Never") return std::numeric_limits<double>::infinity();
  const std::string s = a.scalar();
  double mult = 1;
  std::string num = s;
  if (!s.empty() && (s.back() == 's' || s.back() == 'm' || s.back() == 'h')) {
    mult = s.back() == 'h' ? 3600 : s.back() == 'm' ? 60 : 1;
    num = s.substr(0, s.size() - 1);
  }
  const bool digits = !num.empty() && std::all_of(num.begin(), num.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; });
  try {
    size_t used = 0;
    if (!digits) throw std::invalid_argument("bad");
    const double seconds = std::stod(num, &used) * mult;
    if (used != num.size() || !(seconds >= 0 && seconds <= sim::kMaxHorizonSeconds))
      throw std::invalid_argument("bad");
    return seconds;
  } catch (const std::exception&) {
    a.fail(fmt::format("'{}' is not a duration of at most {:g} s (e.g. 30s, 5m, 1h, Never)", s, sim::kMaxHorizonSeconds));
  }
}

// One of spec.disruption.budgets: nodes (N or 0..100%, default 10%), reasons, schedule and duration.
sim::KarpenterDisruptionBudget read_budget(const Field& b) {
  b.only_keys({"nodes", "schedule", "duration", "reasons"});
  const Field n = b["nodes"];
  std::string v = n.present() ? n.scalar() : std::string("10%");  // +kubebuilder:default:="10%"
  IntOrPercent ip;
  if (!v.empty() && v.back() == '%') {
    ip.percent = true;
    v.pop_back();
  }
  const bool digits = !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!digits || (ip.percent && std::stoi(v) > 100)) n.fail(fmt::format("'{}' is not a node count or percentage (N or 0..100%)", n.scalar()));
  ip.value = std::stoi(v);
  sim::KarpenterDisruptionBudget budget;
  budget.nodes = ip;
  const Field reasons = b["reasons"];
  for (size_t r = 0; r < reasons.size(); ++r) {
    const Field reason = reasons.at(r);
    const std::string name = reason.scalar();
    if (name == "Empty") budget.reasons.push_back(sim::KarpenterDisruptionReason::kEmpty);
    else if (name == "Underutilized") budget.reasons.push_back(sim::KarpenterDisruptionReason::kUnderutilized);
    else if (name == "Drifted") budget.reasons.push_back(sim::KarpenterDisruptionReason::kDrifted);
    else reason.fail(fmt::format("unknown disruption reason '{}' (expected Underutilized, Empty, Drifted)", name));
  }
  if (b["schedule"].present() != b["duration"].present())
    b.fail("schedule and duration go together (a budget with one needs the other)");
  budget.scheduled = b["schedule"].present();
  return budget;
}

// spec.disruption: consolidationPolicy, consolidateAfter and budgets.
void read_disruption(const Field& d, sim::KarpenterNodePool& np) {
  d.only_keys({"consolidationPolicy", "consolidateAfter", "budgets"});
  const std::string policy = d["consolidationPolicy"].str("WhenEmptyOrUnderutilized");
  if (policy != "WhenEmptyOrUnderutilized" && policy != "WhenEmpty")
    d["consolidationPolicy"].fail(fmt::format("unknown consolidationPolicy '{}' (expected WhenEmptyOrUnderutilized, WhenEmpty)", policy));
  np.consolidate_when_empty_only = policy == "WhenEmpty";
  if (const Field a = d["consolidateAfter"]; a.present()) np.consolidate_after_s = read_consolidate_after(a);
  const Field budgets = d["budgets"];
  if (budgets.size() > kMaxDisruptionBudgets)
    budgets.fail(fmt::format("{} budgets (at most {})", budgets.size(), kMaxDisruptionBudgets));
  for (size_t i = 0; i < budgets.size(); ++i) np.budgets.push_back(read_budget(budgets.at(i)));
}

// The most nodes of instance type `it` the NodePool's limits allow (the smallest limit / node
// capacity), at most kMaxOfferingSlots; without limits kDefaultOfferingSlots.
int32_t offering_slots(const sim::KarpenterNodePool& np, const InstanceType& it) {
  int64_t slots = np.limits.empty() ? kDefaultOfferingSlots : kMaxOfferingSlots;
  for (const auto& [resource, value] : np.limits) {
    const int64_t per_node = resource == "cpu" ? it.cpu_milli : resource == "memory" ? it.memory_bytes : it.gpus;
    if (per_node > 0) slots = std::min(slots, value / per_node);
  }
  return static_cast<int32_t>(std::max<int64_t>(slots, 0));
}

// The pool of one offering (instance type `it` in zone `o.zone`, spot or on-demand), before its
// PoolSettings.
sim::SimPool offering_pool(const sim::KarpenterNodePool& np, const Field& name_field, const NodeClaimTemplate& tmpl,
                           const InstanceType& it, const Offering& o, bool spot) {
  sim::SimPool p;
  p.pool.name = fmt::format("{}-{}-{}-{}", dns(np.name), dns(it.name), dns(o.zone), spot ? "spot" : "od");
  if (p.pool.name.size() > 63)
    name_field.fail(fmt::format("NodePool name '{}' makes the offering pool name '{}' of {} characters; pool names are "
                                "DNS labels of at most 63 characters (shorten the NodePool or instance type name)",
                                np.name, p.pool.name, p.pool.name.size()));
  p.pool.instance_type = it.name;
  p.pool.gpu_model = it.gpu_model;
  p.pool.gpus_per_node = it.gpus;
  p.pool.cpu_milli = it.cpu_milli;
  p.pool.memory_bytes = it.memory_bytes;
  p.pool.labels = {{sim::kZoneLabel, o.zone}, {kNodePoolLabel, np.name}};
  p.pool.labels.insert(p.pool.labels.end(), tmpl.labels.begin(), tmpl.labels.end());
  p.pool.taints = tmpl.taints;
  p.pool.on_demand_usd_per_hour = o.on_demand ? *o.on_demand : *o.spot;  // not value_or(*o.spot): it reads spot eagerly
  if (o.spot) p.pool.spot_usd_per_hour = *o.spot;
  p.pool.max_nodes = offering_slots(np, it);
  return p;
}

// One pool per offering the template's requirements allow (instance type x zone x capacity type with
// a price), appended to config.pools.
void add_offering_pools(const sim::KarpenterNodePool& np, const Field& name_field, const NodeClaimTemplate& tmpl,
                        const std::vector<InstanceType>& types, sim::ClusterConfig& config) {
  const auto allowed = [&](const std::string& key, const std::string& value) {
    return std::all_of(tmpl.requirements.begin(), tmpl.requirements.end(),
                       [&](const Requirement& r) { return r.key != key || r.allows(value); });
  };
  size_t added = 0;
  int64_t total_max = 0;  // of every pool so far (the NodePoolSet's and the offerings), against kMaxTotalPoolNodes
  for (const sim::SimPool& p : config.pools) total_max += p.pool.max_nodes;
  for (const InstanceType& it : types) {
    if (!allowed(kInstanceTypeLabel, it.name)) continue;
    for (const Offering& o : it.offerings) {
      if (!allowed(sim::kZoneLabel, o.zone)) continue;
      for (const bool spot : {false, true}) {
        if (!(spot ? o.spot : o.on_demand) || !allowed(sim::kCapacityTypeLabel, spot ? "spot" : "on-demand")) continue;
        sim::SimPool p = offering_pool(np, name_field, tmpl, it, o, spot);
        total_max += p.pool.max_nodes;
        if (total_max > kMaxTotalPoolNodes)
          name_field.fail(fmt::format("the pools' max add up to {} nodes with the offerings of NodePool {}, above the maximum of {} in a file",
                                      total_max, np.name, kMaxTotalPoolNodes));
        p.settings.capacity_type = spot ? sim::CapacityType::kSpot : sim::CapacityType::kOnDemand;
        p.settings.provision_s = sim::kProvisionKarpenterS;
        p.settings.karpenter_node_pool = np.name;
        {
          const auto [line, column] = name_field.position();
          p.origin = {name_field.source().file, line, column, name_field.path()};
        }
        try {
          validate_pool(p.pool);
          sim::validate_pool_settings(p);
        } catch (const std::invalid_argument& e) {
          name_field.fail(e.what());
        }
        config.pools.push_back(std::move(p));
        ++added;
      }
    }
  }
  if (added == 0) name_field.fail(fmt::format("NodePool {} allows no offering of the {} documents", np.name, kInstanceTypesKind));
}

void read_node_pool(const Field& root, const std::vector<InstanceType>& types, sim::ClusterConfig& config) {
  root.only_keys({"apiVersion", "kind", "metadata", "spec"});
  const Field name_field = root["metadata"]["name"];
  sim::KarpenterNodePool np;
  np.name = read_node_pool_name(name_field, config);
  const Field spec = root["spec"];
  spec.require_map();
  spec.only_keys({"weight", "limits", "template", "disruption"});
  np.weight = static_cast<int32_t>(spec["weight"].opt_integer(0, 100).value_or(0));
  read_limits(spec["limits"], np);
  const NodeClaimTemplate tmpl = read_template(spec["template"], types);
  if (const Field d = spec["disruption"]; d.present()) read_disruption(d, np);
  add_offering_pools(np, name_field, tmpl, types, config);
  config.node_pools.push_back(std::move(np));
}

}  // namespace

void read_karpenter_documents(const std::vector<detail::YamlNode>& docs, const detail::Source& src, sim::ClusterConfig& config) {
  std::vector<InstanceType> types;
  for (const detail::YamlNode& doc : docs) {
    if (doc.type != detail::YamlType::kMapping) continue;
    const Field root(doc, "", src);
    if (root["apiVersion"].str() == detail::kSimApiVersion && root["kind"].str() == kInstanceTypesKind) read_instance_types(root, types);
  }
  for (const detail::YamlNode& doc : docs) {
    if (doc.type != detail::YamlType::kMapping) continue;
    const Field root(doc, "", src);
    if (root["kind"].str() != "NodePool" || root["apiVersion"].str().rfind("karpenter.sh/", 0) != 0) continue;
    if (root["apiVersion"].str() != kKarpenterApiVersion)
      root["apiVersion"].fail(fmt::format("apiVersion '{}' is not supported (expected {})", root["apiVersion"].str(), kKarpenterApiVersion));
    read_node_pool(root, types, config);
  }
}

}  // namespace gpufleet::io
