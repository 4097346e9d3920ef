// The simulator's parts (src/sim/engine, src/sim/controllers, sim/simulation.h): the event loop with
// open event kinds, a controller of the test's own plugged into a run, and a service's replica count
// changed at run time (Units::scale). Every expected value is computed by hand beside it.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/resources.h"
#include "sim/controllers/controller.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "support/sim_test_support.h"

namespace gpufleet::sim {
namespace {

// ------------------------------------------------------------------------------------ event loop

TEST(SimEventLoop, RunsKindsOfAnyNameInTimeThenInsertionOrder) {
  EventLoop loop(100);
  std::vector<std::string> seen;
  std::vector<double> clock;
  loop.add_clock_observer([&](double t) { clock.push_back(t); });
  EventKind ping = 0;
  const EventKind tick = loop.register_event("tick", [&](const Event& e) { seen.push_back("tick@" + std::to_string(int(e.time_s))); });
  ping = loop.register_event(
      "ping",
      [&](const Event& e) {
        seen.push_back("ping" + std::to_string(e.subject));
        // An event at the current time runs after those already queued for it.
        if (e.subject == 1) loop.schedule(e.time_s, ping, 3);
      },
      [](uint32_t s) { return "s" + std::to_string(s); });
  const EventKind quiet = loop.register_event("quiet", [&](const Event&) { seen.push_back("quiet"); }, {}, false);
  EXPECT_NE(tick, ping);
  EXPECT_EQ(loop.name(ping), "ping");
  std::vector<TraceEntry> trace;
  loop.set_trace(&trace);
  loop.schedule(10, ping, 1);
  loop.schedule(10, ping, 2);
  loop.schedule(5, tick);
  loop.schedule(10, quiet);
  loop.schedule(150, tick);  // after the horizon: never runs
  loop.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"tick@5", "ping1", "ping2", "quiet", "ping3"}));
  // The clock observers see each event's time, then the horizon.
  EXPECT_EQ(clock, (std::vector<double>{5, 10, 10, 10, 10, 100}));
  EXPECT_DOUBLE_EQ(loop.now_s(), 100);
  // The trace names each kind and subject; "quiet" is not traced.
  std::vector<std::string> traced;
  for (const TraceEntry& e : trace) traced.push_back(e.event + ":" + e.subject);
  EXPECT_EQ(traced, (std::vector<std::string>{"tick:", "ping:s1", "ping:s2", "ping:s3"}));
}

TEST(SimEventLoop, RefusesBadKindsAndEventsInThePast) {
  EventLoop loop(100);
  const EventKind a = loop.register_event("a", [&](const Event& e) {
    EXPECT_THROW(loop.schedule(e.time_s - 1, 0), std::invalid_argument);  // before the clock
  });
  EXPECT_THROW(loop.register_event("a", [](const Event&) {}), std::invalid_argument);  // taken
  EXPECT_THROW(loop.register_event("", [](const Event&) {}), std::invalid_argument);
  EXPECT_THROW(loop.schedule(1, static_cast<EventKind>(a + 1)), std::invalid_argument);  // not registered
  loop.schedule(50, a);
  loop.run();
}

// ------------------------------------------------------------------------------------ scale()

using testing::interrupt_at;
using testing::outcome;

// A pool of `nodes` static nodes with 2 L4 GPUs, 4 vCPU and 16 GiB each, at 3.6 USD/h (0.001 USD/s).
ClusterConfig static_pool(int32_t nodes) {
  return testing::one_pool_cluster(testing::gpu_pool(
      {.gpus_per_node = 2, .cpu_milli = 4000, .memory_mib = 16384, .node_count = nodes, .min_nodes = nodes, .max_nodes = nodes}));
}

// gpu_job of `pods` one-GPU pods of `kind` in namespace `ns`.
WorkloadSpec one_gpu(std::string name, std::string ns, WorkloadKind kind, int32_t pods, double arrival_s, double duration_s = 0) {
  WorkloadSpec s = testing::gpu_job(std::move(name), arrival_s, duration_s);
  s.namespace_name = std::move(ns);
  s.kind = kind;
  s.pods = pods;
  return s;
}

// least_allocated_options with the trace on.
SimOptions traced() {
  SimOptions o = testing::least_allocated_options();
  o.trace = true;
  return o;
}

