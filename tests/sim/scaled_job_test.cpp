// KEDA ScaledJobs in the simulator (sim/controllers/scaled_job.h): scenario S23 (a queue-driven job
// scaler while GPU nodes boot; kedacore/keda#6157, #1323, #7329), the three strategies with jobs
// already running, and the workload reader's scaledJobs section. Expected values by hand in the
// comments.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "model/resources.h"
#include "readers/sim/workload_file.h"
#include "report/scaled_job_output.h"
#include "report/sim_output.h"
#include "sim/simulator.h"
#include "util/input_error.h"

namespace gpufleet::sim {
namespace {

using replica_autoscaling::ScaledJobStrategy;

// A GPU pool at 0 nodes (up to 10), one L4 per node, a new node Ready 4 min after its launch.
ClusterConfig gpu_pool_at_zero() {
  SimPool p;
  p.pool.name = "gpu";
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = 1;
  p.pool.cpu_milli = 16000;
  p.pool.memory_bytes = 64 * 1024 * kBytesPerMib;
  p.pool.node_count = p.pool.min_nodes = 0;
  p.pool.max_nodes = 10;
  p.pool.on_demand_usd_per_hour = 1;
  p.settings.provision_s = 240;
  ClusterConfig c;
  c.pools = {p};
  c.autoscaler.enabled = true;
  return c;
}

// ScaledJob "q": 1 GPU per job, 1 message per job, poll 30 s, max 10, `arrivals` on the queue.
Workload scaled_job_workload(ScaledJobStrategy strategy, std::vector<QueueArrival> arrivals, double duration_s, double horizon_s) {
  WorkloadSpec t;
  t.name = "q";
  t.num_gpu = 1;
  t.gpu_milli = 1000;
  t.duration_s = duration_s;
  t.on_demand = true;
  ScaledJobSpec sj;
  sj.name = "q";
  sj.polling_interval_s = 30;
  sj.max_replica_count = 10;
  sj.strategy = strategy;
  sj.target_value = 1;
  sj.arrivals = std::move(arrivals);
  Workload w;
  w.horizon_s = horizon_s;
  w.items = {t};
  w.scaled_jobs = {sj};
  return w;
}

SimResult run(const Workload& w) {
  SimOptions o;
  o.seed = 1;
  return simulate(gpu_pool_at_zero(), w, o);
}

double first_start_s(const SimResult& r) {
  double first = -1;
  for (const auto& [t, n] : r.scaled_jobs.at(0).queue)
    if (n < 3 && first < 0) first = t;
  return first;
}

// S23: t=0 the queue has 3 messages. The first poll creates 3 jobs; their pods wait for new nodes
// (Ready at about 4 min); every later poll sees 3 messages and 3 pending jobs: 3 + 3 <= 10, so the
// accurate strategy creates 3 - 3 = 0. When the pods start they take the 3 messages: the queue is 0.
TEST(ScaledJobSim, S23AccurateCreatesNoDuplicatesWhileNodesBoot) {
  const SimResult r = run(scaled_job_workload(ScaledJobStrategy::kAccurate, {{0, 3}}, 600, 1200));
  ASSERT_EQ(r.scaled_jobs.size(), 1u);
  const ScaledJobResult& s = r.scaled_jobs[0];
  EXPECT_EQ(s.strategy, "accurate");
  ASSERT_EQ(s.polls.size(), 41u);  // t = 0, 30, ..., 1200
  EXPECT_EQ(s.polls[0].created, 3);
  EXPECT_DOUBLE_EQ(s.polls[0].queue_length, 3);
  const double started = first_start_s(r);
  EXPECT_GE(started, 240);  // the nodes' boot time
  EXPECT_LT(started, 300);
  for (size_t i = 1; i < s.polls.size(); ++i) {
    EXPECT_EQ(s.polls[i].created, 0) << "poll at " << s.polls[i].time_s;
    if (s.polls[i].time_s > started + 600) {  // the jobs completed (600 s each): they count nowhere
      EXPECT_EQ(s.polls[i].running, 0) << s.polls[i].time_s;
      continue;
    }
    if (s.polls[i].time_s < started + 600) EXPECT_EQ(s.polls[i].running, 3) << s.polls[i].time_s;
    if (s.polls[i].time_s <= started) {  // a poll at the start's time runs before it
      EXPECT_EQ(s.polls[i].pending, 3) << s.polls[i].time_s;
      EXPECT_DOUBLE_EQ(s.polls[i].queue_length, 3);
    } else {
      EXPECT_EQ(s.polls[i].pending, 0) << s.polls[i].time_s;
      EXPECT_DOUBLE_EQ(s.polls[i].queue_length, 0) << s.polls[i].time_s;
    }
  }
  EXPECT_EQ(s.jobs_created, 3);
  EXPECT_DOUBLE_EQ(s.messages_taken, 3);
  EXPECT_DOUBLE_EQ(s.queue_at_end, 0);
  // The time series (one row a minute): 3 messages until the pods start, then 0.
  ASSERT_EQ(s.queue_at_rows.size(), r.timeseries.size());
  for (size_t i = 0; i < r.timeseries.size(); ++i)
    EXPECT_DOUBLE_EQ(s.queue_at_rows[i], r.timeseries[i].time_s < started ? 3 : 0) << r.timeseries[i].time_s;
  EXPECT_EQ(s.jobs_succeeded, 3);  // started before 300, 600 s each: done before 1200
  EXPECT_EQ(s.succeeded_kept, 3);
  EXPECT_EQ(s.jobs_deleted, 0);
  int completed = 0;
  for (const UnitOutcome& u : r.units)
    if (u.name == "q-0" || u.name == "q-1" || u.name == "q-2") completed += u.state == UnitState::kCompleted;
  EXPECT_EQ(completed, 3);
}

// The same with KEDA's default strategy: effective = maxScale - running, where running counts every
// unfinished job, pending ones included: 3 - 0 = 3 at the first poll, then 3 - 3 = 0 while they wait
// and 0 - 3 < 0 (nothing; the queue is empty, the trigger inactive) once they run. 3 jobs in all.
TEST(ScaledJobSim, S23DefaultStrategy) {
  const SimResult r = run(scaled_job_workload(ScaledJobStrategy::kDefault, {{0, 3}}, 600, 1200));
  const ScaledJobResult& s = r.scaled_jobs.at(0);
  EXPECT_EQ(s.strategy, "default");
  EXPECT_EQ(s.polls.at(0).created, 3);
  for (size_t i = 1; i < s.polls.size(); ++i) EXPECT_EQ(s.polls[i].created, 0) << s.polls[i].time_s;
  EXPECT_EQ(s.jobs_created, 3);
  EXPECT_DOUBLE_EQ(s.queue_at_end, 0);
}

// The outputs: the summary line, the JSON's per-poll counts, the CSV's queue column.
TEST(ScaledJobSim, Outputs) {
  const SimResult r = run(scaled_job_workload(ScaledJobStrategy::kAccurate, {{0, 3}}, 600, 1200));
  EXPECT_EQ(io::scaled_jobs_summary_text(r),
            "scaled job q (accurate): 3 jobs created over 41 polls (per poll: 3 0 x40); 3 succeeded, 0 failed; queue: 3 messages "
            "arrived, 3 taken, 0 left\n");
  const nlohmann::ordered_json j = io::scaled_jobs_json(r);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["jobs_created"], 3);
  EXPECT_EQ(j[0]["created_per_poll"].size(), 41u);
  EXPECT_EQ(j[0]["created_per_poll"][0], 3);
  EXPECT_EQ(j[0]["polls"][1]["pending"], 3);
  const std::string csv = io::sim_timeseries_csv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "time_s,nodes_gpu,gpus_allocated,gpus_billed,pending_pods,cost_usd_per_hour,queue_q");
  EXPECT_NE(io::sim_result_json(r).find("\"scaled_jobs\""), std::string::npos);
}

