// Request sources: a recorded trace replayed faster, slower, denser or in part (TraceSource), and a
// seeded generator with a daily and weekly rate and token lengths fitted to a trace
// (GeneratedSource); traffic as data and the one function that makes a source of it
// (make_request_source); the statistics both are judged by (trace_stats). No I/O: the traces are read by
// readers/traces/request_trace.h. Each source draws its randomness from its own GoRand (util/go_rand.h) seeded
// from its `seed`: the same inputs and seed give the same requests, on every platform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "inference/request.h"
#include "util/go_rand.h"

namespace gpufleet::inference {

// ---- Replaying a trace --------------------------------------------------------------------------

struct TraceReplayOptions {
  /// Arrival times are multiplied by this, > 0: 0.5 replays twice as fast (the trace's rate doubles),
  /// 2 half as fast. Token counts are unchanged. Default 1.
  double time_scale = 1;
  /// M >= 0: each request is emitted floor(M) times, plus once more with probability M - floor(M),
  /// so the expected count is M times the trace's. The first copy keeps the request's arrival time a;
  /// the others fall at a + U x gap, U uniform in [0, 1), where gap is the time to the next strictly
  /// later arrival in the trace (requests sharing a timestamp share that gap; the last arrival time
  /// takes the trace's mean gap, (last - first) / (distinct times - 1), 0 for a single time). The
  /// copies keep the prompt, output and prefix hashes (a copy reuses its original's prefix). M = 0
  /// emits nothing; M < 1 thins the trace. Default 1 (each request once, no random draw).
  double rate_multiplier = 1;
  /// Only requests with window_start_s <= arrival_s < window_end_s (the trace's own times, before
  /// scaling) are replayed, and their times are shifted so that window_start_s becomes 0: the output
  /// arrival is (arrival_s - window_start_s) x time_scale. Defaults: the whole trace, unshifted.
  double window_start_s = 0;
  double window_end_s = std::numeric_limits<double>::infinity();
  /// Seconds added to every output arrival, after the window shift and the time scale (>= 0): the
  /// traffic starts this long after the simulation does, as a load test starts once the service is
  /// up, so that the replicas' first cold start is not in the measurement. Default 0.
  double delay_s = 0;
  /// Seed of the draws of rate_multiplier (for each request in order: one draw for the extra copy when
  /// M is not whole, then one draw per copy after the first).
  int64_t seed = 1;
};

/// Throws std::invalid_argument for time_scale <= 0 or not finite, rate_multiplier < 0 or not finite,
/// window_start_s >= window_end_s or a window bound that is NaN, or delay_s negative or not finite.
void validate_trace_replay(const TraceReplayOptions& options);

/// A trace replayed with TraceReplayOptions. Emits requests in arrival order with ids 0, 1, 2, ...
/// renumbered in output order. The input must be sorted by arrival_s (as the readers return it);
/// the constructor throws std::invalid_argument otherwise, or for bad options.
class TraceSource : public RequestSource {
 public:
  TraceSource(std::vector<Request> requests, const TraceReplayOptions& options = {});
  std::optional<Request> next() override;

 private:
  void fill();  // the copies of the requests at the next arrival time into pending_

