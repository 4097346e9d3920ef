#include "sim/engine/placement.h"

#include <fmt/format.h>

#include "sched/fit_error.h"
#include "sched/policy_registry.h"

namespace gpufleet::sim {
namespace {

// sched::typical_pod_mix's default coverage.
constexpr double kTypicalPodCoverage = 0.95;

}  // namespace

Placement::Placement(Fleet& fleet, const std::string& policy, std::vector<std::pair<sched::PodShapeKey, double>> pod_mix,
                     uint64_t seed)
    : fleet_(fleet), templates_(fleet.template_nodes()), rng_(static_cast<int64_t>(seed)) {
  if (fleet_.dra_catalog()) templates_.set_dra_catalog(fleet_.dra_catalog());  // the template nodes' slices too
  // A new node holds its DaemonSets' pods (the Cluster Autoscaler's template NodeInfo does).
  for (size_t p = 0; p < fleet_.pool_count(); ++p)
    for (const Pod& pod : fleet_.template_daemon_pods(p))
      if (templates_.can_allocate(static_cast<NodeId>(p), pod, {})) templates_.allocate(static_cast<NodeId>(p), pod, {});
  const ClusterState& state = fleet_.state();
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::select_typical_pods(std::move(pod_mix), kTypicalPodCoverage),
                                                                  state.gpu_models());
  const sched::PolicyContext context{frag, state.gpu_models(), &state, &fleet_.outlook()};
  base_policy_ = sched::make_policy(policy, context);
  scheduler_ = fleet_.make_scheduler(sched::make_policy(policy, context));
}

uint32_t Placement::add_shape(const Pod& representative) {
  shape_pods_.push_back(representative);
  shape_fits_.emplace_back(fleet_.pool_count(), int8_t{-1});
  return static_cast<uint32_t>(shape_pods_.size() - 1);
}

bool Placement::pool_admits(uint32_t shape, size_t p) {
  int8_t& f = shape_fits_[shape][p];
  if (f < 0) {
    const Pod& pod = shape_pods_[shape];
    bool ok = fleet_.pool(p).pool.max_nodes > 0;
    for (const auto& filter : base_policy_.filters)
      if (ok && filter->filter(pod, templates_, static_cast<NodeId>(p)).rejected()) ok = false;
    f = ok ? 1 : 0;
  }
  return f == 1;
}

std::optional<std::string> Placement::unadmitted_reason(uint32_t shape) {
  for (size_t p = 0; p < fleet_.pool_count(); ++p)
    if (pool_admits(shape, p)) return std::nullopt;
  const sched::ReasonHistogram h = sched::rejection_histogram(base_policy_, shape_pods_[shape], templates_);
  const std::string why = h.empty() ? "every pool that admits it has max 0 nodes" : sched::fit_error_message(h, templates_.node_count());
  return fmt::format("pod didn't trigger scale-up: no pool's node admits it ({})", why);
}

void Placement::observe(const Pod& pod) { scheduler_->observe(pod, fleet_.state()); }

sched::ScheduleResult Placement::decide(const Pod& pod) {
  return scheduler_->decide(pod, fleet_.state(), rng_);
}

std::vector<uint8_t> Placement::fits_ready_nodes(std::span<const Pod* const> pods) {
  ClusterState& state = fleet_.dry_run_state();
  ClusterState::Fork trial = state.fork();  // discarded when it goes out of scope
  std::vector<uint8_t> fits(pods.size(), 0);
  for (size_t i = 0; i < pods.size(); ++i) {
    const sched::ScheduleResult r = decide(*pods[i]);
    if (!r.scheduled()) continue;
    state.allocate(r.node, *pods[i], r.devices());
    fits[i] = 1;
  }
  return fits;
}

// A forked dry run: the state is as before either way.
std::optional<Placements> Placement::dry_run_moves(NodeId n, std::span<const BoundPod> moving) {
  ClusterState& state = fleet_.dry_run_state();
  fleet_.cordon(n);  // before the fork, whose discard would undo it
  ClusterState::Fork trial = state.fork();  // discarded when it goes out of scope
  for (const BoundPod& p : moving) state.release(p.node, *p.pod);
  Placements placed;
  for (const BoundPod& p : moving) {
    sched::ScheduleResult r = decide(*p.pod);
    // A pod that tolerates the cordon (node.kubernetes.io/unschedulable) may go back to n: that
    // empties nothing.
    if (!r.scheduled() || r.node == n) break;
    placed.emplace_back(r.node, take_devices(std::move(r)));
    state.allocate(placed.back().first, *p.pod, placed.back().second);
  }
  trial.discard();
  if (placed.size() < moving.size()) {
    fleet_.uncordon(n);
    return std::nullopt;
  }
  return placed;
}

}  // namespace gpufleet::sim
