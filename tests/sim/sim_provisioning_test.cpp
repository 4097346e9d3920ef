// Provisioning as it fails and Karpenter's provisioner: GPUs advertised late (Cluster Autoscaler's
// GPU rule), a node whose GPUs never appear (max-node-provision-time, backoff), NodePool limits,
// spot to on-demand fallback through the unavailable-offerings cache, a failed replacement after a
// spot interruption. Each timeline is computed by hand in the comment above its test.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "sim/controllers/controller.h"
#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

using testing::actions_at;
using testing::outcome;
using testing::run_least_allocated;

// Runs `action` once, on the first node of pool `pool` (index into ClusterConfig::pools) that
// becomes Ready after provisioning.
class OnFirstReady final : public Controller, public NodeListener {
 public:
  using Action = std::function<void(Fleet&, NodeId, double)>;
  OnFirstReady(const ControllerPorts& ports, size_t pool, Action action) : ports_(ports), pool_(pool), action_(std::move(action)) {
    ports_.fleet.add_listener(*this);
  }
  void start() override {}
  void on_node_ready(NodeId n, double t) override {
    if (done_ || ports_.fleet.pool_of(n) != pool_) return;
    done_ = true;
    action_(ports_.fleet, n, t);
  }

 private:
  ControllerPorts ports_;
  size_t pool_;
  Action action_;
  bool done_ = false;
};

// The first node of pool 0 that becomes Ready never advertises its GPU (withheld, not advertised,
// with no end).
std::unique_ptr<Controller> first_node_never_advertises(const ControllerPorts& ports) {
  return std::make_unique<OnFirstReady>(ports, 0, [](Fleet& f, NodeId n, double t) { f.withhold_gpu(n, 0, GpuWithheld::kNotAdvertised, t); });
}

// A pool of 1-GPU L4 nodes (8 vCPU, 32 GiB), none at the start, 0..max_nodes, on demand at
// `on_demand_usd` per hour.
SimPool l4_pool(std::string name, int32_t max_nodes, double on_demand_usd = 1.0) {
  return testing::gpu_pool({.name = std::move(name), .max_nodes = max_nodes, .on_demand_usd_per_hour = on_demand_usd});
}

// An offering of NodePool `node_pool`: zone label, capacity type, spot price 0.4 USD/h.
SimPool offering(std::string name, const std::string& node_pool, const std::string& zone, CapacityType type, int32_t max_nodes = 4) {
  SimPool p = l4_pool(std::move(name), max_nodes);
  p.pool.labels.emplace_back("topology.kubernetes.io/zone", zone);
  p.pool.spot_usd_per_hour = 0.4;
  p.settings.capacity_type = type;
  p.settings.karpenter_node_pool = node_pool;
  p.settings.provision_s = 60;
  return p;
}

// gpu_job of `pods` one-GPU pods (a gang) with 2 vCPU each.
WorkloadSpec job(std::string name, double arrival_s, double duration_s, int32_t pods = 1) {
  WorkloadSpec s = testing::gpu_job(std::move(name), arrival_s, duration_s);
  s.pods = pods;
  s.cpu_milli = 2000;
  return s;
}

// S11. Pool g (0..10 nodes, 1 GPU), Ready 60 s after the launch, GPUs advertised 120 s later. A job
// of 3 one-GPU pods at 0, scale-up delay 0: the tick at 0 launches 3 nodes; Ready at 60 with their
// GPUs withheld (not advertised) they count as upcoming, so no tick from 60 to 180 adds a node; at
// 180 the GPUs appear and the 3 pods bind (each waited 180 s). The job runs past the horizon: no
// node is removed.
TEST(SimProvisioning, GpusAdvertisedLateCountAsUpcomingNotMissing) {
  ClusterConfig c;
  c.pools = {l4_pool("g", 10)};
  c.pools[0].settings.provision_s = 60;
  c.pools[0].settings.gpu_advertise_delay_s = 120;
  c.autoscaler.scale_up_delay_s = 0;
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("train", 0, 7200, 3)};
  const SimResult r = run_least_allocated(c, w);
  EXPECT_EQ(r.nodes_scaled_up, 3);
  EXPECT_EQ(r.nodes_scaled_down, 0);
  EXPECT_EQ(r.failed_scale_ups, 0);
  ASSERT_EQ(r.nodes.size(), 3u);
  for (const NodeLifetime& n : r.nodes) {
    EXPECT_EQ(n.start_s, 0);
    EXPECT_EQ(n.end_s, 3600);
  }
  EXPECT_EQ(r.pending.samples, 3u);
  EXPECT_EQ(r.pending.p50, 180);
  EXPECT_EQ(r.pending.p99, 180);
  EXPECT_EQ(outcome(r, "train").state, UnitState::kRunning);
}