// KEDA's eager strategy counts a pending job twice (running counts every unfinished job, pending
// ones included): at 30 s, min(10 - 3 - 3, 3) = 3 more jobs while the first 3 wait for their nodes;
// at 60 s min(10 - 6 - 6, 3) < 0: none. 6 jobs for 3 messages; the last 3 find the queue empty.
TEST(ScaledJobSim, S23EagerCreatesDuplicatesWhilePending) {
  const SimResult r = run(scaled_job_workload(ScaledJobStrategy::kEager, {{0, 3}}, 600, 1200));
  const ScaledJobResult& s = r.scaled_jobs.at(0);
  EXPECT_EQ(s.polls.at(0).created, 3);
  EXPECT_EQ(s.polls.at(1).created, 3);
  EXPECT_EQ(s.polls.at(1).pending, 3);
  for (size_t i = 2; i < s.polls.size(); ++i) EXPECT_EQ(s.polls[i].created, 0) << s.polls[i].time_s;
  EXPECT_EQ(s.jobs_created, 6);
  EXPECT_DOUBLE_EQ(s.messages_taken, 3);
}

// 3 messages at 0 (jobs of 1000 s, running from about 270 s), 3 more at 400 s; the first poll after
// them is at 420 s.
//   default:  0 s: 3; then 3 - 3 = 0; at 420 s maxScale 3 - running 3 = 0, and 0 until the horizon
//             (the first jobs still run): 3 jobs in all.
//   accurate: 0 s: 3; then 3 - 3 pending = 0; at 420 s 3 + 3 <= 10: 3 - 0 pending = 3; then 3 - 3 = 0:
//             6 jobs.
//   eager:    0 s: 3; 30 s: min(10 - 3 - 3, 3) = 3 (above); at 420 s running 6, pending 0:
//             min(10 - 6 - 0, 3) = 3; at 450 s min(10 - 9 - 3, 3) < 0: 0. 9 jobs.
TEST(ScaledJobSim, StrategiesWithRunningJobs) {
  const std::vector<QueueArrival> arrivals = {{0, 3}, {400, 3}};
  const auto created = [&](ScaledJobStrategy s) { return run(scaled_job_workload(s, arrivals, 1000, 1000)).scaled_jobs.at(0); };
  const ScaledJobResult d = created(ScaledJobStrategy::kDefault);
  const ScaledJobResult a = created(ScaledJobStrategy::kAccurate);
  const ScaledJobResult e = created(ScaledJobStrategy::kEager);
  EXPECT_EQ(d.jobs_created, 3);
  EXPECT_EQ(a.jobs_created, 6);
  EXPECT_EQ(e.jobs_created, 9);
  const auto at = [](const ScaledJobResult& r, double t) {
    for (const ScaledJobPoll& p : r.polls)
      if (p.time_s == t) return p.created;
    return int64_t{-1};
  };
  EXPECT_EQ(at(d, 420), 0);
  EXPECT_EQ(at(a, 420), 3);
  EXPECT_EQ(at(a, 450), 0);
  EXPECT_EQ(at(e, 30), 3);
  EXPECT_EQ(at(e, 420), 3);
  EXPECT_EQ(at(e, 450), 0);
  EXPECT_DOUBLE_EQ(d.messages_taken, 3);
  EXPECT_DOUBLE_EQ(a.messages_taken, 6);
  EXPECT_DOUBLE_EQ(e.messages_taken, 6);  // 3 of the 9 jobs find the queue empty
}

