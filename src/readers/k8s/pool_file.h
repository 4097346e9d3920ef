// Reader for node-pool files (YAML or JSON): the node groups of a cluster, their size bounds and prices.
// Full description with examples: docs/node-pools.md.
//
// Format (apiVersion gpufleet.io/v1, kind NodePoolSet):
//
//   apiVersion: gpufleet.io/v1
//   kind: NodePoolSet
//   pools:
//   - name: inference-l4          # required; DNS label (a-z, 0-9, '-'), unique in the file
//     instanceType: g6.xlarge     # optional; becomes node.kubernetes.io/instance-type
//     gpu: {model: L4, count: 1}  # optional (absent = CPU-only pool); model: catalog name or product
//                                 # label (gpu_catalog.h), count: 1..16 GPUs per node
//     cpu: "4"                    # required; allocatable CPU per node, Kubernetes quantity
//     memory: 16Gi                # required; allocatable memory per node, Kubernetes quantity
//     nodes: 4                    # required; current node count, integer in [0, 100000]
//     min: 0                      # optional; default = nodes
//     max: 10                     # optional; default = nodes; min <= nodes <= max <= 100000; the
//                                 # max of all pools of the file sum to at most 200000
//     labels: {workload-type: inference}   # optional; string -> string
//     taints: [{key: workload-type, value: inference, effect: NoSchedule}]   # optional; value optional
//     prices: {onDemand: 0.80, spot: 0.35, reserved: 0.50}   # USD per node-hour; onDemand required
//     mig: {"3g.40gb": 1, "4g.40gb": 1}   # optional; MIG devices per GPU (mig-parted mig-devices)
//     timeSlicing: {replicas: 4}          # optional; device-plugin time-slicing replicas per GPU, >= 1
//     mps: {replicas: 4}                  # optional; device-plugin MPS replicas per GPU (1..1024), each
//                                 # client limited to 1/replicas of the GPU's memory and SMs; not
//                                 # with timeSlicing or mig (errors at mps)
//     topology: {example.com/rack: 8, nvidia.com/gpu.clique: 4}   # optional; label -> nodes per
//                                 # domain (1..100000): node i gets the value <name>-<i / size>
//
// A file may hold several YAML documents (`---`). Documents with kind NodePoolSet are read, in order;
// other documents (e.g. the mig-parted ConfigMap that goes with a MIG pool) are ignored, except that
// any other kind under apiVersion gpufleet.io/... is an error, and so is a document of kind
// Autoscaling or under sim.gpufleet.io/... whose apiVersion is not sim.gpufleet.io/v1 (the
// simulator's settings, readers/sim/sim_pools.h: skipped silently, they would leave the defaults in force);
// the error is at apiVersion, or at kind when apiVersion is missing. A file without a NodePoolSet
// is an error. Every mapping rejects unknown keys (to catch typos such as `instancetype`).
//
// Errors throw InputError with the file, the 1-based line and column of the offending YAML node (of
// the enclosing mapping for a missing field) and the field path, e.g. `pools[1].gpu.model`. Checked:
// YAML syntax; wrong YAML types; unknown keys; missing required fields; bad apiVersion; unknown GPU
// model; malformed or negative quantities; negative or non-integer counts; counts above
// kMaxPoolNodes; min > max; nodes outside [min, max]; pools whose max sum above kMaxTotalPoolNodes; negative or non-numeric prices; MIG on a model that is not MIG-capable, an unknown MIG
// profile or a layout that does not fit one GPU (layout_for_counts); replicas < 1; unknown taint
// effects; labels that gpufleet sets itself (see expand_pool); duplicate pool names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readers/k8s/k8s_yaml.h"
#include "model/node_pool.h"

namespace gpufleet::io {

/// The most nodes a pool may have (nodes, min and max) and that a file's pools may have together
/// (the sum of their max). `gpufleet simulate` keeps every pool's nodes up to max from the start and
/// visits them on every autoscaler tick, so these bound its time and memory; the total is double the
/// largest pool.
inline constexpr int64_t kMaxPoolNodes = 100'000;
inline constexpr int64_t kMaxTotalPoolNodes = 200'000;

/// Reads a pool file (see above). Throws InputError. When `sources` is given, it receives one entry
/// per pool, parallel to the result: node = the pool's name, name = the position of `pools[i].name`,
/// labels = the positions of its `labels` values, pool = true; for errors found after reading (a node
/// name two pools share, a device set-up error of an expanded node: readers/k8s/place_inputs.h).
std::vector<NodePool> read_pool_file(const std::string& path, std::vector<K8sNodeSource>* sources = nullptr);

/// Parses pool-file text; `source_name` names it in errors. Throws InputError. `sources` as above.
std::vector<NodePool> parse_pool_text(std::string_view text, const std::string& source_name,
                                      std::vector<K8sNodeSource>* sources = nullptr);

}  // namespace gpufleet::io
