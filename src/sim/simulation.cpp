#include "sim/simulation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "model/extended_resource_toleration.h"
#include "model/node_pool.h"
#include "inputs/sim/fault_checks.h"
#include "sim/controllers/alerting.h"
#include "sim/controllers/cluster_autoscaler.h"
#include "sim/controllers/consolidation.h"
#include "sim/controllers/driver_upgrade.h"
#include "sim/controllers/fault_injector.h"
#include "sim/controllers/inference_services.h"
#include "sim/controllers/karpenter_provisioner.h"
#include "sim/controllers/kueue_admission.h"
#include "sim/controllers/rolling_update.h"
#include "sim/controllers/scaled_job.h"
#include "sim/controllers/service_autoscaling.h"
#include "sim/engine/billing.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/fleet.h"
#include "sim/engine/metrics.h"
#include "sim/engine/pending_queue.h"
#include "sim/engine/placement.h"
#include "sim/engine/units.h"

namespace gpufleet::sim {
namespace {

// The spot generator's seed is the run seed XOR this constant, so spot draws do not depend on how
// many numbers the placement policy drew (an arbitrary odd 64-bit constant, the golden ratio's).
constexpr uint64_t kSpotSeedSalt = 0x9e3779b97f4a7c15ULL;

void validate(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options) {
  const double horizon_s = workload.horizon_s;
  if (!std::isfinite(horizon_s) || horizon_s <= 0) throw std::invalid_argument(fmt::format("horizon {} s must be positive", horizon_s));
  if (horizon_s > kMaxHorizonSeconds)
    throw std::invalid_argument(fmt::format("horizon {} s is above the maximum of {:g} s", horizon_s, kMaxHorizonSeconds));
  if (!std::isfinite(options.sample_interval_s) || !(options.sample_interval_s >= kMinIntervalSeconds))
    throw std::invalid_argument(fmt::format("sample interval {:g} s is below the shortest interval of {:g} s", options.sample_interval_s,
                                            kMinIntervalSeconds));
  validate_autoscaler_settings(cluster.autoscaler);
  validate_consolidation_settings(cluster.consolidation);
  validate_driver_upgrades(cluster);
  for (const SimPool& p : cluster.pools) {
    validate_pool(p.pool);
    validate_pool_settings(p);
  }
  std::unordered_set<std::string_view> names;  // views of the items' names: no copy of a million strings
  names.reserve(workload.items.size());
  for (const WorkloadSpec& s : workload.items) {
    validate_spec(s);
    if (!names.insert(s.name).second) throw std::invalid_argument(fmt::format("duplicate workload item name '{}'", s.name));
    if (s.on_demand && (s.kind != WorkloadKind::kJob || !s.queue_name.empty() || s.checkpoint_interval_s > 0 || s.checkpoint_cost_s > 0))
      throw std::invalid_argument(fmt::format("{}: an on-demand job template must be a job without queueName or checkpoints", s.name));
    if (!s.queue_name.empty() && !workload.queues)
      throw std::invalid_argument(fmt::format("job {} names queue {} but the workload has no queues", s.name, s.queue_name));
    if (s.topology.mode != queue::TopologyRequest::Mode::kNone &&
        std::find(workload.topology.levels.begin(), workload.topology.levels.end(), s.topology.level) == workload.topology.levels.end())
      throw std::invalid_argument(fmt::format("job {}: topology level {} is not one of the workload's levels", s.name, s.topology.level));
  }
  for (const SimPool& p : cluster.pools) {
    const std::string& np = p.settings.karpenter_node_pool;
    if (!np.empty() && std::none_of(cluster.node_pools.begin(), cluster.node_pools.end(),
                                    [&](const KarpenterNodePool& k) { return k.name == np; }))
      throw std::invalid_argument(fmt::format("pool {}: Karpenter NodePool '{}' is not defined", p.pool.name, np));
  }
  for (const LimitChange& c : cluster.faults.limit_changes)
    if (std::none_of(cluster.node_pools.begin(), cluster.node_pools.end(), [&](const KarpenterNodePool& k) { return k.name == c.node_pool; }))
      throw std::invalid_argument(fmt::format("limit change at {} s: NodePool '{}' is not defined", c.at_s, c.node_pool));
  if (workload.topology.slowdown.size() != workload.topology.levels.size())
    throw std::invalid_argument("topology: one slowdown per level is needed");
  double expected = 0;
  for (size_t i = 0; i < cluster.faults.faults.size(); ++i) {
    const Fault& f = cluster.faults.faults[i];
    if (std::optional<std::string> error = fault_error(f, cluster.pools)) throw std::invalid_argument(fmt::format("faults[{}].{}", i, *error));
    expected += expected_rate_faults(f, cluster.pools, horizon_s);
    if (expected > kMaxExpectedRateFaults)
      throw std::invalid_argument(fmt::format(
          "faults[{}].rate: the rate faults up to this one would draw about {:.0f} faults over the run (rate x nodes x hours), more "
          "than {:.0f} (kMaxExpectedRateFaults, docs/input-limits.md)",
          i, expected, kMaxExpectedRateFaults));
  }
}

// The fleet's node events that other modules act on: a node became Ready or capacity came back
// (retry the pending units), a node was interrupted or failed, or a GPU was lost (its units stop).
// An interruption of a cordoned node is a spot notice (Fleet::interrupt cordons first; a failed node
// is NotReady): the units get what is left of the pool's notice window, and the pool's notices are
// counted for the checkpoint advice.
class NodeEventWiring final : public NodeListener {
 public:
  NodeEventWiring(const ClusterConfig& cluster, const Fleet& fleet, PendingQueue& pending, Units& units)
      : cluster_(cluster), fleet_(fleet), pending_(pending), units_(units) {}
  void on_node_ready(NodeId /*n*/, double t) override { pending_.request_retry(t); }
  void on_node_interrupted(NodeId n, double t) override {
    // Under a notice the units get what is left of its window (0 at the reclaim); a failure gives none.
    const double reclaim_at_s = fleet_.reclaim_at_s(n);
    const double notice_s = fleet_.phase(n) == NodePhase::kCordoned && reclaim_at_s >= 0 ? std::max(0.0, reclaim_at_s - t) : 0.0;
    units_.evict_node(n, t, notice_s);
  }
  void on_gpu_lost(NodeId n, int32_t g, double t) override { units_.evict_gpu(n, g, t); }
  void on_capacity_returned(NodeId /*n*/, double t) override { pending_.request_retry(t); }
  /// Spot notices per node-hour of each pool's billed nodes over the run (`nodes`: the billing
  /// segments), pool order; 0 for a pool without node-hours.
  std::vector<double> pool_interruptions_per_hour(const std::vector<NodeLifetime>& nodes) const {
    std::map<std::string, size_t> index;
    for (size_t p = 0; p < cluster_.pools.size(); ++p) index.emplace(cluster_.pools[p].pool.name, p);
    std::vector<double> hours(cluster_.pools.size(), 0);
    for (const NodeLifetime& l : nodes)
      if (auto it = index.find(l.pool); it != index.end()) hours[it->second] += (l.end_s - l.start_s) / 3600.0;
    std::vector<double> rate(cluster_.pools.size(), 0);
    for (size_t p = 0; p < rate.size(); ++p) rate[p] = hours[p] > 0 ? static_cast<double>(fleet_.notices(p)) / hours[p] : 0.0;
    return rate;
  }