// The test's own controller: its own event kind "scale-web", whose events set the replica count of
// "web" to their subject, recording the count it reads back.
class ScaleWeb final : public Controller {
 public:
  ScaleWeb(const ControllerPorts& ports, std::vector<std::pair<double, uint32_t>> steps, std::vector<int32_t>* seen)
      : ports_(ports), steps_(std::move(steps)), seen_(seen) {
    kind_ = ports_.events.register_event(
        "scale-web",
        [this](const Event& e) {
          ports_.services.scale("web", static_cast<int32_t>(e.subject), e.time_s);
          seen_->push_back(ports_.services.replicas("web"));
        },
        [](uint32_t) { return std::string("web"); });
  }
  void start() override {
    for (const auto& [t, replicas] : steps_) ports_.events.schedule(t, kind_, replicas);
  }

 private:
  ControllerPorts ports_;
  std::vector<std::pair<double, uint32_t>> steps_;
  std::vector<int32_t>* seen_;
  EventKind kind_ = 0;
};

TEST(SimScale, ReplicasAddedAndRemovedMidRun) {
  // Two static 2-GPU nodes; "web" (team-a) has 2 one-GPU replicas from 0, "batch" (team-b) is a
  // one-GPU job arriving at 300 for 500 s. LeastAllocated: web-0 -> p-0 (tie, first node), web-1 ->
  // p-1 (emptier). At 100 web is scaled to 5: web-2, web-3 and web-4 arrive; web-2 -> p-0 and web-3
  // -> p-1 (tie, first node, then the emptier), web-4 finds no GPU and waits. At 200 web is scaled to
  // 1: web-4 (pending), web-3, web-2 and web-1 (running) are removed, highest ordinal first. At 300
  // batch goes to the empty p-1 and completes at 800. Horizon 1000.
  ClusterConfig c = static_pool(2);
  Workload w;
  w.horizon_s = 1000;
  w.items = {one_gpu("web", "team-a", WorkloadKind::kService, 2, 0), one_gpu("batch", "team-b", WorkloadKind::kJob, 1, 300, 500)};
  const SimOptions o = traced();
  Simulation sim(c, w, o);
  std::vector<int32_t> seen;
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<ScaleWeb>(ports, std::vector<std::pair<double, uint32_t>>{{100, 5}, {200, 1}}, &seen);
  });
  const SimResult r = sim.run();
  EXPECT_EQ(seen, (std::vector<int32_t>{5, 1}));

  // Outcomes: in replica order, then batch.
  std::vector<std::string> names;
  for (const UnitOutcome& u : r.units) names.push_back(u.name + ":" + unit_state_name(u.state));
  EXPECT_EQ(names, (std::vector<std::string>{"web-0:running", "web-1:removed", "web-2:removed", "web-3:removed", "web-4:removed",
                                             "batch:completed"}));
  EXPECT_DOUBLE_EQ(outcome(r, "web-1").removed_s, 200);
  EXPECT_EQ(outcome(r, "web-3").starts, 1);
  EXPECT_EQ(outcome(r, "web-4").starts, 0);  // never ran
  EXPECT_DOUBLE_EQ(outcome(r, "web-0").removed_s, -1);
  EXPECT_DOUBLE_EQ(outcome(r, "batch").completion_s, 800);
  EXPECT_EQ(r.pods_running, 1);
  EXPECT_EQ(r.pods_removed, 4);
  EXPECT_EQ(r.pods_completed, 1);
  EXPECT_EQ(r.pods_pending, 0);
  // Pending samples: one per start (web-0..3 and batch, none waited); web-4 left the queue unstarted.
  EXPECT_EQ(r.pending.samples, 5u);
  EXPECT_DOUBLE_EQ(*r.pending.p99, 0);

  // The time series (a row every 60 s: the state after the events up to its time): at 120 all four
  // GPUs are taken and web-4 waits; at 240 only web-0 runs; at 360 batch too; at 840 web-0 alone.
  ASSERT_EQ(r.timeseries.size(), 17u);
  EXPECT_EQ(r.timeseries[2].gpu_allocated_milli, 4000);
  EXPECT_EQ(r.timeseries[2].pending_pods, 1);
  EXPECT_EQ(r.timeseries[4].gpu_allocated_milli, 1000);
  EXPECT_EQ(r.timeseries[4].pending_pods, 0);
  EXPECT_EQ(r.timeseries[6].gpu_allocated_milli, 2000);
  EXPECT_EQ(r.timeseries[14].gpu_allocated_milli, 1000);

  // Cost: 2 nodes x 1000 s x 0.001 USD/s = 2 USD. A one-GPU pod on a node of 2 GPUs, 4 vCPU and
  // 16 GiB pays half the GPU part of the price: 0.95 / (4 x 0.031611 + 16 x 0.004237 + 2 x 0.95) of
  // 0.001 USD/s. team-a: web-0 1000 s + web-1 200 s + web-2 100 s + web-3 100 s = 1400 pod-seconds;
  // team-b: 500 s.
  const double share = 0.95 / (4 * 0.031611 + 16 * 0.004237 + 2 * 0.95);
  EXPECT_NEAR(r.cost_usd, 2.0, 1e-12);
  ASSERT_EQ(r.chargeback.size(), 2u);
  EXPECT_NEAR(r.chargeback.at("team-a"), 1.4 * share, 1e-12);
  EXPECT_NEAR(r.chargeback.at("team-b"), 0.5 * share, 1e-12);
  EXPECT_NEAR(r.idle_cost_usd, 2.0 - 1.9 * share, 1e-12);

  // The controller's own event kind is in the trace under its name, with the new replicas' arrivals.
  std::vector<std::string> at_100_200;
  for (const TraceEntry& e : r.trace)
    if (e.time_s == 100 || e.time_s == 200) at_100_200.push_back(e.event + ":" + e.subject);
  EXPECT_EQ(at_100_200, (std::vector<std::string>{"scale-web:web", "arrival:web-2", "arrival:web-3", "arrival:web-4", "scale-web:web"}));
}

