#include "sim/engine/fleet.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "model/node_pool.h"
#include "model/resources.h"
#include "sim/node_gate.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

}  // namespace

Fleet::Fleet(const ClusterConfig& cluster, EventLoop& loop, uint64_t spot_seed)
    : cluster_(cluster), loop_(loop), spot_rng_(static_cast<int64_t>(spot_seed)) {
  std::vector<Node> all;
  for (size_t p = 0; p < cluster_.pools.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    NodePool full = sp.pool;
    full.node_count = full.max_nodes;
    full.min_nodes = 0;
    PoolRecord pool;
    const std::string capacity(capacity_type_name(sp.settings.capacity_type));
    for (Node& node : expand_pool(full)) {
      node.labels.emplace_back(kCapacityTypeLabel, capacity);
      pool.nodes.push_back(static_cast<NodeId>(all.size()));
      all.push_back(std::move(node));
      NodeRecord record;
      record.pool = static_cast<uint32_t>(p);
      nodes_.push_back(std::move(record));
    }
    pools_.push_back(std::move(pool));
    NodePool one = sp.pool;
    one.node_count = 1;
    one.min_nodes = 0;
    one.max_nodes = std::max(one.max_nodes, 1);
    Node t = expand_pool(one).front();
    t.name = sp.pool.name + "-template";
    t.labels.emplace_back(kCapacityTypeLabel, capacity);
    templates_.push_back(std::move(t));
  }
  state_ = std::make_unique<ClusterState>(std::move(all));
  gate_ = std::make_shared<NodeGate>(state_->node_count());

  const auto node_name = [this](uint32_t n) { return state_->node(n).name; };
  node_ready_ = loop_.register_event("node-ready", [this](const Event& e) { on_ready_event(e); }, node_name);
  spot_notice_ = loop_.register_event("spot-notice", [this](const Event& e) { on_notice_event(e); }, node_name);
  spot_reclaim_ = loop_.register_event("spot-reclaim", [this](const Event& e) { on_reclaim_event(e); }, node_name);
}

Fleet::~Fleet() = default;

void Fleet::start() {
  for (size_t p = 0; p < pools_.size(); ++p)
    for (int32_t i = 0; i < cluster_.pools[p].pool.node_count; ++i) launch_node(pools_[p].nodes[static_cast<size_t>(i)], 0, true);
}

int32_t Fleet::launch(size_t p, int32_t count, double t) {
  int32_t launched = 0;
  for (NodeId n : pools_[p].nodes) {
    if (launched == count) break;
    if (nodes_[n].phase != NodePhase::kAbsent) continue;
    launch_node(n, t, false);
    ++launched;
  }
  return launched;
}

void Fleet::launch_node(NodeId n, double t, bool ready_now) {
  NodeRecord& node = nodes_[n];
  PoolRecord& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  ++node.incarnation;
  ++pool.live;
  live_gpu_capacity_milli_ += int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  for (NodeListener* l : listeners_) l->on_node_launched(n, t);
  if (ready_now) {
    make_ready(n, t);
  } else {
    node.phase = NodePhase::kProvisioning;
    ++pool.provisioning;
    loop_.schedule(t + sp.settings.provision_s, node_ready_, n, node.incarnation);
  }
}

void Fleet::make_ready(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  const SimPool& sp = cluster_.pools[node.pool];
  node.phase = NodePhase::kReady;
  node.last_pod_change_s = t;
  gate_->set_schedulable(n, true);
  if (sp.settings.capacity_type == CapacityType::kSpot && sp.settings.spot_interruptions_per_hour > 0) {
    // Exponential time to interruption by inversion: -ln(1 - U) / rate, U uniform in [0, 1).
    const double hours = -std::log(1.0 - spot_rng_.float64()) / sp.settings.spot_interruptions_per_hour;
    const double notice = t + hours * kSecondsPerHour;
    if (notice <= loop_.horizon_s()) loop_.schedule(notice, spot_notice_, n, node.incarnation);
  }
}

void Fleet::remove(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  PoolRecord& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  if (!node.pods.empty()) throw std::logic_error("removing a node that still has pods");
  if (node.phase == NodePhase::kProvisioning) --pool.provisioning;
  --pool.live;
  live_gpu_capacity_milli_ -= int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  node.phase = NodePhase::kAbsent;
  ++node.incarnation;  // stale events of this life are ignored
  gate_->set_schedulable(n, false);
  for (NodeListener* l : listeners_) l->on_node_removed(n, t);
}

void Fleet::interrupt(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase != NodePhase::kReady) return;
  ++interruptions_;
  node.phase = NodePhase::kCordoned;
  gate_->set_schedulable(n, false);
  for (NodeListener* l : listeners_) l->on_node_interrupted(n, t);
  loop_.schedule(t + cluster_.pools[node.pool].settings.spot_notice_s, spot_reclaim_, n, node.incarnation);
}

void Fleet::cordon(NodeId n) {
  nodes_[n].phase = NodePhase::kCordoned;
  gate_->set_schedulable(n, false);
}

void Fleet::uncordon(NodeId n) {
  nodes_[n].phase = NodePhase::kReady;
  gate_->set_schedulable(n, true);
}

void Fleet::on_ready_event(const Event& e) {
  NodeRecord& node = nodes_[e.subject];
  if (node.incarnation != e.generation || node.phase != NodePhase::kProvisioning) return;
  --pools_[node.pool].provisioning;
  make_ready(e.subject, e.time_s);
  for (NodeListener* l : listeners_) l->on_node_ready(e.subject, e.time_s);
}

void Fleet::on_notice_event(const Event& e) {
  if (nodes_[e.subject].incarnation != e.generation) return;
  interrupt(e.subject, e.time_s);
}

void Fleet::on_reclaim_event(const Event& e) {
  const NodeRecord& node = nodes_[e.subject];
  if (node.incarnation != e.generation || node.phase != NodePhase::kCordoned) return;
  remove(e.subject, e.time_s);
}

void Fleet::bind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t) {
  state_->allocate(n, pod, devices);
  NodeRecord& node = nodes_[n];
  node.pods.push_back(id);
  node.last_pod_change_s = t;
  if (not_safe_to_evict) ++node.not_safe_to_evict;
}

void Fleet::unreserve(const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict) {
  state_->release(n, pod);
  if (not_safe_to_evict) --nodes_[n].not_safe_to_evict;
}

void Fleet::unbind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t) {
  unreserve(pod, n, devices, not_safe_to_evict);
  NodeRecord& node = nodes_[n];
  node.pods.erase(std::find(node.pods.begin(), node.pods.end(), id));
  node.last_pod_change_s = t;
}

void Fleet::undo_bind(const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double last_pod_change_s) {
  unreserve(pod, n, devices, not_safe_to_evict);
  NodeRecord& node = nodes_[n];
  node.pods.pop_back();
  node.last_pod_change_s = last_pod_change_s;
}

std::unique_ptr<sched::Scheduler> Fleet::make_scheduler(sched::Policy policy) const {
  std::vector<uint32_t> rank(state_->node_count());
  std::iota(rank.begin(), rank.end(), 0u);
  return std::make_unique<sched::Scheduler>(gate_policy(std::move(policy), gate_), std::move(rank));
}

void Fleet::prepare_decision(sched::Scheduler& scheduler, const Pod& pod) const {
  gate_->learning = false;
  scheduler.observe(pod, *state_);  // drops the scheduler's cache if node lifecycles changed (node_gate.h)
  gate_->learning = true;
}

void Fleet::report(SimResult& result) const { result.spot_interruptions = interruptions_; }

}  // namespace gpufleet::sim
