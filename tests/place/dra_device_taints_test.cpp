// DRA device taints and tolerations (KEP-5055, GA in Kubernetes 1.37) in `place`: a device's own
// taints and those of DeviceTaintRules, requests' tolerations, and the taint check on a claim that is
// already allocated. Rules from kubernetes.io/docs/concepts/resource-management/
// dynamic-resource-allocation/device-taints/ and the structured allocator (kubernetes
// staging/src/k8s.io/dynamic-resource-allocation/structured, allocateDevice and allTaintsTolerated):
// a NoSchedule or NoExecute taint that the request does not tolerate keeps the device from it; None
// is ignored; tolerations match as node tolerations do. Outcomes are worked out by hand below.
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

// One node `a` whose driver gpu.example.com publishes gpu-0 (with the taints given) and gpu-1 (none),
// a class for the driver's devices, and the template `t` of one device whose request carries the
// given tolerations (YAML flow list).
std::string cluster(const std::string& gpu0_taints, const std::string& tolerations, const std::string& extra = "") {
  return testing::dra_one_node_cluster_head() + R"Y(  - {name: gpu-0, taints: )Y" + gpu0_taints + R"Y(}
  - {name: gpu-1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu, tolerations: )Y" + tolerations + R"Y(}
)Y" + extra;
}

// The reader's warnings that name a DeviceTaintRule, in order.
std::vector<std::string> taint_rule_warnings(const io::K8sObjects& o) {
  std::vector<std::string> out;
  for (const std::string& w : o.warnings)
    if (w.find("DeviceTaintRule") != std::string::npos) out.push_back(w);
  return out;
}

// Pods p0..p<n-1>, each with one claim `g` from template `templ`.
std::string pods(int n, const std::string& templ = "t") {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p" + std::to_string(i) +
           "}\nspec:\n  containers:\n  - {name: c, image: i}\n  resourceClaims:\n  - {name: g, resourceClaimTemplateName: " + templ + "}\n";
  return out;
}

const std::string kCannotAllocate =
    "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";

// gpu-0 is tainted NoSchedule and the request tolerates nothing: p0 gets gpu-1 (although gpu-0 comes
// first), p1 finds only the tainted device and stays pending with kube's allocator message.
TEST(DraDeviceTaints, TaintedDeviceIsSkippedTheOtherIsAllocated) {
  const auto r = place_dra_text(cluster("[{key: example.com/unhealthy, value: ecc, effect: NoSchedule}]", "[]") + pods(2));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a g=gpu-1", "default/p1: " + kCannotAllocate}));
}

// Both devices tainted (gpu-1 by a DeviceTaintRule with an empty selector, which matches every
// device): the one pod stays pending.
TEST(DraDeviceTaints, AllDevicesTaintedLeavesThePodPending) {
  const std::string rule = R"Y(---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: drain-all}
spec:
  deviceSelector: {}
  taint: {key: example.com/maintenance, effect: NoExecute}
)Y";
  const auto r = place_dra_text(cluster("[{key: example.com/unhealthy, effect: NoSchedule}]", "[]", rule) + pods(1));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0: " + kCannotAllocate}));
}

// Tolerations, each with gpu-0 tainted {example.com/unhealthy: ecc, NoExecute}; two pods, so the
// second one shows whether gpu-0 was usable (p0 takes gpu-0 when it is, being first).
TEST(DraDeviceTaints, TolerationsMatchAsNodeTolerationsDo) {
  const std::string taint = "[{key: example.com/unhealthy, value: ecc, effect: NoExecute}]";
  struct Case {
    std::string tolerations;
    bool tolerated;
  };
  const std::vector<Case> cases = {
      {"[{key: example.com/unhealthy, operator: Exists}]", true},                           // Exists: any value
      {"[{key: example.com/unhealthy, operator: Equal, value: ecc}]", true},                // Equal: same value
      {"[{key: example.com/unhealthy, value: ecc}]", true},                                 // operator defaults to Equal
      {"[{key: example.com/unhealthy, operator: Equal, value: thermal}]", false},           // other value
      {"[{key: example.com/unhealthy, operator: Exists, effect: NoSchedule}]", false},      // other effect
      {"[{key: example.com/unhealthy, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]", true},
      {"[{operator: Exists}]", true},                                                       // empty key: everything
      {"[{key: example.com/other, operator: Exists}]", false},                              // other key
  };
  for (const Case& c : cases) {
    const auto r = place_dra_text(cluster(taint, c.tolerations) + pods(2));
    const std::vector<std::string> want =
        c.tolerated ? std::vector<std::string>{"default/p0 -> a g=gpu-0", "default/p1 -> a g=gpu-1"}
                    : std::vector<std::string>{"default/p0 -> a g=gpu-1", "default/p1: " + kCannotAllocate};
    EXPECT_EQ(dra_summary(r), want) << c.tolerations;
  }
}

