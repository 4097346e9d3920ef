// The token lengths of `vllm bench serve --dataset-name NAME` (vllm-project/vllm
// vllm/benchmarks/datasets.py) for the datasets whose lengths are published: random (bench_serve.h
// RandomDataset), sharegpt and sonnet. No I/O; the flag is src/cli/bench_serve_command.cpp, the
// reasoning docs/bench-serve.md ("Datasets").
//
// sharegpt (datasets.py ShareGPTDataset: the first human turn of each conversation of
// ShareGPT_V3_unfiltered_cleaned_split.json is the prompt, the first gpt turn's token count the
// output length, both counted by the served model's tokenizer; a pair is dropped unless
// vllm/benchmarks/dataset_utils.py is_valid_sequence holds: prompt >= 4, output >= 4, prompt <= 1024,
// prompt + output <= 2048). Here the raw lengths are two independent lognormals, rounded to the
// nearest integer, and a pair is drawn again until the same filter holds (rejection sampling), so the
// law served is the filtered one. The two location parameters are fitted (fit_sharegpt_length_law)
// so that the filtered means are the published ones:
//  - prompt mean 229.711 tokens and output mean 203.068 tokens: 1,000 ShareGPT prompts through
//    Llama-3.1-8B-Instruct's tokenizer sent by `vllm bench serve` gave "Total input tokens: 229711"
//    and "Total generated tokens: 203068" (vllm-project/vllm pull request 18566, description:
//    --dataset-name hf --dataset-path Aeala/ShareGPT_Vicuna_unfiltered, the same filter). The
//    generated tokens are what the model produced before its end-of-sequence token, at most the
//    dataset's output length, so the output law is that of the run, not of the dataset's replies.
//  - ASSUMPTION, the two shapes: prompt sigma 1.3, output sigma 0.8 (ln-scale standard deviations).
//    No published percentile of ShareGPT's first-turn token counts was found; the filtered
//    percentiles they imply (filtered_length_stats: prompt p50 148, p90 571, p99 950; output p50 149,
//    p90 413, p99 928 tokens; 91.4% of raw pairs pass the filter) are those of this law, not
//    measurements. The spread matters: a run's duration is set by its longest requests.
//  - Prompt and output are independent before the filter: no published joint statistic of the first
//    turn was found (the filter's prompt + output <= 2048 still couples them).
//
// sonnet (datasets.py SonnetDataset, deprecated in vLLM): every prompt has --sonnet-input-len tokens
// at most (lines of Shakespeare's sonnets are added until the chat-templated prompt would pass it)
// and asks for --sonnet-output-len tokens; its first --sonnet-prefix-len tokens (the instruction and
// the first poem lines) are the same in every prompt. Here every prompt has exactly input_len tokens
// (vLLM's fall a few tokens short, by the tokenizer's line lengths) and the shared prefix is given as
// prefix-block hashes, so that vLLM's prefix cache serves it (inference/kv_cache_manager.h).
//
// Not modelled: burstgpt (vLLM samples the GPT-4 rows of BurstGPT_without_fails_2.csv; the BurstGPT
// paper, arXiv 2401.17644, and its README give the response length given the request length in a
// figure and name a Zipf law for request lengths without its parameter, so no marginal law can be
// fitted; the CSV itself is a trace, not a published statistic), hf and custom (lengths come from a
// file of text and a tokenizer), prefix_repetition, random-mm and the other multimodal sets.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "inference/bench_serve.h"
#include "inference/request.h"
#include "inference/request_sources.h"

