// The vLLM V1 scheduler at iteration granularity (replica_engine.h states the rules and sources).
//
// Layout, for speed: requests live in a slot pool reused through a free list; the waiting queue
// and the running set hold slot indices; a step's schedule is a reused vector. In steady state a
// step allocates nothing (a request copied in allocates only for its prefix hashes).
//
// KV blocks: without prefix caching only counts matter. With it, the block pool keeps vLLM's one
// free-block queue (vllm/v1/core/block_pool.py FreeKVCacheBlockQueue): blocks freed go to its
// tail, allocation takes from its head and evicts a cached block found there. Blocks no request
// can ever hit (no prefix hash: output blocks, a partial last prompt block) are held in the queue
// as runs of a count, so the queue stays a few entries long when nothing is cached.
#include "inference/replica_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace gpufleet::inference {

const char* request_status_name(RequestStatus s) {
  switch (s) {
    case RequestStatus::kFinished: return "finished";
    case RequestStatus::kTimedOut: return "timed_out";
    case RequestStatus::kDropped: return "dropped";
  }
  return "unknown";
}

namespace testing {
// The pure-decode fast path can be switched off to check that it changes nothing
// (tests/inference/replica_engine_test.cpp declares this; not part of the public interface).
bool decode_fast_path = true;
}  // namespace testing

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A step time, which must be positive and finite (else time would stand still).
double checked(double step_s) {
  if (!(step_s > 0) || !std::isfinite(step_s)) throw std::logic_error("StepTimeModel::step_seconds returned a non-positive or infinite time");
  return step_s;
}

/// KV blocks: counts, and with prefix caching the free queue and the hash -> block table.
class BlockPool {
 public:
  BlockPool(int64_t num_blocks, bool caching) : num_blocks_(num_blocks), caching_(caching) {
    if (caching_) append_run(num_blocks_);
  }

  int64_t num_free() const { return num_blocks_ - used_; }
  int64_t used() const { return used_; }
  bool caching() const { return caching_; }

  /// Takes n blocks (n <= num_free()) as uncached blocks, evicting cached blocks met at the queue head.
  void take(int64_t n) {
    used_ += n;
    if (!caching_) return;
    while (n > 0) {
      Node& h = nodes_[head_];
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
  /// Returns n uncached blocks to the queue tail.
  void give(int64_t n) {
    used_ -= n;
    if (caching_ && n > 0) append_run(n);
  }
  /// The cached block with `key`, or -1.
  int32_t find(uint64_t key) const {
    auto it = map_.find(key);
    return it == map_.end() ? -1 : it->second;
  }
  bool evictable(int32_t node) const { return nodes_[node].ref == 0; }
  /// A request takes a reference to a cached block (a prefix hit).
  void touch(int32_t node) {
    Node& b = nodes_[node];
    if (b.ref++ == 0) {
      unlink(node);
      ++used_;
    }
  }
  /// A request drops its reference; at zero the block joins the queue tail, still cached.
  void release(int32_t node) {
    if (--nodes_[node].ref == 0) {
      --used_;
      link_tail(node);
    }
  }
  /// An uncached block a request holds becomes the cached block for `key` (held, reference 1).
  /// Returns -1 (the block stays uncached) when another block already caches `key`.
  int32_t insert(uint64_t key) {
    auto [it, fresh] = map_.try_emplace(key, -1);
    if (!fresh) return -1;
    const int32_t n = new_node();
    nodes_[n].key = key;
    nodes_[n].run = 0;
    nodes_[n].ref = 1;
    it->second = n;
    return n;
  }

 private:
  struct Node {
    uint64_t key = 0;
    int64_t run = 0;   ///< > 0: a run of uncached free blocks; 0: one cached block
    int32_t ref = 0;
    int32_t prev = -1, next = -1;
  };

  int32_t new_node() {
    if (!spare_.empty()) {
      const int32_t n = spare_.back();
      spare_.pop_back();
      return n;
    }
    nodes_.emplace_back();
    return static_cast<int32_t>(nodes_.size() - 1);
  }
  void recycle(int32_t n) { spare_.push_back(n); }
  int32_t unlink(int32_t n) {
    Node& x = nodes_[n];
    if (x.prev >= 0) nodes_[x.prev].next = x.next; else head_ = x.next;
    if (x.next >= 0) nodes_[x.next].prev = x.prev; else tail_ = x.prev;
    x.prev = x.next = -1;
    return n;
  }
  void link_tail(int32_t n) {
    nodes_[n].prev = tail_;
    nodes_[n].next = -1;
    if (tail_ >= 0) nodes_[tail_].next = n; else head_ = n;
    tail_ = n;
  }
  void append_run(int64_t count) {
    if (tail_ >= 0 && nodes_[tail_].run > 0) {
      nodes_[tail_].run += count;
      return;
    }
    const int32_t n = new_node();
    nodes_[n].run = count;
    nodes_[n].ref = 0;
    link_tail(n);
  }

  int64_t num_blocks_;
  bool caching_;
  int64_t used_ = 0;
  std::vector<Node> nodes_;
  std::vector<int32_t> spare_;
  int32_t head_ = -1, tail_ = -1;
  std::unordered_map<uint64_t, int32_t> map_;
};

struct Slot {
  Request req;
  int32_t computed = 0;        ///< tokens in the KV cache (vLLM num_computed_tokens)
  int32_t generated = 0;       ///< output tokens so far
  int32_t blocks = 0;          ///< blocks held, cached ones included
  int32_t cacheable_blocks = 0;  ///< leading full prompt blocks with a prefix hash
  int32_t hashed = 0;          ///< of those, how many this request has looked up or offered to the cache
  int32_t preemptions = 0;
  int32_t cached_prompt_tokens = 0;
  double first_token_s = -1;
  bool counted_query = false;  ///< prefix-cache query counted (first admission only)
  bool decoding = false;       ///< its (re)computation is done: each step adds one token
  std::vector<int32_t> cached_nodes;  ///< cached blocks held (BlockPool nodes)

  int32_t num_tokens() const { return req.prompt_tokens + generated; }
};

struct Scheduled {
  int32_t slot;
  int32_t tokens;
};

}  // namespace

struct ReplicaEngine::Impl {
  int32_t replica_id;
  const StepTimeModel* step_time;
  EngineLimits limits;
  Observer observer;
  BlockPool pool;

