#include "live/cluster_metrics.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <set>
#include <utility>

#include "report/prometheus_text.h"
#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "model/scheduling_constraints.h"
#include "sched/fit_error.h"
#include "sched/gpu/fragmentation.h"
#include "sched/scheduler.h"
#include "sim/rules/cost.h"
#include "inputs/sim/workload.h"

namespace gpufleet::live {
namespace {

// A snapshot without a prepared cluster (a default Snapshot, before any object) reads as no nodes.
const ClusterState& state_of(const Snapshot& snapshot) {
  static const ClusterState kEmpty;
  return snapshot.cluster.state ? *snapshot.cluster.state : kEmpty;
}

constexpr const char* kSchedulableReason = "schedulable";
constexpr const char* kErrorReason = "error";

// The pending reason label's order among reasons that reject equally many nodes: the first listed
// here wins (the in-tree plugins' reasons in the order the label has always broken ties in, so that
// a label does not change), then reasons not listed, in the profile's order.
constexpr std::string_view kReasonTieOrder[] = {
    "Insufficient cpu",
    "Insufficient memory",
    "Too many pods",
    "Insufficient nvidia.com/gpu",
    "node(s) didn't match pod's GPU model constraint",
    "node(s) had untolerated taint(s)",
    "node(s) didn't match Pod's node affinity/selector",
    "Insufficient nvidia.com/mig-<profile>",
    "Insufficient nvidia.com/gpu.shared",
    "node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)",
    "node(s) didn't match pod anti-affinity rules",
    "node(s) didn't satisfy existing pods anti-affinity rules",
    "node(s) didn't match pod affinity rules",
    "node(s) were unschedulable",
    "cannot align pod",
};

// The generic reason (FilterCode::reason) of the rejection that rejected the most nodes (ties: see
// kReasonTieOrder); "" when none did.
std::string_view most_rejecting_reason(const sched::NodeToStatus& statuses) {
  const std::vector<int32_t> counts = statuses.counts();
  std::string_view best;
  int32_t most = 0;
  size_t best_rank = 0;
  for (size_t number = 1; number < counts.size(); ++number) {
    if (counts[number] == 0 || counts[number] < most) continue;
    const std::string_view reason = statuses.table().rejection(static_cast<uint8_t>(number)).code.reason();
    const auto listed = std::find(std::begin(kReasonTieOrder), std::end(kReasonTieOrder), reason);
    const size_t rank = static_cast<size_t>(listed - std::begin(kReasonTieOrder)) + (listed == std::end(kReasonTieOrder) ? number : 0);
    if (counts[number] > most || rank < best_rank) {
      most = counts[number];
      best = reason;
      best_rank = rank;
    }
  }
  return best;
}

// The node as a one-node pool, for sim/rules/cost.h's rules, which read a pool's GPU model, GPU count,
// allocatable CPU and memory, and sharing (time-slicing / MPS replicas, MIG).
NodePool node_as_pool(const Node& node) {
  NodePool pool;
  pool.name = node.name;
  pool.gpu_model = node.gpu_model;
  pool.gpus_per_node = node.gpu_count;
  pool.cpu_milli = node.cpu_milli;
  pool.memory_bytes = node.memory_bytes;
  if (node.time_slicing) {
    pool.time_slicing_replicas = node.time_slicing->replicas;
    pool.gpu_sharing_strategy = node.time_slicing->strategy;
  }
  if (std::any_of(node.mig.begin(), node.mig.end(), [](const GpuMig& g) { return g.enabled; }))
    pool.mig_devices = std::map<std::string, int>{};  // only its presence counts (pod_gpus_held)
  return pool;
}

// GPU milli a bound pod holds on node n, as ClusterState counts it (model/cluster_state.h).
int64_t bound_gpu_milli(const ClusterState& state, NodeId n, const BoundPod& b) {
  const Node& node = state.node(n);
  const int32_t replica = node.time_slicing ? replica_gpu_milli(node.time_slicing->replicas) : 0;
  int64_t milli = 0;
  for (const int32_t g : b.gpus) milli += state.gpu_kind(n, g) == GpuKind::kTimeSliced ? replica : b.pod.gpu_milli;
  milli += static_cast<int64_t>(b.shared_replicas.size()) * replica;
  if (!b.mig.empty())
    if (const GpuModelInfo* model = find_gpu_model(node.gpu_model))
      for (const MigDevice& d : b.mig)
        if (const MigProfile* p = model->find_mig_profile(d.profile)) milli += mig_device_gpu_milli(p->compute_slices);
  return milli;
}

std::string_view pool_of(const Node& node, const MetricsOptions& options) {
  for (const std::string& key : options.pool_labels)
    if (const std::string* v = find_label(node.labels, key)) return *v;
  return {};
}

std::vector<PendingPod> pending_locked(const Snapshot& snapshot, size_t max_decisions) {
  std::vector<PendingPod> out;
  const ClusterState& state = state_of(snapshot);
  GoRand rng = snapshot.cluster.rng;  // a copy: the metrics draw nothing from the snapshot's generator
  const std::vector<Pod>& pods = snapshot.inputs.input.pods;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!pods[i].node_name.empty()) continue;
    PendingPod p{i, {}, {}};
    if (max_decisions == 0) {
      p.reason = kNotEvaluatedReason;
      out.push_back(std::move(p));
      continue;
    }
    --max_decisions;
    if (state.live_node_count() == 0 || !snapshot.cluster.scheduler) {
      p.message = sched::fit_error_message({}, 0);
      p.reason = p.message;
      out.push_back(std::move(p));
      continue;
    }
    const sched::ScheduleResult r = snapshot.cluster.scheduler->decide(pods[i], state, rng);
    if (r.scheduled()) {
      p.reason = kSchedulableReason;
    } else if (r.status.code() == sched::Code::kError || r.node_to_status.empty()) {
      p.reason = kErrorReason;
      p.message = r.status.message();
    } else {
      const std::string_view reason = most_rejecting_reason(r.node_to_status);
      p.reason = reason.empty() ? kErrorReason : std::string(reason);
      p.message = sched::fit_error_message(sched::rejection_histogram(r.node_to_status, pods[i], state), state.live_node_count());
    }
    out.push_back(std::move(p));
  }
  return out;
}

