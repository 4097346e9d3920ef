// The Alibaba openb trace (cluster-trace-gpu-v2023) as a `gpufleet simulate` workload: each pod of
// the pod list becomes a one-pod job that arrives at its (compressed) creation time and runs for its
// own lifetime. Plain data and a pure mapping, no I/O (the CSV reader is readers/traces/openb_csv.h,
// read_openb_trace; the mapping is documented in docs/simulate.md, "The openb trace").
//
// Time. The trace's times are seconds from the trace start. Replayed raw, creation and deletion
// times load the 6212-GPU openb cluster to about 1% (at most about 66 GPUs in use at once, counting
// the pods of alibaba/clusterdata cluster-trace-gpu-v2023 csv/openb_pod_list_default.csv alive between
// their creation and deletion times). time_scale K compresses arrivals only:
//   arrival_s  = (creation_time - start_s) / K          (0 for a pod created before start_s)
//   duration_s = deletion_time - max(scheduled_time or creation_time, start_s)   (not scaled)
//   horizon_s  = (last creation_time - start_s) / K     (unless horizon_s is given)
// so arrivals come K times faster while each pod keeps its lifetime: the number of pods alive at
// once grows about K-fold (Little's law: concurrency = arrival rate x mean lifetime), as long as
// lifetimes are short against the compressed horizon. Pods deleted at or before start_s are dropped.
// A pod that the trace never scheduled (pod_phase Pending, no scheduled_time) runs deletion -
// creation: how long it was wanted. A lifetime of 0 s becomes 1 s (durations must be positive).
// Pods still running when the trace was cut have deletion_time = the cut; their lifetime is a lower
// bound.
//
// Sharing. gpu_milli maps one to one: num_gpu 1 with gpu_milli below 1000 is a share of one GPU
// (the Pod's GPU-sharing request, as `gpufleet pack` places it: any pods whose shares sum to at most
// 1000 may share a GPU) and is charged as that share; gpu_milli 1000 takes num_gpu whole GPUs.
// gpu_spec becomes the pod's GPU-model constraint (Pod::gpu_spec).
//
// Priority and capacity by QoS class (the trace has no priorities; this mapping is gpufleet's):
//   LS, Guaranteed  priority 1000 (production), on-demand only, namespace "ls" / "guaranteed"
//   Burstable       priority 100, on-demand only, namespace "burstable"
//   BE              priority 0, spot-ok, checkpoints every be_checkpoint_interval_s, namespace "be"
//   (none)          priority 0, on-demand only, namespace "default"
// The trace says nothing about checkpoints: treating best-effort pods as checkpointed batch work is
// an assumption, stated in the output of every run that uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/pod.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {

/// One pod of the trace with its times (seconds from the trace start).
struct TracePod {
  Pod pod;                         ///< name, cpu_milli, memory_bytes, num_gpu, gpu_milli, gpu_spec, qos
  int64_t creation_time_s = 0;
  int64_t deletion_time_s = 0;     ///< >= creation_time_s
  int64_t scheduled_time_s = -1;   ///< -1: never scheduled (pod_phase Pending)
};

/// Production priority of the mapping (LS and Guaranteed pods).
inline constexpr int32_t kTraceProductionPriority = 1000;

struct TraceReplayParams {
  double time_scale = 1;                 ///< K above, > 0
  double start_s = 0;                    ///< trace time that becomes simulated time 0, >= 0
  double horizon_s = 0;                  ///< > 0: this horizon; 0: the last arrival
  double be_checkpoint_interval_s = 600; ///< checkpoint interval of BE pods, >= 0 (0 = none)
};

/// The workload of the mapping above: one job per kept pod, named after the pod, in trace order.
/// Throws std::invalid_argument for time_scale <= 0 or not finite, negative start, horizon or
/// checkpoint interval, a pod whose deletion precedes its creation, or no pod alive after start_s,
/// or a horizon that comes out non-positive.
Workload trace_workload(const std::vector<TracePod>& pods, const TraceReplayParams& params);

}  // namespace gpufleet::sim
