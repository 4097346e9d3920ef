// Per-pod scheduling cost of each policy under the FGD packing protocol, on the openb cluster
// (1213 nodes) and on the same cluster copied ten times (12,130 nodes), with the workload tuned to
// 1.3x the cluster's GPUs in each case. Uses the real trace when found, else the synthetic
// openb-shaped one (the label says which). Counters: ns_per_pod (wall time / pods attempted),
// pods, failed. pack_per_pod_sampled/...: the same with kube's percentageOfNodesToScore at its
// adaptive default (off in `pack`, whose published results are unsampled).
//   build/bench/gpufleet_bench                          # everything
//   build/bench/gpufleet_bench --benchmark_filter=fgd   # one policy
#include <benchmark/benchmark.h>

#include <optional>

#include <fmt/format.h>

#include "readers/traces/openb_csv.h"
#include "model/cluster_state.h"
#include "pack/pack_experiment.h"
#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "synthetic/openb.h"

namespace {

using namespace gpufleet;

struct Trace {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::string label;
};

const Trace& trace() {
  static const Trace t = [] {
    Trace out;
    const std::string dir = testing::openb_dir();
    if (!dir.empty()) {
      out.nodes = io::read_openb_nodes(dir + "/csv/openb_node_list_gpu_node.csv");
      out.pods = io::read_openb_pods(dir + "/csv/openb_pod_list_default.csv");
      out.label = "openb";
    } else {
      out.nodes = synthetic::synthetic_openb_nodes(1);
      out.pods = synthetic::synthetic_openb_pods(8152, 1);
      out.label = "synthetic";
    }
    return out;
  }();
  return t;
}

std::vector<Node> copies(const std::vector<Node>& nodes, int n) {
  std::vector<Node> out;
  for (int c = 0; c < n; ++c)
    for (Node node : nodes) {
      node.name = fmt::format("c{}-{}", c, node.name);
      out.push_back(std::move(node));
    }
  return out;
}

void BM_PackPerPod(benchmark::State& st, const std::string& policy, int cluster_copies, std::optional<int32_t> percentage) {
  const Trace& t = trace();
  const std::vector<Node> nodes = copies(t.nodes, cluster_copies);
  int64_t pods = 0, failed = 0;
  for (auto _ : st) {
    st.PauseTiming();
    ClusterState state(nodes);
    auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(t.pods), state.gpu_models());
    GoRand rng(42);
    const auto workload = pack::build_tuned_workload(t.pods, state.gpu_capacity_milli(), 1.3, rng);
    sched::Profile profile = sched::make_policy(policy, {frag, state.gpu_models(), &state});
    profile.percentage_of_nodes_to_score = percentage;
    sched::Scheduler scheduler(std::move(profile), pack::draw_node_ranks(nodes, rng));
    scheduler.set_node_to_status(false);  // as `pack`: a failed pod only counts
    st.ResumeTiming();
    for (const Pod& pod : workload) {
      const auto r = scheduler.schedule_one(pod, state, rng);
      failed += !r.scheduled();
    }
    pods += static_cast<int64_t>(workload.size());
  }
  st.counters["pods"] = benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kAvgIterations);
  st.counters["failed"] = benchmark::Counter(static_cast<double>(failed), benchmark::Counter::kAvgIterations);
  st.counters["ns_per_pod"] = benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.SetLabel(fmt::format("{} x{} ({} nodes)", t.label, cluster_copies, nodes.size()));
}

// One whole `gpufleet pack` run (the protocol, metrics and bucketing included).
void BM_PackRun(benchmark::State& st, const std::string& policy) {
  const Trace& t = trace();
  for (auto _ : st) benchmark::DoNotOptimize(pack::run_pack(t.nodes, t.pods, policy, 42, 1.3));
  st.SetLabel(t.label);
}

// Reading the default trace (8152 pods, 1213 nodes) from disk and validating every row.
void BM_ReadOpenbDefault(benchmark::State& st) {
  const std::string dir = testing::openb_dir();
  if (dir.empty()) {
    st.SkipWithError("openb trace not found");
    return;
  }
  for (auto _ : st) {
    benchmark::DoNotOptimize(io::read_openb_nodes(dir + "/csv/openb_node_list_gpu_node.csv"));
    benchmark::DoNotOptimize(io::read_openb_pods(dir + "/csv/openb_pod_list_default.csv"));
  }
}
BENCHMARK(BM_ReadOpenbDefault)->Unit(benchmark::kMillisecond);

int register_all = [] {
  for (const auto& policy : sched::policy_names()) {
    benchmark::RegisterBenchmark(fmt::format("pack_per_pod/{}/1213", policy).c_str(), BM_PackPerPod, policy, 1, std::nullopt)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
    benchmark::RegisterBenchmark(fmt::format("pack_per_pod/{}/12130", policy).c_str(), BM_PackPerPod, policy, 10, std::nullopt)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
    benchmark::RegisterBenchmark(fmt::format("pack_per_pod_sampled/{}/1213", policy).c_str(), BM_PackPerPod, policy, 1, std::optional<int32_t>(0))
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
    benchmark::RegisterBenchmark(fmt::format("pack_per_pod_sampled/{}/12130", policy).c_str(), BM_PackPerPod, policy, 10, std::optional<int32_t>(0))
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
    benchmark::RegisterBenchmark(fmt::format("pack_run/{}", policy).c_str(), BM_PackRun, policy)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
