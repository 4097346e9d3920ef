// An inference request as the replica model sees it, and what became of it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gpufleet::inference {

/// One request (an OpenAI completions call with max_tokens = output_tokens and ignore_eos, as
/// `vllm bench serve` sends them, so that it generates exactly output_tokens).
struct Request {
  uint64_t id = 0;                 ///< unique within a source, in arrival order
  double arrival_s = 0;            ///< seconds from the start
  int32_t prompt_tokens = 1;       ///< >= 1
  int32_t output_tokens = 1;       ///< >= 1
  /// Prefix-block hashes, one per `prefix_block_tokens` prompt tokens (Mooncake's hash_ids, 512
  /// tokens each); empty = none, no prefix reuse.
  std::vector<uint32_t> prefix_hashes;
  int32_t prefix_block_tokens = 512;
  /// Disaggregated serving (inference/disaggregated_deployment.h): leading prompt tokens whose KV
  /// arrives computed from a prefill replica (vLLM's NixlConnector, kv_role kv_consumer). On its first
  /// admission the engine allocates its blocks and computes only the tokens after them, with no prefix
  /// cache lookup; a preempted request recomputes everything. 0 = none; at most prompt_tokens.
  int32_t kv_transferred_tokens = 0;
  /// With kv_transferred_tokens = prompt_tokens: the time of the first output token, already
  /// sampled by the prefill replica (the request arrives with 1 token generated). -1 = none.
  double remote_first_token_s = -1;
  /// Sent to /v1/chat/completions (`vllm bench serve --backend openai-chat`), whose API server also
  /// renders the chat template (vllm/entrypoints/openai/serving_chat.py): more front-end work
  /// (FrontendCosts::chat_request_s). false: /v1/completions.
  bool chat = false;
};

/// A stream of requests in arrival order (a trace, a generator). Deterministic for its seed.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  /// The next request, arrival_s non-decreasing; nullopt at the end.
  virtual std::optional<Request> next() = 0;
};

enum class RequestStatus {
  kFinished,   ///< all output tokens generated
  kTimedOut,   ///< not finished within the request timeout (client gave up; the engine aborts it)
  kDropped,    ///< refused: no replica and none coming, or longer than max_model_len
};
/// "finished", "timed_out", "dropped".
const char* request_status_name(RequestStatus s);

/// The fate of one request.
struct RequestOutcome {
  uint64_t id = 0;
  RequestStatus status = RequestStatus::kFinished;
  double arrival_s = 0;
  double first_token_s = -1;       ///< time of the first output token (end of the step that finished the prefill)
  double finish_s = -1;            ///< time of the last token, or of the timeout / drop
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;       ///< requested
  int32_t generated_tokens = 0;    ///< generated before it ended
  int32_t cached_prompt_tokens = 0;  ///< prompt tokens served from the prefix cache at its last schedule
  int32_t preemptions = 0;         ///< times the engine preempted it (recompute)
  int32_t replica = -1;            ///< the replica that finished it (-1: none)
  /// Seconds the replica's front end (StepTimeModel::frontend) added to finish_s and to
  /// first_token_s of a finished request: the engine made its last token at finish_s - frontend_s
  /// and its first at first_token_s - first_token_frontend_s (they differ when the API server's
  /// queue does). 0 without a front end.
  double frontend_s = 0;
  double first_token_frontend_s = 0;

  /// TTFT = first_token_s - arrival_s; TPOT = (finish - first token) / (output - 1) (0 for one token);
  /// end-to-end = finish_s - arrival_s (vllm benchmarks/benchmark_serving.py definitions).
  double ttft_s() const { return first_token_s - arrival_s; }
  double tpot_s() const { return output_tokens > 1 ? (finish_s - first_token_s) / (output_tokens - 1) : 0; }
  double e2e_s() const { return finish_s - arrival_s; }
};

}  // namespace gpufleet::inference
