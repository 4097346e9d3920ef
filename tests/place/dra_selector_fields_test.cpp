// Two DRA reader/allocator edges: the CEL field device.allowMultipleAllocations (KEP-5075, a bool of
// the device in kube's DRA CEL environment, kubernetes staging/src/k8s.io/dynamic-resource-allocation/
// cel/compile.go) and counters too large for the allocator's milli-unit sums (refused when read, not a
// crash while placing). Outcomes worked out by hand below.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "support/dra_test_support.h"
#include "support/expect_input_error.h"

namespace gpufleet {
namespace {

using testing::dra_summary;
using testing::place_dra_text;

// Node a: gpu-0 (allowMultipleAllocations) and gpu-1 (not). The template's selector is `selector`.
std::string cluster(const std::string& selector) {
  return testing::dra_one_node_cluster_head() + R"Y(  - {name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi}}}
  - {name: gpu-1, capacity: {memory: {value: 80Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly:
          deviceClassName: gpu
          selectors: [{cel: {expression: ")Y" + selector + R"Y("}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p0}
spec:
  containers:
  - {name: c, image: i}
  resourceClaims:
  - {name: g, resourceClaimTemplateName: t}
)Y";
}

// With the DRAConsumableCapacity gate on, `!device.allowMultipleAllocations` skips gpu-0 and takes
// gpu-1, and `device.allowMultipleAllocations` takes gpu-0. With the gate off the API server drops the
// field, so CEL sees false on both: the negation takes gpu-0 (first), the plain field nothing.
TEST(DraSelectorFields, AllowMultipleAllocationsIsABoolField) {
  EXPECT_EQ(dra_summary(place_dra_text(cluster("!device.allowMultipleAllocations"), true)),
            (std::vector<std::string>{"default/p0 -> a g=gpu-1"}));
  // gpu-0 shared: the whole 80Gi capacity is consumed (no amount requested, no policy).
  EXPECT_EQ(dra_summary(place_dra_text(cluster("device.allowMultipleAllocations"), true)),
            (std::vector<std::string>{"default/p0 -> a g=gpu-0 memory:85899345920"}));
  EXPECT_EQ(dra_summary(place_dra_text(cluster("!device.allowMultipleAllocations"))), (std::vector<std::string>{"default/p0 -> a g=gpu-0"}));
  EXPECT_EQ(dra_summary(place_dra_text(cluster("device.allowMultipleAllocations"))),
            (std::vector<std::string>{"default/p0: 0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are "
                                      "available: 1 Preemption is not helpful for scheduling."}));
}

// The field is typed: comparing it with a string is kube's type error, at the expression's column.
TEST(DraSelectorFields, AllowMultipleAllocationsComparedWithAStringIsATypeError) {
  testing::expect_input_error([] { io::parse_k8s_text(cluster("device.allowMultipleAllocations == 'yes'"), "in.yaml"); }, "in.yaml", 34, 42,
                              "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression", "found no matching overload for '_==_' applied to '(bool, string)'");
}

// A counter set of 9000P units is 9e21 milli-units, beyond int64: the slice (which the API server
// accepts) is refused at the counter's value instead of making `place` throw while it allocates
// (Quantity::milli in the allocator's counter sums).
TEST(DraSelectorFields, CounterTooLargeForMilliUnitsIsRefusedWhenRead) {
  const std::string text = R"Y(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: a, generation: 1, resourceSliceCount: 1}
  nodeName: a
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 9000P}}
  devices:
  - name: whole
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: "1"}}
)Y";
  testing::expect_input_error([&] { io::parse_k8s_text(text, "in.yaml"); }, "in.yaml", 10, 32, "spec.sharedCounters[0].counters.memory.value",
                              "9000000000000000000 is above the largest amount gpufleet's milli-unit arithmetic holds");
}

}  // namespace
}  // namespace gpufleet
