#include "sim/engine/units.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <stdexcept>

#include <fmt/format.h>

#include "model/resources.h"
#include "sched/fit_error.h"
#include "sched/gang_placement.h"
#include "sched/topology_domains.h"
#include "sim/rules/checkpointing.h"
#include "sim/rules/cost.h"
#include "sim/engine/metrics.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;

bool has_checkpoint_costs(const WorkloadSpec& s) {
  return s.kind == WorkloadKind::kJob && (s.checkpoint_cost_s > 0 || s.checkpoint_on_notice);
}

// Everything that decides where a unit's pods may go and whether they fit: units with equal keys
// are interchangeable for the scheduler.
std::string shape_key(const WorkloadSpec& s, uint32_t pods_in_unit) {
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}:{}|", s.cpu_milli, s.memory_bytes, s.num_gpu, s.gpu_milli, pods_in_unit,
                                static_cast<int>(s.capacity), s.gpu_spec.size(), s.gpu_spec);
  for (const auto& p : s.pools) key += fmt::format("{}:{},", p.size(), p);
  key += '|';
  for (const auto& [k, v] : s.node_selector) key += fmt::format("{}:{}={}:{},", k.size(), k, v.size(), v);
  key += '|';
  for (const auto& t : s.tolerations)
    key += fmt::format("{}:{}/{}:{}/{}:{}/{}:{},", t.key.size(), t.key, t.operator_.size(), t.operator_, t.value.size(), t.value,
                       t.effect.size(), t.effect);
  if (s.topology.mode != queue::TopologyRequest::Mode::kNone)
    key += fmt::format("|topology:{}:{}", static_cast<int>(s.topology.mode), s.topology.level);
  if (!s.mig_requests.empty()) {
    key += "|mig:";
    for (const MigRequest& r : s.mig_requests) key += fmt::format("{}:{}={},", r.profile.size(), r.profile, r.count);
  }
  if (!s.resource_claims.empty()) {  // DRA: the claims and what they name
    key += "|claims:";
    for (const PodResourceClaim& c : s.resource_claims)
      key += fmt::format("{}:{}/{}:{}/{}:{},", c.name.size(), c.name, c.resource_claim_template_name.size(), c.resource_claim_template_name,
                         c.resource_claim_name.size(), c.resource_claim_name);
  }
  if (const auto& m = s.gpu_memory_share)  // memory-based sharing
    key += fmt::format("|gpumem:{}:{}:{}:{}:{}:{}", static_cast<int>(m->scheduler), m->cards, m->memory_mib, m->memory_percentage,
                       m->cores_percentage, m->fraction);
  return key;
}

// Whether shape_key(a, pods) == shape_key(b, pods), field by field (the key is injective): cheaper
// than building the key, for the items that repeat the shape of one seen just before.
bool same_shape(const WorkloadSpec& a, const WorkloadSpec& b) {
  const auto same_tolerations = [](const std::vector<Toleration>& x, const std::vector<Toleration>& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const Toleration& s, const Toleration& t) {
      return s.key == t.key && s.operator_ == t.operator_ && s.value == t.value && s.effect == t.effect;
    });
  };
  const bool topology = a.topology.mode != queue::TopologyRequest::Mode::kNone;
  return a.cpu_milli == b.cpu_milli && a.memory_bytes == b.memory_bytes && a.num_gpu == b.num_gpu && a.gpu_milli == b.gpu_milli &&
         a.capacity == b.capacity && a.gpu_spec == b.gpu_spec && a.pools == b.pools && a.node_selector == b.node_selector &&
         same_tolerations(a.tolerations, b.tolerations) && a.topology.mode == b.topology.mode &&
         (!topology || a.topology.level == b.topology.level) && a.mig_requests == b.mig_requests &&
         a.resource_claims == b.resource_claims && a.gpu_memory_share == b.gpu_memory_share;
}

}  // namespace

std::vector<std::pair<sched::PodShapeKey, double>> Units::pod_mix(const Workload& workload) {
  // FGD's typical pod mix, counted per item (sched::typical_pod_mix's counting step; an item's pods
  // have one request, so they share one key).
  std::map<sched::PodShapeKey, int64_t> counts;
  for (const WorkloadSpec& spec : workload.items) counts[sched::PodShapeKey::of(pod_request(spec))] += spec.pods;
  std::vector<std::pair<sched::PodShapeKey, double>> weighted;
  for (const auto& [key, count] : counts) weighted.emplace_back(key, static_cast<double>(count));
  return weighted;
}

