// Memory-based GPU sharing (model/gpu_memory_share.h) and its accounting in ClusterState: the request
// per card, KAI's card memory, the gpu_milli a shared card counts, and memory_share_refusal's checks
// in HAMi's order. Every value is hand-computed in the comments.
#include <gtest/gtest.h>

#include "model/cluster_state.h"
#include "model/gpu_memory_share.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

GpuMemoryShare hami(int32_t cards, int64_t memory_mib, int32_t percentage, int32_t cores) {
  return {GpuMemoryScheduler::kHami, cards, memory_mib, percentage, cores, 0};
}
GpuMemoryShare kai(int64_t memory_mib, double fraction = 0, int32_t cards = 1) {
  return {GpuMemoryScheduler::kKai, cards, memory_mib, 100, 0, fraction};
}
Pod share_pod(const std::string& name, const GpuMemoryShare& r) {
  Pod p = make_pod(name, 100, 100, 0, 0);
  p.gpu_memory_share = r;
  return p;
}

TEST(GpuMemoryShare, RequestPerCard) {
  EXPECT_EQ(memory_share_request_mib(hami(1, 10000, 100, 0), 24576), 10000);  // gpumem wins
  EXPECT_EQ(memory_share_request_mib(hami(1, 0, 100, 100), 24576), 24576);    // no gpumem: the whole card
  EXPECT_EQ(memory_share_request_mib(hami(1, 0, 30, 0), 24576), 7372);        // 24576 * 30 / 100 = 7372.8
  EXPECT_EQ(memory_share_request_mib(kai(2000), 46000), 2000);
  EXPECT_EQ(memory_share_request_mib(kai(0, 0.5), 46000), 23000);
  EXPECT_EQ(memory_share_request_mib(kai(0, 0.33), 46000), 15180);            // int64(0.33 * 46000)
}

TEST(GpuMemoryShare, KaiCardMemoryFromTheLabel) {
  EXPECT_EQ(kai_gpu_memory_mib(46068), 46000);   // floored to 100 MiB
  EXPECT_EQ(kai_gpu_memory_mib(81920), 81900);
  EXPECT_EQ(kai_gpu_memory_mib(-1), 100);        // no label: DefaultGpuMemory
  EXPECT_EQ(kai_gpu_memory_mib(85899345920), 81900);  // bytes (80 GiB): 81920 MiB, floored
}

TEST(GpuMemoryShare, GpuMilliOfASharedCard) {
  EXPECT_EQ(memory_share_gpu_milli(0, 46000), 0);
  EXPECT_EQ(memory_share_gpu_milli(2000, 46000), 43);    // floor(2000000 / 46000) = 43
  EXPECT_EQ(memory_share_gpu_milli(10, 46000), 1);       // at least 1: the card is in use
  EXPECT_EQ(memory_share_gpu_milli(46000, 46000), 1000);
  EXPECT_EQ(memory_share_gpu_milli(22000, 24576), 895);  // floor(22000000 / 24576) = 895.2
}

// S18's node: one HAMi card of 24576 MiB, 10 vGPUs, 100 cores; P1 holds 1 vGPU with 10000 MiB and
// gpucores 0.
ClusterState hami_node() {
  Node v1 = make_node("v1", 16000, 65536, 1);
  v1.gpu_memory_mib = 24576;
  v1.hami = HamiDevices{10, 100};
  ClusterState s({v1});
  s.allocate(0, share_pod("p1", hami(1, 10000, 100, 0)), {.gpus = {0}});
  return s;
}

TEST(GpuMemoryShare, HamiCardChecksInOrder) {
  ClusterState s = hami_node();
  EXPECT_EQ(s.card_memory_used_mib(0, 0), 10000);
  EXPECT_EQ(s.card_share_pods(0, 0), 1);
  EXPECT_EQ(s.gpu_used_milli(0, 0), 406);  // floor(10000000 / 24576) = 406.9
  // P3: no gpumem = 24576 MiB > 14576 free.
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 0, 100, 100)), CardRefusal::kInsufficientMemory);
  // P4: 12000 <= 14576.
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 12000, 100, 0)), CardRefusal::kFits);
  // gpucores 100 on a card in use (memory fits): ExclusiveDeviceAllocateConflict.
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 1000, 100, 100)), CardRefusal::kExclusiveConflict);
  // gpucores 150 is clamped to 100: the same.
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 1000, 100, 150)), CardRefusal::kExclusiveConflict);
  // Cores: a pod with 70 then one with 40 (30 left): CardInsufficientCore; then 30 fits, and a
  // gpucores-0 pod finds every core taken.
  s.allocate(0, share_pod("c70", hami(1, 1000, 100, 70)), {.gpus = {0}});
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 1000, 100, 40)), CardRefusal::kInsufficientCore);
  s.allocate(0, share_pod("c30", hami(1, 1000, 100, 30)), {.gpus = {0}});
  EXPECT_EQ(s.card_cores_used(0, 0), 100);
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 1000, 100, 0)), CardRefusal::kComputeUnitsExhausted);
  // Releasing gives everything back.
  s.release(0, share_pod("c70", hami(1, 1000, 100, 70)));
  s.release(0, share_pod("c30", hami(1, 1000, 100, 30)));
  EXPECT_EQ(s.card_cores_used(0, 0), 0);
  EXPECT_EQ(s.card_memory_used_mib(0, 0), 10000);
  EXPECT_EQ(s.gpu_used_milli(0, 0), 406);
}

