// How long one engine step (one forward pass over the batch, vLLM's iteration) takes. Two models: a
// roofline (memory-bound decode, compute-bound prefill) from the catalog's figures, and a profile
// table measured by the user (step time against batch size and tokens, as Vidur's profiling or
// `vllm bench` give it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inference/catalog.h"
#include "inference/engine_args.h"

namespace gpufleet::inference {

/// What one step computes.
struct StepBatch {
  int32_t num_seqs = 0;             ///< requests in the step (prefill chunks and decodes)
  int32_t decode_tokens = 0;        ///< one per decoding request
  int32_t prefill_tokens = 0;       ///< prompt tokens computed this step (chunks included)
  /// Sum over the step's requests of the tokens already in their KV cache that attention reads
  /// (context before this step's tokens).
  int64_t context_tokens = 0;
  /// Sum over the step's prefill chunks of chunk x (context + chunk / 2): the causal attention work.
  double prefill_attention_token_pairs = 0;
};

/// A replica's front end (LatencyConstants::frontend_s and the three below it: the API server as
/// one FIFO server, replica_engine.h "Front end"). Seconds, >= 0; all 0 = none.
struct FrontendCosts {
  double latency_s = 0;           ///< added to every token the client sees; queues for nothing
  double request_s = 0;           ///< server time per request before it reaches the engine
  double chat_request_s = 0;      ///< more for a /v1/chat/completions request (Request::chat)
  double output_token_s = 0;      ///< server time per request in each step's outputs
  bool queued() const { return request_s > 0 || chat_request_s > 0 || output_token_s > 0; }
};

class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  /// Seconds the step takes on one replica running alone; > 0 for a non-empty batch.
  virtual double step_seconds(const StepBatch& batch) const = 0;
  /// The replica's front end (FrontendCosts). None by default (a profile table or a constant step
  /// time measures the engine alone).
  virtual FrontendCosts frontend() const { return {}; }
};

/// Roofline: step = max(bytes / (bandwidth x MBU), flops / (peak x MFU)) + overheads, where bytes =
/// weights / TP + KV read (context_tokens x KV bytes per token / TP), flops = 2 x active params x
/// (prefill + decode tokens) / TP + 4 x layers x heads x head_dim x (attention pairs + decode context)
/// / TP; overheads = step_overhead + per_sequence_overhead x num_seqs + (TP > 1) 2 x layers x
/// (allreduce latency + hidden x tokens x bytes / interconnect). MFU is the engine version's figure for
/// the GPU (LatencyConstants::prefill_efficiency). Bandwidth and peak scale by the
/// hardware's MIG fractions. Constants: ServingCatalog::latency (LatencyConstants).
/// Refinements of that form, all per GPU: the KV bytes also count the step's new tokens written;
/// KV heads are replicated when TP exceeds them (max(1, kv_heads / TP)); an MoE model reads its
/// shared weights every step and each expert with probability 1 - (1 - k/E)^tokens (experts' params
/// = (params - active) / (1 - k/E)); the peak is fp8_tflops for dtype fp8 on a GPU with FP8, else
/// bf16_tflops; the all-reduce is a ring: 2 (TP - 1) / TP x hidden x tokens x 2 bytes per call over
/// interconnect. time_slice_replicas does not enter here: the deployment (inference/deployment.h)
/// stretches the steps of replicas sharing a GPU. Throws std::invalid_argument as kv_cache_budget
/// does for an unknown model or GPU and arguments out of range.
std::unique_ptr<StepTimeModel> make_roofline_step_time(const ServingCatalog& catalog, const EngineArgs& args,
                                                       const ReplicaHardware& hw);

/// A measured table: rows (num_seqs, tokens = prefill + decode, step seconds). Prediction: bilinear
/// interpolation over the grid of the rows' num_seqs and tokens values (clamped at its edges; a value
/// beyond the largest measured extrapolates linearly from the last two), so a table with one row per
/// batch size is enough. Throws std::invalid_argument for an empty table or a non-positive time.
/// Detail: rows need not fill the grid; each num_seqs value's rows are interpolated in tokens first,
/// then across num_seqs. A prediction is never below the fastest row. Also refused: num_seqs < 1,
/// tokens < 0, a (num_seqs, tokens) pair given twice. An empty batch takes 0 s.
struct StepProfileRow {
  int32_t num_seqs = 0;
  int32_t tokens = 0;
  double step_s = 0;
};
std::unique_ptr<StepTimeModel> make_profile_step_time(std::vector<StepProfileRow> rows);

/// A fixed step time (tests, queueing theory): every non-empty step takes `seconds`.
std::unique_ptr<StepTimeModel> make_constant_step_time(double seconds);

}  // namespace gpufleet::inference
