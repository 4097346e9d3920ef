#include "report/inference_output.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/json_values.h"
#include "report/text_table.h"

namespace gpufleet::io {
namespace {

nlohmann::ordered_json latency_json(const sim::LatencySummary& s) {
  nlohmann::ordered_json j;
  j["mean"] = round_to(s.mean_s, 1e6);
  j["p50"] = round_to(s.p50_s, 1e6);
  j["p90"] = round_to(s.p90_s, 1e6);
  j["p99"] = round_to(s.p99_s, 1e6);
  j["max"] = round_to(s.max_s, 1e6);
  j["samples"] = s.samples;
  return j;
}

nlohmann::ordered_json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(round_to(*v, 1e6)) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json inference_results_json(const std::vector<sim::InferenceServiceResult>& services) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const sim::InferenceServiceResult& r : services) {
    nlohmann::ordered_json j;
    j["service"] = r.service;
    j["model"] = r.model;
    j["traffic"] = r.traffic;
    j["autoscaler"] = r.autoscaler;
    j["notes"] = r.notes;
    j["slo"] = {{"ttft_p99_s", opt_json(r.slo_ttft_p99_s)}, {"tpot_p99_s", opt_json(r.slo_tpot_p99_s)}};
    j["requests"] = {{"arrived", r.requests},
                     {"finished", r.finished},
                     {"timed_out", r.timed_out},
                     {"dropped", r.dropped},
                     {"unfinished", r.unfinished}};
    j["preemptions"] = r.preemptions;
    j["tokens"] = {{"prompt", r.prompt_tokens}, {"output", r.output_tokens}};
    j["ttft_s"] = latency_json(r.ttft);
    j["tpot_s"] = latency_json(r.tpot);
    j["e2e_s"] = latency_json(r.e2e);
    j["slo_attainment"] = round_to(r.slo_attainment, 1e6);
    j["max_ready_replicas"] = r.max_ready_replicas;
    nlohmann::ordered_json log = nlohmann::ordered_json::array();
    for (const sim::ColdStart& c : r.cold_start_log)
      log.push_back({{"replica", c.replica},
                     {"node", c.node},
                     {"created_s", round_to(c.created_s, 1e6)},
                     {"bound_s", round_to(c.bound_s, 1e6)},
                     {"image_pull_s", round_to(c.image_pull_s, 1e6)},
                     {"weight_load_s", round_to(c.weight_load_s, 1e6)},
                     {"engine_start_s", round_to(c.engine_start_s, 1e6)},
                     {"ready_s", c.ready_s >= 0 ? nlohmann::ordered_json(round_to(c.ready_s, 1e6)) : nlohmann::ordered_json(nullptr)}});
    j["cold_starts"] = {{"count", r.cold_starts},
                        {"not_started", r.replicas_not_started},
                        {"created_to_ready_s", latency_json(r.cold_start)},
                        {"log", log}};
    j["gpu_hours"] = round_to(r.gpu_hours, 1e6);
    j["cost_usd"] = round_to(r.cost_usd, 1e6);
    j["usd_per_million_tokens"] = round_to(r.usd_per_million_tokens, 1e6);
    j["usd_per_million_output_tokens"] = round_to(r.usd_per_million_output_tokens, 1e6);
    if (const std::optional<sim::DisaggregationResult>& d = r.disaggregation) {
      auto role_json = [](const sim::DisaggregatedRoleResult& x) {
        return nlohmann::ordered_json{{"item", x.item},
                                      {"autoscaler", x.autoscaler},
                                      {"tensor_parallel_size", x.tensor_parallel_size},
                                      {"max_ready_replicas", x.max_ready_replicas},
                                      {"cold_starts", x.cold_starts},
                                      {"gpu_hours", round_to(x.gpu_hours, 1e6)},
                                      {"cost_usd", round_to(x.cost_usd, 1e6)}};
      };
      j["disaggregation"] = {{"kv_transfer_link", d->link},
                             {"first_token_from", d->first_token_from},
                             {"max_local_prefill_tokens", d->max_local_prefill_tokens},
                             {"remote_prefills", d->remote_prefills},
                             {"local_prefills", d->local_prefills},
                             {"kv_transfers", d->kv_transfers},
                             {"kv_bytes_transferred", round_to(d->kv_bytes_transferred, 1)},
                             {"kv_transfer_mean_s", round_to(d->kv_transfer_mean_s, 1e6)},
                             {"prefill", role_json(d->prefill)},
                             {"decode", role_json(d->decode)}};
    }
    list.push_back(std::move(j));
  }
  return list;
}

