// The live extender's decisions without HTTP (live/extender.h): filter and prioritize of a 1-GPU pod
// over every node, nodeCacheCapable (names only), on clusters of 1,000 and 10,000 8-GPU nodes with
// two pods bound on each. The full request (the body's parse, the decision, the answer's JSON) is
// LiveFilterRequest. The HTTP figures (wrk) come from bench/live/wrk_extender.sh. The cluster cache's
// own costs: a full build (LiveSnapshotRebuild) and one watch event applied in place (LiveApplyEvent).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/kube_api/extender_args.h"
#include "readers/formats/json_request.h"
#include "live/cluster_cache.h"
#include "live/extender.h"
#include "server/extender_json.h"

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
  gpufleet::live::ClusterCache cache;
  std::vector<std::string> names;
  std::shared_ptr<const gpufleet::live::Snapshot> snapshot;
  std::string body;
  // kube-scheduler's sample (percentageOfNodesToScore: 1,000 of 10,000 nodes, as
  // bench/live/churn_extender.sh sends them): node-0 .. node-999 and their body.
  std::vector<std::string> sample_names;
  std::string sample_body;
  json items = json::array();
  explicit Fixture(int nodes, gpufleet::live::CacheOptions options = {}) : cache(std::move(options)) {
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
    sample_names.assign(names.begin(), names.begin() + std::min<size_t>(names.size(), 1000));
    sample_body = json{{"Pod", bench_pod("incoming", 1, "")}, {"Nodes", nullptr}, {"NodeNames", sample_names}}.dump();
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

// The case: 10,000 nodes, kube-scheduler's sample of 1,000 node names in each request.
// LiveFilterSample: the decision alone; LiveFilterRequestSample: the body's parse, the decision and
// the answer's JSON, as the server's /filter handler runs them (server/extender_json.h).
void LiveFilterSample(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  const gpufleet::Pod& pod = f.snapshot->inputs.input.pods[f.snapshot->pod_by_key.at("default/incoming")];
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::live::extender_filter(*f.snapshot, pod, f.sample_names));
}
BENCHMARK(LiveFilterSample)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Prioritize over the sample: Filter and Score on the 1,000 sent nodes.
void LivePrioritizeSample(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  const gpufleet::Pod& pod = f.snapshot->inputs.input.pods[f.snapshot->pod_by_key.at("default/incoming")];
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::live::extender_prioritize(*f.snapshot, pod, f.sample_names));
}
BENCHMARK(LivePrioritizeSample)->Arg(10000)->Unit(benchmark::kMicrosecond);

void LiveFilterRequestSample(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::server::filter_response(*f.snapshot, f.sample_body));
}
BENCHMARK(LiveFilterRequestSample)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The prioritize request as the server's /prioritize handler runs it: the body's parse, the scores
// and the HostPriorityList (server/extender_json.h).
void LivePrioritizeRequestSample(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(gpufleet::server::prioritize_response(*f.snapshot, f.sample_body));
}
BENCHMARK(LivePrioritizeRequestSample)->Arg(10000)->Unit(benchmark::kMicrosecond);

// A full build of the snapshot (every object through the reader and prepare_cluster at once): what
// every watch event cost before the state was kept incrementally, and what the first list costs.
void LiveSnapshotRebuild(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    auto cache = std::make_unique<gpufleet::live::ClusterCache>(gpufleet::live::CacheOptions{});
    cache->replace_all({{"kind", "List"}, {"apiVersion", "v1"}, {"items", f.items}}, "bench");  // each object read alone
    state.ResumeTiming();
    benchmark::DoNotOptimize(cache->snapshot());
    state.PauseTiming();
    cache.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(LiveSnapshotRebuild)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->Iterations(2);

// One watch event to apply: its kind, type and object.
struct BenchEvent {
  gpufleet::live::ResourceKind kind;
  gpufleet::live::WatchEventType type;
  json object;
};

// Applies event(i) for each iteration i, then snapshot(), timing each alone (the event's object is
// made before its clocks start, but counts in its CPU time); counters p50/p99 of wall and thread
// CPU time per event, and the cache's full builds and scheduler set-ups.
template <typename MakeEvent>
void time_events(benchmark::State& state, Fixture& f, MakeEvent event) {
  std::vector<double> micros, cpu_micros;
  const auto thread_cpu_us = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
  };
  int64_t i = 0;
  for (auto _ : state) {
    const double cpu_start = thread_cpu_us();
    BenchEvent e = event(i++);
    const auto start = std::chrono::steady_clock::now();
    f.cache.apply(e.kind, e.type, e.object);
    benchmark::DoNotOptimize(f.cache.snapshot());
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    cpu_micros.push_back(thread_cpu_us() - cpu_start);
  }
  for (const auto& [values, name] : {std::pair{&micros, "_us"}, std::pair{&cpu_micros, "_cpu_us"}}) {
    std::sort(values->begin(), values->end());
    if (values->empty()) continue;
    state.counters[std::string("p50") + name] = (*values)[values->size() / 2];
    state.counters[std::string("p99") + name] = (*values)[std::min(values->size() - 1, values->size() * 99 / 100)];
  }
  state.counters["full_builds"] = static_cast<double>(f.cache.counters().full_builds);
  state.counters["scheduler_setups"] = static_cast<double>(f.cache.counters().scheduler_setups);
}

