// A fault sweep: seeded random fault schedules (node failures and recoveries, XIDs of both kinds,
// device-plugin failures, spot interruptions at given times and at rates, capacity outages) over a
// mixed workload (checkpointed gang jobs, services, whole GPUs, MIG devices, time-sliced replicas) on
// autoscaled on-demand, spot, late-GPU, MIG and time-sliced pools. In every run, checked after every
// event: no GPU is held by two pods and every pod is on at most one node; at the end: every unit is
// in a stated state, failed and pending units say why, no job lost more than the work since its last
// checkpoint at each interruption, and the cost adds up the same every way (total = by pool = by
// capacity type = chargeback + idle).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/node_pool.h"
#include "model/resources.h"
#include "sim/controllers/controller.h"
#include "sim/engine/fleet.h"
#include "inputs/sim/faults.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "util/go_rand.h"

namespace gpufleet::sim {
namespace {

constexpr double kHorizonS = 4 * 3600;

SimPool pool(std::string name, std::string model, int32_t gpus, int32_t nodes, int32_t max_nodes, double usd_per_hour) {
  SimPool p;
  p.pool.name = std::move(name);
  p.pool.gpu_model = std::move(model);
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 32000;
  p.pool.memory_bytes = int64_t{131072} * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = 0;
  p.pool.max_nodes = max_nodes;
  p.pool.on_demand_usd_per_hour = usd_per_hour;
  return p;
}

ClusterConfig cluster() {
  ClusterConfig c;
  c.pools.push_back(pool("od", "L4", 4, 2, 5, 4.0));
  SimPool spot = pool("spot", "L4", 4, 1, 5, 4.0);
  spot.pool.spot_usd_per_hour = 1.5;
  spot.settings.capacity_type = CapacityType::kSpot;
  spot.settings.spot_interruptions_per_hour = 0.2;
  c.pools.push_back(spot);
  SimPool late = pool("late", "L4", 1, 0, 4, 1.0);
  late.settings.gpu_advertise_delay_s = 120;
  c.pools.push_back(late);
  SimPool mig = pool("mig", "H100-80GB", 2, 1, 2, 8.0);
  mig.pool.mig_devices = std::map<std::string, int>{{"1g.10gb", 7}};
  c.pools.push_back(mig);
  SimPool sliced = pool("ts", "L4", 2, 1, 2, 2.0);
  sliced.pool.time_slicing_replicas = 4;
  c.pools.push_back(sliced);
  SimPool mps = pool("mps", "L4", 2, 1, 2, 2.0);
  mps.pool.time_slicing_replicas = 4;
  mps.pool.gpu_sharing_strategy = GpuSharingStrategy::kMps;
  c.pools.push_back(mps);
  for (SimPool& p : c.pools) p.pool.labels.emplace_back("topology.kubernetes.io/zone", p.pool.name == "od" ? "z1" : "z2");
  return c;
}

WorkloadSpec item(GoRand& rng, int i) {
  WorkloadSpec s;
  s.name = "w" + std::to_string(i);
  s.namespace_name = rng.intn(2) == 0 ? "team-a" : "team-b";
  s.cpu_milli = 1000;
  s.memory_bytes = int64_t{4096} * kBytesPerMib;
  s.arrival_s = static_cast<double>(rng.intn(7200));
  s.kind = rng.intn(4) == 0 ? WorkloadKind::kService : WorkloadKind::kJob;
  s.pods = 1 + static_cast<int32_t>(rng.intn(s.kind == WorkloadKind::kJob ? 3 : 2));
  switch (rng.intn(5)) {
    case 0: s.mig_requests = {{"1g.10gb", 1 + static_cast<int32_t>(rng.intn(2))}}; break;
    case 1: s.num_gpu = 1, s.gpu_milli = 1000, s.pools = {"ts"}; break;
    case 2: s.num_gpu = 1, s.gpu_milli = 1000, s.pools = {"mps"}; break;
    default: s.num_gpu = 1 + static_cast<int32_t>(rng.intn(2)), s.gpu_milli = 1000; break;
  }
  if (s.num_gpu > 0 && s.pools.empty() && rng.intn(2) == 0) s.capacity = CapacityPreference::kSpotOk;
  if (s.kind == WorkloadKind::kJob) {
    s.duration_s = 600 + static_cast<double>(rng.intn(3000));
    s.checkpoint_interval_s = rng.intn(3) == 0 ? 0 : 300 + static_cast<double>(rng.intn(600));
  }
  return s;
}

// Node names of the pools (<pool>-<index> up to max_nodes).
std::vector<std::string> node_names(const ClusterConfig& c) {
  std::vector<std::string> out;
  for (const SimPool& p : c.pools)
    for (int32_t i = 0; i < p.pool.max_nodes; ++i) out.push_back(pool_node_name(p.pool.name, i, p.pool.max_nodes));
  return out;
}

FaultSchedule schedule(GoRand& rng, const ClusterConfig& c) {
  FaultSchedule s;
  s.seed = static_cast<uint64_t>(rng.int63());
  const std::vector<std::string> nodes = node_names(c);
  const int32_t faults = static_cast<int32_t>(rng.intn(9));
  for (int32_t i = 0; i < faults; ++i) {
    Fault f;
    f.kind = static_cast<FaultKind>(rng.intn(4));
    const size_t p = static_cast<size_t>(rng.intn(static_cast<int64_t>(c.pools.size())));
    if (f.kind == FaultKind::kSpotInterruption) {
      f.target.pool = "spot";
    } else if (rng.intn(3) == 0) {
      f.target.pool = c.pools[p].pool.name;
    } else {
      f.target.node = nodes[static_cast<size_t>(rng.intn(static_cast<int64_t>(nodes.size())))];
    }
    if (f.kind == FaultKind::kXid) {
      static const int32_t kCodes[] = {13, 31, 43, 94, 48, 63, 74, 79};
      f.xid = kCodes[rng.intn(8)];
      f.gpu = static_cast<int32_t>(rng.intn(2)) - 1;  // -1 (drawn) or GPU 0 (every pool has one)
    }
    if (rng.intn(4) == 0 && f.kind != FaultKind::kDevicePluginFailure) {
      f.rate_per_node_hour = 0.05 + rng.float64() * 0.3;
    } else {
      f.at_s = rng.float64() * kHorizonS;
    }
    f.recover_after_s = rng.intn(4) == 0 ? -1 : 60 + rng.float64() * 3600;
    s.faults.push_back(f);
  }
  if (rng.intn(2) == 0) {
    CapacityOutage o;
    o.pool = rng.intn(2) == 0 ? "spot" : "";
    o.capacity_type = o.pool.empty() ? "spot" : "";
    o.from_s = rng.float64() * kHorizonS;
    o.to_s = o.from_s + 600 + rng.float64() * 3600;
    s.outages.push_back(o);
  }
  return s;
}

// Checks, before every event, that each pod is on at most one node and no GPU is over-allocated.
class Invariants final : public Controller {
 public:
  explicit Invariants(const ControllerPorts& ports) : ports_(ports) {
    ports_.events.add_clock_observer([this](double) { check(); });
  }
  void start() override {}
  int64_t checks = 0;
  std::string first_violation;

