#include "readers/k8s/dra_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cel/cel.h"
#include "readers/formats/yaml_field.h"
#include "readers/k8s/dra_cel.h"
#include "readers/k8s/k8s_fields.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using Val = detail::Field;
using Warn = std::function<void(const std::string&, const Val&, const std::string&)>;

enum class Api { kV1, kV1beta2, kV1beta1 };

Api api_of(const Val& v, const std::string& kind) {
  const Val api = v["apiVersion"];
  const std::string s = api.required_str();
  if (s == "resource.k8s.io/v1") return Api::kV1;
  if (s == "resource.k8s.io/v1beta2") return Api::kV1beta2;
  if (s == "resource.k8s.io/v1beta1") return Api::kV1beta1;
  api.fail(fmt::format("unsupported apiVersion '{}' for {} (expected resource.k8s.io/v1, v1beta2 or v1beta1)", s, kind));
}

std::string object_key(const Val& v, bool namespaced) {
  const std::string name = v["metadata"]["name"].required_str();
  if (!namespaced) return name;
  std::string ns = v["metadata"]["namespace"].str();
  return (ns.empty() ? "default" : ns) + "/" + name;
}

std::vector<DeviceSelector> selectors(const Val& list) {
  std::vector<DeviceSelector> out;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val s = list.at(i);
    s.only_keys({"cel"});
    const Val cel = s["cel"];
    if (!cel.present()) s.fail("a selector needs `cel` (the only selector type)");
    cel.only_keys({"expression"});
    const Val expr = cel["expression"];
    DeviceSelector sel;
    sel.expression = expr.required_str();
    try {
      sel.matcher = compile_device_selector(sel.expression);
    } catch (const cel::CompileError& e) {
      // Where in the expression: "column C" on a one-line expression, "line L, column C" within a
      // multi-line one. The error is at the field, except in a literal block scalar (`|`) whose lines
      // the YAML reader located: there it is at the construct's own line and column in the file.
      const bool multi_line = sel.expression.find('\n') != std::string::npos;
      const std::string at = e.line() == 0 && e.column() == 0 ? "in the expression"
                             : !multi_line ? fmt::format("at column {} of the expression", e.column())
                                           : fmt::format("at line {}, column {} of the expression", e.line(), e.column());
      std::string message;
      if (e.construct() == "result type") message = fmt::format("CEL selector {}", e.message());
      else if (e.construct() == "type") message = fmt::format("CEL type error {}: {}", at, e.message());
      else if (e.construct() == "syntax") message = fmt::format("CEL syntax error {}: {}", at, e.message());
      else if (e.construct().rfind("limit ", 0) == 0) message = fmt::format("CEL expression over its {} {}: {}", e.construct().substr(6), at, e.message());
      else message = fmt::format("CEL {} not supported {}: {}", e.construct(), at, e.message());
      if (multi_line && e.line() > 0 && e.column() > 0) expr.fail_in_text(e.line(), e.column(), message);
      expr.fail(message);
    }
    out.push_back(std::move(sel));
  }
  return out;
}

// Counters ({name: {value}}).
// A quantity of consumable capacity or of a counter in milli-units (the allocator's arithmetic).
int64_t milli_of(const Val& v) {
  const Quantity q = v.quantity();
  try {
    return q.milli();
  } catch (const std::invalid_argument&) {
    v.fail(fmt::format("{} is above the largest amount gpufleet's milli-unit arithmetic holds (about 9.2e15)", q.to_string()));
  }
}

// Counters ({name: {value}}). The allocator sums them in milli-units, so a value above about 9.2e15
// is refused at its field (the API server accepts it; gpufleet cannot count it).
std::map<std::string, Quantity> counter_quantities(const Val& map) {
  std::map<std::string, Quantity> out;
  map.each_entry([&](const std::string& name, const Val& q) {
    q.only_keys({"value"});
    milli_of(q["value"]);
    out[name] = q["value"].quantity();
  });
  return out;
}

std::string milli_text(int64_t milli) { return Quantity::parse(fmt::format("{}m", milli)).to_string(); }