// One watch event applied to the live state (live/cluster_cache.h), then snapshot() (nothing left to
// build): in turn a pod created pending, that pod bound to a node, a node's labels changed, the pod
// deleted. Counters over the iterations, each event timed alone: p50_us and p99_us of wall time, and
// p50_cpu_us and p99_cpu_us of the thread's CPU time (what the event costs, without the waits of a
// loaded machine).
void apply_events(benchmark::State& state, std::unique_ptr<Fixture>& f) {
  using gpufleet::live::ResourceKind, gpufleet::live::WatchEventType;
  const int nodes = static_cast<int>(state.range(0));
  time_events(state, *f, [nodes](int64_t i) {
    const int64_t round = i / 4, node = (round * 7919) % nodes;
    const std::string name = "churn-" + std::to_string(round);
    switch (i % 4) {
      case 0:
        return BenchEvent{ResourceKind::kPod, WatchEventType::kAdded, bench_pod(name, 1, "")};
      case 1:
        return BenchEvent{ResourceKind::kPod, WatchEventType::kModified, bench_pod(name, 1, "node-" + std::to_string(node))};
      case 2: {
        json n = bench_node(static_cast<int>(node));
        n["metadata"]["labels"]["gpufleet.io/bench-round"] = std::to_string(round);
        return BenchEvent{ResourceKind::kNode, WatchEventType::kModified, std::move(n)};
      }
      default:
        return BenchEvent{ResourceKind::kPod, WatchEventType::kDeleted, bench_pod(name, 1, "")};
    }
  });
}
void LiveApplyEvent(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<Fixture>> fixtures;  // its own cache: the events change it
  auto& f = fixtures[nodes];
  if (!f) f = std::make_unique<Fixture>(nodes);
  apply_events(state, f);
}
BENCHMARK(LiveApplyEvent)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond)->Iterations(4000);

// LiveApplyEvent with static objects (CacheOptions::static_objects, as --cluster-config gives them):
// 100 PriorityClasses. Each event's object is read together with them (live/cluster_cache.h).
void LiveApplyEventStatic(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<Fixture>> fixtures;
  auto& f = fixtures[nodes];
  if (!f) {
    gpufleet::live::CacheOptions options;
    for (int i = 0; i < 100; ++i)
      options.static_objects.push_back({{"apiVersion", "scheduling.k8s.io/v1"},
                                        {"kind", "PriorityClass"},
                                        {"metadata", {{"name", "priority-" + std::to_string(i)}}},
                                        {"value", 1000 + i}});
    f = std::make_unique<Fixture>(nodes, std::move(options));
  }
  apply_events(state, f);
}
BENCHMARK(LiveApplyEventStatic)->Arg(1000)->Unit(benchmark::kMicrosecond)->Iterations(4000);

// Nodes joining and leaving (a scale-up, a removal): in turn a Node "extra-<round>" added (an 8-GPU
// node of a model the cluster has) and that Node deleted, then snapshot(). Counters as
// LiveApplyEvent's: p50/p99 of wall and of the thread's CPU time per event.
void LiveApplyNodeEvent(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<Fixture>> fixtures;
  auto& f = fixtures[nodes];
  if (!f) f = std::make_unique<Fixture>(nodes);
  time_events(state, *f, [](int64_t i) {
    json n = bench_node(static_cast<int>(i / 2));
    n["metadata"]["name"] = "extra-" + std::to_string(i / 2);
    return BenchEvent{gpufleet::live::ResourceKind::kNode,
                      i % 2 ? gpufleet::live::WatchEventType::kDeleted : gpufleet::live::WatchEventType::kAdded, std::move(n)};
  });
}
BENCHMARK(LiveApplyNodeEvent)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond)->Iterations(200);

// The first filter request (LiveFilterSample's: 1,000 of 10,000 nodes sent) after a node joined or
// left, the event itself untimed: what the memos that follow the node set cost to refill.
void LiveFilterSampleAfterNodeEvent(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<Fixture>> fixtures;
  auto& f = fixtures[nodes];
  if (!f) f = std::make_unique<Fixture>(nodes);
  int64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    json n = bench_node(static_cast<int>(i / 2));
    n["metadata"]["name"] = "extra-" + std::to_string(i / 2);
    f->cache.apply(gpufleet::live::ResourceKind::kNode,
                   i % 2 ? gpufleet::live::WatchEventType::kDeleted : gpufleet::live::WatchEventType::kAdded, n);
    const auto snapshot = f->cache.snapshot();
    const gpufleet::Pod& pod = snapshot->inputs.input.pods[snapshot->pod_by_key.at("default/incoming")];
    state.ResumeTiming();
    benchmark::DoNotOptimize(gpufleet::live::extender_filter(*snapshot, pod, f->sample_names));
    ++i;
  }
}
BENCHMARK(LiveFilterSampleAfterNodeEvent)->Arg(10000)->Unit(benchmark::kMicrosecond)->Iterations(200);

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
