#include "sim/node_gate.h"

namespace gpufleet::sim {

sched::FilterCode NodeGateFilter::filter(const Pod& /*pod*/, const ClusterState& /*state*/, NodeId n) const {
  return gate_->schedulable(n) ? sched::FilterCode::kFits : sched::FilterCode::kUntoleratedTaint;
}

sched::Policy gate_policy(sched::Policy policy, const std::shared_ptr<NodeGate>& gate) {
  policy.filters.insert(policy.filters.begin(), std::make_shared<NodeGateFilter>(gate));
  policy.score = std::make_shared<GatedScore>(policy.score, gate);
  return policy;
}

}  // namespace gpufleet::sim