 private:
  const ClusterConfig& cluster_;
  const Fleet& fleet_;
  PendingQueue& pending_;
  Units& units_;
};

}  // namespace

struct Simulation::Parts {
  static std::unique_ptr<const Workload> admit(const ClusterConfig& cluster, const Workload& workload);

  Parts(const ClusterConfig& cluster, const Workload& original, const SimOptions& options)
      : admitted(admit(cluster, original)),
        workload(admitted ? *admitted : original),
        cluster(cluster),
        options(options),
        loop(workload.horizon_s),
        fleet(cluster, loop, options.seed ^ kSpotSeedSalt),
        billing(cluster, fleet),
        pending(loop),
        metrics(options, workload.horizon_s, fleet, billing, [this] { return pending.pods() + units.queued_pods(); }),
        placement(fleet, options.policy, Units::pod_mix(workload), options.seed),
        units(workload, loop, fleet, placement, billing, pending, metrics),
        wiring(cluster, fleet, pending, units) {
    fleet.add_listener(billing);
    fleet.add_listener(wiring);
    loop.add_clock_observer([this](double t) { metrics.advance_to(t); });
    if (options.trace) loop.set_trace(&result.trace);
    // Through the caller's object: a progress callback may keep state (util/progress.h counts steps).
    if (options.progress) loop.set_progress([&options](double fraction) { options.progress(fraction); });
    const SimulationModules modules{loop, fleet, placement, pending, units, billing};
    if (!cluster.faults.outages.empty()) wire_capacity_outages();
    if (cluster.autoscaler.enabled) controllers.push_back(std::make_unique<ClusterAutoscaler>(cluster.autoscaler, modules));
    if (!cluster.node_pools.empty()) controllers.push_back(std::make_unique<KarpenterProvisioner>(cluster, modules));
    loop.add_clock_observer([this](double) { watch_pending(); });
    if (cluster.consolidation.enabled || !cluster.node_pools.empty()) controllers.push_back(std::make_unique<Consolidation>(cluster, modules));
    if (!cluster.faults.upgrades.empty()) controllers.push_back(std::make_unique<DriverUpgradeController>(cluster, modules));
    if (workload.queues) controllers.push_back(std::make_unique<KueueAdmission>(*workload.queues, modules));
    if (!workload.scaled_jobs.empty()) controllers.push_back(std::make_unique<ScaledJobs>(workload, modules));
    if (!workload.rollouts.empty() || !workload.service_autoscalers.empty()) validate_rollouts_and_autoscalers(workload);
    if (!workload.service_autoscalers.empty()) controllers.push_back(std::make_unique<ServiceAutoscalers>(workload, modules));
    if (!workload.inference.empty()) {
      if (options.serving_catalog == nullptr)
        throw std::invalid_argument("inference services need a serving catalog (SimOptions::serving_catalog)");
      controllers.push_back(std::make_unique<InferenceServices>(workload, cluster, *options.serving_catalog, options.seed,
                                                                options.sample_interval_s, modules));
    }
    if (!workload.rollouts.empty()) controllers.push_back(std::make_unique<RollingUpdates>(workload, modules));
    if (!cluster.faults.faults.empty()) {  // inert without faults: no events, no alerts
      auto alerting = std::make_unique<Alerting>(modules);
      Alerting& alerts = *alerting;
      controllers.push_back(std::move(alerting));
      controllers.push_back(std::make_unique<FaultInjector>(cluster.faults, options.seed, alerts, modules));
    }
  }

