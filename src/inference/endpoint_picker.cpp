// The endpoint picker's plugins and scheduling cycle (endpoint_picker.h; upstream files named there).
#include "inference/endpoint_picker.h"

#include <algorithm>
#include <limits>
#include <list>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "inference/request.h"

namespace gpufleet::inference {

namespace {

constexpr const char* kQueueScorer = "queue-scorer";
constexpr const char* kKvCacheScorer = "kv-cache-utilization-scorer";
constexpr const char* kPrefixScorer = "prefix-cache-scorer";
constexpr const char* kAffinityFilter = "prefix-cache-affinity-filter";
constexpr const char* kUtilizationDetector = "utilization-detector";
constexpr const char* kMaxScorePicker = "max-score-picker";
constexpr const char* kRandomPicker = "random-picker";
/// approximateprefix/types.go defaultLRUCapacityPerServer: the capacity makeserver passes when the
/// server's GPU block count is unknown.
constexpr int64_t kDefaultLruCapacityPerServer = 31250;

bool is_scorer(std::string_view t) { return t == kQueueScorer || t == kKvCacheScorer || t == kPrefixScorer; }
bool is_filter(std::string_view t) { return t == kAffinityFilter || t == kUtilizationDetector; }
bool is_picker(std::string_view t) { return t == kMaxScorePicker || t == kRandomPicker; }

[[noreturn]] void bad(const std::string& m) { throw std::invalid_argument(m); }

double clamp01(double s) { return std::clamp(s, 0.0, 1.0); }  // scheduler_profile.go enforceScoreRange

/// SplitMix64's finaliser: the stand-in for xxhash (any good 64-bit mix gives the same matches).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

EndpointPickerConfig default_endpoint_picker_config() {
  EndpointPickerConfig c;
  for (const char* t : {kQueueScorer, kKvCacheScorer, kPrefixScorer}) {
    EppPlugin p;
    p.name = t;
    p.type = t;
    c.plugins.push_back(p);
  }
  c.scheduling_profiles.push_back({"default", {{kQueueScorer, 2.0}, {kKvCacheScorer, 2.0}, {kPrefixScorer, 3.0}}});
  return c;
}

ResolvedEndpointPicker resolve_endpoint_picker(const EndpointPickerConfig& config) {
  std::map<std::string, const EppPlugin*> by_name;
  std::vector<EppPlugin> plugins = config.plugins;
  for (size_t i = 0; i < plugins.size(); ++i) {
    EppPlugin& p = plugins[i];
    if (std::find_if(std::begin(kEppPluginTypes), std::end(kEppPluginTypes), [&](const char* t) { return p.type == t; }) ==
        std::end(kEppPluginTypes))
      bad(fmt::format("plugins[{}].type: plugin type '{}' is not modelled (modelled: {})", i, p.type,
                      fmt::join(std::begin(kEppPluginTypes), std::end(kEppPluginTypes), ", ")));
    if (p.name.empty()) p.name = p.type;  // defaults.go applyStaticDefaults
  }
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (!by_name.emplace(plugins[i].name, &plugins[i]).second)
      bad(fmt::format("plugins[{}].name: plugin name '{}' is used twice", i, plugins[i].name));
  }
  std::vector<EppSchedulingProfile> profiles = config.scheduling_profiles;
  if (profiles.size() > 1)
    bad(fmt::format("schedulingProfiles: {} profiles; only one (single-profile-handler) is modelled", profiles.size()));
  if (profiles.empty()) {  // ensureSchedulingLayer: every filter, scorer and picker, weight 1
    EppSchedulingProfile d{"default", {}};
    for (const EppPlugin& p : plugins)
      if (is_filter(p.type) || is_scorer(p.type) || is_picker(p.type)) d.plugins.push_back({p.name, std::nullopt});
    profiles.push_back(std::move(d));
  }
  ResolvedEndpointPicker r;
  r.profile_name = profiles[0].name;
  bool has_picker = false;
  for (size_t j = 0; j < profiles[0].plugins.size(); ++j) {
    const EppProfilePlugin& ref = profiles[0].plugins[j];
    const std::string where = fmt::format("schedulingProfiles[0].plugins[{}]", j);
    auto it = by_name.find(ref.plugin_ref);
    if (it == by_name.end()) bad(fmt::format("{}.pluginRef: no plugin named '{}'", where, ref.plugin_ref));
    const EppPlugin& p = *it->second;
    if (ref.weight && !(*ref.weight >= 0)) bad(fmt::format("{}.weight: {} must be >= 0", where, *ref.weight));
    for (size_t k = 0; k < j; ++k)
      if (profiles[0].plugins[k].plugin_ref == ref.plugin_ref)
        bad(fmt::format("{}.pluginRef: '{}' is already in this profile (plugins[{}])", where, ref.plugin_ref, k));
    if (ref.weight && !is_scorer(p.type))
      bad(fmt::format("{}.weight: only a scorer takes a weight ('{}' is a {})", where, p.name, p.type));
    if (is_scorer(p.type)) {
      r.scorers.push_back({p, ref.weight.value_or(1.0)});  // defaults.go DefaultScorerWeight
    } else if (is_filter(p.type)) {
      r.filters.push_back(p);
    } else if (is_picker(p.type)) {
      if (has_picker) bad(fmt::format("{}.pluginRef: a second picker '{}' in one profile", where, p.name));
      r.picker = p;
      has_picker = true;
    } else {
      bad(fmt::format("{}.pluginRef: '{}' ({}) is not a filter, scorer or picker", where, p.name, p.type));
    }
  }
  if (!has_picker) {  // the first picker configured, else a default max-score-picker
    auto it = std::find_if(plugins.begin(), plugins.end(), [](const EppPlugin& p) { return is_picker(p.type); });
    if (it != plugins.end()) {
      r.picker = *it;
    } else {
      r.picker.name = r.picker.type = kMaxScorePicker;
    }
  }
  const std::string sd = config.saturation_detector_ref.empty() ? kUtilizationDetector : config.saturation_detector_ref;
  if (auto it = by_name.find(sd); it != by_name.end()) {
    if (it->second->type != kUtilizationDetector)
      bad(fmt::format("saturationDetector.pluginRef: '{}' is a {}, not a utilization-detector", sd, it->second->type));
    r.saturation = it->second->utilization;
  } else if (sd != kUtilizationDetector) {
    bad(fmt::format("saturationDetector.pluginRef: no plugin named '{}'", sd));
  }
  // configloader.go: a configured prefix-cache-scorer brings the approximate prefix index, with the
  // last such plugin's parameters.
  for (const EppPlugin& p : plugins)
    if (p.type == kPrefixScorer) r.prefix = p.prefix;
  return r;
}

std::vector<double> queue_scores(const std::vector<EndpointMetrics>& endpoints) {
  int32_t lo = std::numeric_limits<int32_t>::max(), hi = std::numeric_limits<int32_t>::min();
  for (const EndpointMetrics& e : endpoints) lo = std::min(lo, e.waiting_queue_size), hi = std::max(hi, e.waiting_queue_size);
  std::vector<double> s;
  for (const EndpointMetrics& e : endpoints)
    s.push_back(hi == lo ? 1.0 : static_cast<double>(hi - e.waiting_queue_size) / static_cast<double>(hi - lo));
  return s;
}

std::vector<double> kv_cache_utilization_scores(const std::vector<EndpointMetrics>& endpoints) {
  std::vector<double> s;
  for (const EndpointMetrics& e : endpoints) s.push_back(1 - e.kv_cache_usage_perc);
  return s;
}

std::vector<double> prefix_cache_scores(const std::vector<int32_t>& matched_blocks, int32_t total_blocks) {
  std::vector<double> s;
  for (int32_t m : matched_blocks) s.push_back(total_blocks > 0 ? static_cast<double>(m) / total_blocks : 0.0);
  return s;
}

double utilization_saturation(const std::vector<EndpointMetrics>& endpoints, const UtilizationDetectorParams& p) {
  if (endpoints.empty()) return 1.0;
  double total = 0;
  for (const EndpointMetrics& e : endpoints)
    total += std::max(static_cast<double>(e.waiting_queue_size) / p.queue_depth_threshold,
                      e.kv_cache_usage_perc / p.kv_cache_util_threshold);
  return total / static_cast<double>(endpoints.size());
}

std::vector<size_t> utilization_filter(const std::vector<EndpointMetrics>& endpoints, const UtilizationDetectorParams& p) {
  const double q_limit = p.queue_depth_threshold * (1 + p.headroom);
  const double kv_limit = p.kv_cache_util_threshold * (1 + p.headroom);
  std::vector<size_t> kept;
  for (size_t i = 0; i < endpoints.size(); ++i)
    if (endpoints[i].waiting_queue_size < q_limit && endpoints[i].kv_cache_usage_perc < kv_limit) kept.push_back(i);
  if (kept.empty()) {
    kept.resize(endpoints.size());
    std::iota(kept.begin(), kept.end(), size_t{0});
  }
  return kept;
}

size_t max_score_pick(const std::vector<double>& scores, GoRand& rng) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  rng.shuffle(static_cast<int64_t>(order.size()), [&](int64_t i, int64_t j) { std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]); });
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order.at(0);
}

