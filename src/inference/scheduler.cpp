// Scheduler.schedule and update_from_output, with the pure-decode fast path (scheduler.h).
#include "inference/scheduler.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace gpufleet::inference {

Scheduler::Scheduler(const EngineLimits& limits, KvCacheManager& kv, bool decode_fast_path)
    : limits_(limits), kv_(&kv), decode_fast_path_(decode_fast_path) {
  if (limits.block_size > 0 && (limits.block_size & (limits.block_size - 1)) == 0) block_mask_ = limits.block_size - 1;
}

int32_t Scheduler::new_slot() {
  if (!free_slots_.empty()) {
    const int32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.emplace_back();
  return static_cast<int32_t>(slots_.size() - 1);
}

void Scheduler::release_slot(int32_t slot) {
  slots_[static_cast<size_t>(slot)].req.prefix_hashes.clear();
  free_slots_.push_back(slot);
}

void Scheduler::add_request(const Request& request) {
  const int32_t si = new_slot();
  RequestState& s = slots_[static_cast<size_t>(si)];
  s.req = request;
  s.computed = s.generated = s.preemptions = s.cached_prompt_tokens = 0;
  s.first_token_s = -1;
  s.first_token_frontend_s = 0;
  s.counted_query = false;
  s.decoding = false;
  if (request.remote_first_token_s >= 0 && request.kv_transferred_tokens == request.prompt_tokens) {
    s.generated = 1;  // sampled by the prefill replica (Request::remote_first_token_s)
    s.first_token_s = request.remote_first_token_s;
    s.first_token_frontend_s = -1;
  }
  s.kv.cached.clear();
  const RequestBlocks fresh = kv_->new_request(request);
  s.kv.blocks = fresh.blocks;
  s.kv.cacheable_blocks = fresh.cacheable_blocks;
  s.kv.hashed = fresh.hashed;
  waiting_.push_back(si);
}

RequestOutcome Scheduler::outcome(const RequestState& s, RequestStatus status, double t) const {
  RequestOutcome o;
  o.id = s.req.id;
  o.status = status;
  o.arrival_s = s.req.arrival_s;
  o.first_token_s = s.first_token_s;
  if (s.first_token_s >= 0 && s.first_token_frontend_s > 0) o.first_token_s += s.first_token_frontend_s;
  o.first_token_frontend_s = s.first_token_s >= 0 ? s.first_token_frontend_s : 0;
  o.finish_s = t;
  o.prompt_tokens = s.req.prompt_tokens;
  o.output_tokens = s.req.output_tokens;
  o.generated_tokens = s.generated;
  o.cached_prompt_tokens = s.cached_prompt_tokens;
  o.preemptions = s.preemptions;
  return o;
}

/// Preemption by recompute (Scheduler._preempt_request): blocks freed, progress reset, front of waiting.
void Scheduler::preempt(int32_t slot) {
  RequestState& s = slots_[static_cast<size_t>(slot)];
  kv_->free(s.kv);
  s.computed = 0;
  s.decoding = false;
  ++s.preemptions;
  waiting_.push_front(slot);
  plan_.preempted.push_back(s.req.id);
}

void Scheduler::add_to_batch(StepBatch& batch, const RequestState& s, int32_t n) const {
  ++batch.num_seqs;
  batch.context_tokens += s.computed;
  if (s.decoding) {
    ++batch.decode_tokens;
  } else {
    batch.prefill_tokens += n;
    batch.prefill_attention_token_pairs += static_cast<double>(n) * (s.computed + n / 2.0);
  }
}

/// Brings every running request's counters up to date after decode_all steps (between steps only).
void Scheduler::sync() {
  phase_valid_ = false;
  if (fast_steps_ == 0) return;
  for (int32_t si : running_) {
    RequestState& s = slots_[static_cast<size_t>(si)];
    s.computed += fast_steps_;
    s.generated += fast_steps_;
    kv_->set_held(s.kv, s.computed);
  }
  fast_steps_ = 0;
}

/// Writes out a decode_all plan in flight as an ordinary one, so that a request can leave in the
/// middle of its step: a decode for each request that ran before the step's admissions (the first
/// of running), then the admitted ones' entries; each holds the blocks of its step.
void Scheduler::materialize() {
  if (!(in_flight_ && plan_.decode_all)) return;
  sync();
  const std::vector<ScheduledRequest> admitted(plan_.scheduled.begin(), plan_.scheduled.end());
  const size_t decoders = running_.size() - admitted.size();
  plan_.scheduled.clear();
  for (size_t i = 0; i < decoders; ++i) {
    const int32_t si = running_[i];
    RequestState& s = slots_[static_cast<size_t>(si)];
    kv_->set_held(s.kv, s.computed + 1);
    plan_.scheduled.push_back({si, 1, s.req.id});
  }
  for (const ScheduledRequest& e : admitted) {
    kv_->set_held(slots_[static_cast<size_t>(e.slot)].kv, slots_[static_cast<size_t>(e.slot)].computed + e.num_tokens);
    plan_.scheduled.push_back(e);
  }
  plan_.decode_all = false;
}

/// The figures of a decode_all phase (the running set as it is now): false when some running
/// request is still in prefill.
bool Scheduler::start_decode_phase() {
  if (fast_steps_ != 0) return false;
  phase_residue_.assign(static_cast<size_t>(limits_.block_size), 0);
  phase_context_ = 0;
  phase_min_left_ = std::numeric_limits<int32_t>::max();
  phase_end_.clear();
  for (int32_t si : running_) {
    const RequestState& s = slots_[static_cast<size_t>(si)];
    if (!s.decoding) return false;  // the figures stay invalid
    ++phase_residue_[static_cast<size_t>(residue(s.computed))];
    phase_context_ += s.computed;
    phase_end_.push_back(s.req.output_tokens - s.generated);
    phase_min_left_ = std::min(phase_min_left_, phase_end_.back());
  }
  phase_valid_ = true;
  return true;
}

/// Admissions into a decode_all plan (try_decode_all), with the token budget the running requests
/// left: as the general path admits (admit_waiting); the admitted requests' counters are then stored
/// lagging by fast_steps_ like the running ones' (sync adds it back).
void Scheduler::admit_into_decode_step(int32_t budget) {
  const size_t first = running_.size();
  admit_waiting(plan_.batch, budget);
  for (size_t i = first; i < running_.size(); ++i) {
    RequestState& s = slots_[static_cast<size_t>(running_[i])];
    s.computed -= fast_steps_;
    s.generated -= fast_steps_;
  }
}

/// The end of a decode_all step for the requests admitted into it (fast_steps_ already counts the
/// step): their tokens, first tokens and completed prefills as apply_general applies them, their
/// counters left lagging by fast_steps_, and their figures joined to the phase's. The phase ends
/// (the next step syncs) when one of them is still in prefill.
void Scheduler::apply_admitted(const StepPlan& plan, double end_s) {
  const int32_t f = fast_steps_;
  for (const ScheduledRequest& e : plan.scheduled) {
    RequestState& s = slots_[static_cast<size_t>(e.slot)];
    // The true counters: before the step they lagged by f - 1.
    const int32_t computed = s.computed + (f - 1) + e.num_tokens;
    int32_t generated = s.generated + (f - 1);
    if (computed < s.req.prompt_tokens + generated) {  // a prefill chunk, not the last
      phase_valid_ = false;
    } else {
      ++generated;
      s.decoding = true;
      if (generated == 1) {
        s.first_token_s = end_s;
        s.first_token_frontend_s = seen_delay_;
      }
    }
    s.computed = computed - f;
    s.generated = generated - f;
    ++phase_residue_[static_cast<size_t>(residue(s.computed))];
    phase_context_ += s.computed;
    phase_end_.push_back(s.req.output_tokens - s.generated);
    phase_min_left_ = std::min(phase_min_left_, phase_end_.back());
  }
}

/// The end of a decode_all step in which some running request generated its last token (fast_steps_
/// reached its phase_end_): the finished ones catch up, are freed and reported in running order and
/// leave, their figures taken out of the phase's (as apply_general does for a plan of the same
/// steps); the others keep lagging. O(batch) over phase_end_ only, O(1) per finished request.
void Scheduler::finish_decoded(double end_s) {
  const int32_t f = fast_steps_;
  phase_min_left_ = std::numeric_limits<int32_t>::max();
  size_t w = 0;
  for (size_t r = 0; r < running_.size(); ++r) {
    const int32_t si = running_[r];
    const int32_t end = phase_end_[r];
    if (end > f) {
      running_[w] = si;
      phase_end_[w++] = end;
      phase_min_left_ = std::min(phase_min_left_, end);
      continue;
    }
    RequestState& s = slots_[static_cast<size_t>(si)];
    --phase_residue_[static_cast<size_t>(residue(s.computed))];
    phase_context_ -= s.computed;
    s.computed += f;
    s.generated += f;
    kv_->set_held(s.kv, s.computed);
    kv_->free(s.kv);
    finished_.push_back(outcome(s, RequestStatus::kFinished, end_s));
    release_slot(si);
  }
  running_.resize(w);
  phase_end_.resize(w);
}

/// Admits waiting requests first come first served while the budget, max_num_seqs and the KV blocks
/// allow (the second half of Scheduler.schedule): each joins running, the plan and `batch`.
void Scheduler::admit_waiting(StepBatch& batch, int32_t budget) {
  while (!waiting_.empty() && budget > 0 && static_cast<int32_t>(running_.size()) < limits_.max_num_seqs) {
    const int32_t si = waiting_.front();
    RequestState& s = slots_[static_cast<size_t>(si)];
    // Prefix cache hits: leading cached blocks, leaving at least the last token to compute. A
    // request whose KV was transferred (Request::kv_transferred_tokens) holds those tokens
    // computed instead, once.
    const bool transferred = s.req.kv_transferred_tokens > 0 && s.preemptions == 0;
    const PrefixHit hit = transferred ? PrefixHit{} : kv_->find_cached_prefix(s.req, s.kv, s.num_tokens());
    const int32_t hit_tokens = transferred ? s.req.kv_transferred_tokens : hit.blocks * limits_.block_size;
    const int32_t n = std::min(s.num_tokens() - hit_tokens, budget);
    if (!kv_->allocate_slots(s.req, s.kv, hit_tokens + n, hit)) break;
    s.computed = hit_tokens;
    s.cached_prompt_tokens = transferred ? 0 : hit_tokens;
    if (transferred) s.decoding = s.generated > 0;  // the prompt is in: it decodes from here
    if (!s.counted_query && kv_->caching() && !transferred) {
      s.counted_query = true;
      kv_->count_prefix_query(s.num_tokens(), hit_tokens);
    }
    waiting_.pop_front();
    running_.push_back(si);
    add_to_batch(batch, s, n);
    plan_.scheduled.push_back({si, n, s.req.id});
    ++plan_.num_admitted;
    budget -= n;
  }
}

const StepPlan& Scheduler::schedule_general() {
  sync();
  plan_.decode_all = false;
  for (;;) {
    plan_.scheduled.clear();
    plan_.num_admitted = 0;
    int32_t budget = limits_.max_num_batched_tokens;
    const size_t preempted_before = plan_.preempted.size();
    StepBatch batch;
    // Running requests first, in order.
    for (size_t i = 0; i < running_.size() && budget > 0;) {
      const int32_t si = running_[i];
      RequestState& s = slots_[static_cast<size_t>(si)];
      const int32_t n = std::min(s.num_tokens() - s.computed, budget);
      bool scheduled = true;
      while (!kv_->allocate_slots(s.req, s.kv, s.computed + n)) {
        const int32_t victim = running_.back();
        running_.pop_back();
        preempt(victim);
        if (victim == si) {
          scheduled = false;
          break;
        }
      }
      if (!scheduled) break;
      add_to_batch(batch, s, n);
      plan_.scheduled.push_back({si, n, s.req.id});
      budget -= n;
      ++i;
    }
    // Then waiting requests, first come first served, unless this step preempted.
    if (plan_.preempted.size() == preempted_before) admit_waiting(batch, budget);
    if (!plan_.scheduled.empty()) {
      plan_.batch = batch;
      plan_.num_running = static_cast<int32_t>(running_.size());
      plan_.num_waiting = static_cast<int32_t>(waiting_.size());
      plan_.blocks_used = kv_->num_used_blocks();
      in_flight_ = true;
      return plan_;
    }
    // Everything running was preempted: the next pass admits from waiting (the running set is empty).
    if (!has_work()) break;
  }
  plan_.batch = StepBatch{};
  plan_.num_running = plan_.num_waiting = 0;
  plan_.blocks_used = kv_->num_used_blocks();
  return plan_;
}

const std::vector<RequestOutcome>& Scheduler::apply_general(const StepPlan& plan, double end_s) {
  finished_.clear();
  in_flight_ = false;
  bool any_finished = false;
  // When the plan holds every running request, the figures of the next decode phase are taken in
  // this pass (those start_decode_phase would take over the requests left running).
  const bool phase = decode_fast_path_ && fast_steps_ == 0 && plan.scheduled.size() == running_.size();
  bool all_decoding = true;
  int64_t context = 0;
  int32_t min_left = std::numeric_limits<int32_t>::max();
  if (phase) {
    phase_residue_.assign(static_cast<size_t>(limits_.block_size), 0);
    phase_end_.clear();
  }
  for (const ScheduledRequest& e : plan.scheduled) {
    RequestState& s = slots_[static_cast<size_t>(e.slot)];
    s.computed += e.num_tokens;
    if (s.computed < s.num_tokens()) {  // a prefill chunk, not the last
      all_decoding = false;
      continue;
    }
    ++s.generated;
    s.decoding = true;
    if (s.generated == 1) {
      s.first_token_s = end_s;
      s.first_token_frontend_s = seen_delay_;
    }
    if (s.generated >= s.req.output_tokens) {
      kv_->free(s.kv);
      finished_.push_back(outcome(s, RequestStatus::kFinished, end_s));
      s.generated = -1;  // mark for removal from running
      any_finished = true;
    } else if (phase) {
      ++phase_residue_[static_cast<size_t>(residue(s.computed))];
      context += s.computed;
      phase_end_.push_back(s.req.output_tokens - s.generated);
      min_left = std::min(min_left, phase_end_.back());
    }
  }
  if (any_finished) {
    size_t w = 0;
    for (size_t r = 0; r < running_.size(); ++r) {
      const int32_t si = running_[r];
      if (slots_[static_cast<size_t>(si)].generated < 0) {
        release_slot(si);
      } else {
        running_[w++] = si;
      }
    }
    running_.resize(w);
  }
  if (phase && all_decoding) {
    phase_context_ = context;
    phase_min_left_ = min_left;
    phase_valid_ = true;
  }
  plan_.scheduled.clear();
  return finished_;
}

std::optional<RequestOutcome> Scheduler::finish_request(uint64_t request_id, RequestStatus status, double t) {
  if (in_flight_) materialize(); else sync();
  // Running first: at most max_num_seqs, and the oldest requests (the first to time out) are there.
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    if (slots_[static_cast<size_t>(*it)].req.id != request_id) continue;
    const int32_t si = *it;
    running_.erase(it);
    if (in_flight_) {
      auto e = std::find_if(plan_.scheduled.begin(), plan_.scheduled.end(), [si](const ScheduledRequest& x) { return x.slot == si; });
      if (e != plan_.scheduled.end()) plan_.scheduled.erase(e);
    }
    RequestState& s = slots_[static_cast<size_t>(si)];
    kv_->free(s.kv);
    const RequestOutcome o = outcome(s, status, t);
    release_slot(si);
    return o;
  }
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (slots_[static_cast<size_t>(*it)].req.id != request_id) continue;
    const int32_t si = *it;
    waiting_.erase(it);
    const RequestOutcome o = outcome(slots_[static_cast<size_t>(si)], status, t);
    release_slot(si);
    return o;
  }
  return std::nullopt;
}

std::vector<Request> Scheduler::evict_all() {
  if (in_flight_) materialize(); else sync();
  in_flight_ = false;
  plan_.scheduled.clear();
  std::vector<int32_t> all(running_.begin(), running_.end());
  all.insert(all.end(), waiting_.begin(), waiting_.end());
  std::sort(all.begin(), all.end(), [&](int32_t a, int32_t b) {
    const Request& x = slots_[static_cast<size_t>(a)].req;
    const Request& y = slots_[static_cast<size_t>(b)].req;
    return x.arrival_s != y.arrival_s ? x.arrival_s < y.arrival_s : x.id < y.id;
  });
  std::vector<Request> out;
  out.reserve(all.size());
  for (int32_t si : all) {
    RequestState& s = slots_[static_cast<size_t>(si)];
    kv_->free(s.kv);
    out.push_back(std::move(s.req));
    release_slot(si);
  }
  running_.clear();
  waiting_.clear();
  return out;
}

}  // namespace gpufleet::inference
