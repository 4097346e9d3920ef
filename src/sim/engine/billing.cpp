#include "sim/engine/billing.h"

#include <algorithm>

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

}  // namespace

Billing::Billing(const ClusterConfig& cluster, const Fleet& fleet)
    : cluster_(cluster), fleet_(fleet), nodes_(fleet.node_count()) {
  for (const SimPool& p : cluster_.pools) {
    PoolBook book;
    book.split = price_split(p.pool);
    pools_.push_back(book);
    cost_by_pool_[p.pool.name] = 0;
  }
}

void Billing::on_node_launched(NodeId n, double t) {
  NodeBook& node = nodes_[n];
  const size_t p = fleet_.pool_of(n);
  const SimPool& sp = cluster_.pools[p];
  node.billing_since_s = t;
  node.covered = pools_[p].covered < sp.settings.reserved_nodes;
  node.price_usd_per_hour = node_price_usd_per_hour(sp, node.covered);
  if (node.covered) ++pools_[p].covered;
  live_price_usd_per_hour_ += node.price_usd_per_hour;
}

void Billing::on_node_removed(NodeId n, double t) {
  NodeBook& node = nodes_[n];
  const size_t p = fleet_.pool_of(n);
  close_segment(n, t);
  if (node.covered) --pools_[p].covered;
  live_price_usd_per_hour_ = zero_if_residue(live_price_usd_per_hour_ - node.price_usd_per_hour);
  const bool was_covered = node.covered;
  node.covered = false;
  if (was_covered) pass_coverage(p, t);
}

void Billing::close_segment(NodeId n, double t) {
  NodeBook& node = nodes_[n];
  const size_t p = fleet_.pool_of(n);
  const SimPool& sp = cluster_.pools[p];
  NodeLifetime life;
  life.node = fleet_.name(n);
  life.pool = sp.pool.name;
  life.capacity_type = billed_capacity_type(sp, node.covered);
  life.start_s = node.billing_since_s;
  life.end_s = t;
  life.price_usd_per_hour = node.price_usd_per_hour;
  const double cost = (t - node.billing_since_s) / kSecondsPerHour * node.price_usd_per_hour;
  cost_by_pool_[life.pool] += cost;
  cost_by_capacity_type_[life.capacity_type] += cost;
  cost_usd_ += cost;
  if (node.covered) pools_[p].covered_s += t - node.billing_since_s;
  segments_.push_back(std::move(life));
}

// A reservation covers any running node of its pool (as AWS applies a reserved instance or savings
// plan to matching running instances every hour): when a covered node goes, the lowest live node
// not covered takes its place. Its billing segment closes at the on-demand price and a new one opens
// at the reserved price; its pods' chargeback rates follow.
void Billing::pass_coverage(size_t p, double t) {
  const SimPool& sp = cluster_.pools[p];
  for (NodeId m : fleet_.pool_nodes(p)) {
    NodeBook& node = nodes_[m];
    if (fleet_.phase(m) == NodePhase::kAbsent || node.covered) continue;
    close_segment(m, t);
    const double old_price = node.price_usd_per_hour;
    live_price_usd_per_hour_ = zero_if_residue(live_price_usd_per_hour_ - node.price_usd_per_hour);
    node.covered = true;
    ++pools_[p].covered;
    node.price_usd_per_hour = node_price_usd_per_hour(sp, true);
    live_price_usd_per_hour_ += node.price_usd_per_hour;
    node.billing_since_s = t;
    for (uint32_t q : fleet_.pods_on(m)) {
      Charge& c = charges_[q];
      book(c, old_price * c.share * (t - c.since_s) / kSecondsPerHour);
      c.since_s = t;
    }
    return;
  }
}

uint32_t Billing::namespace_id(const std::string& namespace_name) {
  const auto [it, inserted] = namespace_ids_.try_emplace(namespace_name, static_cast<uint32_t>(namespaces_.size()));
  if (inserted) {
    namespaces_.push_back(namespace_name);
    chargeback_usd_.push_back(0);
    charged_.push_back(0);
  }
  return it->second;
}

