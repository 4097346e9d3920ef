// The deployment (src/inference/deployment.h): routing policies, flow control at the router,
// requests held while no replica is ready, timeouts, a replica leaving, GPU time-slice groups.
// Every replica here steps in 1 s (constant step time), so a request of k output tokens takes k
// steps once it runs alone.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "inference/deployment.h"

namespace gpufleet::inference {
namespace {

Request req(uint64_t id, double t, int32_t output, std::vector<uint32_t> hashes = {}) {
  Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = 4;
  r.output_tokens = output;
  r.prefix_hashes = std::move(hashes);
  return r;
}

EngineLimits limits() {
  EngineLimits lim;
  lim.num_blocks = 1000;
  return lim;
}

struct Fixture {
  std::unique_ptr<StepTimeModel> st = make_constant_step_time(1.0);
  std::map<uint64_t, RequestOutcome> out;
  Deployment dep;
  explicit Fixture(RouterConfig rc)
      : dep(rc, Deployment::Observer{[this](const RequestOutcome& o) { out[o.id] = o; }, nullptr}) {}
};

TEST(Deployment, LeastOutstandingTiesGoToTheLowestId) {
  Fixture f({});
  for (int i = 0; i < 3; ++i) f.dep.add_replica(0, *f.st, limits());
  // Outstanding (0,0,0) -> 0; (1,0,0) -> 1; (1,1,0) -> 2; (1,1,1) -> 0.
  for (uint64_t i = 0; i < 4; ++i) f.dep.submit(req(100 + i, 0, 2), 0);
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(100).replica, 0);
  EXPECT_EQ(f.out.at(101).replica, 1);
  EXPECT_EQ(f.out.at(102).replica, 2);
  EXPECT_EQ(f.out.at(103).replica, 0);
  EXPECT_DOUBLE_EQ(f.out.at(103).finish_s, 2);  // batched with request 100: steps 0-1, 1-2
  EXPECT_STREQ(routing_policy_name(RoutingPolicy::kLeastOutstanding), "least-outstanding");
}

TEST(Deployment, RoundRobinIgnoresLoad) {
  RouterConfig rc;
  rc.policy = RoutingPolicy::kRoundRobin;
  Fixture f(rc);
  for (int i = 0; i < 2; ++i) f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 10), 0);    // -> 0
  f.dep.submit(req(2, 0.5, 1), 0.5);  // -> 1, done at 1.5
  f.dep.submit(req(3, 2, 1), 2);      // -> 0 although 0 is busy and 1 idle
  f.dep.submit(req(4, 2, 1), 2);      // -> 1
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(1).replica, 0);
  EXPECT_EQ(f.out.at(2).replica, 1);
  EXPECT_EQ(f.out.at(3).replica, 0);
  EXPECT_EQ(f.out.at(4).replica, 1);
  EXPECT_DOUBLE_EQ(f.out.at(3).finish_s, 3);  // joins replica 0's step 2-3
}

TEST(Deployment, PrefixAffinityFollowsTheLongestServedChain) {
  RouterConfig rc;
  rc.policy = RoutingPolicy::kPrefixAffinity;
  Fixture f(rc);
  for (int i = 0; i < 2; ++i) f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 10, {1, 2}), 0);     // nothing served yet: least outstanding -> 0
  f.dep.submit(req(2, 0, 10, {3}), 0);        // no match -> least outstanding (1 vs 0) -> 1
  f.dep.submit(req(3, 0, 10, {3, 4}), 0);     // chain {3} served by 1 -> 1 (load 2 vs 1)
  f.dep.submit(req(4, 0, 10, {1, 2, 9}), 0);  // chain {1, 2} served by 0 -> 0
  f.dep.submit(req(5, 0, 10, {7}), 0);        // no match: least outstanding (2, 2) -> 0
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(1).replica, 0);
  EXPECT_EQ(f.out.at(2).replica, 1);
  EXPECT_EQ(f.out.at(3).replica, 1);
  EXPECT_EQ(f.out.at(4).replica, 0);
  EXPECT_EQ(f.out.at(5).replica, 0);
}

// The guards: a chain covering 0.3 or less of the hashes, or replicas out of balance (here more than
// 2 requests apart and a factor above 1.5), fall back to least outstanding.
TEST(Deployment, PrefixAffinityGuards) {
  RouterConfig rc;
  rc.policy = RoutingPolicy::kPrefixAffinity;
  rc.prefix_affinity_balance_abs = 2;
  Fixture f(rc);
  for (int i = 0; i < 2; ++i) f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 10, {1, 2}), 0);         // -> 0
  f.dep.submit(req(2, 0, 10, {1, 50, 51, 52}), 0);  // 1 of 4 matched (0.25): least outstanding -> 1
  f.dep.submit(req(3, 0, 10, {1, 2}), 0);         // loads (1, 1): chain {1, 2} only on 0 -> 0
  f.dep.submit(req(4, 0, 10, {1, 2}), 0);         // loads (2, 1): -> 0
  f.dep.submit(req(5, 0, 10, {1, 2}), 0);         // loads (3, 1): 3 - 1 = 2, not above 2: -> 0
  f.dep.submit(req(6, 0, 10, {1, 2}), 0);         // loads (4, 1): 3 > 2 and 4 > 1.5: least outstanding -> 1
  f.dep.finish(100);
  const int32_t want[] = {0, 1, 0, 0, 0, 1};
  for (uint64_t i = 1; i <= 6; ++i) EXPECT_EQ(f.out.at(i).replica, want[i - 1]) << i;
}