// A device capacity's requestPolicy (resource/v1 CapacityRequestPolicy), checked as the API server's
// validation checks it (kubernetes pkg/apis/resource/validation/validation.go, validateRequestPolicy;
// the field comments of staging/src/k8s.io/api/resource/v1/types.go): requestPolicy only on a device
// with allowMultipleAllocations; not both validValues and validRange; validValues 1..10, ascending,
// none above the capacity, default among them; validRange min <= max <= capacity, step > 0, min +
// step <= capacity, max - min a multiple of step, default within [min, max] and min + n x step; a
// lone default at most the capacity. Each error at its field.
DraCapacityRequestPolicy request_policy(const Val& p, int64_t capacity_milli) {
  p.require_map();
  p.only_keys({"default", "validValues", "validRange"});
  DraCapacityRequestPolicy out;
  const Val def = p["default"], values = p["validValues"], range = p["validRange"];
  if (def.present()) out.default_milli = milli_of(def);
  if (values.present() && range.present()) p.fail("set at most one of validValues and validRange");
  if (values.present()) {
    if (values.size() == 0 || values.size() > 10) values.fail(fmt::format("{} valid values: a policy lists 1 to 10", values.size()));
    for (size_t i = 0, n = values.size(); i < n; ++i) {
      const int64_t v = milli_of(values.at(i));
      if (v > capacity_milli) values.at(i).fail(fmt::format("{} is above the capacity's value {}", milli_text(v), milli_text(capacity_milli)));
      if (!out.valid_values_milli.empty() && v <= out.valid_values_milli.back())
        values.at(i).fail("valid values must be sorted in ascending order, without repeats");
      out.valid_values_milli.push_back(v);
    }
    if (!out.default_milli) p.fail("a policy with validValues needs a default among them");
    if (std::find(out.valid_values_milli.begin(), out.valid_values_milli.end(), *out.default_milli) == out.valid_values_milli.end())
      def.fail(fmt::format("default {} is not one of validValues", milli_text(*out.default_milli)));
  } else if (range.present()) {
    range.require_map();
    range.only_keys({"min", "max", "step"});
    out.has_range = true;
    if (!range["min"].present()) range.fail("validRange needs min");
    out.range_min_milli = milli_of(range["min"]);
    if (out.range_min_milli > capacity_milli)
      range["min"].fail(fmt::format("min {} is above the capacity's value {}", milli_text(out.range_min_milli), milli_text(capacity_milli)));
    if (range["max"].present()) {
      out.range_max_milli = milli_of(range["max"]);
      if (*out.range_max_milli < out.range_min_milli) range["max"].fail("max is below min");
      if (*out.range_max_milli > capacity_milli)
        range["max"].fail(fmt::format("max {} is above the capacity's value {}", milli_text(*out.range_max_milli), milli_text(capacity_milli)));
    }
    if (range["step"].present()) {
      const int64_t step = milli_of(range["step"]);
      if (step <= 0) range["step"].fail("step must be above 0");
      if (step > capacity_milli - out.range_min_milli) range["step"].fail("min + step is above the capacity's value");
      if (out.range_max_milli && (*out.range_max_milli - out.range_min_milli) % step != 0)
        range["max"].fail("max is not min plus a multiple of step");
      out.range_step_milli = step;
    }
    if (!out.default_milli) p.fail("a policy with validRange needs a default within it");
    const int64_t d = *out.default_milli;
    if (d < out.range_min_milli || (out.range_max_milli && d > *out.range_max_milli))
      def.fail(fmt::format("default {} is outside validRange", milli_text(d)));
    if (out.range_step_milli && (d - out.range_min_milli) % *out.range_step_milli != 0)
      def.fail(fmt::format("default {} is not min plus a multiple of step", milli_text(d)));
  } else if (out.default_milli && *out.default_milli > capacity_milli) {
    def.fail(fmt::format("default {} is above the capacity's value {}", milli_text(*out.default_milli), milli_text(capacity_milli)));
  }
  return out;
}

// A device's capacity map ({name: {value, requestPolicy}}), with the policies (see request_policy).
void device_capacity(const Val& map, DraDevice& d) {
  map.each_entry([&](const std::string& name, const Val& q) {
    q.only_keys({"value", "requestPolicy"});
    d.capacity[name] = q["value"].quantity();
    const Val policy = q["requestPolicy"];
    if (!policy.present()) return;
    if (!d.allow_multiple_allocations)
      policy.fail("requestPolicy is only allowed on a device with allowMultipleAllocations: true");
    d.request_policies[name] = request_policy(policy, milli_of(q["value"]));
  });
}

