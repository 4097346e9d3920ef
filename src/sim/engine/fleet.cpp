#include "sim/engine/fleet.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "model/node_pool.h"
#include "sched/daemon_set.h"
#include "model/resources.h"
#include "sim/results/sim_result.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

// The reason a failed launch reports: EC2's error code for a launch without capacity (AWS EC2 API
// reference, "Error codes": InsufficientInstanceCapacity).
constexpr const char* kNoCapacityReason = "InsufficientInstanceCapacity";

// kubernetes.io/hostname = the node's name, as the kubelet sets it (expand_pool set it to the name
// of the node it made, which the fleet renames).
void set_hostname_label(Node& node) {
  for (auto& [key, value] : node.labels)
    if (key == kNodeHostnameLabel) value = node.name;
}

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
    if (!sp.settings.resource_slices.empty()) {  // GPUs published by the DRA driver: no nvidia.com/gpu
      t.gpu_count = 0;
      t.gpu_numa_node.clear();
    }
    t.name = sp.pool.name + "-template";
    set_hostname_label(t);
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
    template_daemon_pods_.push_back(sched::daemon_set_pods(cluster_.daemon_sets, std::span<const Node>(&t, 1)));
    templates_.push_back(std::move(t));
  }
  std::vector<std::string> template_names;
  for (const Node& t : templates_) template_names.push_back(t.name);
  dra_ = fleet_dra_catalog(cluster_, &template_names);
  if (dra_) {
    state_->set_dra_catalog(dra_);
    dra_shares_ = std::make_unique<DraGpuShares>(*dra_);
    dra_node_slices_ = std::make_unique<DraNodeSlices>(*dra_);
  }

  const auto node_name = [this](uint32_t n) { return name(n); };
  node_ready_ = loop_.register_event("node-ready", [this](const Event& e) { on_ready_event(e); }, node_name);
  spot_notice_ = loop_.register_event("spot-notice", [this](const Event& e) { on_notice_event(e); }, node_name);
  spot_reclaim_ = loop_.register_event("spot-reclaim", [this](const Event& e) { on_reclaim_event(e); }, node_name);
  launch_failed_ = loop_.register_event("launch-failed", [this](const Event& e) { on_launch_failed_event(e); }, node_name);
  gpus_advertised_ =
      loop_.register_event("gpus-advertised", [this](const Event& e) { on_gpus_advertised_event(e); }, node_name);
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
  node.launched_s = t;
  node.reclaim_at_s = -1;
  if (!ready_now && launch_blocked_ && launch_blocked_(node.pool, t)) {
    // The cloud refuses the launch: the node is provisioning until the failure is known, never
    // billed and never Ready.
    node.phase = NodePhase::kProvisioning;
    ++pool.provisioning;
    const double delay_s = node.pool < pool_launch_failure_s_.size() && pool_launch_failure_s_[node.pool] >= 0
                               ? pool_launch_failure_s_[node.pool]
                               : launch_failure_s_;
    loop_.schedule(t + delay_s, launch_failed_, n, node.incarnation);
    return;
  }
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
  set_hostname_label(added);
  state_->add_node(std::move(added), n);
  start_daemon_pods(n);
  const bool advertised_later = sp.settings.gpu_advertise_delay_s > 0 && templates_[node.pool].gpu_count > 0;
  node.gpus_advertised = !advertised_later;
  if (advertised_later) {
    for (int32_t g = 0; g < sp.pool.gpus_per_node; ++g) withhold_gpu(n, g, GpuWithheld::kNotAdvertised, t);
    loop_.schedule(t + sp.settings.gpu_advertise_delay_s, gpus_advertised_, n, node.incarnation);
  }
  if (sp.settings.capacity_type == CapacityType::kSpot && sp.settings.spot_interruptions_per_hour > 0) {
    // Exponential time to interruption by inversion: -ln(1 - U) / rate, U uniform in [0, 1).
    const double hours = -std::log(1.0 - spot_rng_.float64()) / sp.settings.spot_interruptions_per_hour;
    const double notice = t + hours * kSecondsPerHour;
    if (notice <= loop_.horizon_s()) loop_.schedule(notice, spot_notice_, n, node.incarnation);
  }
}

