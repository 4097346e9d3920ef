// Token lengths of vLLM's benchmark datasets (dataset_lengths.h).
#include "inference/dataset_lengths.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "util/go_rand.h"

namespace gpufleet::inference {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

constexpr int32_t kMaxFilterTokens = 16'777'216;

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

/// P(round(exp(mu + sigma Z)) <= k) for k >= 0: P(exp(...) < k + 0.5).
double rounded_cdf(const LognormalTokens& law, double k) { return normal_cdf((std::log(k + 0.5) - law.mu) / law.sigma); }

/// P(round(exp(mu + sigma Z)) = k), k >= 1.
double rounded_pmf(const LognormalTokens& law, int64_t k) {
  return rounded_cdf(law, static_cast<double>(k)) - rounded_cdf(law, static_cast<double>(k - 1));
}

void check_law(const ShareGptLengthLaw& law) {
  for (const auto& [l, name] : {std::pair<const LognormalTokens*, const char*>{&law.prompt, "prompt"},
                                std::pair<const LognormalTokens*, const char*>{&law.output, "output"}}) {
    if (!std::isfinite(l->mu)) bad(fmt::format("sharegpt {} mu: {} is not finite", name, l->mu));
    if (!(l->sigma > 0) || !std::isfinite(l->sigma)) bad(fmt::format("sharegpt {} sigma: {} must be positive", name, l->sigma));
  }
  const SequenceLengthFilter& f = law.filter;
  if (f.min_len < 1) bad(fmt::format("filter min_len: {} must be at least 1", f.min_len));
  if (f.max_prompt_len < f.min_len) bad(fmt::format("filter max_prompt_len: {} is below min_len {}", f.max_prompt_len, f.min_len));
  if (f.max_total_len > kMaxFilterTokens || static_cast<int64_t>(f.max_total_len) < 2 * static_cast<int64_t>(f.min_len))
    bad(fmt::format("filter max_total_len: {} is outside {}..{}", f.max_total_len, 2 * static_cast<int64_t>(f.min_len),
                    kMaxFilterTokens));
}

/// The smallest k with cum[k - offset] >= q (cum non-decreasing, ending at 1).
int32_t quantile(const std::vector<double>& weights, int32_t offset, double q) {
  double c = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    c += weights[i];
    if (c >= q) return offset + static_cast<int32_t>(i);
  }
  return offset + static_cast<int32_t>(weights.size()) - 1;
}

int32_t rounded_length(double mu, double sigma, double z) {
  const double x = std::exp(mu + sigma * z);
  return x >= 2e9 ? 2'000'000'000 : static_cast<int32_t>(std::floor(x + 0.5));
}

}  // namespace

std::optional<BenchDataset> parse_bench_dataset(std::string_view name) {
  if (name == "random") return BenchDataset::kRandom;
  if (name == "sharegpt") return BenchDataset::kShareGpt;
  if (name == "sonnet") return BenchDataset::kSonnet;
  return std::nullopt;
}

ShareGptLengthLaw sharegpt_length_law() {
  // fit_sharegpt_length_law(kShareGptPromptMeanTokens, kShareGptOutputMeanTokens, kShareGptPromptSigma,
  // kShareGptOutputSigma) (tests/inference/dataset_lengths_test.cpp checks these digits).
  ShareGptLengthLaw law;
  law.prompt = {5.13271498, kShareGptPromptSigma};
  law.output = {5.00392580, kShareGptOutputSigma};
  return law;
}

FilteredLengthStats filtered_length_stats(const ShareGptLengthLaw& law) {
  check_law(law);
  const SequenceLengthFilter& f = law.filter;
  const int32_t p_lo = f.min_len;
  const int32_t p_hi = std::min(f.max_prompt_len, f.max_total_len - f.min_len);
  const int32_t o_lo = f.min_len;
  const int32_t o_hi = f.max_total_len - f.min_len;
  // Output pmf and its prefix sums (mass and first moment) over [o_lo, o_hi].
  std::vector<double> po(static_cast<size_t>(o_hi - o_lo + 1));
  std::vector<double> o_mass(po.size() + 1, 0.0), o_moment(po.size() + 1, 0.0);
  for (int32_t j = o_lo; j <= o_hi; ++j) {
    const size_t i = static_cast<size_t>(j - o_lo);
    po[i] = rounded_pmf(law.output, j);
    o_mass[i + 1] = o_mass[i] + po[i];
    o_moment[i + 1] = o_moment[i] + static_cast<double>(j) * po[i];
  }
  // Prompt pmf and its prefix sums over [p_lo, p_hi].
  std::vector<double> pp(static_cast<size_t>(std::max(0, p_hi - p_lo + 1)));
  std::vector<double> p_mass(pp.size() + 1, 0.0);
  for (int32_t k = p_lo; k <= p_hi; ++k) {
    const size_t i = static_cast<size_t>(k - p_lo);
    pp[i] = rounded_pmf(law.prompt, k);
    p_mass[i + 1] = p_mass[i] + pp[i];
  }
  // A prompt k accepts outputs [o_lo, max_total - k]; an output j accepts prompts [p_lo, min(p_hi, max_total - j)].
  std::vector<double> wp(pp.size()), wo(po.size());
  double z = 0, sum_p = 0, sum_o = 0;
  for (int32_t k = p_lo; k <= p_hi; ++k) {
    const size_t i = static_cast<size_t>(k - p_lo);
    const size_t upto = static_cast<size_t>(f.max_total_len - k - o_lo + 1);  // outputs o_lo..max_total-k
    wp[i] = pp[i] * o_mass[upto];
    z += wp[i];
    sum_p += static_cast<double>(k) * wp[i];
    sum_o += pp[i] * o_moment[upto];
  }
  if (!(z > 0)) bad("sharegpt: the filter keeps no pair of this law");
  for (int32_t j = o_lo; j <= o_hi; ++j) {
    const size_t i = static_cast<size_t>(j - o_lo);
    const int32_t k_hi = std::min(p_hi, f.max_total_len - j);
    wo[i] = k_hi < p_lo ? 0 : po[i] * p_mass[static_cast<size_t>(k_hi - p_lo + 1)];
  }
  for (double& w : wp) w /= z;
  for (double& w : wo) w /= z;
  FilteredLengthStats s;
  s.acceptance = z;
  s.prompt_mean = sum_p / z;
  s.output_mean = sum_o / z;
  s.prompt_p50 = quantile(wp, p_lo, 0.5);
  s.prompt_p90 = quantile(wp, p_lo, 0.9);
  s.prompt_p99 = quantile(wp, p_lo, 0.99);
  s.output_p50 = quantile(wo, o_lo, 0.5);
  s.output_p90 = quantile(wo, o_lo, 0.9);
  s.output_p99 = quantile(wo, o_lo, 0.99);
  return s;
}

