// What a simulation returns (sim/simulator.h simulate()): costs, allocation, pending times, outcomes
// of every unit, node billing segments, the time series, and the figures of the optional parts
// (Karpenter, faults, checkpoints, driver upgrades, Kueue queues, topology, inference services).
// Plain data; the writers (report/) format it. Units are in the names: seconds, USD, GPU-hours.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "queue/kueue_scheduler.h"
#include "sim/results/inference_result.h"
#include "sim/results/trace.h"

namespace gpufleet::sim {

/// Pending-time percentiles (nearest rank) over a set of samples, seconds; nullopt without samples.
struct PendingStats {
  size_t samples = 0;
  std::optional<double> p50, p95, p99;
};

/// One poll of a KEDA ScaledJob (sim/controllers/scaled_job.h): what it read and what it created.
struct ScaledJobPoll {
  double time_s = 0;
  double queue_length = 0;   ///< messages on the queue at the poll
  int64_t running = 0;       ///< jobs not finished (pending ones included), as KEDA counts them
  int64_t pending = 0;       ///< of those, jobs whose pod is not running yet
  int64_t created = 0;       ///< jobs created at this poll
};

/// One KEDA ScaledJob over the run (Workload::scaled_jobs).
struct ScaledJobResult {
  std::string name;
  std::string strategy;                 ///< "default", "accurate", "eager"
  int64_t jobs_created = 0;
  int64_t jobs_succeeded = 0;           ///< completed by the horizon
  int64_t jobs_failed = 0;              ///< could never run (no pool can hold the pod)
  int64_t succeeded_kept = 0;           ///< min(succeeded, successfulJobsHistoryLimit): Jobs left
  int64_t failed_kept = 0;              ///< min(failed, failedJobsHistoryLimit)
  int64_t jobs_deleted = 0;             ///< finished Jobs removed by the history limits
  double messages_arrived = 0;          ///< up to the horizon
  double messages_taken = 0;            ///< by jobs whose pods started
  double queue_at_end = 0;
  std::vector<ScaledJobPoll> polls;
  /// (time_s, messages): the queue length at each poll and after each job took its messages.
  std::vector<std::pair<double, double>> queue;
  /// The queue length at each SimResult::timeseries row's time (after every event up to it).
  std::vector<double> queue_at_rows;
};

/// One rollout over the run (Workload::rollouts; sim/controllers/rolling_update.h).
struct RolloutResult {
  std::string service;
  uint32_t revision = 0;          ///< the pod-template revision it rolls out (1 for the first)
  double started_s = 0;
  /// When every wanted replica is of the new revision and available and no old one is left; -1 =
  /// not by the horizon (or superseded).
  double completed_s = -1;
  double superseded_s = -1;       ///< a later rollout of the service started before it completed; -1 = not
  int32_t max_surge = 0;          ///< resolved at its start (resolve_fenceposts)
  int32_t max_unavailable = 0;
  int32_t replicas_created = 0;   ///< new-revision replicas it created
  int32_t replicas_removed = 0;   ///< old-revision replicas it removed
  int32_t max_pods = 0;           ///< the most replicas existing at once while it ran (status.replicas)
  int32_t min_available = 0;      ///< the fewest available replicas while it ran
};

/// The evaluations of one service autoscaler (Workload::service_autoscalers).
struct ServiceScalingResult {
  struct Evaluation {
    double time_s = 0;
    int32_t spec_replicas = 0;    ///< what it read: the wanted count
    int32_t status_replicas = 0;  ///< the replicas that existed (surge pods of a rollout included)
    int32_t ready = 0;
    int32_t desired = 0;          ///< what it set
  };
  std::string service;
  std::string autoscaler;         ///< ServiceAutoscalerSpec::description
  std::vector<Evaluation> evaluations;
  int32_t min_desired = 0;        ///< over the evaluations (0 when there were none)
  int32_t max_desired = 0;
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
/// cover it (sim/rules/cost.h), to its removal, the horizon, or that moment. A node's life is one or two
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
  /// Pods waiting for capacity: in the pending queue, or held by Kueue (not admitted, or preempted
  /// or evicted and waiting again): the pods whose waits are the pending-time samples.
  int64_t pending_pods = 0;
  /// The most pods waiting at any moment of [time_s, time_s + the sample interval), counting the
  /// state after all events at one time (sim/engine/metrics.h): a chart of it reaches
  /// SimResult::pending_peak_pods.
  int64_t pending_pods_peak = 0;
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
/// taken away by a scale-down, sim/engine/units.h), "queued" (a job Kueue holds: not admitted, or
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
/// sim/rules/checkpointing.h, docs/checkpoints-and-upgrades.md).
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
  double young_interval_s = 0;        ///< sim/rules/checkpointing.h young_interval_s(cost, mtbi); 0 without
  double daly_interval_s = 0;         ///< daly_interval_s(cost, mtbi): the recommended interval; 0 without
};

/// One rolling driver upgrade (inputs/sim/faults.h DriverUpgrade; sim/controllers/driver_upgrade.h).
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

/// Nodes removed over the run by cause (sim/engine/fleet.h Fleet::remove): every removal counts
/// once, whichever controller made it. A launch the cloud refused is not a removal (the node never
/// existed: SimResult::launch_failures).
struct NodeRemovals {
  int64_t scale_down = 0;         ///< the Cluster Autoscaler's scale-down (empty nodes, or emptied by moving pods)
  int64_t consolidation = 0;      ///< consolidation (Karpenter's, or the Autoscaling document's), empty or emptied
  int64_t spot_reclaim = 0;       ///< spot nodes reclaimed at the end of their interruption notice
  /// Nodes the Cluster Autoscaler gave up: not Ready with their GPUs by max_node_provision_s.
  int64_t not_ready_in_time = 0;
  int64_t other = 0;              ///< by a controller added to the run (Simulation::add_controller)
  int64_t total() const { return scale_down + consolidation + spot_reclaim + not_ready_in_time + other; }
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
  /// The two integrals behind it: GPU-hours requested by bound pods (shared GPUs count their
  /// fraction) and GPU-hours of the billed nodes, over [0, horizon_s].
  double gpu_allocated_hours = 0;
  double gpu_billed_hours = 0;
  /// Seconds each pod waited, one sample per start (from arrival or requeue) plus one per pod still
  /// pending at the horizon (its wait so far).
  PendingStats pending;
  std::map<int32_t, PendingStats> pending_by_priority;
  int32_t production_priority = 1000;  ///< SimOptions::production_priority
  PendingStats pending_production;     ///< samples of pods with priority >= production_priority