// A None taint is informational: gpu-0 is allocated first as if untainted.
TEST(DraDeviceTaints, NoneEffectIsIgnored) {
  const auto r = place_dra_text(cluster("[{key: example.com/degraded, value: thermal, effect: None}]", "[]") + pods(2));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a g=gpu-0", "default/p1 -> a g=gpu-1"}));
}

// A DeviceTaintRule taints the devices its selector matches, every set criterion alike. gpu-0 has no
// taint of its own here; each rule below aims at devices of node a, pool a, driver gpu.example.com.
// Matching gpu-0 only: p0 gets gpu-1 and p1 waits. Matching nothing (another pool, another driver, no
// selector at all): p0 gets gpu-0. Matching both (driver only): p0 waits.
TEST(DraDeviceTaints, DeviceTaintRuleMatchesByDriverPoolAndDevice) {
  struct Case {
    std::string selector;
    std::vector<std::string> want;
  };
  const std::vector<std::string> gpu0_tainted = {"default/p0 -> a g=gpu-1", "default/p1: " + kCannotAllocate};
  const std::vector<std::string> untainted = {"default/p0 -> a g=gpu-0", "default/p1 -> a g=gpu-1"};
  const std::vector<std::string> all_tainted = {"default/p0: " + kCannotAllocate, "default/p1: " + kCannotAllocate};
  const std::vector<Case> cases = {
      {"  deviceSelector: {device: gpu-0}\n", gpu0_tainted},
      {"  deviceSelector: {driver: gpu.example.com, pool: a, device: gpu-0}\n", gpu0_tainted},
      {"  deviceSelector: {pool: b, device: gpu-0}\n", untainted},
      {"  deviceSelector: {driver: other.example.com}\n", untainted},
      {"", untainted},  // no selector: no device
      {"  deviceSelector: {driver: gpu.example.com}\n", all_tainted},
      {"  deviceSelector: {pool: a}\n", all_tainted},
  };
  for (const Case& c : cases) {
    const std::string rule = "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec:\n" + c.selector +
                             "  taint: {key: example.com/maintenance, effect: NoSchedule}\n";
    EXPECT_EQ(dra_summary(place_dra_text(cluster("[]", "[]", rule) + pods(2))), c.want) << c.selector;
  }
}

// Each firstAvailable subrequest has its own tolerations. gpu-0 and gpu-1 are both tainted
// NoSchedule by a rule; `strict` tolerates nothing, `lenient` tolerates the taint: p0 gets gpu-0
// through g/lenient (strict has no device).
TEST(DraDeviceTaints, SubrequestTolerations) {
  std::string text = cluster("[]", "[]", R"Y(---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: fa}
spec:
  spec:
    devices:
      requests:
      - name: g
        firstAvailable:
        - {name: strict, deviceClassName: gpu}
        - {name: lenient, deviceClassName: gpu, tolerations: [{key: example.com/maintenance, value: planned, effect: NoSchedule}]}
)Y" + pods(1, "fa"));
  EXPECT_EQ(dra_summary(place_dra_text(text)), (std::vector<std::string>{"default/p0 -> a g/lenient=gpu-0"}));
}

// allocationMode All needs every matching device usable: one tainted device fails the request
// (upstream: "If one is tainted, nothing gets allocated and the pod cannot get scheduled").
TEST(DraDeviceTaints, AllModeFailsOnAnUntoleratedDevice) {
  std::string text = cluster("[{key: example.com/unhealthy, effect: NoExecute}]", "[]", R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: all}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu, allocationMode: All}
)Y" + pods(1, "all"));
  EXPECT_EQ(dra_summary(place_dra_text(text)), (std::vector<std::string>{"default/p0: " + kCannotAllocate}));
}

