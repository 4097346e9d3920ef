#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "model/resources.h"
#include "sched/fit_error.h"
#include "sched/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "sim/autoscaler.h"
#include "sim/cost.h"
#include "sim/node_gate.h"
#include "util/go_rand.h"

namespace gpufleet::sim {
namespace {

constexpr double kSecondsPerHour = 3600.0;
// sched::typical_pod_mix's default coverage.
constexpr double kTypicalPodCoverage = 0.95;
// The spot generator's seed is the run seed XOR this constant, so spot draws do not depend on how
// many numbers the placement policy drew (an arbitrary odd 64-bit constant, the golden ratio's).
constexpr uint64_t kSpotSeedSalt = 0x9e3779b97f4a7c15ULL;

enum class Phase : uint8_t { kAbsent, kProvisioning, kReady, kCordoned };

struct NodeRt {
  uint32_t pool = 0;
  Phase phase = Phase::kAbsent;
  uint32_t incarnation = 0;
  double billing_since_s = 0;        // start of the current billing segment (launch, or coverage change)
  bool covered = false;              // billed against the pool's reservation
  double price_usd_per_hour = 0;
  double unneeded_since_s = -1;      // < 0: not unneeded
  double recheck_after_s = 0;        // scale-down: not before (after a failed move)
  int32_t job_pods = 0;              // pods of jobs on the node (block scale-down)
  double last_pod_change_s = 0;      // last bind or unbind here, or ready (consolidateAfter)
  std::vector<uint32_t> pods;        // pod ids bound here, binding order
};

struct PoolRt {
  NodeId first_node = 0;
  int32_t live = 0;                  // provisioning + ready + cordoned
  int32_t provisioning = 0;
  int32_t covered = 0;               // live nodes billed against the reservation
  double covered_s = 0;              // node-seconds billed against the reservation (closed lives)
  PriceSplit split;
};

struct Unit {
  uint32_t spec = 0;
  int32_t replica = -1;              // service replica, -1 for a job
  uint32_t first_pod = 0;
  uint32_t pod_count = 0;
  uint32_t shape = 0;                // units with equal shapes are interchangeable for placement
  UnitState state = UnitState::kWaiting;
  double pending_since_s = 0;
  double run_start_s = 0;
  double saved_s = 0;                // checkpointed work
  uint32_t run_generation = 0;
  int32_t starts = 0;
  int32_t interruptions = 0;
  int32_t consolidations = 0;
  double completion_s = -1;
  std::string reason;
};

struct PodRt {
  Pod pod;
  uint32_t unit = 0;
  NodeId node = sched::kNoNode;
  std::vector<int32_t> gpus;
  double charged_since_s = 0;        // chargeback accrues from here at rate_usd_per_hour
  double rate_usd_per_hour = 0;      // chargeback rate on its node
};

// Karpenter's EvictionCost for a pod without a deletion-cost annotation
// (pkg/utils/disruption: 1 + priority / 2^25, clamped to [-10, 10]).
double eviction_cost(int32_t priority) { return std::clamp(1.0 + static_cast<double>(priority) / 33554432.0, -10.0, 10.0); }

// Work a job keeps when stopped after `ran_s` seconds of its current run: whole checkpoint intervals.
double checkpointed_s(const WorkloadSpec& spec, double ran_s) {
  return spec.checkpoint_interval_s > 0 ? std::floor(ran_s / spec.checkpoint_interval_s) * spec.checkpoint_interval_s : 0.0;
}

// Nearest-rank percentile of sorted samples: the ceil(q * n)-th smallest.
double percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

PendingStats stats(std::vector<double> samples) {
  PendingStats s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.p50 = percentile(samples, 0.50);
  s.p95 = percentile(samples, 0.95);
  s.p99 = percentile(samples, 0.99);
  return s;
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
  return key;
}

class Engine {
 public:
  Engine(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options);
  SimResult run();

 private:
  // setup
  void build_nodes();
  void build_units();
  bool template_fits(uint32_t shape, size_t pool);
  bool fits_any_pool(const Unit& u, std::string* reason);

  // clock
  void advance_to(double t);
  void emit_sample(double t);
  void request_retry(double t);

  // events
  void on_arrival(uint32_t u, double t);
  void on_completion(uint32_t u, uint32_t generation, double t);
  void on_node_ready(NodeId n, uint32_t incarnation, double t);
  void on_spot_notice(NodeId n, uint32_t incarnation, double t);
  void on_spot_reclaim(NodeId n, uint32_t incarnation, double t);
  void on_tick(double t);
  void on_consolidation_tick(double t);
  void retry_pending(double t);

  // units and pods
  bool try_start(uint32_t u, double t);
  void bind(uint32_t pod, NodeId n, std::vector<int32_t> gpus, double t);
  void unbind(uint32_t pod, double t);
  void stop_unit(Unit& unit, double t);
  void make_pending(uint32_t u, double t);
  void interrupt(uint32_t u, double t);
  sched::ScheduleResult decide(const Pod& pod);
  void add_pending_sample(int32_t priority, double wait_s) {
    pending_samples_.push_back(wait_s);
    pending_by_priority_[priority].push_back(wait_s);
    if (priority >= options_.production_priority) pending_production_.push_back(wait_s);
  }

  // nodes
  void launch_node(NodeId n, double t, bool ready_now);
  void make_ready(NodeId n, double t);
  void remove_node(NodeId n, double t);
  void close_billing(NodeId n, double t);
  void pass_coverage(uint32_t pool, double t);

  // autoscaler
  void scale_up(double t);
  void scale_down(double t);
  bool try_move_pods(NodeId n, double t);
  bool budgets_allow(const std::vector<uint32_t>& units) const;
  using Placements = std::vector<std::pair<NodeId, std::vector<int32_t>>>;  // (node, GPUs) per pod
  std::optional<Placements> dry_run_moves(NodeId n, const std::vector<uint32_t>& moving);

  // consolidation
  void consolidate(double t);
  bool removal_saves_money(NodeId n) const;
  std::vector<uint32_t> units_on(NodeId n) const;
  bool try_consolidate(NodeId n, double t);

  std::string unit_name(const Unit& u) const;
  std::string subject_name(const Event& e) const;

  const ClusterConfig& cluster_;
  const Workload& workload_;
  const SimOptions& options_;
  const double horizon_s_;