// A constant arrival rate: 0.1 message/s over 600 s = 60 messages, jobs of 60 s on nodes up to 10.
TEST(ScaledJobSim, ConstantArrivals) {
  Workload w = scaled_job_workload(ScaledJobStrategy::kAccurate, {}, 60, 600);
  w.scaled_jobs[0].arrivals_per_second = 0.1;
  const ScaledJobResult s = run(w).scaled_jobs.at(0);
  EXPECT_DOUBLE_EQ(s.messages_arrived, 60);
  EXPECT_GT(s.jobs_created, 0);
  EXPECT_LE(s.messages_taken, s.messages_arrived);
  for (const ScaledJobPoll& p : s.polls) EXPECT_LE(p.running, 10);
}

// ---- reader ----

const std::string kHead = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nscaledJobs:\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScaledJobReader, FieldsAndDefaults) {
  const io::SimWorkloadFile f = io::parse_sim_workload_text(
      kHead +
          "- name: q\n"
          "  namespace: batch\n"
          "  maxReplicaCount: 10\n"
          "  scalingStrategy: {strategy: accurate, pendingPodConditions: [Ready, PodScheduled]}\n"
          "  jobTargetRef: {gpus: 1, durationSeconds: 600}\n"
          "  trigger: {queueLength: {arrivals: [{timeSeconds: 0, value: 3}]}}\n"
          "  rollout: {strategy: gradual}\n",
          "w.yaml", {});
  ASSERT_EQ(f.workload.scaled_jobs.size(), 1u);
  const ScaledJobSpec& s = f.workload.scaled_jobs[0];
  EXPECT_EQ(s.name, "q");
  EXPECT_DOUBLE_EQ(s.polling_interval_s, 30);
  EXPECT_EQ(s.max_replica_count, 10);
  EXPECT_EQ(s.min_replica_count, 0);
  EXPECT_EQ(s.successful_jobs_history_limit, 100);
  EXPECT_EQ(s.failed_jobs_history_limit, 100);
  EXPECT_EQ(s.strategy, ScaledJobStrategy::kAccurate);
  EXPECT_EQ(s.pending_pod_conditions.size(), 2u);
  EXPECT_DOUBLE_EQ(s.target_value, 1);
  ASSERT_EQ(s.arrivals.size(), 1u);
  EXPECT_DOUBLE_EQ(s.arrivals[0].messages, 3);
  ASSERT_EQ(f.workload.items.size(), 1u);
  const WorkloadSpec& t = f.workload.items[0];
  EXPECT_TRUE(t.on_demand);
  EXPECT_EQ(t.name, "q");
  EXPECT_EQ(t.namespace_name, "batch");
  EXPECT_EQ(t.num_gpu, 1);
  EXPECT_DOUBLE_EQ(t.duration_s, 600);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "w.yaml:11:12: field 'scaledJobs[0].rollout': not modelled, ignored");
  // Defaults: strategy default, maxReplicaCount 100, pollingInterval 30.
  const io::SimWorkloadFile g = io::parse_sim_workload_text(
      kHead + "- {name: q, jobTargetRef: {durationSeconds: 1}, trigger: {queueLength: {arrivalsPerSecond: 1}}}\n", "w.yaml", {});
  EXPECT_EQ(g.workload.scaled_jobs[0].strategy, ScaledJobStrategy::kDefault);
  EXPECT_EQ(g.workload.scaled_jobs[0].max_replica_count, 100);
  EXPECT_TRUE(g.warnings.empty());
}

