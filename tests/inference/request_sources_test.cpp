// Request sources (inference/request_sources.h): trace replay with time_scale, rate_multiplier and a
// window; the diurnal generator's rate, shape and determinism; the token-length fits; the statistics.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "inference/request_sources.h"
#include "util/go_rand.h"

namespace gpufleet::inference {
namespace {

Request req(double arrival_s, int32_t prompt = 10, int32_t output = 5) {
  Request r;
  r.arrival_s = arrival_s;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

std::vector<Request> replay(std::vector<Request> trace, const TraceReplayOptions& o) {
  TraceSource source(std::move(trace), o);
  return drain(source);
}

std::vector<double> arrivals(const std::vector<Request>& r) {
  std::vector<double> out;
  for (const Request& q : r) out.push_back(q.arrival_s);
  return out;
}

void expect_sorted_with_ids(const std::vector<Request>& r) {
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].id, i);
    if (i > 0) {
      EXPECT_LE(r[i - 1].arrival_s, r[i].arrival_s) << "at " << i;
    }
  }
}

// ---- TraceSource --------------------------------------------------------------------------------

TEST(TraceSource, TimeScaleMultipliesArrivals) {
  TraceReplayOptions o;
  o.time_scale = 0.5;
  const auto r = replay({req(0, 1, 2), req(1, 3, 4), req(3, 5, 6)}, o);
  EXPECT_EQ(arrivals(r), (std::vector<double>{0, 0.5, 1.5}));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].prompt_tokens, 5);
  EXPECT_EQ(r[2].output_tokens, 6);
  expect_sorted_with_ids(r);
}

TEST(TraceSource, WindowKeepsItsRequestsAndStartsThemAtZero) {
  TraceReplayOptions o;
  o.window_start_s = 1;
  o.window_end_s = 3;
  EXPECT_EQ(arrivals(replay({req(0), req(1), req(2.5), req(3)}, o)), (std::vector<double>{0, 1.5}));
  o.window_end_s = 100;
  o.time_scale = 2;
  EXPECT_EQ(arrivals(replay({req(0), req(1), req(2.5), req(3)}, o)), (std::vector<double>{0, 3, 4}));
  // A delay comes after the shift and the scale: (1 - 1) x 2 + 300, (2.5 - 1) x 2 + 300, ...
  o.delay_s = 300;
  EXPECT_EQ(arrivals(replay({req(0), req(1), req(2.5), req(3)}, o)), (std::vector<double>{300, 303, 304}));
}

TEST(TraceSource, WholeMultiplierCopiesEachRequestIntoTheGapToTheNextArrival) {
  // Times 0, 0, 10, 20: distinct times 0, 10, 20, mean gap 10, so the copies of the two requests at 0
  // fall in [0, 10), of the one at 10 in [10, 20) and of the last in [20, 30).
  TraceReplayOptions o;
  o.rate_multiplier = 3;
  std::vector<Request> trace{req(0, 100), req(0, 200), req(10, 300), req(20, 400)};
  trace[0].prefix_hashes = {7, 8};
  const auto r = replay(trace, o);
  ASSERT_EQ(r.size(), 12u);
  expect_sorted_with_ids(r);
  size_t in[3] = {0, 0, 0};
  for (const Request& q : r) {
    const int bin = static_cast<int>(q.arrival_s / 10);
    ASSERT_GE(bin, 0);
    ASSERT_LT(bin, 3);
    ++in[bin];
    const int32_t expected_prompt_lo = bin == 0 ? 100 : bin == 1 ? 300 : 400;
    const int32_t expected_prompt_hi = bin == 0 ? 200 : expected_prompt_lo;
    EXPECT_GE(q.prompt_tokens, expected_prompt_lo);
    EXPECT_LE(q.prompt_tokens, expected_prompt_hi);
    if (q.prompt_tokens == 100) {
      EXPECT_EQ(q.prefix_hashes, (std::vector<uint32_t>{7, 8}));
    }
  }
  EXPECT_EQ(in[0], 6u);
  EXPECT_EQ(in[1], 3u);
  EXPECT_EQ(in[2], 3u);
  // The first copy keeps the original time.
  EXPECT_EQ(std::count_if(r.begin(), r.end(), [](const Request& q) { return q.arrival_s == 10; }), 1);
  EXPECT_EQ(std::count_if(r.begin(), r.end(), [](const Request& q) { return q.arrival_s == 20; }), 1);
  EXPECT_GE(std::count_if(r.begin(), r.end(), [](const Request& q) { return q.arrival_s == 0; }), 2);
}

