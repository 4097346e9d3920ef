// kube-scheduler's FitError message for a pod that no node admits (pkg/scheduler/framework/types.go,
// FitError.Error): "0/<nodes> nodes are available: <count> <reason>, <count> <reason>." followed by
// the PostFilter (preemption) message when there is one.
//
// Per node, the reason is the first rejecting filter's (kube runs a node's filters in order and
// stops at the first failure), in that plugin's own words (FilterPlugin::node_reasons; kube's
// FitError reads each node's Status reasons from NodeToStatus): TaintToleration names the node's
// first untolerated taint, "node(s) had untolerated taint {key: value}", so nodes with different
// taints are counted apart, as in kube. The "<count> <reason>" strings are sorted as Go's
// sort.Strings sorts them (byte order, so "12 ..." sorts before "4 ...") and joined with ", ".
//
// Like kube, a node short of several MIG profiles counts under each "Insufficient
// nvidia.com/mig-<profile>" (NodeResourcesFit reports every insufficient resource).
// Difference from kube: a node short of both cpu and memory counts under the first only (our
// NodeResourcesFit stops at the first insufficient resource).
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "sched/framework/node_to_status.h"
#include "sched/framework/profile.h"

namespace gpufleet::sched {

// A ReasonHistogram (framework/interface.h) maps each per-node reason to its number of nodes.

/// The reasons node n rejects the pod ("" when every filter admits it), in the rejecting plugin's
/// words for the node (e.g. its taint), joined with ", " when it gives several (one per MIG
/// profile the node lacks).
std::string node_rejection_reason(const Profile& profile, const Pod& pod, const ClusterState& state, NodeId n);

/// node_rejection_reason over all nodes (nodes that admit the pod are not counted).
ReasonHistogram rejection_histogram(const Profile& profile, const Pod& pod, const ClusterState& state);

/// The same histogram from a failed cycle's NodeToStatus (ScheduleResult::node_to_status, one per
/// node; nodes not rejected are not counted), without running any filter again: each rejecting
/// plugin words its nodes (FilterPlugin::count_reasons, node_reasons). Throws std::invalid_argument
/// when `statuses` does not have one entry per node.
ReasonHistogram rejection_histogram(const NodeToStatus& statuses, const Pod& pod, const ClusterState& state);

/// "0/<node_count> nodes are available: <sorted counts and reasons>." plus " <post_filter>" when
/// post_filter is not empty. With no nodes at all: kube's "no nodes available to schedule pods".
std::string fit_error_message(const ReasonHistogram& histogram, size_t node_count, std::string_view post_filter = {});

}  // namespace gpufleet::sched
