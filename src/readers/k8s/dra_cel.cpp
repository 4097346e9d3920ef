#include "readers/k8s/dra_cel.h"

#include <map>
#include <utility>
#include <vector>

#include "cel/cel.h"

namespace gpufleet::io {
namespace {

cel::Value attribute_value(const DraAttribute& a) {
  switch (a.kind) {
    case DraAttribute::Kind::kInt: return cel::Value::integer(a.int_value);
    case DraAttribute::Kind::kBool: return cel::Value::boolean(a.bool_value);
    case DraAttribute::Kind::kVersion:
      try {
        return cel::Value::semver(cel::Semver::parse(a.string_value));
      } catch (const std::invalid_argument&) {
        return cel::Value::string(a.string_value);  // the reader checked it; kept as text otherwise
      }
    default: return cel::Value::string(a.string_value);
  }
}

// domain -> id -> value, as compile.go groups qualified names.
template <class T, class F>
cel::Value by_domain(const std::map<std::string, T>& entries, const std::string& driver, F&& convert) {
  std::map<std::string, cel::Value::Entries> domains;
  for (const auto& [name, value] : entries) {
    const size_t slash = name.find('/');
    const std::string domain = slash == std::string::npos ? driver : name.substr(0, slash);
    const std::string id = slash == std::string::npos ? name : name.substr(slash + 1);
    domains[domain].emplace_back(cel::Value::string(id), convert(value));
  }
  cel::Value::Entries out;
  for (auto& [domain, ids] : domains) out.emplace_back(cel::Value::string(domain), cel::Value::map(std::move(ids)));
  return cel::Value::map_with_default(std::move(out), cel::Value::map({}));
}

class CelMatcher final : public DeviceMatcher {
 public:
  explicit CelMatcher(cel::Program program) : program_(std::move(program)) {}
  Result matches(const DraDeviceView& view) const override {
    const std::string& driver = *view.driver;
    const DraDevice& d = *view.device;
    cel::Value::Entries device;
    device.emplace_back(cel::Value::string("driver"), cel::Value::string(driver));
    device.emplace_back(cel::Value::string("allowMultipleAllocations"), cel::Value::boolean(view.allow_multiple_allocations));
    device.emplace_back(cel::Value::string("attributes"), by_domain(d.attributes, driver, attribute_value));
    device.emplace_back(cel::Value::string("capacity"),
                        by_domain(d.capacity, driver, [](const Quantity& q) { return cel::Value::quantity(q); }));
    const cel::Program::Result r = program_.evaluate({{"device", cel::Value::map(std::move(device))}});
    if (!r.value) return {false, r.error};
    if (r.value->kind() != cel::Value::Kind::kBool)
      return {false, "expression must evaluate to bool, got " + std::string(r.value->type_name())};
    return {r.value->as_bool(), {}};
  }

 private:
  cel::Program program_;
};

}  // namespace

std::shared_ptr<const DeviceMatcher> compile_device_selector(const std::string& expression) {
  cel::Program program = cel::Program::compile(expression, {"device"});
  // kube's DRA compile (dynamic-resource-allocation/cel/compile.go) declares `device` with typed
  // fields (driver a string, allowMultipleAllocations a bool, capacity a map of maps of quantities;
  // attributes are dyn) and type-checks
  // the expression: a comparison of mismatched types, or a result that is not a bool, is refused.
  static const cel::Program::FieldTypes kDeviceFields = {
      {"device.driver", "string"}, {"device.allowMultipleAllocations", "bool"}, {"device.capacity.*.*", "kubernetes.Quantity"}};
  program.check_comparisons(kDeviceFields);
  if (const std::string type = program.result_type(kDeviceFields); !type.empty() && type != "bool")
    throw cel::CompileError(0, "result type", "must evaluate to bool, got " + type, 0);
  return std::make_shared<CelMatcher>(std::move(program));
}

}  // namespace gpufleet::io
