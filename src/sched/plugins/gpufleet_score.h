// gpufleet's own placement policy ("gpufleet", the default of every command that places pods).
//
// It scores a node by how much a placement there adds to three kinds of stranded GPU capacity, all
// estimated online from what a live scheduler knows: the cluster state, the pods seen so far
// (observe(), the informer hook) and the pod being placed. Nothing about future arrivals or the
// whole trace is used.
//
//  1. Fragmentation F(n) (FGD, Weng et al. ATC'23; sched/fragmentation.h), with the typical pod mix
//     estimated from the pods seen so far (PodMixEstimator, no decay, 95% coverage).
//  2. GPUs stranded by exhausted CPU or memory (the FGD paper counts a GPU as fragmented only when a
//     typical pod's CPU no longer fits; its section 7 leaves other resources as future work):
//       S(n) = min(G, max(G - cpu_free / r_cpu, G - memory_free / r_mem, 0)),
//     G = free gpu_milli of node n, r_cpu = CPU milli and r_mem = memory MiB that the GPU pods seen
//     so far request per gpu_milli (sum of requests / sum of gpu_milli). S is the free GPU capacity
//     that the node's remaining CPU or memory cannot feed at the workload's own ratio. Placing a
//     CPU-only or CPU-heavy pod on a GPU-dense node (e.g. 8 GPUs, 96 cores) raises S there; on a
//     CPU-rich node (2 GPUs, 104 cores) it does not.
//  3. Scarce GPU models: for each model m, rho(m) = (share of the GPU demand seen that allows only m)
//     / (m's share of the cluster's GPUs). A pod that may use several models pays
//     kModelPressureWeight x p(m) x its gpu_milli on a node of model m, where
//     p(m) = clamp((rho(m) - 0.3) / 0.7, 0, 1): the models that pods pinned to them will need are
//     left to those pods. A pod allowed a single model pays nothing.
//  4. Scarce node shapes: the same with node classes (GPU model, GPU count, CPU, memory) in place of
//     models. A GPU pod that fits an empty node of one class only (e.g. 8 GPUs with 120 cores: only
//     the 128-core 8-GPU nodes) is pinned to it; rho(c) = (share of the GPU demand seen pinned to c)
//     / (c's share of the cluster's GPUs), p(c) as above. Every other pod pays
//     kClassPressureWeight x p(c) x its size on a node of class c, size = max(gpu_milli,
//     cpu_milli / r_cpu): CPU-only pods count by the GPUs their CPU would feed. This keeps CPU-only
//     and small pods off the only nodes that big pods fit.
//
// Score of node n for pod p (higher is better; ties go to the node rank, scheduler.h):
//     x = (F(n) - F(n')) + (S(n) - S(n')) - model pressure - class pressure,   score = int(100 / (1 + e^(-x / 2000)))
// with n' the node after the placement. A sharing pod goes to the GPU with the largest F(n) - F(n'_i)
// (first index on ties); S and the pressure do not depend on the GPU.
//
// Parameters are fixed (GpufleetParams) and the same for every workload. They were chosen on the
// openb default trace and the variants cpu250, gpushare40, gpuspec10/20/33 and multigpu40; README
// "Online policies" has the results on all 20 traces.
//
// Estimates are re-computed when the number of pods seen reaches 1, 2, 4, ..., 1024 and then every
// 1024 pods (OnlineFgdScore::refresh_point). Each is replaced only when it moved: the mix by at least
// kMinMixChange (L1), r_cpu or r_mem by kMinRatioChange (relative), a pressure p by kMinMixChange or
// to or from 0. Any replacement changes generation(), which empties the scheduler's score cache; on a
// steady workload the estimates settle and the cache stays warm.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "sched/fragmentation.h"
#include "sched/framework.h"
#include "sched/plugins/fgd_online_score.h"
#include "sched/pod_mix_estimator.h"