  std::unique_ptr<ClusterState> state_;
  std::unique_ptr<ClusterState> templates_;  // one empty node per pool: "would a new node admit it?"
  std::shared_ptr<NodeGate> gate_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  sched::Profile base_policy_;                // the policy's own filters, for template checks
  GoRand sched_rng_;
  GoRand spot_rng_;
  EventQueue queue_;

  std::vector<NodeRt> nodes_;
  std::vector<PoolRt> pools_;
  std::vector<Unit> units_;
  std::vector<PodRt> pods_;
  std::vector<uint32_t> spec_first_pod_;     // per workload item: its pods are [first, first + count)
  std::vector<std::vector<int8_t>> shape_fits_;  // [shape][pool]: -1 unknown, 0/1
  uint32_t shape_count_ = 0;

  // pending queue: (-priority, pending since, unit)
  std::set<std::tuple<int64_t, double, uint32_t>> pending_;
  bool retry_queued_ = false;
  double last_scale_up_s_ = -1e300;

  // running totals
  double now_s_ = 0;
  double next_sample_s_ = 0;
  double next_progress_ = 0.01;
  int64_t live_gpu_capacity_milli_ = 0;
  double live_price_usd_per_hour_ = 0;
  int64_t pending_pods_ = 0;
  double gpu_alloc_milli_s_ = 0;
  double gpu_capacity_milli_s_ = 0;
  double lost_gpu_milli_s_ = 0;
  double consolidation_lost_gpu_milli_s_ = 0;
  std::map<std::string, double> chargeback_;
  std::vector<double> pending_samples_;
  std::map<int32_t, std::vector<double>> pending_by_priority_;
  std::vector<double> pending_production_;

  SimResult result_;
};

Engine::Engine(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options)
    : cluster_(cluster),
      workload_(workload),
      options_(options),
      horizon_s_(workload.horizon_s),
      sched_rng_(static_cast<int64_t>(options.seed)),
      spot_rng_(static_cast<int64_t>(options.seed ^ kSpotSeedSalt)) {
  if (!std::isfinite(horizon_s_) || horizon_s_ <= 0)
    throw std::invalid_argument(fmt::format("horizon {} s must be positive", horizon_s_));
  if (horizon_s_ > kMaxHorizonSeconds)
    throw std::invalid_argument(fmt::format("horizon {} s is above the maximum of {:g} s", horizon_s_, kMaxHorizonSeconds));
  if (!std::isfinite(options.sample_interval_s) || options.sample_interval_s <= 0)
    throw std::invalid_argument("sample interval must be positive");
  validate_autoscaler_settings(cluster.autoscaler);
  validate_consolidation_settings(cluster.consolidation);
  for (const SimPool& p : cluster.pools) {
    validate_pool(p.pool);
    validate_pool_settings(p);
  }
  std::unordered_set<std::string> names;
  for (const WorkloadSpec& s : workload.items) {
    validate_spec(s);
    if (!names.insert(s.name).second) throw std::invalid_argument(fmt::format("duplicate workload item name '{}'", s.name));
  }
  build_nodes();
  build_units();
}

void Engine::build_nodes() {
  std::vector<Node> all;
  std::vector<Node> templates;
  for (size_t p = 0; p < cluster_.pools.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    NodePool full = sp.pool;
    full.node_count = full.max_nodes;
    full.min_nodes = 0;
    PoolRt rt;
    rt.first_node = static_cast<NodeId>(all.size());
    rt.split = price_split(sp.pool);
    pools_.push_back(rt);
    const std::string capacity(capacity_type_name(sp.settings.capacity_type));
    for (Node& node : expand_pool(full)) {
      node.labels.emplace_back(kCapacityTypeLabel, capacity);
      all.push_back(std::move(node));
      NodeRt nrt;
      nrt.pool = static_cast<uint32_t>(p);
      nodes_.push_back(std::move(nrt));
    }
    NodePool one = sp.pool;
    one.node_count = 1;
    one.min_nodes = 0;
    one.max_nodes = std::max(one.max_nodes, 1);
    Node t = expand_pool(one).front();
    t.name = sp.pool.name + "-template";
    t.labels.emplace_back(kCapacityTypeLabel, capacity);
    templates.push_back(std::move(t));
  }
  state_ = std::make_unique<ClusterState>(std::move(all));
  templates_ = std::make_unique<ClusterState>(std::move(templates));
  gate_ = std::make_shared<NodeGate>(state_->node_count());
}

void Engine::build_units() {
  std::unordered_map<std::string, uint32_t> shapes;
  // FGD's typical pod mix, counted as the pods are made (sched::typical_pod_mix's counting step,
  // without a second copy of every pod: a million-job workload would double its memory).
  std::map<sched::PodShapeKey, int64_t> shape_counts;
  for (uint32_t s = 0; s < workload_.items.size(); ++s) {
    const WorkloadSpec& spec = workload_.items[s];
    const bool job = spec.kind == WorkloadKind::kJob;
    const int32_t unit_count = job ? 1 : spec.pods;
    const uint32_t pods_per_unit = job ? static_cast<uint32_t>(spec.pods) : 1u;
    const auto [it, inserted] = shapes.try_emplace(shape_key(spec, pods_per_unit), static_cast<uint32_t>(shapes.size()));
    spec_first_pod_.push_back(static_cast<uint32_t>(pods_.size()));
    for (int32_t r = 0; r < unit_count; ++r) {
      Unit u;
      u.spec = s;
      u.replica = job ? -1 : r;
      u.first_pod = static_cast<uint32_t>(pods_.size());
      u.pod_count = pods_per_unit;
      u.shape = it->second;
      const uint32_t id = static_cast<uint32_t>(units_.size());
      for (uint32_t i = 0; i < pods_per_unit; ++i) {
        PodRt p;
        p.pod = make_pod(spec, job ? static_cast<int32_t>(i) : r);
        p.unit = id;
        ++shape_counts[sched::PodShapeKey::of(p.pod)];
        pods_.push_back(std::move(p));
      }
      units_.push_back(u);
    }
  }
  shape_count_ = static_cast<uint32_t>(shapes.size());
  shape_fits_.assign(shape_count_, std::vector<int8_t>(cluster_.pools.size(), -1));

  std::vector<std::pair<sched::PodShapeKey, double>> weighted;
  for (const auto& [key, count] : shape_counts) weighted.emplace_back(key, static_cast<double>(count));
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::select_typical_pods(std::move(weighted), kTypicalPodCoverage),
                                                                  state_->gpu_models());
  const sched::PolicyContext context{frag, state_->gpu_models(), state_.get()};
  base_policy_ = sched::make_policy(options_.policy, context);
  std::vector<uint32_t> rank(state_->node_count());
  std::iota(rank.begin(), rank.end(), 0u);
  scheduler_ = std::make_unique<sched::Scheduler>(gate_policy(sched::make_policy(options_.policy, context), gate_), std::move(rank));
}

bool Engine::template_fits(uint32_t shape, size_t pool) {
  int8_t& f = shape_fits_[shape][pool];
  if (f < 0) {
    // any unit of the shape: its first pod stands for all (they differ only by name)
    const Unit* unit = nullptr;
    for (const Unit& u : units_)
      if (u.shape == shape) {
        unit = &u;
        break;
      }
    const Pod& pod = pods_[unit->first_pod].pod;
    bool ok = cluster_.pools[pool].pool.max_nodes > 0;
    for (const auto& filter : base_policy_.filters)
      if (ok && filter->filter(pod, *templates_, static_cast<NodeId>(pool)) != sched::FilterCode::kFits) ok = false;
    f = ok ? 1 : 0;
  }
  return f == 1;
}

bool Engine::fits_any_pool(const Unit& u, std::string* reason) {
  for (size_t p = 0; p < cluster_.pools.size(); ++p)
    if (template_fits(u.shape, p)) return true;
  if (reason) {
    const Pod& pod = pods_[u.first_pod].pod;
    const sched::ReasonHistogram h = sched::rejection_histogram(base_policy_, pod, *templates_);
    std::string why = h.empty() ? "every pool that admits it has max 0 nodes"
                                : sched::fit_error_message(h, templates_->node_count());
    *reason = fmt::format("pod didn't trigger scale-up: no pool's node admits it ({})", why);
  }
  return false;
}

// ---- clock ------------------------------------------------------------------------------------

void Engine::advance_to(double t) {
  while (next_sample_s_ < t && next_sample_s_ < horizon_s_) {
    emit_sample(next_sample_s_);
    next_sample_s_ += options_.sample_interval_s;
  }
  const double dt = t - now_s_;
  if (dt > 0) {
    gpu_alloc_milli_s_ += static_cast<double>(state_->gpu_used_milli()) * dt;
    gpu_capacity_milli_s_ += static_cast<double>(live_gpu_capacity_milli_) * dt;
  }
  now_s_ = t;
  if (options_.progress && horizon_s_ > 0) {
    while (next_progress_ <= 1.0 && t >= next_progress_ * horizon_s_) {
      options_.progress(next_progress_);
      next_progress_ += 0.01;
    }
  }
}

void Engine::emit_sample(double t) {
  TimeseriesRow row;
  row.time_s = t;
  double reserved_unused_rate = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    row.nodes_per_pool.push_back(pools_[p].live);
    const SimPool& sp = cluster_.pools[p];
    if (sp.settings.reserved_nodes > 0)
      reserved_unused_rate += (sp.settings.reserved_nodes - pools_[p].covered) * *sp.pool.reserved_usd_per_hour;
  }
  row.gpu_allocated_milli = state_->gpu_used_milli();
  row.gpu_capacity_milli = live_gpu_capacity_milli_;
  row.pending_pods = pending_pods_;
  row.cost_usd_per_hour = live_price_usd_per_hour_ + reserved_unused_rate;
  result_.timeseries.push_back(std::move(row));
}

