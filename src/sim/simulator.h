// `gpufleet simulate`'s engine: a discrete-event simulation of a workload on autoscaled node pools
// with on-demand, spot and reserved capacity, and its cost. No I/O.
//
// The parts that implement it (event loop, fleet, billing, pending queue, placement, workloads,
// metrics, and the controllers) and how they are wired: sim/simulation.h.
//
// Clock and events. Time is in seconds from 0 to the workload's horizon. Events (sim/engine/
// event_loop.h; each module registers its own kinds) run in (time, insertion sequence) order:
// arrivals, completions, node ready, spot notice and reclaim, autoscaler ticks, consolidation ticks,
// and retries of the pending pods. Checkpoints are not events: a job's
// last checkpoint is computed when it is interrupted (nothing else reacts to one), which keeps the
// queue small; a checkpoint cost (WorkloadSpec::checkpoint_cost_s) lengthens the run by the writes
// before its end (sim/checkpointing.h). Same input and seed, same result, bit for bit.
//
// Scheduling. One sched::Scheduler with the policy's profile from sched::make_policy (sim/engine/placement.h).
// The fleet (sim/engine/fleet.h) keeps each node's lifecycle (absent -> provisioning -> ready ->
// [cordoned] -> absent); a node is in ClusterState from Ready to its removal, so only ready nodes
// take pods (a cordoned one is unschedulable). Node ids are slots, pools in file order, nodes by
// index, and rank ties: score ties go to the first.
// Pending units (a job's gang, or one service replica) are tried in queue order: higher priority
// first, then longer pending, then submission order. A retry pass runs at the time of any change
// that may free capacity (arrival, node ready, completion, eviction); in a pass, a shape that failed
// is not tried again (allocations in a pass only take capacity). A job's pods are placed one after
// another and rolled back if one does not fit.
//
// Autoscaler (every scan interval; sim/autoscaler.h for the rules): scale-up considers the units
// pending for at least scale_up_delay_s; pods that fit the free room of ready nodes (a gang's pods
// wait for each other) or a node already being provisioned are not counted again; for each pool with room below max_nodes whose template node admits the pods, the
// binpacking estimate gives the nodes needed; the expander picks one pool, whose nodes are requested
// and become ready provision_s later. Scale-down: a ready node whose utilization stays below the
// threshold for scale_down_unneeded_s is removed if its pool stays at or above min_nodes and its
// pods fit elsewhere (empty nodes, any number per tick; at most one non-empty node per tick, whose
// service pods are moved, if their disruption budgets allow; job pods block removal, as
// `safe-to-evict: "false"`). No scale-down within scale_down_delay_after_add_s of a scale-up.
//
// Consolidation (Karpenter's WhenUnderutilized, ConsolidationSettings; off by default), every
// interval_s from 0, after a retry of the pending pods if one is due (pods waiting for room get it
// before nodes are taken away). Candidates: ready nodes of pools that no pending pod could use (its
// template node admits none of them) and that stay at or above min_nodes, with
// utilization strictly below the threshold, untouched by pod changes for consolidate_after_s, and whose
// removal lowers the bill (a node held by the reservation with no other live node to take the
// reservation over saves nothing). Empty candidates are removed, any number per tick (Karpenter's
// emptiness). Then the others, cheapest to disrupt first: Karpenter's disruption cost (the sum over
// the pods that must restart of clamp(1 + priority / 2^25, -10, 10)), then the GPU-seconds of job
// work the restart would lose, then node order. The first whose pods all fit on the other ready nodes
// (a dry run with the scheduler, gangs whole) and whose moves keep every item's disruption budget is
// emptied and removed; one such node per tick (Karpenter's single-node consolidation). A service
// replica restarts on its new node and loses nothing; a job restarts all its pods (also those on other
// nodes) from its last checkpoint, losing the work since it (lost_gpu_hours). Moved pods do not add
// pending samples: they never wait. The nodes of Karpenter NodePools are consolidated whenever the
// cluster has NodePools, by their spec.disruption (consolidateAfter, WhenEmpty, budgets;
// sim/controllers/consolidation.h). Nodes holding a do_not_disrupt pod are never scaled down or
// consolidated.
//
// Spot (pools with capacity type spot): each node's time to interruption from Ready is exponential
// with the pool's rate per node-hour, drawn from the simulator's spot generator. At the notice the
// node is cordoned and its pods are evicted (Karpenter drains on the warning); a job stops on every
// node, keeps the work up to its last checkpoint (all of it with checkpoint_on_notice when the write
// fits in the notice window) and is queued again; a service replica is queued
// again. The node is reclaimed (removed, billing stops) spot_notice_s later.
//
// Pod outcomes at the horizon: completed (its job finished), running, pending (waiting for capacity
// that its pools can provide), failed (no pool's node could ever admit it: the reason says why, as
// Cluster Autoscaler's "pod didn't trigger scale-up"), removed (a service replica taken away when a
// controller lowered the replica count: sim/engine/workloads.h ServiceScaler).
//
// Cost and chargeback: sim/cost.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "queue/kueue_scheduler.h"
#include "sim/config.h"
#include "sim/engine/event_loop.h"
#include "inference/catalog.h"
#include "sim/inference_result.h"
#include "sim/workload.h"