// S10. Pool g (0..2, 1 GPU, Ready 180 s after launch; CA defaults: scale-up delay 30, scan 10).
// Pod a at 0: the tick at 30 launches g-0, Ready at 210, but its plugin never advertises the GPU
// (the test withholds it, not advertised, with no end). g-0 counts as upcoming (no second node for
// a) until max-node-provision-time: at 30 + 900 = 930 it is given up (removed, a failed scale-up)
// and g is in backoff for 5 min, to 1230 (a's reason meanwhile: "node group in backoff (g)"). At
// 1230 g scales up again from the pool's declared shape (the broken node left no trace): g-0,
// Ready 1410, a runs. Pod b at 1500 (25 min): the tick at 1530 launches g-1, Ready 1710.
TEST(SimProvisioning, ANodeWhoseGpusNeverAppearIsGivenUpAndDoesNotPoisonThePool) {
  ClusterConfig c;
  c.pools = {l4_pool("g", 2)};
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("a", 0, 7200), job("b", 1500, 7200)};
  const SimResult r = run_least_allocated(c, w, {first_node_never_advertises});
  EXPECT_EQ(r.failed_scale_ups, 1);
  EXPECT_EQ(r.nodes_scaled_up, 3);
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].node, "g-0");
  EXPECT_EQ(r.nodes[0].start_s, 30);
  EXPECT_EQ(r.nodes[0].end_s, 930);
  EXPECT_EQ(r.nodes[1].start_s, 1230);
  EXPECT_EQ(r.nodes[2].node, "g-1");
  EXPECT_EQ(r.nodes[2].start_s, 1530);
  EXPECT_EQ(outcome(r, "a").state, UnitState::kRunning);
  EXPECT_EQ(outcome(r, "b").state, UnitState::kRunning);
  EXPECT_EQ(r.pending.samples, 2u);
  EXPECT_EQ(r.pending.p50, 210);   // b: 1500 -> 1710
  EXPECT_EQ(r.pending.p99, 1410);  // a: 0 -> 1410
  // The peak (both pending) never happened; a alone waited from 0, with the backoff reason at 930.
  EXPECT_EQ(r.pending_peak_pods, 1);
}

// The same until 1000 s: a waits with the backoff reason.
TEST(SimProvisioning, BackoffIsThePendingReason) {
  ClusterConfig c;
  c.pools = {l4_pool("g", 2)};
  Workload w;
  w.horizon_s = 1000;
  w.items = {job("a", 0, 7200)};
  const SimResult r = run_least_allocated(c, w, {first_node_never_advertises});
  ASSERT_EQ(r.pending_at_horizon.size(), 1u);
  EXPECT_EQ(r.pending_at_horizon[0].unit, "a");
  EXPECT_EQ(r.pending_at_horizon[0].reason, "node group in backoff (g)");
}