void Engine::request_retry(double t) {
  if (retry_queued_) return;
  retry_queued_ = true;
  queue_.push(t, EventType::kRetry);
}

// ---- nodes ------------------------------------------------------------------------------------

void Engine::launch_node(NodeId n, double t, bool ready_now) {
  NodeRt& node = nodes_[n];
  PoolRt& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  ++node.incarnation;
  node.billing_since_s = t;
  node.covered = pool.covered < sp.settings.reserved_nodes;
  node.price_usd_per_hour = node_price_usd_per_hour(sp, node.covered);
  node.unneeded_since_s = -1;
  node.recheck_after_s = 0;
  if (node.covered) ++pool.covered;
  ++pool.live;
  live_price_usd_per_hour_ += node.price_usd_per_hour;
  live_gpu_capacity_milli_ += int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  if (ready_now) {
    make_ready(n, t);
  } else {
    node.phase = Phase::kProvisioning;
    ++pool.provisioning;
    queue_.push(t + sp.settings.provision_s, EventType::kNodeReady, n, node.incarnation);
  }
}

void Engine::make_ready(NodeId n, double t) {
  NodeRt& node = nodes_[n];
  const SimPool& sp = cluster_.pools[node.pool];
  node.phase = Phase::kReady;
  node.last_pod_change_s = t;
  gate_->set_schedulable(n, true);
  if (sp.settings.capacity_type == CapacityType::kSpot && sp.settings.spot_interruptions_per_hour > 0) {
    // Exponential time to interruption by inversion: -ln(1 - U) / rate, U uniform in [0, 1).
    const double hours = -std::log(1.0 - spot_rng_.float64()) / sp.settings.spot_interruptions_per_hour;
    const double notice = t + hours * kSecondsPerHour;
    if (notice <= horizon_s_) queue_.push(notice, EventType::kSpotNotice, n, node.incarnation);
  }
}

void Engine::close_billing(NodeId n, double t) {
  NodeRt& node = nodes_[n];
  PoolRt& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  NodeLifetime life;
  life.node = state_->node(n).name;
  life.pool = sp.pool.name;
  life.capacity_type = billed_capacity_type(sp, node.covered);
  life.start_s = node.billing_since_s;
  life.end_s = t;
  life.price_usd_per_hour = node.price_usd_per_hour;
  const double cost = (t - node.billing_since_s) / kSecondsPerHour * node.price_usd_per_hour;
  result_.cost_by_pool[life.pool] += cost;
  result_.cost_by_capacity_type[life.capacity_type] += cost;
  result_.cost_usd += cost;
  if (node.covered) pool.covered_s += t - node.billing_since_s;
  result_.nodes.push_back(std::move(life));
}

