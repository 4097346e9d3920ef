#include "sim/simulator.h"

#include "sim/simulation.h"

namespace gpufleet::sim {

SimResult simulate(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options) {
  Simulation simulation(cluster, workload, options);
  return simulation.run();
}

}  // namespace gpufleet::sim
