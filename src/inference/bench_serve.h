// `gpufleet bench-serve`: the load that vLLM's own serving benchmark generates (`vllm bench serve`,
// vllm-project/vllm vllm/benchmarks/serve.py and vllm/benchmarks/datasets.py), run against simulated
// replicas (inference/deployment.h), and the metrics that benchmark prints. No I/O: the text and
// JSON writers are report/bench_serve_output.h, the command src/cli/bench_serve_command.h.
//
// Load
//  - Random dataset (datasets.py RandomDataset, _get_sampling_params): prompt lengths uniform on
//    [floor(input_len x (1 - r)), ceil(input_len x (1 + r))], output lengths on [max(1, floor(output_len
//    x (1 - r))), ceil(output_len x (1 + r))], r = range_ratio in [0, 1); all prompt lengths are drawn
//    first, then all output lengths. Departures: vLLM subtracts the tokenizer's special tokens from
//    input_len (1 for Llama's BOS) and tokenises text; here the lengths are the token counts, and a
//    prompt is at least 1 token. The draws come from util/go_rand.h, so a seed does not reproduce
//    numpy's lengths, only their law. The sharegpt and sonnet datasets: inference/dataset_lengths.h.
//  - Arrivals (serve.py get_request): request_rate inf sends every request at t = 0. Otherwise
//    request i is sent at the cumulative sum of i + 1 gaps drawn from Gamma(shape = burstiness, scale =
//    1 / (request_rate x burstiness)) (burstiness 1: Poisson; inf: a constant 1 / request_rate), then
//    all times are scaled so the last request is sent at num_prompts / request_rate (vLLM's
//    normalisation, applied when no ramp-up is set).
//  - max_concurrency C > 0 (serve.py's asyncio.Semaphore): at most C requests in flight; a request
//    whose send time has come waits, first come first served, until one finishes, and its clock
//    (TTFT, end-to-end latency) starts when it is sent, as in vLLM's request functions. A slot frees
//    when the request's last token reaches the client: the replica's front-end delay
//    (StepTimeModel::frontend) after the engine made it.
//
// Metrics (serve.py calculate_metrics): over the requests that finished, TTFT = first token - send,
// TPOT = (end-to-end - TTFT) / (output - 1) for requests with more than one output token, ITL = every
// gap between a request's successive tokens, E2EL = end-to-end latency; mean, median, standard
// deviation (numpy's population std) and p99 (numpy's linear percentile), in milliseconds;
// duration = the last finish (the benchmark starts at 0); request throughput = completed / duration,
// output throughput = output tokens / duration, total token throughput = (input + output) /
// duration. A request the engine refuses (longer than max_model_len) counts as failed.
//
// ITL: every step of a replica gives one token to each of its decoding requests, so a request's
// token times are the ends of its replica's steps in which it was scheduled. A request that was
// never preempted is scheduled in every step from its first token to its last (running requests
// are served first), so its gaps are exactly the successive step ends in (first token, finish]:
// this is what is reported. A preempted request misses the steps it spends waiting; its output -
// 1 tokens are then taken to come at the last output - 1 step ends before it finishes, the first gap
// absorbing the stall (the stall's true position is not recorded). The gaps always number output - 1
// and sum to finish - first token.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inference/catalog.h"
#include "inference/deployment.h"
#include "inference/disaggregated_deployment.h"
#include "inference/engine_args.h"
#include "inference/replica_engine.h"
#include "inference/request.h"
#include "inference/step_time.h"

