// The pending queue: units (a job's gang, or one service replica) waiting for capacity, in the order
// they are tried: higher priority first, then pending longer, then unit id (submission order). It
// owns the retry pass: a "retry" event (not traced) at the time of any change that may free
// capacity runs once however many changes asked for it; the pass tries every pending unit in order
// through the UnitStarter, and a unit whose shape (Placement::add_shape) already failed in the pass
// is not tried (allocations in a pass only take capacity).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/event_loop.h"

namespace gpufleet::sim {

/// Starts a pending unit: places all its pods or none. Implemented by the workloads.
class UnitStarter {
 public:
  virtual ~UnitStarter() = default;
  /// Tries to start unit u at t; true if all its pods were bound (the starter then takes it off the
  /// queue with PendingQueue::remove).
  virtual bool try_start(uint32_t u, double t) = 0;
};

/// One pending unit.
struct PendingUnit {
  int32_t priority = 0;
  double since_s = 0;      ///< pending since (arrival or requeue)
  uint32_t unit = 0;
  uint32_t shape = 0;      ///< units with equal shapes are interchangeable for placement
  /// Queue order: priority descending, then since_s, then unit.
  bool operator<(const PendingUnit& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (since_s != o.since_s) return since_s < o.since_s;
    return unit < o.unit;
  }
};

class PendingQueue {
 public:
  /// Registers the "retry" event on `loop`.
  explicit PendingQueue(EventLoop& loop);
  PendingQueue(const PendingQueue&) = delete;
  PendingQueue& operator=(const PendingQueue&) = delete;

  /// The starter the retry pass calls (not owned); set once before the run.
  void set_starter(UnitStarter& starter) { starter_ = &starter; }

  /// Queues a unit of `pods` pods.
  void add(const PendingUnit& unit, int32_t pods);
  /// Takes a queued unit off (the same fields as added).
  void remove(const PendingUnit& unit, int32_t pods);

  /// Pending units in queue order.
  const std::set<PendingUnit>& units() const { return queue_; }
  /// Pods of the pending units.
  int64_t pods() const { return pods_; }

  /// Schedules a retry pass at t unless one is already due.
  void request_retry(double t);
  /// Whether a retry pass is scheduled and has not run yet.
  bool retry_due() const { return retry_queued_; }
  /// Runs the pass now; a retry event already scheduled still runs its own pass.
  void retry(double t);

  // ---- why units wait: the one place both provisioners (the Cluster Autoscaler, Karpenter) and the
  // scheduler write to; SimResult's pending lists read it (sim/simulator.h PendingPod).
  /// What a provisioner last said about pending unit u (e.g. "pool limit reached (NodePool gpu:
  /// cpu)", "no offering available", "max nodes reached", "node group in backoff"); "" clears it.
  void set_provisioning_reason(uint32_t unit, std::string reason);
  /// The scheduler's message from unit u's last failed attempt ("0/N nodes are available: ...", or
  /// "no nodes available to schedule pods" on a cluster without nodes). A unit a retry pass skips,
  /// because a unit of its shape failed before it in the pass, gets that unit's message.
  void set_scheduling_reason(uint32_t unit, std::string reason);
  /// The provisioner's reason if any, else the scheduler's, else "".
  std::string reason(uint32_t unit) const;

 private:
  EventLoop& loop_;
  EventKind retry_kind_ = 0;
  UnitStarter* starter_ = nullptr;
  std::set<PendingUnit> queue_;
  int64_t pods_ = 0;
  uint32_t shape_limit_ = 0;  // 1 + the largest shape queued so far
  bool retry_queued_ = false;
  std::unordered_map<uint32_t, std::string> provisioning_reasons_;
  std::unordered_map<uint32_t, std::string> scheduling_reasons_;
};

}  // namespace gpufleet::sim
