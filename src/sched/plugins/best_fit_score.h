// BestFit policy (FGD paper baseline; simulator pkg/simulator/plugin/best_fit_score.go):
//   raw   = 0.5 * (cpu_free - cpu_req) / 128000 + 0.5 * (gpu_free_total - gpu_req_total) / 8000
//   score = int64((1 - raw) * 100)          (the least left over scores highest; truncated)
// The simulator then min-max normalizes scores to 0..100 in integer arithmetic; that is monotone and
// keeps distinct raw scores distinct (they span at most 100), so it never changes the chosen node
// and is not repeated here.
#pragma once

#include "sched/framework/interface.h"

namespace gpufleet::sched {

class BestFitScore final : public ScorePlugin, public NamedPlugin<"BestFitScore"> {
 public:
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
};

}  // namespace gpufleet::sched