// S13. NodePool gpu (one offering: 1 GPU, 8 vCPU, 32 GiB), limits cpu = 8. Pod a (1 GPU, 2 vCPU) at
// 0: batch opens at the tick at 0, closes at 1 (idle 1 s): node 1 launched at 1, Ready at 61. Pod b
// at 30: the in-flight node's GPU is a's, so b needs a node; the batch closing at 31 finds 8 + 8
// vCPU of capacity over the limit of 8: no node, reason "pool limit reached (NodePool gpu: cpu)".
// At 600 the limit becomes 16: the batch opened at 600 closes at 601, node 2 is launched, Ready at
// 661, b binds (waited 631 s).
TEST(SimProvisioning, KarpenterLimitsCountNodeCapacityNotRequests) {
  ClusterConfig c;
  c.pools = {offering("gpu-z1-od", "gpu", "z1", CapacityType::kOnDemand, 10)};
  c.node_pools = {KarpenterNodePool{"gpu", 0, {{"cpu", 8000}}, false, 0, {}}};
  c.faults.limit_changes = {LimitChange{600, "gpu", {{"cpu", 16000}}}};
  Workload w;
  w.horizon_s = 300;
  w.items = {job("a", 0, 7200), job("b", 30, 7200)};
  {
    const SimResult r = run_least_allocated(c, w);
    ASSERT_EQ(r.pending_at_horizon.size(), 1u);
    EXPECT_EQ(r.pending_at_horizon[0].unit, "b");
    EXPECT_EQ(r.pending_at_horizon[0].reason, "pool limit reached (NodePool gpu: cpu)");
    EXPECT_EQ(r.karpenter_nodes_launched, 1);
    EXPECT_EQ(r.nodes_scaled_up, 0);  // the Cluster Autoscaler leaves Karpenter's pools alone
  }
  w.horizon_s = 3600;
  const SimResult r = run_least_allocated(c, w);
  ASSERT_EQ(r.node_claims.size(), 2u);
  EXPECT_EQ(r.node_claims[0].requested_s, 1);
  EXPECT_EQ(r.node_claims[0].ready_s, 61);
  EXPECT_EQ(r.node_claims[1].requested_s, 601);
  EXPECT_EQ(r.node_claims[1].ready_s, 661);
  EXPECT_EQ(r.pending.p99, 631);
  EXPECT_EQ(r.pending.p50, 61);
  EXPECT_TRUE(r.pending_at_horizon.empty());
}

// S14. NodePool gpu allows spot and on-demand in z1 and z2 (spot 0.4, on-demand 1.0 USD/h); every
// spot launch fails (outage of spot, known 5 s later). Pod (1 GPU, spot allowed) at 0: batch closes
// at 1, spot z1 requested, fails at 6 (z1 spot unavailable for 3 min); batch 6-7: spot z2 requested
// at 7, fails at 12; batch 12-13: no spot offering left, on-demand z1 (the cheaper tie by order) at
// 13, Ready at 73. Two failed spot launches, one per zone.
TEST(SimProvisioning, SpotFailuresFallBackToOnDemandThroughUnavailableOfferings) {
  ClusterConfig c;
  c.pools = {offering("spot-z1", "gpu", "z1", CapacityType::kSpot), offering("spot-z2", "gpu", "z2", CapacityType::kSpot),
             offering("od-z1", "gpu", "z1", CapacityType::kOnDemand), offering("od-z2", "gpu", "z2", CapacityType::kOnDemand)};
  c.node_pools = {KarpenterNodePool{"gpu", 0, {}, false, 0, {}}};
  c.faults.outages = {CapacityOutage{"", "", "spot", 0, 7200}};
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("p", 0, 7200)};
  w.items[0].capacity = CapacityPreference::kSpotOk;
  const SimResult r = run_least_allocated(c, w);
  EXPECT_EQ(r.launch_failures, 2);
  ASSERT_EQ(r.node_claims.size(), 3u);
  EXPECT_EQ(r.node_claims[0].offering, "spot-z1");
  EXPECT_EQ(r.node_claims[0].requested_s, 1);
  EXPECT_EQ(r.node_claims[0].failed_s, 6);
  EXPECT_EQ(r.node_claims[1].offering, "spot-z2");
  EXPECT_EQ(r.node_claims[1].requested_s, 7);
  EXPECT_EQ(r.node_claims[1].failed_s, 12);
  EXPECT_EQ(r.node_claims[2].offering, "od-z1");
  EXPECT_EQ(r.node_claims[2].requested_s, 13);
  EXPECT_EQ(r.node_claims[2].ready_s, 73);
  EXPECT_EQ(r.pending.p99, 73);
  EXPECT_NEAR(r.cost_usd, (3600 - 13) / 3600.0 * 1.0, 1e-9);  // failed launches are never billed
}

// Without on-demand in the NodePool (spot only) the pod waits: after the two failures both spot
// offerings are unavailable, reason "no offering available (insufficient capacity)"; every 3 min
// the cache expires and one more launch per zone fails.
TEST(SimProvisioning, SpotOnlyNodePoolWaitsWithNoOfferingReason) {
  ClusterConfig c;
  c.pools = {offering("spot-z1", "gpu", "z1", CapacityType::kSpot), offering("spot-z2", "gpu", "z2", CapacityType::kSpot)};
  c.node_pools = {KarpenterNodePool{"gpu", 0, {}, false, 0, {}}};
  c.faults.outages = {CapacityOutage{"", "", "spot", 0, 7200}};
  Workload w;
  w.horizon_s = 100;
  w.items = {job("p", 0, 7200)};
  w.items[0].capacity = CapacityPreference::kSpot;
  const SimResult r = run_least_allocated(c, w);
  EXPECT_EQ(r.launch_failures, 2);
  ASSERT_EQ(r.pending_at_horizon.size(), 1u);
  EXPECT_EQ(r.pending_at_horizon[0].reason, "no offering available (insufficient capacity)");
}

