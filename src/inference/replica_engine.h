// One vLLM engine replica at iteration granularity (vLLM V1's scheduler,
// vllm/v1/core/sched/scheduler.py Scheduler.schedule; docs.vllm.ai "Optimization and Tuning"):
//
//  - Each step has a token budget (max_num_batched_tokens). Running requests are served first, in
//    order: a decoding request takes 1 token, one still in prefill its next chunk (at most the budget
//    left). Then waiting requests are admitted first come first served while the budget, max_num_seqs
//    and the KV blocks allow; a prompt larger than the budget left is chunked (chunked prefill is
//    always on, as in V1).
//  - KV cache: blocks of block_size tokens, allocated per step for the tokens scheduled
//    (kv_cache_manager.allocate_slots), freed when a request ends. When a running request's blocks
//    cannot be allocated, the newest running request is preempted (recompute: its blocks are freed,
//    its computed tokens reset to 0, it goes back to the FRONT of the waiting queue); if it is the
//    request being scheduled, that request waits.
//  - Prefix caching (optional): a full block of prompt tokens is identified by its prefix hash chain
//    (Request::prefix_hashes expanded to block_size blocks); a request admitted from waiting skips
//    the leading blocks already cached; freed blocks keep their hash and are evicted least recently
//    used when a free block is needed (docs.vllm.ai design/prefix_caching).
//  - A step's tokens: a request whose prefill completes in the step gets its first output token at
//    the step's end; a decoding request one more token. A request finishes at the end of the step
//    that generates its output_tokens-th token.
//
// Time: a step starts when the previous one ends or, when the engine was idle, when a request
// arrives; requests added during a step join the next one. A step due to start at t is scheduled
// only once time moves past t (run_until(t' > t)) or next_step_end_s() is asked, so every request
// added at t joins it. Step durations come from a StepTimeModel, called once per step.
//
// As in vLLM (vllm/v1/core/sched/scheduler.py at 00024d3, vllm/v1/core/kv_cache_manager.py at 003df29): a request resumed after
// preemption recomputes its prompt and the tokens it had generated (num_tokens - computed), and
// streams on from its last token (its first-token time stays); the step that preempts admits nothing
// from waiting; a waiting request that does not get its blocks stops admission (no preemption for
// it); a fully cached prompt still computes its last block (hits stop at (num_tokens - 1) /
// block_size blocks); blocks are cached when allocated, so a request admitted later in the same step
// can hit them; freed blocks go to the free queue's tail, the request's last block first.
// Where this differs:
//  - Cached blocks: only full prompt blocks covered by Request::prefix_hashes can hit (key: the hash
//    covering the block's last token and the block's index); output blocks are never hit. A block
//    whose key is already cached stays uncached (vLLM keeps duplicates under one hash).
//  - A request whose prompt + output cannot fit in the whole KV cache is dropped at add_request like
//    one above max_model_len (vLLM refuses to start when max_model_len does not fit the cache).
//  - Not modelled: async scheduling, speculative decoding, the priority policy,
//    long_prefill_token_threshold and the admission watermark (both 0 by default), encoder inputs.
//  - prefix_cache_queries/hits count each request at its first admission only (vLLM counts resumed
//    requests apart); with prefix caching off both stay 0.
// Outcomes reported here carry this engine's id in `replica` (finished, timed out, dropped).
//
// Speed: steps in which every running request decodes and nothing else can change (none finishes,
// none can be admitted, no preemption) are counted in O(1), with the same schedule and step times
// as the general path; a step costs O(batch) otherwise. Nothing is allocated per step.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "inference/request.h"
#include "inference/step_time.h"

namespace gpufleet::inference {

/// The scheduler's limits, from EngineArgs and the KV budget.
struct EngineLimits {
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 2048;
  int32_t max_model_len = 8192;      ///< longer prompt + output: the request is dropped at add_request
  int32_t block_size = 16;
  int64_t num_blocks = 0;            ///< KV cache blocks (KvCacheBudget::num_blocks), > 0
  bool enable_prefix_caching = false;
};

/// One step, as it ran (for metrics and tests).
struct StepRecord {
  double start_s = 0, end_s = 0;
  StepBatch batch;
  int32_t num_running = 0;           ///< requests in the running set after scheduling
  int32_t num_waiting = 0;           ///< requests left waiting
  int64_t blocks_used = 0;           ///< KV blocks held by requests after scheduling
  int32_t preempted = 0;             ///< requests preempted while scheduling this step
};

class ReplicaEngine {
 public:
  /// Callbacks, any may be empty: a request finished or was aborted (outcome.replica = replica id
  /// given here), and every step.
  struct Observer {
    std::function<void(const RequestOutcome&)> on_outcome;
    std::function<void(const StepRecord&)> on_step;
  };

  /// `step_time` must outlive the engine. Throws std::invalid_argument for non-positive limits.
  ReplicaEngine(int32_t replica_id, const StepTimeModel& step_time, const EngineLimits& limits, Observer observer);

  /// Queues a request at t (>= the time of the last call). A request with prompt + output above
  /// max_model_len is reported kDropped at once.
  void add_request(const Request& request, double t);
  /// Runs every step that ends at or before t, starting the next step at each end while there is work.
  void run_until(double t);
  /// End of the step in progress; +infinity when idle.
  double next_step_end_s() const;
  /// Aborts a request (client timeout) at t: reported with `status`, blocks freed. False if unknown.
  bool abort(uint64_t request_id, RequestStatus status, double t);
  /// Takes every unfinished request out at t (the replica is going away), in arrival order; their
  /// progress is lost. The engine is empty afterwards.
  std::vector<Request> evict_all(double t);

  // Gauges, as vLLM exports them (vllm/v1/metrics/loggers.py), at the last time given.
  int32_t num_requests_running() const;
  int32_t num_requests_waiting() const;
  double kv_cache_usage() const;      ///< blocks held / num_blocks, 0..1 (vllm:kv_cache_usage_perc)
  int32_t outstanding() const;        ///< running + waiting (the router's load)
  /// Seconds spent in steps since construction (busy time; DCGM_FI_DEV_GPU_UTIL integrates it).
  double busy_seconds(double t) const;
  int64_t prefix_cache_queries() const;  ///< prompt tokens looked up (vllm:prefix_cache_queries)
  int64_t prefix_cache_hits() const;     ///< of which found cached

  int32_t id() const { return replica_id_; }

 private:
  struct Impl;
  int32_t replica_id_;
  std::unique_ptr<Impl> impl_;
 public:
  ~ReplicaEngine();
  ReplicaEngine(ReplicaEngine&&) noexcept;
  ReplicaEngine& operator=(ReplicaEngine&&) noexcept;
};

}  // namespace gpufleet::inference
