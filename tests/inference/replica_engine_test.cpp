// The vLLM replica engine (src/inference/replica_engine.h): a continuous-batching schedule of a
// few requests worked out by hand step by step (chunked prefill, decodes, one preemption), prefix
// cache hits and least-recently-freed eviction, the max_model_len drop, abort and evict_all.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <random>
#include <string>
#include <memory>
#include <vector>

#include "inference/replica_engine.h"

namespace gpufleet::inference {
namespace {

Request req(uint64_t id, double arrival, int32_t prompt, int32_t output, std::vector<uint32_t> hashes = {}, int32_t hash_tokens = 512) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.prefix_hashes = std::move(hashes);
  r.prefix_block_tokens = hash_tokens;
  return r;
}

struct Recorder {
  std::map<uint64_t, RequestOutcome> outcomes;
  std::vector<StepRecord> steps;
  ReplicaEngine::Observer observer() {
    ReplicaEngine::Observer o;
    o.on_outcome = [this](const RequestOutcome& x) { outcomes[x.id] = x; };
    o.on_step = [this](const StepRecord& s) { steps.push_back(s); };
    return o;
  }
};

// block_size 4, 5 blocks (20 tokens), max_num_batched_tokens 8, steps of 1 s.
// A: prompt 10, output 4; B: prompt 6, output 4; both arrive at 0 (A first).
//
// step  time   scheduled (tokens)              blocks A+B  running  waiting  notes
//  1    0-1    A prefill 8 (chunk)             2+0 = 2     A        B        budget spent by A
//  2    1-2    A prefill 2, B prefill 6        3+2 = 5     A,B      -        both prompts done: first tokens at 2
//  3    2-3    A decode (ctx 10), B (ctx 6)    3+2 = 5                       A 11 tokens, B 7: no new block
//  4    3-4    A decode (ctx 11), B (ctx 7)    3+2 = 5                       A 12, B 8
//  5    4-5    A decode (ctx 12)               4+0 = 4     A        B        A needs a 4th block, none free: the
//                                                                            newest (B) is preempted, 3 tokens made
//  6    5-6    B prefill 8 of 6+3 = 9 (chunk)  0+2 = 2     B        -        A finished at 5 (4 tokens)
//  7    6-7    B prefill 1 (ctx 8)             0+3 = 3     B        -        recompute done: B's 4th token; ends at 7
TEST(ReplicaEngine, ContinuousBatchingScheduleWithPreemption) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;
  lim.max_num_seqs = 4;
  lim.max_num_batched_tokens = 8;
  lim.block_size = 4;
  lim.num_blocks = 5;
  Recorder rec;
  ReplicaEngine e(3, *st, lim, rec.observer());
  e.add_request(req(1, 0, 10, 4), 0);
  e.add_request(req(2, 0, 6, 4), 0);
  EXPECT_DOUBLE_EQ(e.next_step_end_s(), std::numeric_limits<double>::infinity());  // due at 0, not started
  e.start_due_step();
  EXPECT_DOUBLE_EQ(e.next_step_end_s(), 1.0);
  e.run_until(100);
  ASSERT_EQ(rec.steps.size(), 7u);
  struct Want { double start; int32_t seqs, decode, prefill; int64_t ctx; double pairs; int32_t running, waiting; int64_t blocks; int32_t preempted; };
  const Want want[] = {
      {0, 1, 0, 8, 0, 8 * 4.0, 1, 1, 2, 0},
      {1, 2, 0, 8, 8, 2 * (8 + 1.0) + 6 * (0 + 3.0), 2, 0, 5, 0},
      {2, 2, 2, 0, 16, 0, 2, 0, 5, 0},
      {3, 2, 2, 0, 18, 0, 2, 0, 5, 0},
      {4, 1, 1, 0, 12, 0, 1, 1, 4, 1},
      {5, 1, 0, 8, 0, 8 * 4.0, 1, 0, 2, 0},
      {6, 1, 0, 1, 8, 1 * (8 + 0.5), 1, 0, 3, 0},
  };
  for (size_t i = 0; i < 7; ++i) {
    SCOPED_TRACE(i + 1);
    const StepRecord& s = rec.steps[i];
    EXPECT_DOUBLE_EQ(s.start_s, want[i].start);
    EXPECT_DOUBLE_EQ(s.end_s, want[i].start + 1);
    EXPECT_EQ(s.batch.num_seqs, want[i].seqs);
    EXPECT_EQ(s.batch.decode_tokens, want[i].decode);
    EXPECT_EQ(s.batch.prefill_tokens, want[i].prefill);
    EXPECT_EQ(s.batch.context_tokens, want[i].ctx);
    EXPECT_DOUBLE_EQ(s.batch.prefill_attention_token_pairs, want[i].pairs);
    EXPECT_EQ(s.num_running, want[i].running);
    EXPECT_EQ(s.num_waiting, want[i].waiting);
    EXPECT_EQ(s.blocks_used, want[i].blocks);
    EXPECT_EQ(s.preempted, want[i].preempted);
  }
  const RequestOutcome& a = rec.outcomes.at(1);
  EXPECT_EQ(a.status, RequestStatus::kFinished);
  EXPECT_DOUBLE_EQ(a.first_token_s, 2);
  EXPECT_DOUBLE_EQ(a.finish_s, 5);
  EXPECT_DOUBLE_EQ(a.tpot_s(), 1.0);  // (5 - 2) / 3
  EXPECT_EQ(a.generated_tokens, 4);
  EXPECT_EQ(a.preemptions, 0);
  EXPECT_EQ(a.replica, 3);
  const RequestOutcome& b = rec.outcomes.at(2);
  EXPECT_DOUBLE_EQ(b.first_token_s, 2);  // the first token was streamed before the preemption
  EXPECT_DOUBLE_EQ(b.finish_s, 7);
  EXPECT_EQ(b.preemptions, 1);
  EXPECT_EQ(b.generated_tokens, 4);
  EXPECT_DOUBLE_EQ(e.busy_seconds(100), 7);
  EXPECT_EQ(e.outstanding(), 0);
  EXPECT_DOUBLE_EQ(e.kv_cache_usage(), 0);
}

