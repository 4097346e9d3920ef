#include "inputs/sim/openb_trace.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {
namespace {

void apply_qos(WorkloadSpec& spec, QosClass qos, double be_checkpoint_interval_s) {
  switch (qos) {
    case QosClass::kLS:
      spec.priority = kTraceProductionPriority;
      spec.namespace_name = "ls";
      break;
    case QosClass::kGuaranteed:
      spec.priority = kTraceProductionPriority;
      spec.namespace_name = "guaranteed";
      break;
    case QosClass::kBurstable:
      spec.priority = 100;
      spec.namespace_name = "burstable";
      break;
    case QosClass::kBE:
      spec.priority = 0;
      spec.namespace_name = "be";
      spec.capacity = CapacityPreference::kSpotOk;
      spec.checkpoint_interval_s = be_checkpoint_interval_s;
      break;
    case QosClass::kUnspecified: break;
  }
}

}  // namespace

Workload trace_workload(const std::vector<TracePod>& pods, const TraceReplayParams& params) {
  if (!std::isfinite(params.time_scale) || params.time_scale <= 0)
    throw std::invalid_argument(fmt::format("time scale {} must be positive", params.time_scale));
  if (!std::isfinite(params.start_s) || params.start_s < 0)
    throw std::invalid_argument(fmt::format("trace start {} s must be >= 0", params.start_s));
  if (!std::isfinite(params.horizon_s) || params.horizon_s < 0)
    throw std::invalid_argument(fmt::format("horizon {} s must be >= 0", params.horizon_s));
  if (!std::isfinite(params.be_checkpoint_interval_s) || params.be_checkpoint_interval_s < 0)
    throw std::invalid_argument(fmt::format("checkpoint interval {} s must be >= 0", params.be_checkpoint_interval_s));
  Workload w;
  double last_arrival_s = 0;
  for (const TracePod& tp : pods) {
    if (tp.deletion_time_s < tp.creation_time_s)
      throw std::invalid_argument(fmt::format("pod '{}': deletion_time {} before creation_time {}", tp.pod.name,
                                              tp.deletion_time_s, tp.creation_time_s));
    const double deletion = static_cast<double>(tp.deletion_time_s);
    if (deletion <= params.start_s) continue;
    const double began = static_cast<double>(tp.scheduled_time_s >= 0 ? tp.scheduled_time_s : tp.creation_time_s);
    WorkloadSpec spec;
    spec.name = tp.pod.name;
    spec.kind = WorkloadKind::kJob;
    spec.pods = 1;
    spec.cpu_milli = tp.pod.cpu_milli;
    spec.memory_bytes = tp.pod.memory_bytes;
    spec.num_gpu = tp.pod.num_gpu;
    spec.gpu_milli = tp.pod.gpu_milli;
    spec.gpu_spec = tp.pod.gpu_spec;
    spec.arrival_s = std::max(0.0, (static_cast<double>(tp.creation_time_s) - params.start_s) / params.time_scale);
    spec.duration_s = std::max(1.0, deletion - std::max(began, params.start_s));
    apply_qos(spec, tp.pod.qos, params.be_checkpoint_interval_s);
    last_arrival_s = std::max(last_arrival_s, spec.arrival_s);
    w.items.push_back(std::move(spec));
  }
  if (w.items.empty()) throw std::invalid_argument(fmt::format("no trace pod is alive after the start {} s", params.start_s));
  w.horizon_s = params.horizon_s > 0 ? params.horizon_s : last_arrival_s;
  if (w.horizon_s <= 0) throw std::invalid_argument("the trace's arrivals span 0 s: give a horizon");
  return w;
}

}  // namespace gpufleet::sim
