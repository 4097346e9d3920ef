// DaemonSet (apps/v1): one pod per node that its pod template admits. Plain data, no I/O; the reader
// is readers/k8s/k8s_yaml.h, which node runs a pod and how that pod looks is sched/daemon_set.h (the
// daemon controller's rules, on the scheduler's node affinity and taint matching).
#pragma once

#include <string>

#include "model/pod.h"

namespace gpufleet {

struct DaemonSet {
  std::string name;            ///< metadata.name
  std::string namespace_name;  ///< metadata.namespace ("default" when absent)
  /// spec.template as a pod: requests, labels, nodeSelector, affinity, priority (resolved against
  /// the PriorityClasses), and the tolerations with the controller's defaults already added
  /// (add_daemon_pod_tolerations). Its name is empty; node_name is the template's spec.nodeName.
  Pod pod;
  bool host_network = false;   ///< spec.template.spec.hostNetwork
};

/// The daemon controller's default tolerations (kubernetes pkg/controller/daemon/util/
/// daemonset_util.go AddOrUpdateDaemonPodTolerations), added to `pod` unless a toleration with the
/// same key and effect is there already (v1helper.AddOrUpdateTolerationInPodSpec replaces that one):
/// node.kubernetes.io/not-ready and node.kubernetes.io/unreachable (Exists, NoExecute, no
/// tolerationSeconds), node.kubernetes.io/disk-pressure, memory-pressure, pid-pressure and
/// unschedulable (Exists, NoSchedule), and with hostNetwork node.kubernetes.io/network-unavailable
/// (Exists, NoSchedule).
void add_daemon_pod_tolerations(Pod& pod, bool host_network);

}  // namespace gpufleet
