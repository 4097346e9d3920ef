// Token lengths of vLLM's benchmark datasets (inference/dataset_lengths.h): vLLM's ShareGPT filter,
// the exact filtered law against closed forms, the built-in law's fit to the published means, 100,000
// draws against the fitted targets, determinism by seed, and the sonnet dataset's fixed lengths and
// shared prefix.
#include "inference/dataset_lengths.h"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "inference/request_sources.h"

namespace gpufleet {
namespace {

using inference::FilteredLengthStats;
using inference::ShareGptLengthLaw;

TEST(DatasetLengths, ParsesVllmsNames) {
  EXPECT_TRUE(inference::parse_bench_dataset("random") == inference::BenchDataset::kRandom);
  EXPECT_TRUE(inference::parse_bench_dataset("sharegpt") == inference::BenchDataset::kShareGpt);
  EXPECT_TRUE(inference::parse_bench_dataset("sonnet") == inference::BenchDataset::kSonnet);
  for (const char* name : {"ShareGPT", "burstgpt", "hf", "custom", "prefix_repetition", "", "random "})
    EXPECT_FALSE(inference::parse_bench_dataset(name).has_value()) << name;
}

// vllm/benchmarks/dataset_utils.py is_valid_sequence: prompt >= 4, output >= 4, prompt <= 1024,
// prompt + output <= 2048.
TEST(DatasetLengths, FilterIsVllmsIsValidSequence) {
  const inference::SequenceLengthFilter f;
  EXPECT_TRUE(f.accepts(4, 4));
  EXPECT_FALSE(f.accepts(3, 100));
  EXPECT_FALSE(f.accepts(100, 3));
  EXPECT_TRUE(f.accepts(1024, 1024));
  EXPECT_FALSE(f.accepts(1025, 10));
  EXPECT_FALSE(f.accepts(1000, 1049));
  EXPECT_TRUE(f.accepts(1000, 1048));
}

// Prompt ~ round(exp(ln 100 + Z)), output always 10 (sigma 1e-6): the filter keeps prompts in
// [4, 1024], so with Phi the normal CDF:
//   acceptance = Phi(ln(1024.5 / 100)) - Phi(ln(3.5 / 100)) = 0.990012 - 0.000401 = 0.989611;
//   mean = e^(mu + 1/2) [Phi(ln(1024.5/100) - 1) - Phi(ln(3.5/100) - 1)] / acceptance
//        = 164.8721 x (0.907711 - 0.0000067) / 0.989611 = 151.226 (the continuous truncated lognormal);
//   median: Phi(ln(k + 0.5) - ln 100) reaches 0.5 x 0.989611 + 0.000401 = 0.495207 at k = 99.
TEST(DatasetLengths, FilteredStatsMatchClosedForms) {
  ShareGptLengthLaw law;
  law.prompt = {std::log(100.0), 1.0};
  law.output = {std::log(10.0), 1e-6};
  const FilteredLengthStats s = inference::filtered_length_stats(law);
  EXPECT_NEAR(s.acceptance, 0.989611, 1e-6);
  EXPECT_NEAR(s.prompt_mean, 151.226, 0.001);
  EXPECT_EQ(s.prompt_p50, 99);
  EXPECT_NEAR(s.output_mean, 10, 1e-9);
  EXPECT_EQ(s.output_p50, 10);
  EXPECT_EQ(s.output_p99, 10);
  // Every pair refused (prompt 100 + output 3,000 > 2,048): an error, not a division by zero.
  law.prompt = {std::log(100.0), 1e-6};
  law.output = {std::log(3000.0), 1e-6};
  EXPECT_THROW(inference::filtered_length_stats(law), std::invalid_argument);
  law.output.sigma = 0;
  EXPECT_THROW(inference::filtered_length_stats(law), std::invalid_argument);
}

// The built-in law is the fit of the published means (229.711 prompt, 203.068 output tokens) with
// the assumed shapes, to the stored digits.
TEST(DatasetLengths, BuiltinLawIsTheFitOfThePublishedMeans) {
  const ShareGptLengthLaw fit =
      inference::fit_sharegpt_length_law(inference::kShareGptPromptMeanTokens, inference::kShareGptOutputMeanTokens,
                                         inference::kShareGptPromptSigma, inference::kShareGptOutputSigma);
  const ShareGptLengthLaw law = inference::sharegpt_length_law();
  EXPECT_NEAR(law.prompt.mu, fit.prompt.mu, 1e-6);
  EXPECT_NEAR(law.output.mu, fit.output.mu, 1e-6);
  EXPECT_EQ(law.prompt.sigma, 1.3);
  EXPECT_EQ(law.output.sigma, 0.8);
  const FilteredLengthStats s = inference::filtered_length_stats(law);
  EXPECT_NEAR(s.prompt_mean, 229.711, 0.001);
  EXPECT_NEAR(s.output_mean, 203.068, 0.001);
  EXPECT_THROW(inference::fit_sharegpt_length_law(1024, 200, 1.3, 0.8), std::invalid_argument);
  EXPECT_THROW(inference::fit_sharegpt_length_law(200, 2044, 1.3, 0.8), std::invalid_argument);
}

// 100,000 draws: every pair passes vLLM's filter; the sample means are within 1% of the published
// targets (their standard errors are about 0.4%), and the sample percentiles within 3% (at least 2
// tokens) of the law's exact ones.
TEST(DatasetLengths, HundredThousandDrawsMatchTheFittedLaw) {
  const std::vector<inference::Request> r = inference::sharegpt_dataset_requests(100'000, 7);
  ASSERT_EQ(r.size(), 100'000u);
  std::vector<double> prompts, outputs;
  const inference::SequenceLengthFilter filter;
  for (size_t i = 0; i < r.size(); ++i) {
    ASSERT_EQ(r[i].id, i);
    ASSERT_EQ(r[i].arrival_s, 0);
    ASSERT_TRUE(filter.accepts(r[i].prompt_tokens, r[i].output_tokens)) << r[i].prompt_tokens << ' ' << r[i].output_tokens;
    prompts.push_back(r[i].prompt_tokens);
    outputs.push_back(r[i].output_tokens);
  }
  const double n = static_cast<double>(r.size());
  const double prompt_mean = std::accumulate(prompts.begin(), prompts.end(), 0.0) / n;
  const double output_mean = std::accumulate(outputs.begin(), outputs.end(), 0.0) / n;
  EXPECT_NEAR(prompt_mean, 229.711, 0.01 * 229.711);
  EXPECT_NEAR(output_mean, 203.068, 0.01 * 203.068);
  const FilteredLengthStats s = inference::filtered_length_stats(inference::sharegpt_length_law());
  auto near = [](double sample, int32_t exact) { return std::abs(sample - exact) <= std::max(2.0, 0.03 * exact); };
  EXPECT_TRUE(near(inference::percentile(prompts, 50), s.prompt_p50)) << inference::percentile(prompts, 50) << " vs " << s.prompt_p50;
  EXPECT_TRUE(near(inference::percentile(prompts, 90), s.prompt_p90)) << inference::percentile(prompts, 90) << " vs " << s.prompt_p90;
  EXPECT_TRUE(near(inference::percentile(prompts, 99), s.prompt_p99)) << inference::percentile(prompts, 99) << " vs " << s.prompt_p99;
  EXPECT_TRUE(near(inference::percentile(outputs, 50), s.output_p50)) << inference::percentile(outputs, 50) << " vs " << s.output_p50;
  EXPECT_TRUE(near(inference::percentile(outputs, 90), s.output_p90)) << inference::percentile(outputs, 90) << " vs " << s.output_p90;
  EXPECT_TRUE(near(inference::percentile(outputs, 99), s.output_p99)) << inference::percentile(outputs, 99) << " vs " << s.output_p99;
}

TEST(DatasetLengths, SameSeedSameLengths) {
  const auto a = inference::sharegpt_dataset_requests(1000, 3);
  const auto b = inference::sharegpt_dataset_requests(1000, 3);
  const auto c = inference::sharegpt_dataset_requests(1000, 4);
  ASSERT_EQ(a.size(), 1000u);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
    differs = differs || a[i].prompt_tokens != c[i].prompt_tokens || a[i].output_tokens != c[i].output_tokens;
  }
  EXPECT_TRUE(differs);
  EXPECT_THROW(inference::sharegpt_dataset_requests(0, 1), std::invalid_argument);
}

// vLLM's sonnet defaults: 550 prompt tokens, 150 output tokens, a 200-token shared prefix, which is
// 12 full 16-token blocks (192 tokens) with the same hashes in every request.
TEST(DatasetLengths, SonnetHasFixedLengthsAndASharedPrefix) {
  const auto r = inference::sonnet_dataset_requests({}, 3);
  ASSERT_EQ(r.size(), 3u);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].id, i);
    EXPECT_EQ(r[i].prompt_tokens, 550);
    EXPECT_EQ(r[i].output_tokens, 150);
    EXPECT_EQ(r[i].prefix_block_tokens, 16);
    ASSERT_EQ(r[i].prefix_hashes.size(), 12u);
    EXPECT_EQ(r[i].prefix_hashes, r[0].prefix_hashes);
  }
  EXPECT_TRUE(inference::sonnet_dataset_requests({100, 10, 15}, 1)[0].prefix_hashes.empty());
  EXPECT_EQ(inference::sonnet_dataset_requests({100, 10, 16}, 1)[0].prefix_hashes.size(), 1u);
  EXPECT_EQ(inference::sonnet_dataset_requests({100, 10, 100}, 1)[0].prefix_hashes.size(), 6u);
  try {
    inference::sonnet_dataset_requests({100, 10, 101}, 1);
    ADD_FAILURE() << "prefix above the input accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "sonnet_prefix_len: 101 is outside 0..100 (the sonnet input length)");
  }
  EXPECT_THROW(inference::sonnet_dataset_requests({0, 10, 0}, 1), std::invalid_argument);
  EXPECT_THROW(inference::sonnet_dataset_requests({100, 0, 0}, 1), std::invalid_argument);
  EXPECT_THROW(inference::sonnet_dataset_requests({100, 10, -1}, 1), std::invalid_argument);
  EXPECT_THROW(inference::sonnet_dataset_requests({}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet
