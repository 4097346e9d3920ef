// vLLM's serving benchmark against simulated replicas (bench_serve.h).
#include "inference/bench_serve.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <numbers>
#include <queue>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "inference/deployment.h"
#include "inference/disaggregated_deployment.h"
#include "inference/kv_cache.h"
#include "inference/request_sources.h"
#include "util/go_rand.h"

namespace gpufleet::inference {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

/// Gamma(shape, 1) by Marsaglia and Tsang (ACM TOMS 26(3), 2000); shape < 1 via Gamma(shape + 1) x
/// U^(1/shape). Normals by Box-Muller. Shape 1 draws an exponential directly (one uniform).
double gamma_draw(GoRand& rng, double shape) {
  if (shape == 1) return -std::log(1.0 - rng.float64());
  if (shape < 1) {
    const double g = gamma_draw(rng, shape + 1);
    return g * std::pow(1.0 - rng.float64(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9 * d);
  for (;;) {
    const double radius = std::sqrt(-2 * std::log(1.0 - rng.float64()));
    const double x = radius * std::cos(2 * std::numbers::pi * rng.float64());
    const double v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const double v = v0 * v0 * v0;
    const double u = 1.0 - rng.float64();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

LatencyStats stats_ms(const std::vector<double>& seconds) {
  LatencyStats s;
  s.samples = static_cast<int64_t>(seconds.size());
  if (seconds.empty()) return s;
  double sum = 0;
  for (double v : seconds) sum += v;
  const double mean = sum / static_cast<double>(seconds.size());
  double sq = 0;
  for (double v : seconds) sq += (v - mean) * (v - mean);
  s.mean_ms = mean * 1000;
  s.std_ms = std::sqrt(sq / static_cast<double>(seconds.size())) * 1000;
  s.median_ms = percentile(seconds, 50) * 1000;
  s.p99_ms = percentile(seconds, 99) * 1000;
  return s;
}

}  // namespace

LatencyStats weighted_stats_ms(std::vector<WeightedSample> samples) {
  LatencyStats s;
  std::erase_if(samples, [](const WeightedSample& x) { return x.weight <= 0; });
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end(), [](const WeightedSample& a, const WeightedSample& b) { return a.value < b.value; });
  double total = 0, sum = 0;
  for (const WeightedSample& x : samples) {
    total += static_cast<double>(x.weight);
    sum += x.value * static_cast<double>(x.weight);
  }
  const double mean = sum / total;
  double sq = 0;
  for (const WeightedSample& x : samples) sq += static_cast<double>(x.weight) * (x.value - mean) * (x.value - mean);
  // The value at 0-based rank k of the expanded sorted list.
  auto at = [&samples](int64_t k) {
    for (const WeightedSample& x : samples) {
      if (k < x.weight) return x.value;
      k -= x.weight;
    }
    return samples.back().value;
  };
  auto pct = [&](double p) {
    const double rank = (total - 1) * p / 100;
    const auto lo = static_cast<int64_t>(std::floor(rank));
    const double a = at(lo), b = at(std::min<int64_t>(lo + 1, static_cast<int64_t>(total) - 1));
    return a + (b - a) * (rank - static_cast<double>(lo));
  };
  s.samples = static_cast<int64_t>(total);
  s.mean_ms = mean * 1000;
  s.std_ms = std::sqrt(sq / total) * 1000;
  s.median_ms = pct(50) * 1000;
  s.p99_ms = pct(99) * 1000;
  return s;
}

BenchBackend parse_bench_backend(std::string_view name, std::string_view endpoint) {
  if (endpoint.empty()) throw std::invalid_argument("endpoint: must not be empty (vllm bench serve's default is /v1/completions)");
  const std::string path(endpoint);
  const auto ends_with = [&](std::string_view tail) {
    return path.size() >= tail.size() && std::string_view(path).substr(path.size() - tail.size()) == tail;
  };
  if (name == "openai-chat") {
    if (!ends_with("chat/completions"))
      throw std::invalid_argument(fmt::format("endpoint {:?}: the openai-chat backend posts to an OpenAI Chat Completions API URL, "
                                              "which must end with 'chat/completions' (give --endpoint /v1/chat/completions)",
                                              path));
    return {std::string(name), path, true};
  }
  if (name == "vllm" || name == "openai") {
    if (!ends_with("completions") || ends_with("chat/completions"))
      throw std::invalid_argument(fmt::format("endpoint {:?}: the {} backend posts to an OpenAI Completions API URL, which must end "
                                              "with 'completions' and not 'chat/completions' (use --backend openai-chat for that)",
                                              path, name));
    return {std::string(name), path, false};
  }
  throw std::invalid_argument(fmt::format("unknown backend {:?} (vllm, openai, openai-chat; vLLM's audio, embeddings, pooling and "
                                          "other servers' backends are not modelled)",
                                          name));
}

std::vector<Request> random_dataset_requests(const RandomDataset& dataset, int64_t num_prompts, int64_t seed,
                                             const BenchServeLimits& limits) {
  if (num_prompts < 1 || num_prompts > limits.max_num_prompts)
    bad(fmt::format("num_prompts: {} is outside 1..{}", num_prompts, limits.max_num_prompts));
  if (dataset.input_len < 1 || dataset.input_len > limits.max_tokens)
    bad(fmt::format("random_input_len: {} is outside 1..{}", dataset.input_len, limits.max_tokens));
  if (dataset.output_len < 1 || dataset.output_len > limits.max_tokens)
    bad(fmt::format("random_output_len: {} is outside 1..{}", dataset.output_len, limits.max_tokens));
  if (!(dataset.range_ratio >= 0 && dataset.range_ratio < 1))
    bad(fmt::format("random_range_ratio: {} is outside [0, 1) (vLLM's range)", dataset.range_ratio));
  const double r = dataset.range_ratio;
  const auto in_lo = std::max<int64_t>(1, static_cast<int64_t>(std::floor(dataset.input_len * (1 - r))));
  const auto in_hi = std::max<int64_t>(in_lo, static_cast<int64_t>(std::ceil(dataset.input_len * (1 + r))));
  const auto out_lo = std::max<int64_t>(1, static_cast<int64_t>(std::floor(dataset.output_len * (1 - r))));
  const auto out_hi = std::max<int64_t>(out_lo, static_cast<int64_t>(std::ceil(dataset.output_len * (1 + r))));
  GoRand rng(seed);
  std::vector<Request> out(static_cast<size_t>(num_prompts));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].id = i;
    out[i].prompt_tokens = static_cast<int32_t>(in_lo + (in_hi > in_lo ? rng.int63n(in_hi - in_lo + 1) : 0));
  }
  for (Request& q : out) q.output_tokens = static_cast<int32_t>(out_lo + (out_hi > out_lo ? rng.int63n(out_hi - out_lo + 1) : 0));
  return out;
}

void assign_send_times(std::vector<Request>& requests, double request_rate, double burstiness, int64_t seed,
                       const BenchServeLimits& limits) {
  if (!(request_rate > 0)) bad(fmt::format("request_rate: {} must be positive or inf", request_rate));
  if (!(burstiness > 0)) bad(fmt::format("burstiness: {} must be positive", burstiness));
  if (const double last = static_cast<double>(requests.size()) / request_rate; last > limits.max_send_time_s)
    bad(fmt::format("request_rate: {:g} sends {} prompts over {:.3g} s, longer than the most simulated time of {:g} s; raise the rate",
                    request_rate, requests.size(), last, limits.max_send_time_s));
  if (std::isinf(request_rate)) {
    for (Request& q : requests) q.arrival_s = 0;
    return;
  }
  GoRand rng(seed);
  const double theta = 1.0 / (request_rate * burstiness);
  double t = 0;
  for (Request& q : requests) {
    t += std::isinf(burstiness) ? 1.0 / request_rate : gamma_draw(rng, burstiness) * theta;
    q.arrival_s = t;
  }
  if (!requests.empty() && t > 0) {
    const double factor = (static_cast<double>(requests.size()) / request_rate) / t;
    for (Request& q : requests) q.arrival_s *= factor;
  }
}

void check_trace_send_time(double last_arrival_s, double time_scale, const BenchServeLimits& limits) {
  const double last = std::max(0.0, last_arrival_s) * time_scale;
  if (!std::isfinite(last) || last > limits.max_send_time_s)
    bad(fmt::format("time_scale: {:g} sends the trace's last request at {:.3g} s, later than the most simulated time of {:g} s; "
                    "lower the time scale",
                    time_scale, last, limits.max_send_time_s));
}

BenchServeResult bench_serve_metrics(const std::vector<RequestOutcome>& outcomes, const std::vector<WeightedSample>& itl_s,
                                     double duration_s) {
  BenchServeResult r;
  std::vector<double> ttft, tpot, e2el;
  for (const RequestOutcome& o : outcomes) {
    r.preemptions += o.preemptions;
    if (o.status != RequestStatus::kFinished) {
      ++r.failed;
      if (o.status == RequestStatus::kDropped) ++r.dropped;
      continue;
    }
    ++r.completed;
    r.total_input_tokens += o.prompt_tokens;
    r.cached_prompt_tokens += o.cached_prompt_tokens;
    r.total_output_tokens += o.output_tokens;
    ttft.push_back(o.ttft_s());
    if (o.output_tokens > 1) tpot.push_back(o.tpot_s());
    e2el.push_back(o.e2e_s());
  }
  r.duration_s = duration_s;
  if (duration_s > 0) {
    r.request_throughput = static_cast<double>(r.completed) / duration_s;
    r.output_throughput = static_cast<double>(r.total_output_tokens) / duration_s;
    r.total_token_throughput = static_cast<double>(r.total_input_tokens + r.total_output_tokens) / duration_s;
  }
  r.ttft = stats_ms(ttft);
  r.tpot = stats_ms(tpot);
  r.itl = weighted_stats_ms(itl_s);
  r.e2el = stats_ms(e2el);
  return r;
}

namespace {

void check_requests(const std::vector<Request>& requests, int32_t max_concurrency) {
  if (max_concurrency < 0) bad(fmt::format("max_concurrency: {} must be 0 (no limit) or positive", max_concurrency));
  if (requests.empty()) bad("bench-serve: no requests");
  if (!(requests.front().arrival_s >= 0)) bad("bench-serve: send times must be >= 0 s");
  for (size_t i = 1; i < requests.size(); ++i)
    if (requests[i].arrival_s < requests[i - 1].arrival_s) bad("bench-serve: requests must be sorted by send time");
}

/// The client's loop against `dep` (a Deployment or a DisaggregatedDeployment), whose observer
/// appends every outcome to `outcomes`. Returns the most requests in flight at once.
template <class D>
int32_t run_client(const std::vector<Request>& requests, D& dep, const std::vector<RequestOutcome>& outcomes, int32_t max_concurrency) {
  // In flight: sent and not yet back at the client (a request refused at once never counts). A
  // finished request's slot frees when its last token reaches the client: finish_s, the front end's
  // delay after the engine made it (StepTimeModel::frontend), not when the engine reports it.
  size_t sent = 0, returned = 0, reported = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> unseen;  // finish times still ahead
  int32_t max_in_flight = 0;
  auto in_flight = [&] { return static_cast<int32_t>(sent - returned); };
  auto send = [&](size_t i, double t) {
    Request q = requests[i];
    q.id = i;
    q.arrival_s = t;
    ++sent;
    dep.submit(q, t);
    max_in_flight = std::max(max_in_flight, in_flight());
  };
  // The client's loop; time moves in one place, its last line. At each instant: the requests whose
  // send time has come join the held queue (FIFO), and are sent while the concurrency limit allows
  // (no limit: all at once); then time moves to the next send time or, when a finish can free a slot
  // or every request is sent, to the next event of the deployment, so that a closed-loop client
  // sends the next request at the finish time exactly. The open loop reacts to no finish while it
  // sends: it moves from send time to send time.
  std::deque<size_t> held;  // send time came, no slot yet
  size_t next = 0;
  double now = 0;
  while (outcomes.size() < requests.size()) {
    for (; reported < outcomes.size(); ++reported) unseen.push(outcomes[reported].finish_s);
    for (; !unseen.empty() && unseen.top() <= now; unseen.pop()) ++returned;
    while (next < requests.size() && requests[next].arrival_s <= now) held.push_back(next++);
    while (!held.empty() && (max_concurrency == 0 || in_flight() < max_concurrency)) {
      send(held.front(), now);
      held.pop_front();
    }
    const double t_arrival = next < requests.size() ? requests[next].arrival_s : kInf;
    double t_event = t_arrival;
    if (max_concurrency > 0 || next == requests.size()) {
      dep.start_due_steps();  // every request of this instant is sent
      t_event = std::min(t_arrival, dep.next_event_s());
      if (!unseen.empty()) t_event = std::min(t_event, unseen.top());
    }
    if (!std::isfinite(t_event)) break;
    dep.advance_to(t_event);
    now = t_event;
  }
  return max_in_flight;
}

/// The metrics of a run whose outcomes' tokens after the first come at the step ends of the
/// replica `step_ends[o.replica]` (bench_serve.h, ITL).
BenchServeResult metrics_with_itl(const std::vector<RequestOutcome>& outcomes, const std::vector<std::vector<double>>& step_ends) {
  double duration = 0;
  for (const RequestOutcome& o : outcomes) duration = std::max(duration, o.finish_s);

  // Inter-token gaps from the replicas' step ends (bench_serve.h). A request whose tokens 2.. come at
  // step ends k = from..last of its replica has the gaps ends[k] - ends[k - 1] for those k, the first
  // one ends[from] - first token when the step before `from` is not its first token (a preempted
  // request's stall; a disaggregated request's first token came from the prefill replica): they are
  // counted per step (a difference array of how many requests take each step's gap), not stored per
  // token.
  std::vector<WeightedSample> itl;
  std::vector<std::vector<int64_t>> takers(step_ends.size());
  for (size_t r = 0; r < step_ends.size(); ++r) takers[r].assign(step_ends[r].size() + 1, 0);
  for (const RequestOutcome& o : outcomes) {
    if (o.status != RequestStatus::kFinished || o.output_tokens < 2 || o.replica < 0) continue;
    const std::vector<double>& ends = step_ends[static_cast<size_t>(o.replica)];
    std::vector<int64_t>& take = takers[static_cast<size_t>(o.replica)];
    // The engine's times (the front end delays the client's view of the first and last tokens:
    // RequestOutcome::first_token_frontend_s, frontend_s); a step end is matched within 1 ns, as
    // subtracting the delay may not give the engine's time to the bit.
    const double first_token_s = o.first_token_s - o.first_token_frontend_s, finish_s = o.finish_s - o.frontend_s;
    constexpr double kSameTime = 1e-9;
    const int64_t after = std::upper_bound(ends.begin(), ends.end(), first_token_s + kSameTime) - ends.begin();
    const int64_t last = std::lower_bound(ends.begin(), ends.end(), finish_s - kSameTime) - ends.begin();
    const int64_t want = o.output_tokens - 1;
    const auto n = static_cast<int64_t>(ends.size());
    if (after >= n || last >= n || last - after + 1 < want) {
      // Not expected (the request's tokens are step ends of its replica); an even split keeps the sum.
      itl.push_back({(o.finish_s - o.first_token_s) / static_cast<double>(want), want});
      continue;
    }
    const int64_t from = last - want + 1;  // its second token's step
    if (from == 0 || std::fabs(ends[static_cast<size_t>(from - 1)] - first_token_s) > kSameTime) {
      itl.push_back({ends[static_cast<size_t>(from)] - first_token_s, 1});
      if (from + 1 <= last) {
        ++take[static_cast<size_t>(from + 1)];
        --take[static_cast<size_t>(last + 1)];
      }
    } else {
      ++take[static_cast<size_t>(from)];
      --take[static_cast<size_t>(last + 1)];
    }
  }
  for (size_t r = 0; r < step_ends.size(); ++r) {
    int64_t w = 0;
    for (size_t k = 1; k < step_ends[r].size(); ++k) {
      w += takers[r][k];
      if (w > 0) itl.push_back({step_ends[r][k] - step_ends[r][k - 1], w});
    }
  }
  return bench_serve_metrics(outcomes, itl, duration);
}

}  // namespace

BenchServeResult run_bench_serve(const std::vector<Request>& requests, const StepTimeModel& step_time,
                                 const EngineLimits& limits, int32_t num_replicas, int32_t max_concurrency,
                                 const RouterConfig& router) {
  if (num_replicas < 1) bad(fmt::format("num_replicas: {} must be at least 1", num_replicas));
  check_requests(requests, max_concurrency);

  std::vector<RequestOutcome> outcomes;
  outcomes.reserve(requests.size());
  std::vector<std::vector<double>> step_ends(static_cast<size_t>(num_replicas));
  Deployment::Observer obs;
  obs.on_outcome = [&](const RequestOutcome& o) { outcomes.push_back(o); };
  obs.on_step = [&](int32_t replica, const StepRecord& s) { step_ends[static_cast<size_t>(replica)].push_back(s.end_s); };
  Deployment dep(router, std::move(obs));
  for (int32_t i = 0; i < num_replicas; ++i) dep.add_replica(0, step_time, limits);
  const int32_t max_in_flight = run_client(requests, dep, outcomes, max_concurrency);
  BenchServeResult r = metrics_with_itl(outcomes, step_ends);
  r.max_concurrent_requests = max_in_flight;
  return r;
}

BenchServeResult run_bench_serve_disaggregated(const std::vector<Request>& requests, const BenchPool& prefill, const BenchPool& decode,
                                               const DisaggregationConfig& config, int32_t max_concurrency) {
  if (prefill.replicas < 1 || decode.replicas < 1)
    bad(fmt::format("num_replicas: prefill {} and decode {} must be at least 1", prefill.replicas, decode.replicas));
  if (prefill.step_time == nullptr || decode.step_time == nullptr) bad("bench-serve: a pool without a step-time model");
  check_requests(requests, max_concurrency);

  std::vector<RequestOutcome> outcomes;
  outcomes.reserve(requests.size());
  std::vector<std::vector<double>> step_ends(static_cast<size_t>(decode.replicas));  // the decode replicas' (ITL)
  DisaggregatedDeployment::Observer obs;
  obs.on_outcome = [&](const RequestOutcome& o) { outcomes.push_back(o); };
  obs.on_decode_step = [&](int32_t replica, const StepRecord& s) { step_ends[static_cast<size_t>(replica)].push_back(s.end_s); };
  DisaggregatedDeployment dep(config, RouterConfig{}, std::move(obs));
  for (int32_t i = 0; i < prefill.replicas; ++i) dep.add_prefill_replica(0, *prefill.step_time, prefill.limits);
  for (int32_t i = 0; i < decode.replicas; ++i) dep.add_decode_replica(0, *decode.step_time, decode.limits);
  const int32_t max_in_flight = run_client(requests, dep, outcomes, max_concurrency);
  // A request finished on its prefill replica (one output token) carries a prefill replica's id;
  // it has no inter-token gap, so the decode replicas' step ends are never looked up for it.
  BenchServeResult r = metrics_with_itl(outcomes, step_ends);
  r.max_concurrent_requests = max_in_flight;
  r.remote_prefills = dep.remote_prefills();
  r.local_prefills = dep.local_prefills();
  r.kv_transfers = dep.transfers();
  r.kv_bytes_transferred = dep.kv_bytes_transferred();
  r.kv_transfer_mean_ms = r.kv_transfers > 0 ? dep.transfer_seconds() / static_cast<double>(r.kv_transfers) * 1000 : 0;
  return r;
}

BenchReplica make_bench_replica(const ServingCatalog& catalog, EngineArgs args, const ReplicaHardware& hw) {
  if (catalog.find_model(args.model) == nullptr) {
    std::string names;
    for (const LlmModel& m : catalog.models) names += (names.empty() ? "" : ", ") + m.name;
    bad(fmt::format("model: unknown model '{}' (known: {})", args.model, names));
  }
  if (catalog.find_gpu(hw.gpu) == nullptr) {
    std::string names;
    for (const GpuPerformance& g : catalog.gpus) names += (names.empty() ? "" : ", ") + g.name;
    bad(fmt::format("gpu: unknown GPU '{}' (known: {})", hw.gpu, names));
  }
  if (args.max_num_seqs == 0) args.max_num_seqs = default_max_num_seqs(hw.gpu, device_memory_mib(hw));
  const KvCacheBudget budget = kv_cache_budget(catalog, args, hw);
  if (!budget.error.empty()) bad(budget.error);
  BenchReplica r;
  r.limits.max_num_seqs = args.max_num_seqs;
  r.limits.max_num_batched_tokens = budget.max_num_batched_tokens;
  r.limits.max_model_len = budget.max_model_len;
  r.limits.block_size = args.block_size;
  r.limits.num_blocks = budget.num_blocks;
  r.limits.enable_prefix_caching = args.enable_prefix_caching;
  r.kv_cache_tokens = budget.num_tokens;
  r.kv_bytes_per_token_per_gpu = budget.kv_bytes_per_token;
  r.step_time = make_roofline_step_time(catalog, args, hw);
  return r;
}

}  // namespace gpufleet::inference
