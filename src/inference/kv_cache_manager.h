// The KV-cache manager of one replica (vLLM V1's KVCacheManager, vllm/v1/core/kv_cache_manager.py at
// 003df29, on a BlockPool): which blocks hold each request's computed tokens, and with prefix caching
// which of a request's prompt blocks it finds cached and which it offers to the cache.
//
//  - Blocks of block_size tokens, allocated for the tokens a step schedules (allocate_slots): a
//    request with `tokens` tokens in the cache holds ceil(tokens / block_size) blocks; free returns
//    them, the request's last block first, to the free queue's tail (KVCacheManager.free).
//  - Prefix caching (docs.vllm.ai design/prefix_caching): a full block of prompt tokens is identified
//    by its prefix hash chain, Request::prefix_hashes expanded to block_size blocks (key: the hash
//    covering the block's last token and the block's index). A request admitted from waiting skips
//    the leading blocks already cached (get_computed_blocks), but a fully cached prompt still
//    computes its last block: hits stop at (num_tokens - 1) / block_size blocks. Blocks are cached
//    when allocated, so a request admitted later in the same step can hit them. Freed blocks keep
//    their hash and are evicted least recently used when a free block is needed (BlockPool).
//  - Where this differs from vLLM: only the full prompt blocks covered by Request::prefix_hashes can
//    hit (output blocks never do); a block whose key is already cached stays uncached (vLLM keeps
//    duplicates under one hash).
//  - prefix_cache_queries/hits (vllm:prefix_cache_queries, vllm:prefix_cache_hits): tokens, as the
//    scheduler reports them (count_prefix_query); with prefix caching off both stay 0.
// Each request's record (RequestBlocks) is kept by the caller beside its request (vLLM's
// req_to_blocks), so that a request is one record. Units: tokens and blocks. No call throws; the
// preconditions stated are the caller's.
#pragma once

#include <cstdint>
#include <vector>

#include "inference/block_pool.h"
#include "inference/request.h"

namespace gpufleet::inference {

/// The blocks one request holds.
struct RequestBlocks {
  int32_t blocks = 0;            ///< held, cached ones included
  int32_t cacheable_blocks = 0;  ///< leading full prompt blocks with a prefix hash (0 without caching)
  int32_t hashed = 0;            ///< of those, how many it has looked up or offered to the cache
  std::vector<BlockPool::CachedBlock> cached;  ///< the cached blocks it holds, in block order
};

/// A waiting request's cached prefix (get_computed_blocks).
struct PrefixHit {
  int32_t blocks = 0;      ///< leading blocks found cached
  int32_t evictable = 0;   ///< of those, how many are free (a hit on them takes a free block)
};

class KvCacheManager {
 public:
  /// `block_size` > 0 tokens, `num_blocks` >= 0 (KvCacheBudget::num_blocks).
  KvCacheManager(int32_t block_size, int64_t num_blocks, bool enable_prefix_caching);

  int32_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return pool_.num_blocks(); }
  int64_t num_free_blocks() const { return pool_.num_free(); }
  int64_t num_used_blocks() const { return pool_.num_used(); }
  /// Blocks held / num_blocks, 0..1 (vllm:kv_cache_usage_perc).
  double usage() const { return static_cast<double>(pool_.num_used()) / static_cast<double>(pool_.num_blocks()); }
  bool caching() const { return pool_.caching(); }
  const BlockPool& pool() const { return pool_; }
  /// ceil(tokens / block_size).
  int64_t blocks_for(int64_t tokens) const {
    const int64_t t = tokens + block_size_ - 1;
    // A shift for a power-of-two block size (the same quotient for t >= 0; the inner loop's division).
    return block_shift_ >= 0 && t >= 0 ? t >> block_shift_ : t / block_size_;
  }

  /// A new request's record: how many of its prompt blocks can be cached.
  RequestBlocks new_request(const Request& request) const;
  /// get_computed_blocks for a request about to be admitted with `num_tokens` tokens to hold (prompt
  /// and the outputs to recompute): its leading cached blocks. None without caching.
  PrefixHit find_cached_prefix(const Request& request, const RequestBlocks& b, int32_t num_tokens) const;
  /// allocate_slots: grows a request's blocks to hold `tokens` tokens and caches its prompt blocks
  /// that became full. False, and nothing changes, when the pool lacks the blocks.
  bool allocate_slots(const Request& request, RequestBlocks& b, int32_t tokens) {
    const int64_t need = blocks_for(tokens) - b.blocks;
    if (need > pool_.num_free()) return false;
    grow(request, b, tokens);
    return true;
  }
  /// allocate_slots for a request admitted from waiting (holding nothing) with the cached prefix `hit`
  /// and `tokens` tokens in all (the hit's included): it takes a reference to each hit block, then
  /// the new blocks. False, and nothing changes, when the pool lacks the blocks (a free hit block
  /// counts as one taken).
  bool allocate_slots(const Request& request, RequestBlocks& b, int32_t tokens, const PrefixHit& hit);
  /// free: returns every block the request holds, its last block first.
  void free(RequestBlocks& b);
  /// Counts a prefix-cache lookup of `queries` tokens of which `hits` were found (nothing without caching).
  void count_prefix_query(int64_t queries, int64_t hits) {
    if (!pool_.caching()) return;
    prefix_queries_ += queries;
    prefix_hits_ += hits;
  }
  int64_t prefix_cache_queries() const { return prefix_queries_; }
  int64_t prefix_cache_hits() const { return prefix_hits_; }

  // Steps counted in bulk (the scheduler's pure-decode fast path): only decoding requests, whose
  // prompt blocks are all offered already, grow, by one token a step.
  /// Takes `n` <= num_free_blocks() blocks for several requests at once.
  void take_blocks(int64_t n) { pool_.take(n); }
  /// The request's record catches up: it holds the blocks for `tokens` tokens (taken by take_blocks).
  void set_held(RequestBlocks& b, int64_t tokens) const { b.blocks = static_cast<int32_t>(blocks_for(tokens)); }

 private:
  uint64_t block_key(const Request& request, int32_t block) const;
  /// Grows to `tokens` (the blocks are free), then caches the prompt blocks that became full.
  void grow(const Request& request, RequestBlocks& b, int32_t tokens) {
    const auto need = static_cast<int32_t>(blocks_for(tokens));
    if (need > b.blocks) {
      pool_.take(need - b.blocks);
      b.blocks = need;
    }
    if (pool_.caching() && b.hashed < b.cacheable_blocks) cache_full_blocks(request, b, tokens);
  }
  void cache_full_blocks(const Request& request, RequestBlocks& b, int32_t tokens);

  int32_t block_size_;
  int32_t block_shift_ = -1;  // log2(block_size) when a power of two, else -1
  BlockPool pool_;
  int64_t prefix_queries_ = 0, prefix_hits_ = 0;
};

}  // namespace gpufleet::inference