struct NodeFigures {
  std::string_view name;
  std::string_view pool;
  std::string_view instance_type;
  std::string_view capacity_type;
  int64_t capacity_milli = 0;
  int64_t allocated_milli = 0;
  double stranded_milli = 0;
  double fragmentation_milli = 0;
  std::optional<double> price;
  double charged = 0;  // USD per hour charged to its pods
};

struct PoolFigures {
  int64_t nodes = 0;
  int64_t capacity_milli = 0;
  int64_t allocated_milli = 0;
  double stranded_milli = 0;
  double fragmentation_milli = 0;
  double cost = 0;
  double idle = 0;
  bool priced = false;
};

struct NamespaceFigures {
  int64_t allocated_milli = 0;
  double chargeback = 0;
};

}  // namespace

std::map<std::string, InstancePrice, std::less<>> instance_prices(const std::vector<NodePool>& pools) {
  std::map<std::string, InstancePrice, std::less<>> out;
  for (const NodePool& p : pools)
    if (!p.instance_type.empty()) out.try_emplace(p.instance_type, InstancePrice{p.on_demand_usd_per_hour, p.spot_usd_per_hour});
  return out;
}

std::vector<PendingPod> pending_pods(const Snapshot& snapshot, size_t max_decisions) {
  const std::lock_guard lock(snapshot.decide_mutex);
  return pending_locked(snapshot, max_decisions);
}

