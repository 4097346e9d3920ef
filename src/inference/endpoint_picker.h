// The Gateway API Inference Extension's endpoint picker (EPP): the InferencePool and
// InferenceObjective objects a Kubernetes user writes, the EndpointPickerConfig the EPP runs, and the
// EPP's scheduling of one request onto one replica of the pool. No I/O: the YAML reader is
// readers/serving/endpoint_picker_config.h; the deployment calls EndpointPicker through
// RoutingPolicy::kEndpointPicker (inference/deployment.h). Longer description: docs/inference-routing.md.
//
// Upstream: kubernetes-sigs/gateway-api-inference-extension, tag v1.5.0 (commit
// df9f8909fe06fe2dfd4a6fc0bd0c01a0acabf849, the last release that ships the EPP; later tags moved it
// out of the repository). Each rule below names its file under pkg/epp/ of that tag:
//  - Default configuration (no config file): config/loader/defaults.go loadDefaultConfig: plugins
//    queue-scorer, kv-cache-utilization-scorer, prefix-cache-scorer; one profile "default" with
//    weights 2, 2, 3; ensureSchedulingLayer adds single-profile-handler (one profile, no handler) and
//    max-score-picker (a profile without a picker); a scorer referenced without a weight gets 1
//    (DefaultScorerWeight); no profiles at all = one "default" profile of every filter, scorer and
//    picker; ensureSaturationDetector: utilization-detector when none is named.
//  - Profile run: scheduling/scheduler_profile.go: filters in order (a filter that leaves no
//    endpoint ends the run with none), then score = sum over scorers of weight x clamp(score, 0, 1)
//    (enforceScoreRange), then the picker.
//  - queue-scorer (framework/plugins/scheduling/scorer/queuedepth/queue.go): (max - q) / (max - min)
//    of the candidates' waiting queues (vllm:num_requests_waiting); 1 for all when max == min.
//  - kv-cache-utilization-scorer (scorer/kvcacheutilization/kvcache_utilization.go): 1 -
//    vllm:kv_cache_usage_perc.
//  - prefix-cache-scorer (scorer/prefix/plugin.go): matched blocks / total blocks of the request
//    (0 when the request has no full block). Its parameters configure the approximate prefix index
//    that config/loader/configloader.go adds beside it (approx-prefix-cache-producer,
//    framework/plugins/requestcontrol/dataproducer/approximateprefix/{types,plugin,indexer,hashing}.go):
//    autoTune true, blockSizeTokens 16, maxPrefixBlocksToMatch 256, maxPrefixTokensToMatch 0 (> 0:
//    it / block size replaces maxPrefixBlocksToMatch), lruCapacityPerServer 31250. autoTune takes the
//    block size from the replicas' vLLM block size and each server's LRU capacity from its number of
//    GPU KV blocks. As upstream's makeserver does, a server's LRU capacity is its GPU blocks (autoTune,
//    known) else the constant 31250: the lruCapacityPerServer parameter is read but never reaches
//    the index (PreRequest always passes a positive capacity). The prompt is cut into full blocks (at most max blocks), block i's hash chained
//    on block i-1's; the match of a server counts the leading blocks, in order, until the first
//    block that no server holds (matchLongestPrefix); after the pick the chosen server records
//    every hash of the request in its LRU (PreRequest), an eviction removing the server from that
//    hash. The index is the EPP's guess: it never sees the replicas' own evictions.
//  - prefix-cache-affinity-filter (scheduling/filter/prefixcacheaffinity/plugin.go): keeps the
//    endpoints whose prefix score >= affinityThreshold (0.8); none: all; with probability
//    explorationProbability (0.01) keeps all; maxTTFTPenaltyMs (5000) needs latency predictions,
//    which are not modelled, so that gate never opens (as upstream without predictions).
//  - utilization-detector (framework/plugins/flowcontrol/saturationdetector/utilization/
//    {config,detector}.go): queueDepthThreshold 5, kvCacheUtilThreshold 0.8, headroom 0,
//    metricsStalenessThreshold 200ms. Pool saturation = mean over endpoints of max(waiting /
//    queueDepthThreshold, kv usage / kvCacheUtilThreshold) (1 with no endpoint); as a filter it keeps
//    endpoints with waiting < threshold x (1 + headroom) and usage < threshold x (1 + headroom), all
//    when none passes.
//  - Shedding (requestcontrol/admission.go rejectIfSheddableAndSaturated, LegacyAdmissionController):
//    a request whose objective priority is < 0 (sheddable; util/request IsSheddable) is rejected
//    when the pool's saturation >= 1; priority >= 0 always passes. An unset priority is 0
//    (apix/v1alpha2/inferenceobjective_types.go).
//  - max-score-picker (scheduling/picker/max_score_picker.go): shuffles the candidates, then a
//    stable sort by score, highest first: ties go to a random one. random-picker: shuffles, takes the
//    first. maxNumOfEndpoints (1) is accepted; only the first endpoint is used (no fallbacks).
//    Upstream seeds its shuffle from the clock; here it is the seeded generator passed in.
//  - single-profile-handler (scheduling/profile/single_profile_handler.go): runs the one profile.
// Not modelled (the reader rejects them by name): other plugin types (weighted-random-picker, running-requests-scorer,
// lora-affinity-scorer, latency scorers, concurrency-detector; v0.5's low-queue/least-kv-cache filters, gone by v1.0.0), several
// profiles, flow control's queues (featureGates flowControl, the flowControl section), metric
// staleness (the picker reads the replicas' gauges at the instant it schedules).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/go_rand.h"

