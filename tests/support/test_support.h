// Helpers shared by the tests: tiny clusters and pods, and where the public traces are.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster_state.h"
#include "model/node.h"
#include "model/pod.h"
#include "sched/fit_error.h"
#include "sched/scheduler.h"

namespace gpufleet::testing {

/// Free CPU, memory and GPU per node and the pods on each (key, devices, bind order): equal
/// snapshots mean a rolled-back change left the state exactly as it was.
using StateSnapshot = std::vector<std::tuple<int64_t, int64_t, std::vector<int32_t>, std::vector<std::tuple<std::string, std::vector<int32_t>, uint64_t>>>>;
inline StateSnapshot state_snapshot(const ClusterState& s) {
  StateSnapshot out;
  for (NodeId n = 0; n < s.node_count(); ++n) {
    std::vector<std::tuple<std::string, std::vector<int32_t>, uint64_t>> pods;
    for (const BoundPod& b : s.pods_on(n)) pods.emplace_back(sched::pod_key(b.pod), b.gpus, b.bind_seq);
    const auto free = s.gpu_free_milli(n);
    out.emplace_back(s.cpu_free_milli(n), s.memory_free_bytes(n), std::vector<int32_t>(free.begin(), free.end()), pods);
  }
  return out;
}

inline Node make_node(std::string name, int64_t cpu_milli, int64_t memory_mib, int32_t gpus, std::string model = "V100M16") {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = cpu_milli;
  n.memory_bytes = memory_mib * kBytesPerMib;
  n.gpu_count = gpus;
  n.gpu_model = gpus > 0 ? std::move(model) : std::string();
  return n;
}

inline Pod make_pod(std::string name, int64_t cpu_milli, int64_t memory_mib, int32_t num_gpu, int32_t gpu_milli,
                    std::string gpu_spec = "") {
  Pod p;
  p.name = std::move(name);
  p.cpu_milli = cpu_milli;
  p.memory_bytes = memory_mib * kBytesPerMib;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  p.gpu_spec = std::move(gpu_spec);
  return p;
}

/// kube's FitError text for a failed cycle of `pod` (sched/fit_error.h).
/// A hand-built profile: `filters` in order (those that also implement PreFilter run it first), one
/// Score plugin compared by its raw score (also an observer when it is one), and a GPU selector.
inline sched::Profile profile_of(std::string name, std::vector<std::shared_ptr<const sched::FilterPlugin>> filters,
                                 std::shared_ptr<sched::ScorePlugin> score, std::shared_ptr<const sched::GpuSelector> selector) {
  sched::Profile p;
  p.name = std::move(name);
  for (const auto& f : filters)
    if (auto pre = std::dynamic_pointer_cast<const sched::PreFilterPlugin>(f)) p.pre_filters.push_back(pre);
  p.filters = std::move(filters);
  if (auto observer = std::dynamic_pointer_cast<sched::ObserverPlugin>(score)) p.observers.push_back(std::move(observer));
  p.scores = {{std::move(score), 1}};
  p.score_combination = sched::ScoreCombination::kLexicographic;
  p.gpu_selector = std::move(selector);
  return p;
}

inline std::string fit_error_of(const sched::ScheduleResult& r, const Pod& pod, const ClusterState& state) {
  return sched::fit_error_message(sched::rejection_histogram(r.node_to_status, pod, state), state.node_count());
}

/// Each node's code in a NodeToStatus (kFits when not rejected).
inline std::vector<sched::FilterCode> codes_of(const sched::NodeToStatus& statuses) {
  std::vector<sched::FilterCode> out;
  for (NodeId n = 0; n < statuses.size(); ++n) out.push_back(statuses.at(n).code);
  return out;
}

/// The openb trace folder (…/alibaba-gpu-v2023), or empty when the traces are absent.
inline std::string openb_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GPUFLEET_TRACES"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back(fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "traces");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "alibaba-gpu-v2023" / "csv" / "openb_pod_list_default.csv", ec)) return (c / "alibaba-gpu-v2023").string();
  }
  return {};
}

}  // namespace gpufleet::testing

namespace gpufleet::sched {

// GoogleTest's printers for failed expectations.
inline void PrintTo(const FilterCode& code, std::ostream* os) { *os << (code.rejected() ? code.reason() : "kFits"); }
inline void PrintTo(const NodeToStatus& statuses, std::ostream* os) {
  *os << "{";
  for (NodeId n = 0; n < statuses.size(); ++n) {
    const Rejection r = statuses.at(n);
    *os << (n == 0 ? "" : ", ") << n << ": " << (r.rejected() ? std::string(r.plugin_name()) + " " + std::string(r.code.reason()) : "-");
  }
  *os << "}";
}

}  // namespace gpufleet::sched