Units::Units(const Workload& workload, EventLoop& loop, Fleet& fleet, Placement& placement, Billing& billing,
                     PendingQueue& pending, Metrics& metrics)
    : workload_(workload),
      loop_(loop),
      fleet_(fleet),
      placement_(placement),
      billing_(billing),
      pending_(pending),
      metrics_(metrics) {
  std::unordered_map<std::string, uint32_t> shapes;
  // Exact sizes up front: grown by doubling, the units and pod records would hold their old and
  // new buffers at once.
  size_t unit_total = 0, pod_total = 0;
  for (const WorkloadSpec& spec : workload_.items) {
    if (spec.on_demand) continue;
    unit_total += spec.kind == WorkloadKind::kJob ? 1 : static_cast<size_t>(spec.pods);
    pod_total += static_cast<size_t>(spec.pods);
  }
  units_.reserve(unit_total);
  pods_.reserve(pod_total);
  item_first_unit_.reserve(workload_.items.size());
  item_namespace_.reserve(workload_.items.size());
  // Recent shapes (item, pods per unit, shape id), newest first: most items repeat one of a few
  // shapes (a generator's templates), found here without building their key.
  struct RecentShape {
    uint32_t item;
    uint32_t pods_per_unit;
    uint32_t shape;
  };
  std::vector<RecentShape> recent;
  constexpr size_t kRecentShapes = 8;
  std::string last_namespace;
  uint32_t last_namespace_id = 0;
  for (uint32_t s = 0; s < workload_.items.size(); ++s) {
    const WorkloadSpec& spec = workload_.items[s];
    const bool job = spec.kind == WorkloadKind::kJob;
    const int32_t unit_count = spec.on_demand ? 0 : job ? 1 : spec.pods;
    const uint32_t pods_per_unit = job ? static_cast<uint32_t>(spec.pods) : 1u;
    auto hit = std::find_if(recent.begin(), recent.end(), [&](const RecentShape& r) {
      return r.pods_per_unit == pods_per_unit && same_shape(workload_.items[r.item], spec);
    });
    uint32_t shape = 0;
    bool inserted = false;
    if (hit != recent.end()) {
      shape = hit->shape;
      std::rotate(recent.begin(), hit, hit + 1);
    } else {
      const auto [it, added] = shapes.try_emplace(shape_key(spec, pods_per_unit), placement_.shape_count());
      shape = it->second;
      inserted = added;
      if (recent.size() == kRecentShapes) recent.pop_back();
      recent.insert(recent.begin(), RecentShape{s, pods_per_unit, shape});
    }
    item_first_unit_.push_back(static_cast<uint32_t>(units_.size()));
    if (s == 0 || spec.namespace_name != last_namespace) {
      last_namespace = spec.namespace_name;
      last_namespace_id = billing_.namespace_id(spec.namespace_name);
    }
    item_namespace_.push_back(last_namespace_id);
    if (!job) services_.emplace(spec.name, s);
    if (spec.on_demand) {  // no job yet: the shape is registered with its first pod as it will be
      template_shape_[s] = shape;
      if (inserted) placement_.add_shape(make_pod(spec, 0));
    }
    for (int32_t r = 0; r < unit_count; ++r) {
      const uint32_t u = add_unit(s, job ? -1 : r, shape);
      // The first unit of a new shape stands for all (its first pod; they differ only by name).
      if (inserted && r == 0) placement_.add_shape(pod(units_[u].first_pod));
    }
  }
  billing_.reserve_pods(pods_.size());
  pending_.set_starter(*this);
  const auto unit_subject = [this](uint32_t u) { return unit_name(u); };
  arrival_ = loop_.register_event("arrival", [this](const Event& e) { on_arrival(e.subject, e.time_s); }, unit_subject);
  completion_ = loop_.register_event(
      "completion", [this](const Event& e) { on_completion(e.subject, e.generation, e.time_s); }, unit_subject);
}

uint32_t Units::add_unit(uint32_t item, int32_t replica, uint32_t shape) {
  const WorkloadSpec& spec = workload_.items[item];
  const bool job = replica < 0;
  Unit u;
  u.item = item;
  u.replica = replica;
  u.first_pod = static_cast<uint32_t>(pods_.size());
  u.pod_count = job ? static_cast<uint32_t>(spec.pods) : 1u;
  u.shape = shape;
  const uint32_t id = static_cast<uint32_t>(units_.size());
  for (uint32_t i = 0; i < u.pod_count; ++i) {
    PodRecord p;
    p.unit = id;
    pods_.push_back(std::move(p));
  }
  units_.push_back(std::move(u));
  return id;
}

void Units::start() {
  // Arrivals in time order; equal times keep the input order (unit order: the pairs' second key).
  // Sorted as (time, unit) pairs side by side, not as unit ids reading their items' times.
  std::vector<std::pair<double, uint32_t>> order;
  order.reserve(units_.size());
  for (uint32_t u = 0; u < units_.size(); ++u) order.emplace_back(spec(u).arrival_s, u);
  std::sort(order.begin(), order.end());
  for (const auto& [at, u] : order)
    if (at <= loop_.horizon_s()) loop_.schedule(at, arrival_, u);
}

// ---- queries ------------------------------------------------------------------------------------

std::vector<uint32_t> Units::units_of(uint32_t i) const {
  std::vector<uint32_t> units;
  for_each_unit_of(i, [&](uint32_t u) { units.push_back(u); });
  return units;
}

std::string Units::unit_name(uint32_t u) const {
  const Unit& unit = units_[u];
  const std::string& name = workload_.items[unit.item].name;
  if (unit.replica >= 0) return fmt::format("{}-{}", name, unit.replica);
  if (!job_ordinal_.empty())
    if (const auto it = job_ordinal_.find(u); it != job_ordinal_.end()) return fmt::format("{}-{}", name, it->second);
  return name;
}

const Pod& Units::pod(uint32_t p) const {
  const PodRecord& rec = pods_[p];
  if (!rec.pod) {
    const Unit& unit = units_[rec.unit];
    int32_t index = unit.replica < 0 ? static_cast<int32_t>(p - unit.first_pod) : unit.replica;
    if (unit.replica < 0 && !job_ordinal_.empty())  // a created job: <name>-<n> (pods of a gang numbered on)
      if (const auto it = job_ordinal_.find(rec.unit); it != job_ordinal_.end())
        index = it->second * static_cast<int32_t>(unit.pod_count) + static_cast<int32_t>(p - unit.first_pod);
    // A template claim is named as the resourceclaim controller names it, the suffix from the pod id.
    const WorkloadSpec& item = workload_.items[unit.item];
    rec.pod = std::make_unique<Pod>(make_pod(item, index, item.resource_claims.empty() ? std::string() : claim_name_suffix(p)));
  }
  return *rec.pod;
}