// S15. Spot NodePool over z1 and z2; s1 = spot-z1's initial node runs job T (1 GPU, checkpoint
// every 600 s). Spot launches in z1 fail (outage). Notice at 300 (s1 reclaimed at 420): T stops,
// loses its 300 s since the start. Batch 300-301: R1 spot-z1 (s1 still holds the pool's first
// slot) requested at 301, refused, known at 306; the batch 306-307 moves T's node to R2 spot-z2 at
// once (z1 spot is in the cache), Ready at 307 + 180 = 487, where T restarts.
TEST(SimProvisioning, FailedReplacementReleasesThePodAtOnce) {
  ClusterConfig c;
  c.pools = {offering("spot-z1", "gpu", "z1", CapacityType::kSpot, 2), offering("spot-z2", "gpu", "z2", CapacityType::kSpot, 2)};
  c.pools[0].pool.node_count = 1;
  for (SimPool& p : c.pools) p.settings.provision_s = 180;
  c.node_pools = {KarpenterNodePool{"gpu", 0, {}, false, 0, {}}};
  c.faults.outages = {CapacityOutage{"", "z1", "spot", 0, 7200}};
  Workload w;
  w.horizon_s = 3600;
  w.items = {job("T", 0, 7200)};
  w.items[0].capacity = CapacityPreference::kSpot;
  w.items[0].checkpoint_interval_s = 600;
  const SimResult r =
      run_least_allocated(c, w, {actions_at({{300, [](Fleet& f, double t) { f.interrupt(f.pool_nodes(0)[0], t); }}})});
  ASSERT_EQ(r.node_claims.size(), 2u);
  EXPECT_EQ(r.node_claims[0].offering, "spot-z1");
  EXPECT_EQ(r.node_claims[0].requested_s, 301);
  EXPECT_EQ(r.node_claims[0].failed_s, 306);
  EXPECT_EQ(r.node_claims[1].offering, "spot-z2");
  EXPECT_EQ(r.node_claims[1].requested_s, 307);
  EXPECT_EQ(r.node_claims[1].ready_s, 487);
  const UnitOutcome& t = outcome(r, "T");
  EXPECT_EQ(t.interruptions, 1);
  EXPECT_EQ(t.starts, 2);
  EXPECT_NEAR(r.lost_gpu_hours, 300 / 3600.0, 1e-12);
  // s1 leaves at 420 whatever T's budget: the reclaim is involuntary.
  ASSERT_GE(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].end_s, 420);
  EXPECT_EQ(r.pending.p99, 187);  // 300 -> 487
}

}  // namespace
}  // namespace gpufleet::sim

