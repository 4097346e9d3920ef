#include "model/pod_disruption_budget.h"

#include <algorithm>

namespace gpufleet {

// k8s.io/apimachinery/pkg/util/intstr: int(math.Ceil(float64(value) * float64(total) / 100)).
int32_t scaled_value_round_up(IntOrPercent v, int32_t total) {
  if (!v.percent) return v.value;
  const int64_t product = int64_t{v.value} * total;
  return static_cast<int32_t>((product + 99) / 100);
}

bool pdb_selects(const PodDisruptionBudget& pdb, const Pod& pod) {
  const std::string_view ns = pod.namespace_name.empty() ? std::string_view("default") : std::string_view(pod.namespace_name);
  return pdb.has_selector && ns == pdb.namespace_name && label_selector_matches(pdb.selector, pod.labels);
}

PdbStatus pdb_status_of_counts(const std::optional<IntOrPercent>& min_available,
                               const std::optional<IntOrPercent>& max_unavailable, int32_t expected_pods,
                               int32_t current_healthy) {
  PdbStatus s;
  s.current_healthy = current_healthy;
  s.expected_pods = expected_pods;
  // getExpectedPodCount; with neither field kube leaves everything at 0.
  if (!max_unavailable && !min_available) {
    s.expected_pods = 0;
  } else if (max_unavailable) {
    s.desired_healthy = std::max(0, s.expected_pods - scaled_value_round_up(*max_unavailable, s.expected_pods));
  } else if (min_available) {
    s.desired_healthy = scaled_value_round_up(*min_available, s.expected_pods);
  }
  // updatePdbStatus
  s.disruptions_allowed = s.current_healthy - s.desired_healthy;
  if (s.expected_pods <= 0 || s.disruptions_allowed <= 0) s.disruptions_allowed = 0;
  return s;
}

PdbStatus pdb_status(const PodDisruptionBudget& pdb, const ClusterState& state, std::span<const Pod> workload_pods) {
  int32_t current_healthy = 0, expected_pods = 0;
  for (NodeId n = 0; n < state.node_count(); ++n)
    for (const BoundPod& b : state.pods_on(n)) current_healthy += pdb_selects(pdb, b.pod);
  for (const Pod& p : workload_pods) expected_pods += pdb_selects(pdb, p);
  return pdb_status_of_counts(pdb.min_available, pdb.max_unavailable, expected_pods, current_healthy);
}

}  // namespace gpufleet
