#include "sched/fragmentation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "model/gpu_spec.h"

namespace gpufleet::sched {

std::vector<TypicalPod> typical_pod_mix(std::span<const Pod> pods, double coverage) {
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string>;
  std::map<Key, int64_t> counts;
  for (const Pod& pod : pods) {
    const bool gpu = pod.is_gpu_pod();
    ++counts[Key{pod.nonzero_cpu_milli(), gpu ? pod.gpu_milli : 0, gpu ? pod.num_gpu : 0, gpu ? pod.gpu_spec : ""}];
  }
  std::vector<std::pair<Key, int64_t>> sorted(counts.begin(), counts.end());
  // Count descending; ties by key descending (cpu, then milli, then num, then spec).
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  const auto total = static_cast<double>(pods.size());
  std::vector<TypicalPod> mix;
  int64_t covered = 0;
  for (const auto& [key, count] : sorted) {
    if (static_cast<double>(covered) >= coverage * total) break;
    covered += count;
    mix.push_back(TypicalPod{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), count, 0.0});
  }
  for (TypicalPod& t : mix) t.popularity = static_cast<double>(t.count) / static_cast<double>(covered);
  return mix;
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

}  // namespace gpufleet::sched
