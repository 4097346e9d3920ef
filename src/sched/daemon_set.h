// The daemon controller's rules (kubernetes pkg/controller/daemon/daemon_controller.go,
// util/daemonset_util.go): which nodes run a DaemonSet's pod, and the pod it creates for a node.
//
//  - NodeShouldRunDaemonPod (shouldRun): the template's spec.nodeName, when set, names the node; the
//    template's nodeSelector and required node affinity match the node
//    (nodeaffinity.GetRequiredNodeAffinity(pod).Match, sched/plugins/node_affinity.h); and every
//    NoSchedule and NoExecute taint of the node is tolerated by the template's tolerations with the
//    controller's defaults (model/daemon_set.h add_daemon_pod_tolerations: so a cordoned node, or one
//    tainted not-ready, still runs it). spec.unschedulable is not looked at (the defaults tolerate it).
//  - The pod (syncNodes): the template, named <daemonset>-<node> (kube appends a random suffix), its
//    required node affinity replaced by the single term matchFields metadata.name In [<node>]
//    (ReplaceDaemonSetPodNodeNameNodeAffinity); nodeSelector, tolerations and the rest are kept. The
//    default scheduler then binds it, to that node or nowhere.
// Only shouldRun is modelled: a pod already running on a node that gains an untolerated NoSchedule
// taint is not kept or removed (the nodes here do not change their taints).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/daemon_set.h"
#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::sched {

/// Whether the daemon controller creates a pod of `ds` for `node` (see above).
bool daemon_set_should_run(const DaemonSet& ds, const Node& node);

/// The pod of `ds` for the node named `node_name` (see above).
Pod daemon_set_pod(const DaemonSet& ds, const std::string& node_name);

/// The pods of every DaemonSet for every node that should run it: DaemonSets in order, each over the
/// nodes in order.
std::vector<Pod> daemon_set_pods(std::span<const DaemonSet> daemon_sets, std::span<const Node> nodes);

}  // namespace gpufleet::sched
