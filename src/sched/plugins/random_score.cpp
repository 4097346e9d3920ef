#include "sched/plugins/random_score.h"

namespace gpufleet::sched {

void RandomScore::pre_score(const Pod&, const ClusterState&, std::span<const NodeId> feasible, CycleState& cycle,
                            GoRand& rng) const {
  cycle.prescore_choice = feasible[static_cast<size_t>(rng.intn(static_cast<int64_t>(feasible.size())))];
}

int32_t RandomScore::score(const Pod&, const ClusterState&, NodeId n, const CycleState& cycle) const {
  return n == cycle.prescore_choice ? 100 : 0;
}

}  // namespace gpufleet::sched
