// The workload over time: units and their pods from arrival to the horizon. A unit is what starts
// and stops as a whole: a job (a gang of `pods` pods, all placed or none) or one service replica
// (one pod). This module owns the units' states (sim/simulator.h UnitState), the pods' bindings,
// checkpointed work, and the operations the cluster's controllers need: start a pending unit (the
// pending queue's retry pass calls try_start), stop the units of an interrupted node, move pods off
// a node, restart units elsewhere, and change a service's replica count at run time (scale).
//
// Events it registers: "arrival" (a unit submitted; subject: the unit) and "completion" (a job's
// run ends; generation: the run, so that a run cut short leaves a stale event).
//
// Replica counts (ServiceScaler::scale). Adding replicas creates units with the next unused
// ordinals (<service>-<ordinal>, so that every outcome has its own name; a ReplicaSet likewise gives
// a new pod a new name); they arrive at t, through an "arrival" event, and queue like any pod.
// Removing takes the highest-ordinal replicas not yet removed (as a StatefulSet scales down): a
// running one is stopped and its pods released at t (chargeback ends, a retry pass is requested), a
// pending one leaves the queue (it adds no pending-time sample: it neither started nor is pending at
// the horizon), one not yet arrived never arrives; each ends in state "removed" (UnitOutcome::removed_s
// = t). A disruption budget's expected pods follow the replica count. FGD's typical pods
// (sched::select_typical_pods) stay those of the workload at the start.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/pod.h"
#include "queue/kueue_scheduler.h"
#include "sched/gpu/fragmentation.h"
#include "sim/engine/billing.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/fleet.h"
#include "sim/engine/pending_queue.h"
#include "sim/engine/placement.h"
#include "sim/results/sim_result.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {

class Metrics;

/// Hears service replicas start and stop: a replica's pod bound to a node (a start, a restart after
/// an eviction, or a move by scale-down or consolidation: a move is a stop then a start) and
/// unbound (stopped, evicted, moved or removed). Jobs' pods are not reported.
class ReplicaListener {
 public:
  virtual ~ReplicaListener() = default;
  /// The replica's pod was bound to node n at t. `item` indexes the workload's items, `unit` is
  /// the replica's unit (Units::Unit), `pod` its pod id.
  virtual void on_replica_bound(uint32_t item, uint32_t unit, uint32_t pod, NodeId n, double t) = 0;
  /// The replica's pod was unbound at t.
  virtual void on_replica_unbound(uint32_t item, uint32_t unit, uint32_t pod, double t) = 0;
  /// The bound replica became ready (passes its readiness probe) at t: at its binding, or, for an
  /// item whose readiness a controller reports (Units::gate_readiness), when it says so.
  virtual void on_replica_ready(uint32_t /*item*/, uint32_t /*unit*/, double /*t*/) {}
};

/// Changes a service's replica count at run time (see the top of this file). The narrow interface a
/// replica autoscaler (HPA, KEDA) gets.
class ServiceScaler {
 public:
  virtual ~ServiceScaler() = default;
  /// The service's replica count now (its pods at the start, until scaled).
  virtual int32_t replicas(std::string_view service) const = 0;
  /// Sets the replica count at t (seconds; the current event's time). Throws std::invalid_argument
  /// for a name that is not a service of the workload or a negative count.
  virtual void scale(std::string_view service, int32_t replicas, double t) = 0;
  /// Adds a listener of replica starts and stops (called in the order added).
  virtual void add_replica_listener(ReplicaListener& listener) = 0;
};

/// Hears jobs start running (every pod bound) and complete. Called for every job.
class JobListener {
 public:
  virtual ~JobListener() = default;
  virtual void on_job_started(uint32_t /*unit*/, double /*t*/) {}
  virtual void on_job_completed(uint32_t /*unit*/, double /*t*/) {}
};

/// Holds queued jobs until they are admitted (Kueue: sim/controllers/kueue_admission.h) and hears
/// their starts and ends. Only jobs with a WorkloadSpec::queue_name are offered to it.
class AdmissionGate {
 public:
  virtual ~AdmissionGate() = default;
  /// Job unit u arrived at t; true = the gate holds it (state kQueued) until Units::admit.
  virtual bool on_arrival(uint32_t u, double t) = 0;
  /// Every pod of job unit u is bound (Kueue's PodsReady) at t.
  virtual void on_started(uint32_t u, double t) = 0;
  /// Job unit u completed at t.
  virtual void on_completed(uint32_t u, double t) = 0;
};