const std::string& Units::failure_reason(uint32_t u) const {
  static const std::string kNone;
  if (failure_reasons_.empty()) return kNone;
  const auto it = failure_reasons_.find(u);
  return it != failure_reasons_.end() ? it->second : kNone;
}

std::vector<uint32_t> Units::units_on(NodeId n) const {
  std::vector<uint32_t> units;
  for (uint32_t p : fleet_.pods_on(n))
    if (std::find(units.begin(), units.end(), pods_[p].unit) == units.end()) units.push_back(pods_[p].unit);
  return units;
}

std::vector<BoundPod> Units::bound(std::span<const uint32_t> pods) const {
  std::vector<BoundPod> out;
  out.reserve(pods.size());
  for (uint32_t p : pods) out.push_back(BoundPod{&pod(p), pods_[p].node});
  return out;
}

std::vector<uint32_t> Units::bound_pods(std::span<const uint32_t> units) const {
  std::vector<uint32_t> pods;
  for (uint32_t u : units)
    for (uint32_t p = units_[u].first_pod; p < units_[u].first_pod + units_[u].pod_count; ++p)
      if (pods_[p].node != sched::kNoNode) pods.push_back(p);
  return pods;
}

int32_t Units::expected_pods(uint32_t item) const {
  if (auto it = scaled_.find(item); it != scaled_.end()) return it->second.replicas;
  return workload_.items[item].pods;
}

bool Units::budgets_allow(std::span<const uint32_t> units) const {
  std::vector<std::pair<uint32_t, int32_t>> stopped;  // (item, pods stopped), first-seen order
  for (uint32_t u : units) {
    const Unit& unit = units_[u];
    if (workload_.items[unit.item].do_not_disrupt) return false;
    int32_t bound = 0;
    for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) bound += pods_[p].node != sched::kNoNode ? 1 : 0;
    auto it = std::find_if(stopped.begin(), stopped.end(), [&](const auto& e) { return e.first == unit.item; });
    if (it == stopped.end()) stopped.emplace_back(unit.item, bound);
    else it->second += bound;
  }
  for (const auto& [item, count] : stopped) {
    const WorkloadSpec& spec = workload_.items[item];
    if (!spec.disruption_budget) continue;
    int32_t healthy = 0;
    for_each_unit_of(item, [&](uint32_t u) {
      const Unit& unit = units_[u];
      for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) healthy += pods_[p].node != sched::kNoNode ? 1 : 0;
    });
    if (count > disruptions_allowed(*spec.disruption_budget, expected_pods(item), healthy)) return false;
  }
  return true;
}

double Units::work_lost_if_restarted(uint32_t u, double t) const {
  const Unit& unit = units_[u];
  const WorkloadSpec& s = spec(u);
  if (s.kind != WorkloadKind::kJob) return 0;
  const double ran = (t - unit.run_start_s) / unit.slowdown;
  const double done = checkpoint_work_done_s(s.checkpoint_interval_s, s.checkpoint_cost_s, ran);
  return gpu_milli_s(u, (done - checkpoint_work_kept_s(s.checkpoint_interval_s, s.checkpoint_cost_s, ran)) * unit.slowdown);
}

double Units::end_job_run(uint32_t u, double t, double notice_s) {
  Unit& unit = units_[u];
  const WorkloadSpec& s = spec(u);
  // Wall time of this run at slowdown 1; checkpoints every checkpoint_interval_s of work keep whole
  // intervals of it, each written in checkpoint_cost_s (none without checkpoints).
  const double ran = (t - unit.run_start_s) / unit.slowdown;
  const double done = checkpoint_work_done_s(s.checkpoint_interval_s, s.checkpoint_cost_s, ran);
  double kept = checkpoint_work_kept_s(s.checkpoint_interval_s, s.checkpoint_cost_s, ran);
  double writing = checkpoint_time_s(s.checkpoint_interval_s, s.checkpoint_cost_s, ran);
  if (s.checkpoint_on_notice && s.checkpoint_cost_s <= notice_s) {  // one more, in the notice window
    kept = done;
    writing += s.checkpoint_cost_s;
  }
  if (writing > 0) {
    unit.checkpoint_s += writing * unit.slowdown;
    checkpoint_gpu_milli_s_ += gpu_milli_s(u, writing * unit.slowdown);
  }
  const double lost = gpu_milli_s(u, (done - kept) * unit.slowdown);
  lost_gpu_milli_s_ += lost;
  end_run_segment(u, t);
  unit.saved_s += kept;
  ++unit.run_generation;  // its completion event is now stale
  return lost;
}

void Units::note_run_pools(uint32_t u) {
  const Unit& unit = units_[u];
  if (!has_checkpoint_costs(spec(u))) return;
  std::vector<uint32_t>& run_pools = run_pools_[u];
  run_pools.clear();
  std::vector<NodeId> nodes;
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p)
    if (pods_[p].node != sched::kNoNode && std::find(nodes.begin(), nodes.end(), pods_[p].node) == nodes.end()) {
      nodes.push_back(pods_[p].node);
      run_pools.push_back(fleet_.pool_of(pods_[p].node));
    }
}