TEST(TraceSource, MultiplierOneIsTheTraceAndZeroIsNothing) {
  std::vector<Request> trace{req(0), req(0.25), req(7)};
  trace[1].id = 42;
  const auto same = replay(trace, {});
  EXPECT_EQ(arrivals(same), (std::vector<double>{0, 0.25, 7}));
  expect_sorted_with_ids(same);
  TraceReplayOptions o;
  o.rate_multiplier = 0;
  EXPECT_TRUE(replay(trace, o).empty());
}

// The expected count, drawn the way TraceReplayOptions documents: for each request, one draw for the
// extra copy when M is not whole, then one draw per copy after the first.
size_t replayed_count(size_t n, double m, int64_t seed) {
  GoRand rng(seed);
  const double whole = std::floor(m), frac = m - whole;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t copies = static_cast<size_t>(whole);
    if (frac > 0 && rng.float64() < frac) ++copies;
    for (size_t k = 1; k < copies; ++k) rng.float64();
    total += copies;
  }
  return total;
}

TEST(TraceSource, FractionalMultiplierCountsFollowTheSeededDraws) {
  constexpr size_t kN = 100'000;
  std::vector<Request> trace;
  for (size_t i = 0; i < kN; ++i) trace.push_back(req(static_cast<double>(i) * 0.1));
  for (const double m : {0.5, 2.5, 1.2}) {
    TraceReplayOptions o;
    o.rate_multiplier = m;
    o.seed = 7;
    const auto r = replay(trace, o);
    EXPECT_EQ(r.size(), replayed_count(kN, m, 7)) << "M = " << m;
    // Binomial: kN x frac(M) extra copies, standard deviation sqrt(kN frac (1 - frac)) <= 158.
    EXPECT_NEAR(static_cast<double>(r.size()), m * kN, 5 * 158) << "M = " << m;
    expect_sorted_with_ids(r);
    EXPECT_LT(r.back().arrival_s, (kN - 1) * 0.1 + 0.1);
  }
  TraceReplayOptions a, b;
  a.rate_multiplier = b.rate_multiplier = 1.7;
  a.seed = b.seed = 3;
  EXPECT_EQ(arrivals(replay(trace, a)), arrivals(replay(trace, b)));  // same seed, same requests
  b.seed = 4;
  EXPECT_NE(arrivals(replay(trace, a)), arrivals(replay(trace, b)));
}

TEST(TraceSource, RefusesBadOptionsAndUnsortedTraces) {
  TraceReplayOptions o;
  o.time_scale = 0;
  EXPECT_THROW(TraceSource({req(0)}, o), std::invalid_argument);
  o = {};
  o.rate_multiplier = -1;
  EXPECT_THROW(TraceSource({req(0)}, o), std::invalid_argument);
  o = {};
  o.window_start_s = 5;
  o.window_end_s = 5;
  EXPECT_THROW(TraceSource({req(0)}, o), std::invalid_argument);
  o = {};
  o.delay_s = -1;
  EXPECT_THROW(TraceSource({req(0)}, o), std::invalid_argument);
  try {
    TraceSource({req(2), req(1)}, {});
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "trace replay: request 1 arrives at 1 s, before request 0 at 2 s");
  }
}

// ---- Token lengths ------------------------------------------------------------------------------

TEST(TokenLengths, LognormalFromMeanAndMedian) {
  // Azure conversation prompts: mean 1155, median 1020.
  const LognormalTokens law = lognormal_from_mean_median(1155, 1020);
  EXPECT_NEAR(law.mu, std::log(1020.0), 1e-12);
  EXPECT_NEAR(law.sigma, 0.498593, 1e-6);  // sqrt(2 ln(1155 / 1020))
  EXPECT_NEAR(std::exp(law.mu + law.sigma * law.sigma / 2), 1155, 1e-9);
  // Mooncake conversation outputs: mean 343 below the median 350: no lognormal, sigma 0.
  EXPECT_EQ(lognormal_from_mean_median(343, 350).sigma, 0);
  EXPECT_THROW(lognormal_from_mean_median(10, 0), std::invalid_argument);
}

