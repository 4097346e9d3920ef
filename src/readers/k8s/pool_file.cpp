#include "readers/k8s/pool_file.h"

#include "readers/formats/document_kinds.h"

#include <exception>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

constexpr const char* kApiVersion = "gpufleet.io/v1";
constexpr const char* kKind = "NodePoolSet";
constexpr int64_t kMaxNodes = kMaxPoolNodes;        // absurdity guards
constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;
constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;

using detail::Field;  // a YAML node with its field path and source (readers/formats/yaml_field.h)
using detail::Source;

// A price in USD per hour: a finite, non-negative number.
double usd(const Field& f) {
  const double v = f.number();
  if (v < 0) f.fail(fmt::format("price {} is negative", f.scalar()));
  return v;
}

bool dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

SourcePosition position_of(const Field& f) {
  const auto [line, column] = f.position();
  return SourcePosition{f.source().file, line, column, f.path()};
}

// name: a DNS label; its position goes to `source`.
void read_name(const Field& name, NodePool& pool, K8sNodeSource& source) {
  pool.name = name.required_str();
  if (!dns_label(pool.name))
    name.fail(fmt::format("'{}' is not a DNS label (lowercase letters, digits and '-', at most 63)", pool.name));
  source.node = pool.name;
  source.name = position_of(name);
  source.pool = true;
}

// gpu: a model of the catalog (returned; nullptr without gpu) and the GPUs per node.
const GpuModelInfo* read_gpu(const Field& gpu, NodePool& pool) {
  const GpuModelInfo* model = nullptr;
  if (gpu.given()) {  // `gpu: ~` is an error, not a CPU-only pool
    if (!gpu.present()) gpu.fail("has no value: give {model, count}, or leave gpu out for a CPU-only pool");
    gpu.require_map();
    gpu.only_keys({"model", "count"});
    const Field m = gpu["model"];
    const std::string model_name = m.required_str();
    model = find_gpu_model(model_name);
    if (model == nullptr) {
      std::string known;
      for (const GpuModelInfo& g : gpu_catalog()) known += known.empty() ? g.name : ", " + g.name;
      m.fail(fmt::format("unknown GPU model '{}' (known: {})", model_name, known));
    }
    pool.gpu_model = model->name;
    pool.gpus_per_node = static_cast<int32_t>(gpu["count"].integer(1, kMaxGpusPerNode));
  }
  return model;
}

// cpu and memory: allocatable per node.
void read_cpu_memory(const Field& p, NodePool& pool) {
  const Field cpu = p["cpu"];
  try {
    pool.cpu_milli = cpu.quantity().milli();
  } catch (const std::invalid_argument& e) {
    cpu.fail(e.what());
  }
  if (pool.cpu_milli > kMaxCpuMilli) cpu.fail(fmt::format("'{}' is absurdly large", cpu.scalar()));
  const Field memory = p["memory"];
  const Quantity memory_q = memory.quantity();
  if (memory_q.magnitude_units() > kMaxMemoryMib * kBytesPerMib) memory.fail(fmt::format("'{}' is absurdly large", memory.scalar()));
  pool.memory_bytes = memory_q.value();
}

// nodes, min and max (both default to nodes): min <= nodes <= max.
void read_node_counts(const Field& p, NodePool& pool) {
  const Field nodes = p["nodes"];
  pool.node_count = static_cast<int32_t>(nodes.integer(0, kMaxNodes));
  const Field min = p["min"], max = p["max"];
  pool.min_nodes = min.present() ? static_cast<int32_t>(min.integer(0, kMaxNodes)) : pool.node_count;
  pool.max_nodes = max.present() ? static_cast<int32_t>(max.integer(0, kMaxNodes)) : pool.node_count;
  if (pool.min_nodes > pool.max_nodes)
    (min.present() ? min : max).fail(fmt::format("min {} is above max {}", pool.min_nodes, pool.max_nodes));
  if (pool.node_count < pool.min_nodes || pool.node_count > pool.max_nodes)
    nodes.fail(fmt::format("{} nodes is outside [min, max] = [{}, {}]", pool.node_count, pool.min_nodes, pool.max_nodes));
}

