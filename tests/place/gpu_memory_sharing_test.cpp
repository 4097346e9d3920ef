// Memory-based GPU sharing in `place` (model/gpu_memory_share.h, sched/plugins/gpu_memory_share_fit.h):
// scenarios S18 (HAMi vGPUs on a one-card node; Project-HAMi/HAMi#1173, #620) and S19 (KAI-Scheduler
// gpu-memory over-commit; kai-scheduler/KAI-Scheduler#416) of ../shared/scenarios/
// workload-kinds-and-sharing.md, on the examples in examples/gpu-memory-sharing/, and the filter's
// reasons. Values are hand-computed in the comments.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "report/place_output.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/node_resources_fit.h"
#include "sim/rules/cost.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "gpu-memory-sharing" / name).string();
}

place::PlaceResult place_examples(const std::string& cluster, const std::string& workload) {
  const io::PlaceInputs in = io::read_place_inputs({example(cluster)}, {example(workload)});
  place::PlaceOptions options;
  options.policy = "gpufleet";
  return place::place_workload(in.input, options);
}

const place::Placement* find(const place::PlaceResult& r, const std::string& pod) {
  for (const place::Placement& p : r.placements)
    if (p.pod == pod) return &p;
  return nullptr;
}

// S18: v1 has one 24576 MiB card in 10 vGPUs; P1 holds 10000 MiB. P2 (2 vGPUs) cannot: one card
// (NodeInsufficientDevice); P3 (no gpumem = 24576 MiB) cannot: 14576 free; P4 (12000) binds; P5 (30%
// = 7372 MiB) then finds 2576 free.
TEST(GpuMemorySharing, S18HamiVgpusOnAOneCardNode) {
  const place::PlaceResult r = place_examples("hami-cluster.yaml", "hami-workload.yaml");
  ASSERT_EQ(r.placements.size(), 2u);
  const place::Placement* p4 = find(r, "dev/p4");
  ASSERT_NE(p4, nullptr);
  EXPECT_EQ(p4->node, "v1");
  EXPECT_EQ(p4->gpus, std::vector<int32_t>{0});
  ASSERT_TRUE(p4->gpu_memory);
  EXPECT_EQ(p4->gpu_memory->scheduler, "HAMi");
  EXPECT_EQ(p4->gpu_memory->memory_mib, 12000);
  EXPECT_EQ(p4->gpu_memory->cores_percentage, 0);
  ASSERT_EQ(r.pending.size(), 3u);
  EXPECT_EQ(r.pending[0].pod, "dev/p2");
  EXPECT_NE(r.pending[0].reason.find("1 node(s) have fewer GPUs than the pod asks vGPUs (NodeInsufficientDevice)"), std::string::npos)
      << r.pending[0].reason;
  EXPECT_EQ(r.pending[1].pod, "dev/p3");
  EXPECT_NE(r.pending[1].reason.find("(CardInsufficientMemory)"), std::string::npos) << r.pending[1].reason;
  EXPECT_EQ(r.pending[2].pod, "dev/p5");
  EXPECT_NE(r.pending[2].reason.find("(CardInsufficientMemory)"), std::string::npos) << r.pending[2].reason;
  // 22000 of 24576 MiB: floor(1000 * 22000 / 24576) = 895 gpu_milli.
  EXPECT_EQ(r.gpu_used_milli, 895);
  const std::string json = io::place_result_json(r, {}, {});
  EXPECT_NE(json.find("\"memory_mib_per_gpu\": 12000"), std::string::npos);
}

// One HAMi node: an A10 (24,576 MiB, 100 cores) split into 10 vGPUs, as HAMi's device plugin registers it.
const std::string kHamiA10Node = R"(kind: Node
metadata:
  name: v1
  annotations:
    hami.io/node-nvidia-register: 'GPU-0,10,24576,100,NVIDIA-A10,0,true:'
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "10"}
---
)";

