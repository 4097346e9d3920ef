// gpufleet's own placement policy ("gpufleet", the default of every command that places pods).
//
// It scores a node by how much a placement there adds to stranded GPU capacity, estimated online
// from what a live scheduler knows: the cluster state, the pods seen so far (observe(), the informer
// hook) and the pod being placed. Nothing about future arrivals or the whole trace is used.
// All terms are in gpu_milli (1000 = one GPU).
//
//  1. Fragmentation F(n) (FGD, Weng et al. ATC'23; sched/gpu/fragmentation.h), with the typical pod mix
//     estimated from the pods seen so far (OnlineFragmentation, fgd_online_score.h).
//  2. GPUs stranded by exhausted CPU or memory (the FGD paper counts a GPU as fragmented only when a
//     typical pod's CPU no longer fits, and ignores memory):
//       S(n) = min(G, max(G - cpu_free / r_cpu, G - memory_free / r_mem, 0)),
//     G = free gpu_milli of node n, r_cpu = CPU milli and r_mem = memory MiB that the GPU pods seen
//     so far request per gpu_milli (sum of requests / sum of gpu_milli). S is the free GPU capacity
//     that the node's remaining CPU or memory cannot feed at the workload's own ratio. Placing a
//     CPU-only or CPU-heavy pod on a GPU-dense node (e.g. 8 GPUs, 96 cores) raises S there; on a
//     CPU-rich node (2 GPUs, 104 cores) it does not.
//  3. Scarce GPU models. A GPU pod's model set is the set of models (with GPUs) its gpu_spec allows;
//     a set other than all of them is constrained. For each constrained set K seen,
//       share(K) = (K's share of the GPU demand seen) x L / U(K),
//     L = free GPU milli of the whole cluster, U(K) = usable free GPU milli on K's nodes (free minus
//     S(n) per node): the fraction of what K's pods can still use that they will claim if the rest
//     of the cluster fills at the mix seen. A pod with model set A pays, on a node of model m,
//       model_pressure_weight x p_A(m) x its gpu_milli,
//       p_A(m) = clamp((sum of share(K) over constrained K that contain m but not all of A - t) / (1 - t), 0, 1),
//     t = model_pressure_threshold. Pods allowed fewer models (e.g. P100 only, or V100M16|V100M32)
//     keep what is left of their models; a pod pays nothing for sets at least as wide as its own.
//     Being relative to what is left, the pressure rises as other pods fill a model early (as CPU-
//     light pods fill the 16-core P100 nodes, which S favours), falls while K's models keep more of
//     their capacity free than the rest of the cluster, and is 0 once the cluster or K's models have
//     nothing usable left. A set seen for the first time gets its p_A at once.
//  4. Scarce node classes: the same with node classes (ClusterShape), for pods pinned to one class.
//     A GPU pod that fits an empty node of one class only (e.g. 8 GPUs with 120 cores: only the
//     128-core 8-GPU nodes) is pinned to it; share(c) as above with c's nodes, and
//     p(c) = clamp((share(c) - t) / (1 - t), 0, 1). Every pod not pinned to c pays
//     class_pressure_weight x p(c) x size on a node of class c, size = max(gpu_milli, cpu_milli /
//     r_cpu): a CPU-only pod counts by the GPUs its CPU would feed. This keeps CPU-only and small
//     pods off the only nodes that big pods fit.
//
// Score of node n for pod p (higher is better; ties go to the node rank, scheduler.h):
//     x = (F(n) - F(n')) + strand_weight (S(n) - S(n')) - model pressure - class pressure,
//     score = fgd_sigmoid_score(x, sigmoid_scale_milli) = int(100 / (1 + e^(-x / 2000)))
// with n' the node after the placement. A sharing pod goes to the GPU with the largest F(n) - F(n'_i)
// (first index on ties); S and the pressures do not depend on the GPU.
//
// Terms 2-4 and the constants are gpufleet's own (docs/fgd-reproduction.md, "Online policies"). They were
// chosen on the openb default trace and the variants cpu250, gpushare40, gpuspec05/10/20/33 and
// multigpu20/40/50, and are the same for every workload.
//
// The mix, r_cpu and r_mem are re-computed when the number of pods seen reaches 1, 2, 4, ..., 1024 and
// then every 1024 pods (OnlineFragmentation::refresh_point); the pressures, which follow the free
// capacity, at those points and every kPressureRefreshPods pods (one pass over the nodes). Each is
// replaced only when it moved: the mix by at least kMinMixChange (L1), r_cpu or r_mem by
// kMinRatioChange (relative), a pressure p by kMinPressureChange or to or from 0. Any replacement changes
// generation(), which empties the scheduler's score cache; while the estimates barely move the cache
// stays warm.
//
// Not modelled: model constraints expressed as node affinity on nvidia.com/gpu.product (only the
// openb gpu_spec counts for terms 3-4), and taints, MIG and time-slicing in the class fit test
// (fits() on a plain-GPU template node of the class, ClusterShape::templates).
// Term 3 is off when a GPU model id is 64 or more (the sets are 64-bit masks of model ids).
//
// Capacity still to come. The classes, L and U are taken over a CapacityOutlook (model/
// capacity_outlook.h), the nodes the cluster may hold: in `pack` and `place` the state's nodes; in
// `simulate` every pool's nodes up to its maximum, where a node not (yet) in the state counts as an
// empty node of its pool, so with autoscaled pools terms 3 and 4 mostly stay off until the pools
// reach their maximum.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/capacity_outlook.h"
#include "model/cluster_state.h"
#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"
#include "sched/plugins/fgd_online_score.h"