  std::vector<Slot> slots;
  std::vector<int32_t> free_slots;
  std::deque<int32_t> waiting;
  std::vector<int32_t> running;   // admission order; the newest is last (the preemption victim)
  std::vector<Scheduled> sched;   // the step in progress

  bool active = false;            // a step is in progress
  double step_start = 0, step_end = 0;
  double ready_s = 0;             // when idle with work: when the next step may start
  double now = 0;
  double busy_done = 0;
  int64_t prefix_queries = 0, prefix_hits = 0;
  StepRecord record;

  // Pure-decode fast path (see try_fast_step): steps in which every running request decodes one
  // token and nothing else happens cost O(1); the requests' own counters lag by fast_steps.
  bool step_fast = false;         // the step in progress is a fast step
  bool phase_valid = false;       // the figures below describe the running set
  int32_t fast_steps = 0;         // fast steps ended since the counters were last brought up to date
  int32_t phase_min_left = 0;     // fewest output tokens left over the running set at the phase start
  int64_t phase_context = 0;      // sum of computed tokens at the phase start
  std::vector<int32_t> phase_residue;  // running requests by computed % block_size at the phase start

  Impl(int32_t id, const StepTimeModel& st, const EngineLimits& l, Observer o)
      : replica_id(id), step_time(&st), limits(l), observer(std::move(o)), pool(l.num_blocks, l.enable_prefix_caching) {}

  bool has_work() const { return !waiting.empty() || !running.empty(); }