class Units final : public UnitStarter, public ServiceScaler {
 public:
  struct Unit {
    uint32_t item = 0;                 ///< index into the workload's items
    int32_t replica = -1;              ///< service replica ordinal, -1 for a job
    uint32_t first_pod = 0;            ///< its pods are [first_pod, first_pod + pod_count)
    uint32_t pod_count = 0;
    uint32_t shape = 0;                ///< Placement::add_shape id
    UnitState state = UnitState::kWaiting;
    double pending_since_s = 0;
    double run_start_s = 0;
    double saved_s = 0;                ///< checkpointed work, seconds
    uint32_t run_generation = 0;
    int32_t starts = 0;
    int32_t interruptions = 0;
    int32_t consolidations = 0;
    double end_s = -1;                 ///< completed: completion time; removed: removal time
    /// Running time multiplier of the current run from the topology its pods span (>= 1;
    /// Workload::topology): work progresses at 1 / slowdown per second.
    double slowdown = 1;
    double checkpoint_s = 0;           ///< seconds spent writing checkpoints, all runs so far
  };

  /// The workload's pods by FGD shape (sched::PodShapeKey -> pod count), for Placement.
  static std::vector<std::pair<sched::PodShapeKey, double>> pod_mix(const Workload& workload);

  /// Makes every item's units and pods (validated items, unique names) and registers "arrival" and
  /// "completion" on `loop`; attaches itself to `pending` as its starter.
  Units(const Workload& workload, EventLoop& loop, Fleet& fleet, Placement& placement, Billing& billing,
            PendingQueue& pending, Metrics& metrics);
  /// Schedules the arrivals within the horizon, in time order (equal times: input order).
  void start();

  // ---- queries
  const WorkloadSpec& item(uint32_t i) const { return workload_.items[i]; }
  size_t item_count() const { return workload_.items.size(); }
  /// Units of item i in replica order (a job: its one unit; an on_demand job item: the jobs created
  /// so far, in creation order), removed replicas included.
  std::vector<uint32_t> units_of(uint32_t i) const;
  /// Calls f(unit id) for each unit of item i, in the order of units_of(i).
  template <class F>
  void for_each_unit_of(uint32_t i, F&& f) const {
    const WorkloadSpec& spec = workload_.items[i];
    const uint32_t first = item_first_unit_[i];
    const uint32_t count = spec.on_demand ? 0u : spec.kind == WorkloadKind::kJob ? 1u : static_cast<uint32_t>(spec.pods);
    for (uint32_t u = first; u < first + count; ++u) f(u);
    if (!scaled_.empty())
      if (auto it = scaled_.find(i); it != scaled_.end())
        for (uint32_t u : it->second.added_units) f(u);
  }
  const Unit& unit(uint32_t u) const { return units_[u]; }
  /// Units of every item, removed replicas included.
  size_t unit_count() const { return units_.size(); }
  /// Why unit u failed (state kFailed); "" for a unit that has not failed.
  const std::string& failure_reason(uint32_t u) const;
  const WorkloadSpec& spec(uint32_t u) const { return workload_.items[units_[u].item]; }
  /// A job's name, or <service>-<replica>.
  std::string unit_name(uint32_t u) const;
  /// Pod p's request. Made on first use and dropped when its job completes (a million-job run holds
  /// only the pods in play); the reference stays valid until then.
  const Pod& pod(uint32_t p) const;
  /// Units with a pod on node n, in binding order.
  std::vector<uint32_t> units_on(NodeId n) const;
  /// The pods as dry runs take them (Placement::dry_run_moves); all must be bound.
  std::vector<BoundPod> bound(std::span<const uint32_t> pods) const;
  /// Bound pods of the units, unit by unit in pod order.
  std::vector<uint32_t> bound_pods(std::span<const uint32_t> units) const;
  /// Whether stopping every bound pod of `units` at once keeps each item's disruption budget: per
  /// item, the pods stopped must not exceed disruptions_allowed (counted before any of them stops;
  /// kube's eviction API would refuse the evictions beyond it one by one), and no unit's item is
  /// do_not_disrupt (WorkloadSpec::do_not_disrupt). The one gate of every voluntary disruption.
  bool budgets_allow(std::span<const uint32_t> units) const;
  /// GPU-milli-seconds of job work a restart of running unit u at t would lose (the work since the
  /// last checkpoint, all its pods; gpu_milli_s); 0 for a service replica.
  double work_lost_if_restarted(uint32_t u, double t) const;
  /// GPU-milli-seconds of `seconds` of bound unit u's running work: 1000 x seconds x the GPUs its
  /// pods hold (sim/rules/cost.h pod_gpus_held on the pools of their nodes: a MIG device compute slices / 7,
  /// a time-sliced replica 1 / replicas, a fraction its share). Lost work (lost_gpu_hours) is counted
  /// with it.
  double gpu_milli_s(uint32_t u, double seconds) const;

