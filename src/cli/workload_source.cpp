#include "cli/workload_source.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "readers/sim/fault_schedule.h"
#include "readers/sim/sim_pools.h"
#include "readers/traces/openb_csv.h"
#include "readers/serving/inference_catalog.h"
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
  if (s.workload_path.empty() == s.openb_pods_path.empty())
    throw UsageError("give exactly one of --workload FILE and --openb-pods CSV");
  if (s.openb_pods_path.empty() && (s.time_scale != 1 || s.trace_start_s != 0 || s.horizon_s != 0 || s.be_checkpoint_s != 600))
    throw UsageError("--time-scale, --trace-start, --horizon and --be-checkpoint apply to --openb-pods only");
  if (!std::isfinite(s.time_scale) || s.time_scale <= 0) throw UsageError(fmt::format("--time-scale {} must be positive", s.time_scale));
  if (s.time_scale < kMinTimeScale || s.time_scale > kMaxTimeScale)
    throw UsageError(fmt::format("--time-scale {} is outside [{:g}, {:.0f}]", s.time_scale, kMinTimeScale, kMaxTimeScale));
  if (!std::isfinite(s.trace_start_s) || s.trace_start_s < 0) throw UsageError(fmt::format("--trace-start {} must be >= 0", s.trace_start_s));
  if (!std::isfinite(s.horizon_s) || s.horizon_s < 0) throw UsageError(fmt::format("--horizon {} must be >= 0", s.horizon_s));
  if (s.horizon_s > io::kMaxHorizonSeconds)
    throw UsageError(fmt::format("--horizon {} is above the maximum of {:.0f} s (about 3 years)", s.horizon_s, io::kMaxHorizonSeconds));
  if (!std::isfinite(s.be_checkpoint_s) || s.be_checkpoint_s < 0)
    throw UsageError(fmt::format("--be-checkpoint {} must be >= 0", s.be_checkpoint_s));
}

inference::ServingCatalog load_serving_catalog(const WorkloadSource& s) {
  return s.serving_catalog_path.empty() ? io::builtin_serving_catalog() : io::load_serving_catalog(s.serving_catalog_path);
}

sim::Workload load_workload(const WorkloadSource& s, const sim::ClusterConfig& cluster, uint64_t seed,
                            const inference::ServingCatalog& catalog, bool any_pool_name) {
  if (!s.openb_pods_path.empty()) {
    const std::vector<sim::TracePod> pods = io::read_openb_trace(s.openb_pods_path);
    sim::TraceReplayParams params;
    params.time_scale = s.time_scale;
    params.start_s = s.trace_start_s;
    params.horizon_s = s.horizon_s;
    params.be_checkpoint_interval_s = s.be_checkpoint_s;
    sim::Workload w;
    try {
      w = sim::trace_workload(pods, params);
    } catch (const std::invalid_argument& e) {
      throw InputError(s.openb_pods_path, 0, "", e.what());
    }
    if (w.horizon_s > io::kMaxHorizonSeconds)  // only without --horizon: the last arrival / K
      throw UsageError(fmt::format("--time-scale {}: the replay runs to its last arrival at {:g} s, above the maximum of {:.0f} s "
                                   "(raise --time-scale, or give --horizon)",
                                   s.time_scale, w.horizon_s, io::kMaxHorizonSeconds));
    return w;
  }
  std::vector<std::string> pool_names;
  for (const sim::SimPool& p : cluster.pools) pool_names.push_back(p.pool.name);
  if (any_pool_name) pool_names = {io::kAnyPoolName};
  io::SimWorkloadFile file = io::read_sim_workload_file(s.workload_path, pool_names, &catalog);
  for (const std::string& w : file.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
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
  if (s.openb_pods_path.empty()) return s.workload_path;
  return fmt::format("{} (openb trace: arrivals / {:g} from trace second {:g}, own lifetimes, BE pods spot-ok with {:g} s checkpoints "
                     "(assumed), LS/Guaranteed priority 1000)",
                     s.openb_pods_path, s.time_scale, s.trace_start_s, s.be_checkpoint_s);
}

}  // namespace gpufleet::cli