// --- Approximate prefix index ---

struct ApproxPrefixIndex::Lru {
  int64_t capacity = 0;
  std::list<uint64_t> order;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
};

std::map<int32_t, int32_t> ApproxPrefixIndex::match_longest_prefix(const std::vector<uint64_t>& hashes) const {
  std::map<int32_t, int32_t> res;
  for (uint64_t h : hashes) {
    auto it = hash_to_servers_.find(h);
    if (it == hash_to_servers_.end() || it->second.empty()) break;
    for (int32_t s : it->second) ++res[s];
  }
  return res;
}

void ApproxPrefixIndex::add(const std::vector<uint64_t>& hashes, int32_t server, int64_t capacity) {
  std::shared_ptr<Lru>& lru = servers_[server];
  if (!lru) {
    lru = std::make_shared<Lru>();
    lru->capacity = std::max<int64_t>(capacity, 1);
  }
  auto drop_server = [&](uint64_t h) {
    auto it = hash_to_servers_.find(h);
    if (it == hash_to_servers_.end()) return;
    std::vector<int32_t>& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), server), v.end());
    if (v.empty()) hash_to_servers_.erase(it);
  };
  // indexer.go Add: every hash into the LRU (hashicorp golang-lru Add: refresh or insert, evicting
  // the oldest past capacity), then every hash into hash -> servers.
  for (uint64_t h : hashes) {
    if (auto w = lru->where.find(h); w != lru->where.end()) {
      lru->order.splice(lru->order.begin(), lru->order, w->second);
      continue;
    }
    lru->order.push_front(h);
    lru->where[h] = lru->order.begin();
    if (static_cast<int64_t>(lru->order.size()) > lru->capacity) {
      const uint64_t old = lru->order.back();
      lru->order.pop_back();
      lru->where.erase(old);
      drop_server(old);
    }
  }
  for (uint64_t h : hashes) {
    std::vector<int32_t>& v = hash_to_servers_[h];
    auto pos = std::lower_bound(v.begin(), v.end(), server);
    if (pos == v.end() || *pos != server) v.insert(pos, server);
  }
}

