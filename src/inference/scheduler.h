// The vLLM V1 scheduler of one replica at iteration granularity (vllm/v1/core/sched/scheduler.py at
// 00024d3, Scheduler.schedule and update_from_output; docs.vllm.ai "Optimization and Tuning"). It
// decides each step and returns it as data (StepPlan, vLLM's SchedulerOutput); the step's results
// are then applied by update_from_output. KV blocks come from a KvCacheManager; time is the
// ReplicaEngine's.
//
//  - Each step has a token budget (max_num_batched_tokens). Running requests are served first, in
//    order: a decoding request takes 1 token, one still in prefill its next chunk (at most the budget
//    left). Then waiting requests are admitted first come first served while the budget, max_num_seqs
//    and the KV blocks allow; a prompt larger than the budget left is chunked (chunked prefill is
//    always on, as in V1).
//  - When a running request's blocks cannot be allocated, the newest running request is preempted
//    (recompute: its blocks are freed, its computed tokens reset to 0, it goes back to the FRONT of
//    the waiting queue); if it is the request being scheduled, that request waits. The step that
//    preempts admits nothing from waiting; when it preempted every running request, the scheduler
//    plans again (the plan then admits from waiting, and lists every preemption).
//  - A waiting request that does not get its blocks stops admission (no preemption for it). A
//    request admitted from waiting skips its cached prefix (KvCacheManager::find_cached_prefix).
//  - A step's tokens (update_from_output): a request whose prefill completes in the step gets its
//    first output token at the step's end, a decoding request one more token. A request finishes at
//    the end of the step that generates its output_tokens-th token; its blocks are freed then.
//  - A request resumed after preemption recomputes its prompt and the tokens it had generated
//    (num_tokens - computed), and streams on from its last token (its first-token time stays).
//  - Not modelled: async scheduling, speculative decoding, the priority policy,
//    long_prefill_token_threshold and the admission watermark (both 0 by default), encoder inputs.
//  - The prefix cache's queries and hits count each request at its first admission only (vLLM counts
//    resumed requests apart).
//
// Speed: steps in which every running request decodes and fits its blocks (no preemption) are
// planned in O(1) plus O(1) per request admitted from waiting, with the same plan as the general
// path (StepPlan::decode_all; the running requests' counters catch up later), and applied likewise;
// a step in which requests finish costs a pass over one integer per running request (the step of
// its last token) and O(1) per finished one. Other steps cost O(batch) (a preemption, a chunked
// prefill, an abort). In steady state nothing is allocated per step: requests live in a slot pool
// reused through a free list, the queues hold slot indices, the plan is a reused buffer.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "inference/kv_cache_manager.h"
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

/// A request inside the scheduler (vllm/v1/request.py Request): its progress and its blocks.
struct RequestState {
  Request req;
  int32_t computed = 0;        ///< tokens in the KV cache (num_computed_tokens)
  int32_t generated = 0;       ///< output tokens so far
  int32_t preemptions = 0;
  int32_t cached_prompt_tokens = 0;  ///< prefix-cache hit at its last admission, tokens
  double first_token_s = -1;   ///< when the engine made it
  /// How much later the client saw it (the front end; update_from_output's seen_s); -1 for a first
  /// token sampled by a prefill replica (Request::remote_first_token_s): the caller decides.
  double first_token_frontend_s = 0;
  bool counted_query = false;  ///< prefix-cache query counted (first admission only)
  bool decoding = false;       ///< its (re)computation is done: each step adds one token
  RequestBlocks kv;

  int32_t num_tokens() const { return req.prompt_tokens + generated; }
};

/// One request of a step.
struct ScheduledRequest {
  int32_t slot = 0;            ///< the scheduler's handle (Scheduler::state)
  int32_t num_tokens = 0;      ///< tokens computed this step: 1 to decode, else a prefill chunk
  uint64_t request_id = 0;
};

