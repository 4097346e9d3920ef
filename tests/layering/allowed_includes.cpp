// Layering probe, the control: compiled as a file of src/sched/plugins/, it includes what that layer
// uses (the framework, the domain model, util through the framework) and must build, so that the
// wrong-way probes fail for the include alone.
#include "model/cluster_state.h"
#include "sched/framework/interface.h"
#include "sched/plugins/node_affinity.h"
#include "util/go_rand.h"

namespace gpufleet::layering_probe {
int probe() { return 0; }
}  // namespace gpufleet::layering_probe