void Engine::remove_node(NodeId n, double t) {
  NodeRt& node = nodes_[n];
  PoolRt& pool = pools_[node.pool];
  const SimPool& sp = cluster_.pools[node.pool];
  if (!node.pods.empty()) throw std::logic_error("removing a node that still has pods");
  close_billing(n, t);
  if (node.phase == Phase::kProvisioning) --pool.provisioning;
  if (node.covered) --pool.covered;
  --pool.live;
  live_price_usd_per_hour_ = zero_if_residue(live_price_usd_per_hour_ - node.price_usd_per_hour);
  live_gpu_capacity_milli_ -= int64_t{sp.pool.gpus_per_node} * kGpuMilliPerGpu;
  const bool was_covered = node.covered;
  node.phase = Phase::kAbsent;
  node.covered = false;
  node.unneeded_since_s = -1;
  ++node.incarnation;  // stale events of this life are ignored
  gate_->set_schedulable(n, false);
  if (was_covered) pass_coverage(node.pool, t);
}

// A reservation covers any running node of its pool (as AWS applies a reserved instance or savings
// plan to matching running instances every hour): when a covered node goes, the lowest live node
// not covered takes its place. Its billing segment closes at the on-demand price and a new one opens
// at the reserved price; its pods' chargeback rates follow.
void Engine::pass_coverage(uint32_t p, double t) {
  const NodeId first = pools_[p].first_node;
  const NodeId end = first + static_cast<NodeId>(cluster_.pools[p].pool.max_nodes);
  for (NodeId m = first; m < end; ++m) {
    NodeRt& node = nodes_[m];
    if (node.phase == Phase::kAbsent || node.covered) continue;
    close_billing(m, t);
    live_price_usd_per_hour_ = zero_if_residue(live_price_usd_per_hour_ - node.price_usd_per_hour);
    node.covered = true;
    ++pools_[p].covered;
    node.price_usd_per_hour = node_price_usd_per_hour(cluster_.pools[p], true);
    live_price_usd_per_hour_ += node.price_usd_per_hour;
    node.billing_since_s = t;
    for (uint32_t q : node.pods) {
      PodRt& pod = pods_[q];
      chargeback_[pod.pod.namespace_name] += pod.rate_usd_per_hour * (t - pod.charged_since_s) / kSecondsPerHour;
      pod.charged_since_s = t;
      pod.rate_usd_per_hour = node.price_usd_per_hour * pod_price_share(cluster_.pools[p].pool, pools_[p].split, pod.pod);
    }
    return;
  }
}

// ---- pods and units ---------------------------------------------------------------------------

sched::ScheduleResult Engine::decide(const Pod& pod) {
  gate_->learning = false;
  scheduler_->observe(pod, *state_);  // drops the scheduler's cache if node lifecycles changed (node_gate.h)
  gate_->learning = true;
  return scheduler_->decide(pod, *state_, sched_rng_);
}

void Engine::bind(uint32_t p, NodeId n, std::vector<int32_t> gpus, double t) {
  PodRt& pod = pods_[p];
  state_->allocate(n, pod.pod, gpus);
  NodeRt& node = nodes_[n];
  const SimPool& sp = cluster_.pools[node.pool];
  pod.node = n;
  pod.gpus = std::move(gpus);
  pod.charged_since_s = t;
  pod.rate_usd_per_hour = node.price_usd_per_hour * pod_price_share(sp.pool, pools_[node.pool].split, pod.pod);
  node.pods.push_back(p);
  node.last_pod_change_s = t;
  if (units_[pod.unit].replica < 0) ++node.job_pods;
}

void Engine::unbind(uint32_t p, double t) {
  PodRt& pod = pods_[p];
  NodeRt& node = nodes_[pod.node];
  state_->release(pod.node, pod.pod, pod.gpus);
  chargeback_[pod.pod.namespace_name] += pod.rate_usd_per_hour * (t - pod.charged_since_s) / kSecondsPerHour;
  node.pods.erase(std::find(node.pods.begin(), node.pods.end(), p));
  node.last_pod_change_s = t;
  if (units_[pod.unit].replica < 0) --node.job_pods;
  pod.node = sched::kNoNode;
  pod.gpus.clear();
}

void Engine::stop_unit(Unit& unit, double t) {
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p)
    if (pods_[p].node != sched::kNoNode) unbind(p, t);
  request_retry(t);
}

void Engine::make_pending(uint32_t u, double t) {
  Unit& unit = units_[u];
  unit.state = UnitState::kPending;
  unit.pending_since_s = t;
  pending_.insert({-int64_t{workload_.items[unit.spec].priority}, t, u});
  pending_pods_ += unit.pod_count;
  request_retry(t);
}

bool Engine::try_start(uint32_t u, double t) {
  Unit& unit = units_[u];
  const uint32_t end = unit.first_pod + unit.pod_count;
  std::vector<double> last_change;  // the nodes' last pod change before each bind, for a rollback
  for (uint32_t p = unit.first_pod; p < end; ++p) {
    sched::ScheduleResult r = decide(pods_[p].pod);
    if (!r.scheduled()) {
      for (uint32_t q = p; q-- > unit.first_pod;) {  // roll the gang back, last bind first; nothing was charged
        PodRt& pod = pods_[q];
        NodeRt& node = nodes_[pod.node];
        state_->release(pod.node, pod.pod, pod.gpus);
        node.pods.pop_back();
        node.last_pod_change_s = last_change[q - unit.first_pod];
        if (unit.replica < 0) --node.job_pods;
        pod.node = sched::kNoNode;
        pod.gpus.clear();
      }
      return false;
    }
    last_change.push_back(nodes_[r.node].last_pod_change_s);
    bind(p, r.node, std::move(r.gpus), t);
  }
  const WorkloadSpec& spec = workload_.items[unit.spec];
  pending_.erase({-int64_t{spec.priority}, unit.pending_since_s, u});
  pending_pods_ -= unit.pod_count;
  for (uint32_t p = unit.first_pod; p < end; ++p) add_pending_sample(spec.priority, t - unit.pending_since_s);
  unit.state = UnitState::kRunning;
  unit.run_start_s = t;
  ++unit.starts;
  if (spec.kind == WorkloadKind::kJob)
    queue_.push(t + (spec.duration_s - unit.saved_s), EventType::kCompletion, u, ++unit.run_generation);
  return true;
}

