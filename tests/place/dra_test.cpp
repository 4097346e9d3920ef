// Dynamic Resource Allocation in `place`: the DRA objects read from YAML (readers/k8s/dra_yaml.h) with
// their CEL selectors, the structured allocator (sched/plugins/dra_allocator.h) behind the
// DynamicResources filter (sched/plugins/dynamic_resources.h), and the claims' devices in the cluster
// state (model/cluster_state.h). Expected outcomes are hand-computed in the comments; the rules are
// upstream's, from kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/
// internal/allocatortesting/allocator_testing.go (cases "prioritized-list-*", "with-constraint*",
// "already-allocated-devices", "all-devices-*", "partitionable-devices-*") and the DRA docs
// (kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "report/place_output.h"
#include "support/dra_test_support.h"
#include "support/expect_input_error.h"

namespace gpufleet {
namespace {

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "dra" / name).string();
}

using testing::dra_summary;
using testing::place_dra_text;

const std::string kClass = testing::dra_gpu_device_class();

std::string node(const std::string& name) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus:\n  allocatable: {cpu: \"8\", memory: 64Gi, pods: \"110\"}\n";
}

// A slice of `node` with devices given as YAML list items (indented by 2).
std::string slice(const std::string& node, const std::string& devices, const std::string& extra = "") {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + node +
         "}\nspec:\n  driver: gpu.example.com\n  pool: {name: " + node + ", generation: 1, resourceSliceCount: 1}\n  nodeName: " + node +
         "\n" + extra + "  devices:\n" + devices;
}

std::string pod(const std::string& name, const std::string& claims) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  containers:\n  - {name: c, image: i}\n  resourceClaims:\n" +
         claims;
}

std::string template_claim(const std::string& name, const std::string& requests, const std::string& constraints = "") {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  spec:\n    devices:\n      requests:\n" + requests + constraints;
}

// KEP-4816 prioritized list ("prioritized-list-*"): subrequests are tried in order, the first that can
// be allocated wins, and the result names "<request>/<subrequest>". Node a: gpu-0 (40Gi), gpu-1
// (80Gi). `big` wants two 80Gi devices: only one exists, so every pod gets `small` (one device of any
// size): p0 gpu-0 (first in slice order), p1 gpu-1, p2 nothing left.
TEST(Dra, FirstAvailableTriesSubrequestsInOrder) {
  const std::string devices =
      "  - {name: gpu-0, capacity: {memory: {value: 40Gi}}}\n"
      "  - {name: gpu-1, capacity: {memory: {value: 80Gi}}}\n";
  const std::string requests =
      "      - name: g\n        firstAvailable:\n"
      "        - name: big\n          deviceClassName: gpu\n          count: 2\n"
      "          selectors: [{cel: {expression: \"device.capacity['gpu.example.com'].memory.compareTo(quantity('80Gi')) >= 0\"}}]\n"
      "        - {name: small, deviceClassName: gpu}\n";
  const std::string claims = "  - {name: g, resourceClaimTemplateName: t}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests) + pod("p0", claims) +
                            pod("p1", claims) + pod("p2", claims));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a g/small=gpu-0", "default/p1 -> a g/small=gpu-1",
                                                  "default/p2: 0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}));
}

// When `big` can be satisfied it wins over `small`: two 80Gi devices.
TEST(Dra, FirstAvailablePrefersTheFirstSubrequest) {
  const std::string devices =
      "  - {name: gpu-0, capacity: {memory: {value: 80Gi}}}\n"
      "  - {name: gpu-1, capacity: {memory: {value: 80Gi}}}\n";
  const std::string requests =
      "      - name: g\n        firstAvailable:\n"
      "        - name: big\n          deviceClassName: gpu\n          count: 2\n"
      "          selectors: [{cel: {expression: \"device.capacity['gpu.example.com'].memory.compareTo(quantity('80Gi')) >= 0\"}}]\n"
      "        - {name: small, deviceClassName: gpu}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests) +
                            pod("p0", "  - {name: g, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a g/big=gpu-0 g/big=gpu-1"}));
}