TEST(Deployment, FlowControlHoldsRequestsAtTheRouterInOrder) {
  RouterConfig rc;
  rc.max_outstanding_per_replica = 1;
  Fixture f(rc);
  f.dep.add_replica(0, *f.st, limits());
  for (uint64_t i = 0; i < 3; ++i) f.dep.submit(req(i, 0, 1), 0);
  EXPECT_EQ(f.dep.router_queue_length(), 2);
  EXPECT_EQ(f.dep.num_requests_waiting(), 1);  // in the replica, its step not started yet
  f.dep.advance_to(0.5);
  EXPECT_EQ(f.dep.num_requests_running(), 1);
  f.dep.advance_to(10);
  EXPECT_DOUBLE_EQ(f.out.at(0).finish_s, 1);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 2);  // dispatched at 1 when request 0 left
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 3);
  EXPECT_EQ(f.dep.router_queue_length(), 0);
}

TEST(Deployment, RequestsWaitForTheFirstReplica) {
  Fixture f({});
  f.dep.submit(req(1, 0, 1), 0);
  f.dep.advance_to(5);
  EXPECT_EQ(f.dep.router_queue_length(), 1);
  EXPECT_EQ(f.dep.ready_replicas(), 0);
  EXPECT_DOUBLE_EQ(f.dep.kv_cache_usage_mean(), 0);
  f.dep.add_replica(5, *f.st, limits());
  f.dep.advance_to(10);
  EXPECT_DOUBLE_EQ(f.out.at(1).ttft_s(), 6);
}

// Timeout 2.5 s, one replica, flow control 1. Requests 0, 1, 2 at 0 (2 tokens each), 3 at 2 (1 token).
//  0: runs 0-2, finished at 2.
//  1: dispatched at 2, prefill step 2-3 in progress at its deadline 2.5: aborted in the replica.
//  2: still at the router at its deadline 2.5 (1 leaves at the same instant, 2 expires first): timed out there.
//  3: dispatched at 2.5, joins the step at 3, done at 4 (deadline 4.5).
TEST(Deployment, TimeoutsAbortRequestsWhereverTheyAre) {
  RouterConfig rc;
  rc.max_outstanding_per_replica = 1;
  rc.request_timeout_s = 2.5;
  Fixture f(rc);
  f.dep.add_replica(0, *f.st, limits());
  for (uint64_t i = 0; i < 3; ++i) f.dep.submit(req(i, 0, 2), 0);
  f.dep.submit(req(3, 2, 1), 2);
  f.dep.advance_to(10);
  EXPECT_EQ(f.out.at(0).status, RequestStatus::kFinished);
  EXPECT_DOUBLE_EQ(f.out.at(0).finish_s, 2);
  EXPECT_EQ(f.out.at(1).status, RequestStatus::kTimedOut);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 2.5);
  EXPECT_EQ(f.out.at(1).replica, 0);
  EXPECT_EQ(f.out.at(1).generated_tokens, 0);
  EXPECT_EQ(f.out.at(2).status, RequestStatus::kTimedOut);
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 2.5);
  EXPECT_EQ(f.out.at(2).replica, -1);
  EXPECT_EQ(f.out.at(3).status, RequestStatus::kFinished);
  EXPECT_DOUBLE_EQ(f.out.at(3).finish_s, 4);
}

// Two replicas; a (5 tokens) -> 0, b (5 tokens) -> 1 at 0. Replica 0 leaves at 2.5: a goes back to
// the router and to replica 1, joins its step at 3 and starts over: first token 4, done at 8. b is
// done at 5. Busy: replica 0 0-2.5, replica 1 0-8.
TEST(Deployment, RemoveReplicaRequeuesItsRequests) {
  Fixture f({});
  f.dep.add_replica(0, *f.st, limits());
  f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 5), 0);
  f.dep.submit(req(2, 0, 5), 0);
  f.dep.remove_replica(0, 2.5);
  EXPECT_EQ(f.dep.ready_replicas(), 1);
  EXPECT_EQ(f.dep.num_requests_waiting(), 1);
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(1).replica, 1);
  EXPECT_DOUBLE_EQ(f.out.at(1).first_token_s, 4);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 8);
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 5);
  EXPECT_DOUBLE_EQ(f.dep.busy_seconds(100), 2.5 + 8);
  EXPECT_THROW(f.dep.remove_replica(0, 100), std::invalid_argument);
  int32_t id = f.dep.add_replica(100, *f.st, limits());
  EXPECT_EQ(id, 2);  // ids are never reused
}

