// bench-serve's result block and JSON (bench_serve_output.h).
#include "report/bench_serve_output.h"

#include <cmath>

#include <fmt/format.h>

namespace gpufleet::io {

namespace {

std::string rule(const std::string& title, char c) {
  const size_t n = 50;
  if (title.size() >= n) return title + "\n";
  const size_t left = (n - title.size()) / 2;  // Python's '^' puts the odd character on the right
  return std::string(left, c) + title + std::string(n - title.size() - left, c) + "\n";
}

std::string line(const std::string& name, const std::string& value) { return fmt::format("{:<40} {:<10}\n", name, value); }
std::string line2(const std::string& name, double value) { return line(name, fmt::format("{:.2f}", value)); }

std::string metric(const std::string& header, const std::string& name, const inference::LatencyStats& s) {
  return rule(header, '-') + line2("Mean " + name + " (ms):", s.mean_ms) + line2("Median " + name + " (ms):", s.median_ms) +
         line2("P99 " + name + " (ms):", s.p99_ms);
}

}  // namespace

std::string bench_serve_text(const BenchServeSettings& st, const inference::BenchServeResult& r) {
  std::string out = rule(" Serving Benchmark Result ", '=');
  out += line("Successful requests:", std::to_string(r.completed));
  out += line("Failed requests:", std::to_string(r.failed));
  if (st.max_concurrency > 0) out += line("Maximum request concurrency:", std::to_string(st.max_concurrency));
  if (std::isfinite(st.request_rate)) out += line2("Request rate configured (RPS):", st.request_rate);
  out += line2("Benchmark duration (s):", r.duration_s);
  out += line("Total input tokens:", std::to_string(r.total_input_tokens));
  out += line("Total generated tokens:", std::to_string(r.total_output_tokens));
  out += line2("Request throughput (req/s):", r.request_throughput);
  out += line2("Output token throughput (tok/s):", r.output_throughput);
  out += line2("Peak concurrent requests:", r.max_concurrent_requests);
  out += line2("Total token throughput (tok/s):", r.total_token_throughput);
  out += metric("Time to First Token", "TTFT", r.ttft);
  out += metric("Time per Output Token (excl. 1st token)", "TPOT", r.tpot);
  out += metric("Inter-token Latency", "ITL", r.itl);
  if (st.disaggregated) {
    out += rule("Disaggregated Prefill/Decode", '-');
    out += line("Prefill pool:", fmt::format("{} x {} TP{}", st.prefill_replicas, st.prefill_gpu, st.prefill_tensor_parallel_size));
    out += line("Decode pool:", fmt::format("{} x {} TP{}", st.num_replicas, st.decode_gpu, st.decode_tensor_parallel_size));
    out += line("KV transfer link:", fmt::format("{} {:g} GB/s", st.kv_transfer_link, st.kv_transfer_gb_s));
    out += line("Remote prefills:", std::to_string(r.remote_prefills));
    out += line("Local prefills:", std::to_string(r.local_prefills));
    out += line("KV transfers:", std::to_string(r.kv_transfers));
    out += line2("Mean KV transfer (ms):", r.kv_transfer_mean_ms);
  }
  if (st.priced) {
    out += rule("Cost", '-');
    out += line("GPUs:", std::to_string(st.gpus));
    out += line2("GPU-hours:", st.gpu_hours);
    out += line2("Cost (USD, on-demand):", st.cost_usd);
    out += line2("USD per million tokens:", st.usd_per_million_tokens);
  }
  out += std::string(50, '=') + "\n";
  return out;
}

double bench_serve_gpu_hours(const BenchServeSettings& st, const inference::BenchServeResult& r) {
  return static_cast<double>(st.num_replicas) * st.tensor_parallel_size * r.duration_s / 3600.0;
}

std::string bench_serve_routing_table(const BenchServeSettings& st, const std::vector<BenchServeRoutingRow>& rows,
                                      double usd_per_gpu_hour) {
  std::string out = fmt::format("{} x {} on {} (TP {}), {} requests\n", st.num_replicas, st.model, st.gpu, st.tensor_parallel_size,
                                st.num_prompts);
  out += fmt::format("{:<18} {:>9} {:>7} {:>8} {:>11} {:>11} {:>10} {:>9}", "routing", "completed", "failed", "dropped",
                     "TTFT p50 ms", "TTFT p99 ms", "prefix hit", "GPU-hours");
  if (usd_per_gpu_hour > 0) out += fmt::format(" {:>9} {:>12}", "cost USD", "USD/M tokens");
  out += "\n";
  for (const BenchServeRoutingRow& row : rows) {
    const inference::BenchServeResult& r = row.result;
    const double gpu_hours = bench_serve_gpu_hours(st, r);
    out += fmt::format("{:<18} {:>9} {:>7} {:>8} {:>11.1f} {:>11.1f} {:>9.1f}% {:>9.2f}", row.routing, r.completed, r.failed, r.dropped,
                       r.ttft.median_ms, r.ttft.p99_ms, 100 * r.prefix_cache_hit_rate(), gpu_hours);
    if (usd_per_gpu_hour > 0) {
      const double cost = gpu_hours * usd_per_gpu_hour;
      const double tokens = static_cast<double>(r.total_input_tokens + r.total_output_tokens);
      out += fmt::format(" {:>9.2f} {:>12.4f}", cost, tokens > 0 ? cost / (tokens / 1e6) : 0.0);
    }
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json bench_serve_json(const BenchServeSettings& st, const inference::BenchServeResult& r) {
  nlohmann::ordered_json j;
  j["backend"] = st.backend;
  j["endpoint"] = st.endpoint;
  j["model_id"] = st.model;
  j["gpu"] = st.gpu;
  j["tensor_parallel_size"] = st.tensor_parallel_size;
  j["num_replicas"] = st.num_replicas;
  j["kv_cache_tokens"] = st.kv_cache_tokens;
  j["num_prompts"] = st.num_prompts;
  j["request_rate"] = std::isfinite(st.request_rate) ? nlohmann::ordered_json(st.request_rate) : nlohmann::ordered_json(nullptr);
  j["burstiness"] = std::isfinite(st.burstiness) ? nlohmann::ordered_json(st.burstiness) : nlohmann::ordered_json(nullptr);
  j["max_concurrency"] = st.max_concurrency > 0 ? nlohmann::ordered_json(st.max_concurrency) : nlohmann::ordered_json(nullptr);
  j["duration"] = r.duration_s;
  j["completed"] = r.completed;
  j["failed"] = r.failed;
  j["total_input_tokens"] = r.total_input_tokens;
  j["total_output_tokens"] = r.total_output_tokens;
  j["request_throughput"] = r.request_throughput;
  j["output_throughput"] = r.output_throughput;
  j["total_token_throughput"] = r.total_token_throughput;
  j["max_concurrent_requests"] = r.max_concurrent_requests;
  j["preemptions"] = r.preemptions;
  if (st.disaggregated) {
    j["prefill_gpu"] = st.prefill_gpu;
    j["prefill_tensor_parallel_size"] = st.prefill_tensor_parallel_size;
    j["prefill_replicas"] = st.prefill_replicas;
    j["prefill_kv_cache_tokens"] = st.prefill_kv_cache_tokens;
    j["kv_transfer_link"] = st.kv_transfer_link;
    j["kv_transfer_gb_s"] = st.kv_transfer_gb_s;
    j["max_local_prefill_length"] = st.max_local_prefill_length;
    j["first_token_from"] = st.first_token_from;
    j["remote_prefills"] = r.remote_prefills;
    j["local_prefills"] = r.local_prefills;
    j["kv_transfers"] = r.kv_transfers;
    j["kv_bytes_transferred"] = r.kv_bytes_transferred;
    j["mean_kv_transfer_ms"] = r.kv_transfer_mean_ms;
  }
  if (st.priced) {
    j["gpus"] = st.gpus;
    j["gpu_hours"] = st.gpu_hours;
    j["cost_usd"] = st.cost_usd;
    j["usd_per_million_tokens"] = st.usd_per_million_tokens;
  }
  j["dropped"] = r.dropped;
  j["cached_prompt_tokens"] = r.cached_prompt_tokens;
  const std::pair<const char*, const inference::LatencyStats*> sets[] = {{"ttft", &r.ttft}, {"tpot", &r.tpot}, {"itl", &r.itl}, {"e2el", &r.e2el}};
  for (const auto& [name, s] : sets) {
    j[fmt::format("mean_{}_ms", name)] = s->mean_ms;
    j[fmt::format("median_{}_ms", name)] = s->median_ms;
    j[fmt::format("std_{}_ms", name)] = s->std_ms;
    j[fmt::format("p99_{}_ms", name)] = s->p99_ms;
  }
  return j;
}

}  // namespace gpufleet::io