// matchAttribute across requests ("with-constraint"): a GPU and a NIC under one PCIe root. gpu-0 is
// on root r0, gpu-1 and nic-0 on r1. The search takes gpu-0 first, finds no NIC on r0, backtracks and
// takes gpu-1 with nic-0.
TEST(Dra, MatchAttributeBacktracksAcrossRequests) {
  const std::string devices =
      "  - {name: gpu-0, attributes: {kind: {string: gpu}, resource.kubernetes.io/pcieRoot: {string: r0}}}\n"
      "  - {name: gpu-1, attributes: {kind: {string: gpu}, resource.kubernetes.io/pcieRoot: {string: r1}}}\n"
      "  - {name: nic-0, attributes: {kind: {string: nic}, resource.kubernetes.io/pcieRoot: {string: r1}}}\n";
  const std::string requests =
      "      - name: gpu\n        exactly:\n          deviceClassName: gpu\n"
      "          selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].kind == 'gpu'\"}}]\n"
      "      - name: nic\n        exactly:\n          deviceClassName: gpu\n"
      "          selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].kind == 'nic'\"}}]\n";
  const std::string constraints = "      constraints:\n      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests, constraints) +
                            pod("p0", "  - {name: x, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a gpu=gpu-1 nic=nic-0"}));
}

// A request for more devices than the node has that match fails at once: 14 devices, count 15.
// (Upstream searches every ordering until its filter timeout; the answer, no fit, is the same.)
TEST(Dra, TooFewMatchingDevicesFailsWithoutSearching) {
  std::string devices;
  for (int i = 0; i < 14; ++i) devices += "  - {name: gpu-" + std::to_string(i) + "}\n";
  const std::string requests = "      - name: g\n        exactly: {deviceClassName: gpu, count: 15}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests) +
                            pod("p0", "  - {name: x, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0: 0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 "
                                                  "nodes are available: 1 Preemption is not helpful for scheduling."}));
}

// The search is bounded (kDraAllocateMaxSteps, for kube's filterTimeout): `a` takes 16 of 40 devices
// of group g1 and `b` one device that must share a's group, but b's only device is in g2. Every one
// of the C(40,16) sets of `a` fails at `b`, so the bound ends the search with kube's timeout message.
TEST(Dra, SearchBoundEndsWithKubesTimeoutMessage) {
  std::string devices;
  for (int i = 0; i < 40; ++i)
    devices += "  - {name: gpu-" + std::to_string(i) + ", attributes: {kind: {string: gpu}, group: {string: g1}}}\n";
  devices += "  - {name: nic-0, attributes: {kind: {string: nic}, group: {string: g2}}}\n";
  const std::string requests =
      "      - name: a\n        exactly:\n          deviceClassName: gpu\n          count: 16\n"
      "          selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].kind == 'gpu'\"}}]\n"
      "      - name: b\n        exactly:\n          deviceClassName: gpu\n"
      "          selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].kind == 'nic'\"}}]\n";
  const std::string constraints = "      constraints:\n      - {requests: [a, b], matchAttribute: gpu.example.com/group}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests, constraints) +
                            pod("p0", "  - {name: x, resourceClaimTemplateName: t}\n"));
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_NE(r.pending[0].reason.find("timed out trying to allocate devices"), std::string::npos) << r.pending[0].reason;
}

// "with-constraint-non-existent-attribute": a device without the attribute never satisfies the
// constraint, so a claim for two devices where one lacks it cannot be allocated.
TEST(Dra, MatchAttributeMissingOnADevice) {
  const std::string devices =
      "  - {name: gpu-0, attributes: {resource.kubernetes.io/pcieRoot: {string: r0}}}\n"
      "  - {name: gpu-1}\n";
  const std::string requests = "      - name: gpu\n        exactly: {deviceClassName: gpu, count: 2}\n";
  const std::string constraints = "      constraints:\n      - {matchAttribute: resource.kubernetes.io/pcieRoot}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("t", requests, constraints) +
                            pod("p0", "  - {name: x, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0: 0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}));
}

// A named ResourceClaim shared by pods is allocated once; every pod using it must run where its
// devices are reachable (kube's "resourceclaim not available on the node"). Nodes a and b each have
// one device; p0 allocates the claim on a (a sorts first), p1 follows it to a with the same device;
// p2 is pinned to b by nodeSelector: b passes every other filter, not the claim's node selector.
TEST(Dra, SharedClaimAllocatedOnceAndFollowed) {
  const std::string claim = R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu}}
)Y";
  const std::string uses = "  - {name: g, resourceClaimName: shared}\n";
  std::string pinned = pod("p2", uses);
  pinned.insert(pinned.find("  containers:"), "  nodeSelector: {kubernetes.io/hostname: b}\n");
  std::string nb = node("b");
  nb.insert(nb.find("}\nstatus"), ", labels: {kubernetes.io/hostname: b}");
  const auto r = place_dra_text(kClass + node("a") + nb + slice("a", "  - {name: gpu-0}\n") + slice("b", "  - {name: gpu-0}\n") + claim +
                            pod("p0", uses) + pod("p1", uses) + pinned);
  EXPECT_EQ(dra_summary(r),
            (std::vector<std::string>{"default/p0 -> a gpu=gpu-0", "default/p1 -> a gpu=gpu-0",
                                      "default/p2: 0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                                      "1 resourceclaim not available on the node. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                                      "scheduling."}));
}

