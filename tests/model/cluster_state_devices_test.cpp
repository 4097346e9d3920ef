// ClusterState's one device API: whole GPUs, fractions, MIG devices and time-sliced replicas go
// through allocate(n, pod, DeviceAssignment) and come back through release(n, pod), which returns
// what the pod held. Hand-computed accounting: a replica of R counts floor(1000 / R) gpu_milli, a
// MIG device floor(1000 * compute slices / 7).
#include "model/cluster_state.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

std::vector<int32_t> free_of(const ClusterState& s, NodeId n) {
  return {s.gpu_free_milli(n).begin(), s.gpu_free_milli(n).end()};
}

TEST(ClusterStateDevices, WholeAndFractionalGpus) {
  ClusterState s({make_node("n0", 8000, 8192, 4)});
  const Pod whole = make_pod("whole", 1000, 1024, 2, 1000);
  const Pod part = make_pod("part", 500, 512, 1, 300);
  EXPECT_TRUE(s.can_allocate(0, whole, {.gpus = {1, 3}}));
  EXPECT_EQ(s.allocate(0, whole, {.gpus = {1, 3}}), 1u);
  EXPECT_EQ(s.allocate(0, part, {.gpus = {0}}), 2u);
  EXPECT_EQ(free_of(s, 0), (std::vector<int32_t>{700, 0, 1000, 0}));
  EXPECT_EQ(s.gpu_used_milli(), 2300);
  EXPECT_FALSE(s.can_allocate(0, make_pod("more", 0, 0, 1, 800), {.gpus = {0}}));  // 700 free

  const BoundPod out = s.release(0, whole);
  EXPECT_EQ(out.pod.name, "whole");
  EXPECT_EQ(out.gpus, (std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(out.shared_replicas.empty());
  EXPECT_TRUE(out.mig.empty());
  EXPECT_EQ(out.bind_seq, 1u);
  EXPECT_EQ(free_of(s, 0), (std::vector<int32_t>{700, 1000, 1000, 1000}));
  EXPECT_EQ(s.cpu_used_milli(0), 500);
  const BoundPod p = s.release(0, part);
  EXPECT_EQ(p.gpus, std::vector<int32_t>{0});
  EXPECT_EQ(s.gpu_used_milli(), 0);
  EXPECT_EQ(s.cpu_used_milli(0), 0);
}

// An H100 with 4g.40gb at memory slice 0 and 3g.40gb at 4: the 3g device counts 428 gpu_milli.
TEST(ClusterStateDevices, MigDevice) {
  Node n = make_node("h100", 64000, 524288, 1, "H100-80GB");
  n.mig = {GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}}};
  ClusterState s({n});
  Pod pod = make_pod("infer", 4000, 8192, 0, 0);
  pod.mig_requests = {{"3g.40gb", 1}};
  EXPECT_FALSE(s.can_allocate(0, pod, {.mig = {{0, 0, "3g.40gb"}}}));  // no 3g at slice 0
  EXPECT_FALSE(s.can_allocate(0, pod, {.gpus = {0}}));                  // MIG GPUs are never whole
  s.allocate(0, pod, {.mig = {{0, 4, "3g.40gb"}}});
  EXPECT_EQ(free_of(s, 0), std::vector<int32_t>{572});
  EXPECT_EQ(s.mig_free_count(0, "3g.40gb"), 0);
  EXPECT_EQ(s.mig_free_count(0, "4g.40gb"), 1);
  EXPECT_TRUE(s.mig_device_taken(0, 0, 1));

  const BoundPod out = s.release(0, pod);
  EXPECT_EQ(out.mig, (std::vector<MigDevice>{{0, 4, "3g.40gb"}}));
  EXPECT_TRUE(out.gpus.empty());
  EXPECT_EQ(out.devices(), (DeviceAssignment{.mig = {{0, 4, "3g.40gb"}}}));
  EXPECT_EQ(free_of(s, 0), std::vector<int32_t>{1000});
  EXPECT_EQ(s.mig_free_count(0, "3g.40gb"), 1);
  EXPECT_EQ(s.gpu_used_milli(), 0);
}

// Two T4s time-sliced 4 ways: a replica counts 250 gpu_milli.
TEST(ClusterStateDevices, TimeSlicedReplicas) {
  Node renamed = make_node("renamed", 16000, 65536, 2, "T4");
  renamed.time_slicing = TimeSlicing{4, true, false};
  Node plain_name = make_node("plain-name", 16000, 65536, 2, "T4");
  plain_name.time_slicing = TimeSlicing{4, false, false};
  ClusterState s({renamed, plain_name});

  // nvidia.com/gpu.shared: 3 replicas, two on GPU 0 and one on GPU 1.
  Pod shared = make_pod("shared", 1000, 1024, 0, 0);
  shared.shared_replicas = 3;
  EXPECT_FALSE(s.can_allocate(0, shared, {.gpus = {0, 0, 1}}));  // renamed: no nvidia.com/gpu
  s.allocate(0, shared, {.shared_replicas = {0, 0, 1}});
  EXPECT_EQ(s.replicas_used(0, 0), 2);
  EXPECT_EQ(s.replicas_used(0, 1), 1);
  EXPECT_EQ(s.replicas_free(0), 5);
  EXPECT_EQ(free_of(s, 0), (std::vector<int32_t>{500, 750}));

  // nvidia.com/gpu: 2 on the node that does not rename: two replicas of GPU 1.
  const Pod gpu = make_pod("gpu", 1000, 1024, 2, 1000);
  s.allocate(1, gpu, {.gpus = {1, 1}});
  EXPECT_EQ(s.replicas_used(1, 1), 2);
  EXPECT_EQ(free_of(s, 1), (std::vector<int32_t>{1000, 500}));
  EXPECT_EQ(s.gpu_used_milli(), 1250);

  const BoundPod a = s.release(0, shared);
  EXPECT_EQ(a.shared_replicas, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(s.replicas_free(0), 8);
  const BoundPod b = s.release(1, gpu);
  EXPECT_EQ(b.gpus, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(s.replicas_used(1, 1), 0);
  EXPECT_EQ(s.gpu_used_milli(), 0);
}

// release finds the pod by namespace and name, and refuses another request under that name.
TEST(ClusterStateDevices, ReleaseGoesByNamespaceAndName) {
  ClusterState s({make_node("n0", 8000, 8192, 4)});
  Pod a = make_pod("web", 1000, 1024, 1, 1000);
  a.namespace_name = "a";
  Pod b = a;
  b.namespace_name = "b";
  s.allocate(0, a, {.gpus = {0}});
  s.allocate(0, b, {.gpus = {2}});
  Pod other = a;
  other.namespace_name = "c";
  EXPECT_THROW(s.release(0, other), InvariantViolation);
  Pod bigger = b;
  bigger.cpu_milli = 2000;
  EXPECT_THROW(s.release(0, bigger), InvariantViolation);  // bound with 1000
  EXPECT_EQ(s.pods_on(0).size(), 2u);
  const BoundPod out = s.release(0, b);
  EXPECT_EQ(out.pod.namespace_name, "b");
  EXPECT_EQ(out.gpus, std::vector<int32_t>{2});
  EXPECT_EQ(free_of(s, 0), (std::vector<int32_t>{0, 1000, 1000, 1000}));
  ASSERT_EQ(s.pods_on(0).size(), 1u);
  EXPECT_EQ(s.pods_on(0)[0].pod.namespace_name, "a");
}

}  // namespace
}  // namespace gpufleet