namespace gpufleet::inference {

struct Request;

/// InferencePool (inference.networking.k8s.io/v1, api/v1/inferencepool_types.go): the pods a
/// gateway routes to through one endpoint picker.
struct InferencePool {
  std::string name;
  std::string namespace_name = "default";
  std::map<std::string, std::string> selector;  ///< spec.selector.matchLabels, at least one
  std::vector<int32_t> target_ports;            ///< spec.targetPorts[].number, 1..8 unique ports
  std::string app_protocol = "http";            ///< http | kubernetes.io/h2c
  std::string endpoint_picker_name;             ///< spec.endpointPickerRef.name (required)
  std::string endpoint_picker_kind = "Service";
  int32_t endpoint_picker_port = 0;             ///< required when kind is Service
  std::string failure_mode = "FailClose";       ///< FailOpen | FailClose
};

/// InferenceObjective (inference.networking.x-k8s.io/v1alpha2): a workload's priority in a pool.
struct InferenceObjective {
  std::string name;
  std::string namespace_name = "default";
  std::optional<int32_t> priority;  ///< unset = 0 for the EPP
  std::string pool_ref;             ///< spec.poolRef.name (same namespace)
  int32_t effective_priority() const { return priority.value_or(0); }
  bool sheddable() const { return effective_priority() < 0; }  ///< util/request IsSheddable
};

/// The approximate prefix index's parameters (the prefix-cache-scorer plugin's `parameters`).
struct PrefixCacheParams {
  bool auto_tune = true;
  int32_t block_size_tokens = 16;
  int32_t max_prefix_blocks_to_match = 256;
  int32_t max_prefix_tokens_to_match = 0;  ///< > 0: replaces max blocks by this / block size
  int32_t lru_capacity_per_server = 31250;
};

/// The utilization-detector's parameters (as saturation detector and as filter).
struct UtilizationDetectorParams {
  int32_t queue_depth_threshold = 5;
  double kv_cache_util_threshold = 0.8;
  double metrics_staleness_threshold_s = 0.2;  ///< accepted; metrics are never stale here
  double headroom = 0;
};

/// prefix-cache-affinity-filter's parameters.
struct PrefixCacheAffinityParams {
  double affinity_threshold = 0.8;
  double exploration_probability = 0.01;
  double max_ttft_penalty_ms = 5000;  ///< inert: no latency predictions
};

/// One plugin of EndpointPickerConfig.plugins, typed. `type` is the upstream type name.
struct EppPlugin {
  std::string name;  ///< defaults to type
  std::string type;  ///< one of kEppPluginTypes
  PrefixCacheParams prefix;                 ///< prefix-cache-scorer
  UtilizationDetectorParams utilization;    ///< utilization-detector
  PrefixCacheAffinityParams affinity;       ///< prefix-cache-affinity-filter
  int32_t max_num_of_endpoints = 1;         ///< pickers
};

/// The plugin types modelled, upstream names.
inline constexpr const char* kEppPluginTypes[] = {
    "queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer", "prefix-cache-affinity-filter",
    "utilization-detector", "max-score-picker", "random-picker", "single-profile-handler"};

/// A profile's reference to a plugin, with its weight (scorers; unset = 1).
struct EppProfilePlugin {
  std::string plugin_ref;
  std::optional<double> weight;
};
struct EppSchedulingProfile {
  std::string name;
  std::vector<EppProfilePlugin> plugins;
};

/// EndpointPickerConfig (inference.networking.x-k8s.io/v1alpha1, apix/config/v1alpha1/
/// endpointpickerconfig_types.go), as written.
struct EndpointPickerConfig {
  std::vector<EppPlugin> plugins;
  std::vector<EppSchedulingProfile> scheduling_profiles;
  std::string saturation_detector_ref;  ///< saturationDetector.pluginRef; "" = utilization-detector
};

/// What the EPP runs with no config file (config/loader/defaults.go, see the top of this file).
EndpointPickerConfig default_endpoint_picker_config();

/// A configuration with the loader's defaults applied and references resolved: the one profile's
/// filters, weighted scorers and picker, and the saturation detector.
struct ResolvedEndpointPicker {
  struct Scorer {
    EppPlugin plugin;
    double weight = 1;
  };
  std::string profile_name;
  std::vector<EppPlugin> filters;  ///< in profile order
  std::vector<Scorer> scorers;     ///< in profile order
  EppPlugin picker;                ///< max-score-picker when the profile names none
  UtilizationDetectorParams saturation;
  std::optional<PrefixCacheParams> prefix;  ///< set when a prefix-cache-scorer or -filter is used
};

/// Applies the loader's defaults (see the top) and checks references. Throws std::invalid_argument
/// with a message naming the field (e.g. "schedulingProfiles[0].plugins[1].pluginRef: no plugin
/// named 'x'") for: an unknown type, a duplicate name, a reference to no plugin, more than one
/// profile, two pickers in one profile, a weight < 0, a profile handler other than
/// single-profile-handler, a saturation detector that is not a utilization-detector.
ResolvedEndpointPicker resolve_endpoint_picker(const EndpointPickerConfig& config);

/// What the EPP scrapes from one replica (vLLM's metrics) and the candidate's id.
struct EndpointMetrics {
  int32_t endpoint = 0;              ///< replica id (the index's server id)
  int32_t waiting_queue_size = 0;    ///< vllm:num_requests_waiting
  double kv_cache_usage_perc = 0;    ///< vllm:kv_cache_usage_perc, 0..1
  int32_t cache_block_size = 0;      ///< vLLM --block-size (cache_config_info), 0 = unknown
  int64_t cache_num_blocks = 0;      ///< vLLM's GPU KV blocks (cache_config_info num_gpu_blocks), 0 = unknown
};

// The plugins as pure functions, one score per endpoint in the order given (tests check them).
std::vector<double> queue_scores(const std::vector<EndpointMetrics>& endpoints);
std::vector<double> kv_cache_utilization_scores(const std::vector<EndpointMetrics>& endpoints);
/// matched[i] / total_blocks, 0 when total_blocks is 0.
std::vector<double> prefix_cache_scores(const std::vector<int32_t>& matched_blocks, int32_t total_blocks);
/// utilization-detector's pool saturation (1 with no endpoint).
double utilization_saturation(const std::vector<EndpointMetrics>& endpoints, const UtilizationDetectorParams& p);
/// utilization-detector as a filter: indices kept (all when none passes).
std::vector<size_t> utilization_filter(const std::vector<EndpointMetrics>& endpoints, const UtilizationDetectorParams& p);
/// The index of the endpoint max-score-picker takes: shuffle with `rng` (Go's rand.Shuffle), stable
/// sort by score descending, first.
size_t max_score_pick(const std::vector<double>& scores, GoRand& rng);

/// The approximate prefix index (approximateprefix/indexer.go): per server an LRU of block hashes of
/// a given capacity; hash -> servers holding it.
class ApproxPrefixIndex {
 public:
  /// Servers holding each of the leading hashes, counted per server until the first hash no server
  /// holds (matchLongestPrefix).
  std::map<int32_t, int32_t> match_longest_prefix(const std::vector<uint64_t>& hashes) const;
  /// Records `hashes` for `server` (its LRU created with `capacity` entries on first use; each hash
  /// added or refreshed in order, the least recently used evicted past capacity).
  void add(const std::vector<uint64_t>& hashes, int32_t server, int64_t capacity);
  void remove_server(int32_t server);
  size_t entries(int32_t server) const;