std::string inference_timeseries_csv(const std::vector<sim::InferenceServiceResult>& services) {
  std::string out =
      "service,time_s,arrivals,finished,timed_out,ttft_p99_s,desired_replicas,ready_replicas,starting_replicas,"
      "router_waiting,engine_waiting,engine_running,kv_cache_usage,cost_usd_per_hour,"
      "prefill_desired_replicas,prefill_ready_replicas,decode_desired_replicas,decode_ready_replicas\n";
  auto count = [](int32_t v) { return v >= 0 ? std::to_string(v) : std::string(); };  // empty: aggregated
  for (const sim::InferenceServiceResult& r : services)
    for (const sim::InferenceSample& s : r.timeseries)
      out += fmt::format("{},{:.0f},{},{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{},{},{},{}\n", r.service, s.time_s, s.arrivals, s.finished,
                         s.timed_out, s.ttft_p99_s ? fmt::format("{:.4f}", *s.ttft_p99_s) : std::string(), s.desired_replicas,
                         s.ready_replicas, s.starting_replicas, s.router_waiting, s.engine_waiting, s.engine_running,
                         s.kv_cache_usage, s.cost_usd_per_hour, count(s.prefill_desired_replicas), count(s.prefill_ready_replicas),
                         count(s.decode_desired_replicas), count(s.decode_ready_replicas));
  return out;
}

std::string inference_summary_text(const std::vector<sim::InferenceServiceResult>& services) {
  std::string out;
  for (const sim::InferenceServiceResult& r : services) {
    out += fmt::format("inference service {} ({}{}): {} requests, {} finished, {} timed out, {} dropped, {} unfinished\n",
                       r.service, r.model, r.autoscaler.empty() ? "" : ", " + r.autoscaler, r.requests, r.finished,
                       r.timed_out, r.dropped, r.unfinished);
    out += fmt::format("  TTFT s: p50 {:.3f} p90 {:.3f} p99 {:.3f}; TPOT s: p50 {:.4f} p99 {:.4f}; SLO attainment {:.2f}%\n",
                       r.ttft.p50_s, r.ttft.p90_s, r.ttft.p99_s, r.tpot.p50_s, r.tpot.p99_s, r.slo_attainment * 100);
    out += fmt::format("  replicas: max ready {}, cold starts {} (created to ready p50 {:.0f} s, max {:.0f} s)\n",
                       r.max_ready_replicas, r.cold_starts, r.cold_start.p50_s, r.cold_start.max_s);
    if (const std::optional<sim::DisaggregationResult>& d = r.disaggregation) {
      for (const sim::DisaggregatedRoleResult* x : {&d->prefill, &d->decode})
        out += fmt::format("  {}: TP{}, max ready {}, cold starts {}, {:.2f} GPU-hours, {:.2f} USD\n", x->item, x->tensor_parallel_size,
                           x->max_ready_replicas, x->cold_starts, x->gpu_hours, x->cost_usd);
      out += fmt::format("  KV transfers: {} over {} (first token from {}), mean {:.2f} ms; {} remote and {} local prefills\n",
                         d->kv_transfers, d->link, d->first_token_from, d->kv_transfer_mean_s * 1000, d->remote_prefills, d->local_prefills);
    }
    for (const std::string& note : r.notes) out += fmt::format("  note: {}\n", note);
    out += fmt::format("  {:.2f} GPU-hours, {:.2f} USD, {:.4f} USD per million tokens ({:.4f} per million output tokens)\n",
                       r.gpu_hours, r.cost_usd, r.usd_per_million_tokens, r.usd_per_million_output_tokens);
  }
  return out;
}

std::string inference_compare_table(const std::vector<std::string>& labels,
                                    const std::vector<const std::vector<sim::InferenceServiceResult>*>& results) {
  const std::vector<std::string> header = {"config", "service", "autoscaler", "TTFT p50 s", "TTFT p99 s", "TPOT p99 s",
                                           "SLO met", "timed out", "max ready", "cold starts", "GPU-h", "cost USD",
                                           "USD/M tok"};
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < labels.size() && i < results.size(); ++i)
    for (const sim::InferenceServiceResult& r : *results[i])
      rows.push_back({labels[i], r.service, r.autoscaler.empty() ? "none" : r.autoscaler, fmt::format("{:.3f}", r.ttft.p50_s),
                      fmt::format("{:.3f}", r.ttft.p99_s), fmt::format("{:.4f}", r.tpot.p99_s),
                      fmt::format("{:.1f}%", r.slo_attainment * 100), std::to_string(r.timed_out + r.dropped),
                      std::to_string(r.max_ready_replicas), std::to_string(r.cold_starts), fmt::format("{:.2f}", r.gpu_hours),
                      fmt::format("{:.2f}", r.cost_usd), fmt::format("{:.4f}", r.usd_per_million_tokens)});
  if (rows.empty()) return "";
  return "inference services:\n" + aligned_table(header, rows, 3);
}

}  // namespace gpufleet::io
