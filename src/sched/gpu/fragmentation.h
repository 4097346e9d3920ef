// GPU fragmentation measure of the FGD paper.
//
// Source: Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
// Gradient Descent", USENIX ATC'23, section 3; simulator hkust-adsl/kubernetes-scheduler-simulator
// pkg/utils/frag.go (GetTypicalPods, NodeGpuShareFragAmount, GetNodePodFrag).
//
// A node's fragmentation F(n), in gpu_milli, is the expected amount of its idle GPU capacity that a
// pod drawn from the "typical pod" mix could not use:
//   F(n) = sum_t p_t * frag_t(n), with L = sum of the node's free gpu_milli and
//   frag_t(n) = sum of free gpu_milli of the GPUs with free < gpu_milli_t   if t fits the node
//                                                                            (enough GPUs with free >= gpu_milli_t,
//                                                                             CPU free >= cpu_t, model allowed)
//             = L                                                           otherwise, and for CPU-only t.
// Memory is not part of the measure. "Fits" here is the paper's notion, evaluated for every typical
// pod on hypothetical free vectors (node_frag_after_share), not the scheduler's fit check
// (fits() in plugins/node_resources_fit.h, which also counts memory and the pod slots).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"

namespace gpufleet::sched {

/// One entry of the typical pod mix: a request shape and its popularity (sums to 1 over the mix).
struct TypicalPod {
  int64_t cpu_milli = 0;   ///< non-zero CPU request (0 counts as 100m)
  int32_t gpu_milli = 0;   ///< per GPU
  int32_t num_gpu = 0;
  std::string gpu_spec;    ///< allowed GPU models, '|'-joined; empty = any
  int64_t count = 0;       ///< pods of this shape in the source workload
  double popularity = 0;   ///< count / (pods covered by the mix)
};

/// The typical pod mix of a workload (FGD GetTypicalPods with isInvolvedCpuPods=true,
/// podPopularityThreshold=95, podIncreaseStep=1, gpuResWeight=0): group pods on
/// (cpu_milli, gpu_milli, num_gpu, gpu_spec), sort by count descending, ties by that key descending,
/// take the shortest prefix covering >= `coverage` of all pods and renormalize.
/// An empty input gives an empty mix (F is then 0 everywhere).
std::vector<TypicalPod> typical_pod_mix(std::span<const Pod> pods, double coverage = 0.95);

/// The key FGD groups pods on: (non-zero cpu_milli, gpu_milli, num_gpu, gpu_spec); CPU-only pods
/// have 0 GPU fields and an empty spec.
struct PodShapeKey {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;
  int32_t num_gpu = 0;
  std::string gpu_spec;
  static PodShapeKey of(const Pod& pod);
  auto operator<=>(const PodShapeKey&) const = default;
};

/// The selection step of typical_pod_mix on weighted shapes: sort by weight descending, ties by key
/// descending, keep the shortest prefix whose weight reaches `coverage` of the total, renormalize.
std::vector<TypicalPod> select_typical_pods(std::vector<std::pair<PodShapeKey, double>> weighted, double coverage);

/// GPUs stranded by exhausted CPU or memory, in gpu_milli: the free GPU capacity that a node's
/// remaining CPU or memory cannot feed at the workload's own CPU-per-GPU and memory-per-GPU ratio
/// (gpufleet's measure, term 2 of sched/plugins/gpufleet_score.h; docs/fgd-reproduction.md "Online
/// policies"):
///   S = min(G, max(G - cpu_free / r_cpu, G - memory_free / r_mem, 0))
/// with G = gpu_free_milli, r_cpu = CPU milli and r_mem = memory bytes the GPU pods request per
/// gpu_milli (sum of non-zero CPU requests, resp. memory requests, over sum of gpu_milli). A ratio of 0
/// (no GPU pod known) drops its term; both 0 gives 0.
inline double stranded_gpu_milli(int64_t gpu_free_milli, int64_t cpu_free_milli, int64_t memory_free_bytes,
                                 double cpu_milli_per_gpu_milli, double memory_bytes_per_gpu_milli) {
  const auto g = static_cast<double>(gpu_free_milli);
  double stranded = 0.0;
  if (cpu_milli_per_gpu_milli > 0) stranded = std::max(stranded, g - static_cast<double>(cpu_free_milli) / cpu_milli_per_gpu_milli);
  if (memory_bytes_per_gpu_milli > 0)
    stranded = std::max(stranded, g - static_cast<double>(memory_free_bytes) / memory_bytes_per_gpu_milli);
  return std::min(g, stranded);
}

/// F(n) bound to one cluster's GPU models (model access is precomputed per model id).
class FragmentationMeasure {
 public:
  FragmentationMeasure(std::vector<TypicalPod> mix, const std::vector<std::string>& gpu_models);

  /// F for a node with the given free CPU (milli), per-GPU free gpu_milli and model id, in gpu_milli.
  double node_frag_milli(int64_t cpu_free_milli, std::span<const int32_t> gpu_free_milli, int32_t model_id) const;
  /// F of node n in its current state.
  double node_frag_milli(const ClusterState& state, NodeId n) const {
    return node_frag_milli(state.cpu_free_milli(n), state.gpu_free_milli(n), state.gpu_model_id(n));
  }
  /// F before and after placing a sharing pod (cpu_req_milli, gpu_milli on one GPU) on each GPU:
  /// after[i] = F with gpu_free[i] reduced by gpu_milli and CPU reduced by cpu_req_milli, or NaN when
  /// GPU i has less than gpu_milli free. Same values as calling node_frag_milli on each variant,
  /// computed incrementally (O(types x GPUs) instead of O(types x GPUs^2)). Returns F before.
  double node_frag_after_share(int64_t cpu_free_milli, std::span<const int32_t> gpu_free_milli, int32_t model_id,
                               int64_t cpu_req_milli, int32_t gpu_milli, std::span<double> after) const;
  const std::vector<TypicalPod>& mix() const { return mix_; }

 private:
  std::vector<TypicalPod> mix_;
  size_t model_count_;
  std::vector<uint8_t> access_;  // [type * model_count_ + model_id]
};

}  // namespace gpufleet::sched
