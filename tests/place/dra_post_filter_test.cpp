// DynamicResources' PostFilter in `place` (sched/plugins/dynamic_resources.h; kubernetes
// pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go PostFilter and its test cases
// "wrong-topology" (deallocated, "deallocation of ResourceClaim completed") and the "still not
// schedulable" default): an allocated claim that keeps a pod off every node and is reserved for no
// pod is deallocated, and the pod's next cycle allocates it where the pod fits. Expected outcomes are
// hand-computed in the comments.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/dra_test_support.h"

namespace gpufleet {
namespace {

using testing::dra_summary;
using testing::place_dra_text;

const std::string kClass = testing::dra_gpu_device_class();

std::string node(const std::string& name, bool cordoned) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nspec: {unschedulable: " + (cordoned ? "true" : "false") +
         "}\nstatus:\n  allocatable: {cpu: \"8\", memory: 64Gi, pods: \"110\"}\n";
}

std::string slice(const std::string& node, const std::string& devices) {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + node +
         "}\nspec:\n  driver: gpu.example.com\n  pool: {name: " + node + ", generation: 1, resourceSliceCount: 1}\n  nodeName: " + node +
         "\n  devices:\n" + devices;
}

// A ResourceClaim allocated device `device` of node `node`'s pool; `reserved_for` a pod name or "".
std::string allocated_claim(const std::string& name, const std::string& node, const std::string& device, const std::string& reserved_for) {
  std::string text = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
                     ", namespace: default}\nspec:\n  devices:\n    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu}}\n"
                     "status:\n  allocation:\n    devices:\n      results:\n      - {request: gpu, driver: gpu.example.com, pool: " +
                     node + ", device: " + device +
                     "}\n    nodeSelector:\n      nodeSelectorTerms:\n      - matchFields: [{key: metadata.name, operator: In, values: [" +
                     node + "]}]\n";
  if (!reserved_for.empty()) text += "  reservedFor:\n  - {resource: pods, name: " + reserved_for + ", uid: uid-" + reserved_for + "}\n";
  return text;
}

std::string pod(const std::string& name, const std::string& claim) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  containers:\n  - {name: c, image: i, resources: {requests: {cpu: \"1\"}}}\n  resourceClaims:\n  - {name: g, resourceClaimName: " +
         claim + "}\n";
}

// Node a is cordoned, b is not; each publishes its own pool (a: gpu-0, gpu-1; b: gpu-0).
//  - `pre` is allocated a/gpu-0 and reserved for no pod. mover's first cycle: a is unschedulable,
//    and on b the claim is "not available on the node" (its node selector names a). PostFilter: pre
//    is unavailable (b rejected it) and reserved for no pod: deallocated, "deallocation of
//    ResourceClaim completed"; mover is queued again. Its second cycle allocates pre anew on b's
//    only device: mover -> b, pre = b/gpu-0.
//  - `held` is allocated a/gpu-1 and reserved for the pod `other` (not among the inputs: the claim's
//    status still names it). blocked's cycle fails the same way, but PostFilter leaves held alone:
//    "still not schedulable", then DefaultPreemption's words (NodeUnschedulable and the claim's
//    node are UnschedulableAndUnresolvable: preemption cannot help on either node).
TEST(DraPostFilter, DeallocatesAClaimReservedForNoPod) {
  const auto r = place_dra_text(kClass + node("a", true) + node("b", false) + slice("a", "  - {name: gpu-0}\n  - {name: gpu-1}\n") +
                                slice("b", "  - {name: gpu-0}\n") + allocated_claim("pre", "a", "gpu-0", "") +
                                allocated_claim("held", "a", "gpu-1", "other") + pod("mover", "pre") + pod("blocked", "held"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{
                                "default/mover -> b gpu=gpu-0",
                                "default/blocked: 0/2 nodes are available: 1 node(s) were unschedulable, 1 resourceclaim not available on "
                                "the node. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                                "scheduling."}));
  ASSERT_EQ(r.placements.size(), 1u);
  ASSERT_EQ(r.placements[0].claims.size(), 1u);
  EXPECT_EQ(r.placements[0].claims[0].claim, "default/pre");
  EXPECT_EQ(r.placements[0].claims[0].allocation.devices[0].pool, "b");
}

// The claim reserved for the pod itself only (status.reservedFor names this pod, as after a bind
// that failed) is deallocated too (upstream: reservedFor empty, or this pod's UID alone).
TEST(DraPostFilter, ClaimReservedForThePodItselfIsDeallocated) {
  const auto r = place_dra_text(kClass + node("a", true) + node("b", false) + slice("a", "  - {name: gpu-0}\n") +
                                slice("b", "  - {name: gpu-0}\n") + allocated_claim("pre", "a", "gpu-0", "mover") + pod("mover", "pre"));
  EXPECT_EQ(dra_summary(r), (std::vector<std::string>{"default/mover -> b gpu=gpu-0"}));
}

}  // namespace
}  // namespace gpufleet
