// KueueScheduler at the shape of Kueue's scheduler performance test (kubernetes-sigs/kueue
// test/performance/scheduler/configs/baseline/generator.yaml: 5 cohorts x 6 ClusterQueues, nominal
// 20 cpu, borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue LowerPriority; per
// ClusterQueue 350 small (1 cpu, 200 ms, priority 50, one every 100 ms), 100 medium (5 cpu, 500 ms,
// priority 100, every 500 ms), 50 large (20 cpu, 1 s, priority 200, every 1.2 s) = 15,000 workloads)
// and of its large-scale config (configs/large-scale/generator.yaml: 20 x 100 = 2,000 ClusterQueues,
// 20 small / 7 medium / 3 large each = 60,000). A simple event loop drives the scheduler: a workload's
// pods are ready at admission and it finishes runtime after it. Counters: simulated average
// time-to-admission per class (s), admitted workloads, preemptions, schedule() calls, max RSS.
//   build-bench/bench/gpufleet_bench --benchmark_filter=Kueue
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <queue>
#include <string>
#include <vector>

#include "queue/kueue_scheduler.h"

namespace {

using namespace gpufleet;
using namespace gpufleet::queue;

struct ClassSpec {
  const char* name;
  int count;
  double interval_s, runtime_s;
  int32_t priority;
  int64_t cpu;
};

struct Shape {
  int cohorts, queues;
  std::vector<ClassSpec> classes;
};

const Shape kBaseline{5, 6, {{"small", 350, 0.1, 0.2, 50, 1}, {"medium", 100, 0.5, 0.5, 100, 5}, {"large", 50, 1.2, 1.0, 200, 20}}};
const Shape kLargeScale{20, 100, {{"small", 20, 0.02, 0.05, 50, 1}, {"medium", 7, 0.05, 0.1, 100, 5}, {"large", 3, 0.2, 0.2, 200, 20}}};

void run(benchmark::State& state, const Shape& shape) {
  for (auto _ : state) {
    KueueObjects o;
    o.flavors.push_back({"default", {}, {}, {}, {}});
    struct Arrival {
      double t;
      Workload w;
      int cls;
      double runtime_s;
    };
    std::vector<Arrival> arrivals;
    for (int c = 0; c < shape.cohorts; ++c)
      for (int q = 0; q < shape.queues; ++q) {
        ClusterQueue cq;
        cq.name = "cohort-" + std::to_string(c) + "-cq-" + std::to_string(q);
        cq.cohort = "cohort-" + std::to_string(c);
        ResourceGroup g;
        g.covered_resources = {"cpu"};
        g.flavors.push_back({"default", {{"cpu", 20000, 100000, std::nullopt}}});
        cq.resource_groups = {g};
        cq.preemption.reclaim_within_cohort = ReclaimWithinCohort::kAny;
        cq.preemption.within_cluster_queue = WithinClusterQueue::kLowerPriority;
        o.local_queues.push_back({"default", cq.name, cq.name});
        for (size_t k = 0; k < shape.classes.size(); ++k) {
          const ClassSpec& cs = shape.classes[k];
          for (int i = 0; i < cs.count; ++i) {
            Workload w;
            w.name = cq.name + "-" + cs.name + "-" + std::to_string(i);
            w.local_queue = cq.name;
            w.priority = cs.priority;
            w.creation_s = i * cs.interval_s;
            PodSet ps;
            ps.pod_template.cpu_milli = cs.cpu * 1000;
            w.pod_sets.push_back(ps);
            arrivals.push_back({w.creation_s, std::move(w), static_cast<int>(k), cs.runtime_s});
          }
        }
        o.cluster_queues.push_back(std::move(cq));
      }
    std::stable_sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) { return a.t < b.t; });
    KueueScheduler s(o);
    std::vector<int> cls;
    std::vector<double> runtime, first_admit;
    std::vector<int32_t> generation;
    using Ev = std::pair<double, std::pair<WorkloadId, int32_t>>;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<>> finishes;
    size_t next = 0;
    int64_t calls = 0, preemptions = 0, admitted = 0;
    double t = 0;
    while (next < arrivals.size() || !finishes.empty()) {
      t = std::numeric_limits<double>::infinity();
      if (next < arrivals.size()) t = arrivals[next].t;
      if (!finishes.empty()) t = std::min(t, finishes.top().first);
      while (!finishes.empty() && finishes.top().first <= t) {
        auto [id, gen] = finishes.top().second;
        finishes.pop();
        if (generation[id] == gen && s.state(id) == WorkloadState::kAdmitted) s.finish(id, t);
      }
      while (next < arrivals.size() && arrivals[next].t <= t) {
        WorkloadId id = s.submit(std::move(arrivals[next].w));
        cls.push_back(arrivals[next].cls);
        runtime.push_back(arrivals[next].runtime_s);
        first_admit.push_back(-1);
        generation.push_back(0);
        (void)id;
        ++next;
      }
      ++calls;
      for (const WorkloadEvent& e : s.schedule(t)) {
        if (e.type == WorkloadEvent::Type::kAdmitted) {
          ++admitted;
          if (first_admit[e.workload] < 0) first_admit[e.workload] = t;
          s.pods_ready(e.workload, t);
          finishes.push({t + runtime[e.workload], {e.workload, ++generation[e.workload]}});
        } else if (e.type == WorkloadEvent::Type::kPreempted) {
          ++preemptions;
          ++generation[e.workload];
        }
      }
    }
    std::vector<double> sum(shape.classes.size()), n(shape.classes.size());
    for (size_t id = 0; id < cls.size(); ++id) {
      if (first_admit[id] < 0) continue;
      sum[cls[id]] += first_admit[id] - s.workload(static_cast<WorkloadId>(id)).creation_s;
      n[cls[id]] += 1;
    }
    for (size_t k = 0; k < shape.classes.size(); ++k)
      state.counters[std::string("tta_s_") + shape.classes[k].name] = n[k] > 0 ? sum[k] / n[k] : -1;
    state.counters["workloads"] = static_cast<double>(cls.size());
    state.counters["never_admitted"] = static_cast<double>(std::count(first_admit.begin(), first_admit.end(), -1.0));
    state.counters["admissions"] = static_cast<double>(admitted);
    state.counters["preemptions"] = static_cast<double>(preemptions);
    state.counters["schedule_calls"] = static_cast<double>(calls);
    state.counters["simulated_s"] = t;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    state.counters["max_rss_mib"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  }
}

void BM_KueueBaseline(benchmark::State& state) { run(state, kBaseline); }
void BM_KueueLargeScale(benchmark::State& state) { run(state, kLargeScale); }

}  // namespace

BENCHMARK(BM_KueueBaseline)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_KueueLargeScale)->Iterations(1)->Unit(benchmark::kSecond);