TEST(SimScale, ReplicasRemovedBeforeTheyArriveNeverRunAndNewOnesGetNewOrdinals) {
  // One static 2-GPU node, "web" with 1 replica from 0. At 100: scaled to 3 then, at the same time
  // and before the new replicas' arrivals run, to 2: web-2 is removed unarrived. At 200: to 1 (web-1
  // goes), at 300: to 2 again: the new replica is web-3 (ordinals are not reused) and runs from 300.
  ClusterConfig c = static_pool(1);
  Workload w;
  w.horizon_s = 1000;
  w.items = {one_gpu("web", "team-a", WorkloadKind::kService, 1, 0)};
  const SimOptions o = traced();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  std::vector<int32_t> seen;
  sim.add_controller([&](const ControllerPorts& ports) {
    return std::make_unique<ScaleWeb>(ports, std::vector<std::pair<double, uint32_t>>{{100, 3}, {100, 2}, {200, 1}, {300, 2}}, &seen);
  });
  const SimResult r = sim.run();
  EXPECT_EQ(seen, (std::vector<int32_t>{3, 2, 1, 2}));
  std::vector<std::string> names;
  for (const UnitOutcome& u : r.units) names.push_back(u.name + ":" + unit_state_name(u.state));
  EXPECT_EQ(names, (std::vector<std::string>{"web-0:running", "web-1:removed", "web-2:removed", "web-3:running"}));
  EXPECT_EQ(outcome(r, "web-2").starts, 0);
  EXPECT_DOUBLE_EQ(outcome(r, "web-2").removed_s, 100);
  EXPECT_EQ(outcome(r, "web-1").starts, 1);  // ran 100..200
  EXPECT_DOUBLE_EQ(outcome(r, "web-1").removed_s, 200);
  // Chargeback: web-0 1000 s + web-1 100 s + web-3 700 s = 1800 pod-seconds at the share above.
  const double share = 0.95 / (4 * 0.031611 + 16 * 0.004237 + 2 * 0.95);
  EXPECT_NEAR(r.chargeback.at("team-a"), 1.8 * share, 1e-12);
  EXPECT_EQ(r.pods_running, 2);
  EXPECT_EQ(r.pods_removed, 2);
}

TEST(SimScale, RefusesJobsUnknownNamesAndNegativeCounts) {
  ClusterConfig c = static_pool(1);
  Workload w;
  w.horizon_s = 1000;
  w.items = {one_gpu("web", "a", WorkloadKind::kService, 1, 0), one_gpu("batch", "a", WorkloadKind::kJob, 1, 0, 10)};
  struct Case {
    std::string service;
    int32_t replicas;
    std::string message;
  };
  for (const Case& k : std::vector<Case>{{"batch", 2, "'batch' is not a service of the workload"},
                                         {"nope", 2, "'nope' is not a service of the workload"},
                                         {"web", -1, "service 'web': replicas -1 is negative"}}) {
    const SimOptions o = traced();  // the simulation keeps a reference
    Simulation sim(c, w, o);
    sim.add_controller([&](const ControllerPorts& ports) {
      struct Once final : Controller {
        Once(const ControllerPorts& p, const Case& k) : ports(p), k(k) {}
        void start() override {
          const EventKind kind = ports.events.register_event("once", [this](const Event& e) { ports.services.scale(k.service, k.replicas, e.time_s); });
          ports.events.schedule(5, kind);
        }
        ControllerPorts ports;
        Case k;
      };
      return std::make_unique<Once>(ports, k);
    });
    try {
      sim.run();
      ADD_FAILURE() << k.service << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), k.message);
    }
  }
}