  // ---- UnitStarter: the pending queue's retry pass
  /// Places the unit's pods one after another with the scheduler; if one does not fit, the ones
  /// placed are rolled back (nothing charged) and false is returned.
  bool try_start(uint32_t u, double t) override;

  // ---- jobs created during the run (WorkloadSpec::on_demand)
  /// Creates a job of on_demand job item `item` at t, named <item name>-<n> (n = 0, 1, ... per item);
  /// it arrives at t (as any job: its pods go pending, the scheduler places them). Returns its unit.
  /// Throws std::invalid_argument for an item that is not an on_demand job.
  uint32_t create_job(uint32_t item, double t);
  /// Adds a listener of job starts and completions (not owned; called in the order added).
  void add_job_listener(JobListener& listener) { job_listeners_.push_back(&listener); }

  // ---- admission (an AdmissionGate's side)
  /// The gate that holds queued jobs (not owned); set once before the run.
  void set_admission_gate(AdmissionGate& gate) { gate_ = &gate; }
  /// Queued unit u is admitted at t: it becomes pending (the retry pass places it). `injected` (the
  /// admitted ResourceFlavors' nodeLabels and tolerations, queue::flavor_injection) joins its pods'
  /// node selectors and tolerations, as Kueue injects them.
  void admit(uint32_t u, double t, queue::FlavorInjection injected);
  /// Queued unit u is admitted at t and started at once when all its pods fit now (true; nothing
  /// changes otherwise). Placement-aware admission's check.
  bool admit_and_start(uint32_t u, double t, queue::FlavorInjection injected);
  /// Takes admitted unit u back to kQueued at t (Kueue preempted or evicted it): a running job stops
  /// and keeps the work up to its last checkpoint (its pods count as evictions), a pending one leaves
  /// the pending queue.
  void suspend(uint32_t u, double t);
  /// GPU-hours that jobs' topology slowdown added (running time beyond what they needed at
  /// slowdown 1), over the run so far.
  double topology_slowdown_gpu_hours() const;
  /// Jobs started with pods spanning several domains of a topology level (at their last start).
  int64_t split_job_starts() const { return split_job_starts_; }
  int64_t job_starts() const { return job_starts_; }
  /// Pods of the units Kueue holds (state kQueued: not admitted yet, or preempted or evicted and
  /// waiting again). They wait as the pending queue's pods do, and their waits are pending-time
  /// samples too: the pending series (Metrics) counts both.
  int64_t queued_pods() const { return queued_pods_; }

  // ---- disruptions
  /// Node n was interrupted at t: every unit with a pod there stops (a job on every node: it keeps
  /// the work up to its last checkpoint) and is queued again. `notice_s`: seconds until the node goes
  /// away (a spot notice's window; 0 for a failure): a job with checkpoint_on_notice whose
  /// checkpoint_cost_s fits in it writes a checkpoint and keeps all its work.
  void evict_node(NodeId n, double t, double notice_s = 0);
  /// Evicts unit u at t (a drain: kube's eviction API, the budget already checked by the caller):
  /// a running job stops every pod and keeps the work up to its last checkpoint, a replica stops;
  /// either is queued again (an interruption). Returns the GPU-milli-seconds of job work lost. Not
  /// running: nothing happens, 0.
  double evict(uint32_t u, double t);
  /// GPU g of node n is lost at t (Fleet::withhold_gpu): every unit with a pod holding it (a whole
  /// GPU, a share, a replica or a MIG device of it) stops as evict_node stops them (no notice).
  void evict_gpu(NodeId n, int32_t g, double t);
  /// An application-level fault on GPU g of node n at t (an XID whose catalog effect is to restart
  /// the application, model/xid.h): every unit with a pod holding the GPU restarts in place (kubelet
  /// restarts the crashed container; the pods stay bound, nothing is rescheduled). A job loses the
  /// work since its last checkpoint (lost_gpu_hours) and runs again for the rest, on the same
  /// devices; a service replica loses nothing. Each counts a start and an interruption. Returns the
  /// units restarted.
  std::vector<uint32_t> restart_in_place(NodeId n, int32_t g, double t);
  /// Moves bound service pods to `placed` (Placement::dry_run_moves of the same pods), one by one;
  /// they lose nothing. Counts evictions and requests a retry pass.
  void move_pods(std::span<const uint32_t> pods, Placements placed, double t);
  /// Restarts `units` at t with their bound pods `pods` (bound_pods(units)) at `placed`: all off
  /// first, then all on. Jobs keep the work up to their last checkpoint and run again for the rest.
  /// Returns the GPU-milli-seconds each job lost, unit by unit (services: none).
  std::vector<double> restart(std::span<const uint32_t> units, std::span<const uint32_t> pods, Placements placed, double t);

