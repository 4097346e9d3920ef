// The KV-cache blocks of one replica (vLLM V1's BlockPool, vllm/v1/core/block_pool.py; its free queue
// is FreeKVCacheBlockQueue; docs.vllm.ai design/prefix_caching).
//
//  - num_blocks blocks; a block is held (by one request or more) or free. Without prefix caching only
//    the counts matter.
//  - With caching, the free blocks form one queue: a block freed joins its tail, allocation takes
//    from its head. A block that keeps its key (a "cached" block) can be hit again while it is free
//    (touch takes it out of the queue) until allocation reaches it at the head and evicts it: the
//    least recently freed cached block goes first.
//  - Blocks are counted, not numbered: the free uncached blocks lie in the queue as runs of a count,
//    so the queue stays a few entries long when nothing is cached. A cached block is named by a
//    CachedBlock id (>= 0) from insert until its eviction; an id is reused after that.
// Keys are the caller's (KvCacheManager: a prefix hash and the block's index). Preconditions (n <=
// num_free(), a live id) are the caller's and not checked: this is the replica engine's inner loop.
// Nothing is allocated except when a block becomes cached (its node, its entry in the key table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpufleet::inference {

class BlockPool {
 public:
  using CachedBlock = int32_t;
  static constexpr CachedBlock kNone = -1;

  /// `num_blocks` >= 0 blocks, all free; `enable_caching` keeps the free queue and the key table.
  BlockPool(int64_t num_blocks, bool enable_caching);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_free() const { return num_blocks_ - used_; }   ///< free blocks, cached ones included
  int64_t num_used() const { return used_; }                 ///< held by requests
  bool caching() const { return caching_; }

  /// get_new_blocks: takes n uncached blocks (n <= num_free()) from the queue's head, evicting the
  /// cached blocks met there (their keys are forgotten).
  void take(int64_t n) {
    used_ += n;
    if (caching_ && n > 0) take_from_queue(n);
  }
  /// Frees n uncached blocks: they join the queue's tail.
  void give(int64_t n) {
    used_ -= n;
    if (caching_ && n > 0) append_run(n);
  }
  /// get_cached_block: the cached block with `key` (held or free), or kNone.
  CachedBlock find(uint64_t key) const {
    auto it = map_.find(key);
    return it == map_.end() ? kNone : it->second;
  }
  /// Whether a cached block is free (in the queue: held by no request), so that a hit on it takes a
  /// free block.
  bool evictable(CachedBlock b) const { return nodes_[static_cast<size_t>(b)].ref == 0; }
  /// touch: a request takes a reference to a cached block (a prefix hit); a free one leaves the queue.
  void touch(CachedBlock b);
  /// A request drops its reference; at zero the block joins the queue's tail, still cached.
  void release(CachedBlock b);
  /// cache_full_blocks for one block: an uncached block a request holds becomes the cached block for
  /// `key` (held, one reference). Returns kNone, and the block stays uncached, when another block
  /// already caches `key`.
  CachedBlock insert(uint64_t key);

  /// One entry of the free queue, head first (for tests): a run of `uncached` > 0 uncached blocks, or
  /// (uncached 0) the cached block with `key`.
  struct QueueEntry {
    int64_t uncached = 0;
    uint64_t key = 0;
  };
  std::vector<QueueEntry> free_queue() const;
  /// Blocks that keep a key, held or free.
  size_t num_cached() const { return map_.size(); }

 private:
  struct Node {
    uint64_t key = 0;
    int64_t run = 0;   ///< > 0: a run of uncached free blocks; 0: one cached block
    int32_t ref = 0;
    int32_t prev = -1, next = -1;
  };

  void take_from_queue(int64_t n);
  int32_t new_node();
  void recycle(int32_t n) { spare_.push_back(n); }
  int32_t unlink(int32_t n);
  void link_tail(int32_t n);
  void append_run(int64_t count);

  int64_t num_blocks_;
  bool caching_;
  int64_t used_ = 0;
  std::vector<Node> nodes_;
  std::vector<int32_t> spare_;
  int32_t head_ = -1, tail_ = -1;
  std::unordered_map<uint64_t, CachedBlock> map_;
};

}  // namespace gpufleet::inference
