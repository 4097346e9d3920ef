#include "readers/plan/plan_file.h"

#include <algorithm>
#include <initializer_list>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "readers/formats/input_limits.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "inputs/sim/cluster_config.h"
#include "model/gpu_catalog.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "util/edit_distance.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;  // a YAML node with its field path and source (readers/formats/yaml_field.h)
using detail::Source;
using plan::Commitment;

// Absurdity guards on a node's allocatable CPU and memory (as readers/k8s/pool_file.cpp's).
constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 50;  // 1 PiB

constexpr Commitment kCommitments[] = {Commitment::kReserved1y, Commitment::kReserved3y, Commitment::kCapacityBlock};

sim::FieldOrigin origin_of(const Field& f) {
  const auto [line, column] = f.position();
  return sim::FieldOrigin{f.source().file, line, column, f.path()};
}

// "file:line:column: field 'f': message", as InputError's line (util/input_error.h).
std::string warning_at(const sim::FieldOrigin& at, const std::string& message) {
  const std::string where = fmt::format("{}:{}:{}", at.file, at.line, at.column);
  if (at.field.empty()) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: field '{}': {}", where, at.field, message);
}

[[noreturn]] void fail_at(const sim::FieldOrigin& at, const std::string& message) {
  throw InputError(at.file, at.line, at.field, message, at.column);
}

// only_keys with the readers' "did you mean" (util/edit_distance.h): an unknown key that is a typo of
// a known one is named with it; others get only_keys' list of the known keys.
void known_keys(const Field& f, std::initializer_list<const char*> allowed) {
  const std::vector<std::string> keys(allowed.begin(), allowed.end());
  if (f.is_map())
    f.each_entry([&](const std::string& key, const Field&) {
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
      if (const std::string near = closest_word(key, keys); !near.empty())
        f.fail_key(key, fmt::format("unknown key '{}': did you mean '{}'?", key, near));
    });
  f.only_keys(allowed);
}

void check_count(const Field& list, size_t limit, const char* what, const char* name) {
  if (list.size() > limit) list.fail(limit_message(limit, what, name));
}