TEST(TokenLengths, FitOfATrace) {
  const TokenLengthFit fit = fit_token_lengths({req(0, 1, 5), req(1, 2, 5), req(2, 3, 5), req(3, 10, 5)});
  EXPECT_DOUBLE_EQ(fit.prompt_mean, 4);
  EXPECT_DOUBLE_EQ(fit.prompt_median, 2.5);
  EXPECT_DOUBLE_EQ(fit.output_mean, 5);
  EXPECT_DOUBLE_EQ(fit.output_median, 5);
  EXPECT_EQ(fit.prompt_max, 10);
  EXPECT_EQ(fit.output_max, 5);
  EXPECT_NEAR(fit.prompt.sigma, 0.969540, 1e-6);  // sqrt(2 ln(4 / 2.5))
  EXPECT_NEAR(fit.prompt.mu, std::log(2.5), 1e-12);
  EXPECT_EQ(fit.output.sigma, 0);
  ASSERT_EQ(fit.rows.size(), 4u);
  EXPECT_EQ(fit.rows[3], (std::pair<int32_t, int32_t>{10, 5}));
  EXPECT_THROW(fit_token_lengths({}), std::invalid_argument);
}

GeneratedSourceOptions flat(double rate_per_s, double horizon_s) {
  GeneratedSourceOptions o;
  o.rate.mean_rate_per_s = rate_per_s;
  o.horizon_s = horizon_s;
  return o;
}

