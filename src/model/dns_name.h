#pragma once

// Kubernetes object-name checks (k8s.io/apimachinery/pkg/util/validation).

#include <string_view>

namespace gpufleet {

/// validation.IsDNS1123Subdomain: 1 to 253 characters, lower-case alphanumerics, '-' and '.',
/// starting and ending with an alphanumeric (the rule for most object names, e.g. a NodePool's
/// metadata.name). Defined in model/scheduling_constraints.cpp, which uses it for label-key prefixes.
bool dns1123_subdomain_ok(std::string_view s);

}  // namespace gpufleet
