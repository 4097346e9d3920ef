// Read-time checks of the DRA reader (readers/k8s/dra_yaml.h, dra_cel.h): consumesCounters references
// that no slice of the pool defines (a warning: the API server accepts them), comparisons of
// mismatched types and non-bool results with the declared types of `device` (errors, as Kubernetes'
// DRA compile refuses them), and the file position of an error in a multi-line (literal block)
// expression. Positions and messages are worked out by hand from the texts below.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/dra_yaml.h"
#include "readers/k8s/k8s_yaml.h"
#include "support/expect_input_error.h"

namespace gpufleet {
namespace {

std::vector<std::string> warnings_with(const io::K8sObjects& o, const std::string& fragment) {
  std::vector<std::string> out;
  for (const std::string& w : o.warnings)
    if (w.find(fragment) != std::string::npos) out.push_back(w);
  return out;
}

// Pool p (driver d.example.com) in two slices of generation 2: s-counters defines set gpu-0
// {memory}; s-devices has a consuming gpu-0's memory (fine: another slice of the pool), b naming set
// gpu-1 (defined nowhere) and c naming counter `compute` of gpu-0 (not in it). An older slice
// (generation 1) with a dangling reference is ignored, as its devices are.
TEST(DraReaderChecks, CounterReferencesTheirPoolDoesNotDefine) {
  const std::string text = R"Y(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s-counters}
spec:
  driver: d.example.com
  pool: {name: p, generation: 2, resourceSliceCount: 2}
  nodeName: n
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: "8"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s-devices}
spec:
  driver: d.example.com
  pool: {name: p, generation: 2, resourceSliceCount: 2}
  nodeName: n
  devices:
  - name: a
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: "4"}}
  - name: b
    consumesCounters:
    - counterSet: gpu-1
      counters: {memory: {value: "4"}}
  - name: c
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: "4"}, compute: {value: "1"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s-old}
spec:
  driver: d.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  nodeName: n
  devices:
  - name: z
    consumesCounters:
    - counterSet: gone
      counters: {memory: {value: "4"}}
)Y";
  const io::K8sObjects o = io::parse_k8s_text(text, "s.yaml");
  EXPECT_EQ(warnings_with(o, "counter"),
            (std::vector<std::string>{
                "s.yaml:26:19: field 'spec.devices[1].consumesCounters[0].counterSet': counter set 'gpu-1' of device b is defined in "
                "no ResourceSlice of pool d.example.com/p (generation 2): the API server accepts the slice; gpufleet never allocates "
                "the device",
                "s.yaml:31:49: field 'spec.devices[2].consumesCounters[0].counters.compute': counter 'compute' of device c is not in "
                "counter set 'gpu-0' of pool d.example.com/p: the API server accepts the slice; gpufleet never allocates the device",
            }));
}

std::string device_class(const std::string& expression_yaml) {
  return "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: x}\nspec:\n  selectors:\n  - cel:\n      expression: " +
         expression_yaml + "\n";
}

// Kubernetes declares device.driver a string and device.capacity[d][n] a quantity: comparing them
// with another type, or a selector that is one of them, fails its type check (exit 2 here).
TEST(DraReaderChecks, TypedDeviceFieldsAreChecked) {
  auto bad = [](const std::string& expr, const std::string& fragment) {
    testing::expect_input_error([&] { io::parse_k8s_text(device_class(expr), "c.yaml"); }, "c.yaml", 7, 19,
                                "spec.selectors[0].cel.expression", fragment);
  };
  // "device.driver == 1": `==` at column 15.
  bad("\"device.driver == 1\"",
      "CEL type error at column 15 of the expression: found no matching overload for '_==_' applied to '(string, int)'");
  bad("\"device.capacity['gpu.example.com'].memory > 5\"",
      "found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'");
  bad("\"device.driver\"", "CEL selector must evaluate to bool, got string");
  bad("\"device.driver + '-x'\"", "CEL selector must evaluate to bool, got string");
  // The first mismatch by position: `!=` at column 28 comes after `<` at column 3.
  bad("\"1 < 'a' && device.driver != 2\"", "at column 3 of the expression: found no matching overload for '_<_' applied to '(int, string)'");
  // Accepted: numbers of two types, attributes (dyn), compareTo's int, a bound name's unknown type.
  for (const std::string ok : {"\"device.attributes['gpu.example.com'].index == 1.0\"",
                               "\"device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0\"", "\"1 < 2.5\"",
                               "\"cel.bind(device, 1, device == 1)\"", "\"device.driver == 'gpu.example.com'\""})
    EXPECT_NO_THROW(io::parse_k8s_text(device_class(ok), "c.yaml")) << ok;
}