DraAttribute attribute(const Val& v) {
  v.only_keys({"int", "bool", "string", "version"});
  DraAttribute a;
  int set = 0;
  if (v["int"].present()) {
    a.kind = DraAttribute::Kind::kInt;
    a.int_value = v["int"].integer(INT64_MIN, INT64_MAX);
    ++set;
  }
  if (v["bool"].present()) {
    a.kind = DraAttribute::Kind::kBool;
    a.bool_value = v["bool"].boolean(false);
    ++set;
  }
  if (v["string"].present()) {
    a.kind = DraAttribute::Kind::kString;
    a.string_value = v["string"].scalar();
    ++set;
  }
  if (v["version"].present()) {
    a.kind = DraAttribute::Kind::kVersion;
    a.string_value = v["version"].scalar();
    try {
      cel::Semver::parse(a.string_value);
    } catch (const std::invalid_argument& e) {
      v["version"].fail(fmt::format("'{}' is not a semantic version: {}", a.string_value, e.what()));
    }
    ++set;
  }
  if (set != 1) v.fail("an attribute needs exactly one of int, bool, string, version");
  return a;
}

std::vector<DraCounterConsumption> consumes_counters(const Val& list) {
  std::vector<DraCounterConsumption> out;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val c = list.at(i);
    c.only_keys({"counterSet", "counters"});
    DraCounterConsumption cc;
    cc.counter_set = c["counterSet"].required_str();
    cc.counters = counter_quantities(c["counters"]);
    out.push_back(std::move(cc));
  }
  return out;
}

std::string where(const Val& v) {
  const auto [line, column] = v.position();
  return fmt::format("{}:{}:{}: field '{}'", v.source().file, line, column, v.path());
}

// The consumesCounters entries of `body` (a device's fields) as references of device `name` in slice
// `slice` (see DraCounterReference).
void collect_references(const Val& body, const std::string& name, size_t slice, std::vector<DraCounterReference>* references) {
  if (references == nullptr) return;
  const Val list = body["consumesCounters"];
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val c = list.at(i);
    DraCounterReference r;
    r.slice = slice;
    r.device = name;
    r.counter_set = c["counterSet"].str();
    r.where = where(c["counterSet"]);
    c["counters"].each_entry([&](const std::string& counter, const Val& q) { r.counters.emplace_back(counter, where(q)); });
    references->push_back(std::move(r));
  }
}

DraDevice device(const Val& d, Api api, const Warn& warn, size_t slice, std::vector<DraCounterReference>* references) {
  DraDevice out;
  out.name = d["name"].required_str();
  Val body = d;
  if (api == Api::kV1beta1) {
    d.only_keys({"name", "basic"});
    body = d["basic"];
    if (!body.present()) return out;  // a v1beta1 device without `basic`: no attributes
  }
  const bool beta1 = api == Api::kV1beta1;
  if (beta1)
    body.only_keys({"attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
                    "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations"});
  else
    body.only_keys({"name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
                    "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations"});
  body["attributes"].each_entry([&](const std::string& name, const Val& a) { out.attributes[name] = attribute(a); });
  out.allow_multiple_allocations = body["allowMultipleAllocations"].boolean(false);
  device_capacity(body["capacity"], out);
  out.consumes_counters = consumes_counters(body["consumesCounters"]);
  collect_references(body, out.name, slice, references);
  for (const char* k : {"nodeName", "nodeSelector", "allNodes"})
    if (body[k].present()) body[k].fail("per-device node selection is not modelled (set nodeName, nodeSelector or allNodes on the slice)");
  const Val taints = body["taints"];  // resource/v1 DeviceTaint (KEP-5055)
  if (taints.size() > kDraMaxDeviceTaints)
    taints.fail(fmt::format("{} taints, more than the {} a device may have", taints.size(), kDraMaxDeviceTaints));
  for (size_t i = 0, n = taints.size(); i < n; ++i) {
    const Val t = taints.at(i);
    t.only_keys({"key", "value", "effect", "timeAdded"});
    out.taints.push_back(detail::read_device_taint(t));
  }
  if (body["bindingConditions"].size() > 0)
    warn("device bindingConditions", body["bindingConditions"], "the device is allocated without waiting for its conditions");
  if (out.allow_multiple_allocations && !out.consumes_counters.empty())
    warn("consumesCounters of a device with allowMultipleAllocations", body["consumesCounters"],
         "each allocation made while placing takes the counters again (shares already allocated take them once)");
  return out;
}

