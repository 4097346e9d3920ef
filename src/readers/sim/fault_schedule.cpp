#include "readers/sim/fault_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "readers/formats/input_limits.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "inputs/sim/fault_checks.h"
#include "model/resources.h"
#include "model/xid.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::kSimApiVersion;
using detail::seconds;
using detail::Source;

constexpr const char* kKinds = "node-failure, xid, device-plugin-failure, spot-interruption";
constexpr const char* kResources = "cpu, memory, nvidia.com/gpu";

void check_count(const Field& list, size_t limit, const char* what, const char* name) {
  if (list.size() > limit) list.fail(limit_message(limit, what, name));
}

// The Field a sim::fault_error message is about: its prefix up to ": " is a dotted path below the
// fault ("xid.code"); "node, pool, zone" and unknown prefixes: the fault itself.
Field field_of(const Field& fault, const std::string& message, std::string& rest) {
  const size_t colon = message.find(": ");
  rest = colon == std::string::npos ? message : message.substr(colon + 2);
  if (colon == std::string::npos) return fault;
  const std::string path = message.substr(0, colon);
  if (path.find(',') != std::string::npos) return fault;
  Field f = fault;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const Field child = f[key];
    if (!child.present()) return f;
    f = child;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return f;
}

sim::Fault parse_fault(const Field& f, const std::vector<sim::SimPool>& pools) {
  f.require_map();
  f.only_keys({"kind", "node", "pool", "zone", "at", "rate", "xid", "recoverAfterSeconds"});
  sim::Fault fault;
  const Field kind = f["kind"];
  const std::string k = kind.required_str();
  if (k == "node-failure") fault.kind = sim::FaultKind::kNodeFailure;
  else if (k == "xid") fault.kind = sim::FaultKind::kXid;
  else if (k == "device-plugin-failure") fault.kind = sim::FaultKind::kDevicePluginFailure;
  else if (k == "spot-interruption") fault.kind = sim::FaultKind::kSpotInterruption;
  else kind.fail(fmt::format("unknown fault kind '{}' (expected {})", k, kKinds));
  fault.target.node = f["node"].str();
  fault.target.pool = f["pool"].str();
  fault.target.zone = f["zone"].str();
  const Field at = f["at"];
  const Field rate = f["rate"];
  if (at.present() == rate.present()) f.fail(at.present() ? "give at or rate, not both" : "at or rate is required");
  if (at.present()) fault.at_s = seconds(at);
  if (rate.present()) {
    rate.require_map();
    rate.only_keys({"perNodeHour", "from", "to"});
    const Field r = rate["perNodeHour"];
    const double v = r.number();
    if (v <= 0) r.fail(fmt::format("{} must be positive", r.scalar()));
    if (v > kMaxFaultsPerNodeHour) r.fail(fmt::format("{} is above the maximum of {:g} per node-hour", r.scalar(), kMaxFaultsPerNodeHour));
    fault.rate_per_node_hour = v;
    if (const Field from = rate["from"]; from.present()) fault.from_s = seconds(from);
    if (const Field to = rate["to"]; to.present()) {
      fault.to_s = seconds(to);
      if (fault.to_s < fault.from_s) to.fail(fmt::format("{:g} is before rate.from {:g}", fault.to_s, fault.from_s));
    }
  }
  const Field xid = f["xid"];
  if (fault.kind == sim::FaultKind::kXid) {
    xid.require_map();
    xid.only_keys({"code", "gpu"});
    fault.xid = static_cast<int32_t>(xid["code"].integer(0, 1'000'000));
    if (!find_xid(fault.xid)) xid["code"].fail(fmt::format("unknown XID {} (known: {})", fault.xid, known_xid_codes()));
    fault.gpu = static_cast<int32_t>(xid["gpu"].opt_integer(0, kMaxGpusPerNode - 1).value_or(-1));
  } else if (xid.present()) {
    f.fail_key("xid", fmt::format("xid is only for kind xid, not {}", k));
  }
  if (const Field r = f["recoverAfterSeconds"]; r.present()) {
    if (fault.kind == sim::FaultKind::kSpotInterruption) f.fail_key("recoverAfterSeconds", "a spot interruption does not recover");
    fault.recover_after_s = seconds(r);
  }
  if (std::optional<std::string> error = sim::fault_error(fault, pools)) {
    std::string message;
    const Field at_fault = field_of(f, *error, message);
    at_fault.fail(message);
  }
  return fault;
}