// labels: none of those gpufleet sets from the pool; their positions go to `source`.
void read_labels(const Field& labels, NodePool& pool, K8sNodeSource& source) {
  labels.each_entry([&](const std::string& k, const Field& v) {
    if (k.empty()) v.fail("label key must not be empty");
    if (k == kPoolLabel || k == kInstanceTypeLabel || k == kGpuProductLabel || k == kGpuCountLabel ||
        k == kGpuReplicasLabel)
      v.fail(fmt::format("label {} is set by gpufleet from the pool and must not be given", k));
    if (k == kNodeHostnameLabel)
      v.fail(fmt::format("label {} is set by gpufleet to each node's name (as the kubelet sets it) and must not be given", k));
    pool.labels.emplace_back(k, v.str());
    source.labels[k] = position_of(v);
  });
}

// topology: label -> nodes per domain; none of them also in labels.
void read_topology(const Field& topology, NodePool& pool) {
  topology.each_entry([&](const std::string& k, const Field& v) {
    if (k.empty()) v.fail("label key must not be empty");
    for (const auto& [key, value] : pool.labels)
      if (key == k) v.fail(fmt::format("label {} is also in labels: a topology label takes a value per domain", k));
    pool.topology_domains.emplace_back(k, static_cast<int32_t>(v.integer(1, kMaxNodes)));
  });
}

// taints: key, optional value, effect NoSchedule, PreferNoSchedule or NoExecute.
void read_taints(const Field& taints, NodePool& pool) {
  for (size_t i = 0, n = taints.size(); i < n; ++i) {
    const Field t = taints.at(i);
    t.only_keys({"key", "value", "effect"});
    t.require_map();
    Taint taint;
    taint.key = t["key"].required_str();
    taint.value = t["value"].str();
    const Field effect = t["effect"];
    taint.effect = effect.required_str();
    if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" && taint.effect != "NoExecute")
      effect.fail(fmt::format("unknown taint effect '{}' (expected NoSchedule, PreferNoSchedule, NoExecute)", taint.effect));
    pool.taints.push_back(std::move(taint));
  }
}

// prices: USD per node-hour, onDemand (required), spot and reserved.
void read_prices(const Field& prices, NodePool& pool) {
  prices.require_map();
  prices.only_keys({"onDemand", "spot", "reserved"});
  pool.on_demand_usd_per_hour = usd(prices["onDemand"]);
  if (const Field s = prices["spot"]; s.present()) pool.spot_usd_per_hour = usd(s);
  if (const Field r = prices["reserved"]; r.present()) pool.reserved_usd_per_hour = usd(r);
}

// mig: MIG devices per GPU of a MIG-capable `model` (mig-parted mig-devices), a layout that fits one GPU.
void read_mig(const Field& mig, const GpuModelInfo* model, NodePool& pool) {
  if (mig.present()) {
    mig.require_map();
    if (model == nullptr) mig.fail("MIG devices need a GPU (pool has no gpu)");
    if (!model->mig_capable)
      mig.fail(fmt::format("GPU model {} is not MIG-capable (MIG: A100, H100, H200, B200)", model->name));
    std::map<std::string, int> counts;
    mig.each_entry([&](const std::string& profile, const Field& v) {
      if (model->find_mig_profile(profile) == nullptr) {
        std::string known;
        for (const MigProfile& mp : model->mig_profiles) known += known.empty() ? mp.name : ", " + mp.name;
        v.fail(fmt::format("GPU model {} has no MIG profile '{}' (known: {})", model->name, profile, known));
      }
      counts[profile] = static_cast<int>(v.integer(0, kMigMaxInstances));
    });
    if (!layout_for_counts(*model, counts)) {
      std::string list;
      for (const auto& [profile, n] : counts) list += fmt::format("{}{}x {}", list.empty() ? "" : ", ", n, profile);
      mig.fail(fmt::format("MIG devices {} do not fit on one {} GPU (7 compute and 8 memory slices)", list, model->name));
    }
    pool.mig_devices = std::move(counts);
  }
}

