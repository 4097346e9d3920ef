#include "sched/gpu/fragmentation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "model/gpu_spec.h"

namespace gpufleet::sched {

PodShapeKey PodShapeKey::of(const Pod& pod) {
  const bool gpu = pod.is_gpu_pod();
  return PodShapeKey{pod.nonzero_cpu_milli(), gpu ? pod.gpu_milli : 0, gpu ? pod.num_gpu : 0, gpu ? pod.gpu_spec : ""};
}

std::vector<TypicalPod> select_typical_pods(std::vector<std::pair<PodShapeKey, double>> weighted, double coverage) {
  // Weight descending; ties by key descending (cpu, then milli, then num, then spec).
  std::stable_sort(weighted.begin(), weighted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return b.first < a.first;
  });
  double total = 0;
  for (const auto& w : weighted) total += w.second;
  std::vector<TypicalPod> mix;
  double covered = 0;
  for (const auto& [key, weight] : weighted) {
    if (covered >= coverage * total || weight <= 0) break;
    covered += weight;
    mix.push_back(TypicalPod{key.cpu_milli, key.gpu_milli, key.num_gpu, key.gpu_spec, static_cast<int64_t>(std::llround(weight)), weight});
  }
  for (TypicalPod& t : mix) t.popularity /= covered;
  return mix;
}

std::vector<TypicalPod> typical_pod_mix(std::span<const Pod> pods, double coverage) {
  std::map<PodShapeKey, int64_t> counts;
  for (const Pod& pod : pods) ++counts[PodShapeKey::of(pod)];
  std::vector<std::pair<PodShapeKey, double>> weighted;
  for (const auto& [key, count] : counts) weighted.emplace_back(key, static_cast<double>(count));
  return select_typical_pods(std::move(weighted), coverage);
}

FragmentationMeasure::FragmentationMeasure(std::vector<TypicalPod> mix, const std::vector<std::string>& gpu_models)
    : mix_(std::move(mix)), model_count_(gpu_models.size()), access_(mix_.size() * gpu_models.size()) {
  for (size_t t = 0; t < mix_.size(); ++t)
    for (size_t m = 0; m < model_count_; ++m)
      access_[t * model_count_ + m] = gpu_spec_allows(mix_[t].gpu_spec, gpu_models[m]) ? 1 : 0;
}

double FragmentationMeasure::node_frag_milli(int64_t cpu_free_milli, std::span<const int32_t> gpu_free,
                                             int32_t model_id) const {
  int64_t idle = 0;
  for (int32_t left : gpu_free) idle += left;
  const auto idle_d = static_cast<double>(idle);
  double frag = 0.0;
  for (size_t t = 0; t < mix_.size(); ++t) {
    const TypicalPod& type = mix_[t];
    if (type.gpu_milli == 0 || !access_[t * model_count_ + static_cast<size_t>(model_id)]) {
      frag += type.popularity * idle_d;  // CPU-only (XL/XR) and NoAccess types: all idle GPU is fragment
      continue;
    }
    int32_t fitting = 0;
    int64_t stranded = 0;  // free gpu_milli on GPUs too small for the type
    for (int32_t left : gpu_free) {
      if (left >= type.gpu_milli) ++fitting;
      else stranded += left;
    }
    if (fitting >= type.num_gpu && cpu_free_milli >= type.cpu_milli) {
      frag += type.popularity * static_cast<double>(stranded);  // Q3: only the too-small GPUs
    } else {
      frag += type.popularity * idle_d;  // Q1, Q2, Q4
    }
  }
  return frag;
}

double FragmentationMeasure::node_frag_after_share(int64_t cpu_free_milli, std::span<const int32_t> gpu_free,
                                                   int32_t model_id, int64_t cpu_req_milli, int32_t gpu_milli,
                                                   std::span<double> after) const {
  const size_t gpus = gpu_free.size();
  int64_t idle = 0;
  for (int32_t left : gpu_free) idle += left;
  const auto idle_d = static_cast<double>(idle);
  const auto idle_after = static_cast<double>(idle - gpu_milli);
  const int64_t cpu_after = cpu_free_milli - cpu_req_milli;
  // GPUs with equal free milli give equal results (F ignores GPU identity): evaluate each distinct
  // fitting value once, then copy.
  std::array<int32_t, kMaxGpusPerNode> distinct{};
  std::array<double, kMaxGpusPerNode> distinct_after{};
  size_t n_distinct = 0;
  for (size_t i = 0; i < gpus; ++i) {
    if (gpu_free[i] < gpu_milli) continue;
    if (std::find(distinct.begin(), distinct.begin() + static_cast<std::ptrdiff_t>(n_distinct), gpu_free[i]) ==
        distinct.begin() + static_cast<std::ptrdiff_t>(n_distinct))
      distinct[n_distinct++] = gpu_free[i];
  }
  double before = 0.0;
  for (size_t t = 0; t < mix_.size(); ++t) {
    const TypicalPod& type = mix_[t];
    const double p = type.popularity;
    if (type.gpu_milli == 0 || !access_[t * model_count_ + static_cast<size_t>(model_id)]) {
      before += p * idle_d;
      for (size_t k = 0; k < n_distinct; ++k) distinct_after[k] += p * idle_after;
      continue;
    }
    int32_t fitting = 0;
    int64_t stranded = 0;
    for (int32_t left : gpu_free) {
      if (left >= type.gpu_milli) ++fitting;
      else stranded += left;
    }
    before += (fitting >= type.num_gpu && cpu_free_milli >= type.cpu_milli) ? p * static_cast<double>(stranded) : p * idle_d;
    for (size_t k = 0; k < n_distinct; ++k) {
      const int32_t left = distinct[k];
      const int32_t left_after = left - gpu_milli;
      const int32_t fit_after = fitting - (left >= type.gpu_milli) + (left_after >= type.gpu_milli);
      const int64_t stranded_after =
          stranded - (left < type.gpu_milli ? left : 0) + (left_after < type.gpu_milli ? left_after : 0);
      distinct_after[k] += (fit_after >= type.num_gpu && cpu_after >= type.cpu_milli)
                               ? p * static_cast<double>(stranded_after)
                               : p * idle_after;
    }
  }
  for (size_t i = 0; i < gpus; ++i) {
    if (gpu_free[i] < gpu_milli) {
      after[i] = std::nan("");
      continue;
    }
    const size_t k = static_cast<size_t>(
        std::find(distinct.begin(), distinct.begin() + static_cast<std::ptrdiff_t>(n_distinct), gpu_free[i]) - distinct.begin());
    after[i] = distinct_after[k];
  }
  return before;
}

}  // namespace gpufleet::sched
