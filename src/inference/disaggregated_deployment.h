// Disaggregated prefill/decode serving (P/D): a prefill pool and a decode pool, each a Deployment
// (inference/deployment.h) of its own replicas (GPU, tensor_parallel_size, count), and the KV-cache
// transfer between them. As llm-d runs it (llm-d/llm-d docs, "P/D Disaggregation",
// llm-d.ai/docs/guides/pd-disaggregation: vLLM with kv_transfer_config {kv_connector: NixlConnector,
// kv_role: kv_both}, the EPP's pd-profile-handler, the decode pod's routing sidecar) and NVIDIA
// Dynamo's disaggregated router (ai-dynamo/dynamo lib/llm/src/disagg_router.rs, DisaggRouterConf):
//
//  1. Conditional disaggregation. A request whose prompt is longer than max_local_prefill_tokens
//     is prefilled remotely; a shorter one goes straight to the decode pool, whose replica prefills
//     it locally (as an aggregated replica would). Dynamo: remote when prefill_length -
//     prefix_hit_length > max_local_prefill_length (default 1000). llm-d
//     (llm-d-inference-scheduler pkg/plugins/profile/prefix_based_pd_decider.go): remote when the
//     non-cached prompt tokens >= nonCachedTokens, i.e. max_local_prefill_tokens = nonCachedTokens - 1.
//     Here the prompt counts whole: no prefix cache is consulted for the decision.
//  2. Prefill. The request goes to the prefill pool's least-loaded replica (the router's policy) as
//     a request with max_tokens = 1 (the llm-d sidecar's prefill request): the prefill replica
//     computes the prompt and samples one token.
//  3. Transfer. The prompt's KV moves to a decode replica: kv_transfer_seconds below.
//  4. Decode. The request joins the decode pool (its router) with its prompt's KV computed
//     (Request::kv_transferred_tokens): on admission the decode replica allocates the KV blocks (a
//     request that does not get them waits, as any waiting request) and computes no prefill.
//
// First token (FirstTokenFrom):
//  - kPrefill (default): the prefill replica's token is the client's first token: TTFT = arrival
//    to the end of the prefill step; the decode replica generates tokens 2.. (TPOT includes the
//    transfer and the wait for a decode slot). TensorRT-LLM's disaggregated serving works so (the
//    context server returns the first token in DisaggregatedParams.first_gen_tokens, which the
//    generation server continues from).
//  - kDecode: vLLM's NixlConnector with the llm-d sidecar: the prefill's token is discarded and the
//    decode replica recomputes the last prompt token and samples the first one itself
//    (vllm/v1/core/sched/scheduler.py _update_waiting_for_remote_kv: num_computed_tokens =
//    num_tokens - 1 when every block arrived): TTFT = prefill + transfer + the decode's first step.
//
// A request with output_tokens = 1 finishes on the prefill replica (nothing to transfer). Outcomes:
// one per request; a remote request's `replica` is its decode replica, its `preemptions` those of both
// sides; requests that fail on the prefill side (dropped: longer than the prefill's max_model_len;
// timed out) are reported with the request's own output_tokens. Request ids must be unique among
// the requests in flight. No I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "inference/deployment.h"
#include "inference/replica_engine.h"
#include "inference/request.h"
#include "inference/step_time.h"

