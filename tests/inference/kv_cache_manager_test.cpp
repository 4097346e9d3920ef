// The KV-cache manager (src/inference/kv_cache_manager.h): blocks per request, allocation that fails
// without side effects, prefix hits that leave the last block to compute, caching at allocation and
// the order in which a request's blocks are freed. Expected values are worked out by hand beside them.
#include <gtest/gtest.h>

#include <vector>

#include "inference/kv_cache_manager.h"

namespace gpufleet::inference {
namespace {

Request req(int32_t prompt, std::vector<uint32_t> hashes = {}, int32_t hash_tokens = 8) {
  Request r;
  r.prompt_tokens = prompt;
  r.output_tokens = 4;
  r.prefix_hashes = std::move(hashes);
  r.prefix_block_tokens = hash_tokens;
  return r;
}

uint64_t key(uint32_t hash, uint32_t block) { return (static_cast<uint64_t>(hash) << 32) | block; }

// Blocks of 4 tokens, 3 blocks, no caching: 12 tokens take all 3; one more token for another request
// cannot be allocated, and nothing changes.
TEST(KvCacheManager, AllocatesCeilOfTokensAndRefusesWithoutChange) {
  KvCacheManager kv(4, 3, false);
  const Request r = req(12);
  RequestBlocks a = kv.new_request(r);
  EXPECT_EQ(a.cacheable_blocks, 0);  // no caching
  ASSERT_TRUE(kv.allocate_slots(r, a, 5));
  EXPECT_EQ(a.blocks, 2);  // ceil(5 / 4)
  ASSERT_TRUE(kv.allocate_slots(r, a, 12));
  EXPECT_EQ(a.blocks, 3);
  EXPECT_DOUBLE_EQ(kv.usage(), 1.0);
  RequestBlocks b = kv.new_request(r);
  EXPECT_FALSE(kv.allocate_slots(r, b, 1));
  EXPECT_EQ(b.blocks, 0);
  EXPECT_EQ(kv.num_used_blocks(), 3);
  kv.free(a);
  EXPECT_EQ(a.blocks, 0);
  EXPECT_EQ(kv.num_free_blocks(), 3);
  kv.count_prefix_query(12, 4);  // counted only with caching
  EXPECT_EQ(kv.prefix_cache_queries(), 0);
}

// Blocks of 4 tokens, 10 blocks, caching; each prefix hash covers 8 tokens (2 blocks).
//  R: prompt 12, hashes {7, 9}: 3 cacheable blocks, keys (7,0) (7,1) (9,2) (block 2's last token,
//     11, is in hash 11 / 8 = 1). Allocated 8 then 12 tokens: cached as they fill. Freed last block
//     first: queue [7 uncached, (9,2), (7,1), (7,0)].
//  S: prompt 14, same hashes: the 3 blocks hit (cap (14 - 1) / 4 = 3), all free (evictable); 14
//     tokens need 4 blocks: 3 hits + 1 new, 4 free blocks counted. Queue after: [6 uncached].
//  T: prompt 12, same hashes, while S holds them: hits stop at (12 - 1) / 4 = 2 blocks (the last
//     block is computed), none free.
TEST(KvCacheManager, PrefixHitsCachingAtAllocationAndFreeOrder) {
  KvCacheManager kv(4, 10, true);
  const Request r = req(12, {7, 9});
  RequestBlocks a = kv.new_request(r);
  EXPECT_EQ(a.cacheable_blocks, 3);
  EXPECT_EQ(kv.find_cached_prefix(r, a, 12).blocks, 0);
  ASSERT_TRUE(kv.allocate_slots(r, a, 8));
  EXPECT_EQ(a.hashed, 2);
  EXPECT_EQ(a.cached.size(), 2u);
  ASSERT_TRUE(kv.allocate_slots(r, a, 12));
  EXPECT_EQ(a.blocks, 3);
  EXPECT_EQ(a.cached.size(), 3u);
  EXPECT_EQ(kv.pool().find(key(9, 2)), a.cached[2]);
  EXPECT_EQ(kv.pool().find(key(7, 1)), a.cached[1]);
  kv.free(a);
  EXPECT_EQ(kv.num_used_blocks(), 0);
  std::vector<uint64_t> keys;
  for (const BlockPool::QueueEntry& e : kv.pool().free_queue()) keys.push_back(e.uncached > 0 ? 1000 + e.uncached : e.key);
  EXPECT_EQ(keys, (std::vector<uint64_t>{1007, key(9, 2), key(7, 1), key(7, 0)}));

  const Request s = req(14, {7, 9});
  RequestBlocks b = kv.new_request(s);
  const PrefixHit hit = kv.find_cached_prefix(s, b, 14);
  EXPECT_EQ(hit.blocks, 3);
  EXPECT_EQ(hit.evictable, 3);
  ASSERT_TRUE(kv.allocate_slots(s, b, 14, hit));
  EXPECT_EQ(b.blocks, 4);
  EXPECT_EQ(b.hashed, 3);
  EXPECT_EQ(kv.num_used_blocks(), 4);
  ASSERT_EQ(kv.pool().free_queue().size(), 1u);
  EXPECT_EQ(kv.pool().free_queue()[0].uncached, 6);
  kv.count_prefix_query(14, 12);
  EXPECT_EQ(kv.prefix_cache_queries(), 14);
  EXPECT_EQ(kv.prefix_cache_hits(), 12);

  const Request t = req(12, {7, 9});
  RequestBlocks c = kv.new_request(t);
  const PrefixHit full = kv.find_cached_prefix(t, c, 12);
  EXPECT_EQ(full.blocks, 2);
  EXPECT_EQ(full.evictable, 0);  // held by S
}

// A hit on free cached blocks takes free blocks: with 2 blocks, one cached and free, a request that
// hits it and needs one more block fits (2 free); with the other block held it does not.
TEST(KvCacheManager, AHitOnAFreeBlockCountsAsATakenBlock) {
  KvCacheManager kv(4, 2, true);
  const Request r = req(8, {5});  // one hash of 8 tokens: 2 cacheable blocks
  RequestBlocks a = kv.new_request(r);
  ASSERT_TRUE(kv.allocate_slots(r, a, 4));  // block 0 cached as (5,0)
  kv.free(a);
  RequestBlocks other = kv.new_request(req(4));
  ASSERT_TRUE(kv.allocate_slots(req(4), other, 4));  // takes the uncached block (the queue's head)
  RequestBlocks b = kv.new_request(r);
  const PrefixHit hit = kv.find_cached_prefix(r, b, 8);
  EXPECT_EQ(hit.blocks, 1);
  EXPECT_EQ(hit.evictable, 1);
  EXPECT_FALSE(kv.allocate_slots(r, b, 8, hit));  // 2 blocks - 1 hit + 1 free hit = 2 > 1 free
  EXPECT_EQ(b.blocks, 0);
  EXPECT_TRUE(b.cached.empty());
  kv.free(other);
  EXPECT_TRUE(kv.allocate_slots(r, b, 8, hit));
  EXPECT_EQ(kv.num_used_blocks(), 2);
}

}  // namespace
}  // namespace gpufleet::inference