  // ---- rollouts (sim/controllers/rolling_update.h)
  /// The service item whose name is `service`; nullopt for another name.
  std::optional<uint32_t> service_item(std::string_view service) const;
  /// Service item i's current pod-template revision: 0 until its first rollout.
  uint32_t revision(uint32_t i) const;
  /// A new pod template for service item i (a rollout): replicas created from now on, by scale or
  /// add_replica, get the returned next revision.
  uint32_t new_revision(uint32_t i);
  /// The revision replica unit u was created at.
  uint32_t unit_revision(uint32_t u) const;
  /// Creates one replica of service item i at the current revision, arriving at t (a rollout's
  /// surge or replacement pod); the wanted count (replicas) does not change. Returns its unit.
  uint32_t add_replica(uint32_t i, double t);
  /// Removes replica unit u at t as scale removes one (state kRemoved); the wanted count does not
  /// change. A unit already removed: nothing.
  void remove_replica(uint32_t u, double t);
  /// Service item i's replicas not removed, surge pods included (the Deployment's status.replicas).
  int32_t live_replicas(uint32_t i) const;
  /// The replicas of service item i become ready when mark_ready says (an inference replica at the
  /// end of its cold start), not at their binding. Set before the run.
  void gate_readiness(uint32_t i) { readiness_gated_.push_back(i); }
  /// Bound replica unit u of a gated item is ready at t: tells the replica listeners.
  void mark_ready(uint32_t u, double t);
  /// When replica unit u became ready (ReplicaListener::on_replica_ready); nullopt while it is not
  /// (not bound yet, starting, or unbound since).
  std::optional<double> ready_since(uint32_t u) const;
  /// Service item i's replicas ready now.
  int32_t ready_replicas(uint32_t i) const;

  // ---- ServiceScaler
  /// spec.replicas: the wanted count, surge pods of a rollout not included.
  int32_t replicas(std::string_view service) const override;
  void scale(std::string_view service, int32_t replicas, double t) override;
  void add_replica_listener(ReplicaListener& listener) override { replica_listeners_.push_back(&listener); }

  /// At the horizon: the outcome of every unit (workload order; a service's replicas in replica
  /// order; none with per_unit false, SimOptions::summary_only) and the pod counts per state; each
  /// pod still pending adds its wait so far to the metrics' pending-time samples (Metrics::finish
  /// then computes the statistics).
  void report_outcomes(SimResult& result, bool per_unit = true) const;
  /// Writes evictions and lost_gpu_hours.
  void report(SimResult& result) const;
  /// Writes the checkpoint results (SimResult::checkpoint_costs and what goes with it) when any job
  /// has a checkpoint cost or checkpoint-on-notice; `pool_interruptions_per_hour` is each pool's
  /// observed spot notices per node-hour, pool order.
  void report_checkpoints(SimResult& result, std::span<const double> pool_interruptions_per_hour) const;

 private:
  struct PodRecord {
    mutable std::unique_ptr<Pod> pod;  // null until first used (pod()) and once its job completed
    uint32_t unit = 0;
    NodeId node = sched::kNoNode;
  };
  // Services scale() or a rollout changed: their replica count, the units added and the current
  // pod-template revision.
  struct ScaledService {
    int32_t replicas = 0;
    int32_t next_ordinal = 0;
    std::vector<uint32_t> added_units;
    uint32_t revision = 0;
  };
  ScaledService& scaled_service(uint32_t item);
  uint32_t add_unit(uint32_t item, int32_t replica, uint32_t shape);
  void on_arrival(uint32_t u, double t);
  void on_completion(uint32_t u, uint32_t generation, double t);
  void bind(uint32_t p, NodeId n, DeviceAssignment devices, double t);
  void unbind(uint32_t p, double t);
  void stop_unit(uint32_t u, double t);
  void make_pending(uint32_t u, double t);
  // Every change of a unit's state goes through here (queued_pods_ follows kQueued).
  void set_state(uint32_t u, UnitState state);
  void interrupt(uint32_t u, double t, double notice_s);
  // Ends running job u's run at t: counts the work lost since its last checkpoint (none when it
  // writes one in a notice window of notice_s) and the time spent writing checkpoints, keeps the rest
  // in saved_s and makes its completion event stale. Returns the GPU-milli-seconds lost.
  double end_job_run(uint32_t u, double t, double notice_s);
  // Records the pools of the nodes job u's pods hold (run_pools_), for jobs with checkpoint costs.
  void note_run_pools(uint32_t u);
  void remove_unit(uint32_t u, double t);
  int32_t expected_pods(uint32_t item) const;
  PendingUnit pending_key(uint32_t u) const;
  // Units with a pod holding GPU g of node n (a whole GPU, a share, a replica or a MIG device of it).
  std::vector<uint32_t> units_holding_gpu(NodeId n, int32_t g) const;
  // Places unit u's pods (all or none) for the constraints `extra` adds to each pod (a topology
  // domain's node selector; empty = none).
  bool place_pods(uint32_t u, double t, const Labels& extra);
  // Places a job with a topology request: the domains of its level, best fit first (preferred: then
  // each level up, then anywhere).
  bool place_with_topology(uint32_t u, double t);
  // The slowdown of unit u's current placement (Workload::topology).
  double placement_slowdown(uint32_t u);
  // Counts the slowdown's extra GPU time of unit u's run from run_start_s to t.
  void end_run_segment(uint32_t u, double t);

