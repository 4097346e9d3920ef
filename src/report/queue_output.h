// Writers for the queues and topology of a `simulate` run (SimResult::queues, queue_events and the
// topology counters, sim/simulator.h): the "queues" and "topology" objects of the result JSON
// (report/sim_output.h), summary lines and `compare`'s table. Pure functions of the result.
//
// JSON "queues" (present when the workload has queues):
//   {"admission": "quota" | "placement",
//    "cluster_queues": [{"name", "cohort", "workloads", "admitted", "finished", "pending_at_end",
//                        "admissions", "preemptions", "evictions", "gpu_hours", "borrowed_gpu_hours",
//                        "borrowed_pct", "wait_s": {"p50", "p95", "p99", "samples"}}],
//    "events": [{"time_s", "workload", "type", "cluster_queue", "reason", "message", "by"}]}
// JSON "topology" (present when the workload has topology levels):
//   {"job_starts", "split_job_starts", "split_pct", "slowdown_gpu_hours"}
// Seconds rounded to 1e-3, GPU-hours to 1e-6.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/results/sim_result.h"

namespace gpufleet::io {

/// One event: {"time_s" (with_time), "workload", "type", "cluster_queue", "reason", "message", "by"
/// (only when set)}. `place` writes its admissions with it, without times.
nlohmann::ordered_json queue_event_json(const queue::EventRecord& event, bool with_time);
/// The "queues" object above.
nlohmann::ordered_json queue_results_json(const sim::SimResult& result);
/// The "topology" object above.
nlohmann::ordered_json topology_result_json(const sim::SimResult& result);
/// Summary lines: admission mode, then one line per ClusterQueue (workloads, admitted, pending at
/// the end, preemptions, evictions, GPU-hours, borrowed share, wait p50/p99), then the topology line.
/// Empty without queues or topology.
std::string queue_summary_text(const sim::SimResult& result);
/// `compare`'s table of queues: one row per configuration and ClusterQueue; "" when no configuration
/// has queues. Then one row per configuration with topology counters, "" when none has topology.
std::string queue_compare_table(const std::vector<std::string>& labels, const std::vector<const sim::SimResult*>& results);

}  // namespace gpufleet::io