void ApproxPrefixIndex::remove_server(int32_t server) {
  auto it = servers_.find(server);
  if (it == servers_.end()) return;
  for (uint64_t h : it->second->order) {
    auto hs = hash_to_servers_.find(h);
    if (hs == hash_to_servers_.end()) continue;
    std::vector<int32_t>& v = hs->second;
    v.erase(std::remove(v.begin(), v.end(), server), v.end());
    if (v.empty()) hash_to_servers_.erase(hs);
  }
  servers_.erase(it);
}

size_t ApproxPrefixIndex::entries(int32_t server) const {
  auto it = servers_.find(server);
  return it == servers_.end() ? 0 : it->second->order.size();
}

std::vector<uint64_t> epp_block_hashes(const Request& request, int32_t block_size_tokens, int32_t max_blocks) {
  std::vector<uint64_t> out;
  if (block_size_tokens <= 0 || max_blocks <= 0) return out;
  const int64_t n = std::min<int64_t>(request.prompt_tokens / block_size_tokens, max_blocks);
  const int64_t trace_block = std::max<int32_t>(request.prefix_block_tokens, 1);
  uint64_t prev = mix(0x6770756670656570ULL);  // the model name's hash: one model per pool here
  for (int64_t j = 0; j < n; ++j) {
    const int64_t first = j * block_size_tokens;
    const int64_t b = first / trace_block;
    uint64_t content;
    if (b < static_cast<int64_t>(request.prefix_hashes.size())) {
      content = mix((static_cast<uint64_t>(request.prefix_hashes[static_cast<size_t>(b)]) << 32) ^
                    static_cast<uint64_t>(first % trace_block));
    } else {
      content = mix(mix(request.id ^ 0x756e69717565ULL) + static_cast<uint64_t>(j));  // unique to the request
    }
    prev = mix(content ^ (prev * 0x100000001b3ULL));
    out.push_back(prev);
  }
  return out;
}