// S18 without P1: P3 (the whole card, gpucores 100) binds; then P4 finds no memory.
TEST(GpuMemorySharing, S18WholeCardWhenNoMemoryIsGiven) {
  io::K8sObjects k = io::parse_k8s_text(kHamiA10Node + R"(kind: Pod
metadata: {name: p3}
spec:
  schedulerName: hami-scheduler
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
---
kind: Pod
metadata: {name: p4}
spec:
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 12000}}}]
)",
                                        "s.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  EXPECT_EQ(k.nodes[0].gpu_count, 1);  // one card, not the 10 vGPUs advertised
  EXPECT_EQ(k.nodes[0].gpu_memory_mib, 24576);
  ASSERT_TRUE(k.nodes[0].hami);
  EXPECT_EQ(k.nodes[0].hami->split_count, 10);
  ASSERT_TRUE(k.pods[0].gpu_memory_share);
  EXPECT_EQ(k.pods[0].gpu_memory_share->cores_percentage, 100);  // defaultExclusiveCoreIfNeeded
  EXPECT_EQ(k.pods[0].num_gpu, 0);
  const io::PlaceInputs in = io::place_inputs_from_objects(std::move(k), "s.yaml");
  place::PlaceOptions options;
  options.policy = "gpufleet";
  const place::PlaceResult r = place::place_workload(in.input, options);
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "default/p3");
  EXPECT_EQ(r.placements[0].gpu_memory->memory_mib, 24576);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_NE(r.pending[0].reason.find("(CardInsufficientMemory)"), std::string::npos) << r.pending[0].reason;
}

// Two pods alike in everything but their GPU memory: the one that does not fit the card must not
// decide for the one that does (the Scheduler's filter memo keys on the memory-share request too).
TEST(GpuMemorySharing, MemoryRequestIsPartOfTheFilterMemo) {
  io::K8sObjects k = io::parse_k8s_text(kHamiA10Node + R"(kind: Pod
metadata: {name: too-big}
spec:
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 30000}}}]
---
kind: Pod
metadata: {name: fits}
spec:
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 10000}}}]
)",
                                        "s.yaml");
  const io::PlaceInputs in = io::place_inputs_from_objects(std::move(k), "s.yaml");
  place::PlaceOptions options;
  options.policy = "gpufleet";
  const place::PlaceResult r = place::place_workload(in.input, options);
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "default/fits");
  EXPECT_EQ(r.placements[0].gpu_memory->memory_mib, 10000);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/too-big");
}

// S19, all 24 pods in one run: 23 x 2000 = 46000 MiB fit the L40S's 46068 MiB floored to 46000;
// the 24th would make 48000.
TEST(GpuMemorySharing, S19KaiAllInOneCycle) {
  const place::PlaceResult r = place_examples("kai-cluster.yaml", "kai-workload.yaml");
  EXPECT_EQ(r.placements.size(), 23u);
  for (const place::Placement& p : r.placements) {
    EXPECT_EQ(p.gpus, std::vector<int32_t>{0});
    ASSERT_TRUE(p.gpu_memory);
    EXPECT_EQ(p.gpu_memory->memory_mib, 2000);
  }
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "research/notebook-23");
  EXPECT_NE(r.pending[0].reason.find("1 node(s) didn't have enough resources: GPU memory"), std::string::npos) << r.pending[0].reason;
  EXPECT_EQ(r.gpu_used_milli, 1000);
}

// S19, sequentially: each pod arrives alone, the ones before it running (spec.nodeName). Each run
// places the new pod while the card has 2000 MiB free: 23 bind, the 24th stays pending.
TEST(GpuMemorySharing, S19KaiOneByOne) {
  const std::string node = R"(kind: Node
metadata:
  name: k1
  labels: {nvidia.com/gpu.memory: "46068"}
status:
  allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "1"}
)";
  auto pod = [](int i, bool bound) {
    return "---\nkind: Pod\nmetadata:\n  name: n" + std::to_string(i) + "\n  annotations: {gpu-memory: \"2000\"}\nspec:\n" +
           (bound ? std::string("  nodeName: k1\n") : std::string()) + "  schedulerName: kai-scheduler\n  containers: [{name: c}]\n";
  };
  int bound = 0;
  for (int i = 0; i < 24; ++i) {
    std::string text = node;
    for (int j = 0; j < bound; ++j) text += pod(j, true);
    text += pod(i, false);
    const io::PlaceInputs in = io::place_inputs_from_objects(io::parse_k8s_text(text, "s.yaml"), "s.yaml");
    place::PlaceOptions options;
    options.policy = "gpufleet";
    const place::PlaceResult r = place::place_workload(in.input, options);
    ASSERT_EQ(r.placements.size(), static_cast<size_t>(bound) + (i < 23 ? 1 : 0)) << i;
    if (i < 23) {
      ++bound;
    } else {
      ASSERT_EQ(r.pending.size(), 1u);
      EXPECT_NE(r.pending[0].reason.find("didn't have enough resources: GPU memory"), std::string::npos);
    }
  }
  EXPECT_EQ(bound, 23);
}

