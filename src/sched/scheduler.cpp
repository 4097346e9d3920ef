#include "sched/scheduler.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sched/device_select.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_preference.h"

namespace gpufleet::sched {
namespace {

// Cache entries hold a score, or INT32_MIN + FilterCode for a node the filters rejected.
constexpr int32_t kMinScore = INT32_MIN + static_cast<int32_t>(kFilterCodeCount);
static_assert(kFilterCodeCount <= 16, "ScorePlugin promises that only scores below INT32_MIN + 16 are clamped");
int32_t infeasible(FilterCode code) { return INT32_MIN + static_cast<int32_t>(code); }

// An injective encoding of everything besides the request that filters and scores may read: the
// namespace, labels and PodConstraints (length-prefixed strings, count-prefixed lists). Pods without
// any (the openb trace) get "" and share one cache entry per request shape.
void put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}
void put(std::string& out, const Labels& labels) {
  put(out, std::to_string(labels.size()));
  for (const auto& [k, v] : labels) {
    put(out, k);
    put(out, v);
  }
}
void put(std::string& out, const std::vector<std::string>& values) {
  put(out, std::to_string(values.size()));
  for (const auto& v : values) put(out, v);
}
void put(std::string& out, const std::vector<SelectorRequirement>& requirements) {
  put(out, std::to_string(requirements.size()));
  for (const auto& r : requirements) {
    put(out, r.key);
    put(out, r.operator_);
    put(out, r.values);
  }
}
void put(std::string& out, const NodeSelectorTerm& t) {
  put(out, t.match_expressions);
  put(out, t.match_fields);
}
void put(std::string& out, const PodAffinityTerm& t) {
  put(out, t.label_selector.match_labels);
  put(out, t.label_selector.match_expressions);
  put(out, t.namespaces);
  put(out, t.topology_key);
  put(out, t.has_label_selector ? "1" : "0");
}

std::string constraints_key(const Pod& pod) {
  const PodConstraints& c = pod.constraints;
  if (pod.namespace_name.empty() && pod.labels.empty() && c.node_selector.empty() && c.required_node_affinity.empty() &&
      c.preferred_node_affinity.empty() && c.tolerations.empty() && c.required_anti_affinity.empty() &&
      c.preferred_anti_affinity.empty() && c.required_affinity.empty() && c.preferred_affinity.empty())
    return {};
  std::string out;
  put(out, pod.namespace_name);
  put(out, pod.labels);
  put(out, c.node_selector);
  put(out, std::to_string(c.required_node_affinity.size()));
  for (const auto& t : c.required_node_affinity) put(out, t);
  put(out, std::to_string(c.preferred_node_affinity.size()));
  for (const auto& t : c.preferred_node_affinity) {
    put(out, std::to_string(t.weight));
    put(out, t.preference);
  }
  put(out, std::to_string(c.tolerations.size()));
  for (const auto& t : c.tolerations) {
    put(out, t.key);
    put(out, t.operator_);
    put(out, t.value);
    put(out, t.effect);
    put(out, t.toleration_seconds ? std::to_string(*t.toleration_seconds) : std::string("-"));
  }
  for (const auto& [required, preferred] : {std::pair{&c.required_anti_affinity, &c.preferred_anti_affinity},
                                            std::pair{&c.required_affinity, &c.preferred_affinity}}) {
    put(out, std::to_string(required->size()));
    for (const auto& t : *required) put(out, t);
    put(out, std::to_string(preferred->size()));
    for (const auto& t : *preferred) {
      put(out, std::to_string(t.weight));
      put(out, t.term);
    }
  }
  return out;
}

std::string mig_key(const Pod& pod) {
  std::string out;
  for (const MigRequest& r : pod.mig_requests) {
    put(out, r.profile);
    put(out, std::to_string(r.count));
  }
  return out;
}

}  // namespace

std::vector<int32_t> ScheduleResult::gpu_indices() const {
  std::vector<int32_t> out(gpus);
  out.insert(out.end(), shared_replicas.begin(), shared_replicas.end());
  for (const MigDevice& d : mig) out.push_back(d.gpu);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string ScheduleResult::mig_profiles() const {
  std::vector<std::string_view> seen;
  std::string out;
  for (const MigDevice& d : mig) {
    if (std::find(seen.begin(), seen.end(), d.profile) != seen.end()) continue;
    seen.push_back(d.profile);
    if (!out.empty()) out += ',';
    out += d.profile;
  }
  return out;
}

size_t Scheduler::ShapeKeyHash::operator()(const ShapeKey& k) const {
  size_t h = std::hash<int64_t>{}(k.cpu_milli);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<int64_t>{}(k.memory_bytes));
  mix(std::hash<int32_t>{}(k.num_gpu));
  mix(std::hash<int32_t>{}(k.gpu_milli));
  mix(std::hash<int32_t>{}(k.shared_replicas));
  mix(std::hash<std::string>{}(k.mig));
  mix(std::hash<std::string>{}(k.gpu_spec));
  mix(std::hash<std::string>{}(k.constraints));
  return h;
}

