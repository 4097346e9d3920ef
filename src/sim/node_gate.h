// How the simulator shows node lifecycle to the (unchanged) scheduling framework.
//
// ClusterState has a fixed node list, so the simulator creates every pool's nodes up to max_nodes
// up front and keeps each node's lifecycle (absent / provisioning / ready / cordoned) itself. Only
// ready nodes take pods: NodeGate is a Filter plugin, placed first in the policy's filters, that
// rejects every other node with FilterCode::kUntoleratedTaint. That is kube's own mechanism and
// reason: a node that is not ready carries the taint node.kubernetes.io/not-ready:NoSchedule and a
// cordoned one node.kubernetes.io/unschedulable:NoSchedule, which TaintToleration rejects.
//
// The Scheduler memoizes filter results per node until ClusterState::version(n) changes, and a
// lifecycle change does not touch ClusterState. So the score plugin is wrapped (GatedScore): its
// generation() also counts lifecycle changes (NodeGate::epoch()), and Scheduler::observe() drops
// its cache when the generation moves. The simulator therefore calls Scheduler::observe() before
// every decision. GatedScore forwards observe() to the wrapped plugin (the informer hook of online
// policies) only while learning is on, so a pod retried many times is learned from once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sched/framework/profile.h"

namespace gpufleet::sim {

/// Which nodes take pods. Shared by the simulator (writes) and the plugins (read).
class NodeGate {
 public:
  explicit NodeGate(size_t node_count) : schedulable_(node_count, 0) {}
  bool schedulable(NodeId n) const { return schedulable_[n] != 0; }
  /// Sets node n's flag; bumps epoch() when it changes.
  void set_schedulable(NodeId n, bool on) {
    if ((schedulable_[n] != 0) == on) return;
    schedulable_[n] = on ? 1 : 0;
    ++epoch_;
  }
  /// Number of flag changes so far.
  uint64_t epoch() const { return epoch_; }
  /// Whether GatedScore forwards observe() (set by the simulator around a pod's first cycle).
  bool learning = true;

 private:
  std::vector<uint8_t> schedulable_;
  uint64_t epoch_ = 0;
};

/// Filter: rejects nodes that are not schedulable with kUntoleratedTaint (see above).
class NodeGateFilter final : public sched::FilterPlugin {
 public:
  explicit NodeGateFilter(std::shared_ptr<const NodeGate> gate) : gate_(std::move(gate)) {}
  std::string_view name() const override { return "NodeLifecycle"; }
  using sched::FilterPlugin::filter;
  sched::FilterCode filter(const Pod& pod, const ClusterState& state, NodeId n, const sched::CycleState& cycle) const override;

 private:
  std::shared_ptr<const NodeGate> gate_;
};

/// Wraps a policy's score plugin: same scores, generation() = inner generation + epoch << 32
/// (both only grow, so the sum moves whenever either does), observe() forwarded while learning.
class GatedScore final : public sched::ScorePlugin {
 public:
  GatedScore(std::shared_ptr<sched::ScorePlugin> inner, std::shared_ptr<const NodeGate> gate)
      : inner_(std::move(inner)), gate_(std::move(gate)) {}
  std::string_view name() const override { return inner_->name(); }
  sched::ScoreCaching caching() const override { return inner_->caching(); }
  void observe(const Pod& pod, const ClusterState& state) override {
    if (gate_->learning) inner_->observe(pod, state);
  }
  uint64_t generation() const override { return inner_->generation() + (gate_->epoch() << 32); }
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const sched::CycleState& cycle) const override {
    return inner_->score(pod, state, n, cycle);
  }

 private:
  std::shared_ptr<sched::ScorePlugin> inner_;
  std::shared_ptr<const NodeGate> gate_;
};

/// The policy with NodeGateFilter prepended to its filters and its score plugin wrapped in GatedScore.
sched::Profile gate_policy(sched::Profile policy, const std::shared_ptr<NodeGate>& gate);

}  // namespace gpufleet::sim