void resource_slice(const Val& v, Api api, DraCatalog& catalog, const Warn& warn, std::vector<DraCounterReference>* references) {
  v.only_keys({"apiVersion", "kind", "metadata", "spec"});
  ResourceSlice s;
  s.name = v["metadata"]["name"].required_str();
  for (const ResourceSlice& other : catalog.slices)
    if (other.name == s.name) v["metadata"]["name"].fail(fmt::format("duplicate ResourceSlice '{}'", s.name));
  const Val spec = v["spec"];
  spec.require_map();
  spec.only_keys({"driver", "pool", "nodeName", "nodeSelector", "allNodes", "devices", "sharedCounters", "perDeviceNodeSelection"});
  s.driver = spec["driver"].required_str();
  const Val pool = spec["pool"];
  pool.require_map();
  pool.only_keys({"name", "generation", "resourceSliceCount"});
  s.pool = pool["name"].required_str();
  s.generation = pool["generation"].integer(0, INT64_MAX);
  s.resource_slice_count = pool["resourceSliceCount"].integer(1, INT64_MAX);
  s.node_name = spec["nodeName"].str();
  s.all_nodes = spec["allNodes"].boolean(false);
  const Val selector = spec["nodeSelector"];
  if (selector.present()) {
    selector.only_keys({"nodeSelectorTerms"});
    const Val terms = selector["nodeSelectorTerms"];
    for (size_t i = 0, n = terms.size(); i < n; ++i) s.node_selector.push_back(detail::read_node_selector_term(terms.at(i)));
    if (s.node_selector.empty()) terms.fail("a nodeSelector needs at least one term");
  }
  if (spec["perDeviceNodeSelection"].boolean(false))
    spec["perDeviceNodeSelection"].fail("per-device node selection is not modelled");
  const int scopes = (s.node_name.empty() ? 0 : 1) + (s.all_nodes ? 1 : 0) + (s.node_selector.empty() ? 0 : 1);
  const Val shared = spec["sharedCounters"];
  if (scopes > 1) spec.fail("set exactly one of nodeName, nodeSelector, allNodes");
  if (scopes == 0 && shared.size() == 0) spec.fail("set exactly one of nodeName, nodeSelector, allNodes");
  const Val devices = spec["devices"];
  if (devices.size() > kDraMaxDevicesPerSlice)
    devices.fail(fmt::format("{} devices, more than the {} a ResourceSlice may hold", devices.size(), kDraMaxDevicesPerSlice));
  std::set<std::string> names;
  for (size_t i = 0, n = devices.size(); i < n; ++i) {
    s.devices.push_back(device(devices.at(i), api, warn, catalog.slices.size(), references));
    if (!names.insert(s.devices.back().name).second)
      devices.at(i)["name"].fail(fmt::format("duplicate device name '{}' in the slice", s.devices.back().name));
  }
  for (size_t i = 0, n = shared.size(); i < n; ++i) {
    const Val c = shared.at(i);
    c.only_keys({"name", "counters"});
    DraCounterSet cs;
    cs.name = c["name"].required_str();
    cs.counters = counter_quantities(c["counters"]);
    s.shared_counters.push_back(std::move(cs));
  }
  // Each consumesCounters entry should name a counter set of this slice's pool, which may be defined
  // in another of its slices: check_counter_references checks them once all are read.
  catalog.slices.push_back(std::move(s));
}

void device_class(const Val& v, DraCatalog& catalog, const Warn& warn) {
  v.only_keys({"apiVersion", "kind", "metadata", "spec"});
  DeviceClass c;
  c.name = object_key(v, false);
  const Val spec = v["spec"];
  spec.only_keys({"selectors", "config", "extendedResourceName"});
  c.selectors = selectors(spec["selectors"]);
  if (spec["config"].size() > 0) warn("DeviceClass config (opaque driver parameters)", spec["config"], "ignored");
  if (spec["extendedResourceName"].present())
    warn("DeviceClass extendedResourceName", spec["extendedResourceName"], "pods asking for the extended resource do not get DRA devices");
  if (catalog.classes.count(c.name)) v["metadata"]["name"].fail(fmt::format("duplicate DeviceClass '{}'", c.name));
  catalog.classes[c.name] = std::move(c);
}

// A request's tolerations (resource/v1 DeviceToleration, KEP-5055), at most kDraMaxTolerations.
std::vector<Toleration> tolerations(const Val& list) {
  if (list.size() > kDraMaxTolerations)
    list.fail(fmt::format("{} tolerations, more than the {} a request may have", list.size(), kDraMaxTolerations));
  std::vector<Toleration> out;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val t = list.at(i);
    t.only_keys({"key", "operator", "value", "effect", "tolerationSeconds"});
    out.push_back(detail::read_device_toleration(t));
  }
  return out;
}