// --- The picker ---

EndpointPicker::EndpointPicker(ResolvedEndpointPicker config, int64_t seed) : config_(std::move(config)), rng_(seed) {}

bool EndpointPicker::admit(int32_t priority, const std::vector<EndpointMetrics>& pool) const {
  if (priority >= 0) return true;
  return utilization_saturation(pool, config_.saturation) < 1.0;
}

int32_t EndpointPicker::pick(const Request& request, const std::vector<EndpointMetrics>& candidates) {
  if (candidates.empty()) return -1;
  // PrepareRequestData: the request's hashes and each candidate's match.
  std::vector<uint64_t> hashes;
  std::map<int32_t, int32_t> matched;
  if (config_.prefix) {
    const PrefixCacheParams& p = *config_.prefix;
    const int32_t block = p.auto_tune && candidates[0].cache_block_size > 0 ? candidates[0].cache_block_size : p.block_size_tokens;
    const int32_t max_blocks = p.max_prefix_tokens_to_match > 0 ? p.max_prefix_tokens_to_match / block : p.max_prefix_blocks_to_match;
    hashes = epp_block_hashes(request, block, max_blocks);
    matched = index_.match_longest_prefix(hashes);
  }
  const int32_t total = static_cast<int32_t>(hashes.size());
  auto prefix_score = [&](const EndpointMetrics& e) {
    auto it = matched.find(e.endpoint);
    return total > 0 && it != matched.end() ? static_cast<double>(it->second) / total : 0.0;
  };

  std::vector<EndpointMetrics> eps = candidates;
  for (const EppPlugin& f : config_.filters) {
    if (f.type == kUtilizationDetector) {
      std::vector<EndpointMetrics> kept;
      for (size_t i : utilization_filter(eps, f.utilization)) kept.push_back(eps[i]);
      eps.swap(kept);
    } else if (f.type == kAffinityFilter) {
      if (eps.size() <= 1 || f.affinity.affinity_threshold <= 0) continue;
      if (rng_.float64() < f.affinity.exploration_probability) continue;
      std::vector<EndpointMetrics> sticky;
      for (const EndpointMetrics& e : eps)
        if (prefix_score(e) >= f.affinity.affinity_threshold) sticky.push_back(e);
      if (!sticky.empty()) eps.swap(sticky);  // the TTFT gate needs predictions: never opens
    }
    if (eps.empty()) return -1;
  }

  std::vector<double> score(eps.size(), 0.0);
  for (const ResolvedEndpointPicker::Scorer& s : config_.scorers) {
    std::vector<double> v;
    if (s.plugin.type == kQueueScorer) {
      v = queue_scores(eps);
    } else if (s.plugin.type == kKvCacheScorer) {
      v = kv_cache_utilization_scores(eps);
    } else {
      for (const EndpointMetrics& e : eps) v.push_back(prefix_score(e));
    }
    for (size_t i = 0; i < eps.size(); ++i) score[i] += clamp01(v[i]) * s.weight;
  }
  size_t chosen = 0;
  if (config_.picker.type == kRandomPicker) {
    std::vector<size_t> order(eps.size());
    std::iota(order.begin(), order.end(), size_t{0});
    rng_.shuffle(static_cast<int64_t>(order.size()), [&](int64_t i, int64_t j) { std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]); });
    chosen = order[0];
  } else {
    chosen = max_score_pick(score, rng_);
  }
  const EndpointMetrics& target = eps[chosen];
  if (config_.prefix && !hashes.empty()) {  // PreRequest: the chosen server now holds the hashes
    const int64_t capacity = config_.prefix->auto_tune && target.cache_num_blocks > 0 ? target.cache_num_blocks : kDefaultLruCapacityPerServer;
    index_.add(hashes, target.endpoint, capacity);
  }
  return target.endpoint;
}

}  // namespace gpufleet::inference