namespace gpufleet::sched {

/// The node classes of a cluster, for gpufleet's pressure terms.
struct ClusterShape {
  /// Nodes with the same GPU model and GPU count whose CPU and memory are within
  /// kNodeClassTolerance of the class's first node (allocatable differs slightly between otherwise
  /// identical machines). Capacity is the largest in the class.
  struct NodeClass {
    int32_t model_id = 0;     ///< ClusterState::gpu_model_id
    int32_t gpu_count = 0;    ///< GPUs per node
    int64_t cpu_milli = 0;    ///< largest allocatable CPU of the class's nodes
    int64_t memory_bytes = 0;   ///< largest allocatable memory of the class's nodes
    int64_t gpus = 0;         ///< physical GPUs over all nodes of the class
  };
  std::vector<NodeClass> classes;      ///< in order of first node
  std::vector<int32_t> class_of_node;  ///< index into classes, per NodeId; -1 for a slot in no range
  /// One empty node per class (NodeId = class index): a node of the class's GPU model and count with
  /// the class's CPU and memory, its GPUs plain (MIG and time-slicing are not modelled in the class
  /// test). The pinned-class test is fits() (node_resources_fit.h) on these.
  std::shared_ptr<const ClusterState> templates;
  /// The classes of the outlook's nodes, whatever is allocated on them (in `simulate`, every node
  /// a pool may grow to), in slot order. `gpu_models`: model names by the outlook's model ids
  /// (ClusterState::gpu_models()). O(slots x classes).
  static ClusterShape of(const CapacityOutlook& outlook, std::span<const std::string> gpu_models);
  /// of(CapacityOutlook::of(state), state.gpu_models()): the classes of the state's nodes.
  static ClusterShape of(const ClusterState& state) { return of(CapacityOutlook::of(state), state.gpu_models()); }
};

/// Relative CPU and memory difference under which two nodes of the same model and GPU count share a
/// class (gpufleet's choice).
inline constexpr double kNodeClassTolerance = 0.05;

/// Smallest relative change of r_cpu or r_mem that replaces them (and empties the score cache);
/// gpufleet's choice, like kMinMixChange for the mix.
inline constexpr double kMinRatioChange = 0.02;

/// Pods between two refreshes of the pressures, which depend on the free capacity, and the smallest
/// change of a pressure that replaces it (gpufleet's choices). Each replacement empties the
/// scheduler's score cache: on the openb default trace, refreshing every 16 pods with changes of 0.05
/// gives the same curves within 0.05 points but costs 2.1x FGD's time per pod instead of 1.5-1.8x;
/// refreshing only with the mix (every 1024 pods) lets gpuspec05 dip 0.12 points below FGD.
inline constexpr int64_t kPressureRefreshPods = 256;
inline constexpr double kMinPressureChange = 0.1;

/// gpufleet's score plugin and GPU selector (terms 1-4 of the header comment, all in gpu_milli).
/// Not thread-safe, like the Scheduler that calls it.
class GpufleetScore final : public ScorePlugin, public GpuSelector, public ObserverPlugin, public NamedPlugin<"GpufleetScore"> {
 public:
  /// Reads the GPU models of `state` (the state it will score) and the node classes of `outlook`,
  /// the nodes that state may hold (see the header comment; its model ids are the state's, and it
  /// covers every node the state will hold). `params`: GpufleetParams (plugin_args.h). Throws
  /// ProfileError (validation.h, a std::invalid_argument) for parameters validate_gpufleet_params
  /// refuses.
  GpufleetScore(const ClusterState& state, CapacityOutlook outlook, GpufleetParams params = {});
  /// The same with CapacityOutlook::of(state): the state's nodes are all it will hold.
  explicit GpufleetScore(const ClusterState& state, GpufleetParams params = {})
      : GpufleetScore(state, CapacityOutlook::of(state), params) {
    follows_state_ = true;
  }
  // Not copyable: last_ points into this object's pressure rows.
  GpufleetScore(const GpufleetScore&) = delete;
  GpufleetScore& operator=(const GpufleetScore&) = delete;
  /// Adds the pod's request to the mix, r_cpu / r_mem and the demand per model set and class, then
  /// re-estimates as the header comment says: the mix and ratios at refresh points, the pressures
  /// also every kPressureRefreshPods pods or when a new model set appears (one O(nodes) pass over
  /// `state`). Bumps generation() when a replaced estimate changes scores. Does not throw.
  void observe(const Pod& pod, const ClusterState& state) override;
  uint64_t generation() const override { return generation_; }
  /// Made without an outlook (the state's nodes are all it holds, as in `serve`): reads the node
  /// classes of the state's nodes now, and re-derives from the GPU pods seen so far what depends on
  /// them (each request shape's model set and pinned class, the demand per model set and per class),
  /// then the pressures; bumps generation(). Made with an outlook (`simulate`): nothing, the outlook
  /// covers every node the state will hold.
  void nodes_changed(const ClusterState& state) override;
  /// 0..99 (see the header comment); 0 for a sharing pod no GPU of node n can take.
  int64_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  /// The GPU with the largest F decrease, or -1 when no GPU of node n can take the pod.
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;

