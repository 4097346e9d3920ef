// The simulator's books: what each node costs while it lives, which nodes the pools' reservations
// cover, and what each pod is charged (chargeback by namespace). The price rules and the
// attribution model are in sim/rules/cost.h; this module applies them over time. It hears node launches
// and removals from the fleet (NodeListener) and pod binds from the workloads (start_charge,
// stop_charge).
//
// Billing segments: a node is billed from its launch until its removal or the horizon, at its
// price; a segment also closes (and a new one opens) when the reservation starts to cover the
// node. Coverage: a launched node is covered if its pool has a free reservation slot; when a covered
// node goes, the lowest live uncovered node of the pool takes the slot, and the chargeback rates of
// its pods follow its new price. At the horizon the unused reservation hours are billed as well.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/framework/interface.h"
#include "inputs/sim/cluster_config.h"
#include "sim/rules/cost.h"
#include "sim/engine/fleet.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

class Billing final : public NodeListener {
 public:
  /// Books for the fleet's pools (every pool appears in cost_by_pool, 0 if unused). Add the billing
  /// to the fleet's listeners before the fleet starts.
  Billing(const ClusterConfig& cluster, const Fleet& fleet);

  // NodeListener: segments open at launch, close at removal.
  void on_node_launched(NodeId n, double t) override;
  void on_node_removed(NodeId n, double t) override;

  /// A small id for a namespace name, for start_charge (the same name gives the same id).
  uint32_t namespace_id(const std::string& namespace_name);
  /// Makes room for the charges of pod ids below `pods` (a hint; ids beyond it work too).
  void reserve_pods(size_t pods) { charges_.resize(std::max(charges_.size(), pods)); }
  /// Pod `pod_id` (the caller's id) with request `pod` was bound to node n at t: charged from t at
  /// the node's price x pod_price_share (sim/rules/cost.h) with `dra_gpu_milli`, the GPU share of the
  /// DRA devices it holds (Fleet::own_claims_gpu_milli), to namespace `ns` (from namespace_id).
  void start_charge(uint32_t pod_id, const Pod& pod, uint32_t ns, NodeId n, double t, int64_t dra_gpu_milli = 0);
  /// The pod was unbound at t: its charge since start_charge (or the last re-rate) is booked.
  void stop_charge(uint32_t pod_id, double t);
  /// Forgets a start_charge at the same instant (a gang rolled back): nothing is booked.
  void cancel_charge(uint32_t pod_id) { charges_[pod_id].node = sched::kNoNode; }

  /// USD booked for pod `pod_id` over all its binds so far (after finish(): up to the horizon).
  double pod_charged_usd(uint32_t pod_id) const { return pod_id < charges_.size() ? charges_[pod_id].booked_usd : 0; }
  /// USD per hour of node n now (reserved price while covered).
  double price_usd_per_hour(NodeId n) const { return nodes_[n].price_usd_per_hour; }
  bool covered(NodeId n) const { return nodes_[n].covered; }
  /// Whether removing node n lowers the bill: a node with a price, not covered; a covered node only
  /// if another live node of its pool, billed on demand, would take the reservation over.
  bool removal_saves_money(NodeId n) const;
  /// Marginal USD per hour of `nodes` new nodes of pool p: nodes a free reservation slot would cover
  /// cost nothing more, the others the pool's capacity type price.
  double added_price_usd_per_hour(size_t p, int32_t nodes) const;
  /// USD per hour now: the live nodes plus the unused reservation slots (the time series' rate).
  double cost_rate_usd_per_hour() const;

  /// Closes the books at the horizon: charges of bound pods, open segments, unused reservations;
  /// writes cost_usd, cost_by_pool, cost_by_capacity_type, chargeback, idle_cost_usd,
  /// reserved_unused_usd and nodes.
  void finish(double horizon_s, SimResult& result);

 private:
  struct NodeBook {
    bool covered = false;
    double price_usd_per_hour = 0;
    double billing_since_s = 0;
  };
  struct PoolBook {
    int32_t covered = 0;     // live nodes billed against the reservation
    double covered_s = 0;    // node-seconds billed against the reservation (closed segments)
    PriceSplit split;
  };
  // A bound pod's charge: (node price x share) USD per hour since since_s. A node's price changes only
  // when coverage passes to it, and that books its pods' charges first.
  struct Charge {
    double since_s = 0;      // booked up to here
    double share = 0;        // pod_price_share on its node
    NodeId node = sched::kNoNode;  // sched::kNoNode: not bound
    uint32_t ns = 0;
    double booked_usd = 0;   // everything booked for this pod id so far
    double rate_usd_per_hour(const std::vector<NodeBook>& nodes) const { return nodes[node].price_usd_per_hour * share; }
  };
  void close_segment(NodeId n, double t);
  void pass_coverage(size_t p, double t);
  void book(Charge& c, double usd);

  const ClusterConfig& cluster_;
  const Fleet& fleet_;
  std::vector<NodeBook> nodes_;
  std::vector<PoolBook> pools_;
  std::vector<Charge> charges_;  // by pod id
  std::unordered_map<std::string, uint32_t> namespace_ids_;
  std::vector<std::string> namespaces_;
  std::vector<double> chargeback_usd_;  // by namespace id
  std::vector<uint8_t> charged_;        // by namespace id: booked at least once
  double live_price_usd_per_hour_ = 0;
  double cost_usd_ = 0;
  std::map<std::string, double> cost_by_pool_;
  std::map<std::string, double> cost_by_capacity_type_;
  std::vector<NodeLifetime> segments_;
};

}  // namespace gpufleet::sim
