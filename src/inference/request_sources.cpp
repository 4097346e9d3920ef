#include "inference/request_sources.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace gpufleet::inference {
namespace {

constexpr double kMaxRateMultiplier = 10'000;  // copies per request; more is a mistake, not a load test

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

}  // namespace

// ---- TraceSource --------------------------------------------------------------------------------

void validate_trace_replay(const TraceReplayOptions& o) {
  if (!(o.time_scale > 0) || !std::isfinite(o.time_scale)) bad(fmt::format("trace replay: time scale {} must be positive", o.time_scale));
  if (!(o.rate_multiplier >= 0) || !(o.rate_multiplier <= kMaxRateMultiplier))
    bad(fmt::format("trace replay: rate multiplier {} outside [0, {}]", o.rate_multiplier, kMaxRateMultiplier));
  if (!std::isfinite(o.window_start_s) || std::isnan(o.window_end_s) || !(o.window_start_s < o.window_end_s))
    bad(fmt::format("trace replay: window [{}, {}) needs a finite start before its end", o.window_start_s, o.window_end_s));
  if (!(o.delay_s >= 0) || !std::isfinite(o.delay_s)) bad(fmt::format("trace replay: delay {} s must be finite and >= 0", o.delay_s));
}

TraceSource::TraceSource(std::vector<Request> requests, const TraceReplayOptions& options)
    : options_(options), rng_(options.seed) {
  validate_trace_replay(options_);
  for (size_t i = 1; i < requests.size(); ++i)
    if (requests[i].arrival_s < requests[i - 1].arrival_s)
      bad(fmt::format("trace replay: request {} arrives at {} s, before request {} at {} s", i, requests[i].arrival_s, i - 1,
                      requests[i - 1].arrival_s));
  for (Request& r : requests)
    if (r.arrival_s >= options_.window_start_s && r.arrival_s < options_.window_end_s) trace_.push_back(std::move(r));
  // The next strictly later arrival of each request; the last time gets the mean gap between times.
  next_time_.resize(trace_.size());
  if (!trace_.empty()) {
    size_t distinct = 1;
    for (size_t i = 1; i < trace_.size(); ++i) distinct += trace_[i].arrival_s > trace_[i - 1].arrival_s;
    const double last = trace_.back().arrival_s;
    const double mean_gap = distinct > 1 ? (last - trace_.front().arrival_s) / static_cast<double>(distinct - 1) : 0.0;
    double later = last + mean_gap;
    for (size_t i = trace_.size(); i-- > 0;) {
      if (i + 1 < trace_.size() && trace_[i + 1].arrival_s > trace_[i].arrival_s) later = trace_[i + 1].arrival_s;
      next_time_[i] = later;
    }
  }
}

void TraceSource::fill() {
  if (cursor_ < pending_.size()) return;
  pending_.clear();
  cursor_ = 0;
  const double whole = std::floor(options_.rate_multiplier);
  const double frac = options_.rate_multiplier - whole;
  while (pending_.empty() && index_ < trace_.size()) {
    // The requests sharing one arrival time a spread their copies over the same gap, so they are
    // expanded together and their copies sorted (stable: originals first, in trace order, at a).
    const double a = trace_[index_].arrival_s;
    const double gap = next_time_[index_] - a;
    std::vector<std::pair<double, size_t>> copies;  // (time, index in trace_)
    for (; index_ < trace_.size() && trace_[index_].arrival_s == a; ++index_) {
      auto n = static_cast<size_t>(whole);
      if (frac > 0 && rng_.float64() < frac) ++n;
      if (n == 0) continue;
      copies.emplace_back(a, index_);
      for (size_t k = 1; k < n; ++k) copies.emplace_back(a + rng_.float64() * gap, index_);
    }
    std::stable_sort(copies.begin(), copies.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [t, i] : copies) {
      Request copy = trace_[i];
      copy.arrival_s = (t - options_.window_start_s) * options_.time_scale + options_.delay_s;
      pending_.push_back(std::move(copy));
    }
  }
}

std::optional<Request> TraceSource::next() {
  fill();
  if (cursor_ >= pending_.size()) return std::nullopt;
  Request r = std::move(pending_[cursor_++]);
  r.id = next_id_++;
  return r;
}

std::vector<Request> drain(RequestSource& source, size_t max_requests) {
  std::vector<Request> out;
  while (auto r = source.next()) {
    if (out.size() >= max_requests) throw std::length_error(fmt::format("request source has more than {} requests", max_requests));
    out.push_back(std::move(*r));
  }
  return out;
}

// ---- Token lengths ------------------------------------------------------------------------------