std::string render_cluster_metrics(const Snapshot& snapshot, const MetricsOptions& options) {
  const std::lock_guard lock(snapshot.decide_mutex);
  const ClusterState& state = state_of(snapshot);
  const std::vector<Pod>& pods = snapshot.inputs.input.pods;

  // The workload's ratios for S(n) and the typical pod mix for F(n), from every pod of the snapshot.
  double cpu_sum = 0, memory_sum = 0, gpu_sum = 0;
  for (const Pod& p : pods)
    if (p.is_gpu_pod()) {
      cpu_sum += static_cast<double>(p.nonzero_cpu_milli());
      memory_sum += static_cast<double>(p.memory_bytes);
      gpu_sum += static_cast<double>(p.gpu_request_milli());
    }
  const double r_cpu = gpu_sum > 0 ? cpu_sum / gpu_sum : 0;
  const double r_memory = gpu_sum > 0 ? memory_sum / gpu_sum : 0;
  const sched::FragmentationMeasure frag(sched::typical_pod_mix(pods), state.gpu_models());

  std::vector<NodeFigures> nodes;
  std::map<std::string_view, PoolFigures> pools;
  std::map<std::string_view, NamespaceFigures> namespaces;
  int64_t unpriced = 0;
  for (NodeId n = 0; n < state.node_count(); ++n) {
    if (!state.has_node(n)) continue;
    const Node& node = state.node(n);
    NodeFigures f;
    f.name = node.name;
    f.pool = pool_of(node, options);
    if (const std::string* t = find_label(node.labels, kInstanceTypeLabel)) f.instance_type = *t;
    const std::string* capacity = find_label(node.labels, sim::kCapacityTypeLabel);
    const bool spot = capacity != nullptr && *capacity == "spot";
    if (const auto price = options.prices.find(f.instance_type); !f.instance_type.empty() && price != options.prices.end()) {
      f.price = spot && price->second.spot_usd_per_hour ? *price->second.spot_usd_per_hour : price->second.on_demand_usd_per_hour;
      f.capacity_type = spot && price->second.spot_usd_per_hour ? "spot" : "on-demand";
    } else {
      ++unpriced;
    }
    f.capacity_milli = int64_t{node.gpu_count} * kGpuMilliPerGpu;
    f.stranded_milli = sched::stranded_gpu_milli(state.gpu_free_milli_total(n), state.cpu_free_milli(n), state.memory_free_bytes(n), r_cpu, r_memory);
    f.fragmentation_milli = node.gpu_count > 0 ? frag.node_frag_milli(state, n) : 0.0;
    const NodePool as_pool = node_as_pool(node);
    const sim::PriceSplit split = sim::price_split(as_pool);
    for (const BoundPod& b : state.pods_on(n)) {
      const int64_t milli = bound_gpu_milli(state, n, b);
      f.allocated_milli += milli;
      NamespaceFigures& ns = namespaces[b.pod.namespace_name];
      ns.allocated_milli += milli;
      if (f.price) {
        const double charge = *f.price * sim::pod_price_share(as_pool, split, b.pod);
        f.charged += charge;
        ns.chargeback += charge;
      }
    }
    PoolFigures& pool = pools[f.pool];
    ++pool.nodes;
    pool.capacity_milli += f.capacity_milli;
    pool.allocated_milli += f.allocated_milli;
    pool.stranded_milli += f.stranded_milli;
    pool.fragmentation_milli += f.fragmentation_milli;
    if (f.price) {
      pool.priced = true;
      pool.cost += *f.price;
      pool.idle += sim::zero_if_residue(*f.price - f.charged);
    }
    nodes.push_back(f);
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeFigures& a, const NodeFigures& b) { return a.name < b.name; });
  const std::vector<PendingPod> pending = pending_locked(snapshot, options.max_pending_decisions);

  PrometheusTextWriter w;
  const auto per_node = [&](const char* name, const char* help, auto value, bool priced_only) {
    w.family(name, "gauge", help);
    for (const NodeFigures& f : nodes)
      if (f.capacity_milli > 0 && (!priced_only || f.price)) w.sample(name, {{"node", f.name}, {"pool", f.pool}}, value(f));
  };
  per_node("gpufleet_node_gpu_capacity_milli", "GPU capacity of the node, milli-GPUs (1000 per GPU).",
           [](const NodeFigures& f) { return static_cast<double>(f.capacity_milli); }, false);
  per_node("gpufleet_node_gpu_allocated_milli", "GPU milli-GPUs the node's bound pods hold (a time-slicing replica floor(1000/R), a MIG device floor(1000*g/7)).",
           [](const NodeFigures& f) { return static_cast<double>(f.allocated_milli); }, false);
  per_node("gpufleet_node_gpu_stranded_milli", "Free milli-GPUs the node's free CPU or memory cannot feed at the workload's CPU and memory per GPU.",
           [](const NodeFigures& f) { return f.stranded_milli; }, false);
  per_node("gpufleet_node_gpu_fragmentation_milli", "FGD fragmentation F(n) of the node, milli-GPUs, for the snapshot's typical pod mix.",
           [](const NodeFigures& f) { return f.fragmentation_milli; }, false);
  if (!options.prices.empty()) {
    w.family("gpufleet_node_price_usd_per_hour", "gauge", "Price of the node, USD per hour, by its instance type and capacity type.");
    for (const NodeFigures& f : nodes)
      if (f.price)
        w.sample("gpufleet_node_price_usd_per_hour",
                 {{"node", f.name}, {"pool", f.pool}, {"instance_type", f.instance_type}, {"capacity_type", f.capacity_type}}, *f.price);
    w.family("gpufleet_node_idle_cost_usd_per_hour", "gauge", "Price of the node no pod is charged (OpenCost idle cost), USD per hour.");
    for (const NodeFigures& f : nodes)
      if (f.price) w.sample("gpufleet_node_idle_cost_usd_per_hour", {{"node", f.name}, {"pool", f.pool}}, sim::zero_if_residue(*f.price - f.charged));
    w.family("gpufleet_nodes_without_price", "gauge", "Nodes whose instance type has no price in gpufleet's price table.");
    w.sample("gpufleet_nodes_without_price", {}, static_cast<double>(unpriced));
  }

  const auto per_pool = [&](const char* name, const char* help, auto value, bool priced_only) {
    w.family(name, "gauge", help);
    for (const auto& [pool, f] : pools)
      if (!priced_only || f.priced) w.sample(name, {{"pool", pool}}, value(f));
  };
  per_pool("gpufleet_pool_nodes", "Nodes of the pool.", [](const PoolFigures& f) { return static_cast<double>(f.nodes); }, false);
  per_pool("gpufleet_pool_gpu_capacity_milli", "GPU capacity of the pool, milli-GPUs.",
           [](const PoolFigures& f) { return static_cast<double>(f.capacity_milli); }, false);
  per_pool("gpufleet_pool_gpu_allocated_milli", "Milli-GPUs the pool's bound pods hold.",
           [](const PoolFigures& f) { return static_cast<double>(f.allocated_milli); }, false);
  per_pool("gpufleet_pool_gpu_stranded_milli", "Stranded milli-GPUs of the pool's nodes (see gpufleet_node_gpu_stranded_milli).",
           [](const PoolFigures& f) { return f.stranded_milli; }, false);
  per_pool("gpufleet_pool_gpu_fragmentation_milli", "FGD fragmentation of the pool's nodes, milli-GPUs.",
           [](const PoolFigures& f) { return f.fragmentation_milli; }, false);
  if (!options.prices.empty()) {
    per_pool("gpufleet_pool_cost_usd_per_hour", "Price of the pool's priced nodes, USD per hour.", [](const PoolFigures& f) { return f.cost; }, true);
    per_pool("gpufleet_pool_idle_cost_usd_per_hour", "Idle cost of the pool's priced nodes, USD per hour.",
             [](const PoolFigures& f) { return f.idle; }, true);
  }

  w.family("gpufleet_namespace_gpu_allocated_milli", "gauge", "Milli-GPUs the namespace's bound pods hold.");
  for (const auto& [ns, f] : namespaces) w.sample("gpufleet_namespace_gpu_allocated_milli", {{"namespace", ns}}, static_cast<double>(f.allocated_milli));
  if (!options.prices.empty()) {
    w.family("gpufleet_namespace_chargeback_usd_per_hour", "gauge",
             "What the namespace's bound pods are charged, USD per hour (OpenCost allocation: requests x the node price split by OpenCost's default rates).");
    for (const auto& [ns, f] : namespaces)
      w.sample("gpufleet_namespace_chargeback_usd_per_hour", {{"namespace", ns}}, sim::zero_if_residue(f.chargeback));
  }

  std::map<std::pair<std::string_view, std::string_view>, int64_t> pending_by;
  for (const PendingPod& p : pending) ++pending_by[{pods[p.pod].namespace_name, p.reason}];
  w.family("gpufleet_pending_pods", "gauge",
           "Pods without a node, by namespace and the reason the scheduler gives (the filter rejecting the most nodes, or schedulable).");
  for (const auto& [key, count] : pending_by)
    w.sample("gpufleet_pending_pods", {{"namespace", key.first}, {"reason", key.second}}, static_cast<double>(count));

  w.family("gpufleet_snapshot_generation", "gauge",
           "Version of the cluster state the metrics describe (1 for the first build, +1 per full build or change applied).");
  w.sample("gpufleet_snapshot_generation", {}, static_cast<double>(snapshot.generation));
  w.family("gpufleet_snapshot_refused_objects", "gauge", "Nodes and Pods the reader refused, left out of the snapshot.");
  w.sample("gpufleet_snapshot_refused_objects", {}, static_cast<double>(snapshot.refused.size()));
  return w.take();
}