  /// S(n) for a node with `gpu_free_milli` free GPU milli, `cpu_free_milli` and `memory_free_bytes`
  /// left, in gpu_milli, at the current ratios (0 before any GPU pod was seen).
  double stranded_milli(int64_t gpu_free_milli, int64_t cpu_free_milli, int64_t memory_free_bytes) const;
  /// p_A(m) of model id m at the current estimate, in [0, 1], for a pod whose gpu_spec is
  /// `gpu_spec` (empty: any model); 0 for an unknown id or a set not seen yet.
  double model_pressure(int32_t model_id, std::string_view gpu_spec = {}) const;
  /// p(c) of node class c (an index into ClusterShape::classes) at the current estimate, in [0, 1].
  double class_pressure(int32_t class_id) const;
  /// CPU milli per gpu_milli requested by the GPU pods seen so far (r_cpu; 0 before any).
  double cpu_per_gpu_milli() const { return r_cpu_; }
  /// Memory MiB per gpu_milli requested by the GPU pods seen so far (r_mem; 0 before any).
  double memory_per_gpu_milli() const { return r_memory_; }
  /// The fragmentation measure in use.
  const FragmentationMeasure& measure() const { return online_.measure(); }
  /// The node classes read at construction.
  const ClusterShape& shape() const { return shape_; }