namespace gpufleet::inference {

/// The client's API (`vllm bench serve --backend`, `--endpoint`; vllm/benchmarks/lib/endpoint_request_func.py
/// ASYNC_REQUEST_FUNCS). `vllm` and `openai` post to /v1/completions; `openai-chat` posts to
/// /v1/chat/completions, whose API server also renders the chat template (Request::chat).
struct BenchBackend {
  std::string name;       ///< "vllm", "openai" or "openai-chat"
  std::string endpoint;   ///< the URL path requests are posted to
  bool chat = false;      ///< true for openai-chat
};

/// The backend `name` with the `endpoint` path the client posts to (vllm bench serve's --endpoint,
/// whose default is /v1/completions; empty is refused). vLLM's own check is kept: the openai-chat
/// backend's URL must end with "chat/completions", the completions backends' with "completions"
/// (endpoint_request_func.py _validate_api_url), and a chat endpoint with a completions backend is
/// refused too. Throws std::invalid_argument with the reason: an unknown name (listing the modelled
/// ones; vLLM's audio, embeddings, pooling and other servers' backends are not modelled) or an
/// endpoint that does not fit the backend.
BenchBackend parse_bench_backend(std::string_view name, std::string_view endpoint);

/// vLLM's random dataset (--random-input-len, --random-output-len, --random-range-ratio).
struct RandomDataset {
  int32_t input_len = 1024;     ///< vLLM's default
  int32_t output_len = 128;     ///< vLLM's default
  double range_ratio = 0;       ///< in [0, 1)
};

/// Upper bounds on the load's sizes (a request above them is refused, not truncated).
struct BenchServeLimits {
  int64_t max_num_prompts = 1'000'000;   ///< vLLM's benchmark runs send 1,000 to 10,000
  int32_t max_tokens = 16'777'216;   ///< per prompt and per output, as the catalog's max context
  /// The latest send time, seconds (1e8 s, about 3 years, as simulate's longest horizon). The run's
  /// clock is a double: past about 1e14 s adding a step no longer moves it and the loop never ends,
  /// and a run of years of idle gaps measures nothing. A request rate or trace time scale that sends
  /// later is refused.
  double max_send_time_s = 1e8;
};
inline constexpr BenchServeLimits kBenchServeLimits{};

/// `num_prompts` requests (ids 0.., arrival 0) with the dataset's lengths. Throws
/// std::invalid_argument naming the field for input_len or output_len < 1 or above the limits,
/// range_ratio outside [0, 1), num_prompts < 1 or above the limit.
std::vector<Request> random_dataset_requests(const RandomDataset& dataset, int64_t num_prompts, int64_t seed,
                                             const BenchServeLimits& limits = kBenchServeLimits);

/// Sets each request's arrival_s (in order) to its send time under vLLM's get_request (see the top
/// of this file). request_rate: > 0, +inf = all at 0; burstiness > 0 (+inf allowed). Throws
/// std::invalid_argument naming the field otherwise.
/// Also throws when the last send time, num_prompts / request_rate, is above limits.max_send_time_s.
void assign_send_times(std::vector<Request>& requests, double request_rate, double burstiness, int64_t seed,
                       const BenchServeLimits& limits = kBenchServeLimits);

/// Checks a trace replay's last send time, `last_arrival_s` (the trace's, seconds) x `time_scale`,
/// against limits.max_send_time_s; throws std::invalid_argument naming time_scale when it is above
/// it or not finite.
void check_trace_send_time(double last_arrival_s, double time_scale, const BenchServeLimits& limits = kBenchServeLimits);

/// One statistic set, milliseconds.
struct LatencyStats {
  double mean_ms = 0, median_ms = 0, std_ms = 0, p99_ms = 0;
  int64_t samples = 0;
};

struct BenchServeResult {
  int64_t completed = 0;
  int64_t failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0;     ///< of the completed requests
  int64_t total_output_tokens = 0;
  double request_throughput = 0;      ///< req/s
  double output_throughput = 0;       ///< tok/s
  double total_token_throughput = 0;  ///< tok/s
  int32_t max_concurrent_requests = 0;  ///< most requests in flight at once (sent, not finished)
  int64_t preemptions = 0;            ///< over all requests
  int64_t dropped = 0;                ///< of the failed: refused (max_model_len, the EPP's shedding)
  /// Prompt tokens of the completed requests found in the replicas' prefix cache (vLLM's
  /// vllm:prefix_cache_hits over vllm:prefix_cache_queries, at each request's last schedule).
  int64_t cached_prompt_tokens = 0;
  double prefix_cache_hit_rate() const {
    return total_input_tokens > 0 ? static_cast<double>(cached_prompt_tokens) / static_cast<double>(total_input_tokens) : 0;
  }
  LatencyStats ttft, tpot, itl, e2el;
  // Disaggregated runs only (run_bench_serve_disaggregated); 0 otherwise.
  int64_t remote_prefills = 0;        ///< requests prefilled on the prefill pool
  int64_t local_prefills = 0;         ///< requests prefilled by a decode replica (short prompts)
  int64_t kv_transfers = 0;           ///< KV transfers to the decode pool
  double kv_bytes_transferred = 0;    ///< bytes, over all transfers
  double kv_transfer_mean_ms = 0;     ///< mean transfer time (kv_transfer_seconds)
};

/// Runs `requests` (arrival_s = the scheduled send time, non-decreasing) against `num_replicas`
/// replicas of one configuration behind `router` (default: least outstanding), with at most
/// `max_concurrency` requests in flight (0 = no limit), until every request has finished or failed.
/// `step_time` is used by every replica. Throws std::invalid_argument for num_replicas < 1,
/// max_concurrency < 0, unsorted or empty requests or a negative send time, or bad limits
/// (inference/replica_engine.h).
BenchServeResult run_bench_serve(const std::vector<Request>& requests, const StepTimeModel& step_time,
                                 const EngineLimits& limits, int32_t num_replicas = 1, int32_t max_concurrency = 0,
                                 const RouterConfig& router = {});

/// One pool of a disaggregated run: `replicas` replicas of one configuration. `step_time` must outlive the run.
struct BenchPool {
  const StepTimeModel* step_time = nullptr;
  EngineLimits limits;
  int32_t replicas = 1;
};

/// run_bench_serve against a prefill pool and a decode pool (inference/disaggregated_deployment.h),
/// each behind its own least-outstanding router. The inter-token gaps are those of the decode
/// replicas' steps (a request's first gap runs from its first token, on the prefill replica, to its
/// second, on the decode replica). Also fills the disaggregation counters. Throws
/// std::invalid_argument as run_bench_serve does, for a pool with fewer than 1 replica, and for a bad
/// `config` (DisaggregatedDeployment).
BenchServeResult run_bench_serve_disaggregated(const std::vector<Request>& requests, const BenchPool& prefill, const BenchPool& decode,
                                               const DisaggregationConfig& config, int32_t max_concurrency = 0);

/// A value that occurs `weight` times (the pooled ITL gaps: one step's gap is shared by every request
/// decoding through it, so the gaps are kept per step, not per token; memory follows the steps).
struct WeightedSample {
  double value = 0;
  int64_t weight = 1;
};

/// Mean, median, population std and p99 of the samples, each counted `weight` times, in ms (numpy's
/// linear percentile over the expanded list). Samples are in seconds.
LatencyStats weighted_stats_ms(std::vector<WeightedSample> samples);

/// The statistics of the finished outcomes as vLLM computes them, with `itl_s` the pooled
/// inter-token gaps and `duration_s` the benchmark's duration (helper of run_bench_serve, public for
/// tests).
BenchServeResult bench_serve_metrics(const std::vector<RequestOutcome>& outcomes, const std::vector<WeightedSample>& itl_s,
                                     double duration_s);

/// One configured replica: its KV budget in engine limits and its step-time model.
struct BenchReplica {
  EngineLimits limits;
  std::unique_ptr<StepTimeModel> step_time;
  int64_t kv_cache_tokens = 0;
  double kv_bytes_per_token_per_gpu = 0;  ///< KvCacheBudget::kv_bytes_per_token (for the KV transfer)
};

/// Builds the replica for `args` on `hw` (roofline step time, KV budget). Throws std::invalid_argument
/// with: an unknown model or GPU, listing the catalog's names; the KV budget's error
/// (KvCacheBudget::error: memory missing and what would fit) when the replica cannot start; an
/// argument out of range. args.max_num_seqs 0 = vLLM's default for the GPU (default_max_num_seqs).
BenchReplica make_bench_replica(const ServingCatalog& catalog, EngineArgs args, const ReplicaHardware& hw);

}  // namespace gpufleet::inference