namespace gpufleet::sched {

/// The cluster facts gpufleet's pressure terms need: GPUs per model and per node class.
struct ClusterShape {
  /// A node class: nodes with the same GPU model, GPU count, CPU and memory.
  struct NodeClass {
    int32_t model_id = 0;
    int32_t gpu_count = 0;
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;
    int64_t gpus = 0;  ///< physical GPUs over all nodes of the class
  };
  std::vector<int64_t> gpus_by_model;  ///< ClusterState::gpu_count_by_model()
  std::vector<NodeClass> classes;      ///< in order of first node
  std::vector<int32_t> class_of_node;  ///< index into classes, per NodeId
  /// The shape of `state`'s nodes (their capacities; what is allocated does not matter).
  static ClusterShape of(const ClusterState& state);
};

/// Smallest relative change of r_cpu or r_mem that refreshes them (and empties the score cache).
inline constexpr double kMinRatioChange = 0.02;

/// gpufleet's fixed parameters.
struct GpufleetParams {
  double mix_coverage = 0.95;              ///< share of the pods seen the typical mix covers
  double sigmoid_scale_milli = 2000.0;     ///< x is divided by this before the sigmoid
  double strand_weight = 1.0;              ///< weight of S (stranded by CPU or memory), per gpu_milli
  double model_pressure_weight = 2.0;      ///< pressure per gpu_milli on a fully pressed model
  double model_pressure_threshold = 0.3;   ///< rho below which a model or class is not pressed
  double class_pressure_weight = 1.0;      ///< pressure per gpu_milli on a fully pressed node class
};

class GpufleetScore final : public ScorePlugin, public GpuSelector {
 public:
  /// `gpu_models`: ClusterState::gpu_models(); `shape`: ClusterShape::of(state) for the state that
  /// will be scored, or an empty ClusterShape to turn both pressure terms off. Throws
  /// std::invalid_argument when shape.gpus_by_model is neither empty nor one entry per model.
  GpufleetScore(std::vector<std::string> gpu_models, ClusterShape shape, GpufleetParams params = {});
  std::string_view name() const override { return "GpufleetScore"; }
  void observe(const Pod& pod) override;
  uint64_t generation() const override { return generation_; }
  int32_t score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const override;
  int32_t select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand& rng) const override;

  /// S(n) for a node with `gpu_free_milli` free GPU milli, `cpu_free_milli` and `memory_free_mib`
  /// left, in gpu_milli, at the current ratios (0 before any GPU pod was seen).
  double stranded_milli(int64_t gpu_free_milli, int64_t cpu_free_milli, int64_t memory_free_mib) const;
  /// p(m) of model id m at the current estimate, in [0, 1].
  double model_pressure(int32_t model_id) const;
  /// p(c) of node class c (an index into ClusterShape::classes) at the current estimate, in [0, 1].
  double class_pressure(int32_t class_id) const;
  /// CPU milli per gpu_milli requested by the GPU pods seen so far (r_cpu; 0 before any).
  double cpu_per_gpu_milli() const { return r_cpu_; }
  /// Memory MiB per gpu_milli requested by the GPU pods seen so far (r_mem; 0 before any).
  double memory_per_gpu_milli() const { return r_memory_; }
  /// The fragmentation measure in use.
  const FragmentationMeasure& measure() const { return *measure_; }

 private:
  struct Choice {
    double x = 0;      // the score's argument before scaling, gpu_milli
    int32_t gpu = -1;  // sharing pods: the GPU
  };
  Choice evaluate(const Pod& pod, const ClusterState& state, NodeId n) const;
  // How many models with GPUs `spec` allows (every model for an empty spec).
  int32_t allowed_model_count(const std::string& spec) const;
  // The one node class an empty node of which fits the GPU pod, or -1 (none, or several).
  int32_t pinned_class(const Pod& pod) const;
  double pressure_of(double pinned_milli, int64_t gpus) const;

  std::vector<std::string> gpu_models_;
  ClusterShape shape_;
  int64_t total_gpus_ = 0;
  GpufleetParams params_;
  PodMixEstimator estimator_;
  std::shared_ptr<const FragmentationMeasure> measure_;
  uint64_t generation_ = 0;
  // Running sums over the GPU pods seen, and the estimates last refreshed from them.
  double cpu_sum_ = 0, memory_sum_ = 0, gpu_sum_ = 0;
  std::vector<double> pinned_gpu_milli_;  // per model: gpu_milli of pods allowed only that model
  double r_cpu_ = 0, r_memory_ = 0;
  std::vector<double> pressure_;  // p(m)
  std::vector<double> class_pinned_milli_;  // per class: gpu_milli of pods pinned to it
  std::vector<double> class_pressure_;      // p(c)
  // Per request shape seen (gpu_spec, CPU, memory, GPUs): the allowed model count and pinned class,
  // filled by observe() so that scoring does not parse gpu_spec per node.
  struct ShapeFacts {
    int32_t allowed_models = 0;
    int32_t pinned_class = -1;
  };
  using ShapeId = std::tuple<std::string, int64_t, int64_t, int32_t>;
  ShapeFacts facts(const Pod& pod) const;
  std::map<ShapeId, ShapeFacts> facts_;
};

}  // namespace gpufleet::sched
