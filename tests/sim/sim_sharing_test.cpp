// GPU sharing in the simulator: pods that request MIG devices (nvidia.com/mig-<profile>) or
// time-slicing replicas (nvidia.com/gpu on a time-sliced pool) are placed, run, complete and are
// moved with the devices they hold; the Cluster Autoscaler estimates new nodes for them on the
// pool's template node; chargeback charges the slice. Every expected value is computed by hand in
// the comment beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "model/cluster_state.h"
#include "model/pod_disruption_budget.h"
#include "model/resources.h"
#include "sim/rules/cluster_autoscaler.h"
#include "sim/controllers/controller.h"
#include "sim/rules/cost.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "util/input_error.h"

namespace gpufleet::sim {
namespace {

// A pool of H100-80GB nodes, every GPU partitioned by MIG into `mig` (mig-parted mig-devices).
SimPool mig_pool(std::string name, int32_t gpus, std::map<std::string, int> mig, int32_t nodes, int32_t min, int32_t max,
                 double on_demand, int64_t cpu_milli = 32000, int64_t memory_gib = 256) {
  SimPool p;
  p.pool.name = std::move(name);
  p.pool.gpu_model = "H100-80GB";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = cpu_milli;
  p.pool.memory_bytes = memory_gib * 1024 * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = min;
  p.pool.max_nodes = max;
  p.pool.on_demand_usd_per_hour = on_demand;
  p.pool.mig_devices = std::move(mig);
  return p;
}

// A pool of L4 nodes whose GPUs the device plugin time-slices `replicas` ways (not renamed).
SimPool sliced_pool(std::string name, int32_t gpus, int32_t replicas, int32_t nodes, int32_t min, int32_t max, double on_demand,
                    int64_t cpu_milli = 16000, int64_t memory_gib = 64) {
  SimPool p;
  p.pool.name = std::move(name);
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = cpu_milli;
  p.pool.memory_bytes = memory_gib * 1024 * kBytesPerMib;
  p.pool.node_count = nodes;
  p.pool.min_nodes = min;
  p.pool.max_nodes = max;
  p.pool.on_demand_usd_per_hour = on_demand;
  p.pool.time_slicing_replicas = replicas;
  return p;
}

WorkloadSpec item(std::string name, WorkloadKind kind, int32_t pods, double arrival_s, double duration_s) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.pods = pods;
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.cpu_milli = 2000;
  s.memory_bytes = 8LL * 1024 * kBytesPerMib;
  return s;
}

WorkloadSpec mig_item(std::string name, WorkloadKind kind, int32_t pods, double arrival_s, double duration_s, int32_t devices = 1) {
  WorkloadSpec s = item(std::move(name), kind, pods, arrival_s, duration_s);
  s.mig_requests = {{"3g.40gb", devices}};
  return s;
}

WorkloadSpec replica_item(std::string name, WorkloadKind kind, int32_t pods, double arrival_s, double duration_s, int32_t gpus = 1) {
  WorkloadSpec s = item(std::move(name), kind, pods, arrival_s, duration_s);
  s.num_gpu = gpus;
  s.gpu_milli = kGpuMilliPerGpu;
  return s;
}

SimOptions options() {
  SimOptions o;
  o.policy = "leastallocated";
  o.seed = 42;
  o.trace = true;
  return o;
}

const UnitOutcome& outcome(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

// "gpus[0,1]" / "mig[0@0 3g.40gb,0@4 3g.40gb]": the devices a bound pod holds.
std::string devices_text(const gpufleet::BoundPod& b) {
  std::string out;
  if (!b.gpus.empty()) out += fmt::format("gpus[{}]", fmt::join(b.gpus, ","));
  if (!b.mig.empty()) {
    std::vector<std::string> mig;
    for (const MigDevice& d : b.mig) mig.push_back(fmt::format("{}@{} {}", d.gpu, d.start, d.profile));
    out += fmt::format("mig[{}]", fmt::join(mig, ","));
  }
  return out;
}

// A controller of the test's own: at each of `times` it writes down, for every node that exists,
// "<node> <pod> <devices>" for each pod bound there (ClusterState::pods_on, in binding order).
class Snapshots final : public Controller {
 public:
  Snapshots(const ControllerPorts& ports, std::vector<double> times, std::map<double, std::vector<std::string>>* out)
      : ports_(ports), times_(std::move(times)), out_(out) {
    kind_ = ports_.events.register_event("snapshot", [this](const Event& e) { take(e.time_s); });
  }
  void start() override {
    for (double t : times_) ports_.events.schedule(t, kind_);
  }

 private:
  void take(double t) {
    std::vector<std::string>& lines = (*out_)[t];
    const Fleet& fleet = ports_.fleet;
    for (NodeId n = 0; n < fleet.node_count(); ++n) {
      if (fleet.phase(n) == NodePhase::kAbsent) continue;
      for (const gpufleet::BoundPod& b : fleet.state().pods_on(n)) lines.push_back(fleet.name(n) + " " + b.pod.name + " " + devices_text(b));
    }
  }
  ControllerPorts ports_;
  std::vector<double> times_;
  std::map<double, std::vector<std::string>>* out_;
  EventKind kind_ = 0;
};

// Runs the simulation with a Snapshots controller at `times`.
SimResult run_with_snapshots(const ClusterConfig& c, const Workload& w, std::vector<double> times,
                             std::map<double, std::vector<std::string>>& snapshots) {
  const SimOptions o = options();
  Simulation sim(c, w, o);
  sim.add_controller([&](const ControllerPorts& ports) { return std::make_unique<Snapshots>(ports, times, &snapshots); });
  return sim.run();
}

using Lines = std::vector<std::string>;

// ------------------------------------------------------------------------------------ placement

TEST(SimSharing, MigPodsTakeTheLowestFreeDevicesAndWaitForTwoOnOneNode) {
  // Two static nodes of one H100 each, MIG layout 2x 3g.40gb: devices (GPU 0, start 0) and (0, 4).
  // LeastAllocated on CPU and memory (the pods request no nvidia.com/gpu); every pod asks 2 CPUs, 8 GiB.
  //  - a (t 0, 2 pods, 1000 s): a-0 -> h100-0 (tie, first node) on 0@0; a-1 -> h100-1 (emptier) on 0@0.
  //  - b (t 100, one pod with 2 devices, 500 s): each node has 1 device free -> b waits.
  //  - c (t 200, 1 pod, 300 s): both nodes equally loaded -> h100-0, on its free device 0@4; done at 500.
  //    At 500 h100-0 has 1 device free again: b still waits.
  //  - at 1000 a completes: b -> h100-0 (tie) on 0@0 and 0@4, completes 1500 (waited 900 s).
  ClusterConfig c;
  c.pools = {mig_pool("h100", 1, {{"3g.40gb", 2}}, 2, 2, 2, 7.0)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 2000;
  w.items = {mig_item("a", WorkloadKind::kJob, 2, 0, 1000), mig_item("b", WorkloadKind::kJob, 1, 100, 500, 2),
             mig_item("c", WorkloadKind::kJob, 1, 200, 300)};
  std::map<double, std::vector<std::string>> seen;
  const SimResult r = run_with_snapshots(c, w, {250, 1200}, seen);
  EXPECT_EQ(seen[250], (Lines{"h100-0 a-0 mig[0@0 3g.40gb]", "h100-0 c-0 mig[0@4 3g.40gb]", "h100-1 a-1 mig[0@0 3g.40gb]"}));
  EXPECT_EQ(seen[1200], (Lines{"h100-0 b-0 mig[0@0 3g.40gb,0@4 3g.40gb]"}));
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 1000);
  EXPECT_DOUBLE_EQ(outcome(r, "c").completion_s, 500);
  EXPECT_DOUBLE_EQ(outcome(r, "b").completion_s, 1500);
  EXPECT_EQ(r.pods_completed, 4);
  // Pending samples: a-0, a-1, c-0 started at once; b-0 waited 900 s.
  EXPECT_EQ(r.pending.samples, 4u);
  EXPECT_DOUBLE_EQ(*r.pending.p99, 900);
  // Allocation counts a 3g.40gb device as floor(1000 x 3 / 7) = 428 gpu_milli: the row at 240 has
  // a-0, a-1 and c-0 (3 x 428 = 1284), the row at 1200 b-0's two devices (856), of 2000.
  EXPECT_EQ(r.timeseries[4].gpu_allocated_milli, 1284);
  EXPECT_EQ(r.timeseries[20].gpu_allocated_milli, 856);
  EXPECT_EQ(r.timeseries[20].gpu_capacity_milli, 2000);
}

TEST(SimSharing, TimeSlicedPodsTakeReplicasSpreadOverTheGpus) {
  // One static node of 2 L4 GPUs time-sliced 3 ways (6 nvidia.com/gpu replicas). A replica goes to
  // the GPU with the most free replicas, lowest index on ties.
  //  - web (service, 4 replicas of 1, t 0): web-0 GPU 0, web-1 GPU 1, web-2 GPU 0, web-3 GPU 1;
  //    free replicas [1, 1].
  //  - small (t 50, 1 replica, 400 s): GPU 0 (tie); free [0, 1]; completes 450.
  //  - big (t 100, nvidia.com/gpu: 2, 600 s): 1 replica free -> waits; at 450 free [1, 1]: GPU 0
  //    then GPU 1; completes 1050 (waited 350 s).
  ClusterConfig c;
  c.pools = {sliced_pool("l4", 2, 3, 1, 1, 1, 2.0)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 2000;
  w.items = {replica_item("web", WorkloadKind::kService, 4, 0, 0), replica_item("small", WorkloadKind::kJob, 1, 50, 400),
             replica_item("big", WorkloadKind::kJob, 1, 100, 600, 2)};
  std::map<double, std::vector<std::string>> seen;
  const SimResult r = run_with_snapshots(c, w, {200, 500}, seen);
  EXPECT_EQ(seen[200], (Lines{"l4-0 web-0 gpus[0]", "l4-0 web-1 gpus[1]", "l4-0 web-2 gpus[0]", "l4-0 web-3 gpus[1]",
                              "l4-0 small-0 gpus[0]"}));
  EXPECT_EQ(seen[500], (Lines{"l4-0 web-0 gpus[0]", "l4-0 web-1 gpus[1]", "l4-0 web-2 gpus[0]", "l4-0 web-3 gpus[1]",
                              "l4-0 big-0 gpus[0,1]"}));
  EXPECT_DOUBLE_EQ(outcome(r, "small").completion_s, 450);
  EXPECT_DOUBLE_EQ(outcome(r, "big").completion_s, 1050);
  EXPECT_DOUBLE_EQ(*r.pending.p99, 350);
  // A replica counts floor(1000 / 3) = 333 gpu_milli: the row at 480 has 6 replicas (1998), the row at
  // 1080 the 4 web replicas (1332).
  EXPECT_EQ(r.timeseries[8].gpu_allocated_milli, 1998);
  EXPECT_EQ(r.timeseries[18].gpu_allocated_milli, 1332);
}

TEST(SimSharing, ConsolidationMovesAMigPodWithItsDevice) {
  // Two H100 nodes (MIG 2x 3g.40gb, one GPU each), min 0; CA scale-down off, consolidation on with
  // threshold 0.5. The service's two replicas go to h100-0 (tie) and h100-1 (emptier), each on 0@0.
  // Each node's utilization is 428 / 1000 < 0.5. The first tick (t 0, after the retry pass) tries
  // h100-0 first (equal costs, node order): its pod fits h100-1's free device 0@4, so it moves there
  // and h100-0 is removed.
  ClusterConfig c;
  c.pools = {mig_pool("h100", 1, {{"3g.40gb", 2}}, 2, 0, 2, 7.0)};
  c.autoscaler.scale_down = false;
  c.consolidation.enabled = true;
  c.consolidation.threshold = 0.5;
  Workload w;
  w.horizon_s = 600;
  w.items = {mig_item("s", WorkloadKind::kService, 2, 0, 0)};
  std::map<double, std::vector<std::string>> seen;
  const SimResult r = run_with_snapshots(c, w, {5}, seen);
  EXPECT_EQ(seen[5], (Lines{"h100-1 s-1 mig[0@0 3g.40gb]", "h100-1 s-0 mig[0@4 3g.40gb]"}));
  EXPECT_EQ(r.nodes_consolidated, 1);
  EXPECT_EQ(r.consolidation_moved_pods, 1);
  EXPECT_EQ(r.pods_running, 2);
}

// ------------------------------------------------------------------------------------ autoscaler

// `count` pods of one 3g.40gb device, 8 CPUs and 64 GiB each.
std::vector<Pod> mig_pods(int count) {
  std::vector<Pod> pods(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    pods[static_cast<size_t>(i)].name = "m" + std::to_string(i);
    pods[static_cast<size_t>(i)].cpu_milli = 8000;
    pods[static_cast<size_t>(i)].memory_bytes = 64LL * 1024 * kBytesPerMib;
    pods[static_cast<size_t>(i)].mig_requests = {{"3g.40gb", 1}};
  }
  return pods;
}

std::vector<const Pod*> pointers(const std::vector<Pod>& pods) {
  std::vector<const Pod*> out;
  for (const Pod& p : pods) out.push_back(&p);
  return out;
}

TEST(SimSharingAutoscaler, EstimateCountsMigDevicesPerNode) {
  // p5.48xlarge-like nodes: 8 H100, MIG 2x 3g.40gb per GPU = 16 devices, 191.45 CPUs, 1990 GiB.
  // CPU and memory hold 23 and 31 such pods, so the devices decide: 8 pods -> 1 node; 16 -> 1;
  // 17 -> 2; 20 -> 2 (16 + 4). A pod's gpu_milli is 428 (floor(1000 x 3 / 7)).
  const SimPool p = mig_pool("h100-mig", 8, {{"3g.40gb", 2}}, 0, 0, 4, 98.32, 191450, 1990);
  for (const auto& [pods, nodes] : std::vector<std::pair<int, int>>{{8, 1}, {16, 1}, {17, 2}, {20, 2}}) {
    const std::vector<Pod> v = mig_pods(pods);
    const ScaleUpOption o = estimate_scale_up(0, p.pool, pointers(v), 4);
    EXPECT_EQ(o.nodes, nodes) << pods << " pods";
    EXPECT_EQ(o.pods_helped, pods);
    EXPECT_EQ(o.gpu_requested_milli, 428 * pods);
    EXPECT_EQ(o.gpu_capacity_milli, 8000 * nodes);
  }
  // At most 1 node: 16 of 20 pods helped.
  const std::vector<Pod> v = mig_pods(20);
  EXPECT_EQ(estimate_scale_up(0, p.pool, pointers(v), 1).pods_helped, 16);
  // A layout without the profile takes none of them (the caller's filters would not send them).
  const SimPool other = mig_pool("h100-1g", 8, {{"1g.10gb", 7}}, 0, 0, 4, 98.32, 191450, 1990);
  const ScaleUpOption none = estimate_scale_up(0, other.pool, pointers(v), 4);
  EXPECT_EQ(none.pods_helped, 0);
  // As for any pod that fits no empty node, each pod opens a node up to the max (the callers send
  // only pods the template node admits).
  EXPECT_EQ(none.nodes, 4);
}

TEST(SimSharingAutoscaler, EstimateCountsTimeSlicedReplicas) {
  // 4 L4 per node, 4 replicas each: 16 replicas. 20 one-replica pods -> 2 nodes (a whole-GPU count
  // would need 5); 6 two-replica pods -> 12 replicas, 1 node.
  const SimPool p = sliced_pool("l4", 4, 4, 0, 0, 8, 4.6, 48000, 192);
  std::vector<Pod> pods(20);
  for (Pod& pod : pods) {
    pod.cpu_milli = 1000;
    pod.num_gpu = 1;
    pod.gpu_milli = 1000;
  }
  const ScaleUpOption o = estimate_scale_up(0, p.pool, pointers(pods), 8);
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(o.pods_helped, 20);
  EXPECT_EQ(o.gpu_requested_milli, 20 * 250);  // a replica counts floor(1000 / 4)
  std::vector<Pod> pairs(6, pods[0]);
  for (Pod& pod : pairs) pod.num_gpu = 2;
  EXPECT_EQ(estimate_scale_up(0, p.pool, pointers(pairs), 8).nodes, 1);
}

TEST(SimSharingAutoscaler, ScaleUpForMigPodsLaunchesTheNodesTheirDevicesNeed) {
  // A MIG pool from zero (16 devices a node, as above) and 20 replicas of one 3g.40gb device each,
  // pending from 0. At the tick at 30 (scaleUpDelaySeconds) the estimate asks for 2 nodes, Ready at
  // 210 (provisioning 180 s); every replica then runs. LeastAllocated spreads them: even replicas on
  // h100-mig-0, odd ones on h100-mig-1 (ties to the first node), each on its node's lowest free
  // device: infer-0 and infer-1 on 0@0, infer-2 and infer-3 on 0@4, ... infer-18 and infer-19 on 4@4.
  ClusterConfig c;
  c.pools = {mig_pool("h100-mig", 8, {{"3g.40gb", 2}}, 0, 0, 4, 98.32, 191450, 1990)};
  Workload w;
  w.horizon_s = 400;
  WorkloadSpec s = mig_item("infer", WorkloadKind::kService, 20, 0, 0);
  s.cpu_milli = 8000;
  s.memory_bytes = 64LL * 1024 * kBytesPerMib;
  w.items = {s};
  std::map<double, std::vector<std::string>> seen;
  const SimResult r = run_with_snapshots(c, w, {300}, seen);
  EXPECT_EQ(r.nodes_scaled_up, 2);
  EXPECT_EQ(r.pods_running, 20);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(r.nodes[0].start_s, 30);
  EXPECT_DOUBLE_EQ(r.nodes[1].start_s, 30);
  EXPECT_DOUBLE_EQ(*r.pending.p99, 210);
  ASSERT_EQ(seen[300].size(), 20u);
  EXPECT_EQ(seen[300][0], "h100-mig-0 infer-0 mig[0@0 3g.40gb]");
  EXPECT_EQ(seen[300][1], "h100-mig-0 infer-2 mig[0@4 3g.40gb]");
  EXPECT_EQ(seen[300][9], "h100-mig-0 infer-18 mig[4@4 3g.40gb]");
  EXPECT_EQ(seen[300][10], "h100-mig-1 infer-1 mig[0@0 3g.40gb]");
  EXPECT_EQ(seen[300][15], "h100-mig-1 infer-11 mig[2@4 3g.40gb]");
  EXPECT_EQ(seen[300][19], "h100-mig-1 infer-19 mig[4@4 3g.40gb]");
}

// ------------------------------------------------------------------------------------ chargeback

TEST(SimSharingCost, ChargebackChargesTheSlice) {
  // One static node per pool, each pod running exactly 1 h (0 to 3600; horizon 7200).
  // MIG: 96 CPUs, 1024 GiB, 8 H100 at 98.32 USD/h. OpenCost split: CPU 96 x 0.031611 = 3.034656,
  // RAM 1024 x 0.004237 = 4.338688, GPU 8 x 0.95 = 7.6; sum 14.973344. A pod of 8 CPUs, 64 GiB and
  // one 3g.40gb device pays 98.32 x (3.034656 x 8/96 + 4.338688 x 64/1024 + 7.6 x (3/7)/8) / 14.973344
  // = 98.32 x 0.062190440 = 6.114564 USD.
  // Time-sliced: 48 CPUs, 192 GiB, 4 L4 time-sliced 4 ways, at 4.6016 USD/h. Split: CPU 1.517328,
  // RAM 0.813504, GPU 3.8; sum 6.130832. A pod of 2 CPUs, 8 GiB and one replica (1/4 of a GPU) pays
  // 4.6016 x (1.517328 x 2/48 + 0.813504 x 8/192 + 3.8 x (1/4)/4) / 6.130832 = 0.251153 USD.
  ClusterConfig c;
  c.pools = {mig_pool("mig", 8, {{"3g.40gb", 2}}, 1, 1, 1, 98.32, 96000, 1024), sliced_pool("ts", 4, 4, 1, 1, 1, 4.6016, 48000, 192)};
  c.autoscaler.enabled = false;
  WorkloadSpec m = mig_item("m", WorkloadKind::kJob, 1, 0, 3600);
  m.namespace_name = "mig-team";
  m.cpu_milli = 8000;
  m.memory_bytes = 64LL * 1024 * kBytesPerMib;
  m.pools = {"mig"};
  WorkloadSpec t = replica_item("t", WorkloadKind::kJob, 1, 0, 3600);
  t.namespace_name = "ts-team";
  t.pools = {"ts"};
  Workload w;
  w.horizon_s = 7200;
  w.items = {m, t};
  const SimResult r = simulate(c, w, options());
  const double mig_share = (3.034656 * 8 / 96 + 4.338688 * 64 / 1024 + 7.6 * (3.0 / 7) / 8) / 14.973344;
  const double ts_share = (1.517328 * 2 / 48 + 0.813504 * 8 / 192 + 3.8 * 0.25 / 4) / 6.130832;
  EXPECT_NEAR(r.chargeback.at("mig-team"), 98.32 * mig_share, 1e-9);
  EXPECT_NEAR(r.chargeback.at("mig-team"), 6.114564, 1e-6);
  EXPECT_NEAR(r.chargeback.at("ts-team"), 4.6016 * ts_share, 1e-9);
  EXPECT_NEAR(r.chargeback.at("ts-team"), 0.251153, 1e-6);
  // Both nodes for 2 h; the rest is idle.
  EXPECT_NEAR(r.cost_usd, 2 * (98.32 + 4.6016), 1e-9);
  EXPECT_NEAR(r.idle_cost_usd, r.cost_usd - 98.32 * mig_share - 4.6016 * ts_share, 1e-9);

  // The same rule as a function: a 3g.40gb device is 3/7 of a GPU, a replica 1/4, two of them 1/2,
  // MIG and replicas together add up; a plain pool counts gpu_milli.
  Pod pod;
  pod.mig_requests = {{"3g.40gb", 2}};
  EXPECT_DOUBLE_EQ(pod_gpus_held(c.pools[0].pool, pod), 6.0 / 7);
  Pod replicas;
  replicas.num_gpu = 2;
  replicas.gpu_milli = 1000;
  EXPECT_DOUBLE_EQ(pod_gpus_held(c.pools[1].pool, replicas), 0.5);
  NodePool plain = c.pools[1].pool;
  plain.time_slicing_replicas.reset();
  EXPECT_DOUBLE_EQ(pod_gpus_held(plain, replicas), 2.0);
}

TEST(SimSharingCost, ConsolidationRestartLosesTheSliceOfWork) {
  // Two H100 nodes (MIG 2x 3g.40gb, one GPU each), min 0; consolidation every 700 s, a node a
  // candidate 700 s after its last pod change, threshold 0.5. The service s (budget maxUnavailable 0)
  // goes to h100-0 (tie, first node), the job j (one device, 5000 s, no checkpoints) to h100-1
  // (emptier); both on 0@0. At 700 both nodes are candidates (428 / 1000 < 0.5): h100-0 first (it
  // loses no work) but its budget allows no disruption; then h100-1: j restarts on h100-0's free
  // device 0@4, losing its 700 s on 3/7 of a GPU: 700 x 3/7 / 3600 = 1/12 GPU-hour. It completes at
  // 700 + 5000 = 5700.
  ClusterConfig c;
  c.pools = {mig_pool("h100", 1, {{"3g.40gb", 2}}, 2, 0, 2, 7.0)};
  c.autoscaler.scale_down = false;
  c.consolidation.enabled = true;
  c.consolidation.threshold = 0.5;
  c.consolidation.interval_s = 700;
  c.consolidation.consolidate_after_s = 700;
  WorkloadSpec s = mig_item("s", WorkloadKind::kService, 1, 0, 0);
  s.disruption_budget = DisruptionBudget{std::nullopt, IntOrPercent{0, false}};
  Workload w;
  w.horizon_s = 6000;
  w.items = {s, mig_item("j", WorkloadKind::kJob, 1, 0, 5000)};
  std::map<double, std::vector<std::string>> seen;
  const SimResult r = run_with_snapshots(c, w, {600, 800}, seen);
  EXPECT_EQ(seen[600], (Lines{"h100-0 s-0 mig[0@0 3g.40gb]", "h100-1 j-0 mig[0@0 3g.40gb]"}));
  EXPECT_EQ(seen[800], (Lines{"h100-0 s-0 mig[0@0 3g.40gb]", "h100-0 j-0 mig[0@4 3g.40gb]"}));
  EXPECT_EQ(r.nodes_consolidated, 1);
  EXPECT_EQ(r.consolidation_restarts, 1);
  EXPECT_NEAR(r.consolidation_lost_gpu_hours, 1.0 / 12, 1e-12);
  EXPECT_NEAR(r.lost_gpu_hours, 1.0 / 12, 1e-12);
  EXPECT_DOUBLE_EQ(outcome(r, "j").completion_s, 5700);
  EXPECT_EQ(outcome(r, "j").consolidations, 1);
}

// ------------------------------------------------------------------------------------ reader

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SimSharingReader, MigProfileOrCounts) {
  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\njobs:\n";
  auto read = [&](const std::string& jobs) { return io::parse_sim_workload_text(head + jobs, "w.yaml", {"a"}); };
  auto err = [&](const std::string& jobs) { return error_of([&] { read(jobs); }); };
  // One device per pod, or a count of one profile.
  EXPECT_EQ(read("- {name: j, durationSeconds: 1, mig: 3g.40gb}\n").workload.items[0].mig_requests,
            (std::vector<MigRequest>{{"3g.40gb", 1}}));
  EXPECT_EQ(read("- {name: j, durationSeconds: 1, mig: {3g.40gb: 2}}\n").workload.items[0].mig_requests,
            (std::vector<MigRequest>{{"3g.40gb", 2}}));
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: {3g.40gb: 2, 1g.10gb: 1}}\n"),
            "w.yaml:5:38: field 'jobs[0].mig': 2 MIG profiles: a pod asks for devices of one profile (a container gets "
            "access to one device type)");
  EXPECT_EQ(make_pod(read("- {name: j, durationSeconds: 1, mig: 3g.40gb}\n").workload.items[0], 0).mig_requests,
            (std::vector<MigRequest>{{"3g.40gb", 1}}));
  // Errors at the value (or key) with file, line and column.
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: 3g.41gb}\n"),
            "w.yaml:5:38: field 'jobs[0].mig': unknown MIG profile '3g.41gb': no GPU model in the catalog has it");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: {9g.1gb: 1}}\n"),
            "w.yaml:5:39: field 'jobs[0].mig.9g.1gb': unknown MIG profile '9g.1gb': no GPU model in the catalog has it");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, gpus: 1, mig: 3g.40gb}\n"),
            "w.yaml:5:47: field 'jobs[0].mig': mig and gpus cannot both be set: a pod asks for MIG devices "
            "(nvidia.com/mig-<profile>) or for GPUs (nvidia.com/gpu)");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: {3g.40gb: 0}}\n"),
            "w.yaml:5:48: field 'jobs[0].mig.3g.40gb': 0 is out of range [1, 112]");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: {}}\n"),
            "w.yaml:5:38: field 'jobs[0].mig': 0 MIG profiles: a pod asks for devices of one profile (a container gets "
            "access to one device type)");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: [3g.40gb]}\n"),
            "w.yaml:5:38: field 'jobs[0].mig': expected a MIG profile or a mapping of profile to count, got a list");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, mig: 3g.40gb, gpuMilli: 500}\n"),
            "w.yaml:5:57: field 'jobs[0].gpuMilli': gpuMilli needs gpus >= 1");
}

