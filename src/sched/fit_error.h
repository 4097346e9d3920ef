// kube-scheduler's FitError message for a pod that no node admits (pkg/scheduler/framework/types.go,
// FitError.Error): "0/<nodes> nodes are available: <count> <reason>, <count> <reason>." followed by
// the PostFilter (preemption) message when there is one.
//
// Per node, the reason is the first rejecting filter's (kube runs a node's filters in order and
// stops at the first failure). TaintToleration names the node's first untolerated taint,
// "node(s) had untolerated taint {key: value}", so nodes with different taints are counted apart,
// as in kube. The "<count> <reason>" strings are sorted as Go's sort.Strings sorts them (byte order,
// so "12 ..." sorts before "4 ...") and joined with ", ".
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
#include "sched/framework/profile.h"

namespace gpufleet::sched {

/// Histogram of per-node rejection reasons: reason -> number of nodes.
using ReasonHistogram = std::map<std::string, int32_t>;

/// The reasons node n rejects the pod ("" when every filter admits it), taints spelled per node,
/// joined with ", " when the node lacks several MIG profiles.
std::string node_rejection_reason(const Profile& profile, const Pod& pod, const ClusterState& state, NodeId n);

/// node_rejection_reason over all nodes (nodes that admit the pod are not counted).
ReasonHistogram rejection_histogram(const Profile& profile, const Pod& pod, const ClusterState& state);

/// The same histogram from a failed cycle's per-node codes (ScheduleResult::node_codes, one per node;
/// kFits entries are not counted), without running any filter again: node_reasons() spells each code.
/// Throws std::invalid_argument when node_codes does not have one entry per node.
ReasonHistogram rejection_histogram(std::span<const FilterCode> node_codes, const Pod& pod, const ClusterState& state);

/// kube's per-node words for a code (empty for kFits): the node's first untolerated taint for
/// kUntoleratedTaint ("node(s) had untolerated taint {key: value}"), one entry per MIG profile the
/// node lacks, in the pod's order, for kInsufficientMig ("Insufficient nvidia.com/mig-3g.40gb"),
/// upstream's words for the node's Topology Manager scope for kCannotAlign ("cannot align pod" or
/// "cannot align container"), else filter_reason(code).
std::vector<std::string> node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n);

/// "0/<node_count> nodes are available: <sorted counts and reasons>." plus " <post_filter>" when
/// post_filter is not empty. With no nodes at all: kube's "no nodes available to schedule pods".
std::string fit_error_message(const ReasonHistogram& histogram, size_t node_count, std::string_view post_filter = {});

}  // namespace gpufleet::sched