DraExactRequest exact_request(const Val& r, bool subrequest) {
  DraExactRequest out;
  if (subrequest) out.name = r["name"].required_str();
  out.device_class_name = r["deviceClassName"].required_str();
  out.selectors = selectors(r["selectors"]);
  const Val mode = r["allocationMode"];
  const std::string m = mode.str("ExactCount");
  if (m == "All") out.allocation_mode = DraAllocationMode::kAll;
  else if (m != "ExactCount") mode.fail(fmt::format("unknown allocationMode '{}' (expected ExactCount or All)", m));
  const Val count = r["count"];
  if (count.present()) {
    if (out.allocation_mode == DraAllocationMode::kAll) count.fail("count is only allowed with allocationMode ExactCount");
    out.count = count.integer(1, static_cast<int64_t>(kDraAllocationResultsMaxSize));
  }
  if (r["adminAccess"].boolean(false))
    r["adminAccess"].fail("adminAccess is refused: an admin-access request shares devices that other claims hold "
                          "(DRAAdminAccess, for monitoring pods), which gpufleet does not model");
  out.tolerations = tolerations(r["tolerations"]);
  if (const Val capacity = r["capacity"]; capacity.present()) {  // resource/v1 CapacityRequirements
    capacity.require_map();
    capacity.only_keys({"requests"});
    capacity["requests"].each_entry([&](const std::string& name, const Val& q) { out.capacity_requests_milli[name] = milli_of(q); });
  }
  return out;
}

DraClaimSpec claim_spec(const Val& spec, Api api, const Warn& warn) {
  DraClaimSpec out;
  spec.only_keys({"devices"});
  const Val devices = spec["devices"];
  devices.only_keys({"requests", "constraints", "config"});
  const Val requests = devices["requests"];
  if (requests.size() > kDraMaxRequests)
    requests.fail(fmt::format("{} requests, more than the {} a claim may have", requests.size(), kDraMaxRequests));
  std::set<std::string> names;
  for (size_t i = 0, n = requests.size(); i < n; ++i) {
    const Val r = requests.at(i);
    DraDeviceRequest req;
    req.name = r["name"].required_str();
    if (!names.insert(req.name).second) r["name"].fail(fmt::format("duplicate request name '{}'", req.name));
    const Val first = r["firstAvailable"];
    if (api == Api::kV1beta1 && !first.present()) {
      r.only_keys({"name", "deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity", "firstAvailable"});
      req.exactly = exact_request(r, false);
    } else if (api == Api::kV1beta1) {
      r.only_keys({"name", "firstAvailable"});
    } else {
      r.only_keys({"name", "exactly", "firstAvailable"});
      const Val exactly = r["exactly"];
      if (exactly.present() == first.present()) r.fail("set exactly one of `exactly` and `firstAvailable`");
      if (exactly.present()) {
        exactly.only_keys({"deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity"});
        req.exactly = exact_request(exactly, false);
      }
    }
    if (first.present()) {
      if (first.size() == 0) first.fail("firstAvailable needs at least one subrequest");
      if (first.size() > kDraMaxSubRequests)
        first.fail(fmt::format("{} subrequests, more than the {} a request may have", first.size(), kDraMaxSubRequests));
      std::set<std::string> subs;
      for (size_t k = 0, m = first.size(); k < m; ++k) {
        const Val s = first.at(k);
        s.only_keys({"name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity"});
        req.first_available.push_back(exact_request(s, true));
        if (!subs.insert(req.first_available.back().name).second)
          s["name"].fail(fmt::format("duplicate subrequest name '{}'", req.first_available.back().name));
      }
    }
    out.requests.push_back(std::move(req));
  }
  const Val constraints = devices["constraints"];
  for (size_t i = 0, n = constraints.size(); i < n; ++i) {
    const Val c = constraints.at(i);
    c.only_keys({"requests", "matchAttribute", "distinctAttribute"});
    if (c["distinctAttribute"].present()) c["distinctAttribute"].fail("distinctAttribute constraints are not modelled");
    DraConstraint k;
    k.match_attribute = c["matchAttribute"].required_str();
    if (k.match_attribute.find('/') == std::string::npos)
      c["matchAttribute"].fail("matchAttribute must be a fully qualified name (domain/id)");
    const Val reqs = c["requests"];
    for (size_t j = 0, m = reqs.size(); j < m; ++j) {
      k.requests.push_back(reqs.at(j).required_str());
      const std::string base = k.requests.back().substr(0, k.requests.back().find('/'));
      if (!names.count(base)) reqs.at(j).fail(fmt::format("no request named '{}' in this claim", base));
    }
    out.constraints.push_back(std::move(k));
  }
  if (devices["config"].size() > 0) warn("ResourceClaim config (opaque driver parameters)", devices["config"], "ignored");
  return out;
}

