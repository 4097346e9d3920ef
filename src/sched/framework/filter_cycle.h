// FilterCycle: a set of filters set up for one pod against one state (kube's RunPreFilterPlugins,
// then RunFilterPlugins per node, and RunPreFilterExtensionAddPod / RemovePod). The Scheduler
// memoizes the cacheable filters itself; preemption's dry run, the kubelet's admission check and
// stand-alone checks use this.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/framework/cycle_state.h"
#include "sched/framework/interface.h"
#include "sched/framework/node_to_status.h"

namespace gpufleet::sched {

class FilterCycle {
 public:
  /// Runs PreFilter of every plugin in `pre_filters`, in order (a status other than Success or Skip is
  /// kept in pre_filter_status(); the filters still run). Keeps pointers to the spans' plugins and to `pod`,
  /// which must outlive it; `state` must be the state (or a later version of it kept in step through
  /// add_pod/remove_pod).
  FilterCycle(std::span<const std::shared_ptr<const PreFilterPlugin>> pre_filters,
              std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod, const ClusterState& state);
  /// The same with the PreFilter plugins taken from `filters` (those that also implement PreFilter).
  FilterCycle(std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod, const ClusterState& state);

  /// True when a non-cacheable filter has something to check (its PreFilter did not Skip).
  bool has_uncached() const { return uncached_ > 0; }
  /// Every filter on node n in order (skipped ones pass): the first that rejects the node and its
  /// code, or not rejected.
  Rejection run(const ClusterState& state, NodeId n) const;
  /// Only the non-cacheable filters that were not skipped, in order (the caller ran the cacheable ones).
  Rejection run_uncached(const ClusterState& state, NodeId n) const;
  /// PreFilterExtensions: `changed` was bound to / released from node n (`state` shows it already).
  void add_pod(const ClusterState& state, NodeId n, const BoundPod& changed);
  void remove_pod(const ClusterState& state, NodeId n, const BoundPod& changed);
  /// The first PreFilter status that was neither Success nor Skip (Success when none).
  const Status& pre_filter_status() const { return pre_filter_status_; }
  const CycleState& cycle() const { return cycle_; }

 private:
  void init(const ClusterState& state);
  std::vector<const PreFilterPlugin*> pre_filters_;
  std::span<const std::shared_ptr<const FilterPlugin>> filters_;
  std::vector<uint8_t> skipped_;  // per filter: its PreFilter returned Skip
  const Pod* pod_;
  CycleState cycle_;
  Status pre_filter_status_;
  size_t uncached_ = 0;
};

}  // namespace gpufleet::sched
