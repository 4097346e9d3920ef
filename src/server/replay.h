// `gpufleet serve --replay`: drives a live server over HTTP as kube-scheduler would, on a cluster and
// workload given as files, and checks that every decision equals `gpufleet place`'s on the same
// files.
//
// Inputs: exactly `place --cluster --workload`'s (readers/k8s/place_inputs.h), read by place's
// reader, and `place` runs on what it read. The replay then stands in for the API server and the
// controllers, and gives the server's cache (live/cluster_cache.h) the objects a cluster would hold
// once the files are applied:
//  - Nodes: the Node objects; the nodes of gpufleet node-pool files as the cache's pool_paths,
//    expanded by the same reader (a live cluster lists them as Nodes).
//  - Pods: each Pod, and one Pod per pod the reader makes of a workload controller (Deployment,
//    ReplicaSet, StatefulSet, Job: io::K8sObjects::pod_owners): the controller's spec.template with
//    the reader's name (<controller>-<i>) in its namespace, as the controllers create pods from their
//    template (kubernetes pkg/controller/controller_utils.go GetPodFromTemplate). A DaemonSet's pods
//    are the daemon controller's (sched/daemon_set.h: the nodes that should run it, named
//    <daemonset>-<node>, with the controller's tolerations and the required matchFields
//    metadata.name term its pods carry, pkg/controller/daemon/util/daemonset_util.go). Every pod gets
//    what the API server's Priority admission writes (plugin/pkg/admission/priority/admission.go):
//    spec.priority, spec.preemptionPolicy and, from a globalDefault class, spec.priorityClassName, as
//    the reader resolved them; and a metadata.uid when it has none (the API server gives one on
//    create; bind sends it).
//  - Everything else the reader takes (ConfigMaps holding device-plugin or mig-parted configs,
//    PriorityClasses, ResourceQuotas, PodDisruptionBudgets, NodeResourceTopologies, Kueue's objects)
//    as the cache's static objects, as `serve --cluster-config` gives them.
// A pod that place's ResourceQuota admission rejects when it is created is never sent (the API
// server refuses to create it, so kube-scheduler never sees it); the cache still holds it, as place's
// input does, so that both estimate the same typical pod mix (sched::typical_pod_mix).
//
// Then a server (server/http_server.h) starts on 127.0.0.1 at a free port, and for each pod without
// spec.nodeName that was created, in place's queue order (the DaemonSets' pods first, as place
// schedules them before the workload; then the others; each group by PrioritySort: higher priority
// first, then creation order), the client sends what kube-scheduler sends: POST /filter with every
// node (as NodeNames, or as a NodeList when node_cache_capable is false: a pool node as its name and
// labels), POST /prioritize when two or more nodes pass (kube-scheduler skips scoring for one), takes
// the highest score (the first on a tie), and POST /bind. The server's bind records the pod bound, so
// the next filter sees it, as kube-scheduler's next cycle sees its assumed pod. The pod's node and
// devices (its gpufleet.io device annotations) are compared with place's, by namespace/name.
//
// Refused with a UsageError: gangs (pod groups and Kueue workloads are placed all or nothing; the
// extender verbs see one pod at a time), naming one; a Pod whose status.phase is Succeeded or Failed
// (the server leaves terminal pods out, as kube-scheduler's informer does; place counts them). Not
// replayed: preemption (a pod place binds by preempting is reported, and later decisions may
// differ). Not given to the server: a controller's selector, which place gives its pods as their
// default spread selector (kube-scheduler's helper.DefaultSelector) and only the default-scheduler
// policies score (PodTopologySpread's default constraints); the server reads Pods, not their owners.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "place/place_workload.h"
#include "readers/k8s/place_inputs.h"

namespace gpufleet::server {

struct ReplayOptions {
  place::PlaceOptions place;
  bool node_cache_capable = true;  ///< NodeNames (true) or a NodeList (false) in the requests
};

/// What the replay reads: `place`'s inputs and the same files' objects as the API's JSON.
struct ReplayInputs {
  io::PlaceInputs place;                ///< io::read_place_inputs(cluster, workload)
  std::vector<nlohmann::json> objects;  ///< io::read_k8s_json_objects of io::place_input_paths(cluster, workload)
};

/// Reads both, place's reader first (its errors name the file, line and field). Throws InputError and
/// UsageError as read_place_inputs does.
ReplayInputs read_replay_inputs(const std::vector<std::string>& cluster_paths, const std::vector<std::string>& workload_paths);

/// One pod's decision, by the server and by place.
struct ReplayDecision {
  std::string pod;                  ///< "namespace/name"
  bool daemon_set = false;          ///< a DaemonSet's pod (replayed first)
  std::string live_node;            ///< "" = no node passed the filter (pending)
  std::vector<int32_t> live_gpus;   ///< distinct GPU indices from the bind's annotations
  std::string live_mig;             ///< MIG profiles, comma-joined
  std::string place_node;           ///< "" = pending in place
  std::vector<int32_t> place_gpus;
  std::string place_mig;
  bool place_preempted = false;     ///< place bound it by preempting others (not replayed)
  bool equal() const { return live_node == place_node && live_gpus == place_gpus && live_mig == place_mig; }
};

struct ReplayResult {
  std::vector<ReplayDecision> decisions;  ///< in queue order
  std::vector<std::string> quota_rejected;  ///< pods never created (ResourceQuota admission), in creation order
  int64_t filter_calls = 0, prioritize_calls = 0, bind_calls = 0;
  size_t nodes = 0;
  size_t mismatches() const;
};

/// Runs the replay (see the top of this file). Throws UsageError for gangs (naming one) or a cluster
/// the server's cache refuses, InputError as the readers do.
ReplayResult run_replay(const ReplayInputs& inputs, const ReplayOptions& options);

/// A summary and one line per differing decision.
std::string replay_text(const ReplayResult& result);
/// Every decision and the counts.
nlohmann::json replay_json(const ReplayResult& result);

}  // namespace gpufleet::server
