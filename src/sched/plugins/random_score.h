// Random policy (FGD paper baseline "Random"; simulator pkg/simulator/plugin/random_score.go):
// PreScore draws one feasible node uniformly at random (rng.intn over the feasible nodes in node-id
// order); that node scores 100, all others 0. Paired with RandomGpuSelector.
#pragma once

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class RandomScore final : public PreScorePlugin, public ScorePlugin, public NamedPlugin<"RandomScore"> {
 public:
  /// The score reads the node PreScore drew.
  ScoreCaching caching() const override { return ScoreCaching::kPerCycle; }
  /// Draws the node (written to `cycle` under kName).
  Status pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                   GoRand& rng) const override;
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