namespace gpufleet::inference {

/// The datasets of `--dataset-name` that gpufleet models.
enum class BenchDataset { kRandom, kShareGpt, kSonnet };

/// "random", "sharegpt", "sonnet" (vLLM's names, exact) -> the dataset; nullopt for any other name.
std::optional<BenchDataset> parse_bench_dataset(std::string_view name);

/// vLLM's filter of dataset pairs (vllm/benchmarks/dataset_utils.py is_valid_sequence, its defaults):
/// a pair is kept when prompt >= min_len, output >= min_len, prompt <= max_prompt_len and prompt +
/// output <= max_total_len. Tokens.
struct SequenceLengthFilter {
  int32_t min_len = 4;
  int32_t max_prompt_len = 1024;
  int32_t max_total_len = 2048;
  bool accepts(int64_t prompt_tokens, int64_t output_tokens) const {
    return prompt_tokens >= min_len && output_tokens >= min_len && prompt_tokens <= max_prompt_len &&
           prompt_tokens + output_tokens <= max_total_len;
  }
};

/// The law of a ShareGPT (prompt, output) pair: each length is round(exp(mu + sigma Z)) with Z
/// standard normal, independently, kept when `filter` accepts the pair.
struct ShareGptLengthLaw {
  LognormalTokens prompt;
  LognormalTokens output;
  SequenceLengthFilter filter;
};

/// The published targets of the built-in law (see the top of this file).
inline constexpr double kShareGptPromptMeanTokens = 229.711;  ///< filtered, Llama-3.1 tokenizer
inline constexpr double kShareGptOutputMeanTokens = 203.068;  ///< filtered, generated by Llama-3.1-8B-Instruct
inline constexpr double kShareGptPromptSigma = 1.3;           ///< ASSUMPTION
inline constexpr double kShareGptOutputSigma = 0.8;           ///< ASSUMPTION

/// The built-in law: the targets above fitted by fit_sharegpt_length_law (the fitted mu are stored,
/// so that every platform draws the same lengths; a test checks that the fit gives them).
ShareGptLengthLaw sharegpt_length_law();

/// Exact figures of the filtered law (sums over every integer pair, no sampling): the probability
/// that a raw pair passes the filter, the filtered means, and the filtered percentiles (the smallest
/// length whose cumulative probability reaches p).
struct FilteredLengthStats {
  double acceptance = 0;
  double prompt_mean = 0, output_mean = 0;
  int32_t prompt_p50 = 0, prompt_p90 = 0, prompt_p99 = 0;
  int32_t output_p50 = 0, output_p90 = 0, output_p99 = 0;
};
/// Throws std::invalid_argument for a sigma <= 0 or not finite, a mu not finite, or a filter with
/// min_len < 1, max_prompt_len < min_len or max_total_len < 2 min_len (no pair would pass), or
/// max_total_len above 16,777,216.
FilteredLengthStats filtered_length_stats(const ShareGptLengthLaw& law);

/// The law with the given sigmas whose filtered means are `prompt_mean` and `output_mean` (each mu by
/// bisection on [-10, 20], alternating until both means are within 1e-6 tokens). Throws
/// std::invalid_argument for means the filter cannot give (outside (min_len, max_prompt_len) for the
/// prompt, (min_len, max_total_len - min_len) for the output) or bad sigmas (filtered_length_stats).
ShareGptLengthLaw fit_sharegpt_length_law(double prompt_mean, double output_mean, double prompt_sigma, double output_sigma,
                                          const SequenceLengthFilter& filter = {});

/// `num_prompts` requests (ids 0.., arrival 0) drawn from `law`. Draws from GoRand(seed) (util/go_rand.h),
/// per request and per attempt: two uniforms U1, U2 (Box-Muller: radius sqrt(-2 ln(1 - U1)), angle 2 pi
/// U2; the prompt's normal is radius cos(angle), the output's radius sin(angle)); an attempt the
/// filter refuses is drawn again. The same seed gives the same lengths. Throws std::invalid_argument
/// for num_prompts outside 1..limits.max_num_prompts, and if 1,000,000 attempts in a row are refused
/// (a law the filter almost never accepts).
std::vector<Request> sharegpt_dataset_requests(int64_t num_prompts, int64_t seed,
                                               const ShareGptLengthLaw& law = sharegpt_length_law(),
                                               const BenchServeLimits& limits = kBenchServeLimits);

/// vLLM's sonnet dataset (--sonnet-input-len, --sonnet-output-len, --sonnet-prefix-len; vLLM's defaults).
struct SonnetDataset {
  int32_t input_len = 550;
  int32_t output_len = 150;
  int32_t prefix_len = 200;
};

/// The block of the shared-prefix hashes of sonnet_dataset_requests: vLLM's default KV block size.
inline constexpr int32_t kSonnetPrefixBlockTokens = 16;

/// `num_prompts` requests (ids 0.., arrival 0) of input_len prompt and output_len output tokens,
/// each with the same floor(prefix_len / 16) prefix-block hashes (16-token blocks: the shared
/// prefix's full blocks). No randomness. Throws std::invalid_argument naming the field for
/// input_len or output_len < 1 or above limits.max_tokens, prefix_len < 0 or above input_len,
/// num_prompts outside 1..limits.max_num_prompts.
std::vector<Request> sonnet_dataset_requests(const SonnetDataset& dataset, int64_t num_prompts,
                                             const BenchServeLimits& limits = kBenchServeLimits);

}  // namespace gpufleet::inference