std::string pool_list(const std::vector<sim::SimPool>& pools) {
  std::string out;
  for (const sim::SimPool& p : pools) out += (out.empty() ? "" : ", ") + p.pool.name;
  return out;
}

const sim::SimPool* find_pool(const std::vector<sim::SimPool>& pools, const std::string& name) {
  for (const sim::SimPool& p : pools)
    if (p.pool.name == name) return &p;
  return nullptr;
}

sim::CapacityOutage parse_outage(const Field& f, const std::vector<sim::SimPool>& pools) {
  f.require_map();
  f.only_keys({"pool", "zone", "capacityType", "from", "to"});
  sim::CapacityOutage o;
  if (const Field p = f["pool"]; p.present()) {
    o.pool = p.required_str();
    if (find_pool(pools, o.pool) == nullptr) p.fail(fmt::format("no pool '{}' (pools: {})", o.pool, pool_list(pools)));
  }
  if (const Field z = f["zone"]; z.present()) {
    o.zone = z.required_str();
    bool known = false;
    std::string zones;
    for (const sim::SimPool& p : pools)
      for (int32_t i = 0; i < p.pool.max_nodes && !known; ++i) {
        const std::string zone = sim::node_zone(p.pool, i);
        known = zone == o.zone;
        if (!zone.empty() && zones.find(zone) == std::string::npos) zones += (zones.empty() ? "" : ", ") + zone;
      }
    if (!known) z.fail(fmt::format("no node is in zone '{}' (zones: {})", o.zone, zones.empty() ? "none" : zones));
  }
  if (const Field c = f["capacityType"]; c.present()) {
    o.capacity_type = c.scalar();
    if (o.capacity_type != "spot" && o.capacity_type != "on-demand")
      c.fail(fmt::format("unknown capacity type '{}' (expected on-demand, spot)", o.capacity_type));
  }
  const Field from = f["from"];
  const Field to = f["to"];
  o.from_s = seconds(from);
  o.to_s = seconds(to);
  if (o.to_s < o.from_s) to.fail(fmt::format("the outage ends at {:g} before it starts at {:g}", o.to_s, o.from_s));
  return o;
}

sim::LimitChange parse_limit_change(const Field& f, const std::vector<std::string>* node_pools) {
  f.require_map();
  f.only_keys({"at", "nodePool", "limits"});
  sim::LimitChange c;
  c.at_s = seconds(f["at"]);
  c.node_pool = f["nodePool"].required_str();
  const Field limits = f["limits"];
  limits.require_map();
  limits.each_entry([&](const std::string& name, const Field& v) {
    const Quantity q = v.quantity();
    int64_t value = 0;
    try {
      if (name == "cpu") value = q.milli();
      else if (name == "memory") value = q.value();
      else if (name == "nvidia.com/gpu") value = q.whole();
      else v.fail(fmt::format("unknown resource '{}' (known: {})", name, kResources));
    } catch (const std::invalid_argument& e) {
      v.fail(e.what());
    }
    c.limits.emplace_back(name, value);
  });
  if (node_pools != nullptr && std::find(node_pools->begin(), node_pools->end(), c.node_pool) == node_pools->end()) {
    std::string known;
    for (const std::string& n : *node_pools) known += (known.empty() ? "" : ", ") + n;
    f["nodePool"].fail(fmt::format("no NodePool '{}' (NodePools: {})", c.node_pool, known.empty() ? "none" : known));
  }
  return c;
}

sim::DriverUpgrade parse_upgrade(const Field& f, const std::vector<sim::SimPool>& pools) {
  f.require_map();
  f.only_keys({"pool", "at", "maxUnavailable", "maxParallelUpgrades", "upgradeSeconds", "drainTimeoutSeconds"});
  sim::DriverUpgrade u;
  const Field p = f["pool"];
  u.pool = p.required_str();
  const sim::SimPool* pool = find_pool(pools, u.pool);
  if (pool == nullptr) p.fail(fmt::format("no pool '{}' (pools: {})", u.pool, pool_list(pools)));
  u.at_s = seconds(f["at"]);
  if (const Field m = f["maxUnavailable"]; m.present()) {
    u.max_unavailable = detail::int_or_percent(m, pool->pool.max_nodes);
    if (u.max_unavailable.value == 0) m.fail("must be at least 1 node or 1%");
  }
  // 0 = no limit but maxUnavailable; above the pool's nodes it limits nothing more.
  if (const Field m = f["maxParallelUpgrades"]; m.present())
    u.max_parallel_upgrades = static_cast<int32_t>(m.integer(0, std::max<int64_t>(pool->pool.max_nodes, 1)));
  if (const Field s = f["upgradeSeconds"]; s.present()) u.upgrade_s = seconds(s);
  if (const Field s = f["drainTimeoutSeconds"]; s.present()) u.drain_timeout_s = seconds(s);
  return u;
}