namespace gpufleet::sim {

struct SimOptions {
  std::string policy = "gpufleet";  ///< a name from sched::policy_names()
  uint64_t seed = 42;               ///< seeds the scheduler's generator and, derived, the spot one
  double sample_interval_s = 60;    ///< time-series row spacing (one row per simulated minute)
  bool trace = false;               ///< record every event handled (SimResult::trace), for tests
  /// Pods with at least this priority are "production" (SimResult::pending_production).
  int32_t production_priority = 1000;
  /// Called with the simulated fraction done (0..1) about every 1%; may be empty.
  std::function<void(double)> progress;
  /// Models, GPU figures and latency constants for inference services (Workload::inference);
  /// required when there are any (io/inference_catalog.h builtin_serving_catalog).
  const inference::ServingCatalog* serving_catalog = nullptr;
};

/// Pending-time percentiles (nearest rank) over a set of samples, seconds; nullopt without samples.
struct PendingStats {
  size_t samples = 0;
  std::optional<double> p50, p95, p99;
};

/// One ClusterQueue over the run (simulate with queues:).
struct QueueResult {
  std::string cluster_queue;
  std::string cohort;
  int32_t workloads = 0;           ///< jobs that arrived in it
  int32_t admitted = 0;            ///< admitted at least once
  int32_t finished = 0;
  int32_t pending_at_end = 0;      ///< queued (never admitted or evicted and not admitted again) at the horizon
  int64_t admissions = 0;          ///< admissions in all (a requeued workload counts again)
  int64_t preemptions = 0;         ///< workloads of this queue preempted (within the queue or reclaimed by the cohort)
  int64_t evictions = 0;           ///< workloads evicted for other causes (PodsReadyTimeout)
  double gpu_hours = 0;            ///< nvidia.com/gpu quota reserved (admitted), GPU-hours
  double borrowed_gpu_hours = 0;   ///< the part above the queue's nominal quota
  /// borrowed_gpu_hours / gpu_hours x 100 (0 without usage).
  double borrowed_pct = 0;
  PendingStats wait;               ///< seconds from arrival to first admission, admitted workloads
};

/// An admission decision or eviction, in Kueue's words; `workload` is the job's name.
using QueueEvent = queue::EventRecord;

/// A billing segment of one node: from its launch, or from the moment a reservation started to
/// cover it (sim/cost.h), to its removal, the horizon, or that moment. A node's life is one or two
/// segments.
struct NodeLifetime {
  std::string node;
  std::string pool;
  std::string capacity_type;          ///< "on-demand", "spot" or "reserved"
  double start_s = 0;
  double end_s = 0;
  double price_usd_per_hour = 0;
};

/// A row of the time series: the state after every event at or before time_s.
struct TimeseriesRow {
  double time_s = 0;
  std::vector<int32_t> nodes_per_pool;  ///< billed nodes (provisioning, ready or cordoned), pool order
  int64_t gpu_allocated_milli = 0;
  int64_t gpu_capacity_milli = 0;       ///< of the billed nodes
  int64_t pending_pods = 0;
  double cost_usd_per_hour = 0;         ///< billed nodes plus unused reservations
};

/// A pod (unit) waiting for capacity at a moment, and why (SimResult::pending_at_horizon).
struct PendingPod {
  std::string unit;           ///< job name, or <service>-<replica>
  int32_t pods = 0;
  int32_t priority = 0;
  double pending_since_s = 0;
  /// A provisioner's reason ("pool limit reached (NodePool gpu: cpu)", "no offering available
  /// (insufficient capacity)", "max nodes reached (<pool>)", "node group in backoff (<pool>)"), else
  /// the scheduler's last "0/N nodes are available: ..." message, else "".
  std::string reason;
};

/// One node Karpenter's provisioner requested (a NodeClaim), and how it ended.
struct NodeClaimRecord {
  std::string node;            ///< the simulated node, <pool>-<index>
  std::string node_pool;       ///< the Karpenter NodePool
  std::string offering;        ///< the pool of the offering (instance type, zone, capacity type)
  std::string capacity_type;   ///< "spot" or "on-demand"
  double requested_s = 0;
  double failed_s = -1;        ///< the launch was refused (insufficient capacity): when it was known
  double ready_s = -1;         ///< became Ready
};

enum class UnitState { kWaiting, kPending, kRunning, kCompleted, kFailed, kRemoved, kQueued };

/// "waiting" (not arrived), "pending", "running", "completed", "failed", "removed" (a service replica
/// taken away by a scale-down, sim/engine/workloads.h), "queued" (a job Kueue holds: not admitted, or
/// preempted or evicted and waiting to be admitted again; sim/controllers/kueue_admission.h).
const char* unit_state_name(UnitState state);

/// The end state of one job or one service replica.
struct UnitOutcome {
  std::string name;                   ///< job name, or <service>-<replica>
  UnitState state = UnitState::kWaiting;
  int32_t pods = 0;
  double completion_s = -1;           ///< jobs that completed
  int32_t starts = 0;
  int32_t interruptions = 0;
  int32_t consolidations = 0;         ///< times consolidation restarted it elsewhere
  double saved_work_s = 0;            ///< jobs: work kept by checkpoints (duration when completed)
  std::string reason;                 ///< failed: why
  double removed_s = -1;              ///< removed replicas: when
};

/// One job's checkpoints over the run (jobs with a checkpoint cost or checkpoint-on-notice;
/// sim/checkpointing.h, docs/checkpoints-and-upgrades.md).
struct CheckpointJobResult {
  std::string name;
  double interval_s = 0;              ///< WorkloadSpec::checkpoint_interval_s
  double cost_s = 0;                  ///< WorkloadSpec::checkpoint_cost_s
  double checkpoint_s = 0;            ///< seconds spent writing checkpoints (periodic and on notice)
  int32_t interruptions = 0;          ///< times it was stopped (UnitOutcome::interruptions)
  /// Interruptions per hour of running expected for the job: the sum, over the distinct nodes its
  /// pods held at its last start, of their pool's observed rate (spot notices per node-hour of the
  /// pool's nodes over the run); 0 when not started or no pool it ran on was interrupted.
  double interruptions_per_hour = 0;
  double mtbi_s = 0;                  ///< 3600 / interruptions_per_hour; 0 when the rate is 0
  double young_interval_s = 0;        ///< sim/checkpointing.h young_interval_s(cost, mtbi); 0 without
  double daly_interval_s = 0;         ///< daly_interval_s(cost, mtbi): the recommended interval; 0 without
};

/// One rolling driver upgrade (sim/faults.h DriverUpgrade; sim/controllers/driver_upgrade.h).
struct DriverUpgradeResult {
  std::string pool;
  double start_s = 0;
  double finish_s = -1;               ///< the last node made schedulable again; -1: not done by the horizon
  int32_t max_unavailable = 0;        ///< max_unavailable scaled against the pool's nodes at the start
  int32_t nodes_upgraded = 0;
  int32_t nodes_skipped = 0;          ///< removed (or interrupted) before or during their upgrade
  /// GPUs x seconds each node spent cordoned for the upgrade (drain and upgrade), GPU-hours.
  double capacity_lost_gpu_hours = 0;
  int32_t jobs_interrupted = 0;       ///< job stops by the drains (a job stopped twice counts twice)
  int64_t pods_evicted = 0;           ///< pods stopped by evictions the budgets allowed (a job's pods on other nodes too)
  int64_t pods_deleted = 0;           ///< pods deleted at the drain timeout, their budget refusing
  double lost_gpu_hours = 0;          ///< job work lost by the drains (part of SimResult::lost_gpu_hours)
};

/// An alert that fired during the run, as the Prometheus rules of docs/faults.md would fire it
/// (sim/controllers/alerting.h evaluates them). Only runs with a fault schedule evaluate alerts.
struct Alert {
  double time_s = 0;
  std::string alert;     ///< rule name: DCGMXidError, KubeNodeNotReady, KubePodPendingTooLong, SpotInterruptionStorm
  std::string severity;  ///< "warning" or "critical"
  std::string subject;   ///< what it is about: a node, <node>/gpu<g>, a pod (unit) or a pool
  std::string message;
};

/// What the fault injector did (sim/controllers/fault_injector.h); all 0 without a fault schedule.
struct FaultCounts {
  int64_t node_failures = 0;           ///< nodes made NotReady
  int64_t xid_errors = 0;              ///< XIDs raised on a GPU
  int64_t gpus_reset = 0;              ///< of those, GPUs taken out of allocatable (reset-level XIDs)
  int64_t container_restarts = 0;      ///< units restarted in place by application-level XIDs
  int64_t device_plugin_failures = 0;  ///< nodes whose device plugin stopped
  int64_t spot_interruptions = 0;      ///< interruption notices injected (also in spot_interruptions)
  int64_t skipped = 0;                 ///< faults with no node to hit (none Ready, not spot, ...)
};

struct SimResult {
  std::string policy;
  uint64_t seed = 0;
  double horizon_s = 0;
  std::vector<std::string> pools;     ///< pool names, file order

