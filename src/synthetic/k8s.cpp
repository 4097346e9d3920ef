#include "synthetic/k8s.h"

#include <array>
#include <string>

#include <fmt/format.h>

#include "model/node_pool.h"
#include "util/go_rand.h"

namespace gpufleet::synthetic {
namespace {

struct PoolShape {
  const char* name;
  int32_t share_pct;
  const char* model;  // catalog name, "" for CPU
  int32_t gpus;
  int64_t cpu_milli;
  int64_t memory_mib;
  const char* taint;  // workload-type value, "" for none
};

constexpr std::array<PoolShape, 6> kPools{{
    {"inference-l4", 35, "L4", 4, 48000, 192 * 1024, "inference"},
    {"inference-t4", 10, "T4", 1, 4000, 16 * 1024, "inference"},
    {"training-h100", 10, "H100-80GB", 8, 192000, 2048 * 1024, "training"},
    {"training-a100", 10, "A100-80GB", 8, 96000, 1024 * 1024, "training"},
    {"dev-a10g", 10, "A10G", 1, 8000, 32 * 1024, "dev"},
    {"cpu", 25, "", 0, 96000, 384 * 1024, ""},
}};

constexpr const char* kZones[] = {"zone-a", "zone-b", "zone-c"};
constexpr int kReplicasPerDeployment = 50;

Toleration tolerate(const char* value) { return Toleration{"workload-type", "Equal", value, "NoSchedule", std::nullopt}; }

}  // namespace

std::vector<Node> synthetic_k8s_nodes(int32_t node_count) {
  std::vector<Node> out;
  out.reserve(static_cast<size_t>(std::max(node_count, 0)));
  int32_t made = 0;
  for (size_t p = 0; p < kPools.size(); ++p) {
    const PoolShape& shape = kPools[p];
    const int32_t count = p + 1 == kPools.size() ? node_count - made : node_count * shape.share_pct / 100;
    if (count <= 0) continue;
    NodePool pool;
    pool.name = shape.name;
    pool.gpu_model = shape.model;
    pool.gpus_per_node = shape.gpus;
    pool.cpu_milli = shape.cpu_milli;
    pool.memory_bytes = shape.memory_mib * kBytesPerMib;
    pool.node_count = pool.min_nodes = pool.max_nodes = count;
    pool.on_demand_usd_per_hour = 1.0;
    if (*shape.taint) pool.taints = {Taint{"workload-type", shape.taint, "NoSchedule"}};
    for (Node& node : expand_pool(pool)) {
      node.labels.emplace_back("topology.kubernetes.io/zone", kZones[out.size() % 3]);
      node.labels.emplace_back("kubernetes.io/hostname", node.name);
      out.push_back(std::move(node));
    }
    made += count;
  }
  return out;
}

std::vector<Pod> synthetic_k8s_pods(int64_t pod_count, int64_t seed) {
  GoRand rng(seed);
  std::vector<Pod> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(pod_count, 0)));
  int64_t deployment = 0;
  while (static_cast<int64_t>(out.size()) < pod_count) {
    // One Deployment: a class, then kReplicasPerDeployment identical replicas.
    const int64_t draw = rng.intn(100);
    Pod t;
    t.namespace_name = "default";
    const std::string app = fmt::format("app-{:05}", deployment);
    t.labels = {{"app", app}};
    if (draw < 14) {
      const bool t4 = rng.intn(10) == 0;
      t.namespace_name = "serving";
      t.cpu_milli = t4 ? 2000 : 4000;
      t.memory_bytes = (t4 ? 8 * 1024 : 16 * 1024) * kBytesPerMib;
      t.num_gpu = 1;
      t.gpu_milli = 1000;
      t.priority = 1000;
      t.priority_class_name = "production";
      t.constraints.node_selector = {{"nvidia.com/gpu.product", t4 ? "Tesla-T4" : "NVIDIA-L4"}};
      t.constraints.tolerations = {tolerate("inference")};
      if (deployment % 10 == 0) {
        PodAffinityTerm term;
        term.label_selector.match_labels = {{"app", app}};
        term.topology_key = "kubernetes.io/hostname";
        t.constraints.required_anti_affinity = {term};
      }
    } else if (draw < 16) {
      t.namespace_name = "ml-training";
      t.num_gpu = rng.intn(10) == 0 ? 4 : 8;
      t.gpu_milli = 1000;
      t.cpu_milli = 11000 * t.num_gpu;
      t.memory_bytes = int64_t{t.num_gpu} * 100 * 1024 * kBytesPerMib;
      t.priority = 100;
      t.priority_class_name = "training";
      t.constraints.tolerations = {tolerate("training")};
      t.constraints.required_node_affinity = {
          NodeSelectorTerm{{SelectorRequirement{"nvidia.com/gpu.product", "In", {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"}}}, {}}};
      t.constraints.preferred_node_affinity = {
          PreferredSchedulingTerm{100, NodeSelectorTerm{{SelectorRequirement{"nvidia.com/gpu.product", "In", {"NVIDIA-H100-80GB-HBM3"}}}, {}}}};
    } else if (draw < 17) {
      t.namespace_name = "dev";
      t.num_gpu = 1;
      t.gpu_milli = 1000;
      t.cpu_milli = 4000;
      t.memory_bytes = 16 * 1024 * kBytesPerMib;
      t.priority_class_name = "dev";
      t.preempt_lower_priority = false;
      t.constraints.tolerations = {tolerate("dev")};
    } else {
      t.cpu_milli = 1000 * (1 + rng.intn(4));
      t.memory_bytes = 2048 * (1 + rng.intn(4)) * kBytesPerMib;
    }
    for (int r = 0; r < kReplicasPerDeployment && static_cast<int64_t>(out.size()) < pod_count; ++r) {
      Pod p = t;
      p.name = fmt::format("{}-{}", app, r);
      out.push_back(std::move(p));
    }
    ++deployment;
  }
  return out;
}

}  // namespace gpufleet::synthetic