sim::FaultSchedule parse_document(const Field& root, const std::vector<sim::SimPool>& pools,
                                  const std::vector<std::string>* node_pools) {
  root.only_keys({"apiVersion", "kind", "metadata", "seed", "faults", "capacityOutages", "limitChanges", "driverUpgrades"});
  sim::FaultSchedule s;
  if (const Field seed = root["seed"]; seed.present())
    s.seed = static_cast<uint64_t>(seed.integer(0, std::numeric_limits<int64_t>::max()));
  const FaultScheduleLimits& limits = kFaultScheduleLimits;
  const Field faults = root["faults"];
  check_count(faults, limits.max_faults, "faults", "FaultScheduleLimits::max_faults");
  for (size_t i = 0; i < faults.size(); ++i) s.faults.push_back(parse_fault(faults.at(i), pools));
  const Field outages = root["capacityOutages"];
  check_count(outages, limits.max_capacity_outages, "capacity outages", "FaultScheduleLimits::max_capacity_outages");
  for (size_t i = 0; i < outages.size(); ++i) s.outages.push_back(parse_outage(outages.at(i), pools));
  const Field changes = root["limitChanges"];
  check_count(changes, limits.max_limit_changes, "limit changes", "FaultScheduleLimits::max_limit_changes");
  for (size_t i = 0; i < changes.size(); ++i) s.limit_changes.push_back(parse_limit_change(changes.at(i), node_pools));
  const Field upgrades = root["driverUpgrades"];
  check_count(upgrades, limits.max_driver_upgrades, "driver upgrades", "FaultScheduleLimits::max_driver_upgrades");
  for (size_t i = 0; i < upgrades.size(); ++i) s.upgrades.push_back(parse_upgrade(upgrades.at(i), pools));
  return s;
}

}  // namespace

std::optional<sim::FaultSchedule> parse_fault_schedule_text(std::string_view text, const std::string& source_name,
                                                            const std::vector<sim::SimPool>& pools, bool standalone,
                                                            const std::vector<std::string>* node_pools) {
  Source src;
  src.file = source_name;
  std::optional<sim::FaultSchedule> found;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    if (standalone) root.require_map();
    if (doc.type != detail::YamlType::kMapping) continue;
    const Field api = root["apiVersion"];
    const Field kind = root["kind"];
    if (kind.str() != kFaultScheduleKind) {
      if (standalone) kind.fail(fmt::format("unknown kind '{}' in a fault schedule file (expected {})", kind.str(), kFaultScheduleKind));
      continue;
    }
    if (api.str() != kSimApiVersion) {
      if (!api.present()) kind.fail(fmt::format("kind {} needs apiVersion {} (apiVersion is missing)", kFaultScheduleKind, kSimApiVersion));
      api.fail(fmt::format("apiVersion '{}' is not supported for kind {} (expected {})", api.str(), kFaultScheduleKind, kSimApiVersion));
    }
    if (found) kind.fail(fmt::format("a second {} document (one per file)", kFaultScheduleKind));
    found = parse_document(root, pools, node_pools);
  }
  if (standalone && !found) throw InputError(source_name, 0, "kind", fmt::format("no {} document in the file", kFaultScheduleKind));
  return found;
}

sim::FaultSchedule read_fault_schedule_file(const std::string& path, const std::vector<sim::SimPool>& pools,
                                            const std::vector<std::string>* node_pools) {
  return *parse_fault_schedule_text(read_yaml_file(path), path, pools, true, node_pools);
}

std::vector<std::string> node_pool_names(const sim::ClusterConfig& cluster) {
  std::vector<std::string> names;
  for (const sim::KarpenterNodePool& p : cluster.node_pools) names.push_back(p.name);
  return names;
}


}  // namespace gpufleet::io
