#include "sched/scheduler.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <numeric>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sched/framework/node_sampling.h"
#include "sched/gpu/device_select.h"
#include "sched/plugins/dynamic_resources.h"

namespace gpufleet::sched {
namespace {

// Cache entries hold a score, or INT32_MIN + the number (FilterReasonTable) of the rejection of a
// node the filters rejected; INT32_MIN alone for an empty slot.
constexpr int32_t kMinScore = INT32_MIN + static_cast<int32_t>(FilterReasonTable::kMaxReasons) + 1;
static_assert(FilterReasonTable::kMaxReasons + 1 == 256, "ScorePlugin promises that only scores below INT32_MIN + 256 are clamped");
int32_t infeasible(uint8_t number) { return INT32_MIN + static_cast<int32_t>(number); }
uint8_t number_of(int32_t value) { return value < kMinScore ? static_cast<uint8_t>(value - INT32_MIN) : 0; }
int32_t memo_value(int64_t score) { return static_cast<int32_t>(std::clamp<int64_t>(score, kMinScore, INT32_MAX)); }
// The version of an entry whose node passed the cached filters at `version` but whose score an
// observer made stale: the bits inverted, above any version a state hands out (they count up from 1).
constexpr uint64_t stale_score(uint64_t version) { return ~version; }
// Whether an entry's version is stale_score() of one (marked once: a sampled pass may leave it so
// until the next generation change).
constexpr bool is_stale_score(uint64_t version) { return (version >> 63) != 0; }
// The Entry value of a node the cached filters pass: the memoized plugin's score (0 without one).
[[gnu::noinline]] int32_t rescore(const ScorePlugin* memo_plugin, const Pod& pod, const ClusterState& state, NodeId n,
                                  const CycleState& cycle) {
  return memo_plugin == nullptr ? 0 : memo_value(memo_plugin->score(pod, state, n, cycle));
}

// kube maxTimeout: a Permit plugin waits at most 15 minutes.
constexpr double kMaxPermitTimeoutSeconds = 15 * 60;

// An injective encoding of everything besides the request that the memoized results (cacheable
// filters, the kNodeVersion and kNodeStatic Score plugins: interface.h) may read: nodeSelector,
// node affinity and tolerations (length-prefixed strings, count-prefixed lists). The pod's
// namespace, labels and pod (anti-)affinity terms are read only by non-cacheable filters and
// per-cycle scores, so they are left out: the replicas of different Deployments with the same
// request and node constraints share one memo. Pods without any (the openb trace) get "".
// Appends the decimal digits of v without a temporary string (the key is built on every cycle).
void append_number(std::string& out, int64_t v) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}
void put(std::string& out, std::string_view s) {
  append_number(out, static_cast<int64_t>(s.size()));
  out += ':';
  out += s;
}
// put(out, std::to_string(v)), without the temporary.
void put_number(std::string& out, int64_t v) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  put(out, std::string_view(digits, static_cast<size_t>(end - digits)));
}
void put(std::string& out, const Labels& labels) {
  put_number(out, static_cast<int64_t>(labels.size()));
  for (const auto& [k, v] : labels) {
    put(out, k);
    put(out, v);
  }
}
void put(std::string& out, const std::vector<std::string>& values) {
  put_number(out, static_cast<int64_t>(values.size()));
  for (const auto& v : values) put(out, v);
}
void put(std::string& out, const std::vector<SelectorRequirement>& requirements) {
  put_number(out, static_cast<int64_t>(requirements.size()));
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

std::string constraints_key(const Pod& pod) {
  const PodConstraints& c = pod.constraints;
  if (c.node_selector.empty() && c.required_node_affinity.empty() && c.preferred_node_affinity.empty() && c.tolerations.empty())
    return {};
  std::string out;
  out.reserve(256);
  put(out, c.node_selector);
  put_number(out, static_cast<int64_t>(c.required_node_affinity.size()));
  for (const auto& t : c.required_node_affinity) put(out, t);
  put_number(out, static_cast<int64_t>(c.preferred_node_affinity.size()));
  for (const auto& t : c.preferred_node_affinity) {
    put_number(out, static_cast<int64_t>(t.weight));
    put(out, t.preference);
  }
  put_number(out, static_cast<int64_t>(c.tolerations.size()));
  for (const auto& t : c.tolerations) {
    put(out, t.key);
    put(out, t.operator_);
    put(out, t.value);
    put(out, t.effect);
    put(out, t.toleration_seconds ? std::to_string(*t.toleration_seconds) : std::string("-"));
  }
  return out;
}

std::string mig_key(const Pod& pod) {
  std::string out;
  for (const MigRequest& r : pod.mig_requests) {
    put(out, r.profile);
    put_number(out, static_cast<int64_t>(r.count));
  }
  if (const auto& share = pod.gpu_memory_share) {  // memory-based sharing (model/gpu_memory_share.h)
    put(out, "share");
    put_number(out, static_cast<int64_t>(share->scheduler));
    put_number(out, share->cards);
    put_number(out, share->memory_mib);
    put_number(out, share->memory_percentage);
    put_number(out, share->cores_percentage);
    put_number(out, std::bit_cast<int64_t>(share->fraction));
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


struct Scheduler::Waiting {
  WaitingPod pod;
  CycleState cycle;
  DeviceAssignment devices;
  double since_seconds = 0;  // when it started waiting
};

Scheduler::Scheduler(Profile profile, std::vector<uint32_t> node_rank)
    : profile_(std::move(profile)), node_rank_(std::move(node_rank)) {
  if (profile_.scores.empty()) throw std::invalid_argument("profile " + profile_.name + " has no Score plugin");
  if (!profile_.gpu_selector) throw std::invalid_argument("profile " + profile_.name + " has no GPU selector");
  filter_reasons_ = std::make_shared<const FilterReasonTable>(profile_.filters);
  for (size_t i = 0; i < profile_.filters.size(); ++i)
    if (profile_.filters[i]->filter_cacheable()) cached_filters_.push_back({profile_.filters[i].get(), i});
  for (size_t i = 0; i < profile_.scores.size(); ++i)
    if (profile_.scores[i].plugin->caching() == ScoreCaching::kNodeVersion) {
      memo_score_ = static_cast<int>(i);
      break;
    }
  memo_lexicographic_ = memo_score_ >= 0 && profile_.score_combination == ScoreCombination::kLexicographic;
  // Which Filter and Score plugins a PreFilter or PreScore plugin's Skip turns off (same name).
  for (const auto& p : profile_.pre_filters) {
    pre_filter_targets_.emplace_back();
    for (size_t i = 0; i < profile_.filters.size(); ++i)
      if (profile_.filters[i]->name() == p->name()) pre_filter_targets_.back().push_back(i);
  }
  for (const auto& p : profile_.pre_scores) {
    pre_score_targets_.emplace_back();
    for (size_t i = 0; i < profile_.scores.size(); ++i)
      if (profile_.scores[i].plugin->name() == p->name()) pre_score_targets_.back().push_back(i);
  }
  filter_skipped_.assign(profile_.filters.size(), 0);
  score_skipped_.assign(profile_.scores.size(), 0);
  if (memo_score_ >= 0) memo_plugin_ = profile_.scores[static_cast<size_t>(memo_score_)].plugin.get();
}

Scheduler::~Scheduler() = default;

void Scheduler::set_node_rank(NodeId n, uint32_t rank) {
  while (node_rank_.size() <= n) node_rank_.push_back(static_cast<uint32_t>(node_rank_.size()));
  node_rank_[n] = rank;
  scan_order_valid_ = false;  // the nodes' arrival order may have changed
  ++rank_epoch_;              // the best-node indexes compare ranks
}

void Scheduler::nodes_changed(const ClusterState& state, std::vector<uint32_t> node_rank) {
  node_rank_ = std::move(node_rank);
  scan_order_valid_ = false;
  ++rank_epoch_;
  uint64_t generation = 0;
  for (const auto& o : profile_.observers) {
    o->nodes_changed(state);
    generation += o->generation();
  }
  generation_ = generation;
}

uint8_t Scheduler::run_cached_filters(const Pod& pod, const ClusterState& state, NodeId n) const {
  for (const IndexedFilter& f : cached_filters_) {
    const FilterCode code = f.plugin->filter(pod, state, n, cycle_);
    if (code.rejected()) return filter_reasons_->number(f.index, code);
  }
  return 0;
}

int32_t Scheduler::evaluate(const Pod& pod, const ClusterState& state, NodeId n) const {
  if (!state.has_node(n)) return infeasible(0);  // an empty slot: skipped, no rejection
  const uint8_t number = run_cached_filters(pod, state, n);
  if (number != 0) return infeasible(number);
  return memo_plugin_ == nullptr ? 0 : memo_value(memo_plugin_->score(pod, state, n, cycle_));
}

size_t Scheduler::shape_for(const Pod& pod, size_t node_count) {
  ShapeKey key{pod.cpu_milli,    pod.memory_bytes, pod.num_gpu, pod.gpu_milli, pod.shared_replicas, mig_key(pod),
               pod.gpu_spec, constraints_key(pod)};
  auto [it, inserted] = shape_ids_.try_emplace(std::move(key), cache_.size());
  if (inserted) {
    cache_.emplace_back(node_count);
    cache_generation_.push_back(generation_);
    static_scores_.emplace_back(profile_.scores.size());
    best_index_.emplace_back();
  }
  // Entries stay valid when slots come and go: a slot's versions never repeat (ClusterState).
  auto& entries = cache_[it->second];
  if (entries.size() < node_count) entries.resize(node_count);
  if (cache_generation_[it->second] != generation_) {  // the scores changed since they were filled
    cache_generation_[it->second] = generation_;
    // Observers change scores, never filters: an entry of a node the filters pass keeps that answer
    // for its version and only needs its score again (its version inverted: stale_score); a
    // rejection stays as it is.
    for (Entry& e : entries)
      if (e.version != 0 && !is_stale_score(e.version) && e.value >= kMinScore) e.version = stale_score(e.version);
    best_index_[it->second].state_identity = 0;  // its scores are gone: rebuilt when next used
  }
  return it->second;
}

void Scheduler::select_gpus(ScheduleResult& result, const Pod& pod, const ClusterState& state, GoRand& rng) const {
  if (state.has_gpu_sharing(result.node) || pod.has_device_requests() || pod.gpu_memory_share) {
    DeviceAssignment devices = select_devices(pod, state, result.node);
    result.gpus = std::move(devices.gpus);
    result.shared_replicas = std::move(devices.shared_replicas);
    result.mig = std::move(devices.mig);
  } else if (pod.is_share_pod()) {
    result.gpus.push_back(profile_.gpu_selector->select_share_gpu(pod, state, result.node, rng));
  } else if (pod.is_gpu_pod()) {
    result.gpus = select_whole_gpus(state, result.node, pod.num_gpu);
  }
  if (!pod.resource_claims.empty()) {  // the DynamicResources filter admitted the node
    if (auto claims = dra_assign_claims(pod, state, result.node)) result.claims = std::move(*claims);
  }
}

bool Scheduler::passes_uncached(const Pod& pod, const ClusterState& state, NodeId n) {
  for (const IndexedFilter& f : uncached_) {
    const FilterCode code = f.plugin->filter(pod, state, n, cycle_);
    if (code.rejected()) {
      uncached_rejects_.emplace_back(n, filter_reasons_->number(f.index, code));
      return false;
    }
  }
  return true;
}

template <bool kTrackMemo, Scheduler::Pass kPass>
size_t Scheduler::filter_pass(const Pod& pod, const ClusterState& state, Entry* entry, NodeId* out, MemoBest& best,
                              size_t to_find) {
  // Without sampling: every slot in NodeId order. With it: scan_order_ from next_start_node_index_
  // (kube findNodesThatPassFilters' nodes[(nextStartNodeIndex+i)%numAllNodes]). evaluate()'s
  // candidates: candidate_order_.
  constexpr bool kSampled = kPass == Pass::kSampled;
  const size_t all = kSampled ? scan_order_.size() : kPass == Pass::kCandidates ? candidate_order_.size() : state.node_count();
  const NodeId* const order = kSampled ? scan_order_.data() : candidate_order_.data();
  const size_t start = kSampled ? next_start_node_index_ : 0;
  const bool check_uncached = !uncached_.empty();
  const uint32_t* const rank = node_rank_.empty() ? nullptr : node_rank_.data();  // nullptr: by NodeId
  NodeId best_node = kNoNode;
  int32_t best_value = 0;
  uint32_t best_rank = 0;
  size_t count = 0;
  size_t i = 0;
  for (; i < all; ++i) {
    NodeId n;
    if constexpr (kSampled) {
      if (count == to_find) break;  // kube: stop once numNodesToFind nodes fit
      const size_t p = start + i;
      n = order[p < all ? p : p - all];
    } else if constexpr (kPass == Pass::kCandidates) {
      n = order[i];
    } else {
      n = static_cast<NodeId>(i);
    }
    Entry& e = entry[n];
    const uint64_t version = state.version(n);
    if (e.version != version) {
      e.value = e.version == stale_score(version) ? rescore(memo_plugin_, pod, state, n, cycle_) : evaluate(pod, state, n);
      e.version = version;
    }
    const int32_t value = e.value;
    if (value < kMinScore) continue;
    if (check_uncached && !passes_uncached(pod, state, n)) continue;
    if constexpr (kTrackMemo) {
      const uint32_t r = rank ? rank[n] : n;
      if (best_node == kNoNode || value > best_value || (value == best_value && r < best_rank)) {
        best_node = n;
        best_value = value;
        best_rank = r;
      }
    }
    out[count++] = n;
  }
  // kube: nextStartNodeIndex = (nextStartNodeIndex + processedNodes) % numAllNodes, processedNodes
  // being the nodes found feasible plus those rejected (the nodes checked).
  if constexpr (kSampled)
    if (all != 0) next_start_node_index_ = (start + i) % all;
  best = MemoBest{best_node, best_value};
  return count;
}

NodeId Scheduler::better(const BestIndex& index, const Entry* entries, NodeId a, NodeId b) const {
  if (a == kNoNode) return b;
  if (b == kNoNode) return a;
  if (index.key_columns.empty()) {
    const int32_t va = entries[a].value, vb = entries[b].value;
    if (va != vb) return va > vb ? a : b;
  } else {
    for (const int64_t* column : index.key_columns) {
      const int64_t va = column ? column[a] : entries[a].value, vb = column ? column[b] : entries[b].value;
      if (va != vb) return va > vb ? a : b;
    }
  }
  const uint32_t ra = node_rank_.empty() ? a : node_rank_[a], rb = node_rank_.empty() ? b : node_rank_[b];
  if (ra != rb) return ra < rb ? a : b;
  return a < b ? a : b;
}

void Scheduler::set_leaf(BestIndex& index, const Entry* entries, NodeId n, bool present) {
  size_t i = index.width + n;
  index.tree[i] = present && entries[n].value >= kMinScore ? n : kNoNode;
  for (i >>= 1; i != 0; i >>= 1) {
    const NodeId was = index.tree[i];
    const NodeId now = better(index, entries, index.tree[2 * i], index.tree[2 * i + 1]);
    // The same winner, and not the node that changed: every entry above compares what it compared.
    if (now == was && now != n) return;
    index.tree[i] = now;
  }
}

bool Scheduler::sync_index(size_t shape, const Pod& pod, const ClusterState& state) {
  BestIndex& index = best_index_[shape];
  Entry* const entries = cache_[shape].data();
  const size_t slots = state.node_count();
  const uint64_t now = state.change_count();
  const size_t bound = slots / 16 + 16;  // past this many changes one pass is the cheaper way
  const auto refresh = [&](NodeId n) {
    Entry& e = entries[n];
    const uint64_t version = state.version(n);
    if (e.version != version) {
      e.value = e.version == stale_score(version) ? rescore(memo_plugin_, pod, state, n, cycle_) : evaluate(pod, state, n);
      e.version = version;
    }
  };
  // The key columns this cycle compares (static ones current for the node set).
  std::vector<const int64_t*> key_columns;
  if (index_keys_.size() > 1)
    for (const size_t i : index_keys_)
      key_columns.push_back(static_cast<int>(i) == memo_score_ ? nullptr : static_column(shape, i, pod, state));
  const bool same_keys = index.keys == (index_keys_.size() > 1 ? index_keys_ : std::vector<size_t>{}) &&
                         (key_columns.empty() || index.node_set_version == state.node_set_version());
  if (same_keys && index.state_identity == state.identity() && index.slots == slots && index.rank_epoch == rank_epoch_) {
    index.key_columns = key_columns;
    const auto changes = state.changes_since(index.synced_at);
    if (changes && changes->size() <= bound &&
        std::find(changes->begin(), changes->end(), ClusterState::kSlotCountChange) == changes->end()) {
      for (const NodeId n : *changes) {
        refresh(n);
        set_leaf(index, entries, n, true);
      }
      index.synced_at = now;
      return true;
    }
  }
  // Not following: rebuild when the shape's previous cycle was recent (synced_at then holds it),
  // else only note this cycle.
  const bool recent = index.synced_at != 0 && now >= index.synced_at && now - index.synced_at <= bound;
  index.synced_at = now;
  if (!recent) {
    index.state_identity = 0;
    return false;
  }
  index.keys = index_keys_.size() > 1 ? index_keys_ : std::vector<size_t>{};
  index.key_columns = std::move(key_columns);
  index.node_set_version = state.node_set_version();
  index.width = std::bit_ceil(std::max<size_t>(slots, 1));
  index.tree.assign(2 * index.width, kNoNode);
  for (NodeId n = 0; n < slots; ++n) {
    refresh(n);
    if (entries[n].value >= kMinScore) index.tree[index.width + n] = n;
  }
  for (size_t i = index.width - 1; i != 0; --i) index.tree[i] = better(index, entries, index.tree[2 * i], index.tree[2 * i + 1]);
  index.slots = slots;
  index.state_identity = state.identity();
  index.rank_epoch = rank_epoch_;
  return true;
}

bool Scheduler::index_applies(const Pod& pod, const ClusterState& state) {
  pre_score_skips_.assign(profile_.pre_scores.size(), 0);
  for (size_t k = 0; k < profile_.pre_scores.size(); ++k) {
    if (profile_.pre_scores[k]->skips_pre_score(pod, state)) {
      pre_score_skips_[k] = 1;
      for (const size_t i : pre_score_targets_[k]) score_skipped_[i] = 1;
    } else if (!profile_.pre_scores[k]->static_pre_score(pod, state)) {
      return false;
    }
  }
  // Scored: the memoized plugin, and only kNodeStatic others (their PreScore static, or none).
  index_keys_.clear();
  for (size_t i = 0; i < score_skipped_.size(); ++i) {
    if (score_skipped_[i] != 0) continue;
    if (static_cast<int>(i) != memo_score_ && profile_.scores[i].plugin->caching() != ScoreCaching::kNodeStatic) return false;
    index_keys_.push_back(i);
  }
  return std::find(index_keys_.begin(), index_keys_.end(), static_cast<size_t>(memo_score_)) != index_keys_.end();
}

const int64_t* Scheduler::static_column(size_t shape, size_t i, const Pod& pod, const ClusterState& state) {
  auto& column = static_scores_[shape][i];
  if (column.size() != state.node_count()) {
    const ScorePlugin& plugin = *profile_.scores[i].plugin;
    column.resize(state.node_count());
    for (NodeId n = 0; n < state.node_count(); ++n) column[n] = state.has_node(n) ? plugin.score(pod, state, n, cycle_) : 0;
  }
  return column.data();
}

NodeToStatus Scheduler::node_statuses(const std::vector<Entry>& entries, size_t node_count, const std::vector<NodeId>* only) const {
  // Every node's number (with `only`, those nodes'), the memo's (cached filters), then the
  // non-cacheable filters' rejections (of nodes the cached filters passed). 0 (no rejection) for an
  // empty slot and a node left out.
  std::vector<uint8_t> numbers(node_count);
  if (only != nullptr) {
    for (const NodeId n : *only) numbers[n] = number_of(entries[n].value);
  } else {
    for (NodeId n = 0; n < node_count; ++n) numbers[n] = number_of(entries[n].value);
  }
  for (const auto& [n, number] : uncached_rejects_) numbers[n] = number;
  return NodeToStatus(filter_reasons_, std::move(numbers));
}

bool Scheduler::decide_by_index(const Pod& pod, const ClusterState& state, size_t shape, GoRand& rng, ScheduleResult& result) {
  constexpr size_t kMaxRejected = 64;  // nodes non-cacheable filters may reject before the full pass
  if (!sync_index(shape, pod, state)) return false;
  BestIndex& index = best_index_[shape];
  const auto& entries = cache_[shape];
  NodeId best = index.tree[1];
  if (!uncached_.empty()) {
    index_excluded_.clear();
    bool gave_up = false;
    while (best != kNoNode && !passes_uncached(pod, state, best)) {
      index_excluded_.push_back(best);
      set_leaf(index, entries.data(), best, false);
      if (index_excluded_.size() == kMaxRejected) {
        gave_up = true;
        break;
      }
      best = index.tree[1];
    }
    for (const NodeId n : index_excluded_) set_leaf(index, entries.data(), n, true);
    if (gave_up) {
      uncached_rejects_.clear();
      return false;
    }
  }
  if (best == kNoNode) {  // every node was tried: the entries are current, uncached_rejects_ complete
    result.status = Status(Code::kUnschedulable);
    if (diagnosing()) result.node_to_status = node_statuses(entries, state.node_count());
    return true;
  }
  for (size_t k = 0; k < profile_.pre_scores.size(); ++k)
    if (pre_score_skips_[k] != 0) cycle_.skip_score(profile_.pre_scores[k]->name());  // as their pre_score would
  feasible_ = {};
  result.node = best;
  // The last Score plugin's value when it was scored, as select_host gives it.
  const size_t last = index_keys_.back();
  result.score = 0;
  if (last + 1 == profile_.scores.size())
    result.score = static_cast<int>(last) == memo_score_ ? entries[best].value : static_column(shape, last, pod, state)[best];
  select_gpus(result, pod, state, rng);
  return true;
}

ScheduleResult Scheduler::decide(const Pod& pod, const ClusterState& state, GoRand& rng, NodeId nominated_node) {
  const size_t node_count = state.node_count();
  if (!node_rank_.empty() && node_rank_.size() < node_count)
    throw std::invalid_argument(fmt::format("scheduler has {} node ranks for {} nodes", node_rank_.size(), node_count));
  if (nominated_node != kNoNode && !state.has_node(nominated_node))
    throw std::invalid_argument(fmt::format("nominated node {} out of range ({} nodes)", nominated_node, node_count));
  ScheduleResult result;
  cycle_.clear();
  std::fill(filter_skipped_.begin(), filter_skipped_.end(), 0);
  std::fill(score_skipped_.begin(), score_skipped_.end(), 0);

  // PreFilter (kube RunPreFilterPlugins). Skip: that plugin's Filter does not run this cycle.
  for (size_t k = 0; k < profile_.pre_filters.size(); ++k) {
    const auto& p = profile_.pre_filters[k];
    Status s = p->pre_filter(pod, state, cycle_);
    if (s.is_skip()) {
      cycle_.skip_filter(p->name());
      for (const size_t i : pre_filter_targets_[k]) filter_skipped_[i] = 1;
    } else if (!s.is_success()) {
      result.status = s.code() == Code::kError
                          ? Status(Code::kError, fmt::format("running PreFilter plugin \"{}\": {}", p->name(), s.message()))
                          : std::move(s);
      result.status.with_plugin(p->name());
      return result;
    }
  }
  uncached_.clear();
  for (size_t i = 0; i < profile_.filters.size(); ++i)
    if (!profile_.filters[i]->filter_cacheable() && filter_skipped_[i] == 0) uncached_.push_back({profile_.filters[i].get(), i});

  if (nominated_node != kNoNode) {
    // kube schedule_one.go findNodesThatFitPod / evaluateNominatedNode, then a single feasible node
    // is chosen without scoring.
    FilterCode code = FilterCode::kFits;
    for (size_t i = 0; i < profile_.filters.size() && !code.rejected(); ++i)
      if (filter_skipped_[i] == 0) code = profile_.filters[i]->filter(pod, state, nominated_node, cycle_);
    if (!code.rejected()) {
      result.node = nominated_node;
      select_gpus(result, pod, state, rng);
      return result;
    }
  }

  // The static Score columns hold node labels and taints: they follow the node set.
  if (node_set_version_ != state.node_set_version()) {
    node_set_version_ = state.node_set_version();
    for (auto& shape_columns : static_scores_)
      for (auto& column : shape_columns) column.clear();
  }
  // Filter: cached filters (and the memoized score) per node version, then the others. An empty
  // slot (ClusterState::has_node) is memoized as infeasible(kFits): never feasible, no rejection.
  const size_t shape = shape_for(pod, node_count);
  auto& entries = cache_[shape];
  uncached_rejects_.clear();
  if (best_node_index_ && memo_lexicographic_ && !profile_.percentage_of_nodes_to_score && evaluation_ == nullptr &&
      index_applies(pod, state) && decide_by_index(pod, state, shape, rng, result))
    return result;
  // In a lexicographic profile with a memoized Score plugin, the best node by that plugin alone is
  // tracked here too: when PreScore then skips every other Score plugin (most cycles: no preference
  // to honour), it is the answer and the feasible nodes need no second pass.
  if (feasible_buffer_.size() < node_count) feasible_buffer_.resize(node_count);
  NodeId* const feasible_out = feasible_buffer_.data();
  MemoBest memo;
  size_t feasible_count = 0;
  if (profile_.percentage_of_nodes_to_score && evaluation_ == nullptr) {
    if (!scan_order_valid_ || scan_order_node_set_ != state.node_set_version()) {
      scan_order_ = node_tree_order(state, node_rank_);
      scan_order_node_set_ = state.node_set_version();
      scan_order_valid_ = true;
      if (next_start_node_index_ >= scan_order_.size()) next_start_node_index_ = 0;
    }
    const auto to_find = static_cast<size_t>(
        num_feasible_nodes_to_find(*profile_.percentage_of_nodes_to_score, static_cast<int32_t>(scan_order_.size())));
    feasible_count = memo_lexicographic_ ? filter_pass<true, Pass::kSampled>(pod, state, entries.data(), feasible_out, memo, to_find)
                                         : filter_pass<false, Pass::kSampled>(pod, state, entries.data(), feasible_out, memo, to_find);
  } else if (candidates_) {
    feasible_count = memo_lexicographic_ ? filter_pass<true, Pass::kCandidates>(pod, state, entries.data(), feasible_out, memo, 0)
                                         : filter_pass<false, Pass::kCandidates>(pod, state, entries.data(), feasible_out, memo, 0);
  } else {
    feasible_count = memo_lexicographic_ ? filter_pass<true, Pass::kEveryNode>(pod, state, entries.data(), feasible_out, memo, 0)
                                         : filter_pass<false, Pass::kEveryNode>(pod, state, entries.data(), feasible_out, memo, 0);
  }
  const NodeId memo_best = memo.node;
  const int32_t memo_best_value = memo.value;
  feasible_ = std::span<const NodeId>(feasible_out, feasible_count);

  if (feasible_.empty() && evaluation_ == nullptr && !diagnosing()) {  // nobody reads the NodeToStatus
    result.status = Status(Code::kUnschedulable);
    return result;
  }
  if (evaluation_ != nullptr || feasible_.empty()) {
    NodeToStatus statuses = node_statuses(entries, node_count, candidates_ ? &candidate_order_ : nullptr);
    if (feasible_.empty()) {
      result.status = Status(Code::kUnschedulable);
      if (evaluation_ != nullptr) evaluation_->node_to_status = statuses;
      result.node_to_status = std::move(statuses);
      return result;
    }
    evaluation_->node_to_status = std::move(statuses);
  }

  // PreScore (kube RunPreScorePlugins): Skip leaves that plugin's Score out; anything else fails.
  for (size_t k = 0; k < profile_.pre_scores.size(); ++k) {
    const auto& p = profile_.pre_scores[k];
    const Status s = p->pre_score(pod, state, feasible_, cycle_, rng);
    if (s.is_skip()) {
      cycle_.skip_score(p->name());
      for (const size_t i : pre_score_targets_[k]) score_skipped_[i] = 1;
    } else if (!s.is_success()) {
      result.status = Status(Code::kError, fmt::format("running PreScore plugin \"{}\": {}", p->name(), s.message()));
      result.status.with_plugin(p->name());
      return result;
    }
  }
  const auto only_memo = [&] {
    for (size_t i = 0; i < score_skipped_.size(); ++i)
      if ((score_skipped_[i] == 0) != (static_cast<int>(i) == memo_score_)) return false;
    return true;
  };
  const bool ranking = evaluation_ != nullptr && rank_;
  if (memo_lexicographic_ && only_memo() && !ranking) {
    result.node = memo_best;
    result.score = static_cast<size_t>(memo_score_) + 1 == profile_.scores.size() ? memo_best_value : 0;
  } else {
    select_host(pod, state, shape, rng, result, ranking ? evaluation_ : nullptr);
    if (!result.status.is_success()) {
      if (ranking) evaluation_->ranked.clear();
      return result;
    }
  }
  select_gpus(result, pod, state, rng);
  return result;
}

void Scheduler::set_candidates(const std::vector<NodeId>& candidates, size_t node_count) {
  for (const NodeId n : candidates)
    if (n >= node_count) throw std::invalid_argument(fmt::format("candidate node {} out of range ({} nodes)", n, node_count));
  // One bit per slot, then the set bits in order: O(candidates + slots / 64), no sort.
  candidate_bits_.resize((node_count + 63) / 64);
  for (const NodeId n : candidates) candidate_bits_[n / 64] |= uint64_t{1} << (n % 64);
  candidate_order_.clear();
  for (size_t w = 0; w < candidate_bits_.size(); ++w) {
    for (uint64_t bits = candidate_bits_[w]; bits != 0; bits &= bits - 1)
      candidate_order_.push_back(static_cast<NodeId>(w * 64 + static_cast<size_t>(std::countr_zero(bits))));
    candidate_bits_[w] = 0;
  }
}

ScheduleResult Scheduler::evaluate(const Pod& pod, const ClusterState& state, GoRand& rng, NodeEvaluation& evaluation, bool rank,
                                   const std::vector<NodeId>* candidates) {
  if (candidates != nullptr) set_candidates(*candidates, state.node_count());
  evaluation.node_to_status = NodeToStatus();
  evaluation.ranked.clear();
  evaluation.top_count = 0;
  evaluation_ = &evaluation;
  rank_ = rank;
  candidates_ = candidates != nullptr;
  struct Reset {
    NodeEvaluation*& slot;
    bool& candidates;
    ~Reset() {
      slot = nullptr;
      candidates = false;
    }
  } reset{evaluation_, candidates_};
  return decide(pod, state, rng);
}

void Scheduler::select_host(const Pod& pod, const ClusterState& state, size_t shape, GoRand& rng, ScheduleResult& result,
                            NodeEvaluation* evaluation) {
  std::vector<NodeId>* ranked = evaluation != nullptr ? &evaluation->ranked : nullptr;
  const auto& entries = cache_[shape];
  auto& columns = score_columns_;
  columns.clear();
  size_t computed = 0;
  for (size_t i = 0; i < profile_.scores.size(); ++i) {
    const ScorePlugin& plugin = *profile_.scores[i].plugin;
    if (score_skipped_[i] != 0) continue;
    Column c;
    c.plugin = i;
    if (static_cast<int>(i) == memo_score_) {
      c.memo = true;
    } else if (plugin.caching() == ScoreCaching::kNodeStatic) {
      c.by_node = static_column(shape, i, pod, state);
    } else {
      if (columns_.size() <= computed) columns_.emplace_back();
      auto& column = columns_[computed++];
      column.resize(feasible_.size());
      for (size_t j = 0; j < feasible_.size(); ++j) column[j] = plugin.score(pod, state, feasible_[j], cycle_);
      c.by_feasible = column.data();
    }
    columns.push_back(c);
  }
  const auto value = [&](const Column& c, size_t j, NodeId n) -> int64_t {
    if (c.memo) return entries[n].value;
    if (c.by_node) return c.by_node[n];
    return c.by_feasible[j];
  };

  size_t best = 0;  // position in feasible_
  const auto rank_of = [&](NodeId n) { return node_rank_.empty() ? n : node_rank_[n]; };  // empty: by NodeId
  const auto rank_wins = [&](size_t j) { return rank_of(feasible_[j]) < rank_of(feasible_[best]); };
  if (profile_.score_combination == ScoreCombination::kLexicographic) {
    if (columns.size() == 1 && columns[0].memo) {
      int32_t best_value = entries[feasible_[0]].value;
      for (size_t j = 1; j < feasible_.size(); ++j) {
        const int32_t v = entries[feasible_[j]].value;
        if (v > best_value || (v == best_value && rank_wins(j))) {
          best = j;
          best_value = v;
        }
      }
    } else {
      for (size_t j = 1; j < feasible_.size(); ++j) {
        int cmp = 0;
        for (const Column& c : columns) {
          const int64_t a = value(c, j, feasible_[j]), b = value(c, best, feasible_[best]);
          if (a != b) {
            cmp = a > b ? 1 : -1;
            break;
          }
        }
        if (cmp > 0 || (cmp == 0 && rank_wins(j))) best = j;
      }
    }
    if (ranked != nullptr) {
      // j before k: a higher value at the first column where they differ, else the lower rank.
      std::vector<size_t> order(feasible_.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::sort(order.begin(), order.end(), [&](size_t j, size_t k) {
        for (const Column& c : columns) {
          const int64_t a = value(c, j, feasible_[j]), b = value(c, k, feasible_[k]);
          if (a != b) return a > b;
        }
        return rank_of(feasible_[j]) < rank_of(feasible_[k]);
      });
      ranked->clear();
      for (size_t j : order) ranked->push_back(feasible_[j]);
      evaluation->top_count = 0;
      for (size_t j : order) {
        const bool tied = std::all_of(columns.begin(), columns.end(), [&](const Column& c) {
          return value(c, j, feasible_[j]) == value(c, order[0], feasible_[order[0]]);
        });
        if (!tied) break;
        ++evaluation->top_count;
      }
    }
    const bool last_scored = !columns.empty() && columns.back().plugin + 1 == profile_.scores.size();
    result.score = last_scored ? value(columns.back(), best, feasible_[best]) : 0;
  } else {
    // kube RunScorePlugins: NormalizeScore per plugin, range check, weighted sum.
    std::vector<int64_t> total(feasible_.size(), 0);
    for (const Column& c : columns) {
      const WeightedScorePlugin& entry = profile_.scores[c.plugin];
      normalized_.resize(feasible_.size());
      for (size_t j = 0; j < feasible_.size(); ++j) normalized_[j] = {feasible_[j], value(c, j, feasible_[j])};
      if (entry.plugin->has_normalize_score()) entry.plugin->normalize_score(pod, normalized_, cycle_);
      for (size_t j = 0; j < feasible_.size(); ++j) {
        const int64_t s = normalized_[j].score;
        if (s > kMaxNodeScore || s < kMinNodeScore) {
          result.status = Status(Code::kError, fmt::format("plugin \"{}\" returns an invalid score {}, it should in the range of [{}, {}] after normalizing",
                                                           entry.plugin->name(), s, kMinNodeScore, kMaxNodeScore));
          return;
        }
        total[j] += s * entry.weight;
      }
    }
    if (profile_.tie_break == ScoreTieBreak::kRandom) {
      // kube selectHost: each node tied at the top replaces the pick with probability 1/count.
      int32_t count = 0;
      for (size_t j = 0; j < feasible_.size(); ++j) {
        if (j > 0 && total[j] > total[best]) {
          best = j;
          count = 1;
        } else if (j == 0 || total[j] == total[best]) {
          ++count;
          if (count > 1 && rng.int31n(count) == 0) best = j;
        }
      }
    } else {
      for (size_t j = 1; j < feasible_.size(); ++j)
        if (total[j] > total[best] || (total[j] == total[best] && rank_wins(j))) best = j;
    }
    result.score = total[best];
    if (ranked != nullptr) {
      std::vector<size_t> order(feasible_.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::sort(order.begin(), order.end(), [&](size_t j, size_t k) {
        return total[j] != total[k] ? total[j] > total[k] : rank_of(feasible_[j]) < rank_of(feasible_[k]);
      });
      ranked->clear();
      for (size_t j : order) ranked->push_back(feasible_[j]);
      evaluation->top_count = static_cast<size_t>(
          std::count_if(order.begin(), order.end(), [&](size_t j) { return total[j] == total[order[0]]; }));
    }
  }
  result.node = feasible_[best];
}

void Scheduler::observe(const Pod& pod, const ClusterState& state) {
  uint64_t generation = 0;
  for (const auto& o : profile_.observers) {
    o->observe(pod, state);
    generation += o->generation();
  }
  // A changed generation drops the memoized scores: each shape's entries are emptied when next
  // used (shape_for).
  generation_ = generation;
}

void Scheduler::assume(const Pod& pod, ClusterState& state, const ScheduleResult& result) {
  if (!result.scheduled()) return;
  state.allocate(result.node, pod, result.devices());
}

ScheduleResult Scheduler::schedule_one(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node) {
  observe(pod, state);
  return schedule_cycle(pod, state, rng, nominated_node);
}

void Scheduler::roll_back(CycleState& cycle, const Pod& pod, ClusterState& state, NodeId n) {
  for (size_t i = profile_.reserves.size(); i-- > 0;) profile_.reserves[i]->unreserve(pod, state, n, cycle, *this);
  state.release(n, pod);  // by the pod's name: the state knows its devices
}

namespace {

// kube RunBindPlugins: in order until one does not Skip. A profile without Bind plugins (one built by
// hand) binds at the assume step.
Status run_bind(const std::vector<std::shared_ptr<BindPlugin>>& binds, CycleState& cycle, const Pod& pod, NodeId n) {
  for (const auto& b : binds) {
    Status s = b->bind(pod, n, cycle);
    if (s.is_skip()) continue;
    if (s.is_success()) return s;
    if (!s.is_rejected()) s = Status(Code::kError, fmt::format("running Bind plugin \"{}\": {}", b->name(), s.message()));
    return std::move(s.with_plugin(b->name()));
  }
  return binds.empty() ? Status() : Status(Code::kSkip, "every Bind plugin skipped the pod");
}

}  // namespace

ScheduleResult Scheduler::schedule_cycle(const Pod& pod, ClusterState& state, GoRand& rng, NodeId nominated_node) {
  // One result object all the way (returned by name, never copied).
  ScheduleResult result = decide(pod, state, rng, nominated_node);
  if (!result.scheduled()) {
    // PostFilter (kube RunPostFilterPlugins): in order until one succeeds; an Unschedulable status
    // lets the next one try, anything else stops. When all are Unschedulable, the status has all
    // their reasons (its message joins them with ", ") and the first plugin that gave reasons.
    if (!result.node_to_status.empty()) {
      std::vector<std::string> reasons;
      std::string rejector;
      for (const auto& p : profile_.post_filters) {
        PostFilterResult found;
        Status s = p->post_filter(pod, state, result.node_to_status, cycle_, *this, found);
        s.with_plugin(p->name());
        result.post_filter = std::move(found);
        if (s.code() == Code::kUnschedulable && !s.reasons().empty()) {
          reasons.insert(reasons.end(), s.reasons().begin(), s.reasons().end());
          if (rejector.empty()) rejector = p->name();
        }
        result.post_filter_status = std::move(s);
        if (result.post_filter_status.code() != Code::kUnschedulable) break;
      }
      if (result.post_filter_status.code() == Code::kUnschedulable && !rejector.empty())
        result.post_filter_status = std::move(Status(Code::kUnschedulable, std::move(reasons)).with_plugin(rejector));
    }
    return result;
  }
  const NodeId n = result.node;
  assume(pod, state, result);
  // Reserve (kube RunReservePluginsReserve), Permit (RunPermitPlugins), then Bind; a failure rolls
  // the pod back (every Reserve plugin's Unreserve, the allocation released).
  Status failed;
  for (const auto& r : profile_.reserves) {
    Status s = r->reserve(pod, state, n, cycle_);
    if (s.is_success()) continue;
    failed = s.is_rejected() ? std::move(s)
                             : Status(Code::kError, fmt::format("running Reserve plugin \"{}\": {}", r->name(), s.message()));
    failed.with_plugin(r->name());
    break;
  }
  std::vector<std::pair<std::string, double>> waits;
  if (failed.is_success()) {
    for (const auto& p : profile_.permits) {
      PermitDecision d = p->permit(pod, n, cycle_, *this);
      if (d.status.is_success()) continue;
      if (d.status.is_wait()) {
        waits.emplace_back(std::string(p->name()), now_seconds_ + std::clamp(d.timeout_seconds, 0.0, kMaxPermitTimeoutSeconds));
        continue;
      }
      failed = d.status.is_rejected()
                   ? std::move(d.status)
                   : Status(Code::kError, fmt::format("running Permit plugin \"{}\": {}", p->name(), d.status.message()));
      failed.with_plugin(p->name());
      break;
    }
  }
  if (failed.is_success() && !waits.empty()) {
    waiting_.push_back(std::make_unique<Waiting>(Waiting{WaitingPod(pod, n, std::move(waits)), std::move(cycle_), result.devices(), now_seconds_}));
    result.status = Status(Code::kWait, fmt::format("one or more plugins asked to wait and no plugin rejected pod \"{}\"", pod.name));
  } else if (failed.is_success() && !profile_.binds.empty()) {
    failed = run_bind(profile_.binds, cycle_, pod, n);
  }
  if (!failed.is_success()) {
    roll_back(cycle_, pod, state, n);
    const Status status = std::move(failed);
    result = ScheduleResult();
    result.status = status;
  }
  if (!waiting_.empty()) settle_waiting(state);
  return result;
}

void Scheduler::settle_waiting(ClusterState& state) {
  for (bool settled = true; settled;) {
    settled = false;
    for (size_t i = 0; i < waiting_.size(); ++i) {
      if (waiting_[i]->pod.status().is_wait()) continue;
      // Off the list first, as kube's WaitOnPermit removes the pod before Unreserve runs.
      std::unique_ptr<Waiting> w = std::move(waiting_[i]);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      const Pod& pod = w->pod.pod();
      const NodeId n = w->pod.node();
      Status status = w->pod.status();
      if (status.is_success()) status = run_bind(profile_.binds, w->cycle, pod, n);
      if (!status.is_success()) roll_back(w->cycle, pod, state, n);
      outcomes_.push_back(PermitOutcome{pod, n, status.is_success() ? w->devices : DeviceAssignment{}, std::move(status)});
      settled = true;
      break;
    }
  }
}

void Scheduler::advance_clock(ClusterState& state, double now_seconds) {
  now_seconds_ = std::max(now_seconds_, now_seconds);
  for (const auto& w : waiting_) {
    const auto [deadline, plugin] = w->pod.next_deadline();
    if (deadline <= now_seconds_)
      w->pod.reject(plugin, fmt::format("rejected due to timeout after waiting {}s at plugin {}", deadline - w->since_seconds, plugin));
  }
  settle_waiting(state);
}

bool Scheduler::reject_waiting_pod(ClusterState& state, std::string_view key, std::string message) {
  WaitingPod* w = get_waiting_pod(key);
  if (w == nullptr) return false;
  w->reject("", std::move(message));
  settle_waiting(state);
  return true;
}

std::vector<PermitOutcome> Scheduler::take_permit_outcomes() { return std::exchange(outcomes_, {}); }

void Scheduler::iterate_over_waiting_pods(const std::function<void(WaitingPod&)>& fn) {
  for (const auto& w : waiting_) fn(w->pod);
}

WaitingPod* Scheduler::get_waiting_pod(std::string_view key) {
  for (const auto& w : waiting_)
    if (pod_key(w->pod.pod()) == key) return &w->pod;
  return nullptr;
}

ScheduleResult Scheduler::bind_node_name(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng) {
  if (!state.has_node(n))
    throw std::invalid_argument(fmt::format("bind: node {} out of range ({} nodes)", n, state.node_count()));
  observe(pod, state);
  return admit_bound(pod, state, n, rng);
}

ScheduleResult Scheduler::admit_bound(const Pod& pod, ClusterState& state, NodeId n, GoRand& rng) {
  if (!state.has_node(n))
    throw std::invalid_argument(fmt::format("bind: node {} out of range ({} nodes)", n, state.node_count()));
  ScheduleResult result;
  result.node = n;
  if (pod.assigned_devices && state.can_allocate(n, pod, *pod.assigned_devices)) {
    result.gpus = pod.assigned_devices->gpus;
    result.shared_replicas = pod.assigned_devices->shared_replicas;
    result.mig = pod.assigned_devices->mig;
    if (!pod.resource_claims.empty()) {
      if (auto claims = dra_assign_claims(pod, state, n)) result.claims = std::move(*claims);
    }
  } else {
    select_gpus(result, pod, state, rng);
  }
  assume(pod, state, result);
  return result;
}

}  // namespace gpufleet::sched
