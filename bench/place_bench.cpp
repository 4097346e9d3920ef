// `gpufleet place` at scale: the synthetic Kubernetes cluster and workload (synthetic/k8s.h)
// with every filter on (taints, nodeSelector, required/preferred node affinity, pod anti-affinity,
// resources, GPUs), priorities and the pending-reason diagnosis, single-threaded. The bar:
// 100,000 pods on 10,000 nodes in at most 10 s on one core. place_sampled/...: the same with kube's
// percentageOfNodesToScore at its adaptive default (--percentage-of-nodes-to-score 0), at 1,000,
// 10,000 and 100,000 nodes; place/gpufleet/100000x100000 is the unsampled reference at that size,
// place/bestfit/100000x100000 the same for a policy that learns nothing from the pods.
//   build/bench/gpufleet_bench --benchmark_filter=place
#include <benchmark/benchmark.h>

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "place/place_workload.h"
#include "synthetic/k8s.h"

namespace {

using namespace gpufleet;

void BM_Place(benchmark::State& st, const std::string& policy, int32_t nodes, int64_t pods, std::optional<int32_t> percentage) {
  place::PlaceInput input;
  input.nodes = synthetic::synthetic_k8s_nodes(nodes);
  input.pods = synthetic::synthetic_k8s_pods(pods, 42);
  size_t placed = 0, pending = 0;
  for (auto _ : st) {
    place::PlaceOptions options{policy, 42};
    options.percentage_of_nodes_to_score = percentage;
    const place::PlaceResult r = place::place_workload(input, options);
    placed = r.placements.size();
    pending = r.pending.size();
  }
  st.counters["placed"] = static_cast<double>(placed);
  st.counters["pending"] = static_cast<double>(pending);
  st.counters["per_pod"] = benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  st.SetLabel(fmt::format("{} pods on {} nodes", pods, nodes));
}

int register_all = [] {
  for (const char* policy : {"gpufleet", "leastallocated", "bestfit"}) {
    benchmark::RegisterBenchmark(fmt::format("place/{}/1000x10000", policy).c_str(), BM_Place, policy, 1000, 10000, std::nullopt)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
    benchmark::RegisterBenchmark(fmt::format("place/{}/10000x100000", policy).c_str(), BM_Place, policy, 10000, 100000, std::nullopt)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
  }
  for (const char* policy : {"gpufleet", "bestfit"})
    benchmark::RegisterBenchmark(fmt::format("place/{}/100000x100000", policy).c_str(), BM_Place, policy, 100000, 100000, std::nullopt)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
  for (const auto& [nodes, pods] : {std::pair{1000, 10000}, std::pair{10000, 100000}, std::pair{100000, 100000}})
    benchmark::RegisterBenchmark(fmt::format("place_sampled/gpufleet/{}x{}", nodes, pods).c_str(), BM_Place, "gpufleet", nodes,
                                 static_cast<int64_t>(pods), std::optional<int32_t>(0))
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
  return 0;
}();

}  // namespace