 private:
  // What observe() learns once per request shape, so that scoring never parses gpu_spec.
  struct ShapeFacts {
    uint64_t model_set = 0;     // the models with GPUs gpu_spec allows (bit = model id); 0: none
    int32_t pinned_class = -1;  // the only class an empty node of which fits the pod, or -1
  };
  struct ShapeId {
    std::string_view gpu_spec;
    int64_t cpu_milli, memory_bytes;
    int32_t num_gpu;
    bool operator==(const ShapeId&) const = default;
  };
  struct ShapeIdHash {
    size_t operator()(const ShapeId& id) const;
  };
  ShapeFacts compute_facts(const Pod& pod) const;
  // all_models_ of shape_ (0 when a model id is 64 or more: term 3 off).
  uint64_t models_with_gpus() const;
  // Adds a GPU pod's request of `milli` with facts `f` to the demand per model set and per class,
  // and gives a set seen for the first time its row of p_A; returns true for a new row.
  bool add_demand(const ShapeFacts& f, double milli);
  ShapeFacts facts(const Pod& pod) const;
  // F decrease of the best placement on node n, and for a sharing pod its GPU (-1: none fits).
  std::pair<double, int32_t> frag_gain(const Pod& pod, const ClusterState& state, NodeId n) const;
  uint64_t model_set_of(std::string_view gpu_spec) const;
  double pressure_of(double share) const;
  // Re-computes the pressures from the free capacity of `state`; true if one was replaced.
  bool refresh_pressures(const ClusterState& state);
  // refresh_pressures' per-node term, usable free GPU milli (free minus stranded), kept per slot
  // with the ClusterState::version() it was computed at, for the state of that identity() and the
  // ratios r_cpu_, r_memory_ then: only the nodes changed since are computed again, and the sums
  // add the same values in the same order, so the pressures are the same to the bit.
  struct UsableSlot {
    uint64_t version = 0;  // 0: not computed
    double usable = 0;
    bool counted = false;  // the node has free GPU milli (a node without counts nothing)
  };
  std::vector<UsableSlot> usable_;
  uint64_t usable_state_ = 0;  // ClusterState::identity() of usable_
  double usable_r_cpu_ = 0, usable_r_memory_ = 0;

  bool follows_state_ = false;  // made without an outlook: nodes_changed() re-reads the state's nodes

  std::vector<std::string> gpu_models_;
  CapacityOutlook outlook_;
  ClusterShape shape_;
  GpufleetParams params_;
  OnlineFragmentation online_;
  uint64_t generation_ = 0;
  // Running sums over the GPU pods seen, and the estimates last refreshed from them.
  double cpu_sum_ = 0, memory_sum_ = 0, gpu_sum_ = 0;
  uint64_t all_models_ = 0;  // the set of every model with GPUs (0 when term 3 is off)
  std::unordered_map<uint64_t, double> set_demand_milli_;  // per constrained model set: gpu_milli seen
  std::vector<double> class_pinned_milli_;                  // per class: gpu_milli of pods pinned to it
  double r_cpu_ = 0, r_memory_ = 0;
  // p_A(m): per model set A of a pod seen (and all_models_), per model id.
  std::unordered_map<uint64_t, std::vector<double>> pressure_;
  std::vector<double> class_pressure_;  // p(c)
  // Keys view the spec strings held in specs_ (node-based: stable addresses).
  std::unordered_set<std::string> specs_;
  // Per request shape observed: its facts, the gpu_milli the pods of that shape requested, and its
  // first pod (nodes_changed() computes the facts again from it).
  struct SeenShape {
    ShapeFacts facts;
    double milli = 0;
    Pod first;
  };
  std::unordered_map<ShapeId, SeenShape, ShapeIdHash> facts_;
  // The last GPU pod observed (the pod the scheduler is about to score on every node): its facts and
  // its p_A row, so that score() need not look them up per node. Rows are never erased (stable).
  struct Last {
    ShapeId id;
    ShapeFacts facts;
    const std::vector<double>* row = nullptr;
  };
  std::optional<Last> last_;
};

}  // namespace gpufleet::sched
