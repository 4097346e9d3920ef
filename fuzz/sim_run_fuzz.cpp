// libFuzzer target: the simulation end to end, as `gpufleet simulate` runs it (cli/simulate_command.cpp):
// the pools and workload readers, the work budget (inputs/sim/work_estimate.h) and sim::simulate.
// Build and run: scripts/fuzz (fuzz/CMakeLists.txt; this target also links the sim layers).
//
// Input: a pools document, a separator line, a workload document:
//
//   <pools file: NodePoolSet, Autoscaling, FaultSchedule, ...>   (readers/sim/sim_pools.h)
//   ---8<--- [POLICY]
//   <workload file>                                               (readers/sim/workload_file.h)
//
// The separator is the first line that starts with "---8<---"; what follows it on the line, trimmed,
// names the scheduling policy (sched::policy_names(); empty: "gpufleet"). Without a separator the whole
// input is the workload, run on kDefaultPools below (so the seeds of sim_workload_fuzz run here too).
// The seed is fixed (42, the CLI's default): same input, same run.
//
// The budget is small (kBudget: 2e4 requests, 2e5 events, 2000 pods, 2e7 node checks) so each input
// runs in well under a second under ASan; an input over it is refused, as the CLI refuses it.
//
// Expected rejections, the ones `gpufleet simulate` turns into exit status 2 (cli/main.cpp): InputError
// (the readers, the budget at a field), UsageError (the budget without a field, an unknown policy) and
// std::invalid_argument from sim::simulate (the CLI maps it to an InputError). Anything else escapes and
// is a finding, as is a run that processes more events than the budget allows (no run past its budget).
//
// SIM_RUN_FUZZ_VERBOSE=1 in the environment prints each input's outcome on stderr (the rejection, or the
// events the run processed), to check what a seed reaches: build/sanitize/fuzz/sim_run_fuzz FILE.
//
// File paths in the workload (traces, Kubernetes autoscaler files) resolve to nothing: the readers of
// the fuzz build read no file (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, readers/formats/text_file.h),
// and the source names are in an empty folder of their own, as in sim_workload_fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

#include "fuzz_support.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/job_generator.h"
#include "inputs/sim/sim_options.h"
#include "inputs/sim/work_estimate.h"
#include "inputs/sim/workload.h"
#include "model/node_pool.h"
#include "model/scheduling_constraints.h"
#include "readers/serving/inference_catalog.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sched/topology_domains.h"
#include "sim/simulator.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace io = gpufleet::io;
namespace sim = gpufleet::sim;

namespace {

constexpr std::string_view kSeparator = "---8<---";
constexpr uint64_t kSeed = 42;

// The pools when the input has no separator: the pool names the seeds of sim_workload_fuzz use, small,
// with the Cluster Autoscaler so that pending pods add nodes.
constexpr std::string_view kDefaultPools = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: gpu-pool
  instanceType: p4d.24xlarge
  gpu: {model: A100-40GB, count: 8}
  cpu: 95500m
  memory: 1100Gi
  nodes: 1
  min: 0
  max: 3
  labels: {workload-type: training}
  prices: {onDemand: 32.77, spot: 9.8}
- name: l4
  instanceType: g6.xlarge
  gpu: {model: L4, count: 1}
  cpu: 3920m
  memory: 14Gi
  nodes: 0
  min: 0
  max: 4
  prices: {onDemand: 0.8048}
- name: cpu
  cpu: "16"
  memory: 64Gi
  nodes: 1
  max: 3
  prices: {onDemand: 0.68}
---
apiVersion: sim.gpufleet.io/v1
kind: Autoscaling
autoscaler: {enabled: true, scanIntervalSeconds: 10}
)";

bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("SIM_RUN_FUZZ_VERBOSE");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
  }();
  return on;
}

void report(const char* what, const char* detail) {
  if (verbose()) std::fprintf(stderr, "sim_run_fuzz: %s: %s\n", what, detail);
}

// The budget of one run: about a thousandth of the CLI's defaults.
sim::WorkBudget budget() {
  sim::WorkBudget b;
  b.max_requests = 2e4;
  b.max_events = 2e5;
  b.max_pods = 2000;
  b.max_node_checks = 2e7;
  return b;
}

