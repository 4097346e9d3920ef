// Consumable capacity (KEP-5075, feature gate DRAConsumableCapacity, resource.k8s.io/v1 fields
// allowMultipleAllocations, capacity requestPolicy, capacity.requests, consumedCapacity and shareID)
// in `place`: the reader (readers/k8s/dra_yaml.h), the allocator (sched/plugins/dra_allocator.h) and
// the claims' shares in the cluster state. The rules are upstream's (kubernetes staging/src/k8s.io/
// dynamic-resource-allocation/structured/internal/experimental/consumable_capacity.go and the field
// comments of staging/src/k8s.io/api/resource/v1/types.go); every expected value is worked out by
// hand in the comment beside it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "place/place_workload.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "report/place_output.h"
#include "support/dra_test_support.h"
#include "support/expect_input_error.h"

namespace gpufleet {
namespace {

using testing::dra_summary;
using testing::place_dra_text;

const std::string kPending = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";

const std::string kHead = testing::dra_one_node_cluster_head();

// A pod with its own claim of one request for class gpu with capacity.requests `requests` (YAML flow
// map, empty = none) and `extra` request fields.
std::string pod(const std::string& name, const std::string& requests, const std::string& extra = "") {
  std::string capacity = requests.empty() ? "" : ", capacity: {requests: " + requests + "}";
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: g\n        exactly: {deviceClassName: gpu" + capacity + extra +
         "}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  containers:\n  - {name: c, image: i}\n  resourceClaims:\n  - {name: g, resourceClaimTemplateName: " + name + "}\n";
}

// gpu-0 shares 40Gi of memory by a validRange (min 5Gi, max 30Gi, step 5Gi, default 10Gi) and 100
// cores without a policy. In order:
//  p1 asks 12Gi, 20 cores: 12Gi rounds up to 5 + ceil(7/5) x 5 = 15Gi; left 25Gi, 80 cores.
//  p2 asks 3Gi, 30 cores: below min, so 5Gi; left 20Gi, 50 cores.
//  p3 asks 31Gi: above max, the policy refuses it (no device can take it): pending.
//  p4 asks 16Gi, 50 cores: 20Gi; left 0Gi, 0 cores.
//  p5 asks 1Gi, 1 core: 5Gi, none left: pending.
// Each gets a share of gpu-0 (the same device), each with its consumedCapacity.
TEST(DraConsumableCapacity, ValidRangeRoundsUpAndCapacitySumsToTheDevice) {
  const std::string device = R"Y(  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory:
        value: 40Gi
        requestPolicy: {default: 10Gi, validRange: {min: 5Gi, max: 30Gi, step: 5Gi}}
      cores: {value: "100"}
)Y";
  const auto r = place_dra_text(kHead + device + pod("p1", "{memory: 12Gi, cores: \"20\"}") + pod("p2", "{memory: 3Gi, cores: \"30\"}") +
                                pod("p3", "{memory: 31Gi, cores: \"1\"}") + pod("p4", "{memory: 16Gi, cores: \"50\"}") +
                                pod("p5", "{memory: 1Gi, cores: \"1\"}"),
                            true);
  auto mem = [](int64_t g) { return std::to_string(g << 30); };
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p1 -> a g=gpu-0 cores:20 memory:" + mem(15),
                                                  "default/p2 -> a g=gpu-0 cores:30 memory:" + mem(5),
                                                  "default/p4 -> a g=gpu-0 cores:50 memory:" + mem(20),
                                                  "default/p3: " + kPending, "default/p5: " + kPending}));
  // Distinct share ids, version-4 UUIDs.
  ASSERT_EQ(r.placements.size(), 3u);
  const std::string s1 = r.placements[0].claims[0].allocation.devices[0].share_id;
  const std::string s2 = r.placements[1].claims[0].allocation.devices[0].share_id;
  EXPECT_NE(s1, s2);
  EXPECT_EQ(s1.size(), 36u);
  EXPECT_EQ(s1[14], '4');
}