void Engine::interrupt(uint32_t u, double t) {
  Unit& unit = units_[u];
  const WorkloadSpec& spec = workload_.items[unit.spec];
  if (spec.kind == WorkloadKind::kJob) {
    // Work since the run started; checkpoints every checkpoint_interval_s of running keep
    // floor(ran / interval) intervals of it (none without checkpoints).
    const double ran = t - unit.run_start_s;
    const double kept = checkpointed_s(spec, ran);
    lost_gpu_milli_s_ += (ran - kept) * static_cast<double>(pods_[unit.first_pod].pod.gpu_request_milli()) * unit.pod_count;
    unit.saved_s += kept;
    ++unit.run_generation;  // its completion event is now stale
  }
  ++unit.interruptions;
  result_.evictions += unit.pod_count;
  stop_unit(unit, t);
  make_pending(u, t);
}

// ---- events -----------------------------------------------------------------------------------

void Engine::on_arrival(uint32_t u, double t) {
  Unit& unit = units_[u];
  // The informer sees each pod once, when it is created (ScorePlugin::observe).
  for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) scheduler_->observe(pods_[p].pod, *state_);
  if (!fits_any_pool(unit, &unit.reason)) {
    unit.state = UnitState::kFailed;
    return;
  }
  make_pending(u, t);
}

void Engine::on_completion(uint32_t u, uint32_t generation, double t) {
  Unit& unit = units_[u];
  if (unit.state != UnitState::kRunning || unit.run_generation != generation) return;
  stop_unit(unit, t);
  unit.state = UnitState::kCompleted;
  unit.completion_s = t;
  unit.saved_s = workload_.items[unit.spec].duration_s;
}

void Engine::on_node_ready(NodeId n, uint32_t incarnation, double t) {
  NodeRt& node = nodes_[n];
  if (node.incarnation != incarnation || node.phase != Phase::kProvisioning) return;
  --pools_[node.pool].provisioning;
  make_ready(n, t);
  request_retry(t);
}

void Engine::on_spot_notice(NodeId n, uint32_t incarnation, double t) {
  NodeRt& node = nodes_[n];
  if (node.incarnation != incarnation || node.phase != Phase::kReady) return;
  ++result_.spot_interruptions;
  node.phase = Phase::kCordoned;
  node.unneeded_since_s = -1;
  gate_->set_schedulable(n, false);
  std::vector<uint32_t> units;
  for (uint32_t p : node.pods)
    if (std::find(units.begin(), units.end(), pods_[p].unit) == units.end()) units.push_back(pods_[p].unit);
  for (uint32_t u : units) interrupt(u, t);
  queue_.push(t + cluster_.pools[node.pool].settings.spot_notice_s, EventType::kSpotReclaim, n, incarnation);
}

void Engine::on_spot_reclaim(NodeId n, uint32_t incarnation, double t) {
  NodeRt& node = nodes_[n];
  if (node.incarnation != incarnation || node.phase != Phase::kCordoned) return;
  remove_node(n, t);
}

void Engine::retry_pending(double t) {
  retry_queued_ = false;
  std::vector<uint8_t> failed_shape(shape_count_, 0);
  std::vector<uint32_t> order;
  order.reserve(pending_.size());
  for (const auto& entry : pending_) order.push_back(std::get<2>(entry));
  for (uint32_t u : order) {
    if (failed_shape[units_[u].shape]) continue;
    if (!try_start(u, t)) failed_shape[units_[u].shape] = 1;
  }
}

void Engine::on_tick(double t) {
  const AutoscalerSettings& a = cluster_.autoscaler;
  if (t + a.scan_interval_s <= horizon_s_) queue_.push(t + a.scan_interval_s, EventType::kAutoscalerTick);
  scale_up(t);
  if (a.scale_down) scale_down(t);
}

// ---- autoscaler -------------------------------------------------------------------------------

void Engine::scale_up(double t) {
  const AutoscalerSettings& a = cluster_.autoscaler;
  std::vector<const Pod*> pods;
  std::vector<uint32_t> shapes;
  for (const auto& entry : pending_) {
    const Unit& unit = units_[std::get<2>(entry)];
    if (unit.pending_since_s > t - a.scale_up_delay_s) continue;
    for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) {
      pods.push_back(&pods_[p].pod);
      shapes.push_back(unit.shape);
    }
  }
  if (pods.empty()) return;

  // Pods that fit the free room of ready nodes do not need new ones (CA's FilterOutSchedulable: a
  // gang job's pods wait for each other, so some of them may fit today's nodes). Simulated by
  // scheduling them for real and undoing it.
  {
    std::vector<std::pair<NodeId, std::vector<int32_t>>> trial(pods.size(), {sched::kNoNode, {}});
    for (size_t i = 0; i < pods.size(); ++i) {
      sched::ScheduleResult r = decide(*pods[i]);
      if (!r.scheduled()) continue;
      state_->allocate(r.node, *pods[i], r.gpus);
      trial[i] = {r.node, std::move(r.gpus)};
    }
    std::vector<const Pod*> left;
    std::vector<uint32_t> left_shapes;
    for (size_t i = pods.size(); i-- > 0;)
      if (trial[i].first != sched::kNoNode) state_->release(trial[i].first, *pods[i], trial[i].second);
    for (size_t i = 0; i < pods.size(); ++i)
      if (trial[i].first == sched::kNoNode) {
        left.push_back(pods[i]);
        left_shapes.push_back(shapes[i]);
      }
    pods = std::move(left);
    shapes = std::move(left_shapes);
  }
  if (pods.empty()) return;

  // Pods that fit a node already being provisioned do not count again (CA's upcoming nodes).
  std::vector<std::vector<NodeBin>> upcoming(pools_.size());
  for (size_t p = 0; p < pools_.size(); ++p)
    upcoming[p].assign(static_cast<size_t>(pools_[p].provisioning), NodeBin(cluster_.pools[p].pool));
  std::vector<const Pod*> rest;
  std::vector<uint32_t> rest_shapes;
  for (size_t i = 0; i < pods.size(); ++i) {
    bool helped = false;
    for (size_t p = 0; p < pools_.size() && !helped; ++p) {
      if (upcoming[p].empty() || !template_fits(shapes[i], p)) continue;
      for (NodeBin& bin : upcoming[p])
        if (bin.try_add(*pods[i])) {
          helped = true;
          break;
        }
    }
    if (!helped) {
      rest.push_back(pods[i]);
      rest_shapes.push_back(shapes[i]);
    }
  }
  if (rest.empty()) return;

  std::vector<ScaleUpOption> options;
  for (size_t p = 0; p < pools_.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    const int32_t room = sp.pool.max_nodes - pools_[p].live;
    if (room <= 0) continue;
    std::vector<const Pod*> fitting;
    for (size_t i = 0; i < rest.size(); ++i)
      if (template_fits(rest_shapes[i], p)) fitting.push_back(rest[i]);
    if (fitting.empty()) continue;
    ScaleUpOption o = estimate_scale_up(p, sp.pool, fitting, room);
    if (o.nodes == 0) continue;
    // Marginal price: nodes the reservation still covers cost nothing more.
    const int32_t free_reserved = std::max(0, sp.settings.reserved_nodes - pools_[p].covered);
    const int32_t covered = std::min(free_reserved, o.nodes);
    o.price_usd_per_hour = (o.nodes - covered) * node_price_usd_per_hour(sp, false);
    options.push_back(o);
  }
  const int chosen = choose_option(options, a.expander);
  if (chosen < 0) return;
  const ScaleUpOption& o = options[static_cast<size_t>(chosen)];
  int32_t left = o.nodes;
  const NodeId first = pools_[o.pool].first_node;
  for (NodeId n = first; left > 0 && n < first + static_cast<NodeId>(cluster_.pools[o.pool].pool.max_nodes); ++n)
    if (nodes_[n].phase == Phase::kAbsent) {
      launch_node(n, t, false);
      --left;
    }
  result_.nodes_scaled_up += o.nodes - left;
  last_scale_up_s_ = t;
}