  // Capacity outages make launches fail (Fleet::set_launch_gate); how soon the provisioner knows
  // depends on which one owns the pool (a Karpenter offering or a Cluster Autoscaler node group).
  void wire_capacity_outages() {
    fleet.set_launch_gate(
        [this](size_t p, double t) {
          const SimPool& sp = cluster.pools[p];
          const std::string zone = node_zone(sp.pool, 0);  // a pool's nodes share its zone label
          return launch_blocked(cluster.faults, sp.pool.name, zone, std::string(capacity_type_name(sp.settings.capacity_type)), t);
        },
        cluster.autoscaler.launch_failure_s);
    for (size_t p = 0; p < cluster.pools.size(); ++p)
      if (!cluster.pools[p].settings.karpenter_node_pool.empty()) fleet.set_launch_failure_s(p, cluster.karpenter.launch_failure_s);
  }

  // The waiting units now, with their reasons: the pending queue's in queue order, then the jobs
  // Kueue holds in unit order, their reason left "" (fill_queued_reasons writes it after the run;
  // `queued` gets their indices in the list).
  std::vector<PendingPod> pending_list(std::vector<size_t>* queued) const {
    std::vector<PendingPod> list;
    for (const PendingUnit& e : pending.units()) {
      const Units::Unit& u = units.unit(e.unit);
      list.push_back({units.unit_name(e.unit), static_cast<int32_t>(u.pod_count), e.priority, e.since_s, pending.reason(e.unit)});
    }
    if (units.queued_pods() == 0) return list;
    for (uint32_t id = 0; id < units.unit_count(); ++id) {
      const Units::Unit& u = units.unit(id);
      if (u.state != UnitState::kQueued) continue;
      queued->push_back(list.size());
      list.push_back({units.unit_name(id), static_cast<int32_t>(u.pod_count), units.spec(id).priority, u.pending_since_s, ""});
    }
    return list;
  }

  // A clock observer after the metrics': when they found a new peak, the units waiting then (the
  // state they saw, held since their peak_s()).
  void watch_pending() {
    if (!metrics.new_peak()) return;
    result.pending_peak_pods = metrics.peak_pods();
    result.pending_peak_s = metrics.peak_s();
    queued_at_peak.clear();
    result.pending_at_peak = pending_list(&queued_at_peak);
  }