LognormalTokens lognormal_from_mean_median(double mean, double median) {
  if (!(median > 0) || !std::isfinite(median) || !std::isfinite(mean))
    bad(fmt::format("lognormal: needs a positive median and a finite mean, got mean {} median {}", mean, median));
  LognormalTokens law;
  law.mu = std::log(median);
  law.sigma = mean > median ? std::sqrt(2 * std::log(mean / median)) : 0.0;
  return law;
}

TokenLengthFit fit_token_lengths(const std::vector<Request>& requests) {
  if (requests.empty()) bad("fit_token_lengths: no requests");
  TokenLengthFit fit;
  std::vector<double> prompt, output;
  prompt.reserve(requests.size());
  output.reserve(requests.size());
  fit.rows.reserve(requests.size());
  for (const Request& r : requests) {
    prompt.push_back(r.prompt_tokens);
    output.push_back(r.output_tokens);
    fit.rows.emplace_back(r.prompt_tokens, r.output_tokens);
    fit.prompt_max = std::max(fit.prompt_max, r.prompt_tokens);
    fit.output_max = std::max(fit.output_max, r.output_tokens);
  }
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  fit.prompt_mean = mean(prompt);
  fit.output_mean = mean(output);
  fit.prompt_median = percentile(std::move(prompt), 50);
  fit.output_median = percentile(std::move(output), 50);
  fit.prompt = lognormal_from_mean_median(fit.prompt_mean, fit.prompt_median);
  fit.output = lognormal_from_mean_median(fit.output_mean, fit.output_median);
  return fit;
}

// ---- GeneratedSource ----------------------------------------------------------------------------

namespace {

double daily_amplitude(const DiurnalRate& r) { return (r.peak_to_trough - 1) / (r.peak_to_trough + 1); }

}  // namespace

double diurnal_rate_per_s(const DiurnalRate& r, double t_s) {
  const double a = daily_amplitude(r);
  const double daily = 1 + a * std::cos(2 * std::numbers::pi * (t_s / 86400.0 - r.peak_hour / 24.0));
  const double weekday = 7 / (5 + 2 * r.weekend_factor);
  const auto day = static_cast<int64_t>(std::floor(t_s / 86400.0));
  const int64_t day_of_week = ((day % 7) + 7) % 7;
  const double weekly = day_of_week >= 5 ? r.weekend_factor * weekday : weekday;
  return r.mean_rate_per_s * daily * weekly;
}

double diurnal_peak_rate_per_s(const DiurnalRate& r) {
  const double weekday = 7 / (5 + 2 * r.weekend_factor);
  return r.mean_rate_per_s * (1 + daily_amplitude(r)) * weekday * std::max(1.0, r.weekend_factor);
}

void validate_generated(const GeneratedSourceOptions& o) {
  const DiurnalRate& r = o.rate;
  if (!(r.mean_rate_per_s > 0) || !std::isfinite(r.mean_rate_per_s))
    bad(fmt::format("request generator: mean rate {} /s must be positive", r.mean_rate_per_s));
  if (!(r.peak_to_trough >= 1) || !std::isfinite(r.peak_to_trough))
    bad(fmt::format("request generator: peak-to-trough ratio {} must be at least 1", r.peak_to_trough));
  if (!(r.peak_hour >= 0 && r.peak_hour < 24)) bad(fmt::format("request generator: peak hour {} outside [0, 24)", r.peak_hour));
  if (!(r.weekend_factor > 0) || !std::isfinite(r.weekend_factor))
    bad(fmt::format("request generator: weekend factor {} must be positive", r.weekend_factor));
  if (!(o.horizon_s > 0) || !std::isfinite(o.horizon_s)) bad(fmt::format("request generator: horizon {} s must be positive", o.horizon_s));
  if (o.max_prompt_tokens < 1 || o.max_output_tokens < 1) bad("request generator: token maxima must be at least 1");
  for (const LognormalTokens* law : {&o.lengths.prompt, &o.lengths.output})
    if (!std::isfinite(law->mu) || !(law->sigma >= 0) || !std::isfinite(law->sigma))
      bad(fmt::format("request generator: lognormal mu {} sigma {} needs a finite mu and sigma >= 0", law->mu, law->sigma));
  if (o.law == TokenLengthLaw::kEmpirical && o.lengths.rows.empty()) bad("request generator: empirical lengths without rows");
}

GeneratedSource::GeneratedSource(GeneratedSourceOptions options) : options_(std::move(options)), rng_(options_.seed) {
  validate_generated(options_);
  peak_rate_per_s_ = diurnal_peak_rate_per_s(options_.rate);
}

