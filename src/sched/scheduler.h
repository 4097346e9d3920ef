// Scheduler: runs one scheduling cycle per pod over a ClusterState with a Policy.
//
// Node choice: the best NodePreference (preferred node affinity, PreferNoSchedule taints; see
// plugins/node_preference.h) first, when the pod or cluster has any; then the highest score; ties go
// to the node with the lowest rank. The FGD simulator
// breaks ties by the lexicographically smallest node name after prefixing each name with a random
// permutation index ("%04d-" + name, its fork of generic_scheduler.go selectHost), i.e. by a random
// per-run node rank; callers pass that rank (see pack_experiment.h). Identity ranks give
// "first node wins".
//
// Filter and cacheable score results are memoized per (pod request shape and scheduling
// constraints, node) and reused until the node's ClusterState::version() changes (a slot's versions
// never repeat, so a node added to a reused slot is evaluated afresh; empty slots are skipped): the results are
// pure functions of both, so this changes nothing but speed (the first cycle of each shape evaluates every node; later cycles
// re-evaluate only the nodes that changed since). The request shape includes the MIG and
// nvidia.com/gpu.shared requests.
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
///
/// Devices (DeviceAssignment's fields; schedule_one reserves exactly these; select_devices in
/// sched/device_select.h applies these rules, except the policy's GpuSelector for a fraction):
///  - gpus: nvidia.com/gpu. Plain GPUs: num_gpu distinct indices (whole GPUs: the lowest-index fully
///    free plain GPUs; a fraction: the policy's GpuSelector, or the best-fit plain GPU on a node that
///    also has MIG or time-sliced GPUs). On a node time-sliced without renaming: one GPU index per
///    replica, ascending (an index repeats when a GPU gives several replicas).
///  - shared_replicas: nvidia.com/gpu.shared, one GPU index per replica, ascending.
///    Replicas (of either resource) are picked one at a time on the time-sliced GPU with the most
///    free replicas, lowest index on ties (spreading; the device plugin leaves the choice to the
///    kubelet, which gpufleet does not model).
///  - mig: per MIG request in the pod's order, the free devices of its profile with the lowest
///    (GPU index, start).
/// For output, gpu_indices() gives the distinct GPUs touched and mig_profiles() the profile(s), e.g.
/// "gpus": [2], "mig": "3g.40gb".
struct ScheduleResult {
  NodeId node = kNoNode;                ///< chosen node, kNoNode if the pod is unschedulable
  std::vector<int32_t> gpus;            ///< GPU indices on that node (num_gpu of them; see above)
  std::vector<int32_t> shared_replicas;  ///< GPU index per nvidia.com/gpu.shared replica (see above)
  std::vector<MigDevice> mig;           ///< MIG devices (GPU, start, profile) (see above)
  int32_t score = 0;                    ///< the winning score
  /// For an unschedulable pod: how many nodes each filter code rejected (index = FilterCode).
  std::array<int32_t, kFilterCodeCount> rejected{};
  /// For an unschedulable pod: the code that rejected each node (index = NodeId), the input of
  /// preemption (sched/preemption.h). Empty when the pod was scheduled.
  std::vector<FilterCode> node_codes;
  /// A scheduling error (kube's Error status, not Unschedulable): the pod is not scheduled although
  /// nodes fit, and preemption does not run; node_codes is empty. Today: a preferred node affinity
  /// term kube cannot parse, with two or more feasible nodes (preferred_node_affinity_error).
  std::string error;
  bool scheduled() const { return node != kNoNode; }
  /// The devices, as ClusterState::allocate takes them.
  DeviceAssignment devices() const { return {gpus, shared_replicas, mig}; }
  /// The distinct GPU indices the pod uses (gpus, shared_replicas and MIG devices), ascending.
  std::vector<int32_t> gpu_indices() const;
  /// The distinct profiles of `mig`, in order, joined by ','; empty without MIG devices.
  std::string mig_profiles() const;
};

class Scheduler {
 public:
  /// `node_rank[n]` breaks score ties (lower wins) for slot n; it must have one entry per slot of
  /// the states this scheduler will see (decide() throws std::invalid_argument otherwise: give the
  /// slots that nodes added later take a rank with set_node_rank). Empty = every slot ranks as its
  /// NodeId ("first node wins"), however many slots. Throws std::invalid_argument if the policy
  /// lacks a score plugin or GPU selector.
  Scheduler(Policy policy, std::vector<uint32_t> node_rank);
  /// Sets slot n's tie-break rank; the slots between the last ranked one and n rank as their NodeId
  /// (with empty ranks, every slot below n).
  void set_node_rank(NodeId n, uint32_t rank);

