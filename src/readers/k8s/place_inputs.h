// Reading what `gpufleet place` works on: the cluster (Kubernetes Nodes, gpufleet node-pool files,
// device-plugin and mig-parted configs) and the workload (Pods and controllers, PriorityClasses,
// ResourceQuotas). Edge of the engine: files in, plain data out.
#pragma once

#include <string>
#include <vector>

#include "readers/k8s/device_setup.h"
#include "readers/k8s/k8s_yaml.h"
#include "model/node_pool.h"
#include "inputs/place/place_input.h"

namespace gpufleet::io {

struct PlaceInputs {
  place::PlaceInput input;  ///< nodes (pool nodes first, in pool order, then Node objects), pods, quotas
  std::vector<NodePool> pools;
  K8sObjects objects;       ///< everything the Kubernetes reader read (warnings, skipped kinds, configs)
  /// The reader's, then the device set-up's (readers/k8s/device_setup.h), then quota rules applied differently
  /// from Kubernetes (admit::quota_differences): everything decided differently from Kubernetes or
  /// left out, one line each.
  std::vector<std::string> warnings;
  /// Nodes whose advertised GPU count disagrees with their labels and sharing (readers/k8s/device_setup.h
  /// rule 5); each also has its line in `warnings`.
  std::vector<NodeCountMismatch> node_warnings;
};

/// Reads the cluster and workload paths (files or directories) together, so a workload may name the
/// PriorityClasses of any input; a path given twice is read once. Node pools come from the files holding a NodePoolSet
/// (readers/k8s/pool_file.h) and are expanded into Nodes (expand_pool). The device-plugin and mig-parted
/// configs among the inputs are applied to all nodes (apply_device_setup). PodDisruptionBudgets go
/// to the input for preemption, DaemonSets to the input's daemon_sets (one pod per node at most each:
/// pods + DaemonSets x nodes may not pass ObjectLimits::max_pods, an error at the DaemonSet's name).
/// Throws InputError for bad input (the
/// readers' errors, a node name given twice, a pool that fails validation, a ResourceClaim or
/// ResourceClaimTemplate a pod names that no input holds: readers/k8s/dra_yaml.h
/// check_dra_claim_references; place_inputs_from_objects does not check it) and UsageError when the
/// cluster paths hold no node at all: "--cluster a.yaml: no nodes (...)", naming `cluster_option`
/// (the option the paths were given with: --cluster, --snapshot) and each path.
PlaceInputs read_place_inputs(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths,
                              const std::string& cluster_option = "--cluster");

/// The paths read_place_inputs reads, in order: the cluster paths, then the workload paths, each
/// path once (the first time it is given, comparing std::filesystem::weakly_canonical forms).
std::vector<std::string> place_input_paths(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths);

/// read_place_inputs' second half, on objects already read (the live server's cache reads them from
/// the API server's JSON): pools expanded, device set-up applied, quotas, PDBs and queues moved to
/// the input. Same errors; `nodes_given` names where the nodes were to come from in the UsageError
/// for none ("--snapshot s.yaml: no nodes (...)").
PlaceInputs place_inputs_from_objects(K8sObjects objects, const std::string& nodes_given);

}  // namespace gpufleet::io
