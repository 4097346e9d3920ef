// NodePreference: preferred node affinity and PreferNoSchedule taints order nodes before the policy's
// score (see sched/plugins/node_preference.h).
#include "sched/plugins/node_preference.h"

#include <numeric>

#include <gtest/gtest.h>

#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

Node labelled(std::string name, std::string product, int32_t gpus = 8) {
  Node n = make_node(std::move(name), 64000, 262144, gpus, product == "NVIDIA-H100-80GB-HBM3" ? "H100-80GB" : "A100-80GB");
  n.labels = {{"nvidia.com/gpu.product", product}};
  return n;
}

Pod prefers_h100(std::string name, int32_t gpus) {
  Pod p = make_pod(std::move(name), 1000, 1024, gpus, 1000);
  p.constraints.preferred_node_affinity = {
      PreferredSchedulingTerm{100, NodeSelectorTerm{{SelectorRequirement{"nvidia.com/gpu.product", "In", {"NVIDIA-H100-80GB-HBM3"}}}, {}}}};
  return p;
}

std::vector<NodeId> place_all(const std::vector<Node>& nodes, const std::vector<Pod>& pods, const std::string& policy) {
  ClusterState state(nodes);
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(pods), state.gpu_models());
  std::vector<uint32_t> rank(nodes.size());
  std::iota(rank.begin(), rank.end(), 0u);
  sched::Scheduler s(sched::make_policy(policy, {frag, state.gpu_models(), &state}), rank);
  GoRand rng(1);
  std::vector<NodeId> out;
  for (const Pod& p : pods) out.push_back(s.schedule_one(p, state, rng).node);
  return out;
}

TEST(NodePreference, Values) {
  const Node h100 = labelled("h", "NVIDIA-H100-80GB-HBM3");
  Node tainted = labelled("a", "NVIDIA-A100-SXM4-80GB");
  tainted.taints = {{"spot", "true", "PreferNoSchedule"}, {"x", "", "PreferNoSchedule"}};
  EXPECT_EQ(sched::NodePreference::preference(prefers_h100("p", 1), h100), 100);
  EXPECT_EQ(sched::NodePreference::preference(prefers_h100("p", 1), tainted), -2 * (int64_t{1} << 32));
  Pod tolerant = prefers_h100("p", 1);
  tolerant.constraints.tolerations = {Toleration{"spot", "Exists", "", "", std::nullopt}};
  EXPECT_EQ(sched::NodePreference::preference(tolerant, tainted), -(int64_t{1} << 32));
  EXPECT_FALSE(sched::NodePreference::applies(make_pod("q", 0, 0, 1, 1000), false));
  EXPECT_TRUE(sched::NodePreference::applies(make_pod("q", 0, 0, 1, 1000), true));
  EXPECT_TRUE(sched::NodePreference::applies(prefers_h100("p", 1), false));
  EXPECT_TRUE(sched::NodePreference::any_prefer_no_schedule(std::vector<Node>{h100, tainted}));
  EXPECT_FALSE(sched::NodePreference::any_prefer_no_schedule(std::vector<Node>{h100}));
}

// Prefer H100, else A100: the preferred node wins over a better packing score until it is full.
TEST(NodePreference, PreferredAffinityBeatsThePolicyScoreUntilFull) {
  const std::vector<Node> nodes = {labelled("a100-0", "NVIDIA-A100-SXM4-80GB"), labelled("h100-0", "NVIDIA-H100-80GB-HBM3")};
  // bestfit alone would stack the second 4-GPU pod on the half-full node; here "filler" (no
  // preference) goes to a100-0 (first node on ties), then the H100-preferring pods fill h100-0 and
  // only the third spills to the A100.
  Pod filler = make_pod("filler", 1000, 1024, 2, 1000);
  const std::vector<NodeId> got = place_all(nodes, {filler, prefers_h100("p1", 4), prefers_h100("p2", 4), prefers_h100("p3", 4)}, "bestfit");
  EXPECT_EQ(got, (std::vector<NodeId>{0, 1, 1, 0}));
}

TEST(NodePreference, PreferNoScheduleTaintAvoidedWhileAnotherNodeFits) {
  std::vector<Node> nodes = {labelled("spot-0", "NVIDIA-A100-SXM4-80GB", 2), labelled("od-0", "NVIDIA-A100-SXM4-80GB", 2)};
  nodes[0].taints = {{"capacity-type", "spot", "PreferNoSchedule"}};
  const std::vector<Pod> pods = {make_pod("a", 100, 100, 1, 1000), make_pod("b", 100, 100, 1, 1000), make_pod("c", 100, 100, 1, 1000)};
  for (const char* policy : {"bestfit", "gpufleet", "leastallocated"}) {
    SCOPED_TRACE(policy);
    EXPECT_EQ(place_all(nodes, pods, policy), (std::vector<NodeId>{1, 1, 0}));
  }
}

}  // namespace
}  // namespace gpufleet
