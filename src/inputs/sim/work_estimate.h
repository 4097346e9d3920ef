// The work a simulation run would do, estimated from its inputs before it runs, and the budget it must
// fit. Every reader bounds its own fields (docs/input-limits.md), but not their product: a request
// rate inside its limit over a window inside its limit can be 1e8 requests; a pool's max inside its
// limit, scanned every 10 s over a horizon inside its limit, 1e12 node checks. The estimate multiplies
// the fields out and keeps, for each figure, which input fields make it and where they were read, so
// that a run over the budget is refused at once with one line naming the field.
//
// Pure: no I/O, no engine. The CLI (simulate, compare) calls check_work_budget before each run; a
// planner that sizes runs can call estimate_work alone. The figures are upper bounds of the engine's
// work in the usual case (tests/inputs/work_estimate_test.cpp compares them with the events a run
// counts, SimResult::events_processed), rough by design: what matters is the order of magnitude.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs/sim/cluster_config.h"
#include "inputs/sim/field_origin.h"
#include "inputs/sim/sim_options.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {

/// One contribution to a figure: how much, the input fields that multiply into it ("meanRatePerSecond
/// 100000 x 1800 s"), what to lower, and where the field that makes it was read (unknown: built in code).
struct WorkTerm {
  double amount = 0;
  std::string formula;  ///< the fields and their values, multiplied
  std::string remedy;   ///< e.g. "lower the rate or the window"
  FieldOrigin origin;
};

/// A figure of the estimate: its total and the terms that add up to it.
struct WorkFigure {
  double total = 0;
  std::vector<WorkTerm> terms;
  void add(WorkTerm term);
  /// The largest term (nullptr when there is none).
  const WorkTerm* largest() const;
};

struct WorkEstimate {
  double horizon_s = 0;
  /// Node slots: the sum of every pool's most nodes (PoolSettings' pool.max_nodes), one term per pool.
  WorkFigure node_slots;
  /// Jobs and service replicas created over the run: a job's gang once, a service's replicas up to its
  /// autoscaler's maximum, generated jobs, a ScaledJob's jobs (one per targetValue messages, plus its
  /// replica bounds), a rollout's new replicas. One term per item (generated jobs: one term).
  WorkFigure pods;
  /// Jobs and services (units of the engine), same terms as pods but counting each job or service once.
  double units = 0;
  /// Requests per inference service: rate x window for a generator, rows in the window x
  /// rateMultiplier for a trace. One term per service.
  WorkFigure requests;
  /// Events the event loop runs: arrivals and completions, requests, node lifecycle events, and the
  /// periodic ones (horizon / interval x count): scrapes, autoscaler evaluations, Cluster Autoscaler
  /// scans, Karpenter batches, consolidation passes, serving samples, alert evaluations, ScaledJob polls.
  WorkFigure events;
  /// Node checks: every node slot looked at by each Cluster Autoscaler scan and consolidation pass,
  /// plus every node slot filtered for each pod placed (pods x node slots).
  WorkFigure node_checks;
  /// Rows of the run's time series (horizon / sample interval).
  double timeseries_rows = 0;
  /// Rough peak memory, bytes: requests (their latencies are kept), trace rows, pods, node slots,
  /// time-series rows.
  double memory_bytes = 0;
};

/// Estimates the work of simulate(cluster, workload, options) (sim/simulator.h). Pure; throws nothing
/// for inputs the readers accept (non-finite or non-positive intervals count as one event each).
WorkEstimate estimate_work(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options);

/// The most work one run may do. The defaults keep every example and documented run well inside
/// (their largest: about a tenth of each) and refuse what would take minutes or gigabytes; each can be
/// raised (the CLI's --max-requests, --max-events, --max-pods, --max-node-checks; docs/input-limits.md
/// "Work budget").
struct WorkBudget {
  double max_requests = 2e7;     ///< requests simulated, all services together (~80 bytes each kept)
  double max_events = 2e8;       ///< events run (~0.2-1 microseconds each, plus their handlers' work)
  double max_pods = 50'000;      ///< pods created over the run (each placed, tracked and reported)
  double max_node_checks = 2e10; ///< node slots scanned by ticks plus pods x node slots
};

/// The CLI options that raise each budget, for messages.
inline constexpr const char* kMaxRequestsOption = "--max-requests";
inline constexpr const char* kMaxEventsOption = "--max-events";
inline constexpr const char* kMaxPodsOption = "--max-pods";
inline constexpr const char* kMaxNodeChecksOption = "--max-node-checks";

/// Checks `estimate` against `budget`, in the order requests, pods, events, node checks, and throws
/// for the first figure over its budget, at its largest term: an InputError at the term's origin
/// (file, line, column, field) when it has one, else a UsageError (util/input_error.h), with the message
/// "<amount> <what> (<formula>[; <total> in all]) is over the budget of <max> per run; <remedy>, or
/// raise <option>"; when the largest term is less than half the total (thousands of jobs), "<total>
/// <what> in all (the largest share: <amount> from <formula>, of <n> terms) is over ...". Non-finite
/// figures are over any budget.
void check_work_budget(const WorkEstimate& estimate, const WorkBudget& budget);

/// estimate_work then check_work_budget.
void check_work_budget(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options,
                       const WorkBudget& budget);

}  // namespace gpufleet::sim
