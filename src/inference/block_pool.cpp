// The free-block queue and the key table (block_pool.h).
#include "inference/block_pool.h"

#include <algorithm>

namespace gpufleet::inference {

BlockPool::BlockPool(int64_t num_blocks, bool enable_caching) : num_blocks_(num_blocks), caching_(enable_caching) {
  if (caching_ && num_blocks_ > 0) append_run(num_blocks_);
}

void BlockPool::take_from_queue(int64_t n) {
  while (n > 0) {
    Node& h = nodes_[static_cast<size_t>(head_)];
    if (h.run > 0) {
      const int64_t k = std::min(h.run, n);
      h.run -= k;
      n -= k;
      if (h.run == 0) recycle(unlink(head_));
    } else {  // a cached block nobody holds: evicted
      map_.erase(h.key);
      recycle(unlink(head_));
      --n;
    }
  }
}

void BlockPool::touch(CachedBlock b) {
  Node& x = nodes_[static_cast<size_t>(b)];
  if (x.ref++ == 0) {
    unlink(b);
    ++used_;
  }
}

void BlockPool::release(CachedBlock b) {
  if (--nodes_[static_cast<size_t>(b)].ref == 0) {
    --used_;
    link_tail(b);
  }
}

BlockPool::CachedBlock BlockPool::insert(uint64_t key) {
  auto [it, fresh] = map_.try_emplace(key, kNone);
  if (!fresh) return kNone;
  const int32_t n = new_node();
  Node& x = nodes_[static_cast<size_t>(n)];
  x.key = key;
  x.run = 0;
  x.ref = 1;
  it->second = n;
  return n;
}

std::vector<BlockPool::QueueEntry> BlockPool::free_queue() const {
  std::vector<QueueEntry> out;
  for (int32_t n = head_; n >= 0; n = nodes_[static_cast<size_t>(n)].next) {
    const Node& x = nodes_[static_cast<size_t>(n)];
    out.push_back(x.run > 0 ? QueueEntry{x.run, 0} : QueueEntry{0, x.key});
  }
  return out;
}

int32_t BlockPool::new_node() {
  if (!spare_.empty()) {
    const int32_t n = spare_.back();
    spare_.pop_back();
    return n;
  }
  nodes_.emplace_back();
  return static_cast<int32_t>(nodes_.size() - 1);
}

int32_t BlockPool::unlink(int32_t n) {
  Node& x = nodes_[static_cast<size_t>(n)];
  if (x.prev >= 0) nodes_[static_cast<size_t>(x.prev)].next = x.next; else head_ = x.next;
  if (x.next >= 0) nodes_[static_cast<size_t>(x.next)].prev = x.prev; else tail_ = x.prev;
  x.prev = x.next = -1;
  return n;
}

void BlockPool::link_tail(int32_t n) {
  nodes_[static_cast<size_t>(n)].prev = tail_;
  nodes_[static_cast<size_t>(n)].next = -1;
  if (tail_ >= 0) nodes_[static_cast<size_t>(tail_)].next = n; else head_ = n;
  tail_ = n;
}

void BlockPool::append_run(int64_t count) {
  if (tail_ >= 0 && nodes_[static_cast<size_t>(tail_)].run > 0) {
    nodes_[static_cast<size_t>(tail_)].run += count;
    return;
  }
  const int32_t n = new_node();
  nodes_[static_cast<size_t>(n)].run = count;
  nodes_[static_cast<size_t>(n)].ref = 0;
  link_tail(n);
}

}  // namespace gpufleet::inference