double Units::gpu_milli_s(uint32_t u, double seconds) const {
  const Unit& unit = units_[u];
  const uint32_t end = unit.first_pod + unit.pod_count;
  bool sharing = pod(unit.first_pod).has_device_requests() || pod(unit.first_pod).gpu_memory_share.has_value();
  for (uint32_t p = unit.first_pod; p < end && !sharing; ++p)
    sharing = pods_[p].node != sched::kNoNode && fleet_.state().has_gpu_sharing(pods_[p].node);
  if (!sharing) return seconds * static_cast<double>(pod(unit.first_pod).gpu_request_milli()) * unit.pod_count;
  double gpus = 0;
  for (uint32_t p = unit.first_pod; p < end; ++p)
    if (pods_[p].node != sched::kNoNode) gpus += pod_gpus_held(fleet_.pool(fleet_.pool_of(pods_[p].node)).pool, pod(p));
  return seconds * gpus * kGpuMilliPerGpu;
}

// ---- pods and units -----------------------------------------------------------------------------

void Units::bind(uint32_t p, NodeId n, DeviceAssignment devices, double t) {
  PodRecord& rec = pods_[p];
  const bool job = units_[rec.unit].replica < 0;
  fleet_.bind(p, pod(p), n, devices, job, t);  // job pods block scale-down, as safe-to-evict: "false"
  rec.node = n;
  billing_.start_charge(p, pod(p), item_namespace_[units_[rec.unit].item], n, t, fleet_.own_claims_gpu_milli(pod(p), devices));
  if (!job) {
    const uint32_t item = units_[rec.unit].item;
    for (ReplicaListener* l : replica_listeners_) l->on_replica_bound(item, rec.unit, p, n, t);
    if (std::find(readiness_gated_.begin(), readiness_gated_.end(), item) == readiness_gated_.end()) mark_ready(rec.unit, t);
  }
}

void Units::mark_ready(uint32_t u, double t) {
  ready_since_[u] = t;
  for (ReplicaListener* l : replica_listeners_) l->on_replica_ready(units_[u].item, u, t);
}

std::optional<double> Units::ready_since(uint32_t u) const {
  const auto it = ready_since_.find(u);
  if (it == ready_since_.end()) return std::nullopt;
  return it->second;
}

int32_t Units::ready_replicas(uint32_t i) const {
  int32_t n = 0;
  for_each_unit_of(i, [&](uint32_t u) { n += ready_since_.count(u) != 0 ? 1 : 0; });
  return n;
}

void Units::unbind(uint32_t p, double t) {
  PodRecord& rec = pods_[p];
  fleet_.unbind(p, pod(p), rec.node, DeviceAssignment{}, units_[rec.unit].replica < 0, t);
  billing_.stop_charge(p, t);
  rec.node = sched::kNoNode;
  if (units_[rec.unit].replica >= 0) {
    ready_since_.erase(rec.unit);
    for (ReplicaListener* l : replica_listeners_) l->on_replica_unbound(units_[rec.unit].item, rec.unit, p, t);
  }
}

void Units::stop_unit(uint32_t u, double t) {
  const Unit& unit = units_[u];
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p)
    if (pods_[p].node != sched::kNoNode) unbind(p, t);
  pending_.request_retry(t);
}

PendingUnit Units::pending_key(uint32_t u) const {
  const Unit& unit = units_[u];
  return PendingUnit{spec(u).priority, unit.pending_since_s, u, unit.shape};
}

void Units::set_state(uint32_t u, UnitState state) {
  Unit& unit = units_[u];
  if (unit.state == UnitState::kQueued) queued_pods_ -= unit.pod_count;
  if (state == UnitState::kQueued) queued_pods_ += unit.pod_count;
  unit.state = state;
}

void Units::make_pending(uint32_t u, double t) {
  Unit& unit = units_[u];
  set_state(u, UnitState::kPending);
  unit.pending_since_s = t;
  pending_.add(pending_key(u), static_cast<int32_t>(unit.pod_count));
  pending_.request_retry(t);
}

bool Units::place_pods(uint32_t u, double t, const Labels& extra) {
  Unit& unit = units_[u];
  const uint32_t end = unit.first_pod + unit.pod_count;
  const bool job = unit.replica < 0;
  std::vector<double> last_change;  // the nodes' last pod change before each bind, for a rollback
  const queue::FlavorInjection* injected = nullptr;
  if (!injected_.empty())
    if (auto it = injected_.find(u); it != injected_.end() && !it->second.empty()) injected = &it->second;
  Pod confined;
  for (uint32_t p = unit.first_pod; p < end; ++p) {
    const Pod* request = &pod(p);
    if (!extra.empty() || injected != nullptr) {  // Kueue injects the flavors' labels and tolerations, and the TAS domain
      confined = *request;
      if (injected != nullptr) {
        for (const auto& kv : injected->node_selector) confined.constraints.node_selector.push_back(kv);
        for (const Toleration& t : injected->tolerations) confined.constraints.tolerations.push_back(t);
      }
      for (const auto& kv : extra) confined.constraints.node_selector.push_back(kv);
      request = &confined;
    }
    // The first pod of a plain unit (no constraints added) failed for this shape on this very state:
    // it fails again with the same message, and a failed cycle draws no random number.
    const bool plain = p == unit.first_pod && extra.empty() && injected == nullptr;
    FailedShape* failed = nullptr;
    if (plain) {
      if (failed_shapes_.size() <= unit.shape) failed_shapes_.resize(unit.shape + 1);
      failed = &failed_shapes_[unit.shape];
      if (failed->known && failed->state_changes == fleet_.state().change_count()) {
        if (failed->has_reason) pending_.set_scheduling_reason(u, failed->reason);
        return false;
      }
    }
    sched::ScheduleResult r = placement_.decide(*request);
    if (!r.scheduled()) {
      // kube's FailedScheduling message for the pending list (SimResult::pending_at_horizon).
      std::optional<std::string> reason;
      if (!r.node_to_status.empty())
        reason = fit_error(r.node_to_status, *request, plain ? &failed->message : nullptr);
      else if (fleet_.state().live_node_count() == 0)
        reason = "no nodes available to schedule pods";  // kube-scheduler's ErrNoNodesAvailable
      if (failed != nullptr) {
        failed->known = true;
        failed->state_changes = fleet_.state().change_count();
        failed->has_reason = reason.has_value();
        failed->reason = reason.value_or("");
      }
      if (reason) pending_.set_scheduling_reason(u, std::move(*reason));
      for (uint32_t q = p; q-- > unit.first_pod;) {  // roll the gang back, last bind first; nothing was charged
        PodRecord& rec = pods_[q];
        fleet_.undo_bind(pod(q), rec.node, DeviceAssignment{}, job, last_change[q - unit.first_pod]);
        billing_.cancel_charge(q);
        rec.node = sched::kNoNode;
      }
      return false;
    }
    last_change.push_back(fleet_.last_pod_change_s(r.node));
    const NodeId node = r.node;
    bind(p, node, take_devices(std::move(r)), t);
  }
  return true;
}