  std::vector<Request> trace_;
  TraceReplayOptions options_;
  GoRand rng_;
  size_t index_ = 0;          // next trace request to expand
  std::vector<double> next_time_;  // per trace request: the next strictly later arrival (or last + mean gap)
  std::vector<Request> pending_;   // copies of the requests at one arrival time, sorted
  size_t cursor_ = 0;              // next of pending_ to emit
  uint64_t next_id_ = 0;
};

/// Drains a source into a vector (for tests, statistics and callers that want all requests at once).
/// Stops after `max_requests` (throws std::length_error if the source has more).
std::vector<Request> drain(RequestSource& source, size_t max_requests = 100'000'000);

// ---- Token lengths ------------------------------------------------------------------------------

/// A lognormal law of token counts: ln X ~ Normal(mu, sigma^2); median e^mu, mean e^(mu + sigma^2/2).
/// Draws are rounded to the nearest integer and clamped (GeneratedSourceOptions). Clamping moves the
/// mean a little: a trace's largest length is a fair clamp (TokenLengthFit::prompt_max).
struct LognormalTokens {
  double mu = 0;
  double sigma = 0;
};

/// The lognormal with the given mean and median: mu = ln(median), sigma = sqrt(2 ln(mean / median))
/// (from mean / median = e^(sigma^2 / 2)). A law with mean <= median cannot be lognormal: then
/// sigma = 0 (every draw the median). Throws std::invalid_argument unless 0 < median and mean finite.
LognormalTokens lognormal_from_mean_median(double mean, double median);

/// Summary of a trace's token lengths and the laws fitted to it.
struct TokenLengthFit {
  double prompt_mean = 0, prompt_median = 0;  ///< of prompt_tokens; median linear-interpolated
  double output_mean = 0, output_median = 0;  ///< of output_tokens
  int32_t prompt_max = 0, output_max = 0;     ///< largest seen
  LognormalTokens prompt, output;             ///< lognormal_from_mean_median of the above
  /// Every request's (prompt_tokens, output_tokens), in trace order: the empirical law (a row drawn
  /// uniformly keeps the correlation between prompt and output lengths).
  std::vector<std::pair<int32_t, int32_t>> rows;
};

/// Fits token lengths to `requests`. Throws std::invalid_argument for an empty vector.
TokenLengthFit fit_token_lengths(const std::vector<Request>& requests);

// ---- Generated arrivals -------------------------------------------------------------------------

/// The arrival rate of the generator, requests per second, at time t (seconds; t = 0 is Monday 00:00
/// of the clock peak_hour is read in):
///   rate(t) = mean_rate_per_s x daily(t) x weekly(t)
///   daily(t)  = 1 + a cos(2 pi (t / 86400 - peak_hour / 24)),  a = (R - 1) / (R + 1)
///               (R = peak_to_trough: max/min of daily is (1 + a)/(1 - a) = R; its mean over a day is 1)
///   weekly(t) = W / (5 + 2W) x 7 on Saturday and Sunday (days 5 and 6 of each week), 7 / (5 + 2W) on
///               weekdays (W = weekend_factor: a weekend hour has W times the rate of the same weekday
///               hour; the mean over a week is 1).
/// So mean_rate_per_s is the mean over whole days (W = 1) or whole weeks.
struct DiurnalRate {
  double mean_rate_per_s = 1;  ///< > 0
  double peak_to_trough = 1;   ///< R >= 1; 1 = flat
  double peak_hour = 14;       ///< [0, 24)
  double weekend_factor = 1;   ///< W > 0; 1 = no weekly cycle
};
/// rate(t) above. Throws nothing; call validate_generated first.
double diurnal_rate_per_s(const DiurnalRate& rate, double t_s);
/// The largest value of rate(t), the thinning bound.
double diurnal_peak_rate_per_s(const DiurnalRate& rate);

enum class TokenLengthLaw {
  kLognormal,  ///< prompt and output drawn independently from fit.prompt and fit.output
  kEmpirical,  ///< a row of fit.rows drawn uniformly (prompt and output together)
};

struct GeneratedSourceOptions {
  DiurnalRate rate;
  double horizon_s = 3600;  ///< arrivals in [0, horizon_s), > 0, finite
  TokenLengthFit lengths;   ///< fit_token_lengths of a trace, or lognormals filled by hand
  TokenLengthLaw law = TokenLengthLaw::kLognormal;
  /// Clamp of every drawn length, > 0: prompt to [1, max_prompt_tokens], output to [1, max_output_tokens].
  int32_t max_prompt_tokens = 1'000'000;
  int32_t max_output_tokens = 1'000'000;
  int64_t seed = 1;
};

/// Throws std::invalid_argument for a parameter outside its range (see the fields), or kEmpirical
/// with no rows.
void validate_generated(const GeneratedSourceOptions& options);

/// A non-homogeneous Poisson process with rate(t) (DiurnalRate), drawn by thinning (P. A. W. Lewis and
/// G. S. Shedler, "Simulation of nonhomogeneous Poisson processes by thinning", Naval Research
/// Logistics Quarterly 26(3), 1979): candidates of a homogeneous process at the peak rate L, each kept
/// with probability rate(t) / L. Draws from the seed's GoRand in order: the exponential gap
/// -ln(1 - U) / L, the thinning U, then for a kept candidate the lengths (kLognormal: two standard
/// normals by Box-Muller from two U, prompt then output; kEmpirical: one U picks the row). Ids 0, 1,
/// ...; no prefix hashes.
class GeneratedSource : public RequestSource {
 public:
  /// Throws std::invalid_argument (validate_generated).
  explicit GeneratedSource(GeneratedSourceOptions options);
  std::optional<Request> next() override;