// A shared ResourceClaim already allocated gpu-0 (its status); gpu-0 has since been tainted
// NoExecute. A new pod using the claim cannot be scheduled while the claim holds the untolerated
// device (a PreFilter rejection: `place` gives the plugin's message as the reason); the same claim
// with a toleration for the taint, in its request or in its allocation result, is usable.
TEST(DraDeviceTaints, AllocatedClaimOnATaintedDevice) {
  auto text = [](const std::string& tolerations, const std::string& result_tolerations = "") {
    return cluster("[{key: example.com/unhealthy, value: xid-79, effect: NoExecute}]", "[]", R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu, tolerations: )Y" + tolerations + R"Y(}
status:
  allocation:
    devices:
      results:
      - {request: g, driver: gpu.example.com, pool: a, device: gpu-0)Y" + result_tolerations + R"Y(}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [a]}
---
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  containers:
  - {name: c, image: i}
  resourceClaims:
  - {name: g, resourceClaimName: shared}
)Y");
  };
  EXPECT_EQ(dra_summary(place_dra_text(text("[]"))),
            (std::vector<std::string>{"default/user: resourceclaim default/shared: allocated device gpu.example.com/a/gpu-0 has "
                                      "untolerated taint {example.com/unhealthy: xid-79}"}));
  EXPECT_EQ(dra_summary(place_dra_text(text("[{key: example.com/unhealthy, operator: Exists}]"))),
            (std::vector<std::string>{"default/user -> a g=gpu-0"}));
  // The allocation result's own tolerations (copied from the request when it was allocated) count.
  EXPECT_EQ(dra_summary(place_dra_text(text("[]", ", tolerations: [{key: example.com/unhealthy, value: xid-79}]"))),
            (std::vector<std::string>{"default/user -> a g=gpu-0"}));
}

// Bad input, each at its field: PreferNoSchedule is no device taint effect (the API server refuses
// it), a toleration with Exists takes no value, a DeviceTaintRule needs a taint and one of its
// versions, and at most 16 taints per device.
TEST(DraDeviceTaints, BadInputNamesTheField) {
  auto read = [](const std::string& text) { return [text] { io::parse_k8s_text(text, "in.yaml"); }; };
  const std::string slice_head = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
                                 "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  nodeName: n\n  devices:\n";
  testing::expect_input_error(read(slice_head + "  - name: gpu-0\n    taints:\n    - {key: k, effect: PreferNoSchedule}\n"), "in.yaml", 11, 24,
                              "spec.devices[0].taints[0].effect", "unknown taint effect 'PreferNoSchedule' (expected None, NoSchedule or NoExecute)");
  std::string many = slice_head + "  - name: gpu-0\n    taints:\n";
  for (int i = 0; i < 17; ++i) many += "    - {key: k" + std::to_string(i) + ", effect: None}\n";
  testing::expect_input_error(read(many), "in.yaml", 11, 5, "spec.devices[0].taints", "17 taints, more than the 16 a device may have");
  const std::string claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n"
                            "    - name: g\n      exactly:\n        deviceClassName: gpu\n        tolerations:\n"
                            "        - {key: k, operator: Exists, value: v}\n";
  testing::expect_input_error(read(claim), "in.yaml", 11, 45, "spec.devices.requests[0].exactly.tolerations[0].value",
                              "operator Exists takes no value");
  testing::expect_input_error(read("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec:\n"
                                   "  deviceSelector: {device: gpu-0}\n"),
                              "in.yaml", 5, 3, "spec", "a DeviceTaintRule needs spec.taint");
  testing::expect_input_error(read("apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec:\n"
                                   "  taint: {key: k, effect: NoSchedule}\n"),
                              "in.yaml", 1, 13, "apiVersion", "unsupported apiVersion 'resource.k8s.io/v1' for DeviceTaintRule");
}

// v1alpha3's deviceSelector.deviceClassName and CEL selectors are not modelled: a warning names each.
TEST(DraDeviceTaints, UnmodelledSelectorFieldsWarn) {
  const io::K8sObjects o = io::parse_k8s_text(R"Y(apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector:
    driver: gpu.example.com
    deviceClassName: gpu
    selectors:
    - cel: {expression: "device.attributes['gpu.example.com'].index == 0"}
  taint: {key: k, effect: NoSchedule}
)Y",
                                              "in.yaml");
  const std::vector<std::string> warnings = taint_rule_warnings(o);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("in.yaml:7:22"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("deviceSelector.deviceClassName"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("in.yaml:9:5"), std::string::npos) << warnings[1];
  ASSERT_EQ(o.dra.taint_rules.size(), 1u);
  EXPECT_EQ(o.dra.taint_rules.at("r").driver, std::optional<std::string>("gpu.example.com"));
}

// A rule without deviceSelector matches no device, and a rule's status is not the rule: a warning
// names each.
TEST(DraDeviceTaints, NoSelectorAndStatusWarn) {
  const io::K8sObjects o = io::parse_k8s_text(R"Y(apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: r}
spec:
  taint: {key: k, effect: NoSchedule}
status:
  conditions: []
)Y",
                                              "in.yaml");
  const std::vector<std::string> warnings = taint_rule_warnings(o);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("spec.deviceSelector"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("matches no device"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("in.yaml:7:3"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("status"), std::string::npos) << warnings[1];
  EXPECT_FALSE(o.dra.taint_rules.at("r").has_selector);
}

}  // namespace
}  // namespace gpufleet