std::string Units::fit_error(const sched::NodeToStatus& statuses, const Pod& request, MessageMemo* memo) const {
  const size_t live = fleet_.state().live_node_count();
  if (memo == nullptr) return sched::fit_error_message(sched::rejection_histogram(statuses, request, fleet_.state()), live);
  // Reasons that are not worded per node are the same words for every node (FilterPlugin::
  // count_reasons): then the nodes per reason number and the live node count make the message.
  std::vector<int32_t> counts = statuses.counts();
  bool fixed_words = true;
  for (size_t k = 1; k < counts.size() && fixed_words; ++k)
    fixed_words = counts[k] == 0 || !statuses.table().rejection(static_cast<uint8_t>(k)).code.get()->per_node;
  if (fixed_words && memo->valid && memo->live_nodes == live && memo->counts == counts) return memo->message;
  std::string message = sched::fit_error_message(sched::rejection_histogram(statuses, request, fleet_.state()), live);
  memo->valid = fixed_words;
  if (fixed_words) {
    memo->live_nodes = live;
    memo->counts = std::move(counts);
    memo->message = message;
  }
  return message;
}

bool Units::place_with_topology(uint32_t u, double t) {
  const Unit& unit = units_[u];
  const WorkloadSpec& s = spec(u);
  const std::vector<std::string>& levels = workload_.topology.levels;
  const auto at = std::find(levels.begin(), levels.end(), s.topology.level);
  if (at == levels.end()) return place_pods(u, t, {});  // the reader checks levels; a safety net
  const int64_t needed = s.num_gpu > 0 ? int64_t{s.num_gpu} * s.gpu_milli * unit.pod_count : 0;
  // Required: the level's domains only. Preferred: that level, then each level up, then anywhere.
  const bool preferred = s.topology.mode == queue::TopologyRequest::Mode::kPreferred;
  for (auto level = at;; --level) {
    for (const sched::DomainCapacity& d : sched::rank_domains(fleet_.state(), *level, needed))
      if (place_pods(u, t, Labels{{*level, d.value}})) return true;
    if (!preferred || level == levels.begin()) break;
  }
  return preferred && place_pods(u, t, {});
}

double Units::placement_slowdown(uint32_t u) {
  const TopologySettings& topo = workload_.topology;
  if (topo.levels.empty()) return 1;
  const Unit& unit = units_[u];
  std::vector<NodeId> nodes;
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) nodes.push_back(pods_[p].node);
  const std::vector<int32_t> spans = sched::topology_spans(fleet_.state(), sched::TopologyLevels{topo.levels}, nodes);
  double factor = 1;
  bool split = false;
  for (size_t l = 0; l < topo.levels.size(); ++l) {
    if (spans[l] <= 1) continue;
    factor *= 1 + topo.slowdown[l];
    split |= topo.slowdown[l] > 0;
  }
  split_job_starts_ += split;
  return factor;
}

void Units::end_run_segment(uint32_t u, double t) {
  const Unit& unit = units_[u];
  if (unit.slowdown > 1) slowdown_gpu_milli_s_ += gpu_milli_s(u, (t - unit.run_start_s) * (1 - 1 / unit.slowdown));
}

double Units::topology_slowdown_gpu_hours() const {
  return slowdown_gpu_milli_s_ / kGpuMilliPerGpu / kSecondsPerHour;
}

bool Units::try_start(uint32_t u, double t) {
  Unit& unit = units_[u];
  const uint32_t end = unit.first_pod + unit.pod_count;
  const bool job = unit.replica < 0;
  const WorkloadSpec& s = spec(u);
  const bool topology = job && s.topology.mode != queue::TopologyRequest::Mode::kNone && workload_.topology.aware;
  if (!(topology ? place_with_topology(u, t) : place_pods(u, t, {}))) return false;
  if (unit.state == UnitState::kPending) pending_.remove(pending_key(u), static_cast<int32_t>(unit.pod_count));
  for (uint32_t p = unit.first_pod; p < end; ++p) metrics_.add_pending_sample(s.priority, t - unit.pending_since_s);
  set_state(u, UnitState::kRunning);
  unit.run_start_s = t;
  ++unit.starts;
  if (job) {
    ++job_starts_;
    unit.slowdown = placement_slowdown(u);
    loop_.schedule(t + checkpoint_run_time_s(s.checkpoint_interval_s, s.checkpoint_cost_s, s.duration_s - unit.saved_s) * unit.slowdown,
                   completion_, u, ++unit.run_generation);
    note_run_pools(u);
    if (gate_ != nullptr && !s.queue_name.empty()) gate_->on_started(u, t);
    for (JobListener* l : job_listeners_) l->on_job_started(u, t);
  }
  return true;
}