/// One step as the scheduler planned it (vLLM's SchedulerOutput): data, for the step-time model,
/// update_from_output and the step's record.
struct StepPlan {
  /// Every request running before this step's admissions decodes one token (the fast path): they
  /// are not listed, `scheduled` holds only the requests admitted from waiting.
  bool decode_all = false;
  /// The running requests scheduled, in running order (none with decode_all), then the requests
  /// admitted from waiting (new or resumed), in admission order.
  std::vector<ScheduledRequest> scheduled;
  int32_t num_admitted = 0;          ///< the last entries of `scheduled` that came from waiting
  std::vector<uint64_t> preempted;   ///< ids of the requests preempted while planning, in order
  StepBatch batch;                   ///< what the step computes (StepTimeModel's input)
  int32_t num_running = 0;           ///< requests running after scheduling
  int32_t num_waiting = 0;           ///< requests left waiting
  int64_t blocks_used = 0;           ///< KV blocks held after scheduling

  bool empty() const { return !decode_all && scheduled.empty(); }
};

class Scheduler {
 public:
  /// `kv` must outlive the scheduler; `limits` are checked by the caller (ReplicaEngine).
  /// decode_fast_path false plans every step through the general path (same plans, O(batch)).
  Scheduler(const EngineLimits& limits, KvCacheManager& kv, bool decode_fast_path = true);

  /// Queues a request at the tail of waiting. The caller has refused those that can never run.
  void add_request(const Request& request);
  /// Scheduler.schedule: plans the next step (the top of this file). The plan is valid until the
  /// next call that changes the scheduler; it is empty only when there is no work.
  const StepPlan& schedule() {
    plan_.preempted.clear();
    if (!try_decode_all()) return schedule_general();
    in_flight_ = true;
    return plan_;
  }
  /// Scheduler.update_from_output: applies `plan` (the last schedule()'s), whose step ended at
  /// end_s: tokens, first tokens, finishes. Returns the requests that finished (status kFinished,
  /// replica -1), in plan order, valid until the next call. `seen_s` (>= end_s; default end_s): when
  /// the client sees the step's tokens (the front end); a first token's outcome reports that time
  /// (RequestOutcome::first_token_frontend_s the difference), finish_s stays end_s.
  const std::vector<RequestOutcome>& update_from_output(const StepPlan& plan, double end_s, double seen_s = -1) {
    seen_delay_ = seen_s > end_s ? seen_s - end_s : 0;
    if (!plan.decode_all) return apply_general(plan, end_s);
    in_flight_ = false;
    plan_.decode_all = false;
    ++fast_steps_;
    finished_.clear();
    if (plan.num_admitted > 0) apply_admitted(plan, end_s);
    if (fast_steps_ >= phase_min_left_) finish_decoded(end_s);
    return finished_;
  }
  /// Ends a request wherever it is (an abort: a client timeout) at t, with `status`: its blocks are
  /// freed; a step in flight goes on without it. Its outcome (replica -1), or nullopt if unknown.
  std::optional<RequestOutcome> finish_request(uint64_t request_id, RequestStatus status, double t);
  /// Takes every unfinished request out, in arrival order (then id); their progress and blocks are
  /// lost, a step in flight is abandoned. The scheduler is empty afterwards.
  std::vector<Request> evict_all();

  bool has_work() const { return !waiting_.empty() || !running_.empty(); }
  bool step_in_flight() const { return in_flight_; }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  /// A request's state (slot from a ScheduledRequest); between steps only, as the fast path defers
  /// the running requests' counters while it runs.
  const RequestState& state(int32_t slot) const { return slots_[static_cast<size_t>(slot)]; }