// A required, non-empty list: "required field is missing", "expected a list, got X", `empty`.
void require_entries(const Field& list, const std::string& empty) {
  if (!list.present()) list.fail("required field is missing");
  if (list.size() == 0) list.fail(empty);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string known_gpu_models() {
  std::vector<std::string> names;
  for (const GpuModelInfo& g : gpu_catalog()) names.push_back(g.name);
  return joined(names);
}

// A GPU model of the GPU catalog (any case, or a product label), as its canonical name.
std::string gpu_model(const Field& f) {
  const std::string given = f.required_str();
  const GpuModelInfo* model = find_gpu_model(given);
  if (model == nullptr) f.fail(fmt::format("unknown GPU model '{}' (known: {})", given, known_gpu_models()));
  return model->name;
}

// An instance type name: a DNS label once '.' -> '-' (plan_inputs.h), so a node name can be made of it.
bool instance_type_name(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// A price in USD per node-hour: a finite number in (0, kMaxUsdPerNodeHour].
double price(const Field& f) {
  const double v = f.number();
  if (v <= 0) f.fail(fmt::format("{} must be positive", f.scalar()));
  if (v > kMaxUsdPerNodeHour) f.fail(fmt::format("{} is above the maximum of {:g} USD per node-hour", f.scalar(), kMaxUsdPerNodeHour));
  return v;
}

// An optional price that may not exceed the on-demand price of its offering.
std::optional<double> at_most_on_demand(const Field& f, std::string_view key, double on_demand) {
  if (!f.present()) return std::nullopt;
  const double v = price(f);
  if (v > on_demand) f.fail(fmt::format("{} {} is above onDemand {:g}", key, f.scalar(), on_demand));
  return v;
}

plan::Offering parse_offering(const Field& o, std::map<std::string, int>& zones) {
  o.require_map();
  known_keys(o, {"zone", "onDemand", "spot", "spotInterruptionsPerNodeHour", "reserved1y", "reserved3y", "capacityBlock"});
  plan::Offering offering;
  const Field zone = o["zone"];
  offering.zone = zone.required_str();
  offering.origin = origin_of(zone);
  if (const auto [it, fresh] = zones.emplace(offering.zone, offering.origin.line); !fresh)
    zone.fail(fmt::format("zone '{}' is listed twice for this instance type (first at line {})", offering.zone, it->second));
  offering.on_demand_usd_per_hour = price(o["onDemand"]);
  const double on_demand = offering.on_demand_usd_per_hour;
  offering.spot_usd_per_hour = at_most_on_demand(o["spot"], "spot", on_demand);
  if (const Field r = o["spotInterruptionsPerNodeHour"]; r.present()) {
    if (!offering.spot_usd_per_hour)
      o.fail_key("spotInterruptionsPerNodeHour", "spotInterruptionsPerNodeHour needs a spot price in the same offering");
    const double v = r.number();
    if (v < 0) r.fail(fmt::format("{} is negative", r.scalar()));
    if (v > sim::kMaxSpotInterruptionsPerNodeHour)
      r.fail(fmt::format("{} is above the maximum of {:g} per node-hour", r.scalar(), sim::kMaxSpotInterruptionsPerNodeHour));
    offering.spot_interruptions_per_hour = v;
  }
  offering.reserved_1y_usd_per_hour = at_most_on_demand(o["reserved1y"], "reserved1y", on_demand);
  offering.reserved_3y_usd_per_hour = at_most_on_demand(o["reserved3y"], "reserved3y", on_demand);
  offering.capacity_block_usd_per_hour = at_most_on_demand(o["capacityBlock"], "capacityBlock", on_demand);
  return offering;
}

plan::InstanceType parse_instance_type(const Field& t, std::vector<std::string>& warnings) {
  t.require_map();
  known_keys(t, {"name", "gpu", "cpu", "memory", "offerings"});
  plan::InstanceType type;
  const Field name = t["name"];
  type.name = name.required_str();
  if (!instance_type_name(type.name))
    name.fail(fmt::format("'{}' is not an instance type name (lowercase letters, digits, '-' and '.', starting and ending with a "
                          "letter or digit, at most 63)",
                          type.name));
  type.origin = origin_of(name);

  // No `gpu`: a CPU-only type, for the pods without GPUs.
  if (const Field gpu = t["gpu"]; gpu.given()) {
    if (!gpu.present()) gpu.fail("has no value: give {model, count}, or leave gpu out for a CPU-only type");
    gpu.require_map();
    known_keys(gpu, {"model", "count"});
    type.gpu_model = gpu_model(gpu["model"]);
    type.gpus = static_cast<int32_t>(gpu["count"].integer(1, kMaxGpusPerNode));
  }

  const Field cpu = t["cpu"];
  const Quantity cpu_q = cpu.quantity();
  try {
    type.cpu_milli = cpu_q.milli();
  } catch (const std::invalid_argument& e) {
    cpu.fail(e.what());
  }
  if (cpu_q.is_zero()) cpu.fail("must be positive");
  if (type.cpu_milli > kMaxCpuMilli) cpu.fail(fmt::format("'{}' is absurdly large", cpu.scalar()));
  const Field memory = t["memory"];
  const Quantity memory_q = memory.quantity();
  if (memory_q.is_zero()) memory.fail("must be positive");
  if (memory_q.magnitude_units() >= kMaxMemoryBytes) memory.fail(fmt::format("'{}' is absurdly large", memory.scalar()));
  type.memory_bytes = memory_q.value();

  const Field offerings = t["offerings"];
  require_entries(offerings, fmt::format("instance type {} has no offerings", type.name));
  check_count(offerings, kMaxOfferingsPerType, "offerings in one instance type", "kMaxOfferingsPerType");
  std::map<std::string, int> zones;
  for (size_t i = 0, n = offerings.size(); i < n; ++i) {
    const Field o = offerings.at(i);
    type.offerings.push_back(parse_offering(o, zones));
    const plan::Offering& offering = type.offerings.back();
    if (offering.spot_usd_per_hour && !o["spotInterruptionsPerNodeHour"].present())
      warnings.push_back(warning_at(origin_of(o["spot"]),
                                    fmt::format("no spotInterruptionsPerNodeHour: spot {} nodes in {} are taken never to be interrupted",
                                                type.name, offering.zone)));
  }
  return type;
}

plan::PriceCatalog parse_catalog(const Field& root, std::vector<std::string>& warnings) {
  known_keys(root, {"apiVersion", "kind", "metadata", "instanceTypes"});
  plan::PriceCatalog catalog;
  catalog.source = root.source().file;
  const Field types = root["instanceTypes"];
  require_entries(types, "the catalog has no instance types");
  check_count(types, kMaxInstanceTypes, "instance types", "kMaxInstanceTypes");
  std::map<std::string, int> names;
  // A plan names its node pools after the instance type with '.' as '-' (a DNS label): two names
  // that differ only there would make one pool name.
  std::map<std::string, std::pair<std::string, int>> pool_names;
  for (size_t i = 0, n = types.size(); i < n; ++i) {
    plan::InstanceType type = parse_instance_type(types.at(i), warnings);
    if (const auto [it, fresh] = names.emplace(type.name, type.origin.line); !fresh)
      types.at(i)["name"].fail(fmt::format("instance type '{}' is listed twice (first at line {})", type.name, it->second));
    std::string pool = type.name;
    for (char& c : pool) c = c == '.' ? '-' : c;
    if (const auto [it, fresh] = pool_names.emplace(pool, std::make_pair(type.name, type.origin.line)); !fresh)
      types.at(i)["name"].fail(fmt::format("instance type '{}' and '{}' (line {}) would name the same node pool '{}' ('.' becomes '-')",
                                           type.name, it->second.first, it->second.second, pool));
    catalog.instance_types.push_back(std::move(type));
  }
  return catalog;
}

// Where each entry of the constraints' lists was read, for the checks against the catalog.
struct ListOrigins {
  std::vector<sim::FieldOrigin> models, zones;
};

// A list of names, each read by `read`, not empty unless `allow_empty`, none twice.
template <class Read>
void name_list(const Field& list, bool allow_empty, std::vector<sim::FieldOrigin>* origins, Read&& read) {
  if (!list.present()) return;
  if (!list.is_seq()) list.fail(fmt::format("expected a list, got {}", list.type()));
  if (list.size() == 0 && !allow_empty) list.fail("an empty list allows nothing: leave the key out to allow everything");
  std::map<std::string, size_t> seen;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field e = list.at(i);
    const std::string name = read(e);
    if (const auto [it, fresh] = seen.emplace(name, i); !fresh)
      e.fail(fmt::format("'{}' is listed twice (first at [{}])", name, it->second));
    if (origins != nullptr) origins->push_back(origin_of(e));
  }
}

plan::PlanConstraints parse_constraints(const Field& root, ListOrigins& at) {
  known_keys(root, {"apiVersion", "kind", "metadata", "slo", "maxSpotShare", "allowedGpuModels", "zones", "commitments", "allowFp8",
                  "budgetUsd", "minGpuAllocation"});
  plan::PlanConstraints c;
  c.origin = origin_of(root);
  if (const Field slo = root["slo"]; slo.present()) {
    slo.require_map();
    known_keys(slo, {"productionP99PendingSeconds"});
    if (const Field p = slo["productionP99PendingSeconds"]; p.present()) {
      c.production_p99_pending_s = detail::seconds(p);
      c.production_p99_pending_origin = origin_of(p);
    }
  }
  if (const Field m = root["minGpuAllocation"]; m.present()) {
    const double v = m.number();
    if (!(v > 0) || v > 1) m.fail(fmt::format("{} is outside (0, 1]", m.scalar()));
    c.min_gpu_allocation = v;
    c.min_gpu_allocation_origin = origin_of(m);
  }
  if (const Field m = root["maxSpotShare"]; m.present()) {
    c.max_spot_share = m.number();
    if (c.max_spot_share < 0 || c.max_spot_share > 1) m.fail(fmt::format("{} is outside [0, 1]", m.scalar()));
    c.max_spot_share_origin = origin_of(m);
  }
  const Field models = root["allowedGpuModels"];
  name_list(models, false, &at.models, [&](const Field& e) {
    c.allowed_gpu_models.push_back(gpu_model(e));
    return c.allowed_gpu_models.back();
  });
  const Field zones = root["zones"];
  name_list(zones, false, &at.zones, [&](const Field& e) {
    c.allowed_zones.push_back(e.required_str());
    return c.allowed_zones.back();
  });
  if (const Field commitments = root["commitments"]; commitments.present()) {
    c.allowed_commitments.clear();
    name_list(commitments, true, nullptr, [&](const Field& e) {
      const std::string name = e.required_str();
      for (const Commitment k : kCommitments)
        if (plan::commitment_name(k) == name) {
          c.allowed_commitments.push_back(k);
          return name;
        }
      e.fail(fmt::format("unknown commitment '{}' (expected reserved1y, reserved3y, capacityBlock)", name));
    });
  }
  c.allow_fp8 = root["allowFp8"].boolean(false);
  if (const Field b = root["budgetUsd"]; b.present()) {
    const double v = b.number();
    if (v <= 0) b.fail(fmt::format("{} must be positive", b.scalar()));
    if (v > kMaxBudgetUsd) b.fail(fmt::format("{} is above the maximum of {:g} USD", b.scalar(), kMaxBudgetUsd));
    c.budget_usd = v;
    c.budget_origin = origin_of(b);
  }
  return c;
}

// With both documents: the constraints name only models and zones of the catalog; an allowed model
// without an offering in the allowed zones is a warning (the plan cannot buy it).
void check_against_catalog(const plan::PriceCatalog& catalog, const plan::PlanConstraints& c, const ListOrigins& at,
                           std::vector<std::string>& warnings) {
  std::vector<std::string> models, zones;
  for (const plan::InstanceType& t : catalog.instance_types) {
    if (!t.gpu_model.empty() && std::find(models.begin(), models.end(), t.gpu_model) == models.end()) models.push_back(t.gpu_model);
    for (const plan::Offering& o : t.offerings)
      if (std::find(zones.begin(), zones.end(), o.zone) == zones.end()) zones.push_back(o.zone);
  }
  for (size_t i = 0; i < c.allowed_gpu_models.size(); ++i)
    if (std::find(models.begin(), models.end(), c.allowed_gpu_models[i]) == models.end())
      fail_at(at.models[i], fmt::format("GPU model '{}' is not the GPU of any instance type of the catalog (its models: {})",
                                        c.allowed_gpu_models[i], joined(models)));
  for (size_t i = 0; i < c.allowed_zones.size(); ++i)
    if (std::find(zones.begin(), zones.end(), c.allowed_zones[i]) == zones.end())
      fail_at(at.zones[i], fmt::format("zone '{}' is in no offering of the catalog (its zones: {})", c.allowed_zones[i], joined(zones)));
  if (c.allowed_zones.empty()) return;
  for (size_t i = 0; i < c.allowed_gpu_models.size(); ++i) {
    bool offered = false;
    for (const plan::InstanceType& t : catalog.instance_types)
      if (t.gpu_model == c.allowed_gpu_models[i])
        for (const plan::Offering& o : t.offerings)
          offered |= std::find(c.allowed_zones.begin(), c.allowed_zones.end(), o.zone) != c.allowed_zones.end();
    if (!offered)
      warnings.push_back(warning_at(at.models[i], fmt::format("GPU model '{}' has no offering in the allowed zones ({}): the plan cannot buy it",
                                                              c.allowed_gpu_models[i], joined(c.allowed_zones))));
  }
}

}  // namespace