void resource_claim(const Val& v, Api api, DraCatalog& catalog, const Warn& warn) {
  v.only_keys({"apiVersion", "kind", "metadata", "spec", "status"});
  ResourceClaim c;
  const std::string key = object_key(v, true);
  c.namespace_name = key.substr(0, key.find('/'));
  c.name = key.substr(key.find('/') + 1);
  c.spec = claim_spec(v["spec"], api, warn);
  const Val status = v["status"];
  status.only_keys({"allocation", "reservedFor", "devices"});
  const Val alloc = status["allocation"];
  if (alloc.present()) {
    alloc.only_keys({"devices", "nodeSelector", "allocationTimestamp"});
    DraAllocation a;
    const Val results = alloc["devices"]["results"];
    alloc["devices"].only_keys({"results", "config"});
    for (size_t i = 0, n = results.size(); i < n; ++i) {
      const Val r = results.at(i);
      r.only_keys({"request", "driver", "pool", "device", "adminAccess", "tolerations", "bindingConditions",
                   "bindingFailureConditions", "shareID", "consumedCapacity"});
      a.devices.push_back({r["request"].required_str(), r["driver"].required_str(), r["pool"].required_str(), r["device"].required_str()});
      DraDeviceResult& d = a.devices.back();
      // A shared allocation of a device with allowMultipleAllocations (KEP-5075): its shareID and
      // the capacity it consumes.
      d.tolerations = tolerations(r["tolerations"]);
      d.share_id = r["shareID"].str();
      r["consumedCapacity"].each_entry([&](const std::string& name, const Val& q) { d.consumed_capacity_milli[name] = milli_of(q); });
      if (d.share_id.empty() && r["consumedCapacity"].present()) r["consumedCapacity"].fail("consumedCapacity needs a shareID");
      for (const auto& [other_key, other] : catalog.claims)  // one device, one claim (no admin access), unless both share it
        if (other.allocation)
          for (const DraDeviceResult& o : other.allocation->devices)
            if (o.driver == d.driver && o.pool == d.pool && o.device == d.device && !(o.shared() && d.shared()))
              r["device"].fail(fmt::format("device {} is already allocated to ResourceClaim {}", dra_device_id(d.driver, d.pool, d.device), other_key));
    }
    const Val terms = alloc["nodeSelector"]["nodeSelectorTerms"];
    for (size_t i = 0, n = terms.size(); i < n; ++i) a.node_selector.push_back(detail::read_node_selector_term(terms.at(i)));
    c.allocation = std::move(a);
  }
  const Val reserved = status["reservedFor"];
  for (size_t i = 0, n = reserved.size(); i < n; ++i) {
    const Val r = reserved.at(i);
    r.only_keys({"apiGroup", "resource", "name", "uid"});
    c.reserved_for.push_back(c.namespace_name + "/" + r["name"].required_str());
  }
  if (reserved.size() > kDraReservedForMaxSize)
    reserved.fail(fmt::format("{} consumers, more than the {} a claim may have", reserved.size(), kDraReservedForMaxSize));
  if (catalog.claims.count(key)) v["metadata"]["name"].fail(fmt::format("duplicate ResourceClaim '{}'", key));
  catalog.claims[key] = std::move(c);
}

void resource_claim_template(const Val& v, Api api, DraCatalog& catalog, const Warn& warn) {
  v.only_keys({"apiVersion", "kind", "metadata", "spec"});
  ResourceClaimTemplate t;
  const std::string key = object_key(v, true);
  t.namespace_name = key.substr(0, key.find('/'));
  t.name = key.substr(key.find('/') + 1);
  const Val spec = v["spec"];
  spec.only_keys({"metadata", "spec"});
  t.spec = claim_spec(spec["spec"], api, warn);
  if (catalog.templates.count(key)) v["metadata"]["name"].fail(fmt::format("duplicate ResourceClaimTemplate '{}'", key));
  catalog.templates[key] = std::move(t);
}

