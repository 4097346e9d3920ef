// A cluster snapshot as a `gpufleet simulate` / `compare` / `plan` workload (`--snapshot FILE`): the
// pods that run or wait now become the workload's starting load, all arriving at time 0. The past
// pods (`--history CSV`) are not read here: they are an openb pod list, mapped by inputs/sim/
// openb_trace.h; cli/workload_source.cpp puts the two together. docs/simulate.md, "A cluster snapshot
// and its history", has the rules for users.
//
// Input: one file, `kubectl get pods -A -o json` (or `kubectl get nodes,pods -A -o json`, or the same
// as YAML): a List, PodList or any stream of objects. It is read by the Kubernetes reader
// (readers/k8s/k8s_yaml.h parse_k8s_text), so every Pod is converted, validated and reported exactly
// as `gpufleet place` reads it; this module adds only what a snapshot says beyond a pod's spec, read
// from the same YAML/JSON tree (readers/formats/yaml_field.h) with positions:
//  - status.phase (core/v1 PodPhase). Running, Pending and Unknown pods are the load (Unknown: the
//    node lost contact, the pod still exists; a warning counts them); an absent phase is Pending, as
//    the API server sets it at creation. Succeeded and Failed pods are history, not load: skipped, and
//    one warning says how many. Any other value is an error at status.phase.
//  - metadata.ownerReferences: the pod's controller is the entry with `controller: true`
//    (apimachinery metav1.GetControllerOf); each entry needs a kind and a name.
//
// What each live pod becomes (a sim::WorkloadSpec, inputs/sim/workload.h), by its controller's kind:
//  - ReplicaSet, StatefulSet, ReplicationController, Deployment: a service (runs to the horizon; an
//    interrupted replica is recreated, as the controller does). Any other controller kind (a custom
//    resource's operator) too, with one warning per kind.
//  - Job, or no controller (a bare pod): a job of options.job_seconds (its remaining duration is not in
//    the snapshot; the caller chooses: --snapshot-job-seconds, else the horizon), without checkpoints,
//    restarted from the beginning when interrupted.
//  - DaemonSet: left out (the pools' DaemonSets model them: docs/node-pools.md), one warning.
//  - Node (a static pod's mirror, e.g. a control-plane component): left out, one warning.
// Requests: the reader's, i.e. kube's effective pod request (k8s.io/component-helpers/resource
// PodRequests, formerly kubernetes pkg/api/v1/resource/helpers.go): containers summed (with sidecar
// init containers), the max with each ordinary init container, plus spec.overhead; a resource with a
// limit and no request requests the limit. cpu -> cpu_milli, memory -> memory_bytes, nvidia.com/gpu N
// -> num_gpu N with gpu_milli 1000, nvidia.com/mig-<profile> N -> mig_requests. Priority: the value of
// the PriorityClass named by spec.priorityClassName when the file has that class (a spec.priority
// that differs, possible only if the class was deleted and made again since the pod's admission, gets
// a warning); else the reader's, as the Priority admission plugin sets it: spec.priority (which the
// API server wrote from the class at admission), else a built-in system class's value, else the
// file's globalDefault class, else 0. Namespace: the pod's.
// Constraints: spec.nodeSelector and spec.tolerations as they are. Required node affinity becomes the
// item's constraints where WorkloadSpec expresses it exactly: one nodeSelectorTerm whose
// matchExpressions are `gpufleet.io/pool In [...]` (-> pools), `karpenter.sh/capacity-type NotIn
// [spot]` / `In [spot]` (-> capacity on-demand / spot), or `<key> In [<one value>]` (-> a nodeSelector
// entry: the same test). A pod without a capacity-type requirement may run on any capacity, as in kube
// (CapacityPreference::kSpotOk; a nodeSelector on karpenter.sh/capacity-type is kept as one).
//
// Read but not modelled, each with one warning naming it, how many pods carry it and what happens
// instead (never silently dropped): spec.nodeName (the pods are placed anew on the simulated pools),
// requirements of required node affinity that the item cannot express (the pod is placed without
// them), preferred node affinity, pod affinity and anti-affinity, topology spread constraints,
// nvidia.com/gpu.shared requests, preemptionPolicy Never, metadata.deletionTimestamp (a terminating
// pod counts as live), the label kueue.x-k8s.io/queue-name (the pod is not queued to Kueue: the
// snapshot has no Kueue objects); the reader's own warnings (e.g. resources
// such as ephemeral-storage) are passed on. Objects other than Pods and PriorityClasses in the file
// (Nodes, controllers, DaemonSets, quotas, budgets, configs, Kueue objects) are not load: one warning
// per kind (a controller's template would count its pods twice: its Pods are in the snapshot).
//
// Grouping. The live service pods of one controller (same namespace, controller kind and name) whose
// items would be equal but for the name become one service with that many replicas, named after the
// controller: the simulator schedules each replica of a service on its own and recreates an
// interrupted one, as it does a one-replica service, so only the pods' names differ. Job pods are never grouped (a job's pods form a gang, which one
// pod per item is not). An item is named after its pod (or controller); when that name is taken in
// the snapshot (two namespaces), "<namespace>.<name>". Items are in the order of their first pod.
//
// Limits: the Kubernetes reader's (readers/formats/input_limits.h): YamlLimits (a file of at most
// 64 MiB, 100,000 documents, 4,000,000 YAML nodes) and ObjectLimits (at most 150,000 pods, 100,000
// Nodes). A pod above the simulator's kMaxGpusPerPod GPUs, or with MIG devices of two profiles or
// together with nvidia.com/gpu, is an error (a simulated pod cannot express it), and so are more than
// sim::kMaxReplicasPerItem equal pods of one controller.
//
// Errors: InputError (exit status 2), one line with the file, line, column and field path, e.g.
// `pods.json:12:20: field 'items[1].status.phase': unknown phase 'Done' (...)`; the reader's errors as
// it reports them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/sim/workload.h"

namespace gpufleet::io {

struct SnapshotWorkloadOptions {
  /// Seconds each job (a Job's pod or a bare pod) runs from time 0: finite, > 0. The caller's rule:
  /// --snapshot-job-seconds, else the horizon (the job runs to the end).
  double job_seconds = 3600;
};

struct SnapshotWorkload {
  std::vector<sim::WorkloadSpec> items;      ///< arrival 0; services and jobs in the order of their first pod
  std::vector<std::string> live_pod_names;   ///< metadata.name of every pod kept, in file order
  int32_t live_pods = 0;                     ///< pods in the items (replicas counted)
  int32_t finished_pods = 0;                 ///< Succeeded or Failed: skipped
  int32_t left_out_pods = 0;                 ///< DaemonSet pods and static pods' mirrors
  std::vector<std::string> warnings;         ///< the reader's, then this module's
};

/// Converts one snapshot text; `source_name` names it in errors. Throws InputError, and
/// std::invalid_argument for options.job_seconds not finite or not above 0.
SnapshotWorkload parse_snapshot_workload_text(std::string_view text, const std::string& source_name,
                                              const SnapshotWorkloadOptions& options);

/// Reads `path` (a regular file of at most YamlLimits::max_file_bytes) and converts it. Throws InputError.
SnapshotWorkload read_snapshot_workload(const std::string& path, const SnapshotWorkloadOptions& options);

}  // namespace gpufleet::io
