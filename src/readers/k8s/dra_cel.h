// DRA device selectors evaluated with the CEL layer (src/cel): the `device` variable as Kubernetes
// binds it for DRA (kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go):
//   device.driver                       the slice's driver (string)
//   device.allowMultipleAllocations     bool (KEP-5075; false unless the DRAConsumableCapacity gate is on)
//   device.attributes["<domain>"].<id>  int, bool, string, or a semver for a version attribute
//   device.capacity["<domain>"].<id>    a quantity
// An attribute or capacity written without a domain belongs to the driver's domain. A domain the
// device has nothing in is an empty map (compile.go newStringInterfaceMapWithDefault), so
// `device.attributes["other.example.com"].x` is the runtime error "no such key: x".
#pragma once

#include <memory>
#include <string>

#include "model/dra.h"

namespace gpufleet::io {

/// Compiles a selector's expression with the single variable `device`. Throws cel::CompileError
/// (src/cel/cel.h) for a syntax error, a construct gpufleet does not evaluate, a comparison of
/// mismatched types (construct "type"; device.driver is a string, device.allowMultipleAllocations a
/// bool, device.capacity[d][n] a quantity),
/// or a result that is never a bool (construct "result type"), as kube's type check refuses them.
std::shared_ptr<const DeviceMatcher> compile_device_selector(const std::string& expression);

}  // namespace gpufleet::io
