// The scheduler (src/inference/scheduler.h) on its own, plan by plan: chunked prefill, admission,
// a preemption (the newest running request, to the front of waiting, nothing admitted that step),
// recompute, the pure-decode plans of the fast path, and an abort in the middle of one. Expected
// values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <vector>

#include "inference/kv_cache_manager.h"
#include "inference/scheduler.h"

namespace gpufleet::inference {
namespace {

Request req(uint64_t id, int32_t prompt, int32_t output) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

EngineLimits tiny() {
  EngineLimits lim;
  lim.max_num_seqs = 4;
  lim.max_num_batched_tokens = 8;
  lim.block_size = 4;
  lim.num_blocks = 5;
  return lim;
}

// (request id, tokens) of a plan's scheduled requests.
std::vector<std::pair<uint64_t, int32_t>> scheduled(const StepPlan& p) {
  std::vector<std::pair<uint64_t, int32_t>> out;
  for (const ScheduledRequest& s : p.scheduled) out.emplace_back(s.request_id, s.num_tokens);
  return out;
}

using S = std::vector<std::pair<uint64_t, int32_t>>;

// Blocks of 4 tokens, 5 blocks, 8 tokens a step. A (id 1): prompt 10, 4 outputs; B (id 2): prompt
// 6, 4 outputs; both waiting. Without the fast path:
//  plan 1: A 8 (a chunk; the budget is spent)                    blocks 2
//  plan 2: A 2 (prompt done), B 6 admitted                       blocks 3 + 2 = 5; first tokens
//  plan 3: A 1, B 1 (decodes; 11 and 7 tokens fit their blocks)  blocks 5
//  plan 4: A 1, B 1 (12 and 8 tokens)                            blocks 5
//  plan 5: A needs a 4th block, none free: B (the newest) is preempted, its 2 blocks freed; A 1;
//          nothing admitted (the step preempted). A's 4th token: finished.      blocks 4
//  plan 6: B admitted again, 6 + 3 = 9 tokens to recompute: a chunk of 8        blocks 2
//  plan 7: B 1: recompute done, its 4th token: finished (first token still from plan 2).
TEST(Scheduler, PlansChunksAdmissionsAndAPreemption) {
  KvCacheManager kv(4, 5, false);
  Scheduler s(tiny(), kv, /*decode_fast_path=*/false);
  s.add_request(req(1, 10, 4));
  s.add_request(req(2, 6, 4));
  struct Want { S scheduled; int32_t admitted; std::vector<uint64_t> preempted; int64_t blocks; int32_t running, waiting; };
  const std::vector<Want> want = {
      {{{1, 8}}, 1, {}, 2, 1, 1},
      {{{1, 2}, {2, 6}}, 1, {}, 5, 2, 0},
      {{{1, 1}, {2, 1}}, 0, {}, 5, 2, 0},
      {{{1, 1}, {2, 1}}, 0, {}, 5, 2, 0},
      {{{1, 1}}, 0, {2}, 4, 1, 1},
      {{{2, 8}}, 1, {}, 2, 1, 0},
      {{{2, 1}}, 0, {}, 3, 1, 0},
  };
  std::vector<RequestOutcome> done;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i + 1);
    const StepPlan& p = s.schedule();
    EXPECT_FALSE(p.decode_all);
    EXPECT_EQ(scheduled(p), want[i].scheduled);
    EXPECT_EQ(p.num_admitted, want[i].admitted);
    EXPECT_EQ(p.preempted, want[i].preempted);
    EXPECT_EQ(p.blocks_used, want[i].blocks);
    EXPECT_EQ(p.num_running, want[i].running);
    EXPECT_EQ(p.num_waiting, want[i].waiting);
    for (const RequestOutcome& o : s.update_from_output(p, static_cast<double>(i + 1))) done.push_back(o);
  }
  EXPECT_FALSE(s.has_work());
  EXPECT_TRUE(s.schedule().empty());
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, 1u);
  EXPECT_DOUBLE_EQ(done[0].first_token_s, 2);
  EXPECT_DOUBLE_EQ(done[0].finish_s, 5);
  EXPECT_EQ(done[0].generated_tokens, 4);
  EXPECT_EQ(done[1].id, 2u);
  EXPECT_DOUBLE_EQ(done[1].first_token_s, 2);
  EXPECT_DOUBLE_EQ(done[1].finish_s, 7);
  EXPECT_EQ(done[1].preemptions, 1);
  EXPECT_EQ(done[0].status, RequestStatus::kFinished);
  EXPECT_EQ(kv.num_used_blocks(), 0);
}