void Engine::scale_down(double t) {
  const AutoscalerSettings& a = cluster_.autoscaler;
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    NodeRt& node = nodes_[n];
    if (node.phase != Phase::kReady) continue;
    // CA lists a node as unneeded only while it could be removed: utilization below the threshold,
    // no pod that blocks eviction (job pods, as safe-to-evict "false"), and not inside the recheck
    // period after a failed removal. A node that drops off the list loses its unneeded time.
    const bool unneeded = node_utilization(*state_, n) < a.utilization_threshold && node.job_pods == 0 &&
                          t >= node.recheck_after_s;
    if (!unneeded) node.unneeded_since_s = -1;
    else if (node.unneeded_since_s < 0) node.unneeded_since_s = t;
  }
  if (t < last_scale_up_s_ + a.scale_down_delay_after_add_s) return;
  int moved_nodes = 0;
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    NodeRt& node = nodes_[n];
    if (node.phase != Phase::kReady || node.unneeded_since_s < 0) continue;
    if (t - node.unneeded_since_s < a.scale_down_unneeded_s) continue;
    if (pools_[node.pool].live <= cluster_.pools[node.pool].pool.min_nodes) continue;
    if (node.pods.empty()) {
      remove_node(n, t);
      ++result_.nodes_scaled_down;
      continue;
    }
    if (moved_nodes > 0) continue;
    if (try_move_pods(n, t)) {
      remove_node(n, t);
      ++result_.nodes_scaled_down;
      ++moved_nodes;
    } else {
      node.recheck_after_s = t + a.unremovable_recheck_s;
      node.unneeded_since_s = -1;
    }
  }
}

// Scale-down of a node with pods: if the budgets allow it and the dry run places all of them on
// other nodes, they move there (the caller removes n); otherwise nothing changes.
bool Engine::try_move_pods(NodeId n, double t) {
  if (!budgets_allow(units_on(n))) return false;
  const std::vector<uint32_t> moving = nodes_[n].pods;
  std::optional<Placements> placed = dry_run_moves(n, moving);
  if (!placed) return false;
  for (size_t i = 0; i < moving.size(); ++i) {
    unbind(moving[i], t);
    bind(moving[i], (*placed)[i].first, std::move((*placed)[i].second), t);
  }
  result_.evictions += static_cast<int64_t>(moving.size());
  request_retry(t);
  return true;
}

// The dry run of scale-down moves and consolidation: node n cordoned, the `moving` pods (bound, on n
// or, for a gang, elsewhere) released in the books, then placed again one by one with the scheduler.
// The books go back to the pods' real places either way (releases last first, then the pods in
// order). Returns where each pod would go, with n still cordoned; nullopt, with n ready again, if one
// does not fit.
std::optional<Engine::Placements> Engine::dry_run_moves(NodeId n, const std::vector<uint32_t>& moving) {
  NodeRt& node = nodes_[n];
  node.phase = Phase::kCordoned;
  gate_->set_schedulable(n, false);
  for (uint32_t p : moving) state_->release(pods_[p].node, pods_[p].pod, pods_[p].gpus);
  Placements placed;
  for (uint32_t p : moving) {
    sched::ScheduleResult r = decide(pods_[p].pod);
    if (!r.scheduled()) break;
    state_->allocate(r.node, pods_[p].pod, r.gpus);
    placed.emplace_back(r.node, std::move(r.gpus));
  }
  for (size_t i = placed.size(); i-- > 0;) state_->release(placed[i].first, pods_[moving[i]].pod, placed[i].second);
  for (uint32_t p : moving) state_->allocate(pods_[p].node, pods_[p].pod, pods_[p].gpus);
  if (placed.size() < moving.size()) {
    node.phase = Phase::kReady;
    gate_->set_schedulable(n, true);
    return std::nullopt;
  }
  return placed;
}

// Units with a pod on node n, in binding order.
std::vector<uint32_t> Engine::units_on(NodeId n) const {
  std::vector<uint32_t> units;
  for (uint32_t p : nodes_[n].pods)
    if (std::find(units.begin(), units.end(), pods_[p].unit) == units.end()) units.push_back(pods_[p].unit);
  return units;
}

// Whether stopping every bound pod of `units` at once keeps each workload item's disruption budget:
// per item, the pods stopped must not exceed disruptions_allowed (counted before any of them stops;
// kube's eviction API would refuse the evictions beyond it one by one).
bool Engine::budgets_allow(const std::vector<uint32_t>& units) const {
  std::vector<std::pair<uint32_t, int32_t>> stopped;  // (item, pods stopped), first-seen order
  for (uint32_t u : units) {
    const Unit& unit = units_[u];
    int32_t bound = 0;
    for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) bound += pods_[p].node != sched::kNoNode ? 1 : 0;
    auto it = std::find_if(stopped.begin(), stopped.end(), [&](const auto& e) { return e.first == unit.spec; });
    if (it == stopped.end()) stopped.emplace_back(unit.spec, bound);
    else it->second += bound;
  }
  for (const auto& [item, count] : stopped) {
    const WorkloadSpec& spec = workload_.items[item];
    if (!spec.disruption_budget) continue;
    int32_t healthy = 0;
    const uint32_t first = spec_first_pod_[item];
    for (uint32_t p = first; p < first + static_cast<uint32_t>(spec.pods); ++p) healthy += pods_[p].node != sched::kNoNode ? 1 : 0;
    if (count > disruptions_allowed(*spec.disruption_budget, spec.pods, healthy)) return false;
  }
  return true;
}

