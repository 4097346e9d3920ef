// The live extender's decisions without HTTP (live/extender.h): filter and prioritize of a 1-GPU pod
// over every node, nodeCacheCapable (names only), on clusters of 1,000 and 10,000 8-GPU nodes with
// two pods bound on each. The full request (the body's parse, the decision, the answer's JSON) is
// LiveFilterRequest. The HTTP figures (wrk) come from bench/live/wrk_extender.sh.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/kube_api/extender_args.h"
#include "readers/formats/json_request.h"
#include "live/cluster_cache.h"
#include "live/extender.h"

namespace {

using nlohmann::json;

json bench_node(int i) {
  const std::string name = "node-" + std::to_string(i);
  const json r = {{"cpu", "96"}, {"memory", "1024Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}};
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", i % 2 ? "NVIDIA-H100-80GB-HBM3" : "NVIDIA-A100-SXM4-80GB"}}}}},
          {"status", {{"allocatable", r}, {"capacity", r}}}};
}

json bench_pod(const std::string& name, int gpus, const std::string& node) {
  const json r = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  json p = {{"kind", "Pod"},
            {"apiVersion", "v1"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"requests", r}, {"limits", r}}}}})}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

struct Fixture {
  gpufleet::live::ClusterCache cache{gpufleet::live::CacheOptions{}};
  std::vector<std::string> names;
  std::shared_ptr<const gpufleet::live::Snapshot> snapshot;
  std::string body;
  explicit Fixture(int nodes) {
    json items = json::array();
    for (int i = 0; i < nodes; ++i) {
      items.push_back(bench_node(i));
      names.push_back("node-" + std::to_string(i));
      items.push_back(bench_pod("a-" + std::to_string(i), 1 + i % 4, names.back()));
      items.push_back(bench_pod("b-" + std::to_string(i), 2, names.back()));
    }
    items.push_back(bench_pod("incoming", 1, ""));
    cache.replace_all({{"kind", "List"}, {"apiVersion", "v1"}, {"items", items}}, "bench");
    snapshot = cache.snapshot();
    body = json{{"Pod", bench_pod("incoming", 1, "")}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
  }
};

Fixture& fixture(int nodes) {
  static Fixture f1000(1000);
  if (nodes == 1000) return f1000;
  static Fixture f10000(10000);
  return f10000;
}

void LiveFilter(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  const gpufleet::Pod& pod = f.snapshot->inputs.input.pods[f.snapshot->pod_by_key.at("default/incoming")];
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::live::extender_filter(*f.snapshot, pod, f.names));
}
BENCHMARK(LiveFilter)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void LivePrioritize(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  const gpufleet::Pod& pod = f.snapshot->inputs.input.pods[f.snapshot->pod_by_key.at("default/incoming")];
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::live::extender_prioritize(*f.snapshot, pod, f.names));
}
BENCHMARK(LivePrioritize)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The filter request as the server handles it: parse, decide, write the answer.
void LiveFilterRequest(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const gpufleet::io::ExtenderArgs args = gpufleet::io::parse_extender_args(f.body, "bench");
    const gpufleet::live::FilterAnswer answer = gpufleet::live::extender_filter(*f.snapshot, args.pod, args.node_names);
    benchmark::DoNotOptimize(json{{"NodeNames", answer.passed}, {"FailedNodes", answer.failed}}.dump());
  }
}
BENCHMARK(LiveFilterRequest)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Rebuilding a snapshot after one watch event (a pod added).
void LiveSnapshotRebuild(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    f.cache.apply(gpufleet::live::ResourceKind::kPod, gpufleet::live::WatchEventType::kAdded, bench_pod("new-" + std::to_string(i++), 1, ""));
    benchmark::DoNotOptimize(f.cache.snapshot());
  }
}
BENCHMARK(LiveSnapshotRebuild)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

namespace {
// The filter body's parse alone (readers/kube_api/extender_args.h): the pod through the Kubernetes reader and the
// node names.
void LiveParseFilterArgs(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::io::parse_extender_args(f.body, "bench"));
}
BENCHMARK(LiveParseFilterArgs)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The JSON parse alone (readers/formats/json_request.h), with its limits.
void LiveParseJson(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::io::parse_json_request(f.body, "bench"));
}
BENCHMARK(LiveParseJson)->Arg(1000)->Unit(benchmark::kMicrosecond);
}  // namespace
