// Reader for Kubernetes objects in YAML or JSON: Nodes, Pods and the pods of workload controllers,
// PriorityClasses, ResourceQuotas, and the NVIDIA device-plugin (time-slicing) and mig-parted configs.
//
// Input: files or directories. A file holds one or more YAML documents separated by `---`, or JSON
// (e.g. `kubectl get nodes -o json`); `kind: List` (and the API's `PodList`, `NodeList`, ...) is
// unpacked item by item. A directory contributes its *.yaml, *.yml and *.json files (not its
// subdirectories), in sorted name order.
//
// What each kind becomes:
//  - Node: name, labels, spec.taints, spec.unschedulable (cordoned) and status.allocatable (each resource falls back to
//    status.capacity): cpu -> cpu_milli, memory -> memory_mib, pods -> max_pods (110, kubelet's
//    default, when absent), nvidia.com/gpu -> gpu_count, label nvidia.com/gpu.product -> gpu_model
//    (raw). Other nvidia.com/* resources (nvidia.com/gpu.shared, nvidia.com/mig-<profile>) go to
//    K8sNodeExtras. A time-sliced node that advertises replicas as nvidia.com/gpu (GPU feature
//    discovery labels nvidia.com/gpu.replicas = R > 1 and nvidia.com/gpu.count = C, and the resource
//    equals R x C) gets gpu_count = C, and the advertised count is kept as extras["nvidia.com/gpu"].
//    The reader does not interpret GPU sharing further: readers/k8s/device_setup.h applies the configs and
//    the advertised MIG resources to the nodes, checks the product label against the GPU catalog
//    and uses K8sNodeSource to report positions.
//  - Pod, and one pod per replica of Deployment and ReplicaSet (spec.replicas, default 1), StatefulSet
//    (spec.replicas) and Job (spec.parallelism, default 1, at most spec.completions), named
//    <owner>-0 .. <owner>-(N-1); K8sObjects::pod_owners names the object each pod came from. spec.nodeName
//    (of a Pod or a template) is kept as Pod::node_name: bound to that node.
//    spec.topologySpreadConstraints -> PodConstraints::topology_spread_constraints, refused where the
//    API server refuses them (validateTopologySpreadConstraints: maxSkew and minDomains >= 1,
//    minDomains only with DoNotSchedule, whenUnsatisfiable DoNotSchedule or ScheduleAnyway,
//    topologyKey set, no repeated {topologyKey, whenUnsatisfiable}, node inclusion policies Honor or
//    Ignore, matchLabelKeys only with a labelSelector and none of its keys). The pods of a Deployment,
//    ReplicaSet or StatefulSet get its spec.selector as PodConstraints::default_spread_selector
//    (kube-scheduler's default selector, for PodTopologySpread's default constraints); Services and
//    ReplicationControllers are not read, so they add none.
//    A Pod's metadata.uid -> Pod::uid. A Pod with spec.nodeName: its device annotations
//    (gpufleet.io/gpu-index, gpufleet.io/gpu-shared-index, gpufleet.io/mig-devices, model/
//    device_annotations.h: the devices a bind chose) -> Pod::assigned_devices; a pod without
//    spec.nodeName holds no devices, and its annotations are not read. Requests as kube computes a pod's effective request: the sum over
//    containers (plus restartPolicy: Always init containers, i.e. sidecars), the max with each
//    ordinary init container, plus spec.overhead; a resource with a limit but no request requests
//    the limit. cpu -> cpu_milli, memory -> memory_mib, nvidia.com/gpu N -> num_gpu = N and
//    gpu_milli = 1000, nvidia.com/mig-<profile> N -> mig_requests {profile, N} (migStrategy mixed;
//    the profile must be one of a catalog model's, gpu_catalog.h), nvidia.com/gpu.shared N ->
//    shared_replicas = N; any other nvidia.com/* resource (a typo such as nvidia.com/gpus, a renamed
//    time-sliced MIG device nvidia.com/mig-1g.10gb.shared) is an error, since the pod would be placed
//    without it. Other resources (ephemeral-storage, hugepages-*, other vendors' extended resources)
//    are validated and not modelled: one warning per resource name. QoS class as kube derives it
//    (BestEffort -> QosClass::kBE). Priority: spec.priority when given, else the value of the
//    PriorityClass named by priorityClassName (from the inputs, or the built-in system-cluster-critical
//    and system-node-critical), else the globalDefault class among the inputs, else 0. The pod's
//    preemptionPolicy, when unset, comes from its class.
//  - LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, kubernetes-sigs/lws api/leaderworkerset/v1/
//    leaderworkerset_types.go): spec.replicas (default 1, 0..1,000,000) groups of
//    spec.leaderWorkerTemplate.size pods (default 1, >= 1; replicas x size <= MaxInt32, the webhook's
//    bounds): the leader <lws>-<g> from leaderTemplate (absent: workerTemplate), the workers
//    <lws>-<g>-<w>, w = 1..size-1, from workerTemplate, owner kind "LeaderWorkerSet". Each pod gets
//    lws's labels (model/leader_worker_set.h: name, group-index, worker-index, group-key = hex SHA-1
//    of "<namespace>/<leader name>") and kPodGroupLabel <lws>-<g>; each group is a PodGroup of that
//    name with minMember = size (the gang lws's Volcano scheduler provider creates,
//    pkg/schedulerprovider/volcano_provider.go). The metadata annotation
//    leaderworkerset.sigs.k8s.io/exclusive-topology: <key> gives every pod the two required terms
//    lws's pod webhook injects (pkg/webhooks/pod_webhook.go SetExclusiveAffinities): pod affinity to
//    group-key In [own key] and anti-affinity to group-key Exists + NotIn [own key], topologyKey <key>.
//    Checked: restartPolicy, startupPolicy and subGroupPolicy enums, subGroupSize dividing size or
//    size - 1, an empty exclusive key, subgroup-exclusive-topology without subGroupSize. Warned
//    about (not modelled): startupPolicy LeaderReady, rolloutStrategy, networkConfig, subGroupPolicy,
//    subgroup-exclusive-topology, volumeClaimTemplates, persistentVolumeClaimRetentionPolicy, the
//    label kueue.x-k8s.io/queue-name, a template's own kPodGroupLabel (replaced) and unknown keys of
//    spec and spec.leaderWorkerTemplate. Another apiVersion's LeaderWorkerSet is skipped.
//  - DaemonSet (apps/v1) -> `daemon_sets` (model/daemon_set.h): its pod template read as a pod's,
//    spec.template.spec.hostNetwork, and the daemon controller's default tolerations added
//    (add_daemon_pod_tolerations). No pods here: they are made per node once every node is known
//    (sched/daemon_set.h; `place` and `simulate` do it). Errors: a missing spec.template or
//    spec.selector, an empty selector, a selector that does not select the template's labels (as
//    the API server refuses them), a duplicate (namespace, name).
//  - PriorityClass: the plain data below. ResourceQuota: admit::ResourceQuotaSpec
//    (admit/resource_quota.h), the known spec.hard entries in gpufleet's units. A quota's spec.scopes and
//    spec.scopeSelector scopeNames must be Kubernetes scopes (Terminating, NotTerminating, BestEffort,
//    NotBestEffort, PriorityClass, CrossNamespacePodAffinity, VolumeAttributesClass). Its spec.hard
//    takes any resource name, as Kubernetes does; one that admission does not charge a pod for
//    (admit::charged_from_pod, e.g. a typo such as requests.cpuu) gets one warning per name.
//  - PodDisruptionBudget (policy/v1): model/pod_disruption_budget.h. spec.selector (absent = selects
//    nothing), exactly one of spec.minAvailable / spec.maxUnavailable, each a non-negative integer or
//    a percentage "N%" with N in 0..100, and spec.unhealthyPodEvictionPolicy (IfHealthyBudget or
//    AlwaysAllow). Unlike the API server, a PDB with neither field is refused (kube would keep its
//    disruptionsAllowed at 0 forever). A duplicate (namespace, name) is an error.
//  - ConfigMap: each data entry that is a device-plugin config (`version` + `sharing`/`flags`) or a
//    mig-parted config (`version` + `mig-configs`) becomes a TimeSlicingConfig / MigPartedConfig.
//    The same configs are accepted as standalone documents without `kind`.
//  - NodePoolSet (apiVersion gpufleet.io/...): the file is listed in pool_files for readers/k8s/pool_file.h.
//  - Kueue (readers/k8s/kueue_yaml.h has the fields read and the errors): kueue.x-k8s.io ResourceFlavor,
//    ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Topology and config.kueue.x-k8s.io
//    Configuration -> `kueue` (queue::KueueObjects, quotas in queue::amount_unit_scale units). A Job,
//    jobset.x-k8s.io JobSet or kubeflow.org PyTorchJob with the label kueue.x-k8s.io/queue-name ->
//    one queue::Workload in `queued_workloads` (pod sets with parsed pod templates, topology requests
//    from the kueue.x-k8s.io/podset-*-topology annotations), and NOT pods. scheduling.x-k8s.io and
//    scheduling.volcano.sh PodGroup -> `pod_groups` (model/pod_group.h); a pod with Volcano's
//    annotation scheduling.k8s.io/group-name gets the label scheduling.x-k8s.io/pod-group.
//  - Anything else (and a ConfigMap holding neither config) is skipped, counted in skipped_kinds, and
//    reported by one warning per kind. Empty documents are ignored; a file with no other document
//    gets a warning ("no objects"). A document without kind that is not one of the two configs is an
//    error.
//
// Errors throw InputError with the file, the 1-based line and column of the offending YAML node
// (or of the nearest enclosing node when a field is missing) and the field path, e.g.
// `spec.template.spec.containers[0].resources.requests.memory` (`items[3].` prefixed inside a List).
// Errors in a config embedded in a ConfigMap's literal block (`|`) point into the block; in other
// scalar styles they point at the data value. Checked: YAML syntax; malformed, negative or absurd
// quantities; a non-integer GPU or other device count; a pod's nvidia.com/* resource that is not
// modelled (above); an unknown key in a container's `resources` (requests, limits, claims; claims
// are not modelled: a warning) and a container key `resource`; nvidia.com/* requests differing from
// their limits; more than kMaxGpusPerNode GPUs per node; a pod's nvidia.com/mig-<profile> with a
// profile no catalog model has (at the request or limit), more than kMaxGpusPerNode x
// kMigMaxInstances MIG devices of a profile, or more than 1,000,000 nvidia.com/gpu or
// nvidia.com/gpu.shared per pod (Kubernetes has no per-pod GPU limit: kMaxGpusPerPod is the openb
// trace's, not applied here); a malformed device annotation of a Pod with spec.nodeName (at
// metadata.annotations.<key>: parse_device_annotations's message); a missing
// metadata.name, cpu or memory of a node, or pod container; unknown operators and effects; a
// duplicate node, pod (per namespace) or PriorityClass; a PriorityClass value above 1000000000 or a
// name starting with "system-" other than the built-in classes with their values (as the API server
// validates them); two globalDefault PriorityClasses; an unknown
// priorityClassName; a wrong YAML type for any field read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "readers/formats/input_limits.h"
#include "readers/k8s/k8s_objects.h"

namespace gpufleet::io {

/// Reads files and directories (see above). The limits of readers/formats/input_limits.h apply: YamlLimits per
/// file, ObjectLimits (most Nodes, most pods counting replicas) across all of them. Throws InputError.
K8sObjects read_k8s_inputs(const std::vector<std::string>& paths);

/// Whether read_k8s_inputs reads a file of this name from a directory it is given: *.yaml, *.yml
/// or *.json (directly in it, not in subdirectories).
bool is_k8s_input_name(std::string_view file_name);

/// The Kubernetes input files that `paths` name, in order: a file as given; a folder's regular files
/// whose names pass is_k8s_input_name, sorted by name. Throws InputError for a missing path, an entry
/// that cannot be read (e.g. a symlink loop), a folder that cannot be listed or that has no such file.
std::vector<std::string> k8s_input_files(const std::vector<std::string>& paths);

/// Parses one YAML/JSON text; `source_name` names it in errors. Throws InputError.
K8sObjects parse_k8s_text(std::string_view text, const std::string& source_name, const ObjectLimits& limits = kObjectLimits);

}  // namespace gpufleet::io