PlanFile parse_plan_text(std::string_view text, const std::string& source) {
  Source src;
  src.file = source;
  PlanFile file;
  ListOrigins constraint_lists;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    root.require_map();
    const Field api = root["apiVersion"];
    const Field kind = root["kind"];
    const std::string k = kind.str();
    const bool ours = k == kPriceCatalogKind || k == kPlanConstraintsKind;
    if (!ours) {
      // Nothing is skipped unread: a plan file holds only the two documents.
      if (!kind.present()) kind.fail(fmt::format("a document without kind in a plan file (expected {} or {}, {})", kPriceCatalogKind,
                                                 kPlanConstraintsKind, kPlanApiVersion));
      kind.fail(fmt::format("kind '{}'{} is not read from a plan file (expected {} or {}, {})", k,
                            api.present() ? fmt::format(" ({})", api.str()) : std::string(), kPriceCatalogKind, kPlanConstraintsKind,
                            kPlanApiVersion));
    }
    if (api.str() != kPlanApiVersion) {
      if (!api.present()) kind.fail(fmt::format("kind {} needs apiVersion {} (apiVersion is missing)", k, kPlanApiVersion));
      api.fail(fmt::format("apiVersion '{}' is not supported for kind {} (expected {})", api.str(), k, kPlanApiVersion));
    }
    if (k == kPriceCatalogKind) {
      if (file.has_catalog) kind.fail(fmt::format("a second {} document (one per file)", kPriceCatalogKind));
      file.catalog = parse_catalog(root, file.warnings);
      file.has_catalog = true;
    } else {
      if (file.has_constraints) kind.fail(fmt::format("a second {} document (one per file)", kPlanConstraintsKind));
      file.constraints = parse_constraints(root, constraint_lists);
      file.has_constraints = true;
    }
  }
  if (!file.has_catalog && !file.has_constraints)
    throw InputError(source, 0, "kind",
                     fmt::format("the file is empty: expected a {} or a {} ({})", kPriceCatalogKind, kPlanConstraintsKind, kPlanApiVersion));
  if (file.has_catalog && file.has_constraints) check_against_catalog(file.catalog, file.constraints, constraint_lists, file.warnings);
  return file;
}

PlanFile read_plan_file(const std::string& path) { return parse_plan_text(read_yaml_file(path), path); }

}  // namespace gpufleet::io