namespace gpufleet::sim {
namespace {

// The spot shortage figure (docs/karpenter.md): a spot-first NodePool through a one-hour spot
// capacity outage (all zones, 1 h to 2 h; the spot nodes are reclaimed as it starts), with and
// without on-demand fallback. 4 production jobs (priority 1000, 1 GPU, 4 h, checkpoint every 30 min)
// at 0 and 4 more at 1.5 h; 8 h horizon. Prints production p99 pending, lost GPU-hours and cost.
SimResult spot_shortage(bool on_demand_fallback) {
  ClusterConfig c;
  c.pools = {offering("spot-z1", "gpu", "z1", CapacityType::kSpot, 8), offering("spot-z2", "gpu", "z2", CapacityType::kSpot, 8)};
  if (on_demand_fallback) {
    c.pools.push_back(offering("od-z1", "gpu", "z1", CapacityType::kOnDemand, 8));
    c.pools.push_back(offering("od-z2", "gpu", "z2", CapacityType::kOnDemand, 8));
  }
  c.node_pools = {KarpenterNodePool{"gpu", 0, {}, false, 0, {}}};
  c.faults.outages = {CapacityOutage{"", "", "spot", 3600, 7200}};
  Workload w;
  w.horizon_s = 8 * 3600;
  for (int i = 0; i < 8; ++i) {
    WorkloadSpec s = job("train-" + std::to_string(i), i < 4 ? 0 : 5400, 4 * 3600);
    s.priority = 1000;
    s.checkpoint_interval_s = 1800;
    s.capacity = CapacityPreference::kSpotOk;
    w.items.push_back(s);
  }
  return run_least_allocated(c, w, {actions_at({{3600, [](Fleet& f, double t) {
                                        for (NodeId n = 0; n < f.node_count(); ++n)
                                          if (f.pool(f.pool_of(n)).settings.capacity_type == CapacityType::kSpot) f.interrupt(n, t);
                                      }}})});
}

// Hand-computed: the 4 spot nodes (Ready at 61) are reclaimed at 3600; each job has 1739 s of work
// since its checkpoint at 61 + 1800 = 1861 -> lost 4 x 1739 s = 1.932 GPU-h in both runs. With
// fallback the 4 are re-batched (3600-3601): spot z1 refused (known 3606), spot z2 refused (3612),
// on-demand z1 at 3613, Ready 3673: 73 s; the 4 jobs at 5400 find the cache expired and go the same
// way (5401 ... 5473): production p99 pending 73 s. Without, every job pending in the outage waits
// for its end (and for a retry after the cache expires): more than the hour.
TEST(SimProvisioning, SpotShortageWithAndWithoutOnDemandFallback) {
  const SimResult with = spot_shortage(true);
  const SimResult without = spot_shortage(false);
  for (const auto& [name, r] : {std::pair{"with on-demand fallback", &with}, std::pair{"without fallback (spot only)", &without}})
    std::printf("spot shortage, %s: production p99 pending %.0f s, lost %.3f GPU-h, cost %.2f USD, failed launches %lld\n", name,
                r->pending_production.p99.value_or(0), r->lost_gpu_hours, r->cost_usd, static_cast<long long>(r->launch_failures));
  EXPECT_NEAR(with.lost_gpu_hours, 4 * 1739 / 3600.0, 1e-9);
  EXPECT_NEAR(without.lost_gpu_hours, 4 * 1739 / 3600.0, 1e-9);
  EXPECT_EQ(with.pending_production.p99, 73);
  EXPECT_GT(without.pending_production.p99.value_or(0), 3600);
  EXPECT_LT(without.pending_production.p99.value_or(0), 3600 + 180 + 61 + 2);
  EXPECT_GT(with.cost_usd, without.cost_usd);
}

}  // namespace
}  // namespace gpufleet::sim

namespace gpufleet::sim {
namespace {

// Billing segments that end before the horizon: without reservations a node's only segment ends at
// its removal, so these are the nodes removed, counted independently of the controllers.
int64_t segments_ended_before(const SimResult& r) {
  int64_t n = 0;
  for (const NodeLifetime& l : r.nodes) n += l.end_s < r.horizon_s;
  return n;
}

// Every removal counts, under its cause, whichever controller made it: the causes add up to the
// nodes whose billing stopped before the horizon, and the per-controller counters are the parts.
TEST(SimProvisioning, EveryNodeRemovalIsCountedByCause) {
  {  // the Cluster Autoscaler gives up a node whose GPU never appears (930 s), nothing else
    ClusterConfig c;
    c.pools = {l4_pool("g", 2)};
    Workload w;
    w.horizon_s = 3600;
    w.items = {job("a", 0, 7200), job("b", 1500, 7200)};
    const SimResult r = run_least_allocated(c, w, {first_node_never_advertises});
    EXPECT_EQ(r.nodes_removed.not_ready_in_time, 1);
    EXPECT_EQ(r.nodes_removed.total(), 1);
    EXPECT_EQ(r.nodes_removed.total(), segments_ended_before(r));
  }
  for (bool fallback : {true, false}) {  // Karpenter: 4 spot nodes reclaimed at 3600, then consolidation
    const SimResult r = spot_shortage(fallback);
    EXPECT_EQ(r.nodes_removed.spot_reclaim, 4) << fallback;
    EXPECT_EQ(r.nodes_removed.consolidation, r.nodes_consolidated) << fallback;
    EXPECT_EQ(r.nodes_removed.scale_down, r.nodes_scaled_down) << fallback;
    EXPECT_EQ(r.nodes_removed.total(), segments_ended_before(r)) << fallback;
    EXPECT_GT(r.nodes_removed.total(), r.nodes_removed.spot_reclaim) << fallback;  // the on-demand / later spot nodes consolidated
  }
}

}  // namespace
}  // namespace gpufleet::sim
