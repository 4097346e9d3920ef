// Random policy (FGD paper baseline "Random"; simulator pkg/simulator/plugin/random_score.go):
// PreScore draws one feasible node uniformly at random (rng.intn over the feasible nodes in node-id
// order); that node scores 100, all others 0. Paired with RandomGpuSelector.
#pragma once

#include "sched/framework.h"

namespace gpufleet::sched {

class RandomScore final : public ScorePlugin {
 public:
  std::string_view name() const override { return "RandomScore"; }
  bool cacheable() const override { return false; }
  void pre_score(const Pod& pod, const ClusterState& state, std::span<const NodeId> feasible, CycleState& cycle,
                 GoRand& rng) const override;
  int32_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