namespace gpufleet::inference {

/// The path the KV cache takes from a prefill replica to a decode replica.
struct KvTransferLink {
  std::string name;            ///< "nvlink", "rdma", "tcp" or "custom"
  double gb_s = 0;             ///< bandwidth, 1e9 bytes per second, per GPU (per_gpu) or per path; > 0
  /// True: each GPU has its own link (one NIC per GPU, NVLink), so the shards move in parallel over
  /// min(prefill TP, decode TP) links. False: one link for the replica pair (a node's TCP NIC).
  bool per_gpu = true;
  double latency_s = 0;        ///< fixed cost per transfer (handshake, descriptors, notification), >= 0
};

/// The preset links (docs/disaggregated-serving.md gives each figure's source):
///  - "nvlink": 450 GB/s per GPU per direction (NVIDIA H100 SXM datasheet: NVLink 900 GB/s, both
///    directions), latency 0.1 ms (ASSUMPTION). Only inside one process or node: llm-d's docs note
///    that P and D pods cannot use NVLink peer access between them.
///  - "rdma": 50 GB/s per GPU (one 400 Gb/s ConnectX-7 InfiniBand/RoCE NIC per GPU, as DGX H100 and
///    AWS p5's 8 x 400 Gb/s EFA), latency 1 ms (ASSUMPTION: NIXL's per-request notification round
///    trip and descriptor setup).
///  - "tcp": 3 GB/s per replica pair (the top of the 1-3 GB/s that llm-d's docs give for NIXL's UCX
///    TCP fallback; a 25 Gb/s NIC's line rate), latency 5 ms (ASSUMPTION).
/// Throws std::invalid_argument naming the known presets for another name.
KvTransferLink kv_transfer_link(std::string_view name);

/// A link given by its own figures (bench-serve --kv-transfer-gbps / --kv-transfer-latency-ms,
/// simulate's kvTransferLink {gbps, latencyMs}): bandwidth in [0.001, 10^6] Gb/s and fixed latency in
/// [0, 10^6] ms, which keep one transfer under about 10^6 s (a slower link never ends a run). Each
/// throws std::invalid_argument "X is outside [lo, hi] unit" otherwise (NaN included).
void check_kv_transfer_gbps(double gbps);
void check_kv_transfer_latency_ms(double latency_ms);

/// Seconds to move the KV of `tokens` prompt tokens to a decode replica of `decode_tp` GPUs, each
/// holding `decode_kv_bytes_per_token_per_gpu` bytes per token (KvCacheBudget::kv_bytes_per_token:
/// KV heads shard over TP, replicated above num_key_value_heads):
///   bytes = tokens x decode_kv_bytes_per_token_per_gpu x decode_tp
///   time  = bytes / (gb_s x 1e9 x links) + latency_s,  links = min(prefill_tp, decode_tp) if per_gpu else 1
/// (each GPU of the smaller side moves 1/links of the bytes over its own link; vLLM's NixlConnector
/// reads heterogeneous TP shards rank to rank). 0 tokens: latency_s. Throws std::invalid_argument
/// for tokens < 0, TP < 1, bytes per token < 0 or a link with gb_s <= 0 or latency_s < 0.
double kv_transfer_seconds(int64_t tokens, double decode_kv_bytes_per_token_per_gpu, int32_t prefill_tp, int32_t decode_tp,
                           const KvTransferLink& link);

/// Who gives the client its first token (top of this file).
enum class FirstTokenFrom { kPrefill, kDecode };

struct DisaggregationConfig {
  KvTransferLink link = kv_transfer_link("rdma");
  int32_t prefill_tensor_parallel_size = 1;
  int32_t decode_tensor_parallel_size = 1;
  /// The decode replica's KV bytes per token per GPU (KvCacheBudget::kv_bytes_per_token), > 0.
  double decode_kv_bytes_per_token_per_gpu = 0;
  /// Prompts of at most this many tokens are prefilled locally by the decode pool (Dynamo's
  /// max_local_prefill_length). 0 = every request is prefilled remotely.
  int32_t max_local_prefill_tokens = 0;
  FirstTokenFrom first_token = FirstTokenFrom::kPrefill;
};

class DisaggregatedDeployment {
 public:
  struct Observer {
    std::function<void(const RequestOutcome&)> on_outcome;                  ///< every request, once
    std::function<void(int32_t replica, const StepRecord&)> on_prefill_step;
    std::function<void(int32_t replica, const StepRecord&)> on_decode_step;
  };

  /// `router` applies to each pool (its timeout runs from the request's arrival on either side).
  /// Throws std::invalid_argument for a bad link or TP (kv_transfer_seconds), bytes per token <= 0
  /// or max_local_prefill_tokens < 0.
  DisaggregatedDeployment(const DisaggregationConfig& config, RouterConfig router, Observer observer);
  ~DisaggregatedDeployment();

  /// Replicas of each pool (Deployment::add_replica; ids 0.. per pool). `step_time` must outlive this.
  int32_t add_prefill_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits);
  int32_t add_decode_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits);

  /// The pools as `simulate` drives them, whose replicas come and go with their pods: a replica of
  /// `role` joins at t (Deployment::add_replica, share group and switch fraction as there) or its pod
  /// terminates at t (Deployment::drain_replica; timeout_s <= 0: remove_replica). Both pools run to t
  /// first. Throws std::invalid_argument as those do.
  enum class Role { kPrefill, kDecode };
  int32_t add_replica(Role role, double t, const StepTimeModel& step_time, const EngineLimits& limits,
                      int32_t gpu_share_group = -1, double time_slice_switch_fraction = 0);
  void drain_replica(Role role, int32_t replica, double t, double timeout_s);
  /// A pool's gauges (ready replicas, queues, KV usage, replica_gauges) at the last time given.
  const Deployment& pool(Role role) const;

  /// A request arrives at t (= request.arrival_s, non-decreasing).
  void submit(const Request& request, double t);
  /// Runs both pools and the transfers up to t: the prefill pool first (it depends on nothing), then
  /// each transfer that lands by t is handed to the decode pool at its landing time.
  void advance_to(double t);
  /// Starts the steps due now in both pools (Deployment::start_due_steps).
  void start_due_steps();
  /// The earliest of both pools' next events and the next transfer landing; +infinity when none.
  double next_event_s() const;
  /// Ends everything still in flight at t as kTimedOut (Deployment::finish), transfers included.
  void finish(double t);

  // Counters and gauges at the last time given.
  int64_t remote_prefills() const;       ///< requests sent to the prefill pool
  int64_t local_prefills() const;        ///< requests sent straight to the decode pool
  int64_t transfers() const;             ///< KV transfers started (remote prefills that finished, output > 1)
  double kv_bytes_transferred() const;   ///< over all transfers
  double transfer_seconds() const;       ///< summed over all transfers
  double prefill_busy_seconds(double t) const;
  double decode_busy_seconds(double t) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::inference