// Prefix caching: block_size 4, each prefix hash covers 8 tokens (2 engine blocks), 10 blocks,
// max_num_batched_tokens 16.
//  C (t=0): prompt 12, hashes {7, 9}: no hit; computes 12 tokens, its 3 full blocks are cached
//           (keys (7,0) (7,1) (9,2)); finishes at 1 (1 output token), blocks freed tail first.
//           Free queue (head first): 7 never-used blocks, (9,2), (7,1), (7,0).
//  D (t=2): prompt 14, same hashes: hits blocks 0..2 (12 tokens; at most (14-1)/4 = 3 blocks),
//           computes 2 tokens (ctx 12), 2 output tokens: first at 3, done at 4. Frees its uncached
//           4th block then (9,2), (7,1), (7,0): queue = 7 uncached, (9,2), (7,1), (7,0).
//  E (t=5): prompt 36 without hashes, 9 blocks in chunks 16, 16, 4: takes 4 uncached, then 3
//           uncached + evicts (9,2), then evicts (7,1). Done at 8.
//  F (t=8): prompt 14, hashes {7, 9}: only (7,0) is left: 4 tokens hit, 10 computed (ctx 4).
// Queries count every request's tokens at its first admission: 12 + 14 + 36 + 14 = 76; hits 12 + 4.
TEST(ReplicaEngine, PrefixCacheHitsAndEvictionOrder) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;
  lim.max_num_batched_tokens = 16;
  lim.block_size = 4;
  lim.num_blocks = 10;
  lim.enable_prefix_caching = true;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  e.add_request(req(1, 0, 12, 1, {7, 9}, 8), 0);
  e.run_until(2);
  EXPECT_EQ(e.prefix_cache_queries(), 12);
  EXPECT_EQ(e.prefix_cache_hits(), 0);
  EXPECT_DOUBLE_EQ(e.kv_cache_usage(), 0);  // cached but free blocks count as free
  e.add_request(req(2, 2, 14, 2, {7, 9}, 8), 2);
  e.run_until(5);
  e.add_request(req(3, 5, 36, 1), 5);
  e.add_request(req(4, 8, 14, 1, {7, 9}, 8), 8);
  e.run_until(100);
  ASSERT_EQ(rec.steps.size(), 1u + 2u + 3u + 1u);
  EXPECT_EQ(rec.outcomes.at(2).cached_prompt_tokens, 12);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(2).first_token_s, 3);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(2).finish_s, 4);
  const StepBatch& d = rec.steps[1].batch;
  EXPECT_EQ(d.prefill_tokens, 2);
  EXPECT_EQ(d.context_tokens, 12);
  EXPECT_EQ(rec.steps[1].blocks_used, 4);
  EXPECT_EQ(rec.steps[3].batch.prefill_tokens, 16);  // E's chunks
  EXPECT_EQ(rec.steps[5].batch.prefill_tokens, 4);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(3).finish_s, 8);
  const StepRecord& f = rec.steps[6];
  EXPECT_DOUBLE_EQ(f.start_s, 8);
  EXPECT_EQ(f.batch.prefill_tokens, 10);
  EXPECT_EQ(f.batch.context_tokens, 4);
  EXPECT_DOUBLE_EQ(f.batch.prefill_attention_token_pairs, 10 * (4 + 5.0));
  EXPECT_EQ(rec.outcomes.at(4).cached_prompt_tokens, 4);
  EXPECT_EQ(e.prefix_cache_queries(), 76);
  EXPECT_EQ(e.prefix_cache_hits(), 16);
}

