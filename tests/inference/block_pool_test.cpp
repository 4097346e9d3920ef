// The KV blocks' pool (src/inference/block_pool.h): counts, the free queue's order (freed blocks at
// the tail, allocation from the head), cached blocks hit while free and evicted least recently
// freed first. Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <vector>

#include "inference/block_pool.h"

namespace gpufleet::inference {
namespace {

// The free queue as (uncached run, key) pairs, head first.
std::vector<std::pair<int64_t, uint64_t>> queue(const BlockPool& p) {
  std::vector<std::pair<int64_t, uint64_t>> out;
  for (const BlockPool::QueueEntry& e : p.free_queue()) out.emplace_back(e.uncached, e.key);
  return out;
}

using Q = std::vector<std::pair<int64_t, uint64_t>>;

TEST(BlockPool, CountsWithoutCaching) {
  BlockPool p(10, false);
  EXPECT_EQ(p.num_free(), 10);
  p.take(3);
  EXPECT_EQ(p.num_used(), 3);
  EXPECT_EQ(p.num_free(), 7);
  p.give(2);
  EXPECT_EQ(p.num_used(), 1);
  EXPECT_TRUE(p.free_queue().empty());  // without caching only counts are kept
  EXPECT_EQ(p.find(42), BlockPool::kNone);
}

TEST(BlockPool, FreedBlocksJoinTheTailAsRuns) {
  BlockPool p(4, true);
  EXPECT_EQ(queue(p), (Q{{4, 0}}));
  p.take(4);
  EXPECT_TRUE(p.free_queue().empty());
  p.give(1);
  p.give(2);  // merges with the run at the tail
  EXPECT_EQ(queue(p), (Q{{3, 0}}));
  EXPECT_EQ(p.num_used(), 1);
}

// 6 blocks. A request takes 2 and they become the cached blocks A (key 1) and B (key 2); it frees
// them last block first: queue [4 uncached, B, A]. A hit on A takes it out of the queue and back to
// the tail when released. Taking 5 blocks uses the 4 uncached ones, then evicts B (the head); one
// more evicts A.
TEST(BlockPool, CachedBlocksAreHitWhileFreeAndEvictedFromTheHead) {
  BlockPool p(6, true);
  p.take(2);
  const BlockPool::CachedBlock a = p.insert(1);
  const BlockPool::CachedBlock b = p.insert(2);
  ASSERT_NE(a, BlockPool::kNone);
  ASSERT_NE(b, BlockPool::kNone);
  EXPECT_EQ(p.insert(1), BlockPool::kNone);  // key 1 is cached already: the block stays uncached
  EXPECT_EQ(p.num_used(), 2);
  EXPECT_EQ(p.num_cached(), 2u);
  EXPECT_FALSE(p.evictable(a));
  p.release(b);
  p.release(a);
  EXPECT_EQ(p.num_used(), 0);
  EXPECT_EQ(queue(p), (Q{{4, 0}, {0, 2}, {0, 1}}));
  EXPECT_EQ(p.find(1), a);
  EXPECT_TRUE(p.evictable(a));
  p.touch(a);  // a prefix hit on a free cached block: it is held again
  EXPECT_EQ(p.num_used(), 1);
  EXPECT_EQ(queue(p), (Q{{4, 0}, {0, 2}}));
  p.touch(a);  // a second request shares it
  p.release(a);
  EXPECT_EQ(p.num_used(), 1);
  p.release(a);
  EXPECT_EQ(queue(p), (Q{{4, 0}, {0, 2}, {0, 1}}));
  p.take(5);
  EXPECT_EQ(p.num_used(), 5);
  EXPECT_EQ(p.find(2), BlockPool::kNone);  // B evicted
  EXPECT_EQ(p.find(1), a);
  EXPECT_EQ(queue(p), (Q{{0, 1}}));
  p.take(1);
  EXPECT_EQ(p.find(1), BlockPool::kNone);
  EXPECT_EQ(p.num_cached(), 0u);
  EXPECT_EQ(p.num_free(), 0);
}

}  // namespace
}  // namespace gpufleet::inference