void Units::admit(uint32_t u, double t, queue::FlavorInjection injected) {
  if (units_[u].state != UnitState::kQueued) return;
  injected_[u] = std::move(injected);
  make_pending(u, t);
}

bool Units::admit_and_start(uint32_t u, double t, queue::FlavorInjection injected) {
  if (units_[u].state != UnitState::kQueued) return false;
  injected_[u] = std::move(injected);
  return try_start(u, t);
}

void Units::suspend(uint32_t u, double t) {
  Unit& unit = units_[u];
  if (unit.state == UnitState::kRunning) {
    if (spec(u).kind == WorkloadKind::kJob) end_job_run(u, t, 0);
    evictions_ += unit.pod_count;
    stop_unit(u, t);
  } else if (unit.state == UnitState::kPending) {
    pending_.remove(pending_key(u), static_cast<int32_t>(unit.pod_count));
  } else {
    return;
  }
  set_state(u, UnitState::kQueued);
  unit.pending_since_s = t;
}

void Units::interrupt(uint32_t u, double t, double notice_s) {
  Unit& unit = units_[u];
  if (spec(u).kind == WorkloadKind::kJob) end_job_run(u, t, notice_s);
  ++unit.interruptions;
  evictions_ += unit.pod_count;
  stop_unit(u, t);
  make_pending(u, t);
}

// ---- events -------------------------------------------------------------------------------------

void Units::on_arrival(uint32_t u, double t) {
  Unit& unit = units_[u];
  if (unit.state != UnitState::kWaiting) return;  // removed by scale() before it arrived
  // The informer sees each pod once, when it is created (ScorePlugin::observe).
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) placement_.observe(pod(p));
  if (std::optional<std::string> reason = placement_.unadmitted_reason(unit.shape)) {
    failure_reasons_[u] = std::move(*reason);
    set_state(u, UnitState::kFailed);
    return;
  }
  const WorkloadSpec& s = spec(u);
  if (gate_ != nullptr && s.kind == WorkloadKind::kJob && !s.queue_name.empty()) {
    set_state(u, UnitState::kQueued);
    unit.pending_since_s = t;
    if (gate_->on_arrival(u, t)) return;
  }
  make_pending(u, t);
}

void Units::on_completion(uint32_t u, uint32_t generation, double t) {
  Unit& unit = units_[u];
  if (unit.state != UnitState::kRunning || unit.run_generation != generation) return;
  const WorkloadSpec& s = spec(u);
  if (s.checkpoint_cost_s > 0) {  // the checkpoints of this run, none at its end
    const double writing = checkpoints_before_s(s.checkpoint_interval_s, s.duration_s - unit.saved_s) * s.checkpoint_cost_s * unit.slowdown;
    unit.checkpoint_s += writing;
    checkpoint_gpu_milli_s_ += gpu_milli_s(u, writing);
  }
  end_run_segment(u, t);
  stop_unit(u, t);
  set_state(u, UnitState::kCompleted);
  unit.end_s = t;
  unit.saved_s = spec(u).duration_s;
  if (gate_ != nullptr && !spec(u).queue_name.empty()) gate_->on_completed(u, t);
  for (JobListener* l : job_listeners_) l->on_job_completed(u, t);
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) pods_[p].pod.reset();  // made again if asked for
}

// ---- disruptions --------------------------------------------------------------------------------

void Units::evict_node(NodeId n, double t, double notice_s) {
  for (uint32_t u : units_on(n)) interrupt(u, t, notice_s);
}

double Units::evict(uint32_t u, double t) {
  if (units_[u].state != UnitState::kRunning) return 0;
  const double before = lost_gpu_milli_s_;
  interrupt(u, t, 0);
  return lost_gpu_milli_s_ - before;
}

void Units::evict_gpu(NodeId n, int32_t g, double t) {
  for (uint32_t u : units_holding_gpu(n, g)) interrupt(u, t, 0);
}

std::vector<uint32_t> Units::restart_in_place(NodeId n, int32_t g, double t) {
  const std::vector<uint32_t> units = units_holding_gpu(n, g);
  for (uint32_t u : units) {
    Unit& unit = units_[u];
    const WorkloadSpec& s = spec(u);
    if (s.kind == WorkloadKind::kJob) {
      end_job_run(u, t, 0);  // the work since the last checkpoint is lost; the pods stay bound
      loop_.schedule(t + checkpoint_run_time_s(s.checkpoint_interval_s, s.checkpoint_cost_s, s.duration_s - unit.saved_s) * unit.slowdown,
                     completion_, u, ++unit.run_generation);
    }
    unit.run_start_s = t;
    ++unit.starts;
    ++unit.interruptions;  // its containers were stopped (and started again at once)
  }
  return units;
}

std::vector<uint32_t> Units::units_holding_gpu(NodeId n, int32_t g) const {
  std::vector<uint32_t> units;
  for (uint32_t p : fleet_.pods_on(n)) {
    const Pod& request = pod(p);
    for (const gpufleet::BoundPod& b : fleet_.state().pods_on(n)) {
      if (b.pod.name != request.name || b.pod.namespace_name != request.namespace_name) continue;
      const bool holds = std::find(b.gpus.begin(), b.gpus.end(), g) != b.gpus.end() ||
                         std::find(b.shared_replicas.begin(), b.shared_replicas.end(), g) != b.shared_replicas.end() ||
                         std::any_of(b.mig.begin(), b.mig.end(), [g](const MigDevice& d) { return d.gpu == g; });
      if (holds && std::find(units.begin(), units.end(), pods_[p].unit) == units.end()) units.push_back(pods_[p].unit);
    }
  }
  return units;
}