  /// Tells the policy a pod arrived while the cluster is `state` (ScorePlugin::observe); drops cached
  /// scores if that changed them.
  void observe(const Pod& pod, const ClusterState& state);
  /// Runs filter, pre-score, score and GPU selection; does not change the state.
  /// `nominated_node` (kube's status.nominatedNodeName, set by preemption; kNoNode for none): when
  /// the pod passes every filter there, it goes there without scoring (score 0), as kube's
  /// evaluateNominatedNode; otherwise the cycle runs as usual. Throws std::invalid_argument for a
  /// nominated node out of range.
  ScheduleResult decide(const Pod& pod, const ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// observe(), decide() and, when a node was found, reserve().
  ScheduleResult schedule_one(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node = kNoNode);
  /// Reserve: takes the devices `result` names on its node (ClusterState::allocate, which throws
  /// InvariantViolation if they are not free). No-op for an unscheduled result.
  static void reserve(const Pod& pod, ClusterState& state, const ScheduleResult& result);
  /// A pod bound by spec.nodeName: observe() it and reserve it on node n with the devices a cycle
  /// would pick there (see ScheduleResult), running no filter or score (the scheduler never sees such
  /// a pod; the kubelet's own admission is the caller's check). Throws std::invalid_argument for n
  /// out of range or an empty slot, InvariantViolation when the pod's devices are not free on n.
  ScheduleResult bind(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng);

  const Policy& policy() const { return policy_; }
  /// The tie-break ranks (lower wins), the constructor's as set_node_rank changed them; empty =
  /// by NodeId.
  const std::vector<uint32_t>& node_rank() const { return node_rank_; }

 private:
  struct Entry {
    uint64_t version = 0;  // ClusterState version this entry was computed at (0 = never)
    int32_t value = 0;     // score, or INT32_MIN + FilterCode if rejected
  };
  struct ShapeKey {
    int64_t cpu_milli, memory_bytes;
    int32_t num_gpu, gpu_milli;
    int32_t shared_replicas;
    std::string mig;  // mig_key(pod): the MIG requests; "" for none
    std::string gpu_spec;
    std::string constraints;  // constraints_key(pod): namespace, labels, PodConstraints; "" for none
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeKeyHash {
    size_t operator()(const ShapeKey& k) const;
  };
  FilterCode run_filters(const Pod& pod, const ClusterState& state, NodeId n) const;
  // Filters then, when the node fits, the cacheable score: a cache Entry value. Out of line, so that
  // the per-node cache loop of decide() stays small.
  [[gnu::noinline]] int32_t evaluate(const Pod& pod, const ClusterState& state, NodeId n) const;
  size_t shape_for(const Pod& pod, size_t node_count);
  void select_gpus(ScheduleResult& result, const Pod& pod, const ClusterState& state, GoRand& rng) const;

  Policy policy_;
  std::vector<uint32_t> node_rank_;
  std::unordered_map<ShapeKey, size_t, ShapeKeyHash> shape_ids_;
  std::vector<std::vector<Entry>> cache_;
  std::vector<uint64_t> cache_generation_;  // per shape: the generation_ its entries were filled at
  /// Per shape: NodePreference::preference of every node, empty until a pod of the shape needs it
  /// (node labels and taints never change: emptied only when the node set changes).
  std::vector<std::vector<int64_t>> preference_;
  int prefer_no_schedule_ = -1;  // NodePreference::any_prefer_no_schedule of the state, -1 = unknown
  uint64_t node_set_version_ = 0;  // ClusterState::node_set_version() preference_ and prefer_no_schedule_ hold for
  std::vector<NodeId> feasible_;  // scratch
  std::vector<const FilterPlugin*> cached_filters_;  // the policy's cacheable filters, in order
  bool has_uncached_filters_ = false;
  std::vector<std::pair<NodeId, FilterCode>> uncached_rejects_;  // scratch: this cycle's non-cached rejections
  uint64_t generation_ = 0;       // score plugin generation the cache was filled at
};

}  // namespace gpufleet::sched
