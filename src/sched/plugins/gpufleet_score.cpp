#include "sched/plugins/gpufleet_score.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <tuple>

#include "model/gpu_spec.h"
#include "sched/framework/validation.h"
#include "sched/plugins/fgd_score.h"
#include "sched/plugins/node_resources_fit.h"

namespace gpufleet::sched {
namespace {

bool within(int64_t value, int64_t reference) {
  return std::abs(static_cast<double>(value - reference)) <= kNodeClassTolerance * static_cast<double>(reference);
}

const GpufleetParams& checked(const GpufleetParams& p) {
  if (FieldErrors errs = validate_gpufleet_params(p, "args"); !errs.empty()) throw ProfileError(std::move(errs));
  return p;
}

}  // namespace

ClusterShape ClusterShape::of(const CapacityOutlook& outlook, std::span<const std::string> gpu_models) {
  ClusterShape shape;
  shape.class_of_node.assign(outlook.slot_count(), -1);
  std::vector<std::pair<int64_t, int64_t>> first;  // per class: CPU and memory of its first node
  std::vector<Node> templates;                     // per class: a node of its first slot's range
  outlook.for_each_slot([&](NodeId n, const CapacityOutlook::SlotRange& node) {
    size_t c = 0;
    while (c < shape.classes.size() &&
           !(shape.classes[c].model_id == node.gpu_model_id && shape.classes[c].gpu_count == node.gpu_count &&
             within(node.cpu_milli, first[c].first) && within(node.memory_bytes, first[c].second)))
      ++c;
    if (c == shape.classes.size()) {
      shape.classes.push_back(NodeClass{node.gpu_model_id, node.gpu_count, node.cpu_milli, node.memory_bytes, 0});
      first.emplace_back(node.cpu_milli, node.memory_bytes);
      Node t;
      t.name = "class-" + std::to_string(c);
      t.gpu_count = node.gpu_count;
      t.gpu_model = node.gpu_model_id >= 0 && static_cast<size_t>(node.gpu_model_id) < gpu_models.size()
                        ? gpu_models[static_cast<size_t>(node.gpu_model_id)]
                        : std::string();
      templates.push_back(std::move(t));
    }
    NodeClass& k = shape.classes[c];
    k.cpu_milli = std::max(k.cpu_milli, node.cpu_milli);
    k.memory_bytes = std::max(k.memory_bytes, node.memory_bytes);
    k.gpus += node.gpu_count;
    shape.class_of_node[n] = static_cast<int32_t>(c);
  });
  for (size_t c = 0; c < templates.size(); ++c) {
    Node& t = templates[c];
    t.cpu_milli = shape.classes[c].cpu_milli;
    t.memory_bytes = shape.classes[c].memory_bytes;
  }
  shape.templates = std::make_shared<const ClusterState>(std::move(templates));
  return shape;
}

size_t GpufleetScore::ShapeIdHash::operator()(const ShapeId& id) const {
  size_t h = std::hash<std::string_view>{}(id.gpu_spec);
  for (const auto v : {static_cast<uint64_t>(id.cpu_milli), static_cast<uint64_t>(id.memory_bytes), static_cast<uint64_t>(id.num_gpu)})
    h = h * 1000003u ^ std::hash<uint64_t>{}(v);
  return h;
}

GpufleetScore::GpufleetScore(const ClusterState& state, CapacityOutlook outlook, GpufleetParams params)
    : gpu_models_(state.gpu_models()),
      outlook_(std::move(outlook)),
      shape_(ClusterShape::of(outlook_, gpu_models_)),
      params_(checked(params)),
      online_(gpu_models_, params.mix_coverage),
      class_pinned_milli_(shape_.classes.size(), 0.0),
      class_pressure_(shape_.classes.size(), 0.0) {
  all_models_ = models_with_gpus();
}

uint64_t GpufleetScore::models_with_gpus() const {
  uint64_t models = 0;
  for (const auto& c : shape_.classes) {
    if (c.gpus == 0) continue;
    if (c.model_id >= 64) return 0;  // term 3 off: the sets are 64-bit masks of model ids
    models |= uint64_t{1} << c.model_id;
  }
  return models;
}

bool GpufleetScore::add_demand(const ShapeFacts& f, double milli) {
  const uint64_t set = all_models_ != 0 ? f.model_set : 0;
  if (set != 0 && set != all_models_) set_demand_milli_[set] += milli;
  bool new_set = false;
  for (const uint64_t row : {set, set != all_models_ ? all_models_ : 0})
    if (row != 0 && pressure_.try_emplace(row, gpu_models_.size(), 0.0).second) new_set = true;
  if (f.pinned_class >= 0) class_pinned_milli_[static_cast<size_t>(f.pinned_class)] += milli;
  return new_set;
}

void GpufleetScore::nodes_changed(const ClusterState& state) {
  if (!follows_state_) return;
  outlook_ = CapacityOutlook::of(state);
  ClusterShape shape = ClusterShape::of(outlook_, gpu_models_);
  // The same classes, and every node in the class it was in: each shape's facts and the demand stand;
  // only the pressures are refreshed (they keep their values unless one moves by kMinPressureChange,
  // as at any refresh), so the scheduler's memoized scores are dropped only when one does.
  const auto same_class = [](const ClusterShape::NodeClass& a, const ClusterShape::NodeClass& b) {
    return a.model_id == b.model_id && a.gpu_count == b.gpu_count && a.cpu_milli == b.cpu_milli && a.memory_bytes == b.memory_bytes;
  };
  bool same = shape.classes.size() == shape_.classes.size() &&
              std::equal(shape.classes.begin(), shape.classes.end(), shape_.classes.begin(), same_class);
  for (size_t n = 0; same && n < std::min(shape.class_of_node.size(), shape_.class_of_node.size()); ++n)
    same = shape.class_of_node[n] == shape_.class_of_node[n] || shape.class_of_node[n] < 0 || shape_.class_of_node[n] < 0;
  shape_ = std::move(shape);
  if (same) {
    if (refresh_pressures(state)) ++generation_;
    return;
  }
  all_models_ = models_with_gpus();
  class_pinned_milli_.assign(shape_.classes.size(), 0.0);
  class_pressure_.assign(shape_.classes.size(), 0.0);
  set_demand_milli_.clear();
  pressure_.clear();
  // Shapes in a fixed order (their first pods' keys), so the sums do not depend on hashing.
  std::vector<SeenShape*> shapes;
  for (auto& [id, seen] : facts_) shapes.push_back(&seen);
  std::sort(shapes.begin(), shapes.end(), [](const SeenShape* a, const SeenShape* b) {
    return std::tie(a->first.namespace_name, a->first.name) < std::tie(b->first.namespace_name, b->first.name);
  });
  for (SeenShape* seen : shapes) {
    seen->facts = compute_facts(seen->first);
    add_demand(seen->facts, seen->milli);
  }
  if (last_) {
    const ShapeFacts& f = facts_.at(last_->id).facts;
    const auto row = pressure_.find(all_models_ != 0 ? f.model_set : 0);
    last_ = Last{last_->id, f, row != pressure_.end() ? &row->second : nullptr};
  }
  refresh_pressures(state);
  ++generation_;
}

uint64_t GpufleetScore::model_set_of(std::string_view gpu_spec) const {
  uint64_t set = 0;
  for (size_t m = 0; m < gpu_models_.size() && m < 64; ++m)
    if ((all_models_ >> m & 1) != 0 && gpu_spec_allows(gpu_spec, gpu_models_[m])) set |= uint64_t{1} << m;
  return set;
}

GpufleetScore::ShapeFacts GpufleetScore::compute_facts(const Pod& pod) const {
  ShapeFacts f;
  if (pod.is_gpu_pod()) f.model_set = model_set_of(pod.gpu_spec);
  // The fit check on an empty node of each class with GPUs.
  int32_t classes = 0;
  for (size_t c = 0; c < shape_.classes.size(); ++c) {
    if (shape_.classes[c].gpus == 0 || fits(pod, *shape_.templates, static_cast<NodeId>(c)).rejected()) continue;
    ++classes;
    f.pinned_class = static_cast<int32_t>(c);
  }
  if (classes != 1) f.pinned_class = -1;
  return f;
}

GpufleetScore::ShapeFacts GpufleetScore::facts(const Pod& pod) const {
  const auto it = facts_.find(ShapeId{pod.gpu_spec, pod.cpu_milli, pod.memory_bytes, pod.num_gpu});
  return it != facts_.end() ? it->second.facts : compute_facts(pod);  // a pod scored without observe()
}

double GpufleetScore::pressure_of(double share) const {
  return std::clamp((share - params_.model_pressure_threshold) / (1.0 - params_.model_pressure_threshold), 0.0, 1.0);
}

bool GpufleetScore::refresh_pressures(const ClusterState& state) {
  if (gpu_sum_ <= 0) return false;
  // Usable free GPU milli per model and per class (free minus what CPU or memory strands).
  std::vector<double> usable_by_model(gpu_models_.size(), 0.0), usable_by_class(shape_.classes.size(), 0.0);
  // Every slot in order: a live node as it is, a slot of the outlook without one as an empty node
  // of its range (what it would be when added).
  const auto& ranges = outlook_.ranges;
  const size_t slots = std::max(state.node_count(), outlook_.slot_count());
  if (usable_state_ != state.identity() || usable_r_cpu_ != r_cpu_ || usable_r_memory_ != r_memory_) {
    usable_.clear();  // another state or other ratios: every node's term again
    usable_state_ = state.identity();
    usable_r_cpu_ = r_cpu_;
    usable_r_memory_ = r_memory_;
  }
  if (usable_.size() < state.node_count()) usable_.resize(state.node_count());
  size_t r = 0;
  for (NodeId n = 0; n < slots; ++n) {
    while (r < ranges.size() && ranges[r].first + ranges[r].count <= n) ++r;
    double usable = 0;
    int32_t model = -1;
    if (state.has_node(n)) {
      UsableSlot& slot = usable_[n];
      if (const uint64_t version = state.version(n); slot.version != version) {
        const int64_t free = state.gpu_free_milli_total(n);
        slot.counted = free != 0;
        slot.usable = slot.counted ? static_cast<double>(free) - stranded_milli(free, state.cpu_free_milli(n), state.memory_free_bytes(n)) : 0.0;
        slot.version = version;
      }
      if (!slot.counted) continue;
      usable = slot.usable;
      model = state.gpu_model_id(n);
    } else if (r < ranges.size() && ranges[r].first <= n) {
      const int64_t free = int64_t{ranges[r].gpu_count} * kGpuMilliPerGpu;
      if (free == 0) continue;
      usable = static_cast<double>(free) - stranded_milli(free, ranges[r].cpu_milli, ranges[r].memory_bytes);
      model = ranges[r].gpu_model_id;
    } else {
      continue;
    }
    const auto m = static_cast<size_t>(model);
    if (m < usable_by_model.size()) usable_by_model[m] += usable;
    if (n < shape_.class_of_node.size() && shape_.class_of_node[n] >= 0)
      usable_by_class[static_cast<size_t>(shape_.class_of_node[n])] += usable;
  }
  const double left = static_cast<double>(outlook_.gpu_capacity_milli() - state.gpu_used_milli());
  // Nothing usable left on a set's nodes: nothing to keep for its pods there (share 0).
  const auto share = [&](double demand_milli, double usable) { return usable > 0 ? demand_milli / gpu_sum_ * left / usable : 0.0; };
  bool changed = false;
  const auto replace = [&changed](double& p, double now) {
    if (std::abs(now - p) >= kMinPressureChange || (now == 0.0) != (p == 0.0)) {
      p = now;
      changed = true;
    }
  };
  // Term 3: share per constrained model set, then p_A(m) for every set A of a pod seen.
  std::vector<std::pair<uint64_t, double>> shares;
  for (const auto& [set, demand] : set_demand_milli_) {
    double usable = 0.0;
    for (size_t m = 0; m < usable_by_model.size() && m < 64; ++m)
      if ((set >> m & 1) != 0) usable += usable_by_model[m];
    shares.emplace_back(set, share(demand, usable));
  }
  for (auto& [payer, row] : pressure_)
    for (size_t m = 0; m < row.size(); ++m) {
      double sum = 0.0;
      for (const auto& [set, s] : shares)
        if ((set >> m & 1) != 0 && (set & payer) != payer) sum += s;
      replace(row[m], pressure_of(sum));
    }
  // Term 4: share per class of the pods pinned to it.
  for (size_t c = 0; c < class_pressure_.size(); ++c)
    replace(class_pressure_[c], class_pinned_milli_[c] > 0 ? pressure_of(share(class_pinned_milli_[c], usable_by_class[c])) : 0.0);
  return changed;
}

void GpufleetScore::observe(const Pod& pod, const ClusterState& state) {
  bool changed = online_.observe(pod);
  bool new_set = false;
  if (pod.is_gpu_pod()) {
    const auto milli = static_cast<double>(pod.gpu_request_milli());
    cpu_sum_ += static_cast<double>(pod.nonzero_cpu_milli());
    memory_sum_ += static_cast<double>(pod.memory_bytes);
    gpu_sum_ += milli;
    const std::string& spec = *specs_.insert(pod.gpu_spec).first;
    const ShapeId id{spec, pod.cpu_milli, pod.memory_bytes, pod.num_gpu};
    auto it = facts_.find(id);
    if (it == facts_.end()) it = facts_.emplace(id, SeenShape{compute_facts(pod), 0.0, follows_state_ ? pod : Pod{}}).first;
    it->second.milli += milli;
    // A set seen for the first time gets its row of p_A at once (below), not at the next refresh.
    new_set = add_demand(it->second.facts, milli);
    const auto row = pressure_.find(all_models_ != 0 ? it->second.facts.model_set : 0);
    last_ = Last{id, it->second.facts, row != pressure_.end() ? &row->second : nullptr};
  }
  const bool refresh_point = OnlineFragmentation::refresh_point(online_.pods_seen());
  if (refresh_point && gpu_sum_ > 0) {
    // Keep the current estimates (and the scheduler's cached scores) while they barely move.
    const auto moved = [](double now, double was) { return std::abs(now - was) > kMinRatioChange * std::abs(was); };
    const double r_cpu = cpu_sum_ / gpu_sum_;
    const double r_memory = memory_sum_ / gpu_sum_;
    if (moved(r_cpu, r_cpu_) || moved(r_memory, r_memory_)) {
      r_cpu_ = r_cpu;
      r_memory_ = r_memory;
      changed = true;
    }
  }
  if (new_set || refresh_point || online_.pods_seen() % kPressureRefreshPods == 0) changed |= refresh_pressures(state);
  if (changed) ++generation_;
}

double GpufleetScore::stranded_milli(int64_t gpu_free_milli, int64_t cpu_free_milli, int64_t memory_free_bytes) const {
  return stranded_gpu_milli(gpu_free_milli, cpu_free_milli, memory_free_bytes, r_cpu_, r_memory_);
}

double GpufleetScore::model_pressure(int32_t model_id, std::string_view gpu_spec) const {
  const auto row = pressure_.find(model_set_of(gpu_spec));
  const auto m = static_cast<size_t>(model_id);
  return row != pressure_.end() && m < row->second.size() ? row->second[m] : 0.0;
}

double GpufleetScore::class_pressure(int32_t class_id) const {
  const auto c = static_cast<size_t>(class_id);
  return c < class_pressure_.size() ? class_pressure_[c] : 0.0;
}

std::pair<double, int32_t> GpufleetScore::frag_gain(const Pod& pod, const ClusterState& state, NodeId n) const {
  std::array<double, kMaxGpusPerNode> after{};
  const double before = fgd_frag_before_after(online_.measure(), pod, state, n, after);
  if (!pod.is_share_pod()) return {before - after[0], -1};
  const int32_t gpu = first_best_gpu(state.gpu_free_milli(n), pod.gpu_milli, [&](size_t i) { return before - after[i]; });
  return {gpu < 0 ? std::nan("") : before - after[static_cast<size_t>(gpu)], gpu};
}

int64_t GpufleetScore::score(const Pod& pod, const ClusterState& state, NodeId n, const CycleState&) const {
  // A node without GPUs: F is a sum of popularity x 0 over the mix before and after a placement
  // that takes no GPU share, so the F term is exactly 0 without the two passes over the mix.
  const double gain = state.node(n).gpu_count == 0 && !pod.is_share_pod() ? 0.0 : frag_gain(pod, state, n).first;
  if (std::isnan(gain)) return 0;
  const int64_t gpu_free = state.gpu_free_milli_total(n);
  const double strand_gain =
      stranded_milli(gpu_free, state.cpu_free_milli(n), state.memory_free_bytes(n)) -
      stranded_milli(gpu_free - pod.gpu_request_milli(), state.cpu_free_milli(n) - pod.nonzero_cpu_milli(),
                     state.memory_free_bytes(n) - pod.memory_bytes);
  const int32_t c = n < shape_.class_of_node.size() ? shape_.class_of_node[n] : -1;
  const double p_class = class_pressure(c);
  double pressure = 0.0;
  if (!pressure_.empty() || p_class > 0) {
    ShapeFacts f;
    const std::vector<double>* row = nullptr;
    if (pod.is_gpu_pod()) {
      if (last_ && last_->id == ShapeId{pod.gpu_spec, pod.cpu_milli, pod.memory_bytes, pod.num_gpu}) {
        f = last_->facts;
        row = last_->row;
      } else {
        f = facts(pod);
        const auto it = pressure_.find(f.model_set);
        if (it != pressure_.end()) row = &it->second;
      }
    }
    const auto request = static_cast<double>(pod.gpu_request_milli());
    const auto m = static_cast<size_t>(state.gpu_model_id(n));
    if (row != nullptr && m < row->size()) pressure += params_.model_pressure_weight * (*row)[m] * request;
    if (p_class > 0 && f.pinned_class != c) {
      const double size = std::max(request, r_cpu_ > 0 ? static_cast<double>(pod.nonzero_cpu_milli()) / r_cpu_ : 0.0);
      pressure += params_.class_pressure_weight * p_class * size;
    }
  }
  return fgd_sigmoid_score(gain + params_.strand_weight * strand_gain - pressure, params_.sigmoid_scale_milli);
}

int32_t GpufleetScore::select_share_gpu(const Pod& pod, const ClusterState& state, NodeId n, GoRand&) const {
  return frag_gain(pod, state, n).second;
}

}  // namespace gpufleet::sched
