// model/dra_utilization.h: the Cluster Autoscaler's scale-down utilization of DRA pools and nodes
// (kubernetes/autoscaler cluster-autoscaler/simulator/dynamicresources/utils/utilization.go).
// Every expected value is computed by hand in the comment beside it.
#include "model/dra_utilization.h"

#include <gtest/gtest.h>

#include <memory>

#include "support/test_support.h"

namespace gpufleet {
namespace {

using Counters = std::map<std::string, Quantity>;

DraDevice atomic(const std::string& name) {
  DraDevice d;
  d.name = name;
  return d;
}

DraDevice partitionable(const std::string& name, const std::string& set, Counters consumes) {
  DraDevice d;
  d.name = name;
  d.consumes_counters = {{set, std::move(consumes)}};
  return d;
}

ResourceSlice slice(const std::string& pool, const std::string& node, std::vector<DraDevice> devices, std::vector<DraCounterSet> sets = {}) {
  ResourceSlice s;
  s.name = pool + "-" + node;
  s.driver = "gpu.example.com";
  s.pool = pool;
  s.node_name = node;
  s.devices = std::move(devices);
  s.shared_counters = std::move(sets);
  return s;
}

Quantity q(const char* text) { return Quantity::parse(text); }

double pool_utilization(const ResourceSlice& s, const std::set<std::string>& allocated) {
  const ResourceSlice* one[] = {&s};
  return dra_pool_utilization(one, allocated);
}

// The upstream comment's pool: 2 atomic devices and 1 partitionable device p consuming `p_memory` of
// an 80Gi counter set; `z` a second partitionable device of the same set consuming nothing.
ResourceSlice upstream_pool(const char* p_memory) {
  return slice("pool", "n0",
               {atomic("a0"), atomic("a1"), partitionable("p", "gpu-0", {{"memory", q(p_memory)}}), partitionable("z", "gpu-0", {{"memory", q("0")}})},
               {{"gpu-0", {{"memory", q("80Gi")}}}});
}

// The three examples of calculatePoolUtil's comment (A = 2 atomic devices, P = 1 distinct counter set).
//  - 1 atomic allocated + partitionable at 50% (p takes 40Gi of 80Gi): mixed, (0.5 x 2 + 0.5 x 1) / 3 = 0.5.
//  - 2 atomic allocated, partitionable at 0%: the comment says 66.6%. The code returns the atomic
//    utilization, 2/2 = 1, when every allocated device is atomic; 66.6% = (1 x 2 + 0 x 1) / 3 needs a
//    partitionable device allocated at 0% (z, which consumes 0 of the set).
//  - 0 atomic allocated, partitionable at 100% (p takes 80Gi): the comment says 33.3%; every allocated
//    device is partitionable, so the code returns the partitionable utilization, 1.
//  - nothing allocated: every allocated device is (vacuously) atomic: 0/2 = 0.
TEST(DraUtilization, UpstreamCommentExamples) {
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("40Gi"), {"a0", "p"}), 0.5);
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("40Gi"), {"a0", "a1"}), 1.0);
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("40Gi"), {"a0", "a1", "z"}), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("80Gi"), {"p"}), 1.0);
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("80Gi"), {}), 0.0);
  EXPECT_DOUBLE_EQ(pool_utilization(upstream_pool("80Gi"), {"a1"}), 0.5);  // atomic only: 1/2
}

