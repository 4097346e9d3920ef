#include "report/queue_output.h"

#include <fmt/format.h>

#include "report/json_values.h"
#include "report/text_table.h"

namespace gpufleet::io {
namespace {

std::string seconds_or_dash(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); }

double split_pct(const sim::SimResult& r) {
  return r.job_starts > 0 ? static_cast<double>(r.split_job_starts) / static_cast<double>(r.job_starts) * 100 : 0.0;
}

}  // namespace

nlohmann::ordered_json queue_event_json(const queue::EventRecord& e, bool with_time) {
  nlohmann::ordered_json o;
  if (with_time) o["time_s"] = round_to(e.time_s, 1e3);
  o["workload"] = e.workload;
  o["type"] = e.type;
  o["cluster_queue"] = e.cluster_queue;
  o["reason"] = e.reason;
  o["message"] = e.message;
  if (!e.by.empty()) o["by"] = e.by;
  return o;
}

nlohmann::ordered_json queue_results_json(const sim::SimResult& r) {
  nlohmann::ordered_json j;
  j["admission"] = r.admission;
  nlohmann::ordered_json queues = nlohmann::ordered_json::array();
  for (const sim::QueueResult& q : r.queues) {
    nlohmann::ordered_json o;
    o["name"] = q.cluster_queue;
    o["cohort"] = q.cohort;
    o["workloads"] = q.workloads;
    o["admitted"] = q.admitted;
    o["finished"] = q.finished;
    o["pending_at_end"] = q.pending_at_end;
    o["admissions"] = q.admissions;
    o["preemptions"] = q.preemptions;
    o["evictions"] = q.evictions;
    o["gpu_hours"] = round_to(q.gpu_hours, 1e6);
    o["borrowed_gpu_hours"] = round_to(q.borrowed_gpu_hours, 1e6);
    o["borrowed_pct"] = round_to(q.borrowed_pct, 1e6);
    o["wait_s"] = pending_stats_json(q.wait);
    queues.push_back(std::move(o));
  }
  j["cluster_queues"] = std::move(queues);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const sim::QueueEvent& e : r.queue_events) events.push_back(queue_event_json(e, true));
  j["events"] = std::move(events);
  return j;
}

nlohmann::ordered_json topology_result_json(const sim::SimResult& r) {
  nlohmann::ordered_json j;
  j["job_starts"] = r.job_starts;
  j["split_job_starts"] = r.split_job_starts;
  j["split_pct"] = round_to(split_pct(r), 1e6);
  j["slowdown_gpu_hours"] = round_to(r.topology_slowdown_gpu_hours, 1e6);
  return j;
}

std::string queue_summary_text(const sim::SimResult& r) {
  std::string out;
  if (!r.admission.empty()) {
    out += fmt::format("queues ({} admission):\n", r.admission == "placement" ? "placement-aware" : "quota-only");
    for (const sim::QueueResult& q : r.queues)
      out += fmt::format(
          "  {}{}: {} workloads, {} admitted, {} finished, {} pending; {} preempted, {} evicted; {:.1f} GPU-hours, {:.1f}% "
          "borrowed; wait s p50 {} p99 {}\n",
          q.cluster_queue, q.cohort.empty() ? std::string() : fmt::format(" (cohort {})", q.cohort), q.workloads, q.admitted, q.finished,
          q.pending_at_end, q.preemptions, q.evictions, q.gpu_hours, q.borrowed_pct, seconds_or_dash(q.wait.p50),
          seconds_or_dash(q.wait.p99));
  }
  if (r.topology_levels > 0)
    out += fmt::format("topology: {} of {} job starts split across domains ({:.1f}%), slowdown {:.2f} GPU-hours\n",
                       r.split_job_starts, r.job_starts, split_pct(r), r.topology_slowdown_gpu_hours);
  return out;
}

std::string queue_compare_table(const std::vector<std::string>& labels, const std::vector<const sim::SimResult*>& results) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < results.size(); ++i)
    for (const sim::QueueResult& q : results[i]->queues)
      rows.push_back({labels[i], q.cluster_queue, results[i]->admission, std::to_string(q.workloads), std::to_string(q.admitted),
                      std::to_string(q.pending_at_end), std::to_string(q.preemptions), std::to_string(q.evictions),
                      fmt::format("{:.1f}", q.gpu_hours), fmt::format("{:.1f}%", q.borrowed_pct), seconds_or_dash(q.wait.p50),
                      seconds_or_dash(q.wait.p99)});
  if (!rows.empty()) {
    out += '\n';
    out += aligned_table({"config", "cluster queue", "admission", "workloads", "admitted", "pending", "preempted", "evicted", "GPU-h",
                          "borrowed", "wait p50 s", "wait p99 s"},
                         rows, 3);
  }
  rows.clear();
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i]->topology_levels > 0)
      rows.push_back({labels[i], std::to_string(results[i]->job_starts), std::to_string(results[i]->split_job_starts),
                      fmt::format("{:.1f}%", split_pct(*results[i])), fmt::format("{:.2f}", results[i]->topology_slowdown_gpu_hours)});
  if (!rows.empty()) {
    out += '\n';
    out += aligned_table({"config", "job starts", "split", "split share", "slowdown GPU-h"}, rows, 1);
  }
  return out;
}

}  // namespace gpufleet::io
