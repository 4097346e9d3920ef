#include "cli/bench_serve_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "inference/bench_serve.h"
#include "inference/request_sources.h"
#include "report/bench_serve_output.h"
#include "readers/serving/endpoint_picker_config.h"
#include "readers/serving/inference_catalog.h"
#include "readers/traces/request_trace.h"
#include "readers/serving/step_profile.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {

namespace {

inference::Precision parse_dtype(const std::string& flag, const std::string& v, inference::Precision auto_value) {
  if (v == "auto") return auto_value;
  if (v == "bf16" || v == "bfloat16") return inference::Precision::kBf16;
  if (v == "fp16" || v == "float16" || v == "half") return inference::Precision::kFp16;
  if (v == "fp8" || v == "fp8_e4m3" || v == "fp8_e5m2") return inference::Precision::kFp8;
  throw UsageError(fmt::format("{}: unknown dtype '{}' (auto, bf16, bfloat16, fp16, float16, half, fp8)", flag, v));
}

/// The policies of --routing, in the order given.
std::vector<inference::RoutingPolicy> parse_routing(const std::string& list) {
  constexpr inference::RoutingPolicy kAll[] = {inference::RoutingPolicy::kLeastOutstanding, inference::RoutingPolicy::kRoundRobin,
                                               inference::RoutingPolicy::kPrefixAffinity, inference::RoutingPolicy::kEndpointPicker};
  std::vector<inference::RoutingPolicy> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    auto it = std::find_if(std::begin(kAll), std::end(kAll), [&](inference::RoutingPolicy p) { return name == inference::routing_policy_name(p); });
    if (it == std::end(kAll))
      throw UsageError(fmt::format("--routing: unknown routing policy '{}' (least-outstanding, round-robin, prefix-affinity, endpoint-picker)", name));
    if (std::find(out.begin(), out.end(), *it) != out.end()) throw UsageError(fmt::format("--routing: '{}' is given twice", name));
    out.push_back(*it);
    start = comma + 1;
  }
  return out;
}

}  // namespace

