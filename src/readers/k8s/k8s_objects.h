// What the Kubernetes reader (readers/k8s/k8s_yaml.h) builds: Nodes and Pods with where each came
// from, PriorityClasses, ResourceQuotas, PodDisruptionBudgets, the NVIDIA device-plugin and mig-parted
// configs, Kueue's objects and queued jobs, pod groups, and the warnings. Plain data; the formats and
// their rules are in the reader's header.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admit/resource_quota.h"
#include "readers/formats/input_limits.h"
#include "model/dra.h"
#include "model/daemon_set.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_disruption_budget.h"
#include "model/pod_group.h"
#include "model/scheduling_constraints.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"

namespace gpufleet::io {

/// scheduling.k8s.io/v1 PriorityClass.
struct PriorityClassSpec {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy = "PreemptLowerPriority";  ///< or "Never"
};

/// Where an embedded config came from: a ConfigMap data entry, or a standalone document.
struct ConfigOrigin {
  std::string file;
  int line = 0;                   ///< 1-based line of the config (the data value, or the document)
  std::string configmap_namespace;  ///< empty for a standalone document
  std::string configmap_name;       ///< empty for a standalone document
  std::string data_key;             ///< the ConfigMap data key, e.g. "any" or "tesla-t4"; empty if standalone
};

/// One sharing.timeSlicing.resources[] (or sharing.mps.resources[]) entry of an NVIDIA device-plugin config.
struct TimeSlicingResource {
  std::string name;                  ///< e.g. nvidia.com/gpu
  int32_t replicas = 1;              ///< >= 1
  std::string rename;                ///< e.g. nvidia.com/gpu.shared; empty = none
  std::vector<std::string> devices;  ///< GPU indices / UUIDs; empty = all
};

/// An NVIDIA k8s-device-plugin config (version v1). `resources` is empty when it has no sharing.
/// With `sharing.mps` present, strategy is kMps and the other fields come from sharing.mps (a config
/// with both sharing.mps and sharing.timeSlicing resources is an InputError at sharing.mps: the two
/// are mutually exclusive); else from sharing.timeSlicing.
struct TimeSlicingConfig {
  ConfigOrigin origin;
  std::string mig_strategy;  ///< flags.migStrategy (none, single, mixed); empty when absent
  GpuSharingStrategy strategy = GpuSharingStrategy::kTimeSlicing;
  bool rename_by_default = false;
  /// Default false under time-slicing, true under MPS (the device plugin's defaults).
  bool fail_requests_greater_than_one = false;
  std::vector<TimeSlicingResource> resources;
};

/// One entry of a mig-parted config's list: which devices, MIG on/off, and the MIG devices per GPU.
struct MigDeviceGroup {
  bool all_devices = false;          ///< devices: all
  std::vector<int32_t> devices;      ///< devices: [0, 1, ...] (empty when all_devices)
  std::vector<std::string> device_filter;  ///< device-filter (PCI device IDs), empty = any
  bool mig_enabled = false;
  std::map<std::string, int32_t> mig_devices;  ///< profile (e.g. "1g.10gb") -> count per GPU
};

struct MigConfig {
  std::string name;  ///< e.g. "all-1g.10gb"
  std::vector<MigDeviceGroup> groups;
};

/// An NVIDIA mig-parted config (version v1); `configs` in document order.
struct MigPartedConfig {
  ConfigOrigin origin;
  std::vector<MigConfig> configs;
};

/// Extended resources of a node that the Node model does not carry (allocatable, else capacity).
struct K8sNodeExtras {
  std::string node;
  std::map<std::string, int64_t> extended;  ///< e.g. nvidia.com/mig-1g.10gb -> 14, nvidia.com/gpu.shared -> 40
};

/// Where something was read: file, 1-based line and column (0 = unknown) and field path, as InputError
/// reports them.
struct SourcePosition {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;  ///< e.g. "metadata.labels.nvidia.com/gpu.product" ("items[2]." prefixed in a List)
};

/// Where a Node was read, for errors found after reading (readers/k8s/device_setup.h). A node expanded from
/// a node pool (readers/k8s/pool_file.h) has its pool's positions instead: `name` is the pool's name and
/// `labels` its `labels` entries, in the pool file, and `pool` is set.
struct K8sNodeSource {
  std::string node;
  SourcePosition name;                           ///< metadata.name (pools[i].name for a pool node)
  std::map<std::string, SourcePosition> labels;  ///< label key -> position of its value
  bool pool = false;                             ///< expanded from a node pool, not read as a Node
  SourcePosition max_nodes;                      ///< a pool's `max` (else `nodes`): its most nodes
};

/// Extended resources a pod requests that the Pod model does not carry (effective request). The
/// reader leaves K8sObjects::pod_extras empty: it rejects every nvidia.com/* resource it does not model
/// and only warns about the others.
struct K8sPodExtras {
  std::string pod;
  std::string namespace_name;
  std::map<std::string, int64_t> extended;  ///< e.g. nvidia.com/gpu.shared -> 1
};

/// A field read but not modelled, over every object that carries it: said once, at the first place,
/// with what gpufleet does instead (also a line of K8sObjects::warnings).
struct NotModelled {
  std::string what;         ///< e.g. "topologySpreadConstraints", "scheduler 'kai-scheduler'"
  int objects = 0;          ///< how many objects carry it
  SourcePosition first;     ///< where it first appears
  std::string consequence;  ///< e.g. "the pod is placed as kube's default-scheduler would place it"
};

/// The object a pod was read from: a Pod itself (kind "Pod", its own name) or the workload
/// controller that makes it (kind "Deployment", "ReplicaSet", "StatefulSet" or "Job", the
/// controller's metadata.name; the pod is in the controller's namespace).
struct PodOwner {
  std::string kind;
  std::string name;
};

/// Where a pod's spec.resourceClaims[] entry names a ResourceClaim (claim_name) or a
/// ResourceClaimTemplate (template_name) in namespace_name, for readers/k8s/dra_yaml.h
/// check_dra_claim_references. One per pod template read (not per replica).
struct DraClaimReference {
  std::string namespace_name;
  std::string claim_name;
  std::string template_name;
  SourcePosition at;  ///< the resourceClaimName / resourceClaimTemplateName value
};

struct K8sObjects {
  std::vector<Node> nodes;
  std::vector<Pod> pods;  ///< in order of appearance (the creation order)
  std::vector<PodOwner> pod_owners;  ///< one per pod, parallel to pods
  /// apps/v1 DaemonSets, in order of appearance: templates, expanded per node once the nodes are
  /// known (sched/daemon_set.h); their pods are not in `pods`.
  std::vector<DaemonSet> daemon_sets;
  std::vector<SourcePosition> daemon_set_sources;  ///< metadata.name of each, parallel to daemon_sets
  std::vector<PriorityClassSpec> priority_classes;
  std::vector<admit::ResourceQuotaSpec> quotas;
  std::vector<PodDisruptionBudget> pod_disruption_budgets;
  std::vector<TimeSlicingConfig> time_slicing_configs;
  std::vector<MigPartedConfig> mig_parted_configs;
  std::vector<K8sNodeExtras> node_extras;  ///< only nodes with extended resources, in node order
  std::vector<K8sNodeSource> node_sources;  ///< one per node, in node order
  std::vector<K8sPodExtras> pod_extras;    ///< empty (see K8sPodExtras)
  /// Files holding a gpufleet NodePoolSet (apiVersion gpufleet.io/...), for readers/k8s/pool_file.h to read;
  /// those documents are not otherwise read here, nor counted as skipped.
  std::vector<std::string> pool_files;
  queue::KueueObjects kueue;  ///< Kueue's objects and Configuration (defaults when absent)
  /// Jobs queued to Kueue (label kueue.x-k8s.io/queue-name), in order of appearance; not in `pods`.
  std::vector<queue::Workload> queued_workloads;
  std::vector<PodGroup> pod_groups;  ///< gangs, in order of appearance
  /// Dynamic Resource Allocation objects (readers/k8s/dra_yaml.h): slices, classes, claims, templates.
  DraCatalog dra;
  std::vector<DraClaimReference> dra_claim_references;  ///< every pod template's, in input order
  std::map<std::string, int> skipped_kinds;  ///< kind -> objects skipped
  /// A simulator settings document (sim.gpufleet.io/v1 Autoscaling, readers/sim/sim_pools.h) names the
  /// ExtendedResourceToleration admission plugin in its admissionPlugins (the rest of that document is
  /// the simulator's: counted as skipped). readers/k8s/place_inputs.h applies it to the pods.
  bool extended_resource_toleration = false;
  std::vector<NotModelled> not_modelled;      ///< in order of first appearance
  std::vector<std::string> warnings;         ///< one per file without objects, per skipped kind, per field
                                             ///< not modelled and per unenforced quota resource
};

}  // namespace gpufleet::io