// An A100-80GB published as NVIDIA's DRA driver publishes it (examples/dra/sim-pools.yaml): one counter
// set with `memory` 80Gi and memorySlice0..7 of 1 each; the whole GPU consumes all of them, each
// 3g.40gb placement 40Gi and its 4 slices. With one 3g.40gb allocated (half the GPU's memory) the
// set's highest counter is a memory slice, 1/1: the pool is 100% used. With a `memory` counter only,
// the same half is 40Gi/80Gi = 0.5; two such GPUs (two counter sets) with one 3g.40gb on gpu-0:
// (0.5 + 0) / 2 = 0.25; and both 3g.40gb of gpu-0 and one of gpu-1: (1 + 0.5) / 2 = 0.75.
TEST(DraUtilization, MigPartitionsHalfUsed) {
  Counters whole{{"memory", q("80Gi")}}, low{{"memory", q("40Gi")}}, high{{"memory", q("40Gi")}};
  for (int i = 0; i < 8; ++i) whole["memorySlice" + std::to_string(i)] = q("1");
  for (int i = 0; i < 4; ++i) low["memorySlice" + std::to_string(i)] = q("1");
  for (int i = 4; i < 8; ++i) high["memorySlice" + std::to_string(i)] = q("1");
  const ResourceSlice nvidia = slice("a100", "n0",
                                     {partitionable("gpu-0", "gpu-0-cs", whole), partitionable("gpu-0-mig-3g.40gb-0", "gpu-0-cs", low),
                                      partitionable("gpu-0-mig-3g.40gb-4", "gpu-0-cs", high)},
                                     {{"gpu-0-cs", whole}});
  EXPECT_DOUBLE_EQ(pool_utilization(nvidia, {"gpu-0-mig-3g.40gb-0"}), 1.0);
  EXPECT_DOUBLE_EQ(pool_utilization(nvidia, {}), 0.0);

  const Counters memory80{{"memory", q("80Gi")}}, memory40{{"memory", q("40Gi")}};
  const ResourceSlice two = slice("a100", "n0",
                                  {partitionable("gpu-0", "gpu-0-cs", memory80), partitionable("gpu-0-mig-a", "gpu-0-cs", memory40),
                                   partitionable("gpu-0-mig-b", "gpu-0-cs", memory40), partitionable("gpu-1", "gpu-1-cs", memory80),
                                   partitionable("gpu-1-mig-a", "gpu-1-cs", memory40), partitionable("gpu-1-mig-b", "gpu-1-cs", memory40)},
                                  {{"gpu-0-cs", memory80}, {"gpu-1-cs", memory80}});
  EXPECT_DOUBLE_EQ(pool_utilization(two, {"gpu-0-mig-a"}), 0.25);
  EXPECT_DOUBLE_EQ(pool_utilization(two, {"gpu-0-mig-a", "gpu-0-mig-b", "gpu-1-mig-b"}), 0.75);
  // Upstream's mixed test, in miniature: the two GPUs plus 2 atomic devices (A = 2, P = 2), gpu-0-mig-a,
  // gpu-1 whole and atomic d0 allocated: partitionable (0.5 + 1) / 2 = 0.75, atomic 1/2:
  // (0.75 x 2 + 0.5 x 2) / 4 = 0.625.
  ResourceSlice mixed = two;
  mixed.devices.push_back(atomic("d0"));
  mixed.devices.push_back(atomic("d1"));
  EXPECT_DOUBLE_EQ(pool_utilization(mixed, {"gpu-0-mig-a", "gpu-1", "d0"}), 0.625);
}

// A node: the claims of its bound pods; the highest pool; the newest generation only; an incomplete
// pool is not measured. Node n0 has pool "x" (4 atomic devices, generation 2; a generation-1 slice of
// 10 devices is ignored) and pool "y" (2 atomic devices). A pod holds x/d0 and y/e0: x 1/4, y 1/2, the
// node 0.5. Node n1 has no slices (nullopt). Node n2's pool says 2 slices and has 1: not measured.
TEST(DraUtilization, NodeTakesItsHighestPool) {
  auto catalog = std::make_shared<DraCatalog>();
  ResourceSlice x = slice("x", "n0", {atomic("d0"), atomic("d1"), atomic("d2"), atomic("d3")});
  x.generation = 2;
  ResourceSlice old = slice("x", "n0", {});
  old.generation = 1;
  for (int i = 0; i < 10; ++i) old.devices.push_back(atomic("old" + std::to_string(i)));
  ResourceSlice broken = slice("z", "n2", {atomic("f0")});
  broken.resource_slice_count = 2;
  catalog->slices = {old, x, slice("y", "n0", {atomic("e0"), atomic("e1")}), broken};
  ClusterState state({testing::make_node("n0", 8000, 8192, 0), testing::make_node("n1", 8000, 8192, 0),
                      testing::make_node("n2", 8000, 8192, 0)});
  state.set_dra_catalog(catalog);
  const DraNodeSlices slices(*catalog);
  EXPECT_DOUBLE_EQ(slices.utilization(state, 0)->utilization, 0.0);
  Pod pod = testing::make_pod("p", 1000, 1024, 0, 0);
  DeviceAssignment devices;
  DraAllocation a;
  a.devices = {{"r", "gpu.example.com", "x", "d0"}, {"r", "gpu.example.com", "y", "e0"}};
  devices.claims = {{"default/p-c", a}};
  state.allocate(0, pod, devices);
  ASSERT_TRUE(slices.utilization(state, 0).has_value());
  EXPECT_TRUE(slices.utilization(state, 0)->measured);
  EXPECT_DOUBLE_EQ(slices.utilization(state, 0)->utilization, 0.5);
  EXPECT_FALSE(slices.utilization(state, 1).has_value());
  EXPECT_FALSE(slices.has_local_slices("n1"));
  EXPECT_FALSE(slices.utilization(state, 2)->measured);
}

}  // namespace
}  // namespace gpufleet