int32_t GeneratedSource::clamp_tokens(double x, int32_t max_tokens) {
  if (!(x >= 1)) return 1;  // also NaN
  if (x >= max_tokens) return max_tokens;
  return static_cast<int32_t>(std::lround(x));
}

std::optional<Request> GeneratedSource::next() {
  while (t_s_ < options_.horizon_s) {
    t_s_ += -std::log(1.0 - rng_.float64()) / peak_rate_per_s_;
    if (t_s_ >= options_.horizon_s) break;
    if (rng_.float64() >= diurnal_rate_per_s(options_.rate, t_s_) / peak_rate_per_s_) continue;
    Request r;
    r.id = next_id_++;
    r.arrival_s = t_s_;
    if (options_.law == TokenLengthLaw::kEmpirical) {
      const auto& rows = options_.lengths.rows;
      const auto k = std::min(rows.size() - 1, static_cast<size_t>(rng_.float64() * static_cast<double>(rows.size())));
      r.prompt_tokens = clamp_tokens(rows[k].first, options_.max_prompt_tokens);
      r.output_tokens = clamp_tokens(rows[k].second, options_.max_output_tokens);
    } else {
      // Box-Muller: two uniforms give two independent standard normals.
      const double radius = std::sqrt(-2 * std::log(1.0 - rng_.float64()));
      const double angle = 2 * std::numbers::pi * rng_.float64();
      const LognormalTokens& p = options_.lengths.prompt;
      const LognormalTokens& o = options_.lengths.output;
      r.prompt_tokens = clamp_tokens(std::exp(p.mu + p.sigma * radius * std::cos(angle)), options_.max_prompt_tokens);
      r.output_tokens = clamp_tokens(std::exp(o.mu + o.sigma * radius * std::sin(angle)), options_.max_output_tokens);
    }
    return r;
  }
  return std::nullopt;
}

// ---- Traffic as data ----------------------------------------------------------------------------

std::unique_ptr<RequestSource> make_request_source(const TrafficSpec& traffic, uint64_t seed) {
  const auto seed63 = static_cast<int64_t>(seed & 0x7fffffffffffffffULL);
  if (const auto* trace = std::get_if<TraceTraffic>(&traffic)) {
    if (!trace->requests) bad("traffic: a trace without its rows");
    TraceReplayOptions replay = trace->replay;
    replay.seed = seed63;
    return std::make_unique<TraceSource>(*trace->requests, replay);
  }
  if (const auto* generated = std::get_if<GeneratedSourceOptions>(&traffic)) {
    GeneratedSourceOptions options = *generated;
    options.seed = seed63;
    return std::make_unique<GeneratedSource>(std::move(options));
  }
  bad("traffic: none (a trace or a generator is needed)");
}

// ---- Statistics ---------------------------------------------------------------------------------

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = (static_cast<double>(values.size()) - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

size_t peak_arrivals_in_window(const std::vector<Request>& requests, double window_s) {
  size_t best = 0;
  size_t end = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    end = std::max(end, i);
    while (end < requests.size() && requests[end].arrival_s < requests[i].arrival_s + window_s) ++end;
    best = std::max(best, end - i);
  }
  return best;
}

TraceStats trace_stats(const std::vector<Request>& requests) {
  TraceStats s;
  s.count = requests.size();
  if (requests.empty()) return s;
  s.duration_s = requests.back().arrival_s - requests.front().arrival_s;
  s.mean_rate_per_s = s.duration_s > 0 ? static_cast<double>(s.count) / s.duration_s : 0;
  s.peak_1min_count = peak_arrivals_in_window(requests, 60);
  std::vector<double> prompt, output;
  prompt.reserve(requests.size());
  output.reserve(requests.size());
  double prompt_sum = 0, output_sum = 0;
  for (const Request& r : requests) {
    prompt.push_back(r.prompt_tokens);
    output.push_back(r.output_tokens);
    prompt_sum += r.prompt_tokens;
    output_sum += r.output_tokens;
  }
  s.prompt_mean = prompt_sum / static_cast<double>(s.count);
  s.output_mean = output_sum / static_cast<double>(s.count);
  std::sort(prompt.begin(), prompt.end());
  std::sort(output.begin(), output.end());
  s.prompt_p50 = percentile(prompt, 50);
  s.prompt_p90 = percentile(prompt, 90);
  s.prompt_p99 = percentile(prompt, 99);
  s.output_p50 = percentile(output, 50);
  s.output_p90 = percentile(output, 90);
  s.output_p99 = percentile(output, 99);
  return s;
}

}  // namespace gpufleet::inference