// A request that joins while a step runs waits for the next step; one arriving at a step's end
// joins the step that starts then.
TEST(ReplicaEngine, ArrivalsJoinTheNextStep) {
  auto st = make_constant_step_time(2.0);
  EngineLimits lim;
  lim.num_blocks = 100;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  e.add_request(req(1, 0.5, 4, 3), 0.5);   // steps 0.5-2.5, 2.5-4.5, 4.5-6.5
  e.add_request(req(2, 1.0, 4, 1), 1.0);   // joins the step at 2.5: first token (and end) at 4.5
  e.add_request(req(3, 4.5, 4, 1), 4.5);   // joins the step at 4.5: done at 6.5
  e.run_until(10);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(1).finish_s, 6.5);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(2).first_token_s, 4.5);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(3).finish_s, 6.5);
  EXPECT_DOUBLE_EQ(e.busy_seconds(10), 6.0);
  EXPECT_DOUBLE_EQ(e.next_step_end_s(), std::numeric_limits<double>::infinity());
}

// The front end as one FIFO server (replica_engine.h "Front end"): arrival work 0.5 s per request,
// 0.25 s more for a chat request, 0.1 s per request in a step's outputs, 0.05 s latency; steps 1 s.
// A (completions) and B (chat) sent at 0, C (completions) at 1.55; prompts 4, outputs 2.
//
//  server work          queued at  done at                  engine step (1 s)       client sees
//  A arrival 0.5        0          0.5                      1: 0.5-1.5  A prefill   A first 1.65
//  B arrival 0.75       0          1.25 (joins step 2)      2: 1.5-2.5  A dec, B pf A last 2.75, B first 2.75
//  step 1 outputs 0.1   1.5        1.6
//  C arrival 0.5        1.55       2.1 (behind step 1's)    3: 2.5-3.5  B dec, C pf B last 3.75, C first 3.75
//  step 2 outputs 0.2   2.5        2.7
//  step 3 outputs 0.2   3.5        3.7                      4: 3.5-4.5  C dec       C last 4.65
//  step 4 outputs 0.1   4.5        4.6
class FrontendStepTime final : public StepTimeModel {
 public:
  double step_seconds(const StepBatch& b) const override { return b.num_seqs > 0 ? 1.0 : 0; }
  FrontendCosts frontend() const override { return {0.05, 0.5, 0.25, 0.1}; }
};