// timeSlicing and mps: the device plugin's replicas per GPU, shared by time-slicing or by MPS.
void read_gpu_sharing(const Field& p, const GpuModelInfo* model, NodePool& pool) {
  const Field ts = p["timeSlicing"];
  if (ts.present()) {
    ts.require_map();
    ts.only_keys({"replicas"});
    if (model == nullptr) ts.fail("time-slicing needs a GPU (pool has no gpu)");
    pool.time_slicing_replicas = static_cast<int32_t>(ts["replicas"].integer(1, 1024));
  }
  // MPS (k8s-device-plugin sharing.mps): mutually exclusive with time-slicing and with MIG.
  const Field mps = p["mps"];
  if (mps.present()) {
    mps.require_map();
    mps.only_keys({"replicas"});
    if (model == nullptr) mps.fail("MPS needs a GPU (pool has no gpu)");
    if (ts.present()) mps.fail("MPS and time-slicing are mutually exclusive (give timeSlicing or mps)");
    if (pool.mig_devices) mps.fail("sharing using MPS is not supported for MIG devices (give mig or mps)");
    // The device plugin refuses fewer than 2 MPS replicas (NVIDIA/k8s-device-plugin#1548).
    pool.time_slicing_replicas = static_cast<int32_t>(mps["replicas"].integer(2, 1024));
    pool.gpu_sharing_strategy = GpuSharingStrategy::kMps;
  }
  // hami: memory-based sharing by HAMi's device plugin (model/gpu_memory_share.h): vGPUs per card.
  const Field hami = p["hami"];
  if (hami.present()) {
    hami.require_map();
    hami.only_keys({"splitCount"});
    if (model == nullptr) hami.fail("HAMi sharing needs a GPU (pool has no gpu)");
    if (ts.present() || mps.present() || pool.mig_devices)
      hami.fail("HAMi shares whole cards by memory: not with mig, timeSlicing or mps");
    const Field split = hami["splitCount"];
    pool.hami_split_count = split.present() ? static_cast<int32_t>(split.integer(1, 1024)) : HamiDevices{}.split_count;
  }
}

// numa: NUMA nodes per node (the GPUs split evenly over them), the kubelet's Topology Manager policy
// and scope.
void read_numa(const Field& numa, NodePool& pool) {
  if (numa.present()) {
    numa.require_map();
    numa.only_keys({"nodes", "policy", "scope"});
    const Field nodes = numa["nodes"];
    pool.numa_nodes = static_cast<int32_t>(nodes.integer(1, kMaxNumaNodesPerNode));
    if (pool.gpus_per_node % pool.numa_nodes != 0)
      nodes.fail(fmt::format("{} GPUs per node do not split evenly over {} NUMA nodes", pool.gpus_per_node, pool.numa_nodes));
    const Field policy = numa["policy"];
    if (policy.present()) {
      const auto v = parse_topology_manager_policy(policy.scalar());
      if (!v) policy.fail(fmt::format("unknown policy '{}' (expected none, best-effort, restricted, single-numa-node)", policy.scalar()));
      pool.topology_manager_policy = *v;
    }
    const Field scope = numa["scope"];
    if (scope.present()) {
      const auto v = parse_topology_manager_scope(scope.scalar());
      if (!v) scope.fail(fmt::format("unknown scope '{}' (expected container, pod)", scope.scalar()));
      pool.topology_manager_scope = *v;
    }
  }
}