int run_bench_serve_command(const BenchServeCommandOptions& o) {
  check_output_paths({{"--json", o.json_path}},
                     {{"--trace", o.trace_path}, {"--serving-catalog", o.serving_catalog_path}, {"--step-profile", o.step_profile_path},
                      {"--endpoint-picker-config", o.endpoint_picker_config_path}});
  const std::vector<inference::RoutingPolicy> policies = parse_routing(o.routing);
  if (!(o.usd_per_gpu_hour >= 0) || !std::isfinite(o.usd_per_gpu_hour))
    throw UsageError(fmt::format("--usd-per-gpu-hour: {} must be a non-negative price", o.usd_per_gpu_hour));
  inference::RouterConfig epp_router;
  epp_router.policy = inference::RoutingPolicy::kEndpointPicker;
  epp_router.endpoint_picker_seed = o.seed;
  if (!o.endpoint_picker_config_path.empty()) {
    const io::EndpointPickerObjects epp = io::read_endpoint_picker_file(o.endpoint_picker_config_path);
    for (const std::string& w : epp.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    epp_router.endpoint_picker = epp.resolved;
    const inference::InferenceObjective* objective = nullptr;
    for (const inference::InferenceObjective& x : epp.objectives)
      if (x.name == o.inference_objective || (o.inference_objective.empty() && epp.objectives.size() == 1)) objective = &x;
    if (!o.inference_objective.empty() && objective == nullptr)
      throw UsageError(fmt::format("--inference-objective: no InferenceObjective '{}' in {}", o.inference_objective, o.endpoint_picker_config_path));
    if (objective != nullptr) epp_router.objective_priority = objective->effective_priority();
  } else if (!o.inference_objective.empty()) {
    throw UsageError("--inference-objective: needs --endpoint-picker-config (the file that defines it)");
  }
  if (std::find(policies.begin(), policies.end(), inference::RoutingPolicy::kEndpointPicker) == policies.end() &&
      !o.endpoint_picker_config_path.empty())
    throw UsageError("--endpoint-picker-config: --routing names no endpoint-picker");
  if (o.model.empty()) throw UsageError("--model is required");
  if (o.gpu.empty()) throw UsageError("--gpu is required");
  const inference::ServingCatalog catalog =
      o.serving_catalog_path.empty() ? io::builtin_serving_catalog() : io::load_serving_catalog(o.serving_catalog_path);

  inference::EngineArgs args;
  args.model = o.model;
  args.tensor_parallel_size = o.tensor_parallel_size;
  args.dtype = parse_dtype("--dtype", o.dtype, inference::Precision::kBf16);
  args.kv_cache_dtype = parse_dtype("--kv-cache-dtype", o.kv_cache_dtype,
                                    args.dtype == inference::Precision::kFp8 ? inference::Precision::kBf16 : args.dtype);
  args.gpu_memory_utilization = o.gpu_memory_utilization;
  args.max_num_seqs = o.max_num_seqs;
  args.max_num_batched_tokens = o.max_num_batched_tokens;
  args.max_model_len = o.max_model_len;
  if (o.max_num_seqs < 0) throw UsageError(fmt::format("--max-num-seqs: {} must be positive (0 = vLLM's default)", o.max_num_seqs));
  inference::ReplicaHardware hw;
  hw.gpu = o.gpu;

  inference::BenchReplica replica;
  std::vector<inference::Request> requests;
  try {
    replica = inference::make_bench_replica(catalog, args, hw);
    if (o.num_replicas < 1 || o.num_replicas > 4096) throw std::invalid_argument(fmt::format("num_replicas: {} is outside 1..4096", o.num_replicas));
    if (o.max_concurrency < 0) throw std::invalid_argument(fmt::format("max_concurrency: {} must be positive (0 = none)", o.max_concurrency));
    // --request-rate is checked with a trace too, and must then be left at its default: a trace keeps
    // its own send times (--time-scale stretches them).
    if (std::isnan(o.request_rate) || !(o.request_rate > 0))
      throw UsageError(fmt::format("--request-rate: request_rate: {} must be positive or inf", o.request_rate));
    if (!o.trace_path.empty() && !std::isinf(o.request_rate))
      throw UsageError("--request-rate: a --trace keeps its own send times; give one or the other (--time-scale stretches a trace)");
    if (o.trace_path.empty()) {
      requests = inference::random_dataset_requests({o.random_input_len, o.random_output_len, o.random_range_ratio}, o.num_prompts, o.seed);
      inference::assign_send_times(requests, o.request_rate, o.burstiness, o.seed);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!o.step_profile_path.empty()) {
    std::vector<inference::StepProfileRow> rows = io::read_step_profile(o.step_profile_path);
    replica.step_time = inference::make_profile_step_time(std::move(rows));
  }
  if (!o.trace_path.empty()) {
    inference::TraceReplayOptions replay;
    replay.time_scale = o.time_scale;
    replay.seed = o.seed;
    try {
      inference::validate_trace_replay(replay);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--time-scale: ") + e.what());
    }
    std::vector<inference::Request> trace = io::read_request_trace(o.trace_path);
    try {
      if (!trace.empty()) inference::check_trace_send_time(trace.back().arrival_s, o.time_scale);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--time-scale: ") + e.what());
    }
    inference::TraceSource source(std::move(trace), replay);
    requests = inference::drain(source);
    if (o.num_prompts > 0 && static_cast<int64_t>(requests.size()) > o.num_prompts) requests.resize(static_cast<size_t>(o.num_prompts));
  }
  std::vector<io::BenchServeRoutingRow> rows;
  for (inference::RoutingPolicy p : policies) {
    inference::RouterConfig router;
    if (p == inference::RoutingPolicy::kEndpointPicker) router = epp_router;
    router.policy = p;
    rows.push_back({inference::routing_policy_name(p),
                    inference::run_bench_serve(requests, *replica.step_time, replica.limits, o.num_replicas, o.max_concurrency, router)});
  }
  const inference::BenchServeResult& result = rows.front().result;

  io::BenchServeSettings st;
  st.model = catalog.find_model(o.model)->name;
  st.gpu = catalog.find_gpu(o.gpu)->name;
  st.tensor_parallel_size = o.tensor_parallel_size;
  st.num_replicas = o.num_replicas;
  st.num_prompts = static_cast<int64_t>(requests.size());
  st.request_rate = o.trace_path.empty() ? o.request_rate : std::numeric_limits<double>::infinity();
  st.burstiness = o.burstiness;
  st.max_concurrency = o.max_concurrency;
  st.kv_cache_tokens = replica.kv_cache_tokens;
  if (rows.size() > 1) {
    if (!o.json_path.empty()) {
      nlohmann::ordered_json runs = nlohmann::ordered_json::array();
      for (const io::BenchServeRoutingRow& row : rows) {
        nlohmann::ordered_json j;
        j["routing"] = row.routing;
        j.update(io::bench_serve_json(st, row.result));
        runs.push_back(std::move(j));
      }
      write_file_atomically(o.json_path, runs.dump(2) + "\n");
    }
    std::string text = io::bench_serve_routing_table(st, rows, o.usd_per_gpu_hour);
    if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (!o.json_path.empty()) write_file_atomically(o.json_path, io::bench_serve_json(st, result).dump(2) + "\n");
  std::string text = io::bench_serve_text(st, result);
  if (!o.json_path.empty()) text += fmt::format("json: {}\n", o.json_path);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace gpufleet::cli
