// KueueAdmission: Kueue in the simulated control plane. Jobs with a queueName arrive suspended (as
// Kueue keeps a Job with spec.suspend until its Workload is admitted); a KueueScheduler
// (queue/kueue_scheduler.h) decides their admission over time, and this controller carries its
// decisions out on the cluster:
//  - Admitted: quota-only admission (Kueue's) makes the job's pods pending, for the scheduler to place
//    when it can (the Cluster Autoscaler sees them); placement-aware admission admits a job only when
//    all its pods can be bound now, and binds them in the same step (Units::admit_and_start).
//  - Preempted / Evicted (PodsReadyTimeout): the job stops, keeping the work up to its last checkpoint,
//    and waits in its queue again (after Kueue's requeue backoff for an eviction).
//  - A job whose pods all run is PodsReady; a finished job releases its quota.
// An admission pass (event "kueue-admission") runs at each arrival, completion, node ready and at
// Kueue's own deadlines (waitForPodsReady timeouts, backoff ends); several requests at one time run
// one pass.
//
// Outputs (SimResult::queues, queue_events): per ClusterQueue the workloads, admissions,
// preemptions and evictions, nvidia.com/gpu quota reserved and the part borrowed above nominal quota
// (GPU-hours), and the time from arrival to first admission.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "queue/kueue_scheduler.h"
#include "sim/controllers/controller.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

class KueueAdmission final : public Controller, public AdmissionGate, public NodeListener, private queue::PlacementCheck {
 public:
  /// `objects`: the workload's queues (validated; throws std::invalid_argument as KueueScheduler).
  KueueAdmission(const queue::KueueObjects& objects, const SimulationModules& modules);
  void start() override;
  void report(SimResult& result) const override;

  // AdmissionGate
  bool on_arrival(uint32_t u, double t) override;
  void on_started(uint32_t u, double t) override;
  void on_completed(uint32_t u, double t) override;
  // NodeListener: new capacity may admit a workload (placement-aware admission).
  void on_node_ready(NodeId n, double t) override;

 private:
  std::optional<std::string> check(queue::WorkloadId id, const queue::Workload& workload, const queue::Admission& admission) override;
  void request_pass(double t);
  void pass(double t);
  void record(const queue::WorkloadEvent& e);
  // Integrates the queues' GPU usage up to t.
  void advance_usage(double t);
  // Adds `sign` x the workload's nvidia.com/gpu usage of its admission to its queue.
  void charge(queue::WorkloadId id, int sign);

  SimulationModules m_;
  queue::KueueScheduler kueue_;
  bool placement_aware_ = false;
  EventKind pass_kind_ = 0;
  bool pass_due_ = false;
  double pass_at_ = -1;
  double wakeup_at_ = -1;  // the time of the scheduled wakeup pass, -1 for none
  double now_ = 0;
  bool in_schedule_ = false;                          // inside kueue_.schedule()
  std::vector<queue::WorkloadId> started_in_schedule_;  // started by check(), PodsReady after it
  std::unordered_map<uint32_t, queue::WorkloadId> workload_of_unit_;
  std::vector<uint32_t> unit_of_workload_;
  std::vector<double> arrival_s_;
  std::vector<int8_t> ever_admitted_;
  std::vector<double> waits_;  // per workload: first admission - arrival, -1 before

  struct QueueAccount {
    std::string name;
    std::string cohort;
    std::unordered_map<std::string, int64_t> nominal_gpu_milli;  // by flavor
    std::unordered_map<std::string, int64_t> used_gpu_milli;     // by flavor, now
    double gpu_milli_s = 0;
    double borrowed_gpu_milli_s = 0;
    QueueResult result;
  };
  std::vector<QueueAccount> queues_;
  // Adds `dt` seconds of each queue's current GPU usage (and the part above nominal) to its totals.
  static void integrate_usage(std::vector<QueueAccount>& queues, double dt);
  struct Charge {
    size_t queue = 0;
    std::vector<std::pair<std::string, int64_t>> gpu_milli;  // (flavor, nvidia.com/gpu) held now
  };
  std::vector<Charge> charged_;  // per workload
  std::unordered_map<std::string, size_t> queue_index_;
  double usage_at_ = 0;
  std::vector<QueueEvent> events_;
  std::vector<std::string> last_pending_;  // per workload: the last Pending message recorded
};

}  // namespace gpufleet::sim
