// The labels and annotations of a LeaderWorkerSet's pods (kubernetes-sigs/lws
// api/leaderworkerset/v1/leaderworkerset_types.go). The Kubernetes reader (readers/k8s/k8s_yaml.h)
// expands a LeaderWorkerSet into `replicas` groups of `size` pods with these labels: the leader
// <lws>-<group> (worker-index 0), the workers <lws>-<group>-<worker> (worker-index 1 .. size-1).
#pragma once

namespace gpufleet {

/// The LeaderWorkerSet's name, on every pod.
inline constexpr const char* kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";
/// The group's index 0 .. replicas-1, on every pod of the group.
inline constexpr const char* kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
/// The pod's index in its group: 0 for the leader, 1 .. size-1 for the workers.
inline constexpr const char* kLwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index";
/// The group's unique key: hex SHA-1 of "<namespace>/<leader pod name>" (pkg/webhooks/pod_webhook.go
/// genGroupUniqueKey), on every pod of the group; exclusive placement selects groups by it.
inline constexpr const char* kLwsGroupKeyLabel = "leaderworkerset.sigs.k8s.io/group-key";
/// On the LeaderWorkerSet: a node label key; each group goes in one domain of it, alone.
inline constexpr const char* kLwsExclusiveTopologyAnnotation = "leaderworkerset.sigs.k8s.io/exclusive-topology";
/// On the LeaderWorkerSet: the same per subgroup (needs subGroupPolicy.subGroupSize). Not modelled.
inline constexpr const char* kLwsSubGroupExclusiveTopologyAnnotation = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology";

}  // namespace gpufleet
