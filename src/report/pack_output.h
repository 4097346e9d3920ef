// Writers for `gpufleet pack` results: JSON (stable, documented in docs/pack.md), CSV (long format) and a
// text summary. Pure functions returning strings; the CLI writes them with write_file_atomically.
#pragma once

#include <string>
#include <vector>

#include "pack/pack_experiment.h"

namespace gpufleet::io {

/// What the JSON says about the cluster.
struct ClusterInfo {
  size_t nodes = 0;
  int64_t gpus = 0;
};

/// JSON document:
/// {"cluster": {"nodes": N, "gpus": G},
///  "runs": [{"policy", "seed", "tune", "allocation_pct": [131], "frag_pct": [131],
///            "frag_gpu_pct": [131], "bound_pct": [131], "work_conserving_bound_pct_at_100",
///            "unallocated_gpus_at_100", "pods", "failed_pods", "elapsed_s"}]}
/// (bound_pct and work_conserving_bound_pct_at_100 only when the bounds were computed)
/// Empty buckets are null. elapsed_s is null unless `with_timings` (wall time would make the
/// output differ between identical runs).
std::string pack_runs_json(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs, bool with_timings);

/// CSV, one row per run and arrived percent:
/// policy,seed,tune,arrived_pct,allocation_pct,frag_pct,frag_gpu_pct (empty cells for empty buckets).
std::string pack_runs_csv(const std::vector<pack::PackRun>& runs);

/// Per-policy aggregate over seeds.
struct PolicySummary {
  std::string policy;
  int runs = 0;
  double alloc100_mean = 0, alloc100_sd = 0;
  double alloc130_mean = 0;
  double bound100_mean = 0;  ///< NaN when no run has a bound
  double wc_bound100_mean = 0;  ///< mean work_conserving_bound_pct_at_100; NaN when no run has one
  double unallocated100_mean = 0;
  double failed_pods_mean = 0;
  double seconds_per_run = 0;
};
/// Groups runs by policy (first-seen order). Means skip empty buckets; sd is the sample sd.
std::vector<PolicySummary> summarize(const std::vector<pack::PackRun>& runs);

/// The text table printed on stdout.
std::string pack_summary_text(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs);

}  // namespace gpufleet::io