Scheduler::Scheduler(Policy policy, std::vector<uint32_t> node_rank)
    : policy_(std::move(policy)), node_rank_(std::move(node_rank)) {
  if (!policy_.score) throw std::invalid_argument("policy " + policy_.name + " has no score plugin");
  if (!policy_.gpu_selector) throw std::invalid_argument("policy " + policy_.name + " has no GPU selector");
  for (const auto& f : policy_.filters) {
    if (f->filter_cacheable()) cached_filters_.push_back(f.get());
    else has_uncached_filters_ = true;
  }
}

void Scheduler::set_node_rank(NodeId n, uint32_t rank) {
  while (node_rank_.size() <= n) node_rank_.push_back(static_cast<uint32_t>(node_rank_.size()));
  node_rank_[n] = rank;
}

FilterCode Scheduler::run_filters(const Pod& pod, const ClusterState& state, NodeId n) const {
  for (const FilterPlugin* f : cached_filters_) {
    const FilterCode code = f->filter(pod, state, n);
    if (code != FilterCode::kFits) return code;
  }
  return FilterCode::kFits;
}

int32_t Scheduler::evaluate(const Pod& pod, const ClusterState& state, NodeId n) const {
  if (!state.has_node(n)) return infeasible(FilterCode::kFits);  // an empty slot: skipped, no rejection
  const FilterCode code = run_filters(pod, state, n);
  return code == FilterCode::kFits ? std::max(policy_.score->score(pod, state, n, CycleState{}), kMinScore) : infeasible(code);
}

size_t Scheduler::shape_for(const Pod& pod, size_t node_count) {
  ShapeKey key{pod.cpu_milli,    pod.memory_bytes, pod.num_gpu, pod.gpu_milli, pod.shared_replicas, mig_key(pod),
               pod.gpu_spec, constraints_key(pod)};
  auto [it, inserted] = shape_ids_.try_emplace(std::move(key), cache_.size());
  if (inserted) {
    cache_.emplace_back(node_count);
    cache_generation_.push_back(generation_);
    preference_.emplace_back();
  }
  // Entries stay valid when slots come and go: a slot's versions never repeat (ClusterState).
  auto& entries = cache_[it->second];
  if (entries.size() < node_count) entries.resize(node_count);
  if (cache_generation_[it->second] != generation_) {  // the score changed since they were filled
    cache_generation_[it->second] = generation_;
    for (Entry& e : entries) e.version = 0;
  }
  return it->second;
}

void Scheduler::select_gpus(ScheduleResult& result, const Pod& pod, const ClusterState& state, GoRand& rng) const {
  if (state.has_gpu_sharing(result.node) || pod.has_device_requests()) {
    DeviceAssignment devices = select_devices(pod, state, result.node);
    result.gpus = std::move(devices.gpus);
    result.shared_replicas = std::move(devices.shared_replicas);
    result.mig = std::move(devices.mig);
  } else if (pod.is_share_pod()) {
    result.gpus.push_back(policy_.gpu_selector->select_share_gpu(pod, state, result.node, rng));
  } else if (pod.is_gpu_pod()) {
    result.gpus = lowest_free_gpus(state, result.node, pod.num_gpu);
  }
}

