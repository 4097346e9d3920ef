// The alerts a run with a fault schedule raises (SimResult::alerts), evaluated in this one module so
// that live Prometheus rules can mirror them (docs/faults.md gives each rule's PromQL and upstream
// name). Rules:
//   DCGMXidError          a GPU reported an XID (DCGM exporter's DCGM_FI_DEV_XID_ERRORS non-zero):
//                         fires at once; severity and message from model/xid.h: "warning" and
//                         "restart the application", or "critical" and "drain and reset the GPU".
//   KubeNodeNotReady      a node NotReady for kNodeNotReadyForS (kube-prometheus / kubernetes-mixin
//                         KubeNodeNotReady: kube_node_status_condition{condition="Ready"} == 0 for
//                         15m, severity warning): fires at failure + 15 min if still NotReady.
//   KubePodPendingTooLong a pod (a job's gang or a service replica) pending for kPodPendingForS,
//                         gpufleet's name for kubernetes-mixin KubePodNotReady's rule (a pod in
//                         phase Pending for 15m, severity warning); evaluated every
//                         kEvaluationIntervalS (Prometheus' default evaluation_interval, 1m), once
//                         per pending episode.
//   SpotInterruptionStorm kStormCount spot interruption notices in one pool within kStormWindowS
//                         (gpufleet's choice: 3 in 10 min, severity critical); fires at the notice
//                         that completes the count, again only after the window has emptied.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/xid.h"
#include "sim/controllers/controller.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

inline constexpr double kNodeNotReadyForS = 900;
inline constexpr double kPodPendingForS = 900;
inline constexpr double kEvaluationIntervalS = 60;
inline constexpr int32_t kStormCount = 3;
inline constexpr double kStormWindowS = 600;

class Alerting final : public Controller, public NodeListener {
 public:
  /// Registers its events ("alert-node-not-ready", "alert-evaluation", not traced) and listens to
  /// the fleet.
  explicit Alerting(const SimulationModules& modules);
  void start() override;
  void report(SimResult& result) const override;

  /// GPU g of node n reported XID `xid` at t (the fault injector calls it).
  void on_xid(NodeId n, int32_t g, const XidInfo& xid, double t);

  // NodeListener
  void on_node_interrupted(NodeId n, double t) override;  // a failure (NotReady)
  void on_spot_notice(NodeId n, double t, double reclaim_at_s) override;

 private:
  void fire(double t, const char* alert, const char* severity, std::string subject, std::string message);
  void on_not_ready_check(const Event& e);
  void on_evaluation(const Event& e);

  EventLoop& loop_;
  Fleet& fleet_;
  const PendingQueue& pending_;
  const Units& units_;
  EventKind not_ready_ = 0, evaluation_ = 0;
  std::vector<uint32_t> failures_;                 // per node: NotReady episodes so far
  std::set<std::pair<uint32_t, double>> pending_alerted_;  // (unit, pending since)
  std::map<uint32_t, std::vector<double>> storm_;  // pool -> notice times in the window
  std::map<uint32_t, bool> storm_firing_;
  std::vector<Alert> alerts_;
};

}  // namespace gpufleet::sim