 private:
  void check() {
    ++checks;
    if (!first_violation.empty()) return;
    const Fleet& f = ports_.fleet;
    std::set<uint32_t> seen;
    for (NodeId n = 0; n < f.node_count(); ++n) {
      for (uint32_t p : f.pods_on(n))
        if (!seen.insert(p).second) first_violation = "pod " + std::to_string(p) + " on two nodes";
      if (!f.state().has_node(n)) {
        if (!f.pods_on(n).empty()) first_violation = "pods on a node that is not in the state";
        continue;
      }
      for (int32_t g = 0; g < f.state().node(n).gpu_count; ++g)
        if (f.state().gpu_used_milli(n, g) > kGpuMilliPerGpu) first_violation = f.name(n) + " GPU over-allocated";
      // Every pod the fleet lists is in the state, plus one placeholder per withheld GPU.
      if (f.state().pods_on(n).size() != f.pods_on(n).size() + static_cast<size_t>(f.withheld_gpus(n)))
        first_violation = f.name(n) + ": state and fleet disagree on its pods";
    }
  }
  ControllerPorts ports_;
};

TEST(SimFaultSweep, ThousandRandomScheduleKeepTheInvariants) {
  const ClusterConfig base = cluster();
  int64_t interruptions = 0, runs_with_faults = 0;
  FaultCounts total;
  int64_t launch_failures = 0, alerts = 0, pending_at_end = 0, completed = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    GoRand rng(static_cast<int64_t>(seed));
    ClusterConfig c = base;
    c.faults = schedule(rng, c);
    if (!c.faults.empty()) ++runs_with_faults;
    Workload w;
    w.horizon_s = kHorizonS;
    const int items = 6 + static_cast<int>(rng.intn(8));
    for (int i = 0; i < items; ++i) w.items.push_back(item(rng, i));
    SimOptions o;
    o.seed = seed;
    Simulation sim(c, w, o);
    Invariants* inv = nullptr;
    sim.add_controller([&](const ControllerPorts& ports) {
      auto p = std::make_unique<Invariants>(ports);
      inv = p.get();
      return p;
    });
    SimResult r;
    try {
      r = sim.run();
    } catch (const std::exception& e) {
      for (const Fault& f : c.faults.faults)
        fprintf(stderr, "fault %s node=%s pool=%s at=%g rate=%g xid=%d gpu=%d rec=%g\n", fault_kind_name(f.kind), f.target.node.c_str(),
                f.target.pool.c_str(), f.at_s, f.rate_per_node_hour, f.xid, f.gpu, f.recover_after_s);
      FAIL() << "seed " << seed << ": " << e.what();
    }
    ASSERT_EQ(inv->first_violation, "");
    ASSERT_GT(inv->checks, 0);
    total.node_failures += r.faults.node_failures;
    total.xid_errors += r.faults.xid_errors;
    total.gpus_reset += r.faults.gpus_reset;
    total.container_restarts += r.faults.container_restarts;
    total.device_plugin_failures += r.faults.device_plugin_failures;
    total.spot_interruptions += r.faults.spot_interruptions;
    launch_failures += r.launch_failures;
    alerts += static_cast<int64_t>(r.alerts.size());
    pending_at_end += r.pods_pending;
    completed += r.pods_completed;

    // Every unit in a stated state; failed ones say why.
    double lost_bound_gpu_s = 0;
    for (size_t i = 0; i < r.units.size(); ++i) {
      const UnitOutcome& u = r.units[i];
      ASSERT_NE(u.state, UnitState::kWaiting) << u.name;  // every arrival is before the horizon
      if (u.state == UnitState::kFailed) {
        EXPECT_FALSE(u.reason.empty()) << u.name;
      }
      interruptions += u.interruptions;
    }
    // Lost work: at each interruption a job loses at most the work since its last checkpoint (its
    // interval, or all its duration without checkpoints), on all its GPUs.
    for (const WorkloadSpec& s : w.items) {
      if (s.kind != WorkloadKind::kJob) continue;
      for (const UnitOutcome& u : r.units) {
        if (u.name != s.name) continue;
        const double per_interruption = s.checkpoint_interval_s > 0 ? std::min(s.checkpoint_interval_s, s.duration_s) : s.duration_s;
        const double gpus = s.num_gpu > 0 ? s.num_gpu : 1.0;  // a MIG device counts less than a GPU
        lost_bound_gpu_s += u.interruptions * per_interruption * gpus * s.pods;
      }
    }
    EXPECT_LE(r.lost_gpu_hours * 3600, lost_bound_gpu_s + 1e-6);

    // Cost identities.
    double by_pool = 0, by_type = 0, charged = 0;
    for (const auto& [k, v] : r.cost_by_pool) by_pool += v;
    for (const auto& [k, v] : r.cost_by_capacity_type) by_type += v;
    for (const auto& [k, v] : r.chargeback) charged += v;
    EXPECT_NEAR(by_pool, r.cost_usd, 1e-6 * std::max(1.0, r.cost_usd));
    EXPECT_NEAR(by_type, r.cost_usd, 1e-6 * std::max(1.0, r.cost_usd));
    EXPECT_NEAR(charged + r.idle_cost_usd, r.cost_usd, 1e-6 * std::max(1.0, r.cost_usd));
    EXPECT_GE(r.idle_cost_usd, -1e-9);
    if (HasFailure()) return;
  }
  EXPECT_GT(runs_with_faults, 800);
  EXPECT_GT(interruptions, 0);
  // Every kind of fault happened somewhere in the sweep.
  EXPECT_GT(total.node_failures, 0);
  EXPECT_GT(total.gpus_reset, 0);
  EXPECT_GT(total.container_restarts, 0);
  EXPECT_GT(total.device_plugin_failures, 0);
  EXPECT_GT(total.spot_interruptions, 0);
  EXPECT_GT(launch_failures, 0);
  std::printf("fault sweep, 1000 runs: %lld with faults; node failures %lld, XIDs %lld (GPUs reset %lld, containers restarted %lld), "
              "device-plugin failures %lld, injected spot notices %lld, failed launches %lld, unit interruptions %lld, alerts %lld; "
              "pods completed %lld, pending at the horizon %lld\n",
              static_cast<long long>(runs_with_faults), static_cast<long long>(total.node_failures), static_cast<long long>(total.xid_errors),
              static_cast<long long>(total.gpus_reset), static_cast<long long>(total.container_restarts),
              static_cast<long long>(total.device_plugin_failures), static_cast<long long>(total.spot_interruptions),
              static_cast<long long>(launch_failures), static_cast<long long>(interruptions), static_cast<long long>(alerts),
              static_cast<long long>(completed), static_cast<long long>(pending_at_end));
}

}  // namespace
}  // namespace gpufleet::sim