// "<empty temporary folder>/<name>", the folder made once per process (removed at exit).
const std::string& source_folder() {
  static const std::string folder = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sim_run_fuzz.XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) return std::string("/nonexistent-sim-run-fuzz");
    static const std::string made = dir;
    std::atexit([] { ::rmdir(made.c_str()); });
    return dir;
  }();
  return folder;
}

struct Parts {
  std::string_view pools = kDefaultPools;
  std::string_view workload;
  std::string policy = "gpufleet";
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

Parts split(std::string_view text) {
  Parts parts;
  parts.workload = text;
  size_t line = 0;
  while (line <= text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(line, end - line);
    if (l.substr(0, kSeparator.size()) == kSeparator) {
      parts.pools = text.substr(0, line);
      parts.workload = end < text.size() ? text.substr(end + 1) : std::string_view();
      const std::string_view policy = trim(l.substr(kSeparator.size()));
      if (!policy.empty()) parts.policy = std::string(policy);
      return parts;
    }
    line = end + 1;
  }
  return parts;
}

// The checks cli/workload_source.cpp load_workload makes after reading the file: each topology level is
// a label the nodes carry. Throws InputError.
void check_topology_levels(const io::SimWorkloadFile& file, const sim::ClusterConfig& cluster) {
  for (size_t l = 0; l < file.workload.topology.levels.size(); ++l) {
    const std::string& level = file.workload.topology.levels[l];
    bool carried = level == gpufleet::sched::kHostnameLabel || level == gpufleet::kPoolLabel ||
                   level == gpufleet::kInstanceTypeLabel || level == gpufleet::kGpuProductLabel ||
                   level == gpufleet::kGpuCountLabel || level == sim::kCapacityTypeLabel;
    for (const sim::SimPool& p : cluster.pools) {
      carried = carried || gpufleet::find_label(p.pool.labels, level) != nullptr;
      for (const auto& domain : p.pool.topology_domains) carried = carried || domain.first == level;
    }
    if (!carried) {
      const io::SourcePosition& at = file.topology_levels_at.at(l);
      throw gpufleet::InputError(at.file, at.line, at.field, "topology level: no pool's nodes carry this label", at.column);
    }
  }
}

void run(const Parts& parts) {
  const sim::ClusterConfig cluster = io::parse_sim_cluster_text(parts.pools, source_folder() + "/pools.yaml");
  std::vector<std::string> pool_names;
  for (const sim::SimPool& p : cluster.pools) pool_names.push_back(p.pool.name);
  const gpufleet::inference::ServingCatalog& catalog = io::builtin_serving_catalog();
  io::SimWorkloadFile file = io::parse_sim_workload_text(parts.workload, source_folder() + "/workload.yaml", pool_names, &catalog);
  check_topology_levels(file, cluster);
  if (file.generator) {
    gpufleet::GoRand rng(static_cast<int64_t>(kSeed));
    for (sim::WorkloadSpec& job : sim::generate_jobs(*file.generator, rng)) file.workload.items.push_back(std::move(job));
  }

  sim::SimOptions options;
  options.policy = parts.policy;
  options.seed = kSeed;
  options.serving_catalog = &catalog;
  const sim::WorkBudget b = budget();
  sim::check_work_budget(cluster, file.workload, options, b);
  sim::SimResult result;
  try {
    result = sim::simulate(cluster, file.workload, options);
  } catch (const std::invalid_argument& e) {
    report("simulate rejected the input (std::invalid_argument)", e.what());  // the CLI's InputError
    return;
  }
  if (verbose()) {
    const std::string events = std::to_string(result.events_processed) + " events";
    report("ran", events.c_str());
  }
  if (static_cast<double>(result.events_processed) > b.max_events)
    gpufleet::fuzz::invariant_failed("the run processed more events than the work budget allows");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Parts parts = split(gpufleet::fuzz::as_text(data, size));
  try {
    run(parts);
  } catch (const gpufleet::InputError& e) {
    report("InputError", e.what());
  } catch (const gpufleet::UsageError& e) {
    report("UsageError", e.what());
  }
  return 0;
}