TEST(GpuMemoryShare, HamiSplitCountBoundsThePods) {
  Node v = make_node("v", 16000, 65536, 1);
  v.gpu_memory_mib = 1000;
  v.hami = HamiDevices{3, 100};
  ClusterState s({v});
  for (int i = 0; i < 3; ++i) s.allocate(0, share_pod("p" + std::to_string(i), hami(1, 100, 100, 0)), {.gpus = {0}});
  // 300 of 1000 MiB used, but 3 of 3 vGPUs taken.
  EXPECT_EQ(s.memory_share_refusal(0, 0, hami(1, 100, 100, 0)), CardRefusal::kTimeSlicingExhausted);
  EXPECT_THROW(s.allocate(0, share_pod("p3", hami(1, 100, 100, 0)), {.gpus = {0}}), InvariantViolation);
}

TEST(GpuMemoryShare, HardLimitIsAnInvariant) {
  ClusterState s = hami_node();
  // 15000 > 14576 free: allocate refuses whatever the caller asks, state unchanged.
  EXPECT_THROW(s.allocate(0, share_pod("big", hami(1, 15000, 100, 0)), {.gpus = {0}}), InvariantViolation);
  EXPECT_EQ(s.card_memory_used_mib(0, 0), 10000);
  // Two vGPUs on one card: the same card twice is refused, and the node has one card.
  EXPECT_THROW(s.allocate(0, share_pod("two", hami(2, 100, 100, 0)), {.gpus = {0, 0}}), InvariantViolation);
  // A KAI pod on a HAMi node is refused.
  EXPECT_THROW(s.allocate(0, share_pod("kai", kai(100)), {.gpus = {0}}), InvariantViolation);
}

TEST(GpuMemoryShare, KaiCardsAndWholeGpus) {
  // Two L40S cards of 46000 MiB (the label 46068 floored).
  Node k = make_node("k", 32000, 131072, 2, "L40S");
  k.gpu_memory_mib = 46000;
  ClusterState s({k});
  s.allocate(0, make_pod("whole", 100, 100, 1, 1000), {.gpus = {1}});  // a device-plugin pod on GPU 1
  EXPECT_EQ(s.memory_share_refusal(0, 1, kai(100)), CardRefusal::kNotShareable);
  for (int i = 0; i < 23; ++i) s.allocate(0, share_pod("n" + std::to_string(i), kai(2000)), {.gpus = {0}});
  EXPECT_EQ(s.card_memory_used_mib(0, 0), 46000);  // 23 x 2000
  EXPECT_EQ(s.memory_share_refusal(0, 0, kai(2000)), CardRefusal::kInsufficientMemory);
  EXPECT_EQ(s.gpu_used_milli(0, 0), 1000);
  // A card with memory-share pods is not free for a whole GPU.
  EXPECT_THROW(s.allocate(0, make_pod("whole2", 100, 100, 1, 1000), {.gpus = {0}}), InvariantViolation);
  s.release(0, share_pod("n0", kai(2000)));
  EXPECT_EQ(s.gpu_used_milli(0, 0), 956);  // floor(44000000 / 46000) = 956.5
  // 2000 MiB free: a fraction 0.05 asks int64(0.05 * 46000) = 2300, 0.04 asks 1840.
  EXPECT_EQ(s.memory_share_refusal(0, 0, kai(0, 0.05)), CardRefusal::kInsufficientMemory);
  EXPECT_EQ(s.memory_share_refusal(0, 0, kai(0, 0.04)), CardRefusal::kFits);
}

TEST(GpuMemoryShare, ForkDiscardRestoresTheCards) {
  ClusterState s = hami_node();
  {
    auto fork = s.fork();
    s.allocate(0, share_pod("p4", hami(1, 12000, 100, 0)), {.gpus = {0}});
    EXPECT_EQ(s.card_memory_used_mib(0, 0), 22000);
    s.release(0, share_pod("p1", hami(1, 10000, 100, 0)));
    EXPECT_EQ(s.card_memory_used_mib(0, 0), 12000);
    fork.discard();
  }
  EXPECT_EQ(s.card_memory_used_mib(0, 0), 10000);
  EXPECT_EQ(s.card_share_pods(0, 0), 1);
  EXPECT_EQ(s.gpu_used_milli(0, 0), 406);
}

}  // namespace
}  // namespace gpufleet