TEST(ReplicaEngine, FrontendIsOneFifoServer) {
  const FrontendStepTime st;
  EngineLimits lim;
  lim.num_blocks = 100;
  Recorder rec;
  ReplicaEngine e(0, st, lim, rec.observer());
  Request b = req(2, 0, 4, 2);
  b.chat = true;
  e.add_request(req(1, 0, 4, 2), 0);
  e.add_request(b, 0);
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 0.5);  // A reaches the engine at 0.5
  e.start_due_step();                      // nothing is due at 0
  EXPECT_DOUBLE_EQ(e.next_step_end_s(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.outstanding(), 2);
  EXPECT_EQ(e.num_requests_waiting(), 2);  // both in the front end
  e.add_request(req(3, 1.55, 4, 2), 1.55);
  EXPECT_EQ(e.outstanding(), 3);  // A and B running, C in the front end
  EXPECT_EQ(e.num_requests_running(), 2);
  e.run_until(10);
  ASSERT_EQ(rec.steps.size(), 4u);
  const double starts[] = {0.5, 1.5, 2.5, 3.5};
  const int32_t seqs[] = {1, 2, 2, 1};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(rec.steps[i].start_s, starts[i]) << i;
    EXPECT_EQ(rec.steps[i].batch.num_seqs, seqs[i]) << i;
  }
  struct Want { uint64_t id; double first, first_delay, last, last_delay; };
  for (const Want& w : {Want{1, 1.65, 0.15, 2.75, 0.25}, Want{2, 2.75, 0.25, 3.75, 0.25}, Want{3, 3.75, 0.25, 4.65, 0.15}}) {
    SCOPED_TRACE(w.id);
    const RequestOutcome& o = rec.outcomes.at(w.id);
    EXPECT_NEAR(o.first_token_s, w.first, 1e-12);
    EXPECT_NEAR(o.first_token_frontend_s, w.first_delay, 1e-12);
    EXPECT_NEAR(o.finish_s, w.last, 1e-12);
    EXPECT_NEAR(o.frontend_s, w.last_delay, 1e-12);
  }
}

// A request still in the front end: aborted there (never reaches the engine) or evicted with the rest.
TEST(ReplicaEngine, FrontendRequestsAbortAndEvict) {
  const FrontendStepTime st;
  EngineLimits lim;
  lim.num_blocks = 100;
  Recorder rec;
  ReplicaEngine e(0, st, lim, rec.observer());
  e.add_request(req(1, 0, 4, 2), 0);  // reaches the engine at 0.5
  e.add_request(req(2, 0, 4, 2), 0);  // at 1.0
  e.add_request(req(3, 0, 4, 2), 0);  // at 1.5
  EXPECT_TRUE(e.abort(2, RequestStatus::kTimedOut, 0.2));
  EXPECT_EQ(rec.outcomes.at(2).status, RequestStatus::kTimedOut);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(2).finish_s, 0.2);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(2).first_token_s, -1);
  const std::vector<Request> out = e.evict_all(0.7);  // 1 in the engine (step 0.5-1.5), 3 in the front end
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, 1u);
  EXPECT_EQ(out[1].id, 3u);
  EXPECT_EQ(e.outstanding(), 0);
}

// next_wake_s: +infinity while idle and empty; the due time of a step not started (run_until at
// that same time does nothing); the end of the step in progress.
TEST(ReplicaEngine, NextWakeIsDueStartThenStepEnd) {
  const double inf = std::numeric_limits<double>::infinity();
  auto st = make_constant_step_time(2.0);
  EngineLimits lim;
  lim.num_blocks = 100;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  EXPECT_DOUBLE_EQ(e.next_wake_s(), inf);
  e.add_request(req(1, 0.5, 4, 2), 0.5);  // steps 0.5-2.5 (prefill, first token), 2.5-4.5
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 0.5);
  e.run_until(0.5);
  EXPECT_TRUE(rec.steps.empty());
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 0.5);
  e.run_until(1.0);
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 2.5);
  e.run_until(2.5);  // the first step ended; the next is due at 2.5
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 2.5);
  e.run_until(3.0);
  EXPECT_DOUBLE_EQ(e.next_wake_s(), 4.5);
  e.run_until(4.5);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(1).finish_s, 4.5);
  EXPECT_DOUBLE_EQ(e.next_wake_s(), inf);
}

