// The fault injector: carries out a FaultSchedule's faults (inputs/sim/faults.h; the file format
// docs/faults.md) on the simulated fleet. Capacity outages, NodePool limit changes and driver
// upgrades are other controllers' (the provisioners, sim/controllers/driver_upgrade.h).
//
// Times. A timed fault runs at at_s. A rate fault draws, for each node of its target from the
// moment it is Ready (or from the window start), exponential times between hits with the fault's
// rate per node-hour, until the window ends (to_s, or the horizon) or the node leaves; a node that
// becomes Ready later in the window draws from then. All draws come from one GoRand seeded by the
// schedule's seed, or by the run's seed XOR kFaultSeedSalt: same inputs, same faults.
//
// Targets. A timed fault on a pool or zone hits one node drawn among the target's Ready nodes at
// that time (spot interruptions: its Ready spot nodes), in node order; none: skipped
// (FaultCounts::skipped). A node target hits that node when it is in the state (Ready, cordoned or,
// for an XID, NotReady); absent or provisioning: skipped.
//
// Effects.
//   node-failure            Fleet::fail_node (pods stop as on a spot reclaim, jobs keep their last
//                           checkpoint); Fleet::recover_node recover_after_s later (< 0: never).
//   xid                     on GPU `gpu` (-1: one drawn). The catalog (model/xid.h) decides:
//                           application-level: the pods on the GPU restart in place
//                           (Units::restart_in_place; jobs lose the work since the last
//                           checkpoint), the GPU stays allocatable; reset-level: Fleet::withhold_gpu
//                           kUnhealthy (its pods stop), restored recover_after_s later (< 0: never).
//                           Either way an alert (Alerting::on_xid).
//   device-plugin-failure   Fleet::set_device_plugin_down: no new pod gets the node's GPUs, running
//                           ones keep theirs; back recover_after_s later (< 0: never). On a pool or
//                           zone target, a timed failure hits EVERY node of it (a broken device-plugin
//                           DaemonSet is pool-wide), those that become Ready during the window too;
//                           a rate failure hits one node at a time.
//   spot-interruption       Fleet::interrupt (a notice now, reclaimed spot_notice_s later); spot
//                           nodes only.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/controllers/alerting.h"
#include "sim/controllers/controller.h"
#include "inputs/sim/faults.h"
#include "util/go_rand.h"

namespace gpufleet::sim {

/// The fault generator's seed is the run seed XOR this constant when the schedule has none
/// (distinct from the spot generator's salt, so the two streams differ; an arbitrary odd constant).
inline constexpr uint64_t kFaultSeedSalt = 0xd1b54a32d192ed03ULL;

class FaultInjector final : public Controller, public NodeListener {
 public:
  /// `schedule` must be valid for the fleet's pools (fault_error gives nullopt for each fault) and
  /// outlive the run; `alerting` hears the XIDs. Registers "fault", "fault-recovery" and
  /// "fault-rate" on the loop and listens to the fleet.
  FaultInjector(const FaultSchedule& schedule, uint64_t run_seed, Alerting& alerting, const SimulationModules& modules);
  void start() override;
  void report(SimResult& result) const override;

  // NodeListener: rate faults and pool-wide plugin failures follow the nodes that become Ready.
  void on_node_ready(NodeId n, double t) override;
  void on_node_removed(NodeId n, double t) override;

 private:
  // A pool- or zone-wide device-plugin failure window.
  struct PluginWindow {
    size_t fault = 0;
    bool active = false;
    std::vector<std::pair<NodeId, uint32_t>> nodes;  // (node, incarnation) put down by it
  };
  // One pending rate draw: fault f on node n (incarnation).
  struct RateDraw {
    size_t fault = 0;
    NodeId node = 0;
    uint32_t incarnation = 0;
  };
  bool targets(const Fault& f, NodeId n) const;
  std::vector<NodeId> target_nodes(const Fault& f) const;
  void on_fault(const Event& e);
  void on_recovery(const Event& e);
  void on_rate(const Event& e);
  void apply(size_t f, NodeId n, double t);
  void plugin_down(NodeId n, double t);
  void plugin_up(NodeId n, double t);
  void draw_rate(size_t f, NodeId n, double from);
  void start_rate_draws(NodeId n, double t);

  const FaultSchedule& schedule_;
  Alerting& alerting_;
  EventLoop& loop_;
  Fleet& fleet_;
  Units& units_;
  GoRand rng_;
  EventKind fault_ = 0, recovery_ = 0, rate_ = 0;
  std::vector<std::string> zones_;            // per node: its zone
  std::vector<int32_t> plugin_down_count_;    // per node: failures holding its plugin down
  std::vector<PluginWindow> windows_;         // by window id
  std::vector<RateDraw> draws_;               // by draw id
  // Recoveries: what comes back (kind, node, incarnation, GPU or window).
  struct Recovery {
    FaultKind kind = FaultKind::kNodeFailure;
    NodeId node = 0;
    uint32_t incarnation = 0;
    int32_t gpu = -1;
    int32_t window = -1;
  };
  std::vector<Recovery> recoveries_;
  FaultCounts counts_;
};

}  // namespace gpufleet::sim