void Fleet::remove(NodeId n, double t, NodeRemoval cause) {
  NodeRecord& node = nodes_[n];
  PoolRecord& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  if (!node.pods.empty()) throw std::logic_error("removing a node that still has pods");
  if (node.phase == NodePhase::kProvisioning) {
    --pool.provisioning;
  } else {  // ready, cordoned or not ready: in the state since Ready
    // The withheld GPUs' placeholders are reservations in the state: release them first.
    for (size_t g = 0; g < node.withheld.size(); ++g) {
      if (node.withheld[g] == GpuWithheld::kNone) continue;
      DeviceAssignment devices;
      state_->release(n, withheld_placeholder(n, static_cast<int32_t>(g), devices));
      withheld_gpu_milli_ -= node.withheld_milli[g];
      --withheld_gpu_count_;
    }
    node.withheld.clear();
    node.withheld_milli.clear();
    stop_daemon_pods(n);
    state_->remove_node(n);
    node.plugin_down = false;
  }
  --pool.live;
  live_gpu_capacity_milli_ -= int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  switch (cause) {
    case NodeRemoval::kScaleDown: ++removals_.scale_down; break;
    case NodeRemoval::kConsolidation: ++removals_.consolidation; break;
    case NodeRemoval::kSpotReclaim: ++removals_.spot_reclaim; break;
    case NodeRemoval::kNotReadyInTime: ++removals_.not_ready_in_time; break;
    case NodeRemoval::kOther: ++removals_.other; break;
  }
  node.phase = NodePhase::kAbsent;
  ++node.incarnation;  // stale events of this life are ignored
  for (NodeListener* l : listeners_) l->on_node_removed(n, t);
}

// The daemon controller creates a pod of each DaemonSet that should run on the node (sched/daemon_set.h)
// when it is Ready; the scheduler binds it there at once if it fits (the node is empty), else it
// stays pending (counted). DaemonSets ask for no devices (readers/sim/sim_pools.h).
void Fleet::start_daemon_pods(NodeId n) {
  NodeRecord& node = nodes_[n];
  node.daemon_sets.clear();
  node.daemon_cpu_milli = 0;
  node.daemon_memory_bytes = 0;
  for (size_t i = 0; i < cluster_.daemon_sets.size(); ++i) {
    const DaemonSet& ds = cluster_.daemon_sets[i];
    if (!sched::daemon_set_should_run(ds, state_->node(n))) continue;
    const Pod pod = sched::daemon_set_pod(ds, state_->node(n).name);
    if (!state_->can_allocate(n, pod, {})) {
      ++daemon_pods_pending_;
      continue;
    }
    state_->allocate(n, pod, {});
    node.daemon_sets.push_back(static_cast<uint32_t>(i));
    node.daemon_cpu_milli += pod.cpu_milli;
    node.daemon_memory_bytes += pod.memory_bytes;
  }
}

void Fleet::stop_daemon_pods(NodeId n) {
  NodeRecord& node = nodes_[n];
  for (uint32_t i : node.daemon_sets) state_->release(n, sched::daemon_set_pod(cluster_.daemon_sets[i], state_->node(n).name));
  node.daemon_sets.clear();
  node.daemon_cpu_milli = 0;
  node.daemon_memory_bytes = 0;
}

void Fleet::interrupt(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase != NodePhase::kReady) return;
  ++interruptions_;
  ++pools_[node.pool].notices;
  node.phase = NodePhase::kCordoned;
  node.reclaim_at_s = t + cluster_.pools[node.pool].settings.spot_notice_s;
  state_->set_unschedulable(n, true);
  for (NodeListener* l : listeners_) l->on_spot_notice(n, t, node.reclaim_at_s);
  for (NodeListener* l : listeners_) l->on_node_interrupted(n, t);
  loop_.schedule(node.reclaim_at_s, spot_reclaim_, n, node.incarnation);
}

void Fleet::cordon(NodeId n) {
  if (nodes_[n].phase == NodePhase::kNotReady) {
    nodes_[n].cordoned_before_failure = true;
    return;
  }
  nodes_[n].phase = NodePhase::kCordoned;
  state_->set_unschedulable(n, true);
}