  int32_t new_slot() {
    if (!free_slots.empty()) {
      const int32_t s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    slots.emplace_back();
    return static_cast<int32_t>(slots.size() - 1);
  }

  uint64_t block_key(const Slot& s, int32_t j) const {
    const int64_t last_token = static_cast<int64_t>(j + 1) * limits.block_size - 1;
    const uint32_t h = s.req.prefix_hashes[static_cast<size_t>(last_token / s.req.prefix_block_tokens)];
    return (static_cast<uint64_t>(h) << 32) | static_cast<uint32_t>(j);
  }

  /// Frees a request's blocks, tail first as vLLM's KVCacheManager.free does.
  void free_blocks(Slot& s) {
    const int64_t uncached = s.blocks - static_cast<int64_t>(s.cached_nodes.size());
    pool.give(uncached);
    for (auto it = s.cached_nodes.rbegin(); it != s.cached_nodes.rend(); ++it) pool.release(*it);
    s.cached_nodes.clear();
    s.blocks = 0;
    s.hashed = 0;
  }

  /// Grows a request's blocks to hold `tokens` (the caller checked the pool), then offers the
  /// prefix blocks that are full to the cache (vLLM caches at allocation: KVCacheManager.allocate_slots).
  void allocate(Slot& s, int32_t tokens) {
    const int32_t need = static_cast<int32_t>(ceil_div(tokens, limits.block_size));
    if (need > s.blocks) {
      pool.take(need - s.blocks);
      s.blocks = need;
    }
    if (pool.caching() && s.hashed < s.cacheable_blocks) {
      const int32_t full = std::min(s.cacheable_blocks, tokens / limits.block_size);
      for (; s.hashed < full; ++s.hashed) {
        const int32_t node = pool.insert(block_key(s, s.hashed));
        if (node >= 0) s.cached_nodes.push_back(node);
      }
    }
  }

  void report(Slot& s, RequestStatus status, double t) {
    if (!observer.on_outcome) return;
    RequestOutcome o;
    o.id = s.req.id;
    o.status = status;
    o.arrival_s = s.req.arrival_s;
    o.first_token_s = s.first_token_s;
    o.finish_s = t;
    o.prompt_tokens = s.req.prompt_tokens;
    o.output_tokens = s.req.output_tokens;
    o.generated_tokens = s.generated;
    o.cached_prompt_tokens = s.cached_prompt_tokens;
    o.preemptions = s.preemptions;
    o.replica = replica_id;
    observer.on_outcome(o);
  }

  void release_slot(int32_t si) {
    Slot& s = slots[si];
    s.req.prefix_hashes.clear();
    free_slots.push_back(si);
  }

  /// Preemption by recompute (Scheduler._preempt_request): blocks freed, progress reset, front of waiting.
  void preempt(int32_t si) {
    Slot& s = slots[si];
    free_blocks(s);
    s.computed = 0;
    s.decoding = false;
    ++s.preemptions;
    waiting.push_front(si);
  }

  /// Brings every running request's counters up to date after fast steps (between steps only).
  void sync() {
    phase_valid = false;
    if (fast_steps == 0) return;
    for (int32_t si : running) {
      Slot& s = slots[si];
      s.computed += fast_steps;
      s.generated += fast_steps;
      s.blocks = static_cast<int32_t>(ceil_div(s.computed, limits.block_size));
    }
    fast_steps = 0;
  }

  /// Turns a fast step in progress into an ordinary one (its schedule written out), so that a
  /// request can leave in the middle of it.
  void materialize_step() {
    if (!(active && step_fast)) return;
    sync();
    sched.clear();
    for (int32_t si : running) {
      Slot& s = slots[si];
      s.blocks = static_cast<int32_t>(ceil_div(s.computed + 1, limits.block_size));
      sched.push_back({si, 1});
    }
    step_fast = false;
  }

  /// A step in which every running request decodes, all fit the token budget, none can be admitted
  /// from waiting, the new blocks are free and none finishes at its end: the same schedule as the
  /// general path (no preemption, no admission), counted in O(1). The step that finishes a
  /// request, and any other, goes through the general path.
  bool try_fast_step(double t) {
    const int32_t b = static_cast<int32_t>(running.size());
    if (!testing::decode_fast_path || b == 0 || b > limits.max_num_batched_tokens) return false;
    if (!waiting.empty() && b < limits.max_num_seqs) return false;
    const int32_t bs = limits.block_size;
    if (!phase_valid) {
      if (fast_steps != 0) return false;
      for (int32_t si : running) {
        if (!slots[si].decoding) return false;
      }
      phase_residue.assign(static_cast<size_t>(bs), 0);
      phase_context = 0;
      phase_min_left = std::numeric_limits<int32_t>::max();
      for (int32_t si : running) {
        const Slot& s = slots[si];
        ++phase_residue[static_cast<size_t>(s.computed % bs)];
        phase_context += s.computed;
        phase_min_left = std::min(phase_min_left, s.req.output_tokens - s.generated);
      }
      phase_valid = true;
    }
    if (fast_steps + 1 >= phase_min_left) return false;
    // A request needs a new block when its computed tokens fill its blocks: (residue + f) % bs == 0.
    const int64_t need = phase_residue[static_cast<size_t>((bs - fast_steps % bs) % bs)];
    if (need > pool.num_free()) return false;
    pool.take(need);
    StepBatch& batch = record.batch;
    batch.num_seqs = b;
    batch.decode_tokens = b;
    batch.prefill_tokens = 0;
    batch.context_tokens = phase_context + static_cast<int64_t>(b) * fast_steps;
    batch.prefill_attention_token_pairs = 0;
    active = true;
    step_fast = true;
    step_start = t;
    step_end = t + checked(step_time->step_seconds(batch));
    record.start_s = t;
    record.end_s = step_end;
    record.num_running = b;
    record.num_waiting = static_cast<int32_t>(waiting.size());
    record.blocks_used = pool.used();
    record.preempted = 0;
    return true;
  }

  /// Scheduler.schedule for a step starting at t.
  void begin_step(double t) {
    if (try_fast_step(t)) return;
    sync();
    for (;;) {
      sched.clear();
      int32_t budget = limits.max_num_batched_tokens;
      int32_t preempted = 0;
      StepBatch batch;
      auto add_to_batch = [&](const Slot& s, int32_t n) {
        ++batch.num_seqs;
        batch.context_tokens += s.computed;
        if (s.decoding) {
          ++batch.decode_tokens;
        } else {
          batch.prefill_tokens += n;
          batch.prefill_attention_token_pairs += static_cast<double>(n) * (s.computed + n / 2.0);
        }
      };
      // Running requests first, in order.
      for (size_t i = 0; i < running.size() && budget > 0;) {
        const int32_t si = running[i];
        Slot& s = slots[si];
        const int32_t n = std::min(s.num_tokens() - s.computed, budget);
        const int64_t need = ceil_div(s.computed + n, limits.block_size) - s.blocks;
        bool scheduled = true;
        while (need > pool.num_free()) {
          const int32_t victim = running.back();
          running.pop_back();
          preempt(victim);
          ++preempted;
          if (victim == si) {
            scheduled = false;
            break;
          }
        }
        if (!scheduled) break;
        allocate(s, s.computed + n);
        add_to_batch(s, n);
        sched.push_back({si, n});
        budget -= n;
        ++i;
      }
      // Then waiting requests, first come first served, unless this step preempted.
      if (preempted == 0) {
        while (!waiting.empty() && budget > 0 && static_cast<int32_t>(running.size()) < limits.max_num_seqs) {
          const int32_t si = waiting.front();
          Slot& s = slots[si];
          // Prefix cache hits: leading cached blocks, leaving at least the last token to compute.
          int32_t hit_blocks = 0, evictable_hits = 0;
          if (pool.caching() && s.cacheable_blocks > 0) {
            const int32_t cap = std::min(s.cacheable_blocks, (s.num_tokens() - 1) / limits.block_size);
            for (; hit_blocks < cap; ++hit_blocks) {
              const int32_t node = pool.find(block_key(s, hit_blocks));
              if (node < 0) break;
              if (pool.evictable(node)) ++evictable_hits;
            }
          }
          const int32_t hit_tokens = hit_blocks * limits.block_size;
          const int32_t n = std::min(s.num_tokens() - hit_tokens, budget);
          const int64_t need = ceil_div(hit_tokens + n, limits.block_size) - hit_blocks + evictable_hits;
          if (need > pool.num_free()) break;
          for (int32_t j = 0; j < hit_blocks; ++j) {
            const int32_t node = pool.find(block_key(s, j));
            pool.touch(node);
            s.cached_nodes.push_back(node);
          }
          s.blocks = hit_blocks;
          s.hashed = hit_blocks;
          s.computed = hit_tokens;
          s.cached_prompt_tokens = hit_tokens;
          if (pool.caching() && !s.counted_query) {
            s.counted_query = true;
            prefix_queries += s.num_tokens();
            prefix_hits += hit_tokens;
          }
          allocate(s, hit_tokens + n);
          waiting.pop_front();
          running.push_back(si);
          add_to_batch(s, n);
          sched.push_back({si, n});
          budget -= n;
        }
      }
      record.preempted += preempted;
      if (!sched.empty()) {
        active = true;
        step_start = t;
        const double d = checked(step_time->step_seconds(batch));
        step_end = t + d;
        record.start_s = t;
        record.end_s = step_end;
        record.batch = batch;
        record.num_running = static_cast<int32_t>(running.size());
        record.num_waiting = static_cast<int32_t>(waiting.size());
        record.blocks_used = pool.used();
        return;
      }
      // Everything running was preempted: the next pass admits from waiting (the running set is empty).
      if (!has_work()) return;
    }
  }

  /// The step's outputs (Scheduler.update_from_output): tokens, first tokens, finished requests.
  void end_step() {
    const double t = step_end;
    active = false;
    busy_done += step_end - step_start;
    if (step_fast) {
      step_fast = false;
      ++fast_steps;
      if (observer.on_step) observer.on_step(record);
      ready_s = t;
      return;
    }
    bool any_finished = false;
    for (const Scheduled& e : sched) {
      Slot& s = slots[e.slot];
      s.computed += e.tokens;
      if (s.computed < s.num_tokens()) continue;  // a prefill chunk, not the last
      ++s.generated;
      s.decoding = true;
      if (s.generated == 1) s.first_token_s = t;
      if (s.generated >= s.req.output_tokens) {
        free_blocks(s);
        report(s, RequestStatus::kFinished, t);
        s.generated = -1;  // mark for removal from running
        any_finished = true;
      }
    }
    if (any_finished) {
      size_t w = 0;
      for (size_t r = 0; r < running.size(); ++r) {
        const int32_t si = running[r];
        if (slots[si].generated < 0) {
          release_slot(si);
        } else {
          running[w++] = si;
        }
      }
      running.resize(w);
    }
    sched.clear();
    if (observer.on_step) observer.on_step(record);
    record.preempted = 0;
    ready_s = t;
  }

  void run_until(double t) {
    for (;;) {
      if (!active) {
        if (!has_work() || !(ready_s < t)) break;
        begin_step(ready_s);
        if (!active) break;
      }
      if (step_end <= t) {
        end_step();
        continue;
      }
      break;
    }
    if (t > now) now = t;
  }
};

ReplicaEngine::ReplicaEngine(int32_t replica_id, const StepTimeModel& step_time, const EngineLimits& limits, Observer observer)
    : replica_id_(replica_id) {
  if (limits.max_num_seqs <= 0 || limits.max_num_batched_tokens <= 0 || limits.max_model_len <= 0 || limits.block_size <= 0 ||
      limits.num_blocks <= 0) {
    throw std::invalid_argument("engine limits (max_num_seqs, max_num_batched_tokens, max_model_len, block_size, num_blocks) must be positive");
  }
  impl_ = std::make_unique<Impl>(replica_id, step_time, limits, std::move(observer));
}

ReplicaEngine::~ReplicaEngine() = default;
ReplicaEngine::ReplicaEngine(ReplicaEngine&&) noexcept = default;
ReplicaEngine& ReplicaEngine::operator=(ReplicaEngine&&) noexcept = default;

void ReplicaEngine::add_request(const Request& request, double t) {
  Impl& m = *impl_;
  m.run_until(t);
  const bool was_idle = !m.active && !m.has_work();
  const int32_t si = m.new_slot();
  Slot& s = m.slots[si];
  s.req = request;
  s.computed = s.generated = s.blocks = s.hashed = s.preemptions = s.cached_prompt_tokens = 0;
  s.first_token_s = -1;
  s.counted_query = false;
  s.decoding = false;
  s.cached_nodes.clear();
  s.cacheable_blocks = 0;
  if (m.limits.enable_prefix_caching && !request.prefix_hashes.empty() && request.prefix_block_tokens > 0) {
    const int64_t covered = std::min<int64_t>(request.prompt_tokens, static_cast<int64_t>(request.prefix_hashes.size()) * request.prefix_block_tokens);
    s.cacheable_blocks = static_cast<int32_t>(covered / m.limits.block_size);
  }
  // Refused at once: longer than max_model_len, or more KV than the whole cache (it could never run).
  const int64_t total = static_cast<int64_t>(request.prompt_tokens) + request.output_tokens;
  const int64_t kv_tokens = total - 1;  // the last output token is never fed back
  if (total > m.limits.max_model_len || ceil_div(kv_tokens, m.limits.block_size) > m.limits.num_blocks) {
    m.report(s, RequestStatus::kDropped, t);
    m.release_slot(si);
    return;
  }
  m.waiting.push_back(si);
  if (was_idle) m.ready_s = t;
}

void ReplicaEngine::run_until(double t) { impl_->run_until(t); }

double ReplicaEngine::next_step_end_s() const {
  Impl& m = *impl_;
  if (!m.active && m.has_work()) m.begin_step(m.ready_s);
  return m.active ? m.step_end : kInf;
}

bool ReplicaEngine::abort(uint64_t request_id, RequestStatus status, double t) {
  Impl& m = *impl_;
  m.run_until(t);
  m.materialize_step();
  if (!m.active) m.sync();
  // Running first: at most max_num_seqs, and the oldest requests (the first to time out) are there.
  for (auto it = m.running.begin(); it != m.running.end(); ++it) {
    if (m.slots[*it].req.id != request_id) continue;
    const int32_t si = *it;
    m.running.erase(it);
    if (m.active) {
      auto e = std::find_if(m.sched.begin(), m.sched.end(), [si](const Scheduled& x) { return x.slot == si; });
      if (e != m.sched.end()) m.sched.erase(e);
    }
    m.free_blocks(m.slots[si]);
    m.report(m.slots[si], status, t);
    m.release_slot(si);
    return true;
  }
  for (auto it = m.waiting.begin(); it != m.waiting.end(); ++it) {
    if (m.slots[*it].req.id != request_id) continue;
    const int32_t si = *it;
    m.waiting.erase(it);
    m.report(m.slots[si], status, t);
    m.release_slot(si);
    return true;
  }
  return false;
}

std::vector<Request> ReplicaEngine::evict_all(double t) {
  Impl& m = *impl_;
  m.run_until(t);
  m.materialize_step();
  if (!m.active) m.sync();
  if (m.active) {  // the step in progress is abandoned
    m.busy_done += std::max(0.0, std::min(t, m.step_end) - m.step_start);
    m.active = false;
    m.sched.clear();
    m.record.preempted = 0;
  }
  std::vector<int32_t> all(m.running.begin(), m.running.end());
  all.insert(all.end(), m.waiting.begin(), m.waiting.end());
  std::sort(all.begin(), all.end(), [&](int32_t a, int32_t b) {
    const Request& x = m.slots[a].req;
    const Request& y = m.slots[b].req;
    return x.arrival_s != y.arrival_s ? x.arrival_s < y.arrival_s : x.id < y.id;
  });
  std::vector<Request> out;
  out.reserve(all.size());
  for (int32_t si : all) {
    m.free_blocks(m.slots[si]);
    out.push_back(std::move(m.slots[si].req));
    m.release_slot(si);
  }
  m.running.clear();
  m.waiting.clear();
  return out;
}

int32_t ReplicaEngine::num_requests_running() const { return static_cast<int32_t>(impl_->running.size()); }
int32_t ReplicaEngine::num_requests_waiting() const { return static_cast<int32_t>(impl_->waiting.size()); }
double ReplicaEngine::kv_cache_usage() const {
  return static_cast<double>(impl_->pool.used()) / static_cast<double>(impl_->limits.num_blocks);
}
int32_t ReplicaEngine::outstanding() const { return num_requests_running() + num_requests_waiting(); }
double ReplicaEngine::busy_seconds(double t) const {
  const Impl& m = *impl_;
  double b = m.busy_done;
  if (m.active && t > m.step_start) b += std::min(t, m.step_end) - m.step_start;
  return b;
}
int64_t ReplicaEngine::prefix_cache_queries() const { return impl_->prefix_queries; }
int64_t ReplicaEngine::prefix_cache_hits() const { return impl_->prefix_hits; }

}  // namespace gpufleet::inference
