// Field rules of Kubernetes objects that several readers share, validated as the API server does
// (k8s.io/apimachinery pkg/util/validation and pkg/api/validation; k8s.io/kubernetes
// pkg/apis/core/validation): labels, taints, tolerations and a meta/v1 LabelSelector. One
// implementation, the Kubernetes reader's (readers/k8s/k8s_yaml.cpp); the Kueue reader reuses it
// for its pod templates and node labels. Each throws InputError at the field.
#pragma once

#include "model/node.h"
#include "model/pod.h"
#include "model/scheduling_constraints.h"
#include "readers/formats/yaml_field.h"

namespace gpufleet::io::detail {

Labels read_labels(const Field& v);
Taint read_taint(const Field& v);
Toleration read_toleration(const Field& v);
/// DRA's DeviceTaint and DeviceToleration (resource/v1): the same fields and rules as a node's, but the
/// effects are None, NoSchedule and NoExecute (PreferNoSchedule is refused, as the API server does).
Taint read_device_taint(const Field& v);
Toleration read_device_toleration(const Field& v);
LabelSelector read_label_selector(const Field& v);
/// A core/v1 NodeSelectorTerm (matchExpressions, matchFields on metadata.name only), as the Pod
/// reader reads node affinity; DRA's ResourceSlice and allocation node selectors use it too.
NodeSelectorTerm read_node_selector_term(const Field& v);

}  // namespace gpufleet::io::detail