// KEP-5075's "device driver migration" example (keps/sig-scheduling/5075-dra-consumable-capacity):
// gpu0 allows multiple allocations, power 700 (no policy) and memory 80Gi (default 80Gi, range min
// 10Gi, step 10Gi). A claim naming no amount takes 80Gi and all 700 W: the whole device. A claim of
// 10Gi takes 10Gi and, as Kubernetes 1.34 counts a capacity without a policy (consumable_capacity.go:
// the whole value when not requested; the KEP's text predates it and leaves power unconsumed), all
// 700 W, so the next 10Gi claim finds no power left. Naming power too: 10Gi + 300 W and 25Gi (-> 30Gi)
// + 400 W fit (40Gi, 700 W); a third claim of 10Gi + 1 W does not.
TEST(DraConsumableCapacity, KepDriverMigrationExample) {
  const std::string device = R"Y(  - name: gpu0
    allowMultipleAllocations: true
    attributes:
      name: {string: gpu0}
    capacity:
      power: {value: "700"}
      memory:
        value: 80Gi
        requestPolicy: {default: 80Gi, validRange: {min: 10Gi, step: 10Gi}}
)Y";
  auto gib = [](int64_t g) { return std::to_string(g << 30); };
  EXPECT_EQ(dra_summary(place_dra_text(kHead + device + pod("whole", "") + pod("p1", "{memory: 10Gi}"), true)),
            (std::vector<std::string>{"default/whole -> a g=gpu0 memory:" + gib(80) + " power:700", "default/p1: " + kPending}));
  EXPECT_EQ(dra_summary(place_dra_text(kHead + device + pod("p1", "{memory: 10Gi}") + pod("p2", "{memory: 10Gi}"), true)),
            (std::vector<std::string>{"default/p1 -> a g=gpu0 memory:" + gib(10) + " power:700", "default/p2: " + kPending}));
  EXPECT_EQ(dra_summary(place_dra_text(kHead + device + pod("p1", "{memory: 10Gi, power: \"300\"}") + pod("p2", "{memory: 25Gi, power: \"400\"}") +
                                   pod("p3", "{memory: 10Gi, power: \"1\"}"),
                               true)),
            (std::vector<std::string>{"default/p1 -> a g=gpu0 memory:" + gib(10) + " power:300",
                                      "default/p2 -> a g=gpu0 memory:" + gib(30) + " power:400", "default/p3: " + kPending}));
}

// A request without capacity.requests consumes each capacity's default, or all of a capacity without
// a policy: the first takes memory 10Gi (the default) and all 100 cores, so a second finds no cores
// left. With the gate off the device is allocated whole, once: the same outcome, without shares.
TEST(DraConsumableCapacity, NoRequestConsumesTheDefaultOrTheWholeCapacity) {
  const std::string device = R"Y(  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory:
        value: 40Gi
        requestPolicy: {default: 10Gi, validRange: {min: 5Gi, step: 5Gi}}
      cores: {value: "100"}
)Y";
  const std::string text = kHead + device + pod("p1", "") + pod("p2", "");
  EXPECT_EQ(dra_summary(place_dra_text(text, true)),
            (std::vector<std::string>{"default/p1 -> a g=gpu-0 cores:100 memory:" + std::to_string(int64_t{10} << 30), "default/p2: " + kPending}));
  EXPECT_EQ(dra_summary(place_dra_text(text, false)), (std::vector<std::string>{"default/p1 -> a g=gpu-0", "default/p2: " + kPending}));
}

// validValues {1, 2, 4} of 8 queues: asks of 3, 2, 1, 1 take 4, 2, 1, 1 (8 in all); a fifth ask of
// 1 finds none left; an ask of 5 is above every valid value and refused. Gate off: p1 takes the
// device whole and every other pod waits (the warning says why).
TEST(DraConsumableCapacity, ValidValuesRoundToTheNextValue) {
  const std::string device = R"Y(  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      queues:
        value: "8"
        requestPolicy: {default: "1", validValues: ["1", "2", "4"]}
)Y";
  const std::string text = kHead + device + pod("p1", "{queues: \"3\"}") + pod("p2", "{queues: \"2\"}") + pod("p3", "{queues: \"5\"}") +
                           pod("p4", "{queues: \"1\"}") + pod("p5", "{queues: \"1\"}") + pod("p6", "{queues: \"1\"}");
  EXPECT_EQ(dra_summary(place_dra_text(text, true)),
            (std::vector<std::string>{"default/p1 -> a g=nic-0 queues:4", "default/p2 -> a g=nic-0 queues:2", "default/p4 -> a g=nic-0 queues:1",
                                      "default/p5 -> a g=nic-0 queues:1", "default/p3: " + kPending, "default/p6: " + kPending}));
  const auto off = place_dra_text(text, false);
  EXPECT_EQ(off.placements.size(), 1u);
  io::K8sObjects objects = io::parse_k8s_text(text, "in.yaml");
  EXPECT_EQ(io::dra_feature_warnings(objects.dra),
            (std::vector<std::string>{
                "1 device(s) with allowMultipleAllocations (first: gpu.example.com/a/nic-0) are allocated whole, to one claim at a time: "
                "the DRAConsumableCapacity feature gate is off, as by default (--feature-gates DRAConsumableCapacity=true shares them by "
                "capacity)",
                "6 device request(s) with capacity.requests (first: ResourceClaimTemplate default/p1 request g) are allocated without them: "
                "the DRAConsumableCapacity feature gate is off, as by default"}));
  objects.dra.consumable_capacity = true;
  EXPECT_TRUE(io::dra_feature_warnings(objects.dra).empty());
}