TEST(ScaledJobReader, Errors) {
  const auto err = [](const std::string& body) { return error_of([&] { io::parse_sim_workload_text(kHead + body, "w.yaml", {}); }); };
  const std::string trig = ", trigger: {queueLength: {arrivalsPerSecond: 1}}}\n";
  EXPECT_EQ(err("- {name: q, jobTargetRef: {durationSeconds: 1}, scalingStrategy: {strategy: custom}" + trig),
            "w.yaml:5:77: field 'scaledJobs[0].scalingStrategy.strategy': unknown strategy 'custom' (expected default, accurate, eager; "
            "custom is not modelled)");
  EXPECT_EQ(err("- {name: q, jobTargetRef: {durationSeconds: 1}, pollingInterval: 0" + trig),
            "w.yaml:5:66: field 'scaledJobs[0].pollingInterval': 0 is out of range [1, 86400]");
  EXPECT_NE(err("- {name: q, jobTargetRef: {gpus: 1}" + trig).find("field 'scaledJobs[0].jobTargetRef.durationSeconds'"), std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1, arrivalSeconds: 5}" + trig).find("scaledJobs[0].jobTargetRef.arrivalSeconds"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1}, trigger: {queueLength: {targetValue: 0, arrivalsPerSecond: 1}}}\n")
                .find("field 'scaledJobs[0].trigger.queueLength.targetValue': 0 must be positive"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1}, trigger: {queueLength: {}}}\n").find("the queue gets no messages"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1}, trigger: {queueLength: {arrivals: [{timeSeconds: 5, value: 1}, "
                "{timeSeconds: 1, value: 1}]}}}\n")
                .find("in time order"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1}, minReplicaCount: 5, maxReplicaCount: 2" + trig)
                .find("minReplicaCount 5 is above maxReplicaCount 2"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, jobTargetRef: {durationSeconds: 1}, scalingStrategy: {pendingPodConditions: [Bogus]}" + trig)
                .find("unknown pod condition 'Bogus'"),
            std::string::npos);
  EXPECT_NE(err("- {name: q, trigger: {queueLength: {arrivalsPerSecond: 1}}}\n").find("jobTargetRef (the job template) is required"),
            std::string::npos);
}

}  // namespace
}  // namespace gpufleet::sim
