// ClusterState's binding order (BoundPod::bind_seq, rebind) and its count of pods with required
// anti-affinity: what preemption's dry run and InterPodAffinity rely on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;
using Gpus = std::vector<int32_t>;

std::vector<std::string> names_on(const ClusterState& s, NodeId n) {
  std::vector<std::string> out;
  for (const BoundPod& b : s.pods_on(n)) out.push_back(b.pod.name);
  return out;
}

// Three allocations on two nodes get bind_seq 1, 2, 3 in call order, whatever the node.
TEST(ClusterStateBinding, BindSeqFollowsAllocateOrderAcrossNodes) {
  ClusterState s({make_node("n0", 8000, 8192, 2), make_node("n1", 8000, 8192, 2)});
  s.allocate(0, make_pod("a", 1000, 100, 0, 0), {});
  s.allocate(1, make_pod("b", 1000, 100, 1, 500), {.gpus = {1}});
  s.allocate(0, make_pod("c", 1000, 100, 1, 1000), {.gpus = {0}});
  ASSERT_EQ(s.pods_on(0).size(), 2u);
  EXPECT_EQ(s.pods_on(0)[0].bind_seq, 1u);
  EXPECT_EQ(s.pods_on(1)[0].bind_seq, 2u);
  EXPECT_EQ(s.pods_on(0)[1].bind_seq, 3u);
}

// Releasing the first of three pods and rebinding it puts it back first, with its bind_seq, and
// restores every usage figure; a later allocate gets a fresh number (4), never a released one.
TEST(ClusterStateBinding, RebindRestoresPlaceAndUsage) {
  ClusterState s({make_node("n0", 8000, 8192, 2)});
  s.allocate(0, make_pod("a", 1000, 100, 1, 300), {.gpus = {1}});
  s.allocate(0, make_pod("b", 2000, 200, 0, 0), {});
  s.allocate(0, make_pod("c", 500, 50, 1, 1000), {.gpus = {0}});
  const BoundPod a = s.pods_on(0)[0];
  const uint32_t v0 = s.version(0);
  s.release(0, a.pod);
  EXPECT_EQ(names_on(s, 0), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(s.cpu_used_milli(0), 2500);
  EXPECT_EQ(s.gpu_free_milli(0)[1], 1000);
  s.rebind(0, a);
  EXPECT_EQ(names_on(s, 0), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.pods_on(0)[0].bind_seq, 1u);
  EXPECT_EQ(s.cpu_used_milli(0), 3500);           // 1000 + 2000 + 500
  EXPECT_EQ(s.memory_free_bytes(0), (8192 - 350) * kBytesPerMib);    // 100 + 200 + 50
  EXPECT_EQ(s.pod_count(0), 3);
  EXPECT_EQ(s.gpu_free_milli(0)[1], 700);         // a's 300 back on GPU 1
  EXPECT_EQ(s.gpu_free_milli(0)[0], 0);           // c's whole GPU 0
  EXPECT_EQ(s.gpu_used_milli(), 1300);
  EXPECT_EQ(s.version(0), v0 + 2);                // release and rebind each bump the version
  s.allocate(0, make_pod("d", 0, 0, 0, 0), {});
  EXPECT_EQ(s.pods_on(0).back().bind_seq, 4u);
}

TEST(ClusterStateBinding, RebindRefusesUnknownOrDuplicateSeq) {
  ClusterState s({make_node("n0", 8000, 8192, 2)});
  s.allocate(0, make_pod("a", 1000, 100, 0, 0), {});
  BoundPod copy = s.pods_on(0)[0];
  EXPECT_THROW(s.rebind(0, copy), InvariantViolation);  // a (seq 1) is still bound there
  copy.bind_seq = 0;
  EXPECT_THROW(s.rebind(0, copy), InvariantViolation);  // never handed out
  copy.bind_seq = 2;
  EXPECT_THROW(s.rebind(0, copy), InvariantViolation);  // not handed out yet
  EXPECT_EQ(s.pod_count(0), 1);
  EXPECT_EQ(s.cpu_used_milli(0), 1000);
}

// A rebind that no longer fits (another pod took the room meanwhile) throws and changes nothing.
TEST(ClusterStateBinding, RebindChecksCapacityLikeAllocate) {
  ClusterState s({make_node("n0", 2000, 8192, 1)});
  s.allocate(0, make_pod("a", 1500, 100, 0, 0), {});
  const BoundPod a = s.pods_on(0)[0];
  s.release(0, a.pod);
  s.allocate(0, make_pod("b", 1000, 100, 0, 0), {});
  EXPECT_THROW(s.rebind(0, a), InvariantViolation);
  EXPECT_EQ(names_on(s, 0), (std::vector<std::string>{"b"}));
  EXPECT_EQ(s.cpu_used_milli(0), 1000);
}

TEST(ClusterStateBinding, CountsPodsWithRequiredAntiAffinity) {
  ClusterState s({make_node("n0", 8000, 8192, 0), make_node("n1", 8000, 8192, 0)});
  Pod anti = make_pod("anti", 100, 10, 0, 0);
  anti.constraints.required_anti_affinity.push_back(PodAffinityTerm{{{{"app", "web"}}, {}}, {}, "kubernetes.io/hostname"});
  Pod preferred_only = make_pod("pref", 100, 10, 0, 0);
  preferred_only.constraints.preferred_anti_affinity.push_back({10, anti.constraints.required_anti_affinity[0]});
  EXPECT_EQ(s.anti_affinity_pod_count(), 0);
  s.allocate(0, anti, {});
  s.allocate(0, preferred_only, {});  // preferred terms do not count
  Pod anti2 = anti;
  anti2.name = "anti2";
  s.allocate(1, anti2, {});
  EXPECT_EQ(s.anti_affinity_pod_count(0), 1);
  EXPECT_EQ(s.anti_affinity_pod_count(1), 1);
  EXPECT_EQ(s.anti_affinity_pod_count(), 2);
  const BoundPod bound = s.pods_on(0)[0];
  s.release(0, anti);
  EXPECT_EQ(s.anti_affinity_pod_count(0), 0);
  EXPECT_EQ(s.anti_affinity_pod_count(), 1);
  s.rebind(0, bound);
  EXPECT_EQ(s.anti_affinity_pod_count(0), 1);
  EXPECT_EQ(s.anti_affinity_pod_count(), 2);
}

}  // namespace
}  // namespace gpufleet