// A DeviceTaintRule (resource.k8s.io/v1beta2 and v1alpha3; cluster-scoped): spec.deviceSelector
// {driver, pool, device} and spec.taint. v1alpha3's deviceSelector also had deviceClassName and CEL
// selectors, which gpufleet does not model: a warning names each (the rule then matches by the
// other criteria only). status is read and ignored (the eviction controller's conditions).
void device_taint_rule(const Val& v, DraCatalog& catalog, const Warn& warn) {
  const Val api = v["apiVersion"];
  const std::string version = api.required_str();
  if (version != "resource.k8s.io/v1beta2" && version != "resource.k8s.io/v1alpha3")
    api.fail(fmt::format("unsupported apiVersion '{}' for DeviceTaintRule (expected resource.k8s.io/v1beta2 or v1alpha3)", version));
  v.only_keys({"apiVersion", "kind", "metadata", "spec", "status"});
  DraDeviceTaintRule rule;
  rule.name = object_key(v, false);
  const Val spec = v["spec"];
  spec.require_map();
  spec.only_keys({"deviceSelector", "taint"});
  const Val selector = spec["deviceSelector"];
  if (selector.present()) {
    selector.require_map();
    selector.only_keys({"driver", "pool", "device", "deviceClassName", "selectors"});
    rule.has_selector = true;
    for (const char* k : {"driver", "pool", "device"})
      if (selector[k].present()) {
        std::optional<std::string>& field = std::string(k) == "driver" ? rule.driver : std::string(k) == "pool" ? rule.pool : rule.device;
        field = selector[k].required_str();
      }
    if (selector["deviceClassName"].present())
      warn("DeviceTaintRule deviceSelector.deviceClassName", selector["deviceClassName"],
           "ignored: the rule matches by driver, pool and device only");
    if (selector["selectors"].size() > 0)
      warn("DeviceTaintRule deviceSelector.selectors", selector["selectors"], "ignored: the rule matches by driver, pool and device only");
  }
  else
    warn("DeviceTaintRule spec.deviceSelector", spec, "absent: the rule matches no device (an empty selector matches every device)");
  if (v["status"].present()) warn("DeviceTaintRule status", v["status"], "read and ignored: the API server's report, not the rule");
  const Val taint = spec["taint"];
  if (!taint.present()) spec.fail("a DeviceTaintRule needs spec.taint");
  taint.only_keys({"key", "value", "effect", "timeAdded"});
  rule.taint = detail::read_device_taint(taint);
  if (catalog.taint_rules.count(rule.name)) v["metadata"]["name"].fail(fmt::format("duplicate DeviceTaintRule '{}'", rule.name));
  catalog.taint_rules[rule.name] = std::move(rule);
}

}  // namespace

std::vector<std::string> check_counter_references(const DraCatalog& catalog, const std::vector<DraCounterReference>& references) {
  std::vector<std::string> out;
  if (references.empty()) return out;
  std::map<std::pair<std::string, std::string>, int64_t> newest;  // (driver, pool) -> generation
  for (const ResourceSlice& s : catalog.slices) {
    auto [it, first] = newest.try_emplace({s.driver, s.pool}, s.generation);
    if (!first) it->second = std::max(it->second, s.generation);
  }
  for (const DraCounterReference& r : references) {
    const ResourceSlice& slice = catalog.slices.at(r.slice);
    if (slice.generation < newest.at({slice.driver, slice.pool})) continue;
    const DraCounterSet* set = nullptr;
    for (const ResourceSlice& s : catalog.slices) {
      if (s.driver != slice.driver || s.pool != slice.pool || s.generation != slice.generation) continue;
      for (const DraCounterSet& cs : s.shared_counters)
        if (cs.name == r.counter_set) set = &cs;
    }
    const std::string pool = slice.driver + "/" + slice.pool;
    if (set == nullptr) {
      out.push_back(fmt::format("{}: counter set '{}' of device {} is defined in no ResourceSlice of pool {} (generation {}): the API server "
                                "accepts the slice; gpufleet never allocates the device",
                                r.where, r.counter_set, r.device, pool, slice.generation));
      continue;
    }
    for (const auto& [counter, at] : r.counters)
      if (set->counters.count(counter) == 0)
        out.push_back(fmt::format("{}: counter '{}' of device {} is not in counter set '{}' of pool {}: the API server accepts the slice; "
                                  "gpufleet never allocates the device",
                                  at, counter, r.device, r.counter_set, pool));
  }
  return out;
}

bool is_dra_kind(const std::string& kind) {
  return kind == "ResourceSlice" || kind == "DeviceClass" || kind == "ResourceClaim" || kind == "ResourceClaimTemplate" ||
         kind == "DeviceTaintRule";
}

