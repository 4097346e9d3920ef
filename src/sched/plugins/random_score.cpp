#include "sched/plugins/random_score.h"

#include <memory>

namespace gpufleet::sched {
namespace {

struct Choice final : StateData {
  explicit Choice(NodeId n) : node(n) {}
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Choice>(*this); }
  NodeId node;
};

}  // namespace

Status RandomScore::pre_score(const Pod&, const ClusterState&, std::span<const NodeId> feasible, CycleState& cycle,
                              GoRand& rng) const {
  cycle.write(kName, std::make_unique<Choice>(feasible[static_cast<size_t>(rng.intn(static_cast<int64_t>(feasible.size())))]));
  return Status();
}

int64_t RandomScore::score(const Pod&, const ClusterState&, NodeId n, const CycleState& cycle) const {
  const auto* choice = cycle.read_as<Choice>(kName);
  return choice != nullptr && n == choice->node ? 100 : 0;
}

}  // namespace gpufleet::sched
