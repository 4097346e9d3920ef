#include "cli/bench_serve_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "cli/workload_source.h"
#include "inference/bench_serve.h"
#include "inference/dataset_lengths.h"
#include "inference/disaggregated_deployment.h"
#include "inputs/plan/plan_inputs.h"
#include "inference/request_sources.h"
#include "report/bench_serve_output.h"
#include "readers/serving/endpoint_picker_config.h"
#include "readers/serving/inference_catalog.h"
#include "readers/traces/request_trace.h"
#include "readers/serving/step_profile.h"
#include "readers/plan/plan_file.h"
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
                      {"--price-catalog", o.price_catalog_path}, {"--endpoint-picker-config", o.endpoint_picker_config_path}});
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
    try {
      objective = io::select_objective(epp, o.inference_objective, o.endpoint_picker_config_path);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--inference-objective: ") + e.what());
    }
    if (objective != nullptr) epp_router.objective_priority = objective->effective_priority();
  } else if (!o.inference_objective.empty()) {
    throw UsageError("--inference-objective: needs --endpoint-picker-config (the file that defines it)");
  }
  if (std::find(policies.begin(), policies.end(), inference::RoutingPolicy::kEndpointPicker) == policies.end() &&
      !o.endpoint_picker_config_path.empty())
    throw UsageError("--endpoint-picker-config: --routing names no endpoint-picker");
  if (o.model.empty()) throw UsageError("--model is required");
  if (o.gpu.empty()) throw UsageError("--gpu is required");
  inference::ServingCatalog catalog =
      o.serving_catalog_path.empty() ? io::builtin_serving_catalog() : io::load_serving_catalog(o.serving_catalog_path);
  select_engine_version(catalog, o.engine_version);

  inference::BenchBackend backend;
  try {
    backend = inference::parse_bench_backend(o.backend, o.endpoint);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--backend/--endpoint: ") + e.what());
  }
  const std::optional<inference::BenchDataset> dataset = inference::parse_bench_dataset(o.dataset_name);
  if (!dataset)
    throw UsageError(fmt::format("--dataset-name: unknown dataset '{}' (random, sharegpt, sonnet; vLLM's burstgpt, hf, custom, "
                                 "prefix_repetition and multimodal datasets are not modelled: use --trace)",
                                 o.dataset_name));
  if (!o.trace_path.empty() && *dataset != inference::BenchDataset::kRandom)
    throw UsageError("--dataset-name: a --trace replaces the dataset; give one or the other");

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

  const bool disaggregated = o.prefill_replicas > 0;
  if (o.prefill_replicas < 0 || o.prefill_replicas > 4096)
    throw UsageError(fmt::format("--prefill-replicas: {} is outside 0..4096", o.prefill_replicas));
  if (!disaggregated && (o.decode_replicas != 0 || !o.prefill_gpu.empty() || !o.decode_gpu.empty() || o.prefill_tensor_parallel_size != 0 ||
                         o.decode_tensor_parallel_size != 0 || o.kv_transfer_gbps || o.kv_transfer_latency_ms ||
                         o.kv_transfer_link != "rdma" || o.first_token_from != "prefill" || o.max_local_prefill_length != 0))
    throw UsageError("--decode-replicas, --prefill-gpu, --decode-gpu, --prefill/decode-tensor-parallel-size, --kv-transfer-*, "
                     "--first-token-from and --max-local-prefill-length need --prefill-replicas > 0");
  if (disaggregated && !o.step_profile_path.empty())
    throw UsageError("--step-profile: a measured step-time table is for one configuration; not with --prefill-replicas");
  const int32_t decode_replicas = o.decode_replicas > 0 ? o.decode_replicas : o.num_replicas;

  inference::BenchReplica replica;           // aggregated: the replica; disaggregated: the decode replica
  inference::BenchReplica prefill_replica;   // disaggregated only
  inference::DisaggregationConfig disagg;
  std::vector<inference::Request> requests;
  auto pool_args = [&](int32_t tp) {
    inference::EngineArgs a = args;
    if (tp != 0) a.tensor_parallel_size = tp;
    return a;
  };
  auto pool_hw = [&](const std::string& gpu) {
    inference::ReplicaHardware h = hw;
    if (!gpu.empty()) h.gpu = gpu;
    return h;
  };
  try {
    if (!disaggregated) {
      replica = inference::make_bench_replica(catalog, args, hw);
    } else {
      if (o.decode_replicas < 0 || decode_replicas > 4096)
        throw UsageError(fmt::format("--decode-replicas: {} is outside 1..4096", o.decode_replicas));
      if (o.prefill_tensor_parallel_size < 0 || o.decode_tensor_parallel_size < 0)
        throw UsageError("--prefill-tensor-parallel-size / --decode-tensor-parallel-size: must be positive (0 = --tensor-parallel-size)");
      try {
        prefill_replica = inference::make_bench_replica(catalog, pool_args(o.prefill_tensor_parallel_size), pool_hw(o.prefill_gpu));
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--prefill-gpu/--prefill-tensor-parallel-size: ") + e.what());
      }
      try {
        replica = inference::make_bench_replica(catalog, pool_args(o.decode_tensor_parallel_size), pool_hw(o.decode_gpu));
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--decode-gpu/--decode-tensor-parallel-size: ") + e.what());
      }
      try {
        disagg.link = inference::kv_transfer_link(o.kv_transfer_link);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--kv-transfer-link: ") + e.what());
      }
      if (o.kv_transfer_gbps) {
        try {
          inference::check_kv_transfer_gbps(*o.kv_transfer_gbps);
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string("--kv-transfer-gbps: ") + e.what());
        }
        disagg.link.gb_s = *o.kv_transfer_gbps / 8;
      }
      if (o.kv_transfer_latency_ms) {
        try {
          inference::check_kv_transfer_latency_ms(*o.kv_transfer_latency_ms);
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string("--kv-transfer-latency-ms: ") + e.what());
        }
        disagg.link.latency_s = *o.kv_transfer_latency_ms / 1000;
      }
      if (o.max_local_prefill_length < 0)
        throw UsageError(fmt::format("--max-local-prefill-length: {} must be >= 0", o.max_local_prefill_length));
      disagg.max_local_prefill_tokens = o.max_local_prefill_length;
      if (o.first_token_from == "prefill") {
        disagg.first_token = inference::FirstTokenFrom::kPrefill;
      } else if (o.first_token_from == "decode") {
        disagg.first_token = inference::FirstTokenFrom::kDecode;
      } else {
        throw UsageError(fmt::format("--first-token-from: unknown value '{}' (prefill, decode)", o.first_token_from));
      }
      disagg.prefill_tensor_parallel_size = pool_args(o.prefill_tensor_parallel_size).tensor_parallel_size;
      disagg.decode_tensor_parallel_size = pool_args(o.decode_tensor_parallel_size).tensor_parallel_size;
      disagg.decode_kv_bytes_per_token_per_gpu = replica.kv_bytes_per_token_per_gpu;
    }
    if (o.num_replicas < 1 || o.num_replicas > 4096) throw std::invalid_argument(fmt::format("num_replicas: {} is outside 1..4096", o.num_replicas));
    if (o.max_concurrency < 0) throw std::invalid_argument(fmt::format("max_concurrency: {} must be positive (0 = none)", o.max_concurrency));
    // --request-rate is checked with a trace too, and must then be left at its default: a trace keeps
    // its own send times (--time-scale stretches them).
    if (std::isnan(o.request_rate) || !(o.request_rate > 0))
      throw UsageError(fmt::format("--request-rate: request_rate: {} must be positive or inf", o.request_rate));
    if (!o.trace_path.empty() && !std::isinf(o.request_rate))
      throw UsageError("--request-rate: a --trace keeps its own send times; give one or the other (--time-scale stretches a trace)");
    if (o.trace_path.empty()) {
      switch (*dataset) {
        case inference::BenchDataset::kRandom:
          requests = inference::random_dataset_requests({o.random_input_len, o.random_output_len, o.random_range_ratio},
                                                        o.num_prompts, o.seed);
          break;
        case inference::BenchDataset::kShareGpt:
          requests = inference::sharegpt_dataset_requests(o.num_prompts, o.seed);
          break;
        case inference::BenchDataset::kSonnet:
          requests = inference::sonnet_dataset_requests({o.sonnet_input_len, o.sonnet_output_len, o.sonnet_prefix_len},
                                                        o.num_prompts);
          break;
      }
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
  // The API the client posts to: a chat request also renders the chat template in the API server.
  for (inference::Request& r : requests) r.chat = backend.chat;
  std::optional<plan::PriceCatalog> prices;
  if (!o.price_catalog_path.empty()) {
    io::PlanFile file = io::read_plan_file(o.price_catalog_path);
    if (!file.has_catalog) throw UsageError(fmt::format("--price-catalog: {} has no PriceCatalog document", o.price_catalog_path));
    prices = std::move(file.catalog);
  }
  // GPU-hours and their price per pool: (canonical GPU, GPUs).
  std::vector<std::pair<std::string, int32_t>> pools;
  // One row per routing policy (aggregated runs); a disaggregated run is one row, routed least
  // outstanding in each pool.
  std::vector<io::BenchServeRoutingRow> rows;
  if (!disaggregated) {
    for (inference::RoutingPolicy p : policies) {
      inference::RouterConfig router;
      if (p == inference::RoutingPolicy::kEndpointPicker) router = epp_router;
      router.policy = p;
      rows.push_back({inference::routing_policy_name(p),
                      inference::run_bench_serve(requests, *replica.step_time, replica.limits, o.num_replicas, o.max_concurrency, router)});
    }
    pools.push_back({catalog.find_gpu(hw.gpu)->name, o.num_replicas * args.tensor_parallel_size});
  } else {
    if (policies.size() != 1 || policies.front() != inference::RoutingPolicy::kLeastOutstanding)
      throw UsageError("--routing: a disaggregated run (--prefill-replicas) routes least-outstanding in each pool");
    const inference::BenchPool p{prefill_replica.step_time.get(), prefill_replica.limits, o.prefill_replicas};
    const inference::BenchPool d{replica.step_time.get(), replica.limits, decode_replicas};
    try {
      rows.push_back({"least-outstanding", inference::run_bench_serve_disaggregated(requests, p, d, disagg, o.max_concurrency)});
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--kv-transfer-gbps/--kv-transfer-latency-ms: ") + e.what());
    }
    pools.push_back({catalog.find_gpu(pool_hw(o.prefill_gpu).gpu)->name, o.prefill_replicas * disagg.prefill_tensor_parallel_size});
    pools.push_back({catalog.find_gpu(pool_hw(o.decode_gpu).gpu)->name, decode_replicas * disagg.decode_tensor_parallel_size});
  }
  const inference::BenchServeResult& result = rows.front().result;

  io::BenchServeSettings st;
  st.backend = backend.name;
  st.endpoint = backend.endpoint;
  st.model = catalog.find_model(o.model)->name;
  st.gpu = catalog.find_gpu(o.gpu)->name;
  st.tensor_parallel_size = o.tensor_parallel_size;
  st.num_replicas = o.num_replicas;
  st.num_prompts = static_cast<int64_t>(requests.size());
  st.request_rate = o.trace_path.empty() ? o.request_rate : std::numeric_limits<double>::infinity();
  st.burstiness = o.burstiness;
  st.max_concurrency = o.max_concurrency;
  st.kv_cache_tokens = replica.kv_cache_tokens;
  if (disaggregated) {
    st.disaggregated = true;
    st.prefill_gpu = pools[0].first;
    st.prefill_tensor_parallel_size = disagg.prefill_tensor_parallel_size;
    st.prefill_replicas = o.prefill_replicas;
    st.prefill_kv_cache_tokens = prefill_replica.kv_cache_tokens;
    st.decode_gpu = pools[1].first;
    st.decode_tensor_parallel_size = disagg.decode_tensor_parallel_size;
    st.num_replicas = decode_replicas;
    st.tensor_parallel_size = disagg.decode_tensor_parallel_size;
    st.gpu = pools[1].first;
    st.kv_transfer_link = disagg.link.name;
    st.kv_transfer_gb_s = disagg.link.gb_s;
    st.max_local_prefill_length = disagg.max_local_prefill_tokens;
    st.first_token_from = o.first_token_from;
  }
  if (prices) {
    st.priced = true;
    for (const auto& [gpu, gpus] : pools) {
      const std::optional<double> usd = plan::on_demand_usd_per_gpu_hour(*prices, gpu);
      if (!usd) throw UsageError(fmt::format("--price-catalog: no instance type with GPU {} in {}", gpu, o.price_catalog_path));
      const double gpu_hours = gpus * result.duration_s / 3600;
      st.gpus += gpus;
      st.gpu_hours += gpu_hours;
      st.cost_usd += gpu_hours * *usd;
    }
    const auto tokens = static_cast<double>(result.total_input_tokens + result.total_output_tokens);
    st.usd_per_million_tokens = tokens > 0 ? st.cost_usd / tokens * 1e6 : 0;
  }
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
