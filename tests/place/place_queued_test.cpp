// `gpufleet place` with Kueue workloads and pod groups (place/queued_placement.h): the example set,
// quota-only against placement-aware admission on fragmented nodes (kubernetes-sigs/kueue#4329), a
// gang torn down whole when a single pod preempts one member. Expected values by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "readers/k8s/place_inputs.h"
#include "support/kueue_test_support.h"
#include "place/place_workload.h"
#include "support/test_support.h"

namespace gpufleet::place {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

std::map<std::string, std::string> node_of(const PlaceResult& r) {
  std::map<std::string, std::string> out;
  for (const Placement& p : r.placements) out[p.pod] = p.node;
  return out;
}

TEST(PlaceQueued, ExampleAdmitsBothJobsKeepsTheTrainingJobInOneRackAndTheGangWhole) {
  const std::string dir = GPUFLEET_SOURCE_DIR "/examples/queues";
  const io::PlaceInputs in = io::read_place_inputs({dir + "/simulate/pools.yaml"}, {dir});
  const PlaceResult r = place_workload(in.input, PlaceOptions{});
  const auto nodes = node_of(r);
  // llm-finetune: 1 master + 1 worker x 8 GPUs within team-a's nominal 16; preferred rack (2 nodes):
  // rack h100-0 = h100-0, h100-1.
  EXPECT_EQ(nodes.at("team-a/llm-finetune-master-0"), "h100-0");
  EXPECT_EQ(nodes.at("team-a/llm-finetune-worker-0"), "h100-1");
  EXPECT_EQ(nodes.count("team-b/eval-sweep-main-3"), 1u);
  // The gang sharded-inference (3 pods x 2 GPUs, minMember 3) finds 2 GPUs free on the H100 nodes and
  // cannot tolerate the spot node: pending whole, no member bound.
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "team-b/sharded-inference");
  EXPECT_NE(r.pending[0].reason.find("Insufficient nvidia.com/gpu"), std::string::npos) << r.pending[0].reason;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(nodes.count("team-b/sharded-inference-" + std::to_string(i)), 0u);
  ASSERT_EQ(r.admissions.size(), 2u);
  EXPECT_EQ(r.admissions[0].type, "Admitted");
}

// Two nodes x 8 GPUs, each with a 4-GPU pod already bound; ClusterQueue nominal 16 GPUs with the
// two bound pods' 8 charged by running Kueue workloads a and b. Then W1 (8 GPUs), W2 and W3 (1 GPU).
PlaceInput fragmented(bool placement_aware) {
  PlaceInput in;
  in.nodes = {make_node("n1", 64000, 65536, 8, "L4"), make_node("n2", 64000, 65536, 8, "L4")};
  queue::KueueObjects& o = in.kueue;
  queue::testing::add_flavor(o, "default");
  queue::testing::add_cq(o, "cq", "", queue::testing::quota("default", queue::kGpu, 16 * 1000));
  o.configuration.placement_aware = placement_aware;
  using queue::testing::gpu_pod;
  using queue::testing::make_workload;
  in.queued_workloads = {make_workload("a", "cq", gpu_pod(4), 1, 0), make_workload("b", "cq", gpu_pod(4), 1, 1),
                         make_workload("w1", "cq", gpu_pod(8), 1, 2), make_workload("w2", "cq", gpu_pod(1), 1, 3),
                         make_workload("w3", "cq", gpu_pod(1), 1, 4)};
  return in;
}

TEST(PlaceQueued, QuotaOnlyAdmitsAWorkloadNoNodeHolds) {
  PlaceOptions options;
  options.policy = "leastallocated";  // a and b spread over n1 and n2
  const PlaceResult r = place_workload(fragmented(false), options);
  const auto nodes = node_of(r);
  EXPECT_NE(nodes.at("default/a-main-0"), nodes.at("default/b-main-0"));
  // W1 takes the last 8 GPUs of quota but fits no node; W2 and W3 wait for quota.
  ASSERT_EQ(r.pending.size(), 3u);
  EXPECT_EQ(r.pending[0].pod, "default/w1");
  EXPECT_NE(r.pending[0].reason.find("admitted by Kueue to ClusterQueue cq, but its pods do not fit"), std::string::npos)
      << r.pending[0].reason;
  EXPECT_EQ(r.pending[1].pod, "default/w2");
  EXPECT_NE(r.pending[1].reason.find("not admitted by Kueue"), std::string::npos) << r.pending[1].reason;
}

TEST(PlaceQueued, PlacementAwareLeavesItAndAdmitsTheSmallOnes) {
  PlaceOptions options;
  options.policy = "leastallocated";
  const PlaceResult r = place_workload(fragmented(true), options);
  const auto nodes = node_of(r);
  EXPECT_EQ(nodes.count("default/w2-main-0"), 1u);
  EXPECT_EQ(nodes.count("default/w3-main-0"), 1u);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/w1");
  EXPECT_NE(r.pending[0].reason.find("the cluster cannot hold the pods now"), std::string::npos) << r.pending[0].reason;
}

TEST(PlaceQueued, AGangIsTornDownWholeWhenOneMemberIsPreempted) {
  // One node x 4 GPUs. Gang g (2 pods x 2 GPUs, minMember 2, priority 0) takes it all; then pod hi
  // (2 GPUs, priority 1000) preempts one member: the other is released too and the gang is pending.
  PlaceInput in;
  in.nodes = {make_node("n", 64000, 65536, 4, "L4")};
  for (int i = 0; i < 2; ++i) {
    Pod p = make_pod("g-" + std::to_string(i), 1000, 1024, 2, 1000);
    p.labels.emplace_back(kPodGroupLabel, "g");
    in.pods.push_back(p);
  }
  Pod hi = make_pod("hi", 1000, 1024, 2, 1000);
  hi.priority = 1000;
  in.pods.push_back(hi);
  in.pod_groups = {PodGroup{"default", "g", 2, 60, ""}};
  const PlaceResult r = place_workload(in, PlaceOptions{});
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "default/hi");
  ASSERT_EQ(r.placements[0].preempted.size(), 1u);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/g");
  EXPECT_NE(r.pending[0].reason.find("gang torn down"), std::string::npos);
  EXPECT_EQ(r.gpu_used_milli, 2000);  // hi only: no member left holding GPUs
}

}  // namespace
}  // namespace gpufleet::place
