// Helpers shared by the simulator's tests (sim/simulation.h): one-pool clusters, one-pod GPU jobs,
// the options most tests run with, actions of the test's own on the fleet at given times, and the
// outcome of a unit by name. No GoogleTest here: benchmarks may include it too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/fleet.h"
#include "sim/simulation.h"
#include "sim/simulator.h"
#include "inputs/sim/workload.h"

namespace gpufleet::testing {

/// The shape of one GPU node pool in a test (the NodePool fields every test sets; the rest keep
/// their defaults). Defaults: pool "p" of 1-GPU L4 nodes with 8 vCPU and 32 GiB, no node at the
/// start, 0..2 nodes, on demand at 3.6 USD/h (0.001 USD/s). Name the fields that differ:
/// gpu_pool({.name = "spot", .gpus_per_node = 2, .node_count = 3}).
struct PoolShape {
  std::string name = "p";
  std::string gpu_model = "L4";
  int32_t gpus_per_node = 1;
  int64_t cpu_milli = 8000;     ///< allocatable per node
  int64_t memory_mib = 32768;   ///< allocatable per node
  int32_t node_count = 0;       ///< nodes Ready at time 0
  int32_t min_nodes = 0;
  int32_t max_nodes = 2;
  double on_demand_usd_per_hour = 3.6;
};

/// The pool of `shape` with default settings (on demand, no Karpenter NodePool, default
/// provisioning times).
inline sim::SimPool gpu_pool(const PoolShape& shape) {
  sim::SimPool p;
  p.pool.name = shape.name;
  p.pool.gpu_model = shape.gpu_model;
  p.pool.gpus_per_node = shape.gpus_per_node;
  p.pool.cpu_milli = shape.cpu_milli;
  p.pool.memory_bytes = shape.memory_mib * kBytesPerMib;
  p.pool.node_count = shape.node_count;
  p.pool.min_nodes = shape.min_nodes;
  p.pool.max_nodes = shape.max_nodes;
  p.pool.on_demand_usd_per_hour = shape.on_demand_usd_per_hour;
  return p;
}

/// A cluster of `pool` alone with the Cluster Autoscaler off: its node_count nodes are all it ever
/// has (a test that wants scaling sets autoscaler.enabled back).
inline sim::ClusterConfig one_pool_cluster(sim::SimPool pool) {
  sim::ClusterConfig c;
  c.pools = {std::move(pool)};
  c.autoscaler.enabled = false;
  return c;
}

/// A job of one pod holding `gpus` whole GPUs (gpu_milli 1000), arriving at `arrival_s` and needing
/// `duration_s` seconds of work; no CPU or memory request, no checkpoints, the other fields at their
/// WorkloadSpec defaults.
inline sim::WorkloadSpec gpu_job(std::string name, double arrival_s, double duration_s, int32_t gpus = 1) {
  sim::WorkloadSpec s;
  s.name = std::move(name);
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.num_gpu = gpus;
  s.gpu_milli = 1000;
  return s;
}

/// A job or service of `pods` pods (a service: replicas), each holding `num_gpu` whole GPUs (gpu_milli
/// 1000 when num_gpu > 0), `cpu_milli` and `memory_bytes` (default 1 core, 1 GiB), arriving at
/// `arrival_s`; a job needs `duration_s` seconds of work. The other fields at their WorkloadSpec defaults.
inline sim::WorkloadSpec gpu_item(std::string name, sim::WorkloadKind kind, double arrival_s, double duration_s, int32_t pods,
                                  int32_t num_gpu, int64_t cpu_milli = 1000, int64_t memory_bytes = int64_t{1} << 30) {
  sim::WorkloadSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.pods = pods;
  s.num_gpu = num_gpu;
  s.gpu_milli = num_gpu > 0 ? 1000 : 0;
  s.cpu_milli = cpu_milli;
  s.memory_bytes = memory_bytes;
  return s;
}

/// Options with the policy "leastallocated" (kube-scheduler's default scoring) and every other
/// option at its default. A Simulation keeps a reference to its options: hold them in a variable
/// that outlives the run (`const SimOptions o = least_allocated_options();`), never pass this
/// temporary to the Simulation constructor.
inline sim::SimOptions least_allocated_options() {
  sim::SimOptions o;
  o.policy = "leastallocated";
  return o;
}

/// Runs `cluster` and `workload` with least_allocated_options() and `controllers` added after the
/// built-in ones, in order. Throws as simulate() does.
inline sim::SimResult run_least_allocated(const sim::ClusterConfig& cluster, const sim::Workload& workload,
                                          const std::vector<sim::Simulation::ControllerFactory>& controllers = {}) {
  const sim::SimOptions o = least_allocated_options();
  sim::Simulation simulation(cluster, workload, o);
  for (const sim::Simulation::ControllerFactory& f : controllers) simulation.add_controller(f);
  return simulation.run();
}

/// The outcome of the unit named `name` (a job, or a service replica "<service>-<i>"); throws
/// std::runtime_error when the result has no such unit.
inline const sim::UnitOutcome& outcome(const sim::SimResult& result, const std::string& name) {
  for (const sim::UnitOutcome& u : result.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

/// A controller of the test's own: runs each action on the fleet at its time (seconds; at or after
/// the start, before the horizon to run). Each action is one event of kind `event`, whose subject is
/// the action's index; actions at the same time run in the order given. `event` must not be taken
/// by another event kind of the run ("fault" is the fault injector's when ClusterConfig::faults
/// has faults); `subject_name` names a subject in the trace (default: unnamed).
class At final : public sim::Controller {
 public:
  using Action = std::function<void(sim::Fleet& fleet, double time_s)>;
  using Actions = std::vector<std::pair<double, Action>>;

  At(const sim::ControllerPorts& ports, Actions actions, std::string event = "test-action", sim::EventLoop::SubjectName subject_name = {})
      : ports_(ports), actions_(std::move(actions)) {
    kind_ = ports_.events.register_event(
        std::move(event), [this](const sim::Event& e) { actions_[e.subject].second(ports_.fleet, e.time_s); }, std::move(subject_name));
  }
  void start() override {
    for (uint32_t i = 0; i < actions_.size(); ++i) ports_.events.schedule(actions_[i].first, kind_, i);
  }

 private:
  sim::ControllerPorts ports_;
  Actions actions_;
  sim::EventKind kind_ = 0;
};

/// Simulation::add_controller's factory for an At running `actions` (event kind "test-action").
/// The actions are copied into each controller built; what they capture by reference must outlive
/// the run.
inline sim::Simulation::ControllerFactory actions_at(At::Actions actions) {
  return [actions = std::move(actions)](const sim::ControllerPorts& ports) { return std::make_unique<At>(ports, actions); };
}

/// A spot interruption notice (Fleet::interrupt) to node `node` at `at_s`, as an event of kind
/// "fault" traced under the node's name (so the run must have no fault schedule of its own).
inline sim::Simulation::ControllerFactory interrupt_at(double at_s, NodeId node) {
  return [at_s, node](const sim::ControllerPorts& ports) {
    const sim::Fleet* fleet = &ports.fleet;
    return std::make_unique<At>(ports, At::Actions{{at_s, [node](sim::Fleet& f, double t) { f.interrupt(node, t); }}}, "fault",
                                [fleet, node](uint32_t) { return fleet->name(node); });
  };
}

}  // namespace gpufleet::testing