 private:
  int32_t draw_lognormal(const LognormalTokens& law, int32_t max_tokens);
  static int32_t clamp_tokens(double x, int32_t max_tokens);

  GeneratedSourceOptions options_;
  GoRand rng_;
  double peak_rate_per_s_ = 0;
  double t_s_ = 0;
  uint64_t next_id_ = 0;
};

// ---- Traffic as data ----------------------------------------------------------------------------

/// A recorded trace to replay: its rows (shared, never changed: a trace is read once and every run
/// replays it) and how (`replay.seed` is the run's, set by make_request_source).
struct TraceTraffic {
  std::shared_ptr<const std::vector<Request>> requests;
  TraceReplayOptions replay;
  /// The trace file as the reader opened it (relative to the working directory, or absolute) and the
  /// format given ("" = auto), for writers of the workload (report/workload_yaml.h); "" when built in code.
  std::string path;
  std::string format;
};

/// What an inference service's requests are: none yet (monostate), a trace replayed, or a generator
/// (GeneratedSourceOptions; its `seed` is the run's, set by make_request_source). Plain data: the
/// readers build it, each run makes its own source from it.
using TrafficSpec = std::variant<std::monostate, TraceTraffic, GeneratedSourceOptions>;

/// The request source of `traffic` for one run: a TraceSource or a GeneratedSource seeded with
/// `seed` (its low 63 bits). Throws std::invalid_argument for no traffic (monostate), a trace without
/// rows pointer, or what the sources' constructors refuse (bad options, an unsorted trace).
std::unique_ptr<RequestSource> make_request_source(const TrafficSpec& traffic, uint64_t seed);

// ---- Statistics ---------------------------------------------------------------------------------

/// The p-th percentile (p in [0, 100]) of `values` by linear interpolation between the two closest
/// ranks (numpy.percentile's default "linear" method: rank (n - 1) p / 100). 0 for an empty vector.
double percentile(std::vector<double> values, double p);

/// The most arrivals in any window [t, t + window_s) (a sliding window, one position per arrival).
size_t peak_arrivals_in_window(const std::vector<Request>& requests, double window_s = 60);

/// A trace's figures (requests sorted by arrival).
struct TraceStats {
  size_t count = 0;
  double duration_s = 0;       ///< last arrival - first arrival
  double mean_rate_per_s = 0;  ///< count / duration_s (0 when duration_s is 0)
  size_t peak_1min_count = 0;  ///< peak_arrivals_in_window(requests, 60)
  double prompt_mean = 0, prompt_p50 = 0, prompt_p90 = 0, prompt_p99 = 0;
  double output_mean = 0, output_p50 = 0, output_p90 = 0, output_p99 = 0;
};
TraceStats trace_stats(const std::vector<Request>& requests);

}  // namespace gpufleet::inference
