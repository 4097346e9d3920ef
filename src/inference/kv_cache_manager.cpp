// Blocks per request, prefix hits and caching at allocation (kv_cache_manager.h).
#include "inference/kv_cache_manager.h"

#include <algorithm>

namespace gpufleet::inference {

KvCacheManager::KvCacheManager(int32_t block_size, int64_t num_blocks, bool enable_prefix_caching)
    : block_size_(block_size), pool_(num_blocks, enable_prefix_caching) {
  if (block_size > 0 && (block_size & (block_size - 1)) == 0) {
    block_shift_ = 0;
    while ((1 << block_shift_) < block_size) ++block_shift_;
  }
}

RequestBlocks KvCacheManager::new_request(const Request& request) const {
  RequestBlocks b;
  if (pool_.caching() && !request.prefix_hashes.empty() && request.prefix_block_tokens > 0) {
    const int64_t covered = std::min<int64_t>(request.prompt_tokens,
                                              static_cast<int64_t>(request.prefix_hashes.size()) * request.prefix_block_tokens);
    b.cacheable_blocks = static_cast<int32_t>(covered / block_size_);
  }
  return b;
}

uint64_t KvCacheManager::block_key(const Request& request, int32_t block) const {
  const int64_t last_token = static_cast<int64_t>(block + 1) * block_size_ - 1;
  const uint32_t h = request.prefix_hashes[static_cast<size_t>(last_token / request.prefix_block_tokens)];
  return (static_cast<uint64_t>(h) << 32) | static_cast<uint32_t>(block);
}

PrefixHit KvCacheManager::find_cached_prefix(const Request& request, const RequestBlocks& b, int32_t num_tokens) const {
  PrefixHit hit;
  if (!pool_.caching() || b.cacheable_blocks <= 0) return hit;
  const int32_t cap = std::min(b.cacheable_blocks, (num_tokens - 1) / block_size_);
  for (; hit.blocks < cap; ++hit.blocks) {
    const BlockPool::CachedBlock c = pool_.find(block_key(request, hit.blocks));
    if (c == BlockPool::kNone) break;
    if (pool_.evictable(c)) ++hit.evictable;
  }
  return hit;
}

bool KvCacheManager::allocate_slots(const Request& request, RequestBlocks& b, int32_t tokens, const PrefixHit& hit) {
  const int64_t need = blocks_for(tokens) - hit.blocks + hit.evictable;
  if (need > pool_.num_free()) return false;
  for (int32_t j = 0; j < hit.blocks; ++j) {
    const BlockPool::CachedBlock c = pool_.find(block_key(request, j));
    pool_.touch(c);
    b.cached.push_back(c);
  }
  b.blocks = hit.blocks;
  b.hashed = hit.blocks;
  grow(request, b, tokens);
  return true;
}

void KvCacheManager::cache_full_blocks(const Request& request, RequestBlocks& b, int32_t tokens) {
  const int32_t full = std::min(b.cacheable_blocks, tokens / block_size_);
  for (; b.hashed < full; ++b.hashed) {
    const BlockPool::CachedBlock c = pool_.insert(block_key(request, b.hashed));
    if (c != BlockPool::kNone) b.cached.push_back(c);
  }
}

void KvCacheManager::free(RequestBlocks& b) {
  pool_.give(b.blocks - static_cast<int64_t>(b.cached.size()));
  for (auto it = b.cached.rbegin(); it != b.cached.rend(); ++it) pool_.release(*it);
  b.cached.clear();
  b.blocks = 0;
  b.hashed = 0;
}

}  // namespace gpufleet::inference
