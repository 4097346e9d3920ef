// GPU sharing set-up of Kubernetes nodes: applies the NVIDIA device-plugin (time-slicing, MPS) and
// mig-parted configs read by readers/k8s/k8s_yaml.h to Nodes, as the GPU Operator's device plugin and MIG
// manager would, and checks each node's GPU model against the catalog. Sources: gpu-sharing.md s.1-3
// and 5 ([dp], [parted], [gfd]).
//
// For each node that has GPUs (gpu_count > 0, a nvidia.com/gpu.count label above 0, or advertised
// MIG / nvidia.com/gpu.shared resources), in this order:
//
// 1. GPU model. The `nvidia.com/gpu.product` label (else Node::gpu_model), without GPU feature
//    discovery's "-SHARED" suffix or single-strategy "-MIG-<profile>" suffix, must name a catalog
//    model (find_gpu_model); Node::gpu_model becomes the catalog's canonical name (e.g.
//    "NVIDIA-H100-80GB-HBM3" -> "H100-80GB"). An unknown product is an InputError at the label's
//    value (K8sNodeSource). A node with GPUs and no product at all keeps an empty model; it may not
//    use MIG.
// 2. GPU count. Nodes read from YAML (those with a K8sNodeSource): the GPUs advertised without MIG
//    (nvidia.com/gpu, or time-slicing replicas converted back to GPUs as in 4); when the node uses
//    MIG (a mig-parted config applies, or it advertises MIG devices), plus its MIG GPUs: up to the
//    `nvidia.com/gpu.count` label when present (GFD sets it to the physical count under migStrategy
//    none and mixed; an integer in [0, kMaxGpusPerNode], not below the GPUs without MIG), else the
//    fewest GPUs that hold the advertised MIG devices. Without MIG the label is only validated: the
//    allocatable count wins (e.g. a GPU marked unhealthy). Expanded pool nodes (no source, or a pool
//    source) keep theirs.
// 3. MIG (Node::mig), device plugin migStrategy mixed:
//    a. The label `nvidia.com/mig.config=<name>` selects the mig-parted config of that name among
//       all MigPartedConfigs read (a name defined twice is an InputError). Each GPU index takes the
//       last group of the config that matches it: `devices: all` or a list holding the index
//       (an index at or beyond the node's GPU count is an InputError), and a `device-filter` that is
//       empty or lists one of the model's PCI device ids (gpu-sharing.md s.1: A100-40GB 0x20B0/0x20B1,
//       A100-80GB 0x20B2/0x20B5, H100-80GB 0x2330/0x2331, H200 0x2335/0x233B, B200 0x2901, each
//       followed by 10DE; other catalog models have none, so a filtered group never matches them).
//       A GPU no group matches, or a group with `mig-enabled: false`, has MIG disabled. A group's
//       `mig-devices` are placed with layout_for_counts (the geometry rules of mig.h); a profile the
//       model lacks, a set that does not fit one GPU, or MIG on a model that is not MIG-capable is an
//       InputError at the config (file, line of the config) naming the config, the node, the model
//       and the profiles. When the node also advertises MIG devices and their counts differ from the
//       config's, a warning says so (the MIG manager may not have applied the config yet) and the
//       config wins.
//    b. A label naming a config that is not among the inputs is an InputError at the label, unless
//       the inputs hold no mig-parted config at all: then a warning, and c/d apply.
//    c. Without a config, a node that already has MIG (expanded from a pool) keeps it.
//    d. Otherwise a node that advertises nvidia.com/mig-<profile> counts (K8sNodeExtras) gets them
//       spread over its MIG GPUs: first-fit decreasing (largest profile first, each instance on the
//       lowest GPU whose set still fits layout_for_counts), then layout_for_counts per GPU. The MIG
//       GPUs follow the advertised nvidia.com/gpu ones (indices gpu_count ..): with a
//       nvidia.com/gpu.count label, all the remaining GPUs; without, the fewest that hold the devices.
//       Devices that do not fit (or a model that is not MIG-capable, or a profile the model lacks) are
//       an InputError at the node's name (the product label for the model).
// 4. Time-slicing (Node::time_slicing), for the GPUs without MIG:
//    a. The label `nvidia.com/device-plugin.config=<key>` selects the device-plugin config whose
//       ConfigMap data key is <key> (two with that key is an InputError). Without the label, the
//       default: the config with data key `default` (like the GPU Operator's
//       devicePlugin.config.default), else the only device-plugin config of the inputs when there is
//       exactly one (the device plugin's own rule for a one-entry ConfigMap), else none.
//    b. A label naming a key that is not among the inputs is an InputError at the label, unless the
//       inputs hold no device-plugin config at all: then a warning, and d applies.
//    c. Applying a config: its sharing.timeSlicing resource `nvidia.com/gpu` gives the replicas R,
//       renamed when the entry has `rename: nvidia.com/gpu.shared` or the config renameByDefault,
//       and failRequestsGreaterThanOne; a config without that resource turns time-slicing off (it
//       replaces what a pool set; a different replica count gives a warning). InputErrors at the
//       config: a rename to any other name, or a `devices` list (time-slicing a subset of the GPUs
//       is not modelled). Warnings: resources of MIG devices (not modelled, ignored); a migStrategy
//       other than mixed on a node with MIG (gpufleet models mixed).
//    d. Without a config, a node keeps the time-slicing its pool set; otherwise GFD's labels
//       `nvidia.com/gpu.replicas` = R > 1 with `nvidia.com/gpu.count` make it time-sliced R ways,
//       renamed when it advertises nvidia.com/gpu.shared (failRequestsGreaterThanOne is not visible
//       on a node and is taken as false).
//    Without a nvidia.com/gpu.count label the advertised counts are converted to GPUs: a node
//    time-sliced without renaming advertises R x its GPUs as nvidia.com/gpu, so its GPUs without MIG
//    are that count / R; a renamed one advertises them only as nvidia.com/gpu.shared, so it gets
//    gpu.shared / R GPUs more (an InputError at the node when R does not divide the count).
//    e. MPS (sharing.mps, TimeSlicing::strategy kMps) takes the same steps with the config's
//       sharing.mps section (fields at sharing.mps...); without a config, GFD's label
//       nvidia.com/gpu.sharing-strategy=mps makes the replicas of d MPS replicas (failRequestsGreaterThanOne
//       then true, the device plugin's MPS default). MPS on a node with a MIG-enabled GPU is an
//       InputError at the config's sharing.mps (else at the node): "sharing using MPS is not supported
//       for MIG devices" (k8s-device-plugin cmd/nvidia-device-plugin/plugin-manager getMPSOptions).
//       A nvidia.com/gpu.replicas or nvidia.com/gpu.sharing-strategy label that disagrees with the
//       applied config gives a warning (GFD relabels after the config changes); the config wins.
// 5. Advertised count versus labels. For a node read from YAML without MIG and with a
//    nvidia.com/gpu.count label G: the sharing set-up above gives R replicas per GPU (1 without
//    sharing), so the device plugin should advertise G x R of nvidia.com/gpu (nvidia.com/gpu.shared
//    when renamed). When the node's status.allocatable says otherwise (a GPU marked unhealthy, a
//    config not yet applied, stale labels), it is reported (DeviceSetupReport::count_mismatches and a
//    warning naming the node and both numbers) and placement uses the advertised number, as
//    kube-scheduler would: the node gets advertised / R GPUs (an advertised count that R does not
//    divide stays the InputError of 4).
// Labels are not rewritten (GFD would update nvidia.com/gpu.replicas and the product's -SHARED).
//
// The result is valid for ClusterState (its constructor re-checks every layout).
#pragma once

