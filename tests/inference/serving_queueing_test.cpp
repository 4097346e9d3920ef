// The replica engine and the router against queueing theory where it is exact.
//  (a) M/D/1: one replica, max_num_seqs 1, a constant step time D, requests of one output token
//      (one step each), Poisson arrivals: the mean wait (step start - arrival) against
//      Pollaczek-Khinchine Wq = rho D / (2 (1 - rho)).
//  (b) M/M/c: c = 4 replicas behind the router with max_outstanding_per_replica 1 (requests queue
//      centrally, FIFO), exponential step times of mean 1, one-step requests: the mean wait and
//      P(wait > 0) against Erlang C.
// Seeds: arrivals std::mt19937_64(1001 + case), service times std::mt19937_64(2002 + case). Each case
// simulates at least 10^6 requests; the tolerance is 2% (the bound); each error is printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "inference/deployment.h"
#include "inference/replica_engine.h"

namespace gpufleet::inference {
namespace {

// Exponential variate of rate `rate` from 53 random bits (portable, unlike std::exponential_distribution).
double exponential(std::mt19937_64& g, double rate) {
  const double u = static_cast<double>(g() >> 11) * 0x1.0p-53;
  return -std::log1p(-u) / rate;
}

Request one_step_request(uint64_t id, double t) {
  Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = 1;
  r.output_tokens = 1;
  return r;
}

EngineLimits one_at_a_time() {
  EngineLimits lim;
  lim.max_num_seqs = 1;
  lim.num_blocks = 16;
  return lim;
}

// A test step-time model: each step draws an exponential duration of mean 1 from its own generator.
class ExponentialStepTime final : public StepTimeModel {
 public:
  explicit ExponentialStepTime(uint64_t seed) : g_(seed) {}
  double step_seconds(const StepBatch&) const override { return exponential(g_, 1.0); }

 private:
  mutable std::mt19937_64 g_;
};

void md1(double rho, int index) {
  const double d = 1.0;
  const int64_t n = 1'000'000;
  auto st = make_constant_step_time(d);
  double pending_arrival = 0;
  double sum_wait = 0;
  int64_t steps = 0;
  ReplicaEngine::Observer obs;
  obs.on_outcome = [&](const RequestOutcome& o) { pending_arrival = o.arrival_s; };
  obs.on_step = [&](const StepRecord& s) {  // one request per step: its wait is the step's start - arrival
    sum_wait += s.start_s - pending_arrival;
    ++steps;
  };
  ReplicaEngine e(0, *st, one_at_a_time(), obs);
  std::mt19937_64 g(1001 + index);
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    t += exponential(g, rho / d);
    e.add_request(one_step_request(static_cast<uint64_t>(i), t), t);
  }
  e.run_until(std::numeric_limits<double>::infinity());
  ASSERT_EQ(steps, n);
  const double wq = sum_wait / static_cast<double>(n);
  const double theory = rho * d / (2 * (1 - rho));
  const double err = (wq - theory) / theory;
  std::printf("M/D/1 rho %.1f: %lld requests, mean wait %.5f s, Pollaczek-Khinchine %.5f s, error %+.3f%%\n", rho,
              static_cast<long long>(n), wq, theory, 100 * err);
  EXPECT_NEAR(err, 0, 0.02);
}

TEST(ServingQueueing, MD1MatchesPollaczekKhinchineAtRho05) { md1(0.5, 0); }
TEST(ServingQueueing, MD1MatchesPollaczekKhinchineAtRho08) { md1(0.8, 1); }

// Erlang C with c servers, offered load a = lambda / mu, rho = a / c.
struct ErlangC {
  double p_wait, wq;
};
ErlangC erlang_c(int c, double lambda, double mu) {
  const double a = lambda / mu, rho = a / c;
  double term = 1, sum = 0;  // a^k / k!
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double top = term / (1 - rho);  // a^c / c! / (1 - rho)
  const double p = top / (sum + top);
  return {p, p / (c * mu - lambda)};
}

void mmc(double rho, int index, int64_t n) {
  const int c = 4;
  const double mu = 1.0, lambda = rho * c * mu;
  std::vector<std::unique_ptr<ExponentialStepTime>> models;
  RouterConfig rc;
  rc.max_outstanding_per_replica = 1;
  std::vector<double> finished_arrival(c, 0);
  double sum_wait = 0;
  int64_t waited = 0, served = 0;
  Deployment::Observer obs;
  obs.on_outcome = [&](const RequestOutcome& o) { finished_arrival[static_cast<size_t>(o.replica)] = o.arrival_s; };
  obs.on_step = [&](int32_t r, const StepRecord& s) {
    const double w = s.start_s - finished_arrival[static_cast<size_t>(r)];
    sum_wait += w;
    waited += w > 0;
    ++served;
  };
  Deployment dep(rc, obs);
  for (int r = 0; r < c; ++r) {
    // One generator shared by the replicas would make their service times depend on the step order;
    // one each is as exponential and independent.
    models.push_back(std::make_unique<ExponentialStepTime>(2002 + 10 * index + r));
    dep.add_replica(0, *models.back(), one_at_a_time());
  }
  std::mt19937_64 g(1001 + index);
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    t += exponential(g, lambda);
    dep.submit(one_step_request(static_cast<uint64_t>(i), t), t);
  }
  dep.advance_to(t + 1e6);
  ASSERT_EQ(served, n);
  const ErlangC th = erlang_c(c, lambda, mu);
  const double wq = sum_wait / static_cast<double>(n);
  const double pw = static_cast<double>(waited) / static_cast<double>(n);
  const double err_w = (wq - th.wq) / th.wq, err_p = (pw - th.p_wait) / th.p_wait;
  std::printf("M/M/%d rho %.1f: %lld requests, mean wait %.5f s vs Erlang C %.5f s (%+.3f%%), P(wait>0) %.5f vs %.5f (%+.3f%%)\n",
              c, rho, static_cast<long long>(n), wq, th.wq, 100 * err_w, pw, th.p_wait, 100 * err_p);
  EXPECT_NEAR(err_w, 0, 0.02);
  EXPECT_NEAR(err_p, 0, 0.02);
}

TEST(ServingQueueing, MMcMatchesErlangCAtRho07) { mmc(0.7, 0, 1'000'000); }
TEST(ServingQueueing, MMcMatchesErlangCAtRho09) { mmc(0.9, 1, 2'000'000); }

// The formula itself, against a textbook value: c = 2, a = 1 (rho 0.5): P(wait) = 1/3, Wq = 1/3 for mu 1.
TEST(ServingQueueing, ErlangCFormula) {
  const ErlangC e = erlang_c(2, 1.0, 1.0);
  EXPECT_NEAR(e.p_wait, 1.0 / 3, 1e-12);
  EXPECT_NEAR(e.wq, 1.0 / 3, 1e-12);
}

}  // namespace
}  // namespace gpufleet::inference