// A literal block selector: the error is at the construct's own line and column in the file. Line 9
// of the file is the expression's line 2, "  device.driver.matches('gpu')" under the block's
// indentation of 8; other styles keep the field's position.
TEST(DraReaderChecks, MultiLineExpressionErrorsAtTheConstruct) {
  const std::string block = "|\n        device.driver == 'gpu.example.com' &&\n          device.driver.matches('gpu')";
  testing::expect_input_error([&] { io::parse_k8s_text(device_class(block), "c.yaml"); }, "c.yaml", 9, 25,
                              "spec.selectors[0].cel.expression", "CEL method matches not supported at line 2, column 17 of the expression");
  const std::string type_error = "|\n        device.driver == 'a' ||\n        device.driver == 2";
  testing::expect_input_error([&] { io::parse_k8s_text(device_class(type_error), "c.yaml"); }, "c.yaml", 9, 23,
                              "spec.selectors[0].cel.expression", "CEL type error at line 2, column 15 of the expression");
  // Folded (`>`): the lines are joined, so the position stays the field's.
  const std::string folded = ">\n        device.driver == 'a' ||\n        device.driver == 2";
  testing::expect_input_error([&] { io::parse_k8s_text(device_class(folded), "c.yaml"); }, "c.yaml", 7, 19,
                              "spec.selectors[0].cel.expression", "CEL type error at line 1, column 39 of the expression");
}

// A pod naming a ResourceClaimTemplate or ResourceClaim that no input holds is an input error at the
// name (readers/k8s/dra_yaml.h check_dra_claim_references), looked up in the pod's namespace: the
// template `tmpl` exists in `default` only, so pod team-a/p's reference (line 16, `tmpl` at column
// 42 of "  - {name: g, resourceClaimTemplateName: tmpl}") fails. Without team-a/p, default/q's
// template is found and its claim `shared` (line 17, column 34) is not.
TEST(DraReaderChecks, ClaimsAndTemplatesPodsNameMustBeAmongTheInputs) {
  const std::string head = R"Y(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl}
spec:
  spec:
    devices:
      requests: []
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  containers:
  - {name: c, image: i}
  resourceClaims:
  - {name: g, resourceClaimTemplateName: tmpl}
)Y";
  const std::string tail = R"Y(---
apiVersion: v1
kind: Pod
metadata: {name: q}
spec:
  containers:
  - {name: c, image: i}
  resourceClaims:
  - {name: g, resourceClaimTemplateName: tmpl}
  - {name: s, resourceClaimName: shared}
)Y";
  const io::K8sObjects both = io::parse_k8s_text(head + tail, "w.yaml");  // reading alone does not check
  ASSERT_EQ(both.dra_claim_references.size(), 3u);
  testing::expect_input_error([&] { io::check_dra_claim_references(both.dra, both.dra_claim_references); }, "w.yaml", 16, 42,
                              "spec.resourceClaims[0].resourceClaimTemplateName",
                              "ResourceClaimTemplate 'team-a/tmpl' is not among the inputs (kube would leave the pod pending: "
                              "resourceclaimtemplate.resource.k8s.io \"tmpl\" not found)");
  const io::K8sObjects q = io::parse_k8s_text(head.substr(0, head.find("---")) + tail, "w.yaml");
  testing::expect_input_error([&] { io::check_dra_claim_references(q.dra, q.dra_claim_references); }, "w.yaml", 17, 34,
                              "spec.resourceClaims[1].resourceClaimName", "ResourceClaim 'default/shared' is not among the inputs");
}

}  // namespace
}  // namespace gpufleet