// The filter's reasons on hand-made nodes: a HAMi pod on a plain node, a KAI pod on a HAMi node,
// AllocatedCardsInsufficientRequest (2 vGPUs, one card fits), and fits() agreeing with the filter.
TEST(GpuMemoryShareFit, ReasonsPerNode) {
  using sched::GpuMemoryShareFit;
  Node plain = testing::make_node("plain", 8000, 16384, 2);
  plain.gpu_memory_mib = 16000;
  Node h = testing::make_node("h", 8000, 16384, 2);
  h.gpu_memory_mib = 1000;
  h.hami = HamiDevices{10, 100};
  ClusterState s({plain, h});
  Pod big = testing::make_pod("big", 100, 100, 0, 0);
  big.gpu_memory_share = GpuMemoryShare{GpuMemoryScheduler::kHami, 1, 900, 100, 0, 0};
  s.allocate(1, big, {.gpus = {0}});  // card 0 of h: 100 MiB left
  Pod two = testing::make_pod("two", 100, 100, 0, 0);
  two.gpu_memory_share = GpuMemoryShare{GpuMemoryScheduler::kHami, 2, 500, 100, 0, 0};
  EXPECT_EQ(sched::gpu_memory_share_fits(two, s, 0), GpuMemoryShareFit::kNoHamiDevices);
  EXPECT_EQ(sched::gpu_memory_share_fits(two, s, 1), GpuMemoryShareFit::kAllocatedCardsInsufficientRequest);
  Pod one = two;
  one.gpu_memory_share->cards = 1;
  EXPECT_EQ(sched::gpu_memory_share_fits(one, s, 1), sched::FilterCode::kFits);
  Pod kai = testing::make_pod("kai", 100, 100, 0, 0);
  kai.gpu_memory_share = GpuMemoryShare{GpuMemoryScheduler::kKai, 1, 20000, 100, 0, 0};
  EXPECT_EQ(sched::gpu_memory_share_fits(kai, s, 1), GpuMemoryShareFit::kKaiInsufficientGpus);
  EXPECT_EQ(sched::gpu_memory_share_fits(kai, s, 0), GpuMemoryShareFit::kKaiInsufficientGpuMemory);  // 20000 > 16000
  EXPECT_EQ(sched::fits(kai, s, 0), GpuMemoryShareFit::kKaiInsufficientGpuMemory);
  kai.gpu_memory_share->memory_mib = 16000;
  EXPECT_EQ(sched::fits(kai, s, 0), sched::FilterCode::kFits);
  // A pod without a memory share passes.
  EXPECT_EQ(sched::gpu_memory_share_fits(testing::make_pod("p", 1, 1, 1, 1000), s, 1), sched::FilterCode::kFits);
}

// Node pools: a pool node's card memory is the catalog model's as KAI counts it (L40S 46068 -> 46000
// MiB), so KAI pods fit there; chargeback charges a memory-share pod its memory over the card's
// (2000 / 46000 = 1/23 of a GPU per card, two cards 2/23).
TEST(GpuMemorySharing, PoolNodesAndChargebackByMemory) {
  NodePool pool;
  pool.name = "l40s";
  pool.gpu_model = "L40S";
  pool.gpus_per_node = 4;
  pool.cpu_milli = 32000;
  pool.memory_bytes = int64_t{128} << 30;
  pool.node_count = 1;
  pool.max_nodes = 1;
  const std::vector<Node> nodes = expand_pool(pool);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gpu_memory_mib, 46000);
  Pod p = testing::make_pod("p", 100, 100, 0, 0);
  p.gpu_memory_share = GpuMemoryShare{GpuMemoryScheduler::kKai, 1, 2000, 100, 0, 0};
  EXPECT_DOUBLE_EQ(sim::pod_gpus_held(pool, p), 2000.0 / 46000);
  p.gpu_memory_share->cards = 2;
  EXPECT_DOUBLE_EQ(sim::pod_gpus_held(pool, p), 2 * 2000.0 / 46000);
  p.gpu_memory_share = GpuMemoryShare{GpuMemoryScheduler::kKai, 1, 0, 100, 0, 0.5};
  EXPECT_DOUBLE_EQ(sim::pod_gpus_held(pool, p), 0.5);  // int64(0.5 * 46000) = 23000
  ClusterState s(nodes);
  EXPECT_EQ(sched::fits(p, s, 0), sched::FilterCode::kFits);
}

}  // namespace
}  // namespace gpufleet
