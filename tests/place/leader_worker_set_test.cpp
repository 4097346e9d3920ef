// `gpufleet place` with LeaderWorkerSets (kubernetes-sigs/lws): each group is a gang (all of its
// pods bound or none), and with the exclusive-topology annotation each group is in one domain of the
// key and no two groups share one. Expected values by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"

namespace gpufleet::place {
namespace {

std::map<std::string, std::string> node_of(const PlaceResult& r) {
  std::map<std::string, std::string> out;
  for (const Placement& p : r.placements) out[p.pod] = p.node;
  return out;
}

std::string rack_of(const std::string& node) { return node.substr(0, 6); }  // h100-a1 -> h100-a

// examples/leaderworkerset: 3 groups x 2 pods x 8 GPUs, exclusive per rack, on two racks of three
// 8-GPU nodes. Each rack holds one group (one pod per node); the third group finds one free node in
// each rack, but each rack holds another group (anti-affinity on 2 nodes, the 4 full ones lack GPUs):
// it binds no pod. Without the annotation it would run across the racks.
TEST(PlaceLeaderWorkerSet, ExampleGivesEachGroupItsOwnRackAndLeavesTheThirdPendingWhole) {
  const std::string dir = GPUFLEET_SOURCE_DIR "/examples/leaderworkerset";
  const io::PlaceInputs in = io::read_place_inputs({dir + "/cluster.yaml"}, {dir + "/lws.yaml"});
  EXPECT_TRUE(in.warnings.empty()) << in.warnings[0];
  for (const char* policy : {"gpufleet", "default-scheduler"}) {
    PlaceOptions options;
    options.policy = policy;
    const PlaceResult r = place_workload(in.input, options);
    const auto nodes = node_of(r);
    ASSERT_EQ(nodes.size(), 4u) << policy;
    EXPECT_EQ(rack_of(nodes.at("default/vllm-0")), rack_of(nodes.at("default/vllm-0-1"))) << policy;
    EXPECT_NE(nodes.at("default/vllm-0"), nodes.at("default/vllm-0-1")) << policy;
    EXPECT_EQ(rack_of(nodes.at("default/vllm-1")), rack_of(nodes.at("default/vllm-1-1"))) << policy;
    EXPECT_NE(rack_of(nodes.at("default/vllm-0")), rack_of(nodes.at("default/vllm-1"))) << policy;
    EXPECT_EQ(nodes.count("default/vllm-2"), 0u);
    EXPECT_EQ(nodes.count("default/vllm-2-1"), 0u);
    ASSERT_EQ(r.pending.size(), 1u) << policy;
    EXPECT_EQ(r.pending[0].pod, "default/vllm-2");
    EXPECT_NE(r.pending[0].reason.find("pod default/vllm-2: 0/6 nodes are available: 2 node(s) didn't match pod anti-affinity rules, 4 Insufficient nvidia.com/gpu."), std::string::npos) << r.pending[0].reason;
  }
}

// Without the annotation, two groups of two 8-GPU pods on three 8-GPU nodes: the first group takes
// two nodes; the second fits one pod only, so it binds none (no leader without its worker).
TEST(PlaceLeaderWorkerSet, AGroupThatDoesNotFitWholeBindsNoPod) {
  std::string text;
  for (const char* n : {"n1", "n2", "n3"})
    text += std::string("---\nkind: Node\nmetadata: {name: ") + n +
            "}\nstatus: {allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '8'}}\n";
  text += R"(---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: g}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: c, resources: {limits: {nvidia.com/gpu: 8}}}
)";
  const io::PlaceInputs in = io::place_inputs_from_objects(io::parse_k8s_text(text, "in.yaml"), "in.yaml");
  const PlaceResult r = place_workload(in.input, PlaceOptions{});
  const auto nodes = node_of(r);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_NE(nodes.at("default/g-0"), nodes.at("default/g-0-1"));
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/g-1");
  EXPECT_NE(r.pending[0].reason.find("pod default/g-1-1: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."), std::string::npos) << r.pending[0].reason;
}

}  // namespace
}  // namespace gpufleet::place
