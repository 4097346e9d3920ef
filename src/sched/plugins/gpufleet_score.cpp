#include "sched/plugins/gpufleet_score.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "model/gpu_spec.h"
#include "sched/plugins/fgd_online_score.h"
#include "sched/plugins/fgd_score.h"

namespace gpufleet::sched {

ClusterShape ClusterShape::of(const ClusterState& state) {
  ClusterShape shape;
  shape.gpus_by_model = state.gpu_count_by_model();
  for (NodeId n = 0; n < state.node_count(); ++n) {
    const Node& node = state.node(n);
    const NodeClass key{state.gpu_model_id(n), node.gpu_count, node.cpu_milli, node.memory_mib, 0};
    auto it = std::find_if(shape.classes.begin(), shape.classes.end(), [&key](const NodeClass& c) {
      return c.model_id == key.model_id && c.gpu_count == key.gpu_count && c.cpu_milli == key.cpu_milli &&
             c.memory_mib == key.memory_mib;
    });
    if (it == shape.classes.end()) it = shape.classes.insert(shape.classes.end(), key);
    it->gpus += node.gpu_count;
    shape.class_of_node.push_back(static_cast<int32_t>(it - shape.classes.begin()));
  }
  return shape;
}

GpufleetScore::GpufleetScore(std::vector<std::string> gpu_models, ClusterShape shape, GpufleetParams params)
    : gpu_models_(std::move(gpu_models)),
      shape_(std::move(shape)),
      params_(params),
      measure_(std::make_shared<const FragmentationMeasure>(std::vector<TypicalPod>{}, gpu_models_)),
      pinned_gpu_milli_(shape_.gpus_by_model.size(), 0.0),
      pressure_(shape_.gpus_by_model.size(), 0.0),
      class_pinned_milli_(shape_.classes.size(), 0.0),
      class_pressure_(shape_.classes.size(), 0.0) {
  if (!shape_.gpus_by_model.empty() && shape_.gpus_by_model.size() != gpu_models_.size())
    throw std::invalid_argument("GpufleetScore: gpus_by_model must have one entry per GPU model");
  for (const auto& c : shape_.classes)
    if (c.model_id < 0 || static_cast<size_t>(c.model_id) >= gpu_models_.size())
      throw std::invalid_argument("GpufleetScore: node class with an unknown GPU model id");
  for (int64_t g : shape_.gpus_by_model) total_gpus_ += g;
}

int32_t GpufleetScore::pinned_class(const Pod& pod) const {
  int32_t found = -1;
  for (size_t c = 0; c < shape_.classes.size(); ++c) {
    const auto& k = shape_.classes[c];
    if (k.gpus == 0 || k.gpu_count < pod.num_gpu || k.cpu_milli < pod.nonzero_cpu_milli() || k.memory_mib < pod.memory_mib ||
        !gpu_spec_allows(pod.gpu_spec, gpu_models_[static_cast<size_t>(k.model_id)]))
      continue;
    if (found >= 0) return -1;
    found = static_cast<int32_t>(c);
  }
  return found;
}

GpufleetScore::ShapeFacts GpufleetScore::facts(const Pod& pod) const {
  if (const auto it = facts_.find(ShapeId{pod.gpu_spec, pod.nonzero_cpu_milli(), pod.memory_mib, pod.num_gpu}); it != facts_.end())
    return it->second;
  return ShapeFacts{allowed_model_count(pod.gpu_spec), pinned_class(pod)};  // a pod scored without observe()
}

double GpufleetScore::pressure_of(double pinned_milli, int64_t gpus) const {
  if (gpus <= 0 || gpu_sum_ <= 0) return 0.0;
  const double rho = (pinned_milli / gpu_sum_) / (static_cast<double>(gpus) / static_cast<double>(total_gpus_));
  return std::clamp((rho - params_.model_pressure_threshold) / (1.0 - params_.model_pressure_threshold), 0.0, 1.0);
}

int32_t GpufleetScore::allowed_model_count(const std::string& spec) const {
  int32_t count = 0;
  for (size_t m = 0; m < shape_.gpus_by_model.size(); ++m)
    if (shape_.gpus_by_model[m] > 0 && gpu_spec_allows(spec, gpu_models_[m])) ++count;
  return count;
}

void GpufleetScore::observe(const Pod& pod) {
  estimator_.add(pod);
  if (pod.is_gpu_pod()) {
    const auto milli = static_cast<double>(pod.gpu_request_milli());
    cpu_sum_ += static_cast<double>(pod.nonzero_cpu_milli());
    memory_sum_ += static_cast<double>(pod.memory_mib);
    gpu_sum_ += milli;
    const ShapeId id{pod.gpu_spec, pod.nonzero_cpu_milli(), pod.memory_mib, pod.num_gpu};
    auto it = facts_.find(id);
    if (it == facts_.end()) it = facts_.emplace(id, ShapeFacts{allowed_model_count(pod.gpu_spec), pinned_class(pod)}).first;
    if (!pod.gpu_spec.empty() && it->second.allowed_models == 1) {
      for (size_t m = 0; m < shape_.gpus_by_model.size(); ++m)
        if (shape_.gpus_by_model[m] > 0 && gpu_spec_allows(pod.gpu_spec, gpu_models_[m])) pinned_gpu_milli_[m] += milli;
    }
    if (const int32_t c = it->second.pinned_class; c >= 0) class_pinned_milli_[static_cast<size_t>(c)] += milli;
  }
  if (!OnlineFgdScore::refresh_point(estimator_.pods_seen())) return;
  // Keep the current estimates (and the scheduler's cached scores) while they barely move.
  bool changed = false;
  std::vector<TypicalPod> mix = estimator_.mix(params_.mix_coverage);
  if (mix_distance(mix, measure_->mix()) >= kMinMixChange) {
    measure_ = std::make_shared<const FragmentationMeasure>(std::move(mix), gpu_models_);
    changed = true;
  }
  if (gpu_sum_ > 0) {
    const auto moved = [](double now, double was) { return std::abs(now - was) > kMinRatioChange * std::max(std::abs(was), 1e-12); };
    const double r_cpu = cpu_sum_ / gpu_sum_;
    const double r_memory = memory_sum_ / gpu_sum_;
    if (moved(r_cpu, r_cpu_) || moved(r_memory, r_memory_)) {
      r_cpu_ = r_cpu;
      r_memory_ = r_memory;
      changed = true;
    }
    const auto refresh = [&](std::vector<double>& pressure, const std::vector<double>& pinned, auto gpus_of) {
      for (size_t i = 0; i < pressure.size(); ++i) {
        const double p = pressure_of(pinned[i], gpus_of(i));
        if (std::abs(p - pressure[i]) >= kMinMixChange || (p == 0.0) != (pressure[i] == 0.0)) {
          pressure[i] = p;
          changed = true;
        }
      }
    };
    refresh(pressure_, pinned_gpu_milli_, [this](size_t m) { return shape_.gpus_by_model[m]; });
    refresh(class_pressure_, class_pinned_milli_, [this](size_t c) { return shape_.classes[c].gpus; });
  }
  if (changed) ++generation_;
}

double GpufleetScore::stranded_milli(int64_t gpu_free_milli, int64_t cpu_free_milli, int64_t memory_free_mib) const {
  const auto g = static_cast<double>(gpu_free_milli);
  double stranded = 0.0;
  if (r_cpu_ > 0) stranded = std::max(stranded, g - static_cast<double>(cpu_free_milli) / r_cpu_);
  if (r_memory_ > 0) stranded = std::max(stranded, g - static_cast<double>(memory_free_mib) / r_memory_);
  return std::min(g, stranded);
}

double GpufleetScore::model_pressure(int32_t model_id) const {
  const auto m = static_cast<size_t>(model_id);
  return m < pressure_.size() ? pressure_[m] : 0.0;
}

double GpufleetScore::class_pressure(int32_t class_id) const {
  const auto c = static_cast<size_t>(class_id);
  return c < class_pressure_.size() ? class_pressure_[c] : 0.0;
}

GpufleetScore::Choice GpufleetScore::evaluate(const Pod& pod, const ClusterState& state, NodeId n) const {
  Choice choice;
  std::array<double, kMaxGpusPerNode> after{};
  const double before = fgd_frag_before_after(*measure_, pod, state, n, after);
  double frag_gain = before - after[0];
  if (pod.is_share_pod()) {
    const auto free = state.gpu_free_milli(n);
    for (size_t i = 0; i < free.size(); ++i) {
      if (free[i] < pod.gpu_milli) continue;
      if (choice.gpu < 0 || before - after[i] > frag_gain) {
        frag_gain = before - after[i];
        choice.gpu = static_cast<int32_t>(i);
      }
    }
  }
  const int64_t gpu_free = state.gpu_free_milli_total(n);
  const double strand_gain =
      stranded_milli(gpu_free, state.cpu_free_milli(n), state.memory_free_mib(n)) -
      stranded_milli(gpu_free - pod.gpu_request_milli(), state.cpu_free_milli(n) - pod.nonzero_cpu_milli(),
                     state.memory_free_mib(n) - pod.memory_mib);
  double pressure = 0.0;
  const bool pressed = model_pressure(state.gpu_model_id(n)) > 0 ||
                       (n < shape_.class_of_node.size() && class_pressure(shape_.class_of_node[n]) > 0);
  const ShapeFacts f = pod.is_gpu_pod() && pressed ? facts(pod) : ShapeFacts{};
  if (pod.is_gpu_pod() && model_pressure(state.gpu_model_id(n)) > 0 && f.allowed_models > 1)
    pressure = params_.model_pressure_weight * model_pressure(state.gpu_model_id(n)) *
               static_cast<double>(pod.gpu_request_milli());
  if (n < shape_.class_of_node.size()) {
    const int32_t c = shape_.class_of_node[n];
    if (class_pressure(c) > 0 && !(pod.is_gpu_pod() && f.pinned_class == c)) {
      const double size = std::max(static_cast<double>(pod.gpu_request_milli()),
                                    r_cpu_ > 0 ? static_cast<double>(pod.nonzero_cpu_milli()) / r_cpu_ : 0.0);
      pressure += params_.class_pressure_weight * class_pressure(c) * size;
    }
  }
  choice.x = frag_gain + params_.strand_weight * strand_gain - pressure;
  return choice;
}

int32_t GpufleetScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  const double x = evaluate(pod, state, n).x / params_.sigmoid_scale_milli;
  return static_cast<int32_t>(1.0 / (1.0 + std::exp(-x)) * 100.0);
}

int32_t GpufleetScore::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return evaluate(pod, state, n).gpu;
}

}  // namespace gpufleet::sched