// Partitionable devices (KEP-4815, "partitionable-devices-*"): MIG placements of one GPU consume the
// memory slices of its counter set. On examples/dra/mig-cluster.yaml with mig-workload.yaml: train
// takes dra-a100-0's whole GPU (slices 0-7); infer-3g-0 takes the 3g.40gb at slice 0 of dra-a100-1
// (slices 0-3); small-0 and small-1 get no 1g.10gb at slices 0-3 (taken) and take those at 4 and 5;
// infer-3g-1 needs slices 4-7 of one GPU: none is free on either node.
TEST(Dra, MigPartitionsShareCounters) {
  const io::PlaceInputs in = io::read_place_inputs({example("mig-cluster.yaml")}, {example("mig-workload.yaml")});
  const auto r = place::place_workload(in.input, place::PlaceOptions{});
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{
                            "default/train -> dra-a100-0 gpu=gpu-0",
                            "default/infer-3g-0 -> dra-a100-1 mig=gpu-0-mig-3g.40gb-0",
                            "default/small-0 -> dra-a100-1 mig/one-g=gpu-0-mig-1g.10gb-4",
                            "default/small-1 -> dra-a100-1 mig/one-g=gpu-0-mig-1g.10gb-5",
                            "default/infer-3g-1: 0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
                        }));
  // GPU allocation counts DRA devices (model/dra_gpu_share.h): 2 GPUs (one per node); the whole GPU
  // 1000, the 3g.40gb 40Gi/80Gi of the counter set = 500, each 1g.10gb 10Gi/80Gi = 125: 1750 of 2000.
  EXPECT_EQ(r.gpu_capacity_milli, 2000);
  EXPECT_EQ(r.gpu_used_milli, 1750);
}

// A claim allocated in the input (status.allocation) holds its device: a new claim gets the other
// one, and a pod using the allocated claim goes where its node selector says.
TEST(Dra, AlreadyAllocatedClaimsHoldTheirDevices) {
  const std::string claim = R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: b, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [b]}]
)Y";
  const std::string requests = "      - name: gpu\n        exactly: {deviceClassName: gpu}\n";
  const auto r = place_dra_text(kClass + node("a") + node("b") + slice("b", "  - {name: gpu-0}\n  - {name: gpu-1}\n") + claim +
                            template_claim("t", requests) + pod("new", "  - {name: g, resourceClaimTemplateName: t}\n") +
                            pod("user", "  - {name: g, resourceClaimName: held}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/new -> b gpu=gpu-1", "default/user -> b gpu=gpu-0"}));
}

// allocationMode All takes every matching device of the node; with one of them held by another claim
// it cannot be allocated ("all-devices-some-allocated").
TEST(Dra, AllModeTakesEveryDeviceOrNone) {
  const std::string all = "      - name: gpu\n        exactly: {deviceClassName: gpu, allocationMode: All}\n";
  const std::string one = "      - name: gpu\n        exactly: {deviceClassName: gpu}\n";
  const std::string devices = "  - {name: gpu-0}\n  - {name: gpu-1}\n  - {name: gpu-2}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("all", all) + template_claim("one", one) +
                            pod("first", "  - {name: g, resourceClaimTemplateName: all}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/first -> a gpu=gpu-0 gpu=gpu-1 gpu=gpu-2"}));
  const auto r2 = place_dra_text(kClass + node("a") + slice("a", devices) + template_claim("all", all) + template_claim("one", one) +
                             pod("one", "  - {name: g, resourceClaimTemplateName: one}\n") +
                             pod("all", "  - {name: g, resourceClaimTemplateName: all}\n"));
  EXPECT_EQ(dra_summary(r2), (std::vector<std::string>{"default/one -> a gpu=gpu-0",
                                                   "default/all: 0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}));
}

// PreFilter's rejections, worded as upstream's (dynamicresources.go): a missing named claim (the
// lister's NotFound) and a missing DeviceClass ("request <r>: device class <c> does not exist"). As
// for every PreFilter rejection, `place` gives the plugin's message as the pending reason.
TEST(Dra, MissingClaimAndDeviceClass) {
  const std::string requests = "      - name: gpu\n        exactly: {deviceClassName: nope}\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", "  - {name: gpu-0}\n") + template_claim("t", requests) +
                            pod("p0", "  - {name: g, resourceClaimName: absent}\n") +
                            pod("p1", "  - {name: g, resourceClaimTemplateName: t}\n"));
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].reason, "resourceclaim.resource.k8s.io \"absent\" not found");
  EXPECT_EQ(r.pending[1].reason, "request gpu: device class nope does not exist");
}