ScheduleResult Scheduler::decide(const Pod& pod, const ClusterState& state, GoRand& rng, NodeId nominated_node) {
  const size_t node_count = state.node_count();
  if (!node_rank_.empty() && node_rank_.size() < node_count)
    throw std::invalid_argument(fmt::format("scheduler has {} node ranks for {} nodes", node_rank_.size(), node_count));
  const uint32_t* rank = node_rank_.empty() ? nullptr : node_rank_.data();  // nullptr: by NodeId
  if (nominated_node != kNoNode) {
    if (!state.has_node(nominated_node))
      throw std::invalid_argument(fmt::format("nominated node {} out of range ({} nodes)", nominated_node, node_count));
    // kube schedule_one.go findNodesThatFitPod / evaluateNominatedNode, then a single feasible node
    // is chosen without scoring.
    if (FilterCycle(policy_.filters, pod, state).run(state, nominated_node) == FilterCode::kFits) {
      ScheduleResult result;
      result.node = nominated_node;
      select_gpus(result, pod, state, rng);
      return result;
    }
  }
  const size_t shape = shape_for(pod, node_count);
  auto& entries = cache_[shape];
  const ScorePlugin& scorer = *policy_.score;
  const bool cacheable = scorer.cacheable();

  // Soft node constraints first (NodePreference), when the pod or the cluster has any.
  if (node_set_version_ != state.node_set_version()) {
    node_set_version_ = state.node_set_version();
    prefer_no_schedule_ = -1;
    for (auto& pref : preference_) pref.clear();
  }
  if (prefer_no_schedule_ < 0) prefer_no_schedule_ = NodePreference::any_prefer_no_schedule(state.nodes());
  const int64_t* preference = nullptr;
  if (NodePreference::applies(pod, prefer_no_schedule_ > 0)) {
    auto& pref = preference_[shape];
    if (pref.size() != node_count) {
      pref.resize(node_count);
      for (NodeId n = 0; n < node_count; ++n) pref[n] = NodePreference::preference(pod, state.node(n));
    }
    preference = pref.data();
  }

  // Non-cacheable filters: PreFilter once per cycle, then Filter on each node that passed the cached ones.
  std::optional<FilterCycle> cycle;
  if (has_uncached_filters_) {
    cycle.emplace(policy_.filters, pod, state);
    if (!cycle->has_uncached()) cycle.reset();
  }
  uncached_rejects_.clear();
  auto passes_uncached = [&](NodeId n) {
    if (!cycle) return true;
    const FilterCode code = cycle->run_uncached(state, n);
    if (code == FilterCode::kFits) return true;
    uncached_rejects_.emplace_back(n, code);
    return false;
  };

  ScheduleResult result;
  NodeId best = kNoNode;
  int32_t best_score = 0;
  size_t feasible_count = 0;
  auto consider = [&](NodeId n, int32_t score) {
    ++feasible_count;
    if (preference && best != kNoNode && preference[n] != preference[best]) {
      if (preference[n] > preference[best]) {
        best = n;
        best_score = score;
      }
      return;
    }
    if (best == kNoNode || score > best_score || (score == best_score && (rank ? rank[n] < rank[best] : n < best))) {
      best = n;
      best_score = score;
    }
  };

  // An empty slot (ClusterState::has_node) is cached as infeasible(kFits): never considered, and
  // no rejection.
  if (cacheable) {
    for (NodeId n = 0; n < node_count; ++n) {
      Entry& e = entries[n];
      if (e.version != state.version(n)) {
        e.value = evaluate(pod, state, n);
        e.version = state.version(n);
      }
      if (e.value >= kMinScore && passes_uncached(n)) consider(n, e.value);
    }
  } else {
    feasible_.clear();
    for (NodeId n = 0; n < node_count; ++n) {
      Entry& e = entries[n];
      if (e.version != state.version(n)) {
        if (!state.has_node(n)) {
          e.value = infeasible(FilterCode::kFits);
        } else {
          const FilterCode code = run_filters(pod, state, n);
          e.value = code == FilterCode::kFits ? 0 : infeasible(code);
        }
        e.version = state.version(n);
      }
      if (e.value >= kMinScore && passes_uncached(n)) feasible_.push_back(n);
    }
    if (!feasible_.empty()) {
      CycleState cycle;
      scorer.pre_score(pod, state, feasible_, cycle, rng);
      for (NodeId n : feasible_) consider(n, scorer.score(pod, state, n, cycle));
    }
  }

  if (best == kNoNode) {
    result.node_codes.resize(node_count);  // kFits (no rejection) for an empty slot
    for (NodeId n = 0; n < node_count; ++n) {
      const int32_t v = entries[n].value;
      const size_t code = v < kMinScore ? static_cast<size_t>(v - INT32_MIN) : 0;
      result.node_codes[n] = static_cast<FilterCode>(code);
      ++result.rejected[code];
    }
    // Nodes the cached filters passed and a non-cacheable one rejected.
    for (const auto& [n, code] : uncached_rejects_) {
      result.node_codes[n] = code;
      ++result.rejected[static_cast<size_t>(code)];
    }
    result.rejected[0] = 0;  // kFits is not a rejection
    return result;
  }
  // kube scores only when two or more nodes fit; scoring then fails on a preferred term it cannot parse.
  if (feasible_count >= 2 && !pod.constraints.preferred_node_affinity.empty())
    if (auto error = preferred_node_affinity_error(pod)) {
      result.error = std::move(*error);
      return result;
    }
  result.node = best;
  result.score = best_score;
  select_gpus(result, pod, state, rng);
  return result;
}

void Scheduler::observe(const Pod& pod, const ClusterState& state) {
  policy_.score->observe(pod, state);
  // Drops the cached scores: each shape's entries are emptied when next used (shape_for).
  generation_ = policy_.score->generation();
}

void Scheduler::reserve(const Pod& pod, ClusterState& state, const ScheduleResult& result) {
  if (!result.scheduled()) return;
  state.allocate(result.node, pod, result.devices());
}

ScheduleResult Scheduler::schedule_one(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node) {
  observe(pod, state);
  ScheduleResult result = decide(pod, state, rng, nominated_node);
  reserve(pod, state, result);
  return result;
}

ScheduleResult Scheduler::bind(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng) {
  if (!state.has_node(n))
    throw std::invalid_argument(fmt::format("bind: node {} out of range ({} nodes)", n, state.node_count()));
  observe(pod, state);
  ScheduleResult result;
  result.node = n;
  select_gpus(result, pod, state, rng);
  reserve(pod, state, result);
  return result;
}

}  // namespace gpufleet::sched