// The same load with the fast path: plans 3 and 4 are pure decodes (both decode, none finishes, no
// block needed: 10 and 6 tokens are 2 mod 4), planned as decode_all with the same batch (2
// sequences, 2 decode tokens, context 10 + 6 = 16, then 18). Plan 5 (A would finish) goes through
// the general path, with the counters caught up: the same preemption and outcomes.
TEST(Scheduler, DecodeAllPlansAreTheGeneralPlansInShort) {
  KvCacheManager kv(4, 5, false);
  Scheduler s(tiny(), kv);
  s.add_request(req(1, 10, 4));
  s.add_request(req(2, 6, 4));
  std::vector<RequestOutcome> done;
  for (int step = 1; step <= 7; ++step) {
    SCOPED_TRACE(step);
    const StepPlan& p = s.schedule();
    EXPECT_EQ(p.decode_all, step == 3 || step == 4);
    if (p.decode_all) {
      EXPECT_TRUE(p.scheduled.empty());
      EXPECT_EQ(p.batch.num_seqs, 2);
      EXPECT_EQ(p.batch.decode_tokens, 2);
      EXPECT_EQ(p.batch.context_tokens, step == 3 ? 16 : 18);
      EXPECT_EQ(p.blocks_used, 5);
    }
    if (step == 5) {
      EXPECT_EQ(scheduled(p), (S{{1, 1}}));
      EXPECT_EQ(p.preempted, (std::vector<uint64_t>{2}));
      EXPECT_EQ(p.batch.context_tokens, 12);  // A's counters caught up: 10 + 2 decodes
    }
    for (const RequestOutcome& o : s.update_from_output(p, step)) done.push_back(o);
  }
  ASSERT_EQ(done.size(), 2u);
  EXPECT_DOUBLE_EQ(done[0].finish_s, 5);
  EXPECT_DOUBLE_EQ(done[1].finish_s, 7);
  EXPECT_EQ(done[1].preemptions, 1);
}

// An abort in the middle of a decode_all step: the plan is written out (A and B, 1 token each),
// B leaves it, its blocks are freed (3 + 2 held: 3 left); the step then applies to A alone. A
// waiting request is aborted from the queue.
TEST(Scheduler, FinishRequestInTheMiddleOfAStep) {
  KvCacheManager kv(4, 5, false);
  EngineLimits lim = tiny();
  lim.max_num_seqs = 2;
  Scheduler s(lim, kv);
  s.add_request(req(1, 10, 4));
  s.add_request(req(2, 6, 4));
  s.add_request(req(3, 4, 1));
  s.update_from_output(s.schedule(), 1);
  s.update_from_output(s.schedule(), 2);
  const StepPlan& p = s.schedule();
  ASSERT_TRUE(p.decode_all);  // 2 running (max_num_seqs): request 3 cannot be admitted
  const std::optional<RequestOutcome> b = s.finish_request(2, RequestStatus::kTimedOut, 2.5);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->status, RequestStatus::kTimedOut);
  EXPECT_EQ(b->generated_tokens, 1);
  EXPECT_DOUBLE_EQ(b->finish_s, 2.5);
  EXPECT_FALSE(p.decode_all);
  EXPECT_EQ(scheduled(p), (S{{1, 1}}));
  EXPECT_EQ(kv.num_used_blocks(), 3);
  const int32_t a = p.scheduled[0].slot;
  EXPECT_TRUE(s.update_from_output(p, 3).empty());
  EXPECT_EQ(s.state(a).generated, 2);
  EXPECT_EQ(s.state(a).computed, 11);
  const std::optional<RequestOutcome> c = s.finish_request(3, RequestStatus::kTimedOut, 3);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->generated_tokens, 0);
  EXPECT_FALSE(s.finish_request(99, RequestStatus::kTimedOut, 3).has_value());
  EXPECT_EQ(s.num_running(), 1);
  EXPECT_EQ(s.num_waiting(), 0);
}

}  // namespace
}  // namespace gpufleet::inference