void Billing::book(Charge& c, double usd) {
  chargeback_usd_[c.ns] += usd;
  charged_[c.ns] = 1;
  c.booked_usd += usd;
}

void Billing::start_charge(uint32_t pod_id, const Pod& pod, uint32_t ns, NodeId n, double t, int64_t dra_gpu_milli) {
  if (pod_id >= charges_.size()) charges_.resize(pod_id + 1);
  const size_t p = fleet_.pool_of(n);
  Charge& c = charges_[pod_id];
  c.since_s = t;
  c.share = pod_price_share(cluster_.pools[p].pool, pools_[p].split, pod, dra_gpu_milli);
  c.node = n;
  c.ns = ns;
}

void Billing::stop_charge(uint32_t pod_id, double t) {
  Charge& c = charges_[pod_id];
  book(c, c.rate_usd_per_hour(nodes_) * (t - c.since_s) / kSecondsPerHour);
  c.node = sched::kNoNode;
}

bool Billing::removal_saves_money(NodeId n) const {
  const NodeBook& node = nodes_[n];
  if (!node.covered) return node.price_usd_per_hour > 0;
  const size_t p = fleet_.pool_of(n);
  return fleet_.live(p) > pools_[p].covered;
}

double Billing::added_price_usd_per_hour(size_t p, int32_t nodes) const {
  const SimPool& sp = cluster_.pools[p];
  const int32_t free_reserved = std::max(0, sp.settings.reserved_nodes - pools_[p].covered);
  const int32_t covered = std::min(free_reserved, nodes);
  return (nodes - covered) * node_price_usd_per_hour(sp, false);
}

double Billing::cost_rate_usd_per_hour() const {
  double reserved_unused_rate = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    if (sp.settings.reserved_nodes > 0)
      reserved_unused_rate += (sp.settings.reserved_nodes - pools_[p].covered) * *sp.pool.reserved_usd_per_hour;
  }
  return live_price_usd_per_hour_ + reserved_unused_rate;
}

void Billing::finish(double horizon_s, SimResult& result) {
  const double h = horizon_s;
  for (Charge& c : charges_)
    if (c.node != sched::kNoNode) book(c, c.rate_usd_per_hour(nodes_) * (h - c.since_s) / kSecondsPerHour);
  for (NodeId n = 0; n < fleet_.node_count(); ++n)
    if (fleet_.phase(n) != NodePhase::kAbsent) close_segment(n, h);
  double reserved_unused_usd = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    if (sp.settings.reserved_nodes == 0) continue;
    const double unused_h = (sp.settings.reserved_nodes * h - pools_[p].covered_s) / kSecondsPerHour;
    const double cost = zero_if_residue(unused_h * *sp.pool.reserved_usd_per_hour);  // all used: exactly 0
    cost_by_pool_[sp.pool.name] += cost;
    cost_by_capacity_type_["reserved"] += cost;
    cost_usd_ += cost;
    reserved_unused_usd += cost;
  }
  std::map<std::string, double> chargeback;
  for (size_t ns = 0; ns < namespaces_.size(); ++ns)
    if (charged_[ns]) chargeback[namespaces_[ns]] = chargeback_usd_[ns];
  double charged = 0;
  for (const auto& [ns, usd] : chargeback) charged += usd;
  result.cost_usd = cost_usd_;
  result.cost_by_pool = cost_by_pool_;
  result.cost_by_capacity_type = cost_by_capacity_type_;
  result.reserved_unused_usd = reserved_unused_usd;
  result.chargeback = std::move(chargeback);
  result.idle_cost_usd = zero_if_residue(cost_usd_ - charged);  // everything charged: 0, not -0.00
  result.nodes = std::move(segments_);
}

}  // namespace gpufleet::sim