TEST(ReplicaEngine, MaxModelLenDropsAtOnce) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;
  lim.max_model_len = 100;
  lim.num_blocks = 100;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  e.add_request(req(1, 0, 90, 11), 0);  // 101 > 100
  e.add_request(req(2, 0, 90, 10), 0);  // 100: accepted
  ASSERT_EQ(rec.outcomes.count(1), 1u);
  EXPECT_EQ(rec.outcomes.at(1).status, RequestStatus::kDropped);
  EXPECT_DOUBLE_EQ(rec.outcomes.at(1).finish_s, 0);
  EXPECT_EQ(e.outstanding(), 1);
  // 100 blocks of 16 tokens hold 1,600: prompt 1,000 + 602 outputs needs 1,601 in the cache (the
  // last output token never enters it), 101 blocks: it could never run. 601 outputs: 100 blocks.
  EngineLimits small;
  small.block_size = 16;
  small.num_blocks = 100;
  ReplicaEngine f(0, *st, small, rec.observer());
  f.add_request(req(3, 0, 1000, 602), 0);
  f.add_request(req(4, 0, 1000, 601), 0);
  EXPECT_EQ(rec.outcomes.at(3).status, RequestStatus::kDropped);
  EXPECT_EQ(rec.outcomes.count(4), 0u);
  EXPECT_EQ(f.outstanding(), 1);
  EXPECT_STREQ(request_status_name(RequestStatus::kDropped), "dropped");
  EXPECT_STREQ(request_status_name(RequestStatus::kTimedOut), "timed_out");
}

TEST(ReplicaEngine, AbortFreesBlocksAndReports) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;
  lim.block_size = 4;
  lim.num_blocks = 10;
  lim.max_num_seqs = 1;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  e.add_request(req(1, 0, 8, 10), 0);  // running: 2 blocks after step 1, 3 once its 9th token is in
  e.add_request(req(2, 0, 8, 10), 0);  // waiting (max_num_seqs 1)
  e.run_until(2.5);                    // steps 0-1 (prefill), 1-2 (decode), 2-3 in progress
  EXPECT_EQ(e.num_requests_running(), 1);
  EXPECT_EQ(e.num_requests_waiting(), 1);
  EXPECT_DOUBLE_EQ(e.kv_cache_usage(), 0.3);  // 10 tokens allocated for step 3: 3 blocks
  EXPECT_TRUE(e.abort(1, RequestStatus::kTimedOut, 2.5));
  EXPECT_FALSE(e.abort(99, RequestStatus::kTimedOut, 2.5));
  const RequestOutcome& a = rec.outcomes.at(1);
  EXPECT_EQ(a.status, RequestStatus::kTimedOut);
  EXPECT_DOUBLE_EQ(a.finish_s, 2.5);
  EXPECT_EQ(a.generated_tokens, 2);  // tokens at 1 and 2
  EXPECT_DOUBLE_EQ(e.kv_cache_usage(), 0);
  // The step in progress still ends at 3 (its work for request 1 is discarded); request 2 starts then.
  e.run_until(3.5);
  EXPECT_EQ(e.num_requests_running(), 1);
  EXPECT_EQ(e.num_requests_waiting(), 0);
  EXPECT_DOUBLE_EQ(e.busy_seconds(3.5), 3.5);
}

TEST(ReplicaEngine, EvictAllReturnsRequestsInArrivalOrder) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;
  lim.num_blocks = 100;
  lim.max_num_seqs = 2;
  Recorder rec;
  ReplicaEngine e(0, *st, lim, rec.observer());
  e.add_request(req(5, 0, 8, 10), 0);
  e.add_request(req(6, 0.2, 8, 10), 0.2);
  e.add_request(req(7, 0.4, 8, 10), 0.4);
  e.run_until(1.5);  // step 0-1: request 5; step 1-2: 5 and 6 (7 waits: max_num_seqs 2)
  std::vector<Request> out = e.evict_all(1.5);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].id, 5u);
  EXPECT_EQ(out[1].id, 6u);
  EXPECT_EQ(out[2].id, 7u);
  EXPECT_EQ(out[0].prompt_tokens, 8);
  EXPECT_TRUE(rec.outcomes.empty());
  EXPECT_EQ(e.outstanding(), 0);
  EXPECT_DOUBLE_EQ(e.kv_cache_usage(), 0);
  EXPECT_DOUBLE_EQ(e.busy_seconds(5), 1.5);  // the abandoned step counts up to 1.5
  EXPECT_DOUBLE_EQ(e.next_step_end_s(), std::numeric_limits<double>::infinity());
}