// ---- consolidation ----------------------------------------------------------------------------

void Engine::on_consolidation_tick(double t) {
  const ConsolidationSettings& c = cluster_.consolidation;
  if (t + c.interval_s <= horizon_s_) queue_.push(t + c.interval_s, EventType::kConsolidationTick);
  // Pods waiting for room get it before nodes go (Karpenter leaves nodes that pending pods are
  // nominated to alone): run the retry that is due now first.
  if (retry_queued_) retry_pending(t);
  consolidate(t);
}

// A reservation is paid whether its nodes run or not: removing a covered node lowers the bill only
// if another live node of the pool, billed on demand, takes the reservation over.
bool Engine::removal_saves_money(NodeId n) const {
  const NodeRt& node = nodes_[n];
  if (!node.covered) return node.price_usd_per_hour > 0;
  return pools_[node.pool].live > pools_[node.pool].covered;
}

void Engine::consolidate(double t) {
  const ConsolidationSettings& c = cluster_.consolidation;
  // A pool is left alone while a pending pod could run on its nodes: it waits for room there (a gang
  // for its last nodes, a pod for a node being provisioned), as Karpenter leaves nodes nominated for
  // pending pods alone.
  std::vector<uint8_t> wanted(pools_.size(), 0);
  {
    std::vector<uint8_t> seen(shape_count_, 0);
    for (const auto& entry : pending_) {
      const uint32_t shape = units_[std::get<2>(entry)].shape;
      if (seen[shape]) continue;
      seen[shape] = 1;
      for (size_t p = 0; p < pools_.size(); ++p)
        if (!wanted[p] && template_fits(shape, p)) wanted[p] = 1;
    }
  }
  // (Karpenter disruption cost, job GPU-milli-seconds lost, node): the order candidates are tried in.
  std::vector<std::tuple<double, double, NodeId>> candidates;
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    const NodeRt& node = nodes_[n];
    if (node.phase != Phase::kReady || wanted[node.pool] || t - node.last_pod_change_s < c.consolidate_after_s) continue;
    if (pools_[node.pool].live <= cluster_.pools[node.pool].pool.min_nodes) continue;
    if (!(node_utilization(*state_, n) < c.threshold) || !removal_saves_money(n)) continue;
    if (node.pods.empty()) {  // emptiness: nothing to move, any number per tick
      remove_node(n, t);
      ++result_.nodes_consolidated;
      continue;
    }
    double cost = 0, lost = 0;
    for (uint32_t u : units_on(n)) {
      const Unit& unit = units_[u];
      const WorkloadSpec& spec = workload_.items[unit.spec];
      cost += eviction_cost(spec.priority) * unit.pod_count;  // a gang restarts whole
      if (spec.kind == WorkloadKind::kJob) {
        const double ran = t - unit.run_start_s;
        lost += (ran - checkpointed_s(spec, ran)) * static_cast<double>(pods_[unit.first_pod].pod.gpu_request_milli()) * unit.pod_count;
      }
    }
    candidates.emplace_back(cost, lost, n);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [cost, lost, n] : candidates) {
    if (pools_[nodes_[n].pool].live <= cluster_.pools[nodes_[n].pool].pool.min_nodes) continue;
    if (try_consolidate(n, t)) return;  // single-node consolidation: one node per tick
  }
}

// Every pod of the units on node n (a job's pods on other nodes too) through the dry run
// (dry_run_moves). If all fit and the budgets allow it, the pods restart where the dry run put them
// and n is removed; otherwise nothing changes.
bool Engine::try_consolidate(NodeId n, double t) {
  const std::vector<uint32_t> units = units_on(n);
  if (!budgets_allow(units)) return false;
  std::vector<uint32_t> moving;
  for (uint32_t u : units)
    for (uint32_t p = units_[u].first_pod; p < units_[u].first_pod + units_[u].pod_count; ++p)
      if (pods_[p].node != sched::kNoNode) moving.push_back(p);
  std::optional<Placements> placed = dry_run_moves(n, moving);
  if (!placed) return false;
  const auto moved_here = static_cast<int64_t>(nodes_[n].pods.size());
  for (uint32_t u : units) {  // jobs keep the work up to their last checkpoint
    Unit& unit = units_[u];
    const WorkloadSpec& spec = workload_.items[unit.spec];
    if (spec.kind != WorkloadKind::kJob) continue;
    const double ran = t - unit.run_start_s;
    const double kept = checkpointed_s(spec, ran);
    const double lost = (ran - kept) * static_cast<double>(pods_[unit.first_pod].pod.gpu_request_milli()) * unit.pod_count;
    lost_gpu_milli_s_ += lost;
    consolidation_lost_gpu_milli_s_ += lost;
    unit.saved_s += kept;
  }
  // All off first, then all on: a gang pod may land on GPUs another moving pod held.
  for (uint32_t p : moving) unbind(p, t);
  for (size_t i = 0; i < moving.size(); ++i) bind(moving[i], (*placed)[i].first, std::move((*placed)[i].second), t);
  for (uint32_t u : units) {
    Unit& unit = units_[u];
    const WorkloadSpec& spec = workload_.items[unit.spec];
    unit.run_start_s = t;
    ++unit.starts;
    ++unit.consolidations;
    if (spec.kind == WorkloadKind::kJob)
      queue_.push(t + (spec.duration_s - unit.saved_s), EventType::kCompletion, u, ++unit.run_generation);
  }
  result_.consolidation_restarts += static_cast<int64_t>(moving.size());
  result_.consolidation_moved_pods += moved_here;
  result_.evictions += static_cast<int64_t>(moving.size());
  remove_node(n, t);
  ++result_.nodes_consolidated;
  return true;
}

// A job's name, or <service>-<replica>.
std::string Engine::unit_name(const Unit& u) const {
  const std::string& name = workload_.items[u.spec].name;
  return u.replica < 0 ? name : fmt::format("{}-{}", name, u.replica);
}