ShareGptLengthLaw fit_sharegpt_length_law(double prompt_mean, double output_mean, double prompt_sigma, double output_sigma,
                                          const SequenceLengthFilter& filter) {
  ShareGptLengthLaw law;
  law.prompt = {0, prompt_sigma};
  law.output = {0, output_sigma};
  law.filter = filter;
  check_law(law);
  if (!(prompt_mean > filter.min_len && prompt_mean < filter.max_prompt_len))
    bad(fmt::format("sharegpt prompt mean: {} is outside ({}, {})", prompt_mean, filter.min_len, filter.max_prompt_len));
  if (!(output_mean > filter.min_len && output_mean < filter.max_total_len - filter.min_len))
    bad(fmt::format("sharegpt output mean: {} is outside ({}, {})", output_mean, filter.min_len,
                    filter.max_total_len - filter.min_len));
  // Each filtered mean grows with its own mu; alternate one-dimensional bisections.
  auto solve = [&](LognormalTokens& l, double target, bool prompt) {
    double lo = -10, hi = 20;
    for (int it = 0; it < 100 && hi - lo > 1e-12; ++it) {
      l.mu = 0.5 * (lo + hi);
      const FilteredLengthStats s = filtered_length_stats(law);
      ((prompt ? s.prompt_mean : s.output_mean) < target ? lo : hi) = l.mu;
    }
    l.mu = 0.5 * (lo + hi);
  };
  for (int round = 0; round < 50; ++round) {
    solve(law.prompt, prompt_mean, true);
    solve(law.output, output_mean, false);
    const FilteredLengthStats s = filtered_length_stats(law);
    if (std::abs(s.prompt_mean - prompt_mean) < 1e-6 && std::abs(s.output_mean - output_mean) < 1e-6) break;
  }
  return law;
}

std::vector<Request> sharegpt_dataset_requests(int64_t num_prompts, int64_t seed, const ShareGptLengthLaw& law,
                                               const BenchServeLimits& limits) {
  if (num_prompts < 1 || num_prompts > limits.max_num_prompts)
    bad(fmt::format("num_prompts: {} is outside 1..{}", num_prompts, limits.max_num_prompts));
  check_law(law);
  GoRand rng(seed);
  std::vector<Request> out(static_cast<size_t>(num_prompts));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].id = i;
    for (int64_t attempt = 0;; ++attempt) {
      if (attempt == 1'000'000) bad("sharegpt: 1,000,000 draws in a row refused by the length filter");
      const double radius = std::sqrt(-2 * std::log(1.0 - rng.float64()));
      const double angle = 2 * std::numbers::pi * rng.float64();
      const int32_t p = rounded_length(law.prompt.mu, law.prompt.sigma, radius * std::cos(angle));
      const int32_t o = rounded_length(law.output.mu, law.output.sigma, radius * std::sin(angle));
      if (law.filter.accepts(p, o)) {
        out[i].prompt_tokens = p;
        out[i].output_tokens = o;
        break;
      }
    }
  }
  return out;
}

std::vector<Request> sonnet_dataset_requests(const SonnetDataset& dataset, int64_t num_prompts, const BenchServeLimits& limits) {
  if (num_prompts < 1 || num_prompts > limits.max_num_prompts)
    bad(fmt::format("num_prompts: {} is outside 1..{}", num_prompts, limits.max_num_prompts));
  if (dataset.input_len < 1 || dataset.input_len > limits.max_tokens)
    bad(fmt::format("sonnet_input_len: {} is outside 1..{}", dataset.input_len, limits.max_tokens));
  if (dataset.output_len < 1 || dataset.output_len > limits.max_tokens)
    bad(fmt::format("sonnet_output_len: {} is outside 1..{}", dataset.output_len, limits.max_tokens));
  if (dataset.prefix_len < 0 || dataset.prefix_len > dataset.input_len)
    bad(fmt::format("sonnet_prefix_len: {} is outside 0..{} (the sonnet input length)", dataset.prefix_len, dataset.input_len));
  std::vector<uint32_t> prefix(static_cast<size_t>(dataset.prefix_len / kSonnetPrefixBlockTokens));
  for (size_t b = 0; b < prefix.size(); ++b) prefix[b] = static_cast<uint32_t>(b + 1);
  std::vector<Request> out(static_cast<size_t>(num_prompts));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].id = i;
    out[i].prompt_tokens = dataset.input_len;
    out[i].output_tokens = dataset.output_len;
    out[i].prefix_hashes = prefix;
    out[i].prefix_block_tokens = kSonnetPrefixBlockTokens;
  }
  return out;
}

}  // namespace gpufleet::inference