TEST(Deployment, DrainFinishesInFlightRequests) {
  // Steps of 1 s; r1 -> replica 0, r2 -> replica 1, each 5 tokens: first token at 1, done at 5.
  // Draining replica 0 at 2.5 with 10 s to go: it takes no new request, finishes r1 at 5 and leaves.
  Fixture f({});
  f.dep.add_replica(0, *f.st, limits());
  f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 5), 0);
  f.dep.submit(req(2, 0, 5), 0);
  f.dep.drain_replica(0, 2.5, 10);
  EXPECT_EQ(f.dep.ready_replicas(), 1);
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(1).replica, 0);
  EXPECT_EQ(f.out.at(1).status, RequestStatus::kFinished);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 5);
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 5);
  EXPECT_DOUBLE_EQ(f.dep.busy_seconds(100), 5 + 5);
}

TEST(Deployment, DrainDeadlineRequeuesWhatIsLeft) {
  // As above with 1.5 s to go: at 4 r1 (4 tokens out) is taken back and starts over on replica 1,
  // joining the step that starts at 4 with r2's last decode: first token at 5, done at 9.
  Fixture f({});
  f.dep.add_replica(0, *f.st, limits());
  f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 5), 0);
  f.dep.submit(req(2, 0, 5), 0);
  f.dep.drain_replica(0, 2.5, 1.5);
  f.dep.finish(100);
  EXPECT_EQ(f.out.at(1).replica, 1);
  EXPECT_DOUBLE_EQ(f.out.at(1).first_token_s, 5);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 9);
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 5);
  EXPECT_DOUBLE_EQ(f.dep.busy_seconds(100), 4 + 9);
  // A zero timeout is remove_replica (vLLM's default --shutdown-timeout 0).
  Fixture g({});
  g.dep.add_replica(0, *g.st, limits());
  g.dep.add_replica(0, *g.st, limits());
  g.dep.submit(req(1, 0, 5), 0);
  g.dep.submit(req(2, 0, 5), 0);
  g.dep.drain_replica(0, 2.5, 0);
  g.dep.finish(100);
  EXPECT_DOUBLE_EQ(g.out.at(1).finish_s, 8);  // as RemoveReplicaRequeuesItsRequests
  EXPECT_THROW(g.dep.drain_replica(0, 100, 5), std::invalid_argument);
}

TEST(Deployment, FinishEndsWhatIsInFlight) {
  RouterConfig rc;
  rc.max_outstanding_per_replica = 1;
  Fixture f(rc);
  f.dep.add_replica(0, *f.st, limits());
  f.dep.submit(req(1, 0, 10), 0);
  f.dep.submit(req(2, 0, 10), 0);
  f.dep.finish(3.5);
  EXPECT_EQ(f.out.at(1).status, RequestStatus::kTimedOut);
  EXPECT_EQ(f.out.at(1).generated_tokens, 3);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 3.5);
  EXPECT_EQ(f.out.at(2).status, RequestStatus::kTimedOut);
  EXPECT_EQ(f.out.at(2).replica, -1);
  EXPECT_EQ(f.dep.router_queue_length(), 0);
  EXPECT_EQ(f.dep.num_requests_running(), 0);
}

// Two replicas time-slicing one GPU (group 0, switch fraction 0.1): while both have work a step
// takes 1 x (1 + 0.1) x 2 = 2.2 s; alone, 1 s.
TEST(Deployment, TimeSlicedReplicasShareTheGpu) {
  Fixture f({});
  f.dep.add_replica(0, *f.st, limits(), 0, 0.1);
  f.dep.add_replica(0, *f.st, limits(), 0, 0.1);
  f.dep.submit(req(1, 0, 2), 0);  // -> 0
  f.dep.submit(req(2, 0, 2), 0);  // -> 1
  f.dep.submit(req(3, 10, 1), 10);  // -> 0, alone
  f.dep.advance_to(20);
  EXPECT_DOUBLE_EQ(f.out.at(1).first_token_s, 2.2);
  EXPECT_DOUBLE_EQ(f.out.at(1).finish_s, 4.4);
  EXPECT_DOUBLE_EQ(f.out.at(2).finish_s, 4.4);
  EXPECT_DOUBLE_EQ(f.out.at(3).finish_s, 11);
  EXPECT_DOUBLE_EQ(f.dep.busy_seconds(20), 4.4 * 2 + 1);
}

}  // namespace
}  // namespace gpufleet::inference
