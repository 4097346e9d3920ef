// The FGD packing experiment ("gpufleet pack"): the protocol of Weng et al., USENIX ATC'23, as its
// simulator runs it (hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/core.go Simulate,
// pkg/simulator/analysis.go ClusterGpuFragReport, scripts/analysis.py).
//
// For one (policy, seed, tune):
//  1. GoRand(seed); one Int() draw (the simulator evaluates it for a debug log line).
//  2. Pods sorted by name, then Shuffle'd.
//  3. Tune: while summed GPU requests are below tune x cluster GPU milli, draw idx = Intn(N) over the
//     original pods sorted by name; stop (discarding the draw) when total + that pod's per-GPU milli
//     exceeds the target, else append a copy named "<name>-tuned-<i>" and add num_gpu x gpu_milli.
//     Above the target (multigpu40/50), remove pods[Intn(len)] until it is not.
//  4. Node ranks: nodes sorted by name get rank Perm(node count)[i]; score ties go to the lowest rank.
//  5. Pods arrive one at a time in list order; a pod that fits nowhere fails and never retries;
//     nothing departs. After every pod: arrived gpu_milli (failed pods included), allocated
//     gpu_milli and cluster fragmentation (sum of F(n), typical pods of the original trace).
//  6. Curves bucketed per whole percent of arrived workload (pack/bucketing.h).
// Steps 1-4 reproduce the simulator's workload and ranks exactly; the Random policy and GPU draws
// continue on the same stream.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "pack/bucketing.h"
#include "util/go_rand.h"
#include "util/progress.h"

namespace gpufleet::pack {

/// The result of one run. Curves have kCurveBuckets entries (index = arrived percent), NaN where the
/// run had no event near that percent.
struct PackRun {
  std::string policy;
  int64_t seed = 0;
  double tune = 0;
  std::vector<double> allocation_pct;  ///< allocated GPU milli / cluster GPU milli, %, per event rounded to 0.01
  std::vector<double> frag_pct;        ///< fragmentation ratio: fragmented / idle GPU milli, %
  std::vector<double> frag_gpu_pct;    ///< fragmented GPU milli / cluster GPU milli, %
  /// Upper bound on allocation_pct that no placement of the pods arrived by the end of each bucket
  /// could exceed (bound/allocation_bound.h); empty when the bound was not computed.
  std::vector<double> bound_pct;
  /// Upper bound on allocation_pct[100] for a work-conserving policy, one that places every pod whose
  /// GPUs fit: the smaller of bound/work_conserving_bound.h, rounded up to 0.01, and bound_pct[100].
  /// NaN when the bounds were not computed or bucket 100 is empty.
  double work_conserving_bound_pct_at_100 = std::nan("");
  double unallocated_gpus_at_100 = 0;  ///< (100 - allocation_pct[100]) / 100 x cluster GPUs
  int64_t pods = 0;                    ///< pods that arrived (after tuning)
  int64_t failed_pods = 0;             ///< pods that fit on no node
  double elapsed_s = 0;                ///< wall time of the run (not part of deterministic output)
};

/// The workload of steps 1-3 for `pods` (the trace as read) on a cluster of `cluster_gpu_milli`.
/// `rng` must be freshly seeded; it is advanced exactly as the simulator advances Go's global rand.
std::vector<Pod> build_tuned_workload(const std::vector<Pod>& pods, int64_t cluster_gpu_milli, double tune,
                                      GoRand& rng);

/// Step 4: rank[n] for each node (a permutation of 0..N-1), drawn from `rng`.
std::vector<uint32_t> draw_node_ranks(const std::vector<Node>& nodes, GoRand& rng);

/// The upper bounds of one (seed, tune), as PackRun carries them. They depend on the workload and its
/// arrival order only, not on the policy, so `pack` computes them once per seed.
struct PackBounds {
  std::vector<double> bound_pct;                             ///< as PackRun::bound_pct
  double work_conserving_bound_pct_at_100 = std::nan("");  ///< as PackRun::work_conserving_bound_pct_at_100
};
/// Throws std::invalid_argument for an empty cluster, one without GPUs, or a tune <= 0;
/// std::runtime_error if GLPK fails.
PackBounds pack_bounds(const std::vector<Node>& nodes, const std::vector<Pod>& pods, int64_t seed, double tune);

/// Runs the whole protocol; with `with_bound` also fills the bounds (as pack_bounds does). Throws
/// UsageError for an unknown policy, std::invalid_argument for an empty cluster or a tune <= 0.
PackRun run_pack(const std::vector<Node>& nodes, const std::vector<Pod>& pods, const std::string& policy,
                 int64_t seed, double tune, bool with_bound = false);

/// The tasks run_pack_grid runs: one per policy and seed, plus one per seed for the bounds when
/// `with_bound`. E.g. (7 policies, 10 seeds, true) -> 80.
size_t pack_grid_tasks(size_t policies, size_t seeds, bool with_bound);

/// The runs of `gpufleet pack`: run_pack for every policy and seed, policy-major (policies[0] with
/// every seed in order, then policies[1], ...), whatever order the threads finish in. With
/// `with_bound`, each run carries its seed's bounds, computed once per seed (pack_bounds) and shared
/// by that seed's runs. Runs the pack_grid_tasks tasks on `threads` threads (util/parallel.h);
/// `progress`, when given, advances by one per task, failed ones included. Throws what run_pack and
/// pack_bounds throw (the first failure caught, after every task has ended).
std::vector<PackRun> run_pack_grid(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                   const std::vector<std::string>& policies, const std::vector<int64_t>& seeds,
                                   double tune, bool with_bound, int threads, Progress* progress = nullptr);

}  // namespace gpufleet::pack
