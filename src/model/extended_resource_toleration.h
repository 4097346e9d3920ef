// The ExtendedResourceToleration admission plugin of kube-apiserver: a cluster that keeps its GPU
// nodes for GPU pods taints them with the extended resource's name as the key (e.g.
// `nvidia.com/gpu:NoSchedule`), and the plugin, when enabled, gives every pod that requests such a
// resource a toleration for that taint. Pods without GPUs then stay off GPU nodes, where they would
// take the CPU and memory that strand the GPUs.
//
// Source: kubernetes/kubernetes plugin/pkg/admission/extendedresourcetoleration/admission.go (Admit:
// for each extended resource the containers request, a toleration {key: <resource>, operator: Exists,
// effect: NoSchedule}, added with helper.AddOrUpdateTolerationInPod); the Kubernetes docs "Admission
// Controllers Reference", ExtendedResourceToleration. GKE taints GPU nodes so and enables the plugin;
// Amazon EKS lists it among the admission controllers it enables (EKS user guide, "platform versions").
#pragma once

#include <vector>

#include "model/pod.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// The plugin's name, as kube-apiserver's --enable-admission-plugins spells it.
inline constexpr const char* kExtendedResourceTolerationPlugin = "ExtendedResourceToleration";

/// Adds to `tolerations` the plugin's tolerations for the extended resources `request` asks for:
/// nvidia.com/gpu (num_gpu > 0, a shared fraction included), nvidia.com/gpu.shared (shared_replicas
/// > 0) and nvidia.com/mig-<profile> (each MIG request), in the resources' name order, each
/// {key: <resource>, operator: Exists, effect: NoSchedule}. A toleration already equal to one (same
/// key, operator, value and effect) is not added twice. A pod without extended resources gets none.
void add_extended_resource_tolerations(const Pod& request, std::vector<Toleration>& tolerations);

}  // namespace gpufleet