// ------------------------------------------------------------------------------------ faults

TEST(SimFaults, AControllerInterruptsANode) {
  // Two static 2-GPU on-demand nodes; job j (1 GPU, 1000 s, no checkpoints) starts at 0 on p-0. The
  // injector interrupts p-0 at 300: j loses its 300 s, is queued again and restarts at once on p-1
  // (p-0 is cordoned), completing at 1300; p-0 is removed 120 s (spot_notice_s) after the notice.
  ClusterConfig c = static_pool(2);
  Workload w;
  w.horizon_s = 2000;
  w.items = {one_gpu("j", "a", WorkloadKind::kJob, 1, 0, 1000)};
  const SimOptions o = traced();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  sim.add_controller(interrupt_at(300, 0));  // the fault injector as a plug-in: an interruption notice to p-0
  const SimResult r = sim.run();
  EXPECT_DOUBLE_EQ(outcome(r, "j").completion_s, 1300);
  EXPECT_EQ(outcome(r, "j").interruptions, 1);
  EXPECT_EQ(r.spot_interruptions, 1);
  EXPECT_EQ(r.evictions, 1);
  EXPECT_NEAR(r.lost_gpu_hours, 300.0 / 3600.0, 1e-12);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].node, "p-0");
  EXPECT_DOUBLE_EQ(r.nodes[0].end_s, 420);
  // p-0 420 s + p-1 2000 s at 0.001 USD/s.
  EXPECT_NEAR(r.cost_usd, 2.42, 1e-12);
  std::vector<std::string> traced_events;
  for (const TraceEntry& e : r.trace) traced_events.push_back(e.event + ":" + e.subject);
  EXPECT_EQ(traced_events, (std::vector<std::string>{"arrival:j", "fault:p-0", "spot-reclaim:p-0", "completion:j", "completion:j"}));
}

TEST(SimFaults, AGangBelowItsMinimumIsTornDownAndRestoredWhole) {
  // Three static 2-GPU nodes; gang g (2 pods x 2 GPUs, 1000 s, no checkpoints) starts at 0 on p-0
  // and p-1. The injector interrupts p-0 at 300: the gang is below its minimum, so both pods stop
  // (the one on p-1 holds no GPU after 300) and the gang restarts whole on p-1 and p-2 at once,
  // completing at 1300. Both pods count as evictions; the work lost is 2 pods x 2 GPUs x 300 s.
  ClusterConfig c = static_pool(3);
  Workload w;
  w.horizon_s = 2000;
  w.items = {one_gpu("g", "a", WorkloadKind::kJob, 2, 0, 1000)};
  w.items[0].num_gpu = 2;
  const SimOptions o = traced();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  sim.add_controller(interrupt_at(300, 0));
  const SimResult r = sim.run();
  EXPECT_DOUBLE_EQ(outcome(r, "g").completion_s, 1300);
  EXPECT_EQ(outcome(r, "g").interruptions, 1);
  EXPECT_EQ(outcome(r, "g").starts, 2);
  EXPECT_EQ(r.evictions, 2);
  EXPECT_NEAR(r.lost_gpu_hours, 4 * 300.0 / 3600.0, 1e-12);
}

// ------------------------------------------------------------------------------------ node lifecycle

// Samples the fleet and its ClusterState at the given times: the state's live nodes, and the
// invariants between the two (a node is in the state exactly while ready or cordoned, under its
// name, unschedulable exactly while cordoned; totals are the sums over the live nodes).
class SampleFleet final : public Controller {
 public:
  SampleFleet(const ControllerPorts& ports, std::vector<double> at_s, std::vector<size_t>* live) : ports_(ports), at_s_(std::move(at_s)), live_(live) {
    kind_ = ports_.events.register_event("sample", [this](const Event&) { sample(); });
  }
  void start() override {
    for (double t : at_s_) ports_.events.schedule(t, kind_);
  }