void Fleet::uncordon(NodeId n) {
  if (nodes_[n].phase == NodePhase::kNotReady) {
    nodes_[n].cordoned_before_failure = false;
    return;
  }
  nodes_[n].phase = NodePhase::kReady;
  state_->set_unschedulable(n, false);
  notify_capacity(n, loop_.now_s());
}

void Fleet::notify_capacity(NodeId n, double t) {
  for (NodeListener* l : listeners_) l->on_capacity_returned(n, t);
}

// ---- health

Pod Fleet::withheld_placeholder(NodeId n, int32_t g, DeviceAssignment& devices) const {
  const Node& node = state_->node(n);
  Pod pod;
  pod.name = fmt::format("gpufleet-withheld-gpu-{}", g);
  pod.namespace_name = "kube-system";
  pod.priority = INT32_MAX;  // never a preemption victim
  devices = {};
  switch (state_->gpu_kind(n, g)) {
    case GpuKind::kPlain:
      pod.num_gpu = 1;
      pod.gpu_milli = kGpuMilliPerGpu;
      devices.gpus = {g};
      break;
    case GpuKind::kTimeSliced: {
      const int32_t replicas = node.time_slicing->replicas;
      if (node.time_slicing->renamed) {
        pod.shared_replicas = replicas;
        devices.shared_replicas.assign(static_cast<size_t>(replicas), g);
      } else {
        pod.num_gpu = replicas;
        pod.gpu_milli = kGpuMilliPerGpu;
        devices.gpus.assign(static_cast<size_t>(replicas), g);
      }
      break;
    }
    case GpuKind::kMig: {
      std::map<std::string, int> counts;
      for (const MigInstance& i : node.mig[static_cast<size_t>(g)].instances) {
        devices.mig.push_back({g, i.start, i.profile});
        ++counts[i.profile];
      }
      for (const auto& [profile, count] : counts) pod.mig_requests.push_back({profile, count});
      break;
    }
  }
  return pod;
}

void Fleet::withhold_gpu(NodeId n, int32_t g, GpuWithheld why, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase == NodePhase::kAbsent || node.phase == NodePhase::kProvisioning || why == GpuWithheld::kNone) return;
  const int32_t gpus = cluster_.pools[node.pool].pool.gpus_per_node;
  if (g < 0 || g >= gpus) throw std::invalid_argument(fmt::format("node {} has no GPU {}", name(n), g));
  if (templates_[node.pool].gpu_count == 0) return;  // DRA devices: no device-plugin GPU to withhold
  if (node.withheld.empty()) {
    node.withheld.assign(static_cast<size_t>(gpus), GpuWithheld::kNone);
    node.withheld_milli.assign(static_cast<size_t>(gpus), 0);
  }
  GpuWithheld& state = node.withheld[static_cast<size_t>(g)];
  if (state != GpuWithheld::kNone) {
    if (why == GpuWithheld::kUnhealthy) state = why;
    return;
  }
  for (NodeListener* l : listeners_) l->on_gpu_lost(n, g, t);
  if (state != GpuWithheld::kNone) {  // the pods leaving withheld it already (a device plugin that is down)
    if (why == GpuWithheld::kUnhealthy) state = why;
    return;
  }
  DeviceAssignment devices;
  const Pod placeholder = withheld_placeholder(n, g, devices);
  const int64_t before = state_->gpu_used_milli();
  state_->allocate(n, placeholder, devices);  // throws InvariantViolation if a pod still holds it
  const auto milli = static_cast<int32_t>(state_->gpu_used_milli() - before);
  node.withheld_milli[static_cast<size_t>(g)] = milli;
  withheld_gpu_milli_ += milli;
  ++withheld_gpu_count_;
  state = why;
}

int32_t Fleet::provisioning_total() const {
  int32_t total = 0;
  for (const PoolRecord& p : pools_) total += p.provisioning;
  return total;
}