 private:
  int32_t new_slot();
  void release_slot(int32_t slot);
  RequestOutcome outcome(const RequestState& s, RequestStatus status, double t) const;
  void preempt(int32_t slot);
  void add_to_batch(StepBatch& batch, const RequestState& s, int32_t n) const;
  void admit_waiting(StepBatch& batch, int32_t budget);
  const StepPlan& schedule_general();
  double seen_delay_ = 0;  // update_from_output's seen_s - end_s
  const std::vector<RequestOutcome>& apply_general(const StepPlan& plan, double end_s);
  bool try_decode_all();
  bool start_decode_phase();
  void admit_into_decode_step(int32_t budget);
  void apply_admitted(const StepPlan& plan, double end_s);
  void finish_decoded(double end_s);
  /// tokens mod block_size, in [0, block_size) for any sign (a mask for a power-of-two block size):
  /// the counters of the fast path lag by fast_steps_ and may be negative.
  int32_t residue(int32_t tokens) const {
    if (block_mask_ >= 0) return tokens & block_mask_;
    const int32_t r = tokens % limits_.block_size;
    return r < 0 ? r + limits_.block_size : r;
  }
  void sync();
  void materialize();

  EngineLimits limits_;
  KvCacheManager* kv_;
  bool decode_fast_path_;
  int32_t block_mask_ = -1;        // block_size - 1 for a power-of-two block size, else -1

  std::vector<RequestState> slots_;
  std::vector<int32_t> free_slots_;
  std::deque<int32_t> waiting_;
  std::vector<int32_t> running_;   // admission order; the newest is last (the preemption victim)
  StepPlan plan_;
  bool in_flight_ = false;         // plan_ was returned by schedule() and is not applied yet
  std::vector<RequestOutcome> finished_;

  // Pure-decode fast path (try_decode_all): the running requests' counters lag by fast_steps_ (a
  // request admitted during the phase is stored lagging too, its counters less fast_steps_; they may
  // be negative).
  bool phase_valid_ = false;       // the figures below describe the running set
  int32_t fast_steps_ = 0;         // decode_all steps applied since the counters were last brought up to date
  int32_t phase_min_left_ = 0;     // the least of phase_end_ (the next finish: fast_steps_ reaches it)
  int64_t phase_context_ = 0;      // sum of the running requests' lagging computed tokens
  std::vector<int32_t> phase_residue_;  // running requests by lagging computed % block_size
  std::vector<int32_t> phase_end_;      // by running_ index: the fast_steps_ at which the request has generated its last token
};

/// A step in which every running request decodes, all fit the token budget and the new blocks are
/// free: the same plan as the general path (no preemption), made in O(1), then the admissions from
/// waiting as the general path makes them (admit_into_decode_step, O(1) per request admitted). At
/// the end of a step in which some request finishes, the finished requests catch up and leave, as
/// the general path's update would do (finish_decoded); an admitted request still in prefill ends
/// the phase (the next step goes through the general path, which brings every counter up to date).
inline bool Scheduler::try_decode_all() {
  const auto b = static_cast<int32_t>(running_.size());
  if (!decode_fast_path_ || b == 0 || b > limits_.max_num_batched_tokens) return false;
  if (!phase_valid_ && !start_decode_phase()) return false;
  // A request needs a new block when its computed tokens fill its blocks: (residue + f) % bs == 0.
  const int32_t bs = limits_.block_size;
  const int64_t need = phase_residue_[static_cast<size_t>(residue(bs - residue(fast_steps_)))];
  if (need > kv_->num_free_blocks()) return false;
  kv_->take_blocks(need);
  plan_.decode_all = true;
  plan_.scheduled.clear();
  plan_.num_admitted = 0;
  StepBatch& batch = plan_.batch;
  batch.num_seqs = b;
  batch.decode_tokens = b;
  batch.prefill_tokens = 0;
  batch.context_tokens = phase_context_ + static_cast<int64_t>(b) * fast_steps_;
  batch.prefill_attention_token_pairs = 0;
  if (!waiting_.empty() && b < limits_.max_num_seqs) admit_into_decode_step(limits_.max_num_batched_tokens - b);
  plan_.num_running = static_cast<int32_t>(running_.size());
  plan_.num_waiting = static_cast<int32_t>(waiting_.size());
  plan_.blocks_used = kv_->num_used_blocks();
  return true;
}

}  // namespace gpufleet::inference