// ------------------------------------------------------------------------------------ the example

TEST(SimSharingExample, RunsAsDocumented) {
  // examples/simulate/sharing-pools.yaml and sharing-workload.yaml, worked by hand in
  // docs/simulate.md ("GPU sharing"): both pools start empty.
  //  - t 30 (first tick past the 30 s delay): pending: embed (6 replicas) and eval (8 MIG pods).
  //    least-waste: h100-mig for eval (CPU 1 - 64/191.45, memory 1 - 512/1990, GPU 1 - 8 x 428/8000:
  //    1.98) beats l4-shared for embed (1 - 12/47.81, 1 - 48/180, 1 - 6 x 250/4000: 2.11): one
  //    h100-mig node, Ready at 210. At 40 eval fits the node being provisioned; embed gets an
  //    l4-shared node, Ready at 220.
  //  - eval runs 210 to 7410; embed from 220; batch-infer (8 replicas) at 600 on the 10 replicas
  //    left, to 6000; tune (2 devices) at 1800 on the 8 devices left, to 5400.
  //  - The h100-mig node is empty from 7410: unneeded for 600 s, removed at 8010. The l4-shared node
  //    keeps embed to the horizon (its pods have nowhere else to go).
  const std::filesystem::path dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "simulate";
  const ClusterConfig c = io::read_sim_cluster_file((dir / "sharing-pools.yaml").string());
  std::vector<std::string> names;
  for (const SimPool& p : c.pools) names.push_back(p.pool.name);
  const io::SimWorkloadFile f = io::read_sim_workload_file((dir / "sharing-workload.yaml").string(), names);
  SimOptions o;
  o.seed = 42;
  std::map<double, std::vector<std::string>> seen;
  Simulation sim(c, f.workload, o);
  sim.add_controller([&](const ControllerPorts& ports) { return std::make_unique<Snapshots>(ports, std::vector<double>{2000}, &seen); });
  const SimResult r = sim.run();
  // At 2000 s: eval on GPUs 0-3 (both devices each), tune on GPU 4; embed's replicas spread over the
  // 4 L4 (0, 1, 2, 3, 0, 1), then batch-infer's pairs on the GPUs with the most free replicas:
  // free [2, 2, 3, 3] -> [2, 3]; [2, 2, 2, 2] -> [0, 1]; -> [2, 3]; -> [0, 1].
  EXPECT_EQ(seen[2000], (Lines{"h100-mig-0 eval-0 mig[0@0 3g.40gb]", "h100-mig-0 eval-1 mig[0@4 3g.40gb]",
                               "h100-mig-0 eval-2 mig[1@0 3g.40gb]", "h100-mig-0 eval-3 mig[1@4 3g.40gb]",
                               "h100-mig-0 eval-4 mig[2@0 3g.40gb]", "h100-mig-0 eval-5 mig[2@4 3g.40gb]",
                               "h100-mig-0 eval-6 mig[3@0 3g.40gb]", "h100-mig-0 eval-7 mig[3@4 3g.40gb]",
                               "h100-mig-0 tune-0 mig[4@0 3g.40gb,4@4 3g.40gb]", "l4-shared-0 embed-0 gpus[0]",
                               "l4-shared-0 embed-1 gpus[1]", "l4-shared-0 embed-2 gpus[2]", "l4-shared-0 embed-3 gpus[3]",
                               "l4-shared-0 embed-4 gpus[0]", "l4-shared-0 embed-5 gpus[1]", "l4-shared-0 batch-infer-0 gpus[2,3]",
                               "l4-shared-0 batch-infer-1 gpus[0,1]", "l4-shared-0 batch-infer-2 gpus[2,3]",
                               "l4-shared-0 batch-infer-3 gpus[0,1]"}));
  EXPECT_DOUBLE_EQ(outcome(r, "eval").completion_s, 7410);
  EXPECT_DOUBLE_EQ(outcome(r, "tune").completion_s, 5400);
  EXPECT_DOUBLE_EQ(outcome(r, "batch-infer").completion_s, 6000);
  EXPECT_EQ(r.pods_running, 6);
  EXPECT_EQ(r.nodes_scaled_up, 2);
  EXPECT_EQ(r.nodes_scaled_down, 1);
  ASSERT_EQ(r.nodes.size(), 2u);
  // Cost: h100-mig 30 to 8010 at 98.32 USD/h, l4-shared 40 to 14400 at 4.6016 USD/h.
  EXPECT_NEAR(r.cost_usd, 7980.0 / 3600 * 98.32 + 14360.0 / 3600 * 4.6016, 1e-9);
}

}  // namespace
}  // namespace gpufleet::sim
