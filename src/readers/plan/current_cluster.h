// Reader of `gpufleet plan --current FILE`: the cluster running today (inputs/plan/current_cluster.h),
// from what users have at hand. The file (or a folder of them) is read as readers/k8s/k8s_yaml.h reads
// Kubernetes inputs, so it may be:
//  - `kubectl get nodes -o json` (a v1 List of Nodes; NodeList and YAML work too): one entry per Node,
//    with its labels node.kubernetes.io/instance-type (else beta.kubernetes.io/instance-type),
//    topology.kubernetes.io/zone (else failure-domain.beta.kubernetes.io/zone) and the capacity type
//    karpenter.sh/capacity-type (on-demand, spot, reserved) or eks.amazonaws.com/capacityType
//    (ON_DEMAND, SPOT, CAPACITY_BLOCK); reserved and CAPACITY_BLOCK are on-demand nodes bought under a
//    commitment. No capacity-type label: on-demand (capacity_labelled false). Nodes carry no prices.
//  - a gpufleet node-pool file (kind NodePoolSet, docs/node-pools.md), with or without the simulator's
//    Autoscaling document (readers/sim/sim_pools.h; `plan --pools-out` writes such a file): one entry
//    per pool, its current `nodes`, instanceType, the zone and capacity-type labels as above (a label
//    wins over the Autoscaling document's capacityType), reservedNodes as committed, and its prices.
//    A Karpenter NodePool's offerings without nodes are left out: what it may launch is not a node.
// Pods and other objects in the file are not read (a warning counts the pods).
//
// Errors: InputError, as the Kubernetes and node-pool readers throw them (file, line, column, field),
// and at the label's value for a capacity type that is none of the above
// (`items[2].metadata.labels.karpenter.sh/capacity-type`); a file with no Node and no pool is
// an error at the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "inputs/plan/current_cluster.h"

namespace gpufleet::io {

/// Reads the current cluster from `path`; the reader's warnings (Kubernetes objects skipped or not
/// modelled, pods not read) are appended to `warnings`, one line each. Throws InputError.
plan::CurrentCluster read_current_cluster(const std::string& path, std::vector<std::string>& warnings);

/// The same from the text of one file named `source_name` (for tests and the fuzz target
/// fuzz/current_cluster_fuzz.cpp), within the YAML/JSON readers' limits (readers/formats/input_limits.h).
plan::CurrentCluster parse_current_cluster_text(std::string_view text, const std::string& source_name,
                                                std::vector<std::string>& warnings);

}  // namespace gpufleet::io
