#include "cli/workload_source.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "readers/sim/fault_schedule.h"
#include "readers/sim/sim_pools.h"
#include "readers/traces/openb_csv.h"
#include "readers/serving/inference_catalog.h"
#include "readers/sim/snapshot_workload.h"
#include "readers/k8s/dra_yaml.h"
#include "readers/sim/workload_file.h"
#include "model/node_pool.h"
#include "sched/topology_domains.h"
#include "inputs/sim/openb_trace.h"
#include "inputs/sim/job_generator.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace gpufleet::cli {

sim::ClusterConfig load_cluster(const std::string& pools_path, const std::string& faults_path) {
  sim::ClusterConfig cluster = io::read_sim_cluster_file(pools_path);
  for (const std::string& w : cluster.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  if (faults_path.empty()) return cluster;
  const std::vector<std::string> node_pools = io::node_pool_names(cluster);
  cluster.faults = io::read_fault_schedule_file(faults_path, cluster.pools, &node_pools);
  return cluster;
}

void check_workload_source(const WorkloadSource& s) {
  if (!s.history_path.empty() && s.snapshot_path.empty())
    throw UsageError("--history CSV needs --snapshot FILE (the history is that of the snapshot's cluster)");
  const int sources = int{!s.workload_path.empty()} + int{!s.openb_pods_path.empty()} + int{!s.snapshot_path.empty()};
  if (sources != 1) throw UsageError("give exactly one of --workload FILE, --openb-pods CSV and --snapshot FILE");
  if (s.snapshot_job_s != 0 && s.snapshot_path.empty()) throw UsageError("--snapshot-job-seconds applies to --snapshot only");
  const bool trace = !s.openb_pods_path.empty() || !s.history_path.empty();
  if (!trace && (s.time_scale != 1 || s.trace_start_s != 0 || s.be_checkpoint_s != 600 || (s.horizon_s != 0 && s.snapshot_path.empty())))
    throw UsageError("--time-scale, --trace-start, --horizon and --be-checkpoint apply to --openb-pods only (and to --snapshot with "
                     "--history; --horizon to --snapshot too)");
  if (!std::isfinite(s.time_scale) || s.time_scale <= 0) throw UsageError(fmt::format("--time-scale {} must be positive", s.time_scale));
  if (s.time_scale < kMinTimeScale || s.time_scale > kMaxTimeScale)
    throw UsageError(fmt::format("--time-scale {} is outside [{:g}, {:.0f}]", s.time_scale, kMinTimeScale, kMaxTimeScale));
  if (!std::isfinite(s.trace_start_s) || s.trace_start_s < 0) throw UsageError(fmt::format("--trace-start {} must be >= 0", s.trace_start_s));
  if (!std::isfinite(s.horizon_s) || s.horizon_s < 0) throw UsageError(fmt::format("--horizon {} must be >= 0", s.horizon_s));
  if (s.horizon_s > io::kMaxHorizonSeconds)
    throw UsageError(fmt::format("--horizon {} is above the maximum of {:.0f} s (about 3 years)", s.horizon_s, io::kMaxHorizonSeconds));
  if (!std::isfinite(s.be_checkpoint_s) || s.be_checkpoint_s < 0)
    throw UsageError(fmt::format("--be-checkpoint {} must be >= 0", s.be_checkpoint_s));
  if (!std::isfinite(s.snapshot_job_s) || s.snapshot_job_s < 0 || s.snapshot_job_s > io::kMaxHorizonSeconds)
    throw UsageError(fmt::format("--snapshot-job-seconds {} is outside [0, {:.0f}] (0: the jobs run to the horizon)", s.snapshot_job_s,
                                 io::kMaxHorizonSeconds));
  if (!s.snapshot_path.empty() && s.history_path.empty() && s.horizon_s == 0)
    throw UsageError("--snapshot without --history: give --horizon SECONDS (the live pods alone give no horizon)");
}

inference::ServingCatalog load_serving_catalog(const WorkloadSource& s) {
  inference::ServingCatalog catalog =
      s.serving_catalog_path.empty() ? io::builtin_serving_catalog() : io::load_serving_catalog(s.serving_catalog_path);
  select_engine_version(catalog, s.engine_version);
  return catalog;
}

void select_engine_version(inference::ServingCatalog& catalog, const std::string& engine_version) {
  if (engine_version.empty()) return;
  try {
    catalog.select_engine_version(engine_version);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--engine-version: {}", e.what()));
  }
}

namespace {

// The openb pod list at `path` mapped by the source's trace options (inputs/sim/openb_trace.h).
sim::Workload trace_workload_of(const WorkloadSource& s, const std::string& path) {
  const std::vector<sim::TracePod> pods = io::read_openb_trace(path);
  sim::TraceReplayParams params;
  params.time_scale = s.time_scale;
  params.start_s = s.trace_start_s;
  params.horizon_s = s.horizon_s;
  params.be_checkpoint_interval_s = s.be_checkpoint_s;
  sim::Workload w;
  try {
    w = sim::trace_workload(pods, params);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, 0, "", e.what());
  }
  if (w.horizon_s > io::kMaxHorizonSeconds)  // only without --horizon: the last arrival / K
    throw UsageError(fmt::format("--time-scale {}: the replay runs to its last arrival at {:g} s, above the maximum of {:.0f} s "
                                 "(raise --time-scale, or give --horizon)",
                                 s.time_scale, w.horizon_s, io::kMaxHorizonSeconds));
  return w;
}

// The snapshot's live pods at time 0, then the history's pods as a trace (docs/simulate.md, "A cluster
// snapshot and its history"). A history pod named as a live pod is that pod (the history was taken
// with it running): the live one counts, the history's is dropped with a warning.
sim::Workload snapshot_workload(const WorkloadSource& s) {
  sim::Workload history;
  if (!s.history_path.empty()) {
    history = trace_workload_of(s, s.history_path);
  } else {
    history.horizon_s = s.horizon_s;
  }
  io::SnapshotWorkloadOptions options;
  options.job_seconds = s.snapshot_job_s > 0 ? s.snapshot_job_s : history.horizon_s;
  io::SnapshotWorkload snap = io::read_snapshot_workload(s.snapshot_path, options);
  for (const std::string& w : snap.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  sim::Workload w;
  w.horizon_s = history.horizon_s;
  w.items = std::move(snap.items);
  std::set<std::string> names;
  for (const sim::WorkloadSpec& item : w.items) names.insert(item.name);
  const std::set<std::string> live(snap.live_pod_names.begin(), snap.live_pod_names.end());
  int dropped = 0;
  std::string first_dropped;
  w.items.reserve(w.items.size() + history.items.size());
  for (sim::WorkloadSpec& item : history.items) {
    if (live.count(item.name) > 0) {
      if (dropped++ == 0) first_dropped = item.name;
      continue;
    }
    if (!names.insert(item.name).second)
      throw InputError(s.history_path, 0, "name",
                       fmt::format("pod '{}' has the name of an item of the snapshot {} (a controller's pods grouped, or "
                                   "<namespace>.<name>): rename one",
                                   item.name, s.snapshot_path));
    w.items.push_back(std::move(item));
  }
  if (dropped > 0)
    std::fprintf(stderr, "gpufleet: warning: %s: %d pod%s named as a live pod of the snapshot (first: %s): the snapshot's pod counts, "
                 "the history's is dropped\n", s.history_path.c_str(), dropped, dropped == 1 ? "" : "s", first_dropped.c_str());
  if (w.items.empty())
    throw InputError(s.snapshot_path, 0, "", s.history_path.empty() ? "no Running or Pending pod: the workload is empty"
                                                                    : "no Running or Pending pod and no history pod: the workload is empty");
  return w;
}

}  // namespace

sim::Workload load_workload(const WorkloadSource& s, const sim::ClusterConfig& cluster, uint64_t seed,
                            const inference::ServingCatalog& catalog, bool any_pool_name) {
  if (!s.openb_pods_path.empty()) return trace_workload_of(s, s.openb_pods_path);
  if (!s.snapshot_path.empty()) return snapshot_workload(s);
  std::vector<std::string> pool_names;
  for (const sim::SimPool& p : cluster.pools) pool_names.push_back(p.pool.name);
  if (any_pool_name) pool_names = {io::kAnyPoolName};
  io::SimWorkloadFile file = io::read_sim_workload_file(s.workload_path, pool_names, &catalog);
  for (const std::string& w : file.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  io::check_dra_claim_references(cluster.dra, file.claim_references);  // the pools file's templates and claims
  for (size_t l = 0; l < file.workload.topology.levels.size(); ++l) {
    const std::string& level = file.workload.topology.levels[l];
    // The labels gpufleet puts on every node, and each pool's own.
    bool carried = level == sched::kHostnameLabel || level == kPoolLabel || level == kInstanceTypeLabel ||
                   level == kGpuProductLabel || level == kGpuCountLabel || level == sim::kCapacityTypeLabel;
    for (const sim::SimPool& p : cluster.pools) {
      carried = carried || find_label(p.pool.labels, level) != nullptr;
      for (const auto& [key, size] : p.pool.topology_domains) carried = carried || key == level;
    }
    if (!carried) {
      const io::SourcePosition& at = file.topology_levels_at[l];
      throw InputError(at.file, at.line, at.field, fmt::format("topology level {}: no pool's nodes carry this label", level), at.column);
    }
  }
  if (file.generator) {
    GoRand rng(static_cast<int64_t>(seed));  // the generator's own stream, seeded like the run
    std::vector<sim::WorkloadSpec> jobs = sim::generate_jobs(*file.generator, rng);
    std::vector<sim::WorkloadSpec>& items = file.workload.items;
    if (items.empty()) {
      items = std::move(jobs);  // no second buffer
    } else {
      items.reserve(items.size() + jobs.size());  // grown once, not by doubling
      for (sim::WorkloadSpec& job : jobs) items.push_back(std::move(job));
    }
  }
  return std::move(file.workload);
}

std::string describe_workload_source(const WorkloadSource& s) {
  const auto trace = [&](const std::string& path) {
    return fmt::format("{} (openb trace: arrivals / {:g} from trace second {:g}, own lifetimes, BE pods spot-ok with {:g} s checkpoints "
                       "(assumed), LS/Guaranteed priority 1000)",
                       path, s.time_scale, s.trace_start_s, s.be_checkpoint_s);
  };
  if (!s.snapshot_path.empty()) {
    const std::string jobs = s.snapshot_job_s > 0 ? fmt::format("jobs run {:g} s", s.snapshot_job_s) : "jobs run to the horizon";
    std::string text = fmt::format("{} (snapshot: Running and Pending pods at time 0, {}{})", s.snapshot_path, jobs,
                                   s.horizon_s > 0 ? fmt::format(", horizon {:g} s", s.horizon_s) : "");
    if (!s.history_path.empty()) text += " + history " + trace(s.history_path);
    return text;
  }
  if (s.openb_pods_path.empty()) return s.workload_path;
  return trace(s.openb_pods_path);
}

const std::string& workload_source_file(const WorkloadSource& s) {
  if (!s.workload_path.empty()) return s.workload_path;
  if (!s.openb_pods_path.empty()) return s.openb_pods_path;
  return s.snapshot_path;
}

}  // namespace gpufleet::cli