void Units::move_pods(std::span<const uint32_t> pods, Placements placed, double t) {
  for (size_t i = 0; i < pods.size(); ++i) {
    unbind(pods[i], t);
    bind(pods[i], placed[i].first, std::move(placed[i].second), t);
  }
  evictions_ += static_cast<int64_t>(pods.size());
  pending_.request_retry(t);
}

std::vector<double> Units::restart(std::span<const uint32_t> units, std::span<const uint32_t> pods, Placements placed,
                                       double t) {
  std::vector<double> lost_by_job;
  for (uint32_t u : units)  // jobs keep the work up to their last checkpoint
    if (spec(u).kind == WorkloadKind::kJob) lost_by_job.push_back(end_job_run(u, t, 0));
  // All off first, then all on: a gang pod may land on GPUs another moving pod held.
  for (uint32_t p : pods) unbind(p, t);
  for (size_t i = 0; i < pods.size(); ++i) bind(pods[i], placed[i].first, std::move(placed[i].second), t);
  for (uint32_t u : units) {
    Unit& unit = units_[u];
    const WorkloadSpec& s = spec(u);
    unit.run_start_s = t;
    ++unit.starts;
    ++unit.consolidations;
    if (s.kind == WorkloadKind::kJob) {
      unit.slowdown = placement_slowdown(u);
      loop_.schedule(t + checkpoint_run_time_s(s.checkpoint_interval_s, s.checkpoint_cost_s, s.duration_s - unit.saved_s) * unit.slowdown,
                     completion_, u, ++unit.run_generation);
      note_run_pools(u);
    }
  }
  evictions_ += static_cast<int64_t>(pods.size());
  return lost_by_job;
}

// ---- jobs created during the run --------------------------------------------------------------

uint32_t Units::create_job(uint32_t item, double t) {
  const auto shape = template_shape_.find(item);
  if (shape == template_shape_.end())
    throw std::invalid_argument(fmt::format("item {} is not an on-demand job template", item));
  ScaledService& created = scaled_[item];
  const uint32_t u = add_unit(item, -1, shape->second);
  created.added_units.push_back(u);
  job_ordinal_[u] = created.next_ordinal++;
  loop_.schedule(t, arrival_, u);
  return u;
}

// ---- replica counts -----------------------------------------------------------------------------

int32_t Units::replicas(std::string_view service) const {
  const auto it = services_.find(std::string(service));
  if (it == services_.end()) throw std::invalid_argument(fmt::format("'{}' is not a service of the workload", service));
  return expected_pods(it->second);
}

Units::ScaledService& Units::scaled_service(uint32_t item) {
  auto [entry, inserted] = scaled_.try_emplace(item);
  if (inserted) {
    entry->second.replicas = workload_.items[item].pods;
    entry->second.next_ordinal = workload_.items[item].pods;
  }
  return entry->second;
}

void Units::scale(std::string_view service, int32_t replicas, double t) {
  const auto it = services_.find(std::string(service));
  if (it == services_.end()) throw std::invalid_argument(fmt::format("'{}' is not a service of the workload", service));
  if (replicas < 0) throw std::invalid_argument(fmt::format("service '{}': replicas {} is negative", service, replicas));
  const uint32_t item = it->second;
  ScaledService& scaled = scaled_service(item);
  if (replicas > scaled.replicas) {
    for (int32_t i = scaled.replicas; i < replicas; ++i) add_replica(item, t);
  } else if (replicas < scaled.replicas) {
    int32_t to_remove = scaled.replicas - replicas;
    // The old revision's replicas go first (a rollout's old ReplicaSet), then the highest ordinals.
    const std::vector<uint32_t> units = units_of(item);
    for (const bool old_pass : {true, false})
      for (size_t i = units.size(); i-- > 0 && to_remove > 0;) {
        if (units_[units[i]].state == UnitState::kRemoved) continue;
        if (old_pass && unit_revision(units[i]) == scaled.revision) continue;
        remove_unit(units[i], t);
        --to_remove;
      }
  }
  scaled.replicas = replicas;
}

std::optional<uint32_t> Units::service_item(std::string_view service) const {
  const auto it = services_.find(std::string(service));
  if (it == services_.end()) return std::nullopt;
  return it->second;
}

uint32_t Units::revision(uint32_t i) const {
  const auto it = scaled_.find(i);
  return it == scaled_.end() ? 0u : it->second.revision;
}

uint32_t Units::new_revision(uint32_t i) { return ++scaled_service(i).revision; }

uint32_t Units::unit_revision(uint32_t u) const {
  if (unit_revision_.empty()) return 0;
  const auto it = unit_revision_.find(u);
  return it == unit_revision_.end() ? 0u : it->second;
}

uint32_t Units::add_replica(uint32_t i, double t) {
  ScaledService& scaled = scaled_service(i);
  const uint32_t u = add_unit(i, scaled.next_ordinal++, units_[item_first_unit_[i]].shape);
  scaled.added_units.push_back(u);
  if (scaled.revision > 0) unit_revision_[u] = scaled.revision;
  loop_.schedule(t, arrival_, u);
  return u;
}

void Units::remove_replica(uint32_t u, double t) {
  if (units_[u].state != UnitState::kRemoved) remove_unit(u, t);
}

