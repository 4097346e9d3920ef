// PodDisruptionBudget (policy/v1): how many pods of a set may be disrupted voluntarily. Plain data
// and the disruption controller's arithmetic; no I/O.
//
// Status, as kube's disruption controller computes it (pkg/controller/disruption/disruption.go,
// getExpectedPodCount, countHealthyPods, updatePdbStatus), with the engine's stand-ins:
//   pods            = the pods the PDB selects: same namespace, and its selector matches their labels
//                     (a PDB without selector selects nothing; an empty selector selects the whole
//                     namespace, as policy/v1 does)
//   current_healthy = selected pods bound in the ClusterState (kube: selected pods that are Ready)
//   expected_pods   = selected pods of the workload, i.e. all pods of the run, pending or bound (kube:
//                     the sum of the owning controllers' replicas for maxUnavailable and percentages,
//                     len(pods) for an integer minAvailable; a Deployment's pods are its replicas)
//   desired_healthy = maxUnavailable: max(0, expected - scaled(maxUnavailable, expected));
//                     integer minAvailable: its value; percent minAvailable: scaled(minAvailable, expected)
//                     where scaled(int) = int and scaled(p%) = ceil(p * expected / 100)
//                     (intstr.GetScaledValueFromIntOrPercent with roundUp = true)
//   disruptions_allowed = current_healthy - desired_healthy, or 0 when that is negative or
//                     expected_pods is 0. With neither minAvailable nor maxUnavailable (the API
//                     allows it, the YAML reader does not), expected and desired stay 0, so 0.
// Differences: kube counts only Ready pods that are not being deleted nor in status.disruptedPods, and
// a bare pod (no controller) adds nothing to the expected scale; the engine has neither readiness nor
// owner references. An empty pod namespace (openb pods) counts as "default".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// An int-or-string field of a PDB (intstr.IntOrString): a count, or a percentage "N%".
struct IntOrPercent {
  int32_t value = 0;     ///< the count, or N of "N%" (0..100)
  bool percent = false;  ///< true for "N%"
  bool operator==(const IntOrPercent&) const = default;
};

/// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp = true): the count itself, or
/// ceil(value * total / 100) for a percentage. total >= 0.
int32_t scaled_value_round_up(IntOrPercent v, int32_t total);

/// policy/v1 PodDisruptionBudget spec. Exactly one of min_available / max_unavailable is set (the
/// YAML reader enforces it).
struct PodDisruptionBudget {
  std::string namespace_name = "default";
  std::string name;
  bool has_selector = false;  ///< spec.selector present (nil selects no pod)
  LabelSelector selector;     ///< spec.selector when has_selector
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
  /// spec.unhealthyPodEvictionPolicy: "IfHealthyBudget" (default) or "AlwaysAllow"; kept, not used
  /// (every bound pod counts as healthy).
  std::string unhealthy_pod_eviction_policy = "IfHealthyBudget";
};

/// The status fields of a PDB (policy/v1 PodDisruptionBudgetStatus), see the top of this file.
struct PdbStatus {
  int32_t current_healthy = 0;
  int32_t desired_healthy = 0;
  int32_t expected_pods = 0;
  int32_t disruptions_allowed = 0;
  bool operator==(const PdbStatus&) const = default;
};

/// The disruption controller's arithmetic on counts (see the top of this file), shared by pdb_status
/// and the simulator's per-item budgets (inputs/sim/workload.h): for a budget with `min_available` /
/// `max_unavailable` over `expected_pods` pods of which `current_healthy` are healthy,
///   desired_healthy     = max(0, expected - scaled(maxUnavailable, expected)) when maxUnavailable is
///                         set (it wins if both are), else scaled(minAvailable, expected): a count is
///                         itself, a percentage rounds up (scaled_value_round_up);
///   disruptions_allowed = current_healthy - desired_healthy, 0 when negative or expected_pods <= 0.
/// With neither field kube leaves everything 0: expected_pods, desired_healthy and
/// disruptions_allowed are 0 in the result.
PdbStatus pdb_status_of_counts(const std::optional<IntOrPercent>& min_available,
                               const std::optional<IntOrPercent>& max_unavailable, int32_t expected_pods,
                               int32_t current_healthy);

/// Whether the PDB selects the pod: same namespace and a present selector matching its labels.
bool pdb_selects(const PodDisruptionBudget& pdb, const Pod& pod);

/// The disruption controller's status of `pdb` for the pods bound in `state` and the run's pods
/// `workload_pods` (see the top of this file). O(bound pods + workload pods).
PdbStatus pdb_status(const PodDisruptionBudget& pdb, const ClusterState& state, std::span<const Pod> workload_pods);

}  // namespace gpufleet