  const Workload& workload_;
  EventLoop& loop_;
  Fleet& fleet_;
  Placement& placement_;
  Billing& billing_;
  PendingQueue& pending_;
  Metrics& metrics_;
  EventKind arrival_ = 0, completion_ = 0;

  std::vector<Unit> units_;
  std::vector<PodRecord> pods_;
  std::vector<uint32_t> item_first_unit_;    // an item's initial units are [first, first + count)
  std::vector<uint32_t> item_namespace_;     // Billing::namespace_id of each item
  std::unordered_map<std::string, uint32_t> services_;  // service name -> item
  std::unordered_map<uint32_t, ScaledService> scaled_;  // by item (on_demand job items too: added_units)
  std::unordered_map<uint32_t, uint32_t> unit_revision_;  // replica units created at a revision > 0
  std::vector<uint32_t> readiness_gated_;                 // service items whose readiness a controller reports
  std::unordered_map<uint32_t, double> ready_since_;      // replica units ready now -> since when
  std::unordered_map<uint32_t, uint32_t> template_shape_;  // on_demand job item -> shape
  std::unordered_map<uint32_t, int32_t> job_ordinal_;      // created job unit -> its n
  std::vector<JobListener*> job_listeners_;
  // Kept beside the units, not in them: few units have them, and every byte of Unit counts a
  // million times in a large run.
  // Pools of the distinct nodes a unit's pods held at its last start, by unit (jobs with a checkpoint
  // cost or checkpoint-on-notice only; for the advice on their interval).
  std::unordered_map<uint32_t, std::vector<uint32_t>> run_pools_;
  // What Kueue's admission added to a unit's pods (the flavors' nodeLabels and tolerations), by unit.
  std::unordered_map<uint32_t, queue::FlavorInjection> injected_;
  std::unordered_map<uint32_t, std::string> failure_reasons_;  // failed units: why, by unit
  // The last time a plain unit's first pod found no node, by shape (place_pods): the state then
  // (ClusterState::change_count) and the scheduler's message. While the state has not changed, a
  // retry of the shape fails the same way without a scheduling cycle (the cycle reads only the pod
  // and the state; when it fails it draws no random number and binds nothing).
  // The last message worded from counts alone (fit_error), with those counts.
  struct MessageMemo {
    bool valid = false;
    size_t live_nodes = 0;
    std::vector<int32_t> counts;  // NodeToStatus::counts
    std::string message;
  };
  struct FailedShape {
    bool known = false;
    uint64_t state_changes = 0;
    bool has_reason = false;
    std::string reason;
    MessageMemo message;
  };
  std::vector<FailedShape> failed_shapes_;
  // kube's FitError message for a failed cycle (sched::fit_error_message of its rejection
  // histogram). With a memo: when no rejection is worded per node, equal counts per reason and live
  // nodes give the memo's message without wording the nodes again.
  std::string fit_error(const sched::NodeToStatus& statuses, const Pod& request, MessageMemo* memo) const;
  int64_t evictions_ = 0;
  double lost_gpu_milli_s_ = 0;
  double checkpoint_gpu_milli_s_ = 0;
  std::vector<ReplicaListener*> replica_listeners_;
  AdmissionGate* gate_ = nullptr;
  double slowdown_gpu_milli_s_ = 0;
  int64_t split_job_starts_ = 0;
  int64_t job_starts_ = 0;
  int64_t queued_pods_ = 0;
};

}  // namespace gpufleet::sim