// The pure-decode fast path changes nothing: a random load (seed 5) with preemptions, prefix hits,
// aborts and an eviction gives the same steps and outcomes with it on and off.
std::vector<std::string> run_random_load(bool fast, int32_t block_size) {
  class Affine final : public StepTimeModel {
   public:
    double step_seconds(const StepBatch& b) const override {
      return 0.01 + 1e-4 * b.prefill_tokens + 1e-6 * static_cast<double>(b.context_tokens) + 1e-3 * b.num_seqs;
    }
  } st;
  EngineLimits lim;
  lim.max_num_seqs = 12;
  lim.max_num_batched_tokens = 64;
  lim.block_size = block_size;
  lim.num_blocks = 120;
  lim.enable_prefix_caching = true;
  std::vector<std::string> log;
  ReplicaEngine::Observer o;
  o.on_outcome = [&](const RequestOutcome& x) {
    log.push_back("out " + std::to_string(x.id) + " " + request_status_name(x.status) + " " + std::to_string(x.first_token_s) + " " +
                  std::to_string(x.finish_s) + " " + std::to_string(x.generated_tokens) + " " + std::to_string(x.cached_prompt_tokens) + " " +
                  std::to_string(x.preemptions));
  };
  o.on_step = [&](const StepRecord& s) {
    log.push_back("step " + std::to_string(s.start_s) + " " + std::to_string(s.end_s) + " " + std::to_string(s.batch.num_seqs) + " " +
                  std::to_string(s.batch.decode_tokens) + " " + std::to_string(s.batch.prefill_tokens) + " " +
                  std::to_string(s.batch.context_tokens) + " " + std::to_string(s.batch.prefill_attention_token_pairs) + " " +
                  std::to_string(s.num_running) + " " + std::to_string(s.num_waiting) + " " + std::to_string(s.blocks_used) + " " +
                  std::to_string(s.preempted));
  };
  EngineOptions options;
  options.decode_fast_path = fast;
  ReplicaEngine e(0, st, lim, o, options);
  std::mt19937_64 g(5);
  double t = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    t += static_cast<double>(g() % 1000) * 1e-4;
    const uint32_t family = static_cast<uint32_t>(g() % 4);
    e.add_request(req(i, t, 1 + static_cast<int32_t>(g() % 40), 1 + static_cast<int32_t>(g() % 60), {family, family * 10 + 1}, 8), t);
    if (i % 97 == 0) e.abort(i - 3, RequestStatus::kTimedOut, t);
    if (i == 1000) {
      for (const Request& r : e.evict_all(t)) log.push_back("evicted " + std::to_string(r.id));
    }
  }
  e.run_until(1e9);
  log.push_back("busy " + std::to_string(e.busy_seconds(1e9)) + " queries " + std::to_string(e.prefix_cache_queries()) + " hits " +
                std::to_string(e.prefix_cache_hits()));
  return log;
}

void expect_fast_path_exact(int32_t block_size) {
  const std::vector<std::string> slow = run_random_load(false, block_size);
  const std::vector<std::string> fast = run_random_load(true, block_size);
  ASSERT_EQ(slow.size(), fast.size());
  for (size_t i = 0; i < slow.size(); ++i) ASSERT_EQ(slow[i], fast[i]) << "line " << i;
  size_t preempted = 0, timed_out = 0, evicted = 0;
  for (const std::string& l : slow) {
    if (l.rfind("step", 0) == 0 && l.back() != '0') ++preempted;
    if (l.find("timed_out") != std::string::npos) ++timed_out;
    if (l.rfind("evicted", 0) == 0) ++evicted;
  }
  // The load exercises preemption, aborts, an eviction and prefix hits.
  EXPECT_GT(preempted, 0u);
  EXPECT_GT(timed_out, 0u);
  EXPECT_GT(evicted, 0u);
  EXPECT_EQ(slow.back().find(" hits 0"), std::string::npos) << slow.back();
}

// Blocks of 4 tokens (a mask) and of 3 (a division, with the fast path's lagging counters negative).
TEST(ReplicaEngine, DecodeFastPathIsExact) {
  {
    SCOPED_TRACE("block size 4");
    expect_fast_path_exact(4);
  }
  SCOPED_TRACE("block size 3");
  expect_fast_path_exact(3);
}

TEST(ReplicaEngine, RejectsNonPositiveLimits) {
  auto st = make_constant_step_time(1.0);
  EngineLimits lim;  // num_blocks 0
  EXPECT_THROW(ReplicaEngine(0, *st, lim, {}), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::inference
