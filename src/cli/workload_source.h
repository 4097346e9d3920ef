// Workload loading shared by `gpufleet simulate`, `compare` and `plan`: a workload file
// (readers/sim/workload_file.h, with its seeded generator), the openb trace (readers/traces/openb_csv.h
// read_openb_trace, mapped by inputs/sim/openb_trace.h), or a cluster snapshot (readers/sim/
// snapshot_workload.h) with, optionally, the history of its pods (an openb pod list, mapped the same).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inference/catalog.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/workload.h"

namespace gpufleet::cli {

/// The range of --time-scale: from 1e-3 (the trace stretched 1000-fold) to 1e6 (40 days of trace in
/// about 3.5 s). Outside it a replay is either absurdly long or collapsed to no time at all.
inline constexpr double kMinTimeScale = 1e-3;
inline constexpr double kMaxTimeScale = 1e6;

/// Where the workload comes from: exactly one of workload_path, openb_pods_path and snapshot_path.
/// The trace options (time_scale, trace_start_s, horizon_s, be_checkpoint_s) map an openb pod list:
/// openb_pods_path, or history_path with a snapshot.
struct WorkloadSource {
  std::string workload_path;      ///< workload YAML (docs/simulate.md)
  std::string openb_pods_path;    ///< openb pod list CSV with creation/deletion/scheduled times
  /// `kubectl get pods -A -o json` (or nodes,pods): its Running and Pending pods at time 0
  /// (readers/sim/snapshot_workload.h).
  std::string snapshot_path;
  std::string history_path;       ///< with snapshot_path: the past pods, an openb pod list replayed after 0
  /// With snapshot_path: seconds each job of the snapshot (a Job's pod, a bare pod) runs; 0 = to the horizon.
  double snapshot_job_s = 0;
  double time_scale = 1;          ///< openb: arrivals compressed K-fold (sim::TraceReplayParams)
  double trace_start_s = 0;       ///< openb: trace second that becomes time 0
  double horizon_s = 0;           ///< openb: 0 = up to the last arrival; a snapshot without history needs it
  double be_checkpoint_s = 600;   ///< openb: checkpoint interval of BE pods, seconds
  /// Serving catalog for inference services (readers/serving/inference_catalog.h); empty = the built-in one.
  std::string serving_catalog_path;
  /// --engine-version: the serving catalog's constant set (ServingCatalog::select_engine_version); empty = its default.
  std::string engine_version;
};

/// Checks the combination of options: one source, trace options only with the trace (--openb-pods, or
/// --snapshot with --history; --horizon also with --snapshot alone, which needs it), --history and
/// --snapshot-job-seconds only with --snapshot, --time-scale in [kMinTimeScale, kMaxTimeScale],
/// --horizon and --snapshot-job-seconds at most io::kMaxHorizonSeconds. Throws UsageError.
void check_workload_source(const WorkloadSource& source);

/// Loads the workload for `cluster`: its pools are those a workload file may name, and each topology
/// level must be a label its nodes carry (a pool's labels or topology domains, a label gpufleet sets,
/// or kubernetes.io/hostname); `seed` seeds the generator. Throws InputError (file, line, field)
/// for bad input, and UsageError naming --time-scale when a replay without --horizon would run past
/// io::kMaxHorizonSeconds.
/// With any_pool_name, `pools:` may name any pool (io::kAnyPoolName): `plan` makes the pools.
sim::Workload load_workload(const WorkloadSource& source, const sim::ClusterConfig& cluster, uint64_t seed,
                            const inference::ServingCatalog& catalog, bool any_pool_name = false);

/// The serving catalog: source.serving_catalog_path when set, else the built-in one (data/inference/
/// catalog.yaml). Throws InputError.
inference::ServingCatalog load_serving_catalog(const WorkloadSource& source);
/// Puts `engine_version`'s latency constants in force (nothing when empty); UsageError naming
/// --engine-version and the catalog's sets when it has none by that name.
void select_engine_version(inference::ServingCatalog& catalog, const std::string& engine_version);

/// The cluster of a run: the pools file (readers/sim/sim_pools.h, with its Autoscaling and FaultSchedule
/// documents) and, when faults_path is not empty, the FaultSchedule of that file
/// (readers/sim/fault_schedule.h, `--faults`), which replaces a FaultSchedule document of the pools file (the
/// same pools under another schedule). Throws InputError.
sim::ClusterConfig load_cluster(const std::string& pools_path, const std::string& faults_path);

/// One line describing the source, for summaries ("workload.yaml", or the trace with its mapping).
std::string describe_workload_source(const WorkloadSource& source);

/// The file that names the workload in errors found after reading: the workload file, the openb pod
/// list or the snapshot.
const std::string& workload_source_file(const WorkloadSource& source);

}  // namespace gpufleet::cli
