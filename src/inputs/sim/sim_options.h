// The options of one simulation run (sim/simulator.h simulate()): the policy, the seed, the time
// series' spacing, tracing, what counts as production, progress, the serving catalog, summary runs.
// Plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "inference/catalog.h"

namespace gpufleet::sim {

/// The shortest period of anything a run repeats (the time series' rows, Prometheus scrapes,
/// autoscaler evaluations): 1 ms. A shorter one (1e-9 s was accepted) floods the event queue and the
/// run never finishes; real scrape and sync periods are seconds.
inline constexpr double kMinIntervalSeconds = 1e-3;

struct SimOptions {
  std::string policy = "gpufleet";  ///< a name from sched::policy_names()
  uint64_t seed = 42;               ///< seeds the scheduler's generator and, derived, the spot one
  double sample_interval_s = 60;    ///< time-series row spacing (one row per simulated minute), >= kMinIntervalSeconds
  bool trace = false;               ///< record every event handled (SimResult::trace), for tests
  /// Pods with at least this priority are "production" (SimResult::pending_production).
  int32_t production_priority = 1000;
  /// Called with the simulated fraction done (0..1) about every 1%; may be empty.
  std::function<void(double)> progress;
  /// Models, GPU figures and latency constants for inference services (Workload::inference);
  /// required when there are any (readers/serving/inference_catalog.h builtin_serving_catalog).
  const inference::ServingCatalog* serving_catalog = nullptr;
  /// A summary run, for callers that run the simulator many times and read only its totals (a
  /// planner): SimResult::units (one outcome per job or replica, about 110 bytes each, 0.1 GB for a
  /// million jobs) stays empty. Everything else is as in a full run, the pod counts per state and the
  /// exact pending-time percentiles included. Default false: every outcome.
  bool summary_only = false;
};

}  // namespace gpufleet::sim
