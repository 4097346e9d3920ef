// ScaledJobs: KEDA ScaledJobs (keda.sh/v1alpha1) in the simulated control plane. Each ScaledJob
// (Workload::scaled_jobs) polls its queue-length trigger every pollingInterval from t = 0 (event
// "scaledjob-poll"), counts its Jobs as KEDA does and creates
// replica_autoscaling::scaled_job_decision(...).jobs_to_create new Jobs from its jobTargetRef (the
// on_demand job item of its name, Units::create_job). A created Job's pods go through the
// simulator's scheduling like any job: pending until a node holds them, the node autoscalers see
// them, a new node is Ready after its provisioning time.
//
// Upstream: kedacore/keda pkg/scaling/executor/scale_jobs.go (RequestJobScale, getRunningJobCount,
// getPendingJobCount, cleanUp with successfulJobsHistoryLimit / failedJobsHistoryLimit, default 100)
// and pkg/scaling/scaledjob/metrics.go (see replica_autoscaling/scaled_job.h for the formulas).
// KEDA's counts, as here:
//   running = Jobs not finished (neither Complete nor Failed): pending ones included;
//   pending = Jobs not finished none of whose pods is Running or Succeeded (without
//             pendingPodConditions), or whose pods have not all the conditions (with them). Here a
//             pod's conditions (PodScheduled, Initialized, ContainersReady, Ready) all hold exactly
//             while it runs, so both give: a job whose pods are not running is pending.
// The queue: messages arrive at the given times (and at a constant rate, as a fluid count); a job
// takes targetValue messages (as many as there are, if fewer) when its pods start running, as a
// worker takes its message once it runs. Jobs that finish are kept as counters (history limits: the
// Jobs KEDA keeps and deletes); they change nothing in the decision (finished Jobs count nowhere).
//
// Outputs (SimResult::scaled_jobs): per ScaledJob the jobs created at each poll, with the queue
// length, running and pending counts it read, the totals, and the queue length series (at the polls
// and takes, and at each time series row).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/controllers/controller.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

class ScaledJobs final : public Controller, public JobListener {
 public:
  /// Throws std::invalid_argument for a ScaledJob without an on_demand job item of its name, or
  /// settings out of range (the reader checks them with positions).
  ScaledJobs(const Workload& workload, const SimulationModules& modules);
  void start() override;
  void report(SimResult& result) const override;

  // JobListener
  void on_job_started(uint32_t unit, double t) override;
  void on_job_completed(uint32_t unit, double t) override;

 private:
  struct State {
    const ScaledJobSpec* spec = nullptr;
    uint32_t item = 0;
    std::vector<uint32_t> jobs;  // units created, in order
    double taken = 0;
    std::vector<std::pair<double, double>> taken_by;  // (time, messages taken up to it), at each take
    int64_t succeeded = 0;
    ScaledJobResult result;
  };
  void poll(size_t s, double t);
  double arrived(const State& st, double t) const;
  double queue_length(const State& st, double t) const { return std::max(0.0, arrived(st, t) - st.taken); }

  SimulationModules m_;
  EventKind poll_kind_ = 0;
  std::vector<State> states_;
  std::unordered_map<uint32_t, size_t> owner_;  // created unit -> ScaledJob
};

}  // namespace gpufleet::sim