  double cost_usd = 0;                                   ///< USD over the horizon
  std::map<std::string, double> cost_by_pool;            ///< pool name -> USD (every pool, 0 if unused)
  std::map<std::string, double> cost_by_capacity_type;   ///< "on-demand", "spot", "reserved" -> USD
  std::map<std::string, double> chargeback;              ///< namespace -> USD
  double idle_cost_usd = 0;                              ///< cost_usd - sum of chargeback (a residue below 1e-9: 0)
  double reserved_unused_usd = 0;                        ///< part of the reserved cost paid for no node

  /// GPU-hours allocated / GPU-hours billed x 100 (time-weighted over the horizon; 0 without GPUs).
  double gpu_allocation_pct_mean = 0;
  /// Seconds each pod waited, one sample per start (from arrival or requeue) plus one per pod still
  /// pending at the horizon (its wait so far).
  PendingStats pending;
  std::map<int32_t, PendingStats> pending_by_priority;
  int32_t production_priority = 1000;  ///< SimOptions::production_priority
  PendingStats pending_production;     ///< samples of pods with priority >= production_priority

  int64_t spot_interruptions = 0;     ///< nodes that got an interruption notice
  /// GPU-hours of job work lost since the last checkpoint (a MIG device or time-sliced replica counts
  /// as its slice of a GPU: Workloads::gpu_milli_s)
  double lost_gpu_hours = 0;
  int64_t evictions = 0;              ///< pods stopped by spot notices, moved by scale-down or restarted by consolidation
  int64_t pods_completed = 0, pods_running = 0, pods_pending = 0, pods_failed = 0;
  int64_t pods_removed = 0;           ///< pods of service replicas removed by a scale-down
  int64_t nodes_scaled_up = 0;        ///< nodes requested by the autoscaler
  int64_t nodes_scaled_down = 0;      ///< nodes removed by the autoscaler's scale-down
  /// Cluster Autoscaler scale-ups that failed: a launch the cloud refused, or a node given up at
  /// max_node_provision_s (each puts its node group in backoff).
  int64_t failed_scale_ups = 0;
  int64_t launch_failures = 0;        ///< launches the cloud refused (capacity outages), any provisioner
  int64_t karpenter_nodes_launched = 0;  ///< nodes requested by Karpenter's provisioner
  std::vector<NodeClaimRecord> node_claims;  ///< Karpenter's, in request order
  /// Whether the run had Karpenter NodePools or a fault schedule: the outputs then show the
  /// provisioning figures and pending lists below (other runs' outputs stay as they were).
  bool provisioning_report = false;
  /// Pending units at the horizon, in queue order, with their reasons.
  std::vector<PendingPod> pending_at_horizon;
  /// The first time the most pods were pending (-1: never any), how many, and the units then.
  double pending_peak_s = -1;
  int64_t pending_peak_pods = 0;
  std::vector<PendingPod> pending_at_peak;
  int64_t nodes_consolidated = 0;     ///< nodes removed by consolidation (empty or emptied)
  /// Pods consolidation stopped and started again elsewhere: the pods of the removed nodes plus the
  /// other pods of their gang jobs.
  int64_t consolidation_restarts = 0;
  int64_t consolidation_moved_pods = 0;      ///< pods that were on the nodes consolidation emptied
  double consolidation_lost_gpu_hours = 0;   ///< the part of lost_gpu_hours due to consolidation

