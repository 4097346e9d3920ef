#include "synthetic/openb.h"

#include <array>

#include <fmt/format.h>

#include "util/go_rand.h"

namespace gpufleet::synthetic {
namespace {

struct NodeType {
  int count, gpus;
  int64_t cpu_milli, memory_mib;
  const char* model;
};
// Composition of openb_node_list_gpu_node.csv (counts per distinct node shape).
constexpr std::array<NodeType, 15> kNodeTypes{{
    {549, 8, 96000, 393216, "G2"},     {387, 2, 104000, 524288, "T4"},   {107, 2, 16000, 122880, "P100"},
    {39, 8, 128000, 786432, "G3"},     {28, 4, 32000, 131072, "V100M16"}, {22, 2, 64000, 262144, "P100"},
    {21, 8, 96000, 786432, "V100M32"}, {19, 1, 8000, 32768, "V100M16"},  {17, 4, 96000, 393216, "T4"},
    {9, 4, 48000, 376832, "V100M32"},  {7, 8, 64000, 262144, "V100M16"}, {3, 1, 8000, 61440, "P100"},
    {2, 2, 8000, 61440, "P100"},       {2, 1, 128000, 1048576, "A10"},    {1, 8, 82000, 344064, "V100M16"},
}};

struct Shape {
  int weight;
  int64_t cpu_milli, memory_mib;
};
// Most common (cpu, memory) requests per pod kind in openb_pod_list_default.csv.
constexpr std::array<Shape, 5> kCpuOnly{{{364, 12500, 57344}, {284, 32000, 49152}, {163, 8000, 30517}, {120, 15400, 51200}, {95, 16500, 51200}}};
constexpr std::array<Shape, 5> kShare{{{1122, 3152, 5600}, {625, 11908, 47104}, {486, 8000, 30517}, {189, 4000, 22888}, {182, 4000, 15258}}};
constexpr std::array<Shape, 5> kWhole{{{857, 11300, 49152}, {534, 11400, 48128}, {470, 3152, 5600}, {255, 18708, 64512}, {195, 9810, 41560}}};
// Most common sharing fractions (gpu_milli) and their counts.
constexpr std::array<std::pair<int, int>, 12> kFractions{{{810, 1078}, {470, 750}, {320, 328}, {650, 253}, {230, 140}, {460, 128},
                                                          {590, 75}, {160, 74}, {550, 72}, {220, 62}, {370, 47}, {110, 24}}};
// Pod kinds: CPU-only 1088, whole 1-GPU 3911, sharing 3078, 2-GPU 16, 4-GPU 15, 8-GPU 44 (of 8152).
constexpr std::array<int, 6> kKindWeights{{1088, 3911, 3078, 16, 15, 44}};

template <typename T, size_t N, typename W>
const T& draw(const std::array<T, N>& items, W weight_of, GoRand& rng) {
  int64_t total = 0;
  for (const auto& it : items) total += weight_of(it);
  int64_t x = rng.intn(total);
  for (const auto& it : items) {
    x -= weight_of(it);
    if (x < 0) return it;
  }
  return items.back();
}

}  // namespace

std::vector<Node> synthetic_openb_nodes(int copies) {
  std::vector<Node> nodes;
  int index = 0;
  for (int c = 0; c < std::max(copies, 1); ++c) {
    for (const NodeType& t : kNodeTypes) {
      for (int i = 0; i < t.count; ++i) {
        Node n;
        n.name = fmt::format("synth-node-{:05}", index++);
        n.cpu_milli = t.cpu_milli;
        n.memory_bytes = t.memory_mib * kBytesPerMib;
        n.gpu_count = t.gpus;
        n.gpu_model = t.model;
        nodes.push_back(std::move(n));
      }
    }
  }
  return nodes;
}

std::vector<Pod> synthetic_openb_pods(int64_t count, int64_t seed) {
  GoRand rng(seed);
  std::vector<Pod> pods;
  pods.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
  auto shape_weight = [](const Shape& s) { return s.weight; };
  for (int64_t i = 0; i < count; ++i) {
    Pod p;
    p.name = fmt::format("synth-pod-{:05}", i);
    const int kind = static_cast<int>(&draw(kKindWeights, [](int w) { return w; }, rng) - kKindWeights.data());
    const Shape* shape = nullptr;
    switch (kind) {
      case 0: shape = &draw(kCpuOnly, shape_weight, rng); break;
      case 2:
        shape = &draw(kShare, shape_weight, rng);
        p.num_gpu = 1;
        p.gpu_milli = draw(kFractions, [](const auto& f) { return f.second; }, rng).first;
        break;
      default:
        shape = &draw(kWhole, shape_weight, rng);
        p.num_gpu = kind == 1 ? 1 : kind == 3 ? 2 : kind == 4 ? 4 : 8;
        p.gpu_milli = 1000;
        break;
    }
    p.cpu_milli = shape->cpu_milli;
    p.memory_bytes = shape->memory_mib * kBytesPerMib;
    if (p.num_gpu > 1) {  // the trace's most common multi-GPU requests
      p.cpu_milli = p.num_gpu == 2 ? 16200 : p.num_gpu == 4 ? 32200 : 64200;
      p.memory_bytes = (p.num_gpu == 2 ? 66560 : p.num_gpu == 4 ? 132096 : 263168) * kBytesPerMib;
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

}  // namespace gpufleet::synthetic