 private:
  struct Lru;
  std::map<int32_t, std::shared_ptr<Lru>> servers_;
  std::unordered_map<uint64_t, std::vector<int32_t>> hash_to_servers_;  ///< servers ascending
};

/// The EPP's block hashes of `request`: its prompt in blocks of `block_size_tokens` tokens (full
/// blocks only, at most `max_blocks`), each hash chained on the previous one. A block's content is
/// the request's prefix hash (Request::prefix_hashes, one per prefix_block_tokens) of the trace block
/// holding its first token and the block's offset in it; past the trace's hashes the content is
/// unique to the request (no reuse). Stands for upstream's xxhash of the prompt text.
std::vector<uint64_t> epp_block_hashes(const Request& request, int32_t block_size_tokens, int32_t max_blocks);

/// One EPP instance: the resolved configuration, its prefix index and its generator. Deterministic
/// for its seed.
class EndpointPicker {
 public:
  EndpointPicker(ResolvedEndpointPicker config, int64_t seed);

  /// LegacyAdmissionController: false when priority < 0 and the pool is saturated.
  bool admit(int32_t priority, const std::vector<EndpointMetrics>& pool) const;
  /// The endpoint (EndpointMetrics::endpoint) for `request` among `candidates` (non-empty), and
  /// records the request's hashes for it (PreRequest). -1 when a filter leaves none.
  int32_t pick(const Request& request, const std::vector<EndpointMetrics>& candidates);
  /// Forget a replica that left (upstream's periodic clean-up of inactive pods).
  void remove_endpoint(int32_t endpoint) { index_.remove_server(endpoint); }

  const ResolvedEndpointPicker& config() const { return config_; }
  const ApproxPrefixIndex& index() const { return index_; }

 private:
  ResolvedEndpointPicker config_;
  ApproxPrefixIndex index_;
  GoRand rng_;
};

}  // namespace gpufleet::inference