void read_dra_object(const Val& object, const std::string& kind, DraCatalog& catalog, const Warn& warn,
                     std::vector<DraCounterReference>* references) {
  if (kind == "DeviceTaintRule") return device_taint_rule(object, catalog, warn);
  const Api api = api_of(object, kind);
  if (kind == "ResourceSlice") return resource_slice(object, api, catalog, warn, references);
  if (kind == "DeviceClass") return device_class(object, catalog, warn);
  if (kind == "ResourceClaim") return resource_claim(object, api, catalog, warn);
  return resource_claim_template(object, api, catalog, warn);
}

std::vector<PodResourceClaim> read_pod_resource_claims(const Val& list, const std::string& pod_namespace,
                                                       std::vector<DraClaimReference>* references) {
  std::vector<PodResourceClaim> out;
  std::set<std::string> names;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Val c = list.at(i);
    c.only_keys({"name", "resourceClaimName", "resourceClaimTemplateName"});
    PodResourceClaim pc;
    pc.name = c["name"].required_str();
    if (!names.insert(pc.name).second) c["name"].fail(fmt::format("duplicate pod resource claim name '{}'", pc.name));
    pc.resource_claim_name = c["resourceClaimName"].str();
    pc.resource_claim_template_name = c["resourceClaimTemplateName"].str();
    if (pc.resource_claim_name.empty() == pc.resource_claim_template_name.empty())
      c.fail("set exactly one of resourceClaimName and resourceClaimTemplateName");
    if (references != nullptr) {
      const Val named = pc.resource_claim_name.empty() ? c["resourceClaimTemplateName"] : c["resourceClaimName"];
      const auto [line, column] = named.position();
      references->push_back({pod_namespace, pc.resource_claim_name, pc.resource_claim_template_name,
                             SourcePosition{named.source().file, line, column, named.path()}});
    }
    out.push_back(std::move(pc));
  }
  return out;
}

std::vector<std::string> dra_feature_warnings(const DraCatalog& catalog) {
  std::vector<std::string> out;
  if (catalog.consumable_capacity) return out;
  int devices = 0;
  std::string first_device;
  for (const ResourceSlice& s : catalog.slices)
    for (const DraDevice& d : s.devices)
      if (d.allow_multiple_allocations && devices++ == 0) first_device = dra_device_id(s.driver, s.pool, d.name);
  int requests = 0;
  std::string first_request;
  auto count = [&](const std::string& what, const DraClaimSpec& spec) {
    for (const DraDeviceRequest& r : spec.requests) {
      bool any = r.exactly && !r.exactly->capacity_requests_milli.empty();
      for (const DraExactRequest& sub : r.first_available) any |= !sub.capacity_requests_milli.empty();
      if (any && requests++ == 0) first_request = what + " request " + r.name;
    }
  };
  for (const auto& [key, t] : catalog.templates) count("ResourceClaimTemplate " + key, t.spec);
  for (const auto& [key, c] : catalog.claims) count("ResourceClaim " + key, c.spec);
  if (devices > 0)
    out.push_back(fmt::format("{} device(s) with allowMultipleAllocations (first: {}) are allocated whole, to one claim at a time: the "
                              "DRAConsumableCapacity feature gate is off, as by default (--feature-gates DRAConsumableCapacity=true "
                              "shares them by capacity)",
                              devices, first_device));
  if (requests > 0)
    out.push_back(fmt::format("{} device request(s) with capacity.requests (first: {}) are allocated without them: the "
                              "DRAConsumableCapacity feature gate is off, as by default",
                              requests, first_request));
  return out;
}

void check_dra_claim_references(const DraCatalog& catalog, const std::vector<DraClaimReference>& references) {
  for (const DraClaimReference& r : references) {
    const bool claim = !r.claim_name.empty();
    const std::string key = r.namespace_name + "/" + (claim ? r.claim_name : r.template_name);
    if (claim ? catalog.claims.count(key) > 0 : catalog.templates.count(key) > 0) continue;
    throw InputError(r.at.file, r.at.line, r.at.field,
                     fmt::format("{} '{}' is not among the inputs (kube would leave the pod pending: {}.resource.k8s.io \"{}\" "
                                 "not found)",
                                 claim ? "ResourceClaim" : "ResourceClaimTemplate", key, claim ? "resourceclaim" : "resourceclaimtemplate",
                                 claim ? r.claim_name : r.template_name),
                     r.at.column);
  }
}

}  // namespace gpufleet::io