TEST(TokenLengths, GeneratedLognormalLengthsRecoverMeanAndMedian) {
  GeneratedSourceOptions o = flat(100, 2000);  // about 200,000 requests
  o.lengths.prompt = lognormal_from_mean_median(1155, 1020);
  o.lengths.output = lognormal_from_mean_median(27.9, 13);  // Azure code outputs: heavy tail, sigma 1.24
  o.seed = 11;
  GeneratedSource source(o);
  const auto r = drain(source);
  ASSERT_GT(r.size(), 190'000u);
  const TraceStats s = trace_stats(r);
  EXPECT_NEAR(s.prompt_mean / 1155, 1, 0.01);
  EXPECT_NEAR(s.prompt_p50 / 1020, 1, 0.01);
  EXPECT_NEAR(s.output_mean / 27.9, 1, 0.03);
  EXPECT_NEAR(s.output_p50, 13, 0.5);
  for (const Request& q : r) {
    ASSERT_GE(q.prompt_tokens, 1);
    ASSERT_GE(q.output_tokens, 1);
  }
}

TEST(TokenLengths, ClampAndEmpiricalRows) {
  GeneratedSourceOptions o = flat(10, 1000);
  o.lengths.prompt = lognormal_from_mean_median(3000, 1000);
  o.lengths.output = lognormal_from_mean_median(1, 1);
  o.max_prompt_tokens = 1500;
  GeneratedSource clamped(o);
  const auto r = drain(clamped);
  size_t at_max = 0;
  for (const Request& q : r) {
    ASSERT_LE(q.prompt_tokens, 1500);
    at_max += q.prompt_tokens == 1500;
    ASSERT_EQ(q.output_tokens, 1);
  }
  // P(X >= 1500) = 1 - Phi(ln 1.5 / sigma), sigma = sqrt(2 ln 3) = 1.4823: 1 - Phi(0.2735) = 0.392.
  EXPECT_NEAR(static_cast<double>(at_max) / static_cast<double>(r.size()), 0.392, 0.02);

  o = flat(10, 1000);
  o.law = TokenLengthLaw::kEmpirical;
  o.lengths.rows = {{100, 7}, {200, 9}};
  GeneratedSource empirical(o);
  const auto e = drain(empirical);
  size_t first = 0;
  for (const Request& q : e) {
    ASSERT_TRUE((q.prompt_tokens == 100 && q.output_tokens == 7) || (q.prompt_tokens == 200 && q.output_tokens == 9));
    first += q.prompt_tokens == 100;
  }
  EXPECT_NEAR(static_cast<double>(first) / static_cast<double>(e.size()), 0.5, 0.03);
  o.lengths.rows.clear();
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
}

// ---- GeneratedSource arrivals -------------------------------------------------------------------

TEST(GeneratedSource, RateFormula) {
  DiurnalRate d;
  d.mean_rate_per_s = 2;
  d.peak_to_trough = 5;
  d.peak_hour = 14;
  d.weekend_factor = 0.5;
  // a = 4/6; weekday factor 7/6, weekend 3.5/6.
  EXPECT_NEAR(diurnal_rate_per_s(d, 14 * 3600), 2 * (1 + 2.0 / 3) * 7 / 6, 1e-12);
  EXPECT_NEAR(diurnal_rate_per_s(d, 2 * 3600), 2 * (1 - 2.0 / 3) * 7 / 6, 1e-12);
  EXPECT_NEAR(diurnal_rate_per_s(d, 14 * 3600) / diurnal_rate_per_s(d, 2 * 3600), 5, 1e-12);
  EXPECT_NEAR(diurnal_rate_per_s(d, 5 * 86400 + 14 * 3600), 2 * (1 + 2.0 / 3) * 3.5 / 6, 1e-12);  // Saturday
  EXPECT_NEAR(diurnal_rate_per_s(d, 7 * 86400 + 14 * 3600), diurnal_rate_per_s(d, 14 * 3600), 1e-12);  // next Monday
  EXPECT_NEAR(diurnal_peak_rate_per_s(d), 2 * (1 + 2.0 / 3) * 7 / 6, 1e-12);
  d.weekend_factor = 2;  // weekends busier: the peak is on a weekend
  EXPECT_NEAR(diurnal_peak_rate_per_s(d), 2 * (1 + 2.0 / 3) * 14 / 9, 1e-12);
}

TEST(GeneratedSource, MeanRateDailyShapeAndWeekendOverFourWeeks) {
  GeneratedSourceOptions o;
  o.rate.mean_rate_per_s = 2;
  o.rate.peak_to_trough = 5;
  o.rate.peak_hour = 14.5;  // the busiest hour bin [14, 15) is centred on the peak
  o.rate.weekend_factor = 0.5;
  o.horizon_s = 28 * 86400.0;
  o.seed = 2024;
  GeneratedSource source(o);
  const auto r = drain(source);
  // Mean rate 2/s over whole weeks: 4,838,400 expected; Poisson sd 2,200 (0.05%).
  EXPECT_NEAR(static_cast<double>(r.size()) / o.horizon_s, 2.0, 2.0 * 0.005);
  expect_sorted_with_ids(r);
  EXPECT_LT(r.back().arrival_s, o.horizon_s);
  std::vector<double> weekday_hour(24, 0);
  double weekday = 0, weekend = 0;
  for (const Request& q : r) {
    const auto day = static_cast<int64_t>(q.arrival_s / 86400) % 7;
    if (day >= 5) {
      ++weekend;
    } else {
      ++weekday;
      ++weekday_hour[static_cast<size_t>(std::fmod(q.arrival_s, 86400) / 3600)];
    }
  }
  // A weekend hour has half the rate of a weekday hour: per day, weekend / weekday = 0.5.
  EXPECT_NEAR((weekend / 8) / (weekday / 20), 0.5, 0.01);
  // Hour bins: the integral of 1 + a cos over one hour centred on the peak or trough is
  // 1 +- a sinc(pi/24), sinc = sin(pi/24) / (pi/24) = 0.997147; a = 2/3: ratio 4.96595.
  const double peak_bin = weekday_hour[14], trough_bin = weekday_hour[2];
  const double s = std::sin(std::numbers::pi / 24) / (std::numbers::pi / 24);
  const double expected = (1 + 2.0 / 3 * s) / (1 - 2.0 / 3 * s);
  EXPECT_NEAR(expected, 4.96595, 1e-5);
  EXPECT_NEAR(peak_bin / trough_bin / expected, 1, 0.02);
  EXPECT_EQ(*std::max_element(weekday_hour.begin(), weekday_hour.end()), peak_bin);
  EXPECT_EQ(*std::min_element(weekday_hour.begin(), weekday_hour.end()), trough_bin);
}

TEST(GeneratedSource, DeterministicBySeed) {
  GeneratedSourceOptions o = flat(5, 600);
  o.rate.peak_to_trough = 3;
  o.lengths.prompt = lognormal_from_mean_median(1155, 1020);
  o.lengths.output = lognormal_from_mean_median(211, 129);
  o.seed = 99;
  GeneratedSource a(o), b(o);
  const auto ra = drain(a), rb = drain(b);
  ASSERT_EQ(ra.size(), rb.size());
  ASSERT_GT(ra.size(), 1000u);  // near the trough at midnight: about 1,650
  for (size_t i = 0; i < ra.size(); ++i) {
    ASSERT_EQ(ra[i].arrival_s, rb[i].arrival_s);
    ASSERT_EQ(ra[i].prompt_tokens, rb[i].prompt_tokens);
    ASSERT_EQ(ra[i].output_tokens, rb[i].output_tokens);
  }
  o.seed = 100;
  GeneratedSource c(o);
  const auto rc = drain(c);
  EXPECT_FALSE(rc.size() == ra.size() && rc.front().arrival_s == ra.front().arrival_s);
  EXPECT_FALSE(a.next().has_value());  // stays at the end
}

TEST(GeneratedSource, RefusesBadOptions) {
  GeneratedSourceOptions o;
  o.rate.mean_rate_per_s = 0;
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
  o = {};
  o.rate.peak_to_trough = 0.5;
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
  o = {};
  o.rate.peak_hour = 24;
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
  o = {};
  o.horizon_s = std::numeric_limits<double>::infinity();
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
  o = {};
  o.lengths.prompt.sigma = -1;
  EXPECT_THROW(GeneratedSource{o}, std::invalid_argument);
}

// ---- Statistics ---------------------------------------------------------------------------------

// Traffic as data: make_request_source builds the source its alternative names, with the run's seed
// (as TraceSource and GeneratedSource with that seed), and refuses no traffic.
TEST(TrafficSpec, MakeRequestSourceSeedsTheSourceOfItsData) {
  std::vector<Request> trace;
  for (int i = 0; i < 1000; ++i) trace.push_back(req(i * 0.5));
  TraceTraffic t{std::make_shared<const std::vector<Request>>(trace), {}, {}, {}};
  t.replay.rate_multiplier = 1.7;
  t.replay.seed = 1;  // replaced by the run's
  TraceReplayOptions seeded = t.replay;
  seeded.seed = 3;
  EXPECT_EQ(arrivals(drain(*make_request_source(t, 3))), arrivals(replay(trace, seeded)));
  GeneratedSourceOptions g = flat(5, 600);
  g.lengths.prompt = lognormal_from_mean_median(1155, 1020);
  g.lengths.output = lognormal_from_mean_median(211, 129);
  GeneratedSourceOptions g9 = g;
  g9.seed = 9;
  GeneratedSource direct(g9);
  EXPECT_EQ(arrivals(drain(*make_request_source(g, 9))), arrivals(drain(direct)));
  EXPECT_THROW(make_request_source(TrafficSpec{}, 1), std::invalid_argument);
  EXPECT_THROW(make_request_source(TraceTraffic{}, 1), std::invalid_argument);
}

TEST(TraceStatistics, PercentilePeakWindowAndSummary) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 99), 3.97);  // rank 2.97
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
  // Windows [t, t + 60): from 0 holds 0, 10, 59.9 (60 excluded); from 10 holds 10, 59.9, 60, 61 (70
  // excluded); from 59.9 holds 59.9, 60, 61, 70.
  const std::vector<Request> r{req(0, 100, 1), req(10, 200, 2), req(59.9, 300, 3), req(60, 400, 4), req(61, 500, 5),
                               req(70, 600, 6), req(200, 700, 7)};
  EXPECT_EQ(peak_arrivals_in_window(r, 60), 4u);
  EXPECT_EQ(peak_arrivals_in_window(r, 0.5), 2u);  // 59.9 and 60
  const TraceStats s = trace_stats(r);
  EXPECT_EQ(s.count, 7u);
  EXPECT_DOUBLE_EQ(s.duration_s, 200);
  EXPECT_DOUBLE_EQ(s.mean_rate_per_s, 0.035);
  EXPECT_DOUBLE_EQ(s.prompt_mean, 400);
  EXPECT_DOUBLE_EQ(s.prompt_p50, 400);
  EXPECT_DOUBLE_EQ(s.prompt_p90, 640);  // rank 5.4: 600 + 0.4 x 100
  EXPECT_DOUBLE_EQ(s.output_mean, 4);
  EXPECT_EQ(trace_stats({}).count, 0u);
}

}  // namespace
}  // namespace gpufleet::inference
