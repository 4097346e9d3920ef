// A controller: a part of the simulated control plane that acts at events of its own (the Cluster
// Autoscaler's scan, Karpenter's consolidation, the inference services with their replica
// autoscalers; the fault injector and the alerts). It registers its event kinds on the event loop and reaches the
// cluster only through the modules it is given: the built-in ones get SimulationModules (and keep
// what their rules need), a plug-in gets ControllerPorts (sim/simulation.h, Simulation::add_controller).
#pragma once

#include "sim/engine/billing.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/fleet.h"
#include "sim/engine/pending_queue.h"
#include "sim/engine/placement.h"
#include "sim/engine/units.h"

namespace gpufleet::sim {

struct SimResult;

class Controller {
 public:
  virtual ~Controller() = default;
  /// Schedules its first events. Called once, after the fleet's initial nodes and the arrivals are
  /// scheduled, controllers in the order they were added.
  virtual void start() = 0;
  /// Writes its counters into the result at the horizon (none by default).
  virtual void report(SimResult& /*result*/) const {}
};

/// What the built-in controllers (the Cluster Autoscaler, consolidation, the inference services)
/// use: the simulation's modules, references valid for its run. Each takes what its rules need.
struct SimulationModules {
  EventLoop& events;
  Fleet& fleet;
  Placement& placement;
  PendingQueue& pending;
  Units& units;
  const Billing& billing;
};

/// What a plug-in controller may use. References into the running simulation, valid for its run.
struct ControllerPorts {
  EventLoop& events;            ///< register event kinds, schedule events, read the clock
  ServiceScaler& services;      ///< read and change services' replica counts
  Fleet& fleet;                 ///< read nodes and their pods; launch, remove, interrupt, cordon nodes
  const PendingQueue& pending;  ///< the pending units, in queue order
};

}  // namespace gpufleet::sim