// One request may take a shareable device more than once (count 2 of 10Gi each on a 40Gi device
// without a policy: two results, 20Gi consumed); on ordinary devices capacity.requests is a filter:
// 50Gi skips small (40Gi) for big (80Gi). Gate off: the filter is ignored and small, first, is taken.
TEST(DraConsumableCapacity, OneRequestTwiceOnAShareAndAFilterOnOrdinaryDevices) {
  const std::string shared = R"Y(  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory: {value: 40Gi}
)Y";
  const auto twice = place_dra_text(kHead + shared + pod("p1", "{memory: 10Gi}", ", count: 2") + pod("p2", "{memory: 30Gi}"), true);
  const std::string ten = std::to_string(int64_t{10} << 30);
  EXPECT_EQ(dra_summary(twice), (std::vector<std::string>{"default/p1 -> a g=gpu-0 memory:" + ten + " g=gpu-0 memory:" + ten,
                                                      "default/p2: " + kPending}));
  const std::string ordinary = "  - {name: small, capacity: {memory: {value: 40Gi}}}\n  - {name: big, capacity: {memory: {value: 80Gi}}}\n";
  EXPECT_EQ(dra_summary(place_dra_text(kHead + ordinary + pod("p1", "{memory: 50Gi}"), true)), (std::vector<std::string>{"default/p1 -> a g=big"}));
  EXPECT_EQ(dra_summary(place_dra_text(kHead + ordinary + pod("p1", "{memory: 50Gi}"), false)), (std::vector<std::string>{"default/p1 -> a g=small"}));
  // A capacity the device does not publish: no device matches.
  EXPECT_EQ(dra_summary(place_dra_text(kHead + ordinary + pod("p1", "{bandwidth: \"1\"}"), true)), (std::vector<std::string>{"default/p1: " + kPending}));
}

// A claim already allocated a 30Gi share of gpu-0 (40Gi, status.allocation with shareID and
// consumedCapacity) leaves 10Gi: a 15Gi ask waits, a 10Gi ask fits.
TEST(DraConsumableCapacity, SharesInClaimStatusCount) {
  const std::string device = "  - name: gpu-0\n    allowMultipleAllocations: true\n    capacity:\n      memory: {value: 40Gi}\n";
  const std::string held = R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held}
spec:
  devices:
    requests:
    - {name: g, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 30Gi}}}}
status:
  allocation:
    devices:
      results:
      - {request: g, driver: gpu.example.com, pool: a, device: gpu-0, shareID: 6f1c0f52-3f7c-4b8e-9a51-0c2d7d1e9b10, consumedCapacity: {memory: 30Gi}}
)Y";
  EXPECT_EQ(dra_summary(place_dra_text(kHead + device + held + pod("p1", "{memory: 15Gi}") + pod("p2", "{memory: 10Gi}"), true)),
            (std::vector<std::string>{"default/p2 -> a g=gpu-0 memory:" + std::to_string(int64_t{10} << 30), "default/p1: " + kPending}));
}

// The API server's checks of a requestPolicy, each at its field (line, column of the offending node).
TEST(DraConsumableCapacity, MalformedRequestPoliciesAreInputErrors) {
  auto slice = [](const std::string& capacity, bool multi = true) {
    return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: a}\nspec:\n  driver: d.example.com\n"
           "  pool: {name: a, generation: 1, resourceSliceCount: 1}\n  nodeName: a\n  devices:\n  - name: gpu-0\n" +
           std::string(multi ? "    allowMultipleAllocations: true\n" : "") + "    capacity:\n      memory:\n        value: 40Gi\n" + capacity;
  };
  auto bad = [&](const std::string& text, int line, int column, const std::string& field, const std::string& fragment) {
    testing::expect_input_error([&] { io::parse_k8s_text(text, "s.yaml"); }, "s.yaml", line, column, field, fragment);
  };
  const std::string at = "spec.devices[0].capacity.memory.requestPolicy";
  // Line 14 (13 without allowMultipleAllocations) is "        requestPolicy: ...", its value at column 24.
  bad(slice("        requestPolicy: {default: 1Gi}\n", false), 13, 24, at,
      "requestPolicy is only allowed on a device with allowMultipleAllocations: true");
  bad(slice("        requestPolicy: {default: 1Gi, validValues: [1Gi], validRange: {min: 1Gi}}\n"), 14, 24, at,
      "set at most one of validValues and validRange");
  bad(slice("        requestPolicy: {default: 2Gi, validValues: [1Gi, 4Gi]}\n"), 14, 34, at + ".default", "default 2147483648 is not one of validValues");
  bad(slice("        requestPolicy: {default: 1Gi, validValues: [4Gi, 1Gi]}\n"), 14, 58, at + ".validValues[1]",
      "valid values must be sorted in ascending order, without repeats");
  bad(slice("        requestPolicy: {default: 1Gi, validRange: {min: 1Gi, max: 50Gi}}\n"), 14, 67, at + ".validRange.max",
      "max 53687091200 is above the capacity's value 42949672960");
  bad(slice("        requestPolicy: {default: 2Gi, validRange: {min: 1Gi, step: 2Gi}}\n"), 14, 34, at + ".default",
      "default 2147483648 is not min plus a multiple of step");
  bad(slice("        requestPolicy: {validRange: {min: 1Gi}}\n"), 14, 24, at, "a policy with validRange needs a default within it");
  bad(slice("        requestPolicy: {default: 1Gi, validRange: {max: 4Gi}}\n"), 14, 51, at + ".validRange", "validRange needs min");
  bad(slice("        requestPolicy: {default: 1Gi, validrange: {min: 1Gi}}\n"), 14, 39, at + ".validrange", "validrange");
}

}  // namespace
}  // namespace gpufleet