std::string render_cache_metrics(const CacheCounters& counters) {
  PrometheusTextWriter w;
  static constexpr const char* kTypes[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"};
  w.family("gpufleet_cache_watch_events_total", "counter", "Watch events applied to the cluster state, by kind and type.");
  for (size_t k = 0; k < 2; ++k)
    for (size_t t = 0; t < 4; ++t)
      w.sample("gpufleet_cache_watch_events_total", {{"kind", k == 0 ? "Node" : "Pod"}, {"type", kTypes[t]}},
               static_cast<double>(counters.events[k][t]));
  w.family("gpufleet_cache_relists_total", "counter", "Lists after the first one (a relist, e.g. after 410 Gone), by kind.");
  for (size_t k = 0; k < 2; ++k)
    w.sample("gpufleet_cache_relists_total", {{"kind", k == 0 ? "Node" : "Pod"}}, static_cast<double>(counters.relists[k]));
  w.family("gpufleet_cache_full_builds_total", "counter", "Cluster states built from every object at once (the first list, or after a change the model refused).");
  w.sample("gpufleet_cache_full_builds_total", {}, static_cast<double>(counters.full_builds));
  w.family("gpufleet_cache_scheduler_setups_total", "counter", "Schedulers set up again on the live state (a node of a GPU model the scheduler was not made with, a relist's Node changes).");
  w.sample("gpufleet_cache_scheduler_setups_total", {}, static_cast<double>(counters.scheduler_setups));
  w.family("gpufleet_cache_event_lag_seconds", "histogram", "Seconds from a watch event's (or list's) arrival to the cluster state holding it.");
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kDurationBucketsSeconds.size(); ++b) {
    cumulative += counters.lag_buckets[b];
    const std::string le = format_metric_value(kDurationBucketsSeconds[b]);
    w.sample("gpufleet_cache_event_lag_seconds_bucket", {{"le", le}}, static_cast<double>(cumulative));
  }
  w.sample("gpufleet_cache_event_lag_seconds_bucket", {{"le", "+Inf"}}, static_cast<double>(counters.lag_count));
  w.sample("gpufleet_cache_event_lag_seconds_sum", {}, counters.lag_seconds_sum);
  w.sample("gpufleet_cache_event_lag_seconds_count", {}, static_cast<double>(counters.lag_count));
  return w.take();
}

}  // namespace gpufleet::live