  // The reason of each job Kueue held in `list` (indices `queued`) at time t: the message of its
  // last Kueue event up to t since its last admission (SimResult::queue_events: Pending, Preempted,
  // Evicted, Requeued), as "Kueue: <message>" for Pending, "<type>: <message>" for the others.
  void fill_queued_reasons(std::vector<PendingPod>& list, const std::vector<size_t>& queued, double t) const {
    if (queued.empty()) return;
    std::map<std::string, const QueueEvent*> last;  // by workload ("namespace/name")
    for (const QueueEvent& e : result.queue_events) {
      if (e.time_s > t) break;
      if (e.type == "Admitted" || e.type == "Finished") last.erase(e.workload);
      else last[e.workload] = &e;
    }
    std::map<std::string, std::string> namespace_of;
    for (size_t i = 0; i < units.item_count(); ++i) namespace_of.emplace(units.item(i).name, units.item(i).namespace_name);
    for (size_t i : queued) {
      PendingPod& p = list[i];
      const auto it = last.find(namespace_of[p.unit] + "/" + p.unit);
      p.reason = it == last.end() ? "queued in Kueue, not admitted yet"
                                  : fmt::format("{}: {}", it->second->type == "Pending" ? "Kueue" : it->second->type, it->second->message);
    }
  }

  // The workload as the API server admits its pods: a copy with the admission plugins' changes when
  // the cluster runs one (ClusterConfig::extended_resource_toleration), else null and `workload` is
  // the caller's.
  std::unique_ptr<const Workload> admitted;
  const Workload& workload;
  const ClusterConfig& cluster;
  const SimOptions& options;
  EventLoop loop;
  Fleet fleet;
  Billing billing;
  PendingQueue pending;
  Metrics metrics;
  Placement placement;
  Units units;
  NodeEventWiring wiring;
  std::vector<std::unique_ptr<Controller>> controllers;
  SimResult result;
  bool ran = false;
  std::vector<size_t> queued_at_peak;  // indices of the jobs Kueue held in result.pending_at_peak
};

std::unique_ptr<const Workload> Simulation::Parts::admit(const ClusterConfig& cluster, const Workload& workload) {
  if (!cluster.extended_resource_toleration) return nullptr;
  auto admitted = std::make_unique<Workload>(workload);
  for (WorkloadSpec& spec : admitted->items) add_extended_resource_tolerations(pod_request(spec), spec.tolerations);
  return admitted;
}

Simulation::Simulation(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options) {
  validate(cluster, workload, options);
  parts_ = std::make_unique<Parts>(cluster, workload, options);
}

Simulation::~Simulation() = default;

void Simulation::add_controller(const ControllerFactory& factory) {
  Parts& p = *parts_;
  if (p.ran) throw std::logic_error("Simulation::add_controller after run()");
  p.controllers.push_back(factory(ControllerPorts{p.loop, p.units, p.fleet, p.pending}));
}

SimResult Simulation::run() {
  Parts& p = *parts_;
  if (p.ran) throw std::logic_error("Simulation::run() called twice");
  p.ran = true;
  SimResult& result = p.result;
  const double h = p.loop.horizon_s();
  result.policy = p.options.policy;
  result.seed = p.options.seed;
  result.horizon_s = h;
  result.provisioning_report = !p.cluster.node_pools.empty() || !p.cluster.faults.empty();
  for (const SimPool& pool : p.cluster.pools) result.pools.push_back(pool.pool.name);

  p.fleet.start();      // the pools' initial nodes, Ready at 0
  p.units.start();  // arrivals
  for (const auto& c : p.controllers) c->start();
  p.loop.run();
  result.events_processed = p.loop.events_run();

  p.billing.finish(h, result);
  p.units.report_outcomes(result, !p.options.summary_only);
  p.metrics.finish(result);
  p.units.report(result);
  p.units.report_checkpoints(result, p.wiring.pool_interruptions_per_hour(result.nodes));
  p.fleet.report(result);
  std::vector<size_t> queued_at_horizon;
  result.pending_at_horizon = p.pending_list(&queued_at_horizon);
  for (const auto& c : p.controllers) c->report(result);
  p.fill_queued_reasons(result.pending_at_peak, p.queued_at_peak, result.pending_peak_s);
  p.fill_queued_reasons(result.pending_at_horizon, queued_at_horizon, h);
  if (p.options.progress) p.options.progress(1.0);
  return std::move(result);
}

}  // namespace gpufleet::sim
