// Scheduler: runs one scheduling cycle per pod over a ClusterState with a Policy.
//
// Node choice: the highest score wins; ties go to the node with the lowest rank. The FGD simulator
// breaks ties by the lexicographically smallest node name after prefixing each name with a random
// permutation index ("%04d-" + name, its fork of generic_scheduler.go selectHost), i.e. by a random
// per-run node rank; callers pass that rank (see pack_experiment.h). Identity ranks give
// "first node wins".
//
// Filter and cacheable score results are memoized per (pod request shape and scheduling
// constraints, node) and reused until the node's ClusterState::version() changes: the results are
// pure functions of both, so this changes nothing but speed (the first cycle of each shape evaluates every node; later cycles
// re-evaluate only the nodes that changed since).
// Non-cacheable filters (FilterPlugin::filter_cacheable() false, e.g. InterPodAffinity, whose
// answer for a node depends on the pods of other nodes in its zone) are never memoized: each cycle
// runs their pre_filter() once and, when it returns data, filter_in_cycle() on the nodes that passed
// the cached filters. A pod with nothing to check there (pre_filter() returns nullptr) pays one call
// per cycle.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/framework.h"

namespace gpufleet::sched {

/// The outcome of one cycle.
struct ScheduleResult {
  NodeId node = kNoNode;                ///< chosen node, kNoNode if the pod is unschedulable
  std::vector<int32_t> gpus;            ///< GPU indices on that node (num_gpu of them)
  int32_t score = 0;                    ///< the winning score
  /// For an unschedulable pod: how many nodes each filter code rejected (index = FilterCode).
  std::array<int32_t, kFilterCodeCount> rejected{};
  /// For an unschedulable pod: the code that rejected each node (index = NodeId), the input of
  /// preemption (sched/preemption.h). Empty when the pod was scheduled.
  std::vector<FilterCode> node_codes;
  bool scheduled() const { return node != kNoNode; }
};

/// kube-scheduler's FitError message, e.g.
/// "0/3 nodes are available: 2 Insufficient cpu, 1 Insufficient nvidia.com/gpu."
std::string unschedulable_message(const ScheduleResult& result, size_t node_count);

class Scheduler {
 public:
  /// `node_rank[n]` breaks score ties (lower wins); it must have one entry per node of the states
  /// this scheduler will see. Throws std::invalid_argument if the policy lacks a score plugin or
  /// GPU selector.
  Scheduler(Policy policy, std::vector<uint32_t> node_rank);

  /// Tells the policy a pod arrived (ScorePlugin::observe); drops cached scores if that changed them.
  void observe(const Pod& pod);
  /// Runs filter, pre-score, score and GPU selection; does not change the state.
  /// `nominated_node` (kube's status.nominatedNodeName, set by preemption; kNoNode for none): when
  /// the pod passes every filter there, it goes there without scoring (score 0), as kube's
  /// evaluateNominatedNode; otherwise the cycle runs as usual. Throws std::invalid_argument for a
  /// nominated node out of range.
  ScheduleResult decide(const Pod& pod, const ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// observe(), decide() and, when a node was found, reserve the pod there (ClusterState::allocate).
  ScheduleResult schedule_one(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);

  const Policy& policy() const { return policy_; }
  /// The tie-break ranks given to the constructor (lower wins).
  const std::vector<uint32_t>& node_rank() const { return node_rank_; }

 private:
  struct Entry {
    uint32_t version = 0;  // ClusterState version this entry was computed at (0 = never)
    int32_t value = 0;     // score, or INT32_MIN + FilterCode if rejected
  };
  struct ShapeKey {
    int64_t cpu_milli, memory_mib;
    int32_t num_gpu, gpu_milli;
    std::string gpu_spec;
    std::string constraints;  // constraints_key(pod): namespace, labels, PodConstraints; "" for none
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeKeyHash {
    size_t operator()(const ShapeKey& k) const;
  };
  FilterCode run_filters(const Pod& pod, const ClusterState& state, NodeId n) const;
  void select_gpus(ScheduleResult& result, const Pod& pod, const ClusterState& state, GoRand& rng) const;
  std::vector<Entry>& cache_for(const Pod& pod, size_t node_count);

  Policy policy_;
  std::vector<uint32_t> node_rank_;
  std::unordered_map<ShapeKey, size_t, ShapeKeyHash> shape_ids_;
  std::vector<std::vector<Entry>> cache_;
  std::vector<NodeId> feasible_;  // scratch
  std::vector<const FilterPlugin*> cached_filters_;  // the policy's cacheable filters, in order
  bool has_uncached_filters_ = false;
  std::vector<std::pair<NodeId, FilterCode>> uncached_rejects_;  // scratch: this cycle's non-cached rejections
  uint64_t generation_ = 0;       // score plugin generation the cache was filled at
};

}  // namespace gpufleet::sched