 private:
  void sample() {
    const Fleet& fleet = ports_.fleet;
    const ClusterState& state = fleet.state();
    int64_t capacity = 0, used = 0, fleet_capacity = 0;
    size_t in_fleet = 0;
    for (NodeId n = 0; n < fleet.node_count(); ++n) {
      const bool live = fleet.phase(n) == NodePhase::kReady || fleet.phase(n) == NodePhase::kCordoned;
      EXPECT_EQ(state.has_node(n), live) << fleet.name(n);
      if (!live) continue;
      ++in_fleet;
      fleet_capacity += int64_t{fleet.pool(fleet.pool_of(n)).pool.gpus_per_node} * 1000;
      EXPECT_EQ(state.node(n).name, fleet.name(n));
      EXPECT_EQ(state.node(n).unschedulable, fleet.phase(n) == NodePhase::kCordoned);
      capacity += int64_t{state.node(n).gpu_count} * 1000;
      used += int64_t{state.node(n).gpu_count} * 1000 - state.gpu_free_milli_total(n);
      EXPECT_EQ(state.pods_on(n).size(), fleet.pods_on(n).size());
    }
    EXPECT_EQ(state.live_node_count(), in_fleet);
    EXPECT_EQ(state.gpu_capacity_milli(), capacity);
    EXPECT_EQ(state.gpu_capacity_milli(), fleet_capacity);
    EXPECT_EQ(state.gpu_used_milli(), used);
    live_->push_back(state.live_node_count());
  }

  ControllerPorts ports_;
  std::vector<double> at_s_;
  std::vector<size_t>* live_;
  EventKind kind_ = 0;
};

TEST(SimNodeLifecycle, NodesEnterTheStateAtReadyAndLeaveAtRemoval) {
  // Pool p (2 L4 per node, one node at the start, min 0, max 3); jobs j1..j3 of one 2-GPU pod, 1000 s,
  // all at 0. j1 starts on p-0 at once; j2 and j3 pend, and the scan at 30 s (scale_up_delay_s)
  // launches p-1 and p-2, Ready at 210 (provision_s 180), where j2 and j3 start. In the state: p-0
  // until then (at 100 two nodes are provisioning, not in it), all three from 210. j1 ends at 1000,
  // j2 and j3 at 1210; each empty node is removed after scale_down_unneeded_s (600) unneeded: p-0
  // at 1600, p-1 and p-2 at 1810. So 1, 1, 3, 3, 2, 0 nodes at 5, 100, 300, 1100, 1700, 1900.
  ClusterConfig c = static_pool(1);
  c.pools[0].pool.min_nodes = 0;
  c.pools[0].pool.max_nodes = 3;
  c.autoscaler.enabled = true;
  Workload w;
  w.horizon_s = 2000;
  for (const char* name : {"j1", "j2", "j3"}) {
    WorkloadSpec s = one_gpu(name, "a", WorkloadKind::kJob, 1, 0, 1000);
    s.num_gpu = 2;
    w.items.push_back(s);
  }
  SimOptions o = traced();
  o.policy = "gpufleet";  // plans with the slots not yet in the state (CapacityOutlook)
  Simulation sim(c, w, o);
  std::vector<size_t> live;
  sim.add_controller([&live](const ControllerPorts& ports) {
    return std::make_unique<SampleFleet>(ports, std::vector<double>{5, 100, 300, 1100, 1700, 1900}, &live);
  });
  const SimResult r = sim.run();
  EXPECT_EQ(live, (std::vector<size_t>{1, 1, 3, 3, 2, 0}));
  EXPECT_DOUBLE_EQ(outcome(r, "j1").completion_s, 1000);
  EXPECT_DOUBLE_EQ(outcome(r, "j2").completion_s, 1210);
  EXPECT_DOUBLE_EQ(outcome(r, "j3").completion_s, 1210);
}

TEST(SimNodeLifecycle, ACordonedNodeStaysInTheStateUnschedulableUntilRemoved) {
  // As SimFaults above: p-0 interrupted at 300 is cordoned (in the state, unschedulable) until its
  // removal at 420; p-1 runs j from 300.
  ClusterConfig c = static_pool(2);
  Workload w;
  w.horizon_s = 2000;
  w.items = {one_gpu("j", "a", WorkloadKind::kJob, 1, 0, 1000)};
  const SimOptions o = traced();  // the simulation keeps a reference
  Simulation sim(c, w, o);
  std::vector<size_t> live;
  sim.add_controller(interrupt_at(300, 0));
  sim.add_controller([&live](const ControllerPorts& ports) {
    return std::make_unique<SampleFleet>(ports, std::vector<double>{200, 350, 500}, &live);
  });
  sim.run();
  EXPECT_EQ(live, (std::vector<size_t>{2, 2, 1}));
}

}  // namespace
}  // namespace gpufleet::sim
