// A simulation put together from its parts (the semantics: sim/simulator.h). simulate() builds one
// and runs it; a caller that brings a controller of its own (a replica autoscaler, a fault injector)
// builds it here and adds the controller before run().
//
// The parts, and who uses whom (each a file pair; the header states its contract):
//   engine/event_loop    clock and dispatch; event kinds are registered by the modules below
//   engine/fleet         nodes and their lifecycle, spot interruptions, the ClusterState
//   engine/billing       node billing segments, reservation coverage, chargeback (hears the fleet)
//   engine/pending_queue units waiting for capacity, in order; the retry pass
//   engine/placement     the scheduler over the fleet; template checks; dry runs
//   engine/workloads     units and pods from arrival to the horizon; try_start, evictions, restarts,
//                        moves, scale(service, replicas)
//   engine/metrics       time series, pending-time samples, outcomes
//   controllers/cluster_autoscaler, controllers/consolidation: the built-in controllers;
//   controllers/karpenter_provisioner: with Karpenter NodePools (ClusterConfig::node_pools);
//   controllers/driver_upgrade when ClusterConfig::faults.upgrades is not empty;
//   controllers/alerting, controllers/fault_injector: with a fault schedule (ClusterConfig::faults
//                        with faults) only: the alerts, and the faults carried out
// The simulation wires the fleet's node events to the queue (a node became ready: retry) and to the
// workloads (a node was interrupted: its units stop). Nothing else is shared.
#pragma once

#include <functional>
#include <memory>

#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"
#include "inputs/sim/sim_options.h"
#include "sim/results/sim_result.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {

class Simulation {
 public:
  /// Builds a controller from the ports of the simulation being run.
  using ControllerFactory = std::function<std::unique_ptr<Controller>(const ControllerPorts& ports)>;

  /// Validates the inputs and builds the parts; throws as simulate() does. The arguments must
  /// outlive the simulation.
  Simulation(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;
  ~Simulation();

  /// Adds a controller after the built-in ones (the Cluster Autoscaler, then consolidation, when
  /// enabled); it is built at once and started, in the order added, when run() begins.
  void add_controller(const ControllerFactory& factory);

  /// Runs to the horizon and returns the result. Once only: throws std::logic_error after that.
  SimResult run();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace gpufleet::sim