void Fleet::restore_gpu(NodeId n, int32_t g, double t) {
  NodeRecord& node = nodes_[n];
  if (node.withheld.empty() || g < 0 || static_cast<size_t>(g) >= node.withheld.size() ||
      node.withheld[static_cast<size_t>(g)] == GpuWithheld::kNone)
    return;
  DeviceAssignment devices;
  state_->release(n, withheld_placeholder(n, g, devices));
  withheld_gpu_milli_ -= node.withheld_milli[static_cast<size_t>(g)];
  --withheld_gpu_count_;
  node.withheld_milli[static_cast<size_t>(g)] = 0;
  node.withheld[static_cast<size_t>(g)] = GpuWithheld::kNone;
  notify_capacity(n, t);
}

GpuWithheld Fleet::gpu_withheld(NodeId n, int32_t g) const {
  const NodeRecord& node = nodes_[n];
  if (node.withheld.empty() || g < 0 || static_cast<size_t>(g) >= node.withheld.size()) return GpuWithheld::kNone;
  return node.withheld[static_cast<size_t>(g)];
}

int32_t Fleet::withheld_gpus(NodeId n, GpuWithheld why) const {
  int32_t count = 0;
  for (GpuWithheld w : nodes_[n].withheld)
    if (w != GpuWithheld::kNone && (why == GpuWithheld::kNone || w == why)) ++count;
  return count;
}

void Fleet::fail_node(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase != NodePhase::kReady && node.phase != NodePhase::kCordoned) return;
  node.cordoned_before_failure = node.phase == NodePhase::kCordoned;
  node.phase = NodePhase::kNotReady;
  state_->set_unschedulable(n, true);
  for (NodeListener* l : listeners_) l->on_node_interrupted(n, t);
}

void Fleet::recover_node(NodeId n, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase != NodePhase::kNotReady) return;
  node.phase = node.cordoned_before_failure ? NodePhase::kCordoned : NodePhase::kReady;
  if (node.phase == NodePhase::kReady) state_->set_unschedulable(n, false);
  node.last_pod_change_s = t;
  notify_capacity(n, t);
}

void Fleet::set_launch_gate(std::function<bool(size_t pool, double t)> blocked, double launch_failure_s) {
  launch_blocked_ = std::move(blocked);
  launch_failure_s_ = launch_failure_s;
}

void Fleet::set_launch_failure_s(size_t p, double launch_failure_s) {
  if (pool_launch_failure_s_.size() < pools_.size()) pool_launch_failure_s_.resize(pools_.size(), -1);
  pool_launch_failure_s_.at(p) = launch_failure_s;
}

void Fleet::on_launch_failed_event(const Event& e) {
  NodeRecord& node = nodes_[e.subject];
  if (node.incarnation != e.generation || node.phase != NodePhase::kProvisioning) return;
  --pools_[node.pool].provisioning;
  node.phase = NodePhase::kAbsent;
  ++node.incarnation;
  ++launch_failures_;
  const std::string reason = kNoCapacityReason;
  for (NodeListener* l : listeners_) l->on_launch_failed(e.subject, e.time_s, reason);
}

void Fleet::set_device_plugin_down(NodeId n, bool down, double t) {
  NodeRecord& node = nodes_[n];
  if (node.phase == NodePhase::kAbsent || node.phase == NodePhase::kProvisioning || node.plugin_down == down) return;
  node.plugin_down = down;
  if (down) {
    withhold_free_gpus(n, t);
    return;
  }
  if (!node.gpus_advertised) return;  // the late advertisement (gpus-advertised) restores them
  for (size_t g = 0; g < node.withheld.size(); ++g)
    if (node.withheld[g] == GpuWithheld::kNotAdvertised) restore_gpu(n, static_cast<int32_t>(g), t);
}

void Fleet::withhold_free_gpus(NodeId n, double t) {
  const int32_t gpus = templates_[nodes_[n].pool].gpu_count;
  for (int32_t g = 0; g < gpus; ++g)
    if (gpu_withheld(n, g) == GpuWithheld::kNone && state_->gpu_used_milli(n, g) == 0)
      withhold_gpu(n, g, GpuWithheld::kNotAdvertised, t);
}