#include <string>
#include <vector>

#include "readers/k8s/k8s_yaml.h"
#include "model/node.h"

namespace gpufleet::io {

/// A Kubernetes Node whose advertised GPU resource (status.allocatable) is not what its GPU feature
/// discovery labels and its sharing set-up imply (rule 5). Placement uses the advertised number, as
/// kube-scheduler does.
struct NodeCountMismatch {
  std::string node;
  std::string resource;        ///< nvidia.com/gpu, or nvidia.com/gpu.shared when the replicas are renamed
  int64_t advertised = 0;      ///< the node's status.allocatable of `resource`
  int64_t expected = 0;        ///< gpus x replicas
  int32_t gpus = 0;            ///< the nvidia.com/gpu.count label (GPUs without MIG)
  int32_t replicas = 1;        ///< per GPU, from the applied sharing set-up (1 without sharing)
  std::string strategy;        ///< "none", "time-slicing" or "mps"
  std::string message;         ///< the warning line, naming the node and both numbers
};

/// What apply_device_setup reports besides changing the nodes.
struct DeviceSetupReport {
  /// One line per kind of event, naming the nodes concerned (the first few and how many more).
  /// Holds each count mismatch's message too.
  std::vector<std::string> warnings;
  /// Rule 5, one per node, in node order.
  std::vector<NodeCountMismatch> count_mismatches;
};

/// Applies the rules above to `nodes`, in place. `advertised` (a node's extended resources, matched
/// by name) and `source_per_node` (positions: empty, or one per node in node order, null for none;
/// the nodes of one pool may share their pool's source) come from the readers. A node without a
/// source, or whose source is its pool's (K8sNodeSource::pool, readers/k8s/pool_file.h), is set up as an
/// expanded pool node; a pool source puts its errors at the pool's label in the pool file (e.g. field
/// `pools[0].labels.nvidia.com/mig.config`), else at the pool's name; without a source they carry no
/// position. Throws InputError; std::invalid_argument if `source_per_node` is neither empty nor one
/// per node.
DeviceSetupReport apply_device_setup(std::vector<Node>& nodes, const std::vector<TimeSlicingConfig>& time_slicing_configs,
                                     const std::vector<MigPartedConfig>& mig_parted_configs,
                                     const std::vector<K8sNodeExtras>& advertised = {},
                                     const std::vector<const K8sNodeSource*>& source_per_node = {});

/// apply_device_setup(objects.nodes, objects.time_slicing_configs, objects.mig_parted_configs,
/// objects.node_extras, objects.node_sources).
DeviceSetupReport apply_device_setup(K8sObjects& objects);

}  // namespace gpufleet::io
