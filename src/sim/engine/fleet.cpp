#include "sim/engine/fleet.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/node_pool.h"
#include "model/resources.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

}  // namespace

Fleet::Fleet(const ClusterConfig& cluster, EventLoop& loop, uint64_t spot_seed)
    : cluster_(cluster), loop_(loop), state_(std::make_unique<ClusterState>()), spot_rng_(static_cast<int64_t>(spot_seed)) {
  for (size_t p = 0; p < cluster_.pools.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    NodePool one = sp.pool;
    one.node_count = 1;
    one.min_nodes = 0;
    one.max_nodes = std::max(one.max_nodes, 1);
    Node t = expand_pool(one).front();
    t.name = sp.pool.name + "-template";
    t.labels.emplace_back(kCapacityTypeLabel, std::string(capacity_type_name(sp.settings.capacity_type)));
    PoolRecord pool;
    const auto first = static_cast<NodeId>(nodes_.size());
    for (int32_t i = 0; i < sp.pool.max_nodes; ++i) {
      pool.nodes.push_back(static_cast<NodeId>(nodes_.size()));
      NodeRecord record;
      record.pool = static_cast<uint32_t>(p);
      nodes_.push_back(std::move(record));
    }
    if (sp.pool.max_nodes > 0) {
      // Model ids in pool order, as a state holding every pool's nodes would number them.
      const int32_t model = state_->register_gpu_model(t.gpu_model);
      outlook_.ranges.push_back(
          {first, static_cast<uint32_t>(sp.pool.max_nodes), model, t.gpu_count, t.cpu_milli, t.memory_bytes});
    }
    pools_.push_back(std::move(pool));
    templates_.push_back(std::move(t));
  }

  const auto node_name = [this](uint32_t n) { return name(n); };
  node_ready_ = loop_.register_event("node-ready", [this](const Event& e) { on_ready_event(e); }, node_name);
  spot_notice_ = loop_.register_event("spot-notice", [this](const Event& e) { on_notice_event(e); }, node_name);
  spot_reclaim_ = loop_.register_event("spot-reclaim", [this](const Event& e) { on_reclaim_event(e); }, node_name);
}

std::string Fleet::name(NodeId n) const {
  const PoolRecord& pool = pools_[nodes_[n].pool];
  return pool_node_name(cluster_.pools[nodes_[n].pool].pool.name, static_cast<int32_t>(n - pool.nodes.front()),
                        static_cast<int32_t>(pool.nodes.size()));
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
  Node added = templates_[node.pool];
  added.name = name(n);
  set_topology_labels(sp.pool, static_cast<int32_t>(n - pools_[node.pool].nodes.front()), added.labels);
  state_->add_node(std::move(added), n);
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
  else state_->remove_node(n);  // ready or cordoned: in the state since Ready
  --pool.live;
  live_gpu_capacity_milli_ -= int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  node.phase = NodePhase::kAbsent;
  ++node.incarnation;  // stale events of this life are ignored
  for (NodeListener* l : listeners_) l->on_node_removed(n, t);
}

void Fleet::interrupt(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase != NodePhase::kReady) return;
  ++interruptions_;
  node.phase = NodePhase::kCordoned;
  state_->set_unschedulable(n, true);
  for (NodeListener* l : listeners_) l->on_node_interrupted(n, t);
  loop_.schedule(t + cluster_.pools[node.pool].settings.spot_notice_s, spot_reclaim_, n, node.incarnation);
}

void Fleet::cordon(NodeId n) {
  nodes_[n].phase = NodePhase::kCordoned;
  state_->set_unschedulable(n, true);
}

void Fleet::uncordon(NodeId n) {
  nodes_[n].phase = NodePhase::kReady;
  state_->set_unschedulable(n, false);
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
  // A pod that tolerates node.kubernetes.io/unschedulable may have been bound after the notice
  // (kube's NodeUnschedulable admits it): the reclaimed node takes it down too.
  if (!node.pods.empty())
    for (NodeListener* l : listeners_) l->on_node_interrupted(e.subject, e.time_s);
  remove(e.subject, e.time_s);
}

void Fleet::bind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t) {
  state_->allocate(n, pod, devices);
  NodeRecord& node = nodes_[n];
  node.pods.push_back(id);
  node.last_pod_change_s = t;
  if (not_safe_to_evict) ++node.not_safe_to_evict;
}

void Fleet::unreserve(const Pod& pod, NodeId n, const DeviceAssignment& /*devices*/, bool not_safe_to_evict) {
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

std::unique_ptr<sched::Scheduler> Fleet::make_scheduler(sched::Profile policy) const {
  return std::make_unique<sched::Scheduler>(std::move(policy), std::vector<uint32_t>{});  // ranks = node ids
}

void Fleet::report(SimResult& result) const { result.spot_interruptions = interruptions_; }

}  // namespace gpufleet::sim
