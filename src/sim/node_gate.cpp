#include "sim/node_gate.h"

namespace gpufleet::sim {

sched::FilterCode NodeGateFilter::filter(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId n, const sched::CycleState& /*cycle*/) const {
  return gate_->schedulable(n) ? sched::FilterCode::kFits : sched::FilterCode::kUntoleratedTaint;
}

sched::Profile gate_policy(sched::Profile policy, const std::shared_ptr<NodeGate>& gate) {
  policy.filters.insert(policy.filters.begin(), std::make_shared<NodeGateFilter>(gate));
  // The policy's own Score plugin (the last one; its PreScore, if any, still runs on the inner object).
  policy.scores.back().plugin = std::make_shared<GatedScore>(policy.scores.back().plugin, gate);
  return policy;
}

}  // namespace gpufleet::sim