void Fleet::on_gpus_advertised_event(const Event& e) {
  NodeRecord& node = nodes_[e.subject];
  if (node.incarnation != e.generation) return;
  node.gpus_advertised = true;
  if (node.plugin_down) return;
  for (size_t g = 0; g < node.withheld.size(); ++g)
    if (node.withheld[g] == GpuWithheld::kNotAdvertised) restore_gpu(e.subject, static_cast<int32_t>(g), e.time_s);
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
  if (node.incarnation != e.generation || (node.phase != NodePhase::kCordoned && node.phase != NodePhase::kNotReady))
    return;
  // A pod that tolerates node.kubernetes.io/unschedulable may have been bound after the notice
  // (kube's NodeUnschedulable admits it): the reclaimed node takes it down too.
  if (!node.pods.empty())
    for (NodeListener* l : listeners_) l->on_node_interrupted(e.subject, e.time_s);
  remove(e.subject, e.time_s, NodeRemoval::kSpotReclaim);
}

void Fleet::bind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t) {
  std::vector<const DraClaimAllocation*> fresh;  // claims this bind allocates
  for (const DraClaimAllocation& c : devices.claims)
    if (state_->dra_claim(c.claim) == nullptr) fresh.push_back(&c);
  state_->allocate(n, pod, devices);
  for (const DraClaimAllocation* c : fresh) {
    ++dra_claims_allocated_;
    dra_used_milli_ += dra_shares_ ? dra_shares_->allocation_milli(c->allocation) : 0;
  }
  NodeRecord& node = nodes_[n];
  node.pods.push_back(id);
  node.last_pod_change_s = t;
  if (not_safe_to_evict) ++node.not_safe_to_evict;
}

void Fleet::unreserve(const Pod& pod, NodeId n, const DeviceAssignment& /*devices*/, bool not_safe_to_evict, bool undo) {
  const auto released = state_->release(n, pod);
  for (const DraClaimAllocation& c : released.claims)
    if (state_->dra_claim(c.claim) == nullptr) {  // its last pod: the claim is deallocated (and, a template's, deleted)
      // Undone (a gang rolled back, last bind first): the claim was allocated by a bind of the same
      // gang, which never ran, so that allocation is taken back instead of counting a deallocation.
      if (undo) --dra_claims_allocated_;
      else ++dra_claims_deallocated_;
      dra_used_milli_ -= dra_shares_ ? dra_shares_->allocation_milli(c.allocation) : 0;
    }
  if (not_safe_to_evict) --nodes_[n].not_safe_to_evict;
}

void Fleet::unbind(uint32_t id, const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double t) {
  unreserve(pod, n, devices, not_safe_to_evict);
  NodeRecord& node = nodes_[n];
  node.pods.erase(std::find(node.pods.begin(), node.pods.end(), id));
  node.last_pod_change_s = t;
  if (node.plugin_down) withhold_free_gpus(n, t);
}

void Fleet::undo_bind(const Pod& pod, NodeId n, const DeviceAssignment& devices, bool not_safe_to_evict, double last_pod_change_s) {
  unreserve(pod, n, devices, not_safe_to_evict, /*undo=*/true);
  NodeRecord& node = nodes_[n];
  node.pods.pop_back();
  node.last_pod_change_s = last_pod_change_s;
}

int64_t Fleet::own_claims_gpu_milli(const Pod& pod, const DeviceAssignment& devices) const {
  if (!dra_shares_) return 0;
  int64_t milli = 0;
  for (const PodResourceClaim& pc : pod.resource_claims) {
    if (pc.resource_claim_template_name.empty()) continue;
    const std::string key = dra_claim_key(pod.namespace_name, pod.name, pc);
    for (const DraClaimAllocation& c : devices.claims)
      if (c.claim == key) milli += dra_shares_->allocation_milli(c.allocation);
  }
  return milli;
}

std::unique_ptr<sched::Scheduler> Fleet::make_scheduler(sched::Profile policy) const {
  return std::make_unique<sched::Scheduler>(std::move(policy), std::vector<uint32_t>{});  // ranks = node ids
}

void Fleet::report(SimResult& result) const {
  if (dra_) {
    result.dra_report = true;
    result.dra_claims_allocated = dra_claims_allocated_;
    result.dra_claims_deallocated = dra_claims_deallocated_;
    result.dra_claims_allocated_at_end = static_cast<int64_t>(state_->dra_claims().size());
  }
  result.spot_interruptions = interruptions_;
  result.launch_failures = launch_failures_;
  result.nodes_removed = removals_;
}

}  // namespace gpufleet::sim