  /// Checkpoints that cost something: any job with a checkpoint cost or checkpoint-on-notice (else
  /// false, and none of these is output).
  bool checkpoint_costs = false;
  double checkpoint_s = 0;               ///< seconds jobs spent writing checkpoints (each job's time once)
  double checkpoint_gpu_hours = 0;       ///< GPU-hours jobs held while writing checkpoints
  std::vector<CheckpointJobResult> checkpoint_jobs;  ///< those jobs, input order
  std::vector<DriverUpgradeResult> driver_upgrades;  ///< ClusterConfig::faults.upgrades order

  std::vector<UnitOutcome> units;     ///< input order; a service's replicas in replica order
  std::vector<NodeLifetime> nodes;    ///< every billing segment, in order of closing (live nodes' last)
  std::vector<TimeseriesRow> timeseries;
  std::vector<TraceEntry> trace;      ///< SimOptions::trace only (sim/engine/event_loop.h)
  std::vector<InferenceServiceResult> inference;  ///< Workload::inference order
  /// Kueue (Workload::queues): "quota" or "placement" admission; empty without queues.
  std::string admission;
  std::vector<QueueResult> queues;     ///< ClusterQueues in input order
  std::vector<QueueEvent> queue_events;  ///< in time order; Pending only when the reason changes
  /// Topology (Workload::topology): job starts, those whose pods span several domains of a level
  /// with a slowdown, and the GPU-hours the slowdown added.
  size_t topology_levels = 0;          ///< Workload::topology.levels (0: none, no topology output)
  int64_t job_starts = 0;
  int64_t split_job_starts = 0;
  double topology_slowdown_gpu_hours = 0;
  /// A fault schedule was given (ClusterConfig::faults non-empty): `faults` and `alerts` are
  /// written by the run and shown by the outputs; false: both empty and not shown.
  bool faults_enabled = false;
  FaultCounts faults;
  std::vector<Alert> alerts;           ///< in time order (equal times: in the order fired)
};

/// Runs the simulation. Throws UsageError for an unknown policy, std::invalid_argument for an
/// invalid pool, settings or workload item (validate_pool, validate_pool_settings,
/// validate_autoscaler_settings, validate_consolidation_settings, validate_spec), duplicate item
/// names, or a non-positive horizon.
SimResult simulate(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options);

}  // namespace gpufleet::sim