// One pool; its positions go to `source` (see read_pool_file).
NodePool parse_pool(const Field& p, K8sNodeSource& source) {
  p.only_keys({"name", "instanceType", "gpu", "cpu", "memory", "nodes", "min", "max", "labels", "taints", "prices",
               "mig", "timeSlicing", "mps", "hami", "topology", "numa"});
  NodePool pool;
  read_name(p["name"], pool, source);
  pool.instance_type = p["instanceType"].str();
  const GpuModelInfo* model = read_gpu(p["gpu"], pool);
  read_cpu_memory(p, pool);
  read_node_counts(p, pool);
  source.max_nodes = position_of(p["max"].present() ? p["max"] : p["nodes"]);
  read_labels(p["labels"], pool, source);
  read_topology(p["topology"], pool);
  read_taints(p["taints"], pool);
  read_prices(p["prices"], pool);
  read_mig(p["mig"], model, pool);
  read_gpu_sharing(p, model, pool);
  read_numa(p["numa"], pool);
  try {
    validate_pool(pool);  // everything above is checked with positions; this is a safety net
  } catch (const std::invalid_argument& e) {
    p.fail(e.what());
  }
  return pool;
}

}  // namespace

std::vector<NodePool> parse_pool_text(std::string_view text, const std::string& source_name,
                                      std::vector<K8sNodeSource>* sources) {
  Source src;
  src.file = source_name;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  std::vector<NodePool> pools;
  if (sources != nullptr) sources->clear();
  std::set<std::string> names;
  int64_t total_max = 0;  // of every pool so far, against kMaxTotalPoolNodes
  bool found = false;
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    root.require_map();
    const Field api = root["apiVersion"];
    const std::string api_version = api.str();
    const std::string kind = root["kind"].str();
    const bool ours = api_version.rfind("gpufleet.io/", 0) == 0;
    if (kind != kKind) {
      // The simulator's settings document (readers/sim/sim_pools.h) is skipped here, but with a mistyped
      // or missing apiVersion readers/sim/sim_pools.h would skip it too and run on the defaults.
      const bool sim_group = api_version.rfind("sim.gpufleet.io/", 0) == 0;
      if ((kind == detail::kSimSettingsKind || sim_group) && api_version != detail::kSimApiVersion) {
        if (!api.present())
          root["kind"].fail(fmt::format("kind {} needs apiVersion {} (apiVersion is missing)", kind, detail::kSimApiVersion));
        api.fail(fmt::format("apiVersion '{}' is not supported for kind {} (expected {})", api_version, kind.empty() ? "(none)" : kind,
                             detail::kSimApiVersion));
      }
      if (ours) root["kind"].fail(fmt::format("unknown kind '{}' for {} (expected {})", kind, api_version, kKind));
      continue;  // a Kubernetes object beside the pools (e.g. a mig-parted ConfigMap)
    }
    if (api_version != kApiVersion)
      api.fail(fmt::format("apiVersion '{}' is not supported (expected {})", api_version, kApiVersion));
    root.only_keys({"apiVersion", "kind", "metadata", "pools"});
    found = true;
    const Field list = root["pools"];
    if (!list.present()) list.fail("required field is missing");
    for (size_t i = 0, n = list.size(); i < n; ++i) {
      const Field p = list.at(i);
      p.require_map();
      K8sNodeSource source;
      NodePool pool = parse_pool(p, source);
      if (!names.insert(pool.name).second) p["name"].fail(fmt::format("duplicate pool name '{}'", pool.name));
      total_max += pool.max_nodes;
      if (total_max > kMaxTotalPoolNodes)
        (p["max"].present() ? p["max"] : p["nodes"])
            .fail(fmt::format("the pools' max add up to {} nodes with this one, above the maximum of {} in a file", total_max,
                              kMaxTotalPoolNodes));
      pools.push_back(std::move(pool));
      if (sources != nullptr) sources->push_back(std::move(source));
    }
  }
  if (!found) detail::fail_without_kind(source_name, docs, kKind, kApiVersion);
  return pools;
}

std::vector<NodePool> read_pool_file(const std::string& path, std::vector<K8sNodeSource>* sources) {
  return parse_pool_text(read_yaml_file(path), path, sources);
}

}  // namespace gpufleet::io