  int64_t spot_interruptions = 0;     ///< nodes that got an interruption notice
  /// GPU-hours of job work lost since the last checkpoint (a MIG device or time-sliced replica counts
  /// as its slice of a GPU: Units::gpu_milli_s)
  double lost_gpu_hours = 0;
  int64_t evictions = 0;              ///< pods stopped by spot notices, moved by scale-down or restarted by consolidation
  int64_t pods_completed = 0, pods_running = 0, pods_pending = 0, pods_failed = 0;
  int64_t pods_removed = 0;           ///< pods of service replicas removed by a scale-down
  /// Dynamic Resource Allocation (docs/dra.md "simulate"): whether the cluster had DRA objects (the
  /// outputs then show the claims line); ResourceClaims allocated by binds (a gang rolled back counts
  /// its allocations too) and deallocated when their last pod went (a template's claim is then
  /// deleted); claims allocated at the horizon (shared claims allocated in the input included).
  bool dra_report = false;
  int64_t dra_claims_allocated = 0, dra_claims_deallocated = 0, dra_claims_allocated_at_end = 0;
  int64_t nodes_scaled_up = 0;        ///< nodes requested by the autoscaler
  int64_t nodes_scaled_down = 0;      ///< nodes removed by the autoscaler's scale-down (= nodes_removed.scale_down)
  NodeRemovals nodes_removed;         ///< every node removal, by cause (nodes_consolidated among them)
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
  /// The first time the most pods were pending (-1: never any), how many, and the units then: the
  /// largest TimeseriesRow::pending_pods_peak, with the pods Kueue holds (the time series' count).
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
  /// Events the event loop ran (sim/engine/event_loop.h events_run): the measure the work budget's
  /// event estimate bounds (inputs/sim/work_estimate.h). Not in the outputs.
  uint64_t events_processed = 0;
  std::vector<InferenceServiceResult> inference;  ///< Workload::inference order
  /// Kueue (Workload::queues): "quota" or "placement" admission; empty without queues.
  std::string admission;
  std::vector<QueueResult> queues;     ///< ClusterQueues in input order
  std::vector<QueueEvent> queue_events;  ///< in time order; Pending only when the reason changes
  std::vector<ScaledJobResult> scaled_jobs;  ///< KEDA ScaledJobs (Workload::scaled_jobs), input order
  std::vector<RolloutResult> rollouts;       ///< Workload::rollouts, in start order
  std::vector<ServiceScalingResult> service_scaling;  ///< Workload::service_autoscalers, input order
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

}  // namespace gpufleet::sim
