// gpufleet's view of the cluster as Prometheus metrics (the live server's /metrics, beside
// live/request_stats.h): per node, per pool and per namespace, from one Snapshot. No I/O.
// docs/live.md ("Metrics and alerts") lists every metric with its labels; the rules are here.
//
// Per node (labels node, pool), nodes with GPUs only (CPU-only nodes have no GPU capacity to strand):
//   gpu_capacity_milli     GPUs x 1000.
//   gpu_allocated_milli    GPU milli the bound pods hold, as ClusterState counts it: a whole or
//                          fractional GPU its gpu_milli, a time-slicing or MPS replica floor(1000 / R),
//                          a MIG device floor(1000 x g / 7) (model/cluster_state.h).
//   gpu_stranded_milli     free GPU milli that the node's free CPU or memory cannot feed at the
//                          workload's CPU-per-GPU and memory-per-GPU ratio (sched::stranded_gpu_milli,
//                          gpufleet's definition; docs/fgd-reproduction.md). The ratios are those of
//                          every GPU pod of the snapshot, bound and pending (sum of non-zero CPU
//                          requests, resp. memory requests, over sum of GPU milli requested).
//   gpu_fragmentation_milli FGD's F(n) (sched/gpu/fragmentation.h) with the typical pod mix of every pod of
//                          the snapshot, the measure `gpufleet place` and the extender score with
//                          (place/prepared_cluster.h).
//   price_usd_per_hour     the node's price (see Prices), with labels instance_type and capacity_type.
//   idle_cost_usd_per_hour the node's price minus what its pods are charged (OpenCost's idle cost).
// Per pool (label pool): the node figures summed, the node count and the pool's cost per hour.
// Per namespace (label namespace): GPU milli allocated to its bound pods and their chargeback, USD per
// hour, by OpenCost's allocation rule as the simulator applies it (sim/rules/cost.h pod_price_share: the node
// price split into CPU, memory and GPU parts by OpenCost's default rates; a time-sliced or MPS
// replica is 1 / R of a GPU, a MIG device g / 7).
// Pending pods (labels namespace, reason): pods without spec.nodeName, each decided by the snapshot's
// scheduler (decide(), under decide_mutex; no PostFilter, no quota or gang admission). reason is a
// bounded label: "schedulable" when a node fits now (kube-scheduler has not bound it yet), else the
// kube-scheduler reason (the generic words of the FilterReason, sched::FilterCode::reason) that
// rejected the most nodes (ties: in a fixed order of the in-tree reasons, cluster_metrics.cpp), e.g.
// "Insufficient nvidia.com/gpu"; "no nodes available to schedule pods" without
// nodes; "error" when the cycle ended with an error status; "not evaluated" beyond
// MetricsOptions::max_pending_decisions. The pod's full FitError message
// (sched/fit_error.h) is in pending_pods()' result, not in a label (it is unbounded).
// Snapshot: its generation and the objects the reader refused.
//
// Pools. A node's pool is the value of the first label of MetricsOptions::pool_labels it carries
// (default: Karpenter's karpenter.sh/nodepool, then gpufleet.io/pool, which gpufleet's pool files
// set); "" when it carries none (Prometheus shows the label as absent).
//
// Prices. USD per node-hour by the node's node.kubernetes.io/instance-type label, from
// MetricsOptions::prices, which instance_prices() builds from the pools of a gpufleet pool file
// (readers/k8s/pool_file.h: instanceType and prices.onDemand / prices.spot). A node labelled
// karpenter.sh/capacity-type=spot costs the spot price when the table has one, else the on-demand
// price. A node without a known price has no price or idle cost series, its pods are charged nothing,
// and it adds nothing to its pool's cost: gpufleet_nodes_without_price counts such nodes.
//
// Names follow Prometheus' conventions: prefix gpufleet_, unit in the name (_milli, _usd_per_hour).
// Every series of the text is sorted by its labels; the text is the same for the same snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "live/cluster_cache.h"
#include "model/node_pool.h"

namespace gpufleet::live {

/// Karpenter's node label naming the NodePool that launched the node (karpenter.sh/v1 well-known label).
inline constexpr const char* kKarpenterNodePoolLabel = "karpenter.sh/nodepool";

/// Price of one instance type, USD per node-hour.
struct InstancePrice {
  double on_demand_usd_per_hour = 0;
  std::optional<double> spot_usd_per_hour;
};

struct MetricsOptions {
  /// node.kubernetes.io/instance-type value -> price. Empty (the default): no cost series at all.
  std::map<std::string, InstancePrice, std::less<>> prices;
  /// Node label keys naming a node's pool, the first present wins (see the top of this file).
  std::vector<std::string> pool_labels = {kKarpenterNodePoolLabel, kPoolLabel};
  /// Most pending pods decided per render, in input order; the rest count under reason
  /// kNotEvaluatedReason. Bounds the time decide_mutex is held (and the extender kept waiting) when
  /// many pods are pending; pods of one shape share the scheduler's memo, so most decisions are cheap.
  size_t max_pending_decisions = 1000;
};

/// The reason label of pending pods beyond MetricsOptions::max_pending_decisions.
inline constexpr const char* kNotEvaluatedReason = "not evaluated";

/// The price table of pool-file pools (readers/k8s/pool_file.h read_pool_file): instanceType -> prices.onDemand
/// and prices.spot. Pools without an instance type are skipped; for an instance type given by several
/// pools, the first pool's prices count.
std::map<std::string, InstancePrice, std::less<>> instance_prices(const std::vector<NodePool>& pools);

/// A pending pod's answer (see "Pending pods" above).
struct PendingPod {
  size_t pod = 0;        ///< index in Snapshot::inputs.input.pods
  std::string reason;    ///< the bounded reason label
  std::string message;   ///< kube's FitError message (sched::fit_error_message); empty when a node fits
};

/// Every pod of the snapshot without spec.nodeName, in the snapshot's pod order (cluster_cache.h); the first `max_decisions`
/// decided by the snapshot's scheduler, the others with reason kNotEvaluatedReason and no message.
/// Takes snapshot.decide_mutex.
std::vector<PendingPod> pending_pods(const Snapshot& snapshot, size_t max_decisions = SIZE_MAX);

/// The metrics text of the snapshot (see the top of this file): HELP and TYPE lines, one family after
/// the other, ending with a newline. Takes snapshot.decide_mutex.
std::string render_cluster_metrics(const Snapshot& snapshot, const MetricsOptions& options);

/// The cluster cache's own figures (CacheCounters, live/cluster_cache.h) in the text format:
///   gpufleet_cache_watch_events_total{kind,type}   counter, watch events applied (kind Node or Pod;
///                                                  type ADDED, MODIFIED, DELETED, BOOKMARK)
///   gpufleet_cache_relists_total{kind}             counter, lists after the first (e.g. after 410 Gone)
///   gpufleet_cache_full_builds_total               counter, snapshots built from every object at once
///   gpufleet_cache_scheduler_setups_total          counter, schedulers set up again (a new GPU model, a relist's Node changes)
///   gpufleet_cache_event_lag_seconds               histogram, an event's arrival to the state holding it
std::string render_cache_metrics(const CacheCounters& counters);

}  // namespace gpufleet::live
