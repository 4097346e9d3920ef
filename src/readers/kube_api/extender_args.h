// Readers of the request bodies kube-scheduler sends to an HTTP extender (the live server's filter,
// prioritize, preempt and bind verbs): ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs of
// kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/extender/v1/types.go.
//
// Wire format. The v1 structs carry no json tags, so kube-scheduler (pkg/scheduler/extender.go, Go
// encoding/json) sends the Go field names: "Pod", "Nodes", "NodeNames", "NodeNameToVictims",
// "NodeNameToMetaVictims", "Pods", "UID", "NumPDBViolations", "PodName", "PodNamespace", "PodUID",
// "Node". Keys are matched as encoding/json matches them when decoding: the exact name, else a key
// differing from it only in ASCII case (so the lower-case tags of the older k8s.io/kubernetes
// pkg/scheduler/api/v1, "pod", "nodes", "nodenames", "nodeNameToMetaVictims", are read too). Of
// several case variants without the exact name (kube-scheduler never sends two), the first in byte
// order is read, where Go would read the last in the body. Unknown keys are ignored. An
// embedded Pod or Node is the API's JSON (metadata, spec, status). Pointers and slices Go leaves nil
// arrive as null and read as absent.
//
// The pod being scheduled ("Pod") is converted by the reader `gpufleet place` uses (readers/k8s/k8s_yaml.h
// parse_k8s_text) on the object re-serialized, with "kind": "Pod" and "apiVersion": "v1" added when
// absent (Go marshals an informer's objects with an empty TypeMeta): the same requests, constraints,
// priority (spec.priority, which admission always sets on a real pod), metadata.uid, and for a pod
// with spec.nodeName the device annotations (model/device_annotations.h). The last 256 distinct pods
// read are remembered by their JSON text (kube-scheduler sends the same pod to filter, then to
// prioritize): a reading depends on the text only, so this saves time and changes no answer.
// Thread-safe.
//
// Fast path (parse_extender_args): a body of kube-scheduler's nodeCacheCapable form,
// {"Pod":{...},"Nodes":null,"NodeNames":[...]} (those keys exactly, once each, Nodes null or absent,
// the names plain printable ASCII without escapes), whose "Pod" text (its bytes as sent) is among
// the last 256 read, is read without a JSON tree: the names straight from the text, the pod as it
// read then, every limit below counted on the whole body as the full parse counts it (the pod's part
// remembered with it). Any other body, or one the fast path finds something wrong with, is read by
// the full parse, so answers and errors are the same either way (10x less CPU for 1,000 names:
// LiveParseFilterArgs in bench/live_bench.cpp).
//
// Limits: the body's (readers/formats/input_limits.h JsonRequestLimits: size, depth, values, string length,
// checked while parsing); at most ObjectLimits::max_nodes node names (NodeNames, Nodes.items, or the
// keys of a victims map) and ObjectLimits::max_pods victims in all. Both are parameters, defaulting
// to kJsonRequestLimits and kObjectLimits; docs/input-limits.md lists them.
//
// Errors throw InputError with `source` as the file and the field path in the body's terms, e.g.
// "Pod", "Pod.spec.containers[0].resources.requests.cpu", "NodeNames[2]",
// "Nodes.items[3].metadata.name", "NodeNameToMetaVictims.n1.Pods[0].UID", "PodUID". A JSON syntax
// error has the 1-based line and column of the offending byte (readers/formats/json_request.h); the other errors
// have no position (0), the JSON tree keeping none. Checked: the body is an object; a field's JSON
// type; a missing or empty required string; a duplicate node name; a negative or non-integer
// NumPDBViolations; a limit above; everything the Kubernetes reader checks in the Pod.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/formats/input_limits.h"
#include "model/pod.h"

namespace gpufleet::io {

/// The body of the filter and prioritize verbs (Go ExtenderArgs).
struct ExtenderArgs {
  /// "Pod", read as `gpufleet place` reads a Pod (see the top of this file).
  Pod pod;
  /// The candidate nodes, in the body's order: "NodeNames" when it is not null (the extender is
  /// nodeCacheCapable), else "Nodes".items[].metadata.name; empty when both are null or absent.
  std::vector<std::string> node_names;
  /// Whether "NodeNames" was given (not null): the answer names nodes in NodeNames, else it echoes
  /// the passing Node objects in Nodes.items.
  bool node_cache_capable = false;
  /// "Nodes".items as received (an array, empty when items is null) when the names came from Nodes,
  /// for the filter answer to echo the passing Nodes; null when node_cache_capable or Nodes is absent.
  nlohmann::json node_items;
  /// The Kubernetes reader's warnings about the pod (features not modelled, e.g. "pod resource
  /// ephemeral-storage is not modelled (1 object(s)): the pod is placed without it").
  std::vector<std::string> warnings;
};

/// The victims kube-scheduler proposes on one node (Go Victims / MetaVictims).
struct ExtenderVictims {
  /// The victims' metadata.uid, in the body's order ("Pods"[].UID, or "Pods"[].metadata.uid of the
  /// full form). Each non-empty.
  std::vector<std::string> pod_uids;
  /// "NumPDBViolations": the victims whose eviction would violate a PodDisruptionBudget, >= 0
  /// (0 when absent).
  int64_t num_pdb_violations = 0;
};

/// The body of the preempt verb (Go ExtenderPreemptionArgs).
struct ExtenderPreemptionArgs {
  /// "Pod", the preemptor, read as ExtenderArgs::pod.
  Pod pod;
  /// Candidate node name -> its victims, sorted by node name (the order Go marshals a map in). From
  /// "NodeNameToMetaVictims" when not null, else "NodeNameToVictims"; empty when both are null.
  std::map<std::string, ExtenderVictims> node_victims;
  /// Whether the map came from "NodeNameToMetaVictims" (kube-scheduler sends it when the extender is
  /// nodeCacheCapable). The answer is always NodeNameToMetaVictims (Go ExtenderPreemptionResult).
  bool meta_victims = false;
  /// The Kubernetes reader's warnings about the pod.
  std::vector<std::string> warnings;
};

/// The body of the bind verb (Go ExtenderBindingArgs).
struct ExtenderBindingArgs {
  std::string pod_name;       ///< "PodName", non-empty
  std::string pod_namespace;  ///< "PodNamespace"; "default" when it is ""
  std::string pod_uid;        ///< "PodUID", non-empty
  std::string node;           ///< "Node": the node kube-scheduler chose, non-empty
};

/// Reads a filter or prioritize body. Throws InputError (see the top of this file).
ExtenderArgs parse_extender_args(std::string_view body, const std::string& source,
                                 const JsonRequestLimits& json_limits = kJsonRequestLimits,
                                 const ObjectLimits& object_limits = kObjectLimits);

/// Reads a preempt body. Throws InputError.
ExtenderPreemptionArgs parse_extender_preemption_args(std::string_view body, const std::string& source,
                                                      const JsonRequestLimits& json_limits = kJsonRequestLimits,
                                                      const ObjectLimits& object_limits = kObjectLimits);

/// Reads a bind body: every key is required and a string. Throws InputError.
ExtenderBindingArgs parse_extender_binding_args(std::string_view body, const std::string& source,
                                                const JsonRequestLimits& json_limits = kJsonRequestLimits);

}  // namespace gpufleet::io