// A CEL runtime error (a key the device does not have) aborts upstream's allocation with "claim <ns>/<claim>:
// selector #<i>: CEL runtime error: <cel-go's error>" (allocator selectorsMatch); kube's Filter then
// fails the cycle with that error. gpufleet leaves the pod pending with those words (dynamic_resources.h).
TEST(Dra, CelRuntimeErrorKeepsThePodPendingWithTheError) {
  const std::string requests =
      "      - name: g\n        exactly:\n          deviceClassName: gpu\n"
      "          selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].model == 'x'\"}}]\n";
  const auto r = place_dra_text(kClass + node("a") + slice("a", "  - {name: gpu-0}\n") + template_claim("t", requests) +
                            pod("p0", "  - {name: g, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{
                            "default/p0: 0/1 nodes are available: 1 claim default/p0-g: selector #0: CEL runtime error: no such key: "
                            "model. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}));
}

// Device-plugin and DRA nodes in one cluster (examples/dra/mixed-*.yaml): dp-job's nvidia.com/gpu only
// fits dp-a100-0; dra-job's two H100s under one PCIe root are gpu-1 and gpu-2 (gpu-0 is alone on its
// root); shared-0 allocates the shared claim (gpu-0, the free one) and shared-1 reuses it; no DRA node
// has an A100.
TEST(Dra, MixedDevicePluginAndDraNodes) {
  const io::PlaceInputs in = io::read_place_inputs({example("mixed-cluster.yaml")}, {example("mixed-workload.yaml")});
  const auto r = place::place_workload(in.input, place::PlaceOptions{});
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{
                            "default/dp-job -> dp-a100-0",
                            "default/dra-job -> dra-h100-0 gpus=gpu-1 gpus=gpu-2",
                            "default/shared-0 -> dra-h100-0 gpu=gpu-0",
                            "default/shared-1 -> dra-h100-0 gpu=gpu-0",
                            "default/wants-a100: 0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
                        }));
  ASSERT_EQ(r.placements[0].gpus, (std::vector<int32_t>{0, 1}));
  // 4 device-plugin GPUs (2 taken) and 3 DRA H100s (dra-job's 2, the shared claim's 1): 5 of 7.
  EXPECT_EQ(r.gpu_capacity_milli, 7000);
  EXPECT_EQ(r.gpu_used_milli, 5000);
}

// Read-time checks: a CEL construct gpufleet does not evaluate, and adminAccess, are exit-2 errors at
// the field.
TEST(Dra, ReaderRefusesUnsupportedCelAndAdminAccess) {
  const std::string bad_cel = R"Y(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: x}
spec:
  selectors:
  - cel: {expression: "device.driver.matches('gpu.*')"}
)Y";
  testing::expect_input_error([&] { io::parse_k8s_text(bad_cel, "c.yaml"); }, "c.yaml", 6, 23, "spec.selectors[0].cel.expression",
                              "CEL method matches");
  // kube refuses a selector whose result is never a bool (dynamic-resource-allocation/cel/compile.go).
  const std::string not_bool = R"Y(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: x}
spec:
  selectors:
  - cel: {expression: "device.driver.startsWith('gpu') ? 1 : 2"}
)Y";
  testing::expect_input_error([&] { io::parse_k8s_text(not_bool, "c.yaml"); }, "c.yaml", 6, 23, "spec.selectors[0].cel.expression",
                              "CEL selector must evaluate to bool, got int");
  const std::string admin = R"Y(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: x}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu, adminAccess: true}
)Y";
  testing::expect_input_error([&] { io::parse_k8s_text(admin, "c.yaml"); }, "c.yaml", 8, 52,
                              "spec.devices.requests[0].exactly.adminAccess", "adminAccess is refused");
}

// v1beta1 spelling: deviceClassName on the request, device fields under `basic`.
TEST(Dra, ReadsV1beta1) {
  const std::string text = R"Y(---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: "device.attributes['gpu.example.com'].model == 'x'"}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: a, generation: 1, resourceSliceCount: 1}
  nodeName: a
  devices:
  - {name: gpu-0, basic: {attributes: {model: {string: y}}}}
  - {name: gpu-1, basic: {attributes: {model: {string: x}}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu}
)Y";
  const auto r = place_dra_text(text + node("a") + pod("p0", "  - {name: g, resourceClaimTemplateName: t}\n"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/p0 -> a gpu=gpu-1"}));
}

}  // namespace
}  // namespace gpufleet