std::string Engine::subject_name(const Event& e) const {
  switch (e.type) {
    case EventType::kArrival:
    case EventType::kCompletion: return unit_name(units_[e.subject]);
    case EventType::kNodeReady:
    case EventType::kSpotNotice:
    case EventType::kSpotReclaim: return state_->node(e.subject).name;
    default: return {};
  }
}

SimResult Engine::run() {
  result_.policy = options_.policy;
  result_.seed = options_.seed;
  result_.horizon_s = horizon_s_;
  for (const SimPool& p : cluster_.pools) {
    result_.pools.push_back(p.pool.name);
    result_.cost_by_pool[p.pool.name] = 0;
  }

  // The pools' initial nodes are ready at time 0.
  for (size_t p = 0; p < pools_.size(); ++p)
    for (int32_t i = 0; i < cluster_.pools[p].pool.node_count; ++i) launch_node(pools_[p].first_node + static_cast<NodeId>(i), 0, true);

  // Arrivals in time order; equal times keep the input order.
  std::vector<uint32_t> order(units_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return workload_.items[units_[a].spec].arrival_s < workload_.items[units_[b].spec].arrival_s; });
  for (uint32_t u : order) {
    const double at = workload_.items[units_[u].spec].arrival_s;
    if (at <= horizon_s_) queue_.push(at, EventType::kArrival, u);
  }
  if (cluster_.autoscaler.enabled) queue_.push(0, EventType::kAutoscalerTick);
  if (cluster_.consolidation.enabled) queue_.push(0, EventType::kConsolidationTick);

  while (!queue_.empty() && queue_.top().time_s <= horizon_s_) {
    const Event e = queue_.pop();
    advance_to(e.time_s);
    if (options_.trace && e.type != EventType::kRetry) result_.trace.push_back({e.time_s, e.type, subject_name(e)});
    switch (e.type) {
      case EventType::kArrival: on_arrival(e.subject, e.time_s); break;
      case EventType::kCompletion: on_completion(e.subject, e.generation, e.time_s); break;
      case EventType::kNodeReady: on_node_ready(e.subject, e.generation, e.time_s); break;
      case EventType::kSpotNotice: on_spot_notice(e.subject, e.generation, e.time_s); break;
      case EventType::kSpotReclaim: on_spot_reclaim(e.subject, e.generation, e.time_s); break;
      case EventType::kAutoscalerTick: on_tick(e.time_s); break;
      case EventType::kRetry: retry_pending(e.time_s); break;
      case EventType::kConsolidationTick: on_consolidation_tick(e.time_s); break;
    }
  }
  advance_to(horizon_s_);

  // Close the books at the horizon.
  const double h = horizon_s_;
  for (uint32_t p = 0; p < pods_.size(); ++p)
    if (pods_[p].node != sched::kNoNode)
      chargeback_[pods_[p].pod.namespace_name] += pods_[p].rate_usd_per_hour * (h - pods_[p].charged_since_s) / kSecondsPerHour;
  for (NodeId n = 0; n < nodes_.size(); ++n)
    if (nodes_[n].phase != Phase::kAbsent) close_billing(n, h);
  for (size_t p = 0; p < pools_.size(); ++p) {
    const SimPool& sp = cluster_.pools[p];
    if (sp.settings.reserved_nodes == 0) continue;
    const double unused_h = (sp.settings.reserved_nodes * h - pools_[p].covered_s) / kSecondsPerHour;
    const double cost = zero_if_residue(unused_h * *sp.pool.reserved_usd_per_hour);  // all used: exactly 0
    result_.cost_by_pool[sp.pool.name] += cost;
    result_.cost_by_capacity_type["reserved"] += cost;
    result_.cost_usd += cost;
    result_.reserved_unused_usd += cost;
  }
  result_.chargeback = chargeback_;
  double charged = 0;
  for (const auto& [ns, usd] : chargeback_) charged += usd;
  result_.idle_cost_usd = zero_if_residue(result_.cost_usd - charged);  // everything charged: 0, not -0.00
  result_.gpu_allocation_pct_mean = gpu_capacity_milli_s_ > 0 ? gpu_alloc_milli_s_ / gpu_capacity_milli_s_ * 100.0 : 0.0;
  result_.lost_gpu_hours = lost_gpu_milli_s_ / kGpuMilliPerGpu / kSecondsPerHour;
  result_.consolidation_lost_gpu_hours = consolidation_lost_gpu_milli_s_ / kGpuMilliPerGpu / kSecondsPerHour;

  for (uint32_t u = 0; u < units_.size(); ++u) {
    const Unit& unit = units_[u];
    const WorkloadSpec& spec = workload_.items[unit.spec];
    UnitOutcome out;
    out.name = unit_name(unit);
    out.state = unit.state;
    out.pods = static_cast<int32_t>(unit.pod_count);
    out.completion_s = unit.completion_s;
    out.starts = unit.starts;
    out.interruptions = unit.interruptions;
    out.consolidations = unit.consolidations;
    out.saved_work_s = unit.saved_s;
    out.reason = unit.reason;
    switch (unit.state) {
      case UnitState::kCompleted: result_.pods_completed += unit.pod_count; break;
      case UnitState::kRunning: result_.pods_running += unit.pod_count; break;
      case UnitState::kFailed: result_.pods_failed += unit.pod_count; break;
      case UnitState::kPending:
        result_.pods_pending += unit.pod_count;
        for (uint32_t i = 0; i < unit.pod_count; ++i) add_pending_sample(spec.priority, h - unit.pending_since_s);
        break;
      case UnitState::kWaiting:  // arrives after the horizon: not part of this run
        break;
    }
    result_.units.push_back(std::move(out));
  }
  result_.pending = stats(std::move(pending_samples_));
  for (auto& [priority, samples] : pending_by_priority_) result_.pending_by_priority[priority] = stats(std::move(samples));
  result_.production_priority = options_.production_priority;
  result_.pending_production = stats(std::move(pending_production_));
  if (options_.progress) options_.progress(1.0);
  return std::move(result_);
}

}  // namespace

const char* unit_state_name(UnitState state) {
  switch (state) {
    case UnitState::kWaiting: return "waiting";
    case UnitState::kPending: return "pending";
    case UnitState::kRunning: return "running";
    case UnitState::kCompleted: return "completed";
    case UnitState::kFailed: return "failed";
  }
  return "unknown";
}

SimResult simulate(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options) {
  Engine engine(cluster, workload, options);
  return engine.run();
}

}  // namespace gpufleet::sim
