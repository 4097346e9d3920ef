// Reader of the NodeResourceTopology object (NRT) that the NFD topology-updater (and the
// resource-topology-exporter) publish per node: apiVersion topology.node.k8s.io/v1alpha2 (or
// v1alpha1), kind NodeResourceTopology, API github.com/k8stopologyawareschedwg/noderesourcetopology-api
// pkg/apis/topology/v1alpha2/types.go. kubernetes-sigs/scheduler-plugins pkg/noderesourcetopology
// schedules on it; gpufleet reads from it the GPUs' NUMA layout and the kubelet's Topology Manager
// settings of the node it names (model/node.h Node::gpu_numa_node, topology_manager_policy/_scope).
//
//   apiVersion: topology.node.k8s.io/v1alpha2
//   kind: NodeResourceTopology
//   metadata: {name: h1}                 # the Node's name
//   attributes:                          # scheduler-plugins nodeconfig/topologymanager.go
//     - {name: topologyManagerPolicy, value: single-numa-node}   # none | best-effort | restricted | single-numa-node
//     - {name: topologyManagerScope, value: pod}                 # container | pod
//   zones:
//     - name: node-0                     # type Node: one NUMA node, named node-<NUMA ID>
//       type: Node
//       resources:
//         - {name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: "3"}
//     - {name: node-1, type: Node, resources: [{name: nvidia.com/gpu, capacity: "4"}]}
//
// Meaning. GPU indices go to the zones of type Node in zone order: the first zone's nvidia.com/gpu
// capacity takes GPUs 0 .. c0-1, the next c0 .. c0+c1-1, and so on; each GPU's NUMA node is its
// zone's NUMA ID. `available` is ignored: what is free follows from the pods gpufleet places. Zones of
// other types and resources other than nvidia.com/gpu are read for shape only. Defaults as
// scheduler-plugins' TopologyManagerDefaults: policy none, scope container. The deprecated
// topologyPolicies list (v1alpha1: e.g. [SingleNUMANodePodLevel]) is read when the attributes do not
// set the policy; attributes override it, as upstream.
//
// Errors (InputError with file, line, column and field): a missing metadata.name; an apiVersion
// other than topology.node.k8s.io/v1alpha1 or v1alpha2; an attribute value that is not a policy or
// scope the kubelet knows (upstream ignores it; a typo here would silently disable the check); a
// zone of type Node whose name is not node-<ID> with ID in 0..kMaxNumaNodesPerNode-1, or whose ID
// repeats; more than kMaxNumaNodesPerNode zones of type Node; a GPU capacity that is not a whole
// number in 0..kMaxGpusPerNode. apply_node_resource_topologies adds: a second object for one node; a
// node whose nvidia.com/gpu count differs from the zones' total when that total is not 0 (no zone
// reporting nvidia.com/gpu means the GPUs have no NUMA affinity: the layout stays unknown). An object naming no Node among the
// inputs is only a warning (the topology-updater publishes one per node; the input may hold fewer
// Nodes). Limits: docs/input-limits.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/node.h"

namespace gpufleet::io {

namespace detail {
class Field;
}

/// One NodeResourceTopology object, as read (before it is matched to its Node).
struct NodeResourceTopologySpec {
  std::string node_name;  ///< metadata.name
  TopologyManagerPolicy policy = TopologyManagerPolicy::kNone;
  TopologyManagerScope scope = TopologyManagerScope::kContainer;
  std::vector<int8_t> gpu_numa_node;  ///< per GPU index, in zone order (see above)
  // Where the object is, for the errors of apply_node_resource_topologies.
  std::string file;
  int line = 0;
  int column = 0;
};

/// Reads one object whose kind is NodeResourceTopology (the Kubernetes reader's kind dispatch calls
/// it). Throws InputError.
NodeResourceTopologySpec read_node_resource_topology(const detail::Field& object);

/// Sets the NUMA layout and Topology Manager settings of each Node an object names. Throws
/// InputError (at the object) for a second object of one node and for a GPU total that differs from
/// the node's; appends a warning per object that names no node in `nodes`.
void apply_node_resource_topologies(const std::vector<NodeResourceTopologySpec>& topologies, std::vector<Node>& nodes,
                                    std::vector<std::string>& warnings);

}  // namespace gpufleet::io