int32_t Units::live_replicas(uint32_t i) const {
  int32_t n = 0;
  for_each_unit_of(i, [&](uint32_t u) { n += units_[u].state != UnitState::kRemoved ? 1 : 0; });
  return n;
}

void Units::remove_unit(uint32_t u, double t) {
  Unit& unit = units_[u];
  switch (unit.state) {
    case UnitState::kRunning: stop_unit(u, t); break;
    case UnitState::kPending: pending_.remove(pending_key(u), static_cast<int32_t>(unit.pod_count)); break;
    default: break;  // waiting (its arrival will find it removed) or failed: nothing holds capacity
  }
  set_state(u, UnitState::kRemoved);
  unit.end_s = t;
}

void Units::report_outcomes(SimResult& result, bool per_unit) const {
  const double h = loop_.horizon_s();
  if (per_unit) result.units.reserve(result.units.size() + unit_count());  // one outcome per unit, no regrowth at the run's peak
  for (uint32_t i = 0; i < item_count(); ++i) {
    const WorkloadSpec& spec = item(i);
    for_each_unit_of(i, [&](uint32_t u) {
      const Unit& unit = units_[u];
      switch (unit.state) {
        case UnitState::kCompleted: result.pods_completed += unit.pod_count; break;
        case UnitState::kRunning: result.pods_running += unit.pod_count; break;
        case UnitState::kFailed: result.pods_failed += unit.pod_count; break;
        case UnitState::kRemoved: result.pods_removed += unit.pod_count; break;
        case UnitState::kPending:
        case UnitState::kQueued:
          result.pods_pending += unit.pod_count;
          for (uint32_t k = 0; k < unit.pod_count; ++k) metrics_.add_pending_sample(spec.priority, h - unit.pending_since_s);
          break;
        case UnitState::kWaiting:  // arrives after the horizon: not part of this run
          break;
      }
      if (!per_unit) return;
      UnitOutcome out;
      out.name = unit_name(u);
      out.state = unit.state;
      out.pods = static_cast<int32_t>(unit.pod_count);
      if (unit.state == UnitState::kCompleted) out.completion_s = unit.end_s;
      if (unit.state == UnitState::kRemoved) out.removed_s = unit.end_s;
      out.starts = unit.starts;
      out.interruptions = unit.interruptions;
      out.consolidations = unit.consolidations;
      out.saved_work_s = unit.saved_s;
      out.reason = failure_reason(u);
      result.units.push_back(std::move(out));
    });
  }
}

void Units::report(SimResult& result) const {
  result.evictions = evictions_;
  result.lost_gpu_hours = lost_gpu_milli_s_ / kGpuMilliPerGpu / kSecondsPerHour;
  result.topology_levels = workload_.topology.levels.size();
  result.job_starts = job_starts_;
  result.split_job_starts = split_job_starts_;
  // Runs still going at the horizon count their slowdown up to it.
  double running = 0;
  for (uint32_t u = 0; u < units_.size(); ++u) {
    const Unit& unit = units_[u];
    if (unit.state == UnitState::kRunning && unit.slowdown > 1)
      running += gpu_milli_s(u, (loop_.horizon_s() - unit.run_start_s) * (1 - 1 / unit.slowdown));
  }
  result.topology_slowdown_gpu_hours = (slowdown_gpu_milli_s_ + running) / kGpuMilliPerGpu / kSecondsPerHour;
}

void Units::report_checkpoints(SimResult& result, std::span<const double> pool_interruptions_per_hour) const {
  const auto it = std::find_if(workload_.items.begin(), workload_.items.end(), has_checkpoint_costs);
  if (it == workload_.items.end()) return;
  result.checkpoint_costs = true;
  double total_s = 0, gpu_milli_s_total = checkpoint_gpu_milli_s_;
  for (uint32_t i = 0; i < workload_.items.size(); ++i) {
    const WorkloadSpec& s = workload_.items[i];
    if (!has_checkpoint_costs(s) || s.on_demand) continue;  // on_demand: no unit of its own (rejected by validate)
    const uint32_t u = item_first_unit_[i];
    const Unit& unit = units_[u];
    double seconds = unit.checkpoint_s;
    if (unit.state == UnitState::kRunning) {  // a run still going at the horizon: its writes so far
      const double writing =
          checkpoint_time_s(s.checkpoint_interval_s, s.checkpoint_cost_s, (loop_.horizon_s() - unit.run_start_s) / unit.slowdown) * unit.slowdown;
      seconds += writing;
      gpu_milli_s_total += gpu_milli_s(u, writing);
    }
    total_s += seconds;
    CheckpointJobResult r;
    r.name = s.name;
    r.interval_s = s.checkpoint_interval_s;
    r.cost_s = s.checkpoint_cost_s;
    r.checkpoint_s = seconds;
    r.interruptions = unit.interruptions;
    // A gang on k nodes is stopped when any of them is interrupted: the rates add up.
    if (auto it = run_pools_.find(u); it != run_pools_.end())
      for (uint32_t pool : it->second) r.interruptions_per_hour += pool_interruptions_per_hour[pool];
    if (r.interruptions_per_hour > 0) {
      r.mtbi_s = kSecondsPerHour / r.interruptions_per_hour;
      r.young_interval_s = young_interval_s(s.checkpoint_cost_s, r.mtbi_s);
      r.daly_interval_s = daly_interval_s(s.checkpoint_cost_s, r.mtbi_s);
    }
    result.checkpoint_jobs.push_back(std::move(r));
  }
  result.checkpoint_s = total_s;
  result.checkpoint_gpu_hours = gpu_milli_s_total / kGpuMilliPerGpu / kSecondsPerHour;
}

}  // namespace gpufleet::sim
