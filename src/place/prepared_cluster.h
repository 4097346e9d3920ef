// The cluster as `gpufleet place` sets it up before it schedules anything, shared with the live
// extender (src/live/), so that both decide on the same state with the same profile:
//  - the ClusterState of the input's nodes;
//  - the policy's profile (sched/policy_registry.h) with kube's DefaultPreemption as its PostFilter,
//    its fragmentation measure built from the typical mix of every input pod (bound and pending,
//    sched/gpu/pod_mix_estimator.h), PlaceOptions::percentage_of_nodes_to_score as its sampling,
//    and the node rank by name (ties go to the node whose name sorts first);
//  - the pods already bound by spec.nodeName, in input order, each on the devices its bind recorded
//    (Pod::assigned_devices) when those are free, else on the lowest free devices, as the kubelet
//    admits them (pkg/kubelet/lifecycle/predicate.go generalFilter); a pod on a missing node or one
//    the kubelet refuses is listed with the kubelet's reason ("node \"n\" not found", "OutOfcpu",
//    "Predicate NodeAffinity failed: ...").
// Nothing here is thread-safe: one caller at a time per PreparedCluster.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cluster_state.h"
#include "inputs/place/place_input.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::place {

/// A pod of the input bound by spec.nodeName.
struct PreboundPod {
  size_t pod = 0;                  ///< index in PlaceInput::pods
  sched::ScheduleResult result;    ///< its node and devices
};

/// A pod bound by spec.nodeName that does not run: missing node or refused by the kubelet.
struct RefusedPod {
  size_t pod = 0;        ///< index in PlaceInput::pods
  std::string reason;    ///< the kubelet's words (see the top of this file)
};

struct PreparedCluster {
  std::unique_ptr<ClusterState> state;               ///< stable address: the profile points at it
  std::unordered_map<std::string, NodeId> node_by_name;
  std::unique_ptr<sched::Scheduler> scheduler;
  GoRand rng{42};                                    ///< seeded with PlaceOptions::seed
  std::vector<PreboundPod> prebound;                 ///< in input order
  std::vector<RefusedPod> refused;                   ///< in input order
};

/// Sets the cluster up (see the top of this file). `input` must outlive the result (the profile's
/// preemption reads its PodDisruptionBudgets and pods). Throws UsageError for an unknown policy,
/// std::invalid_argument for nodes the model refuses.
PreparedCluster prepare_cluster(const PlaceInput& input, const PlaceOptions& options);

/// The policy's scheduler as prepare_cluster sets it up on `state` (its profile with DefaultPreemption,
/// the fragmentation measure of `input.pods`' typical mix, node ranks by name over the state's slots;
/// an empty slot ranks as the name ""), without binding anything. `input` and `state` must outlive
/// the result. For the live cache (live/cluster_cache.h), which sets a scheduler up again on a state
/// it keeps when the nodes change. Throws as prepare_cluster.
std::unique_ptr<sched::Scheduler> make_scheduler(const ClusterState& state, const PlaceInput& input, const PlaceOptions& options);

/// The kubelet's admission of a pod bound by spec.nodeName to node n (see the top of this file):
/// empty when admitted, else its reason.
std::string kubelet_rejection(const Pod& pod, const ClusterState& state, NodeId n);

}  // namespace gpufleet::place
